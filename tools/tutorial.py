#!/usr/bin/env python3
"""Regenerate docs/tutorial.md and its images from real runs, or check that they are current.

Usage:
    python tools/tutorial.py --check    # run every command; exit 1 and show the drift if any
    python tools/tutorial.py --write    # run every command; rewrite outputs and images in place

The tutorial is its own template. Every fenced block whose lines start with ``$ `` is a
terminal session: the generator runs each command with bash in a scratch folder (``examples/``
and ``tests/`` linked in, ``tut/`` and the default store created there, this checkout's
``basispath`` first on PATH, COLUMNS=200) and puts the real output (stdout and stderr, as a
terminal shows them) under it. Comments just before a block steer it:

- ``<!-- tutorial: not run -->``: shown as written (``make demo``, ``source``, ``rm``); each line
  of it starting with ``.venv/bin/basispath`` is still run, and the lines after it are its output
  up to the next such line, less the lines make prints itself (what the Makefile echoes);
- ``<!-- tutorial: needs torch -->``: run only where PyTorch is installed, else left as is;
- ``<!-- tutorial: file PATH -->``: the block is a file the reader saves; it is written to PATH.

A ``...`` line in an output stands for any number of real lines (the text trims there); the
lines around it must still appear, in order. Values that differ run to run are compared as
placeholders: run ids (the real one is written as the tutorial's own, from its ``$ RUN=``
line), the ``time:`` line's seconds, timestamps, byte counts and compare's ``time`` rows.

Images: a command writing ``tut/NAME.png`` regenerates ``docs/img/tutorial-NAME.png`` when the
tutorial shows that image. ``--check`` compares sizes, then what the picture says it plots when
it records that (``compare --plot`` does, times left out), else pixels (mean difference < 1%).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
DIRECTIVE = re.compile(r"<!-- tutorial: (.+?) -->")
RUN_ID = re.compile(r"\b[0-9a-f]{8}\b")
VOLATILE = [
    (re.compile(r"^(time:|  time:).*$"), "<time line>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"), "<timestamp>"),
    (re.compile(r"\(png, \d+ bytes\)|\(svg, \d+ bytes\)"), "(<image>, <n> bytes)"),
    (re.compile(r"^(│ time [^│]*│).*$"), r"\1 <times>"),
]

#: ``basispath run``'s progress lines, printed to stderr when it is not a terminal: on a terminal
#: the progress display is a spinner that leaves nothing behind, so the tutorial shows none.
PROGRESS_LINE = re.compile(r"^run(?: [0-9a-f]{8})?: ")


@dataclass
class Block:
    start: int  # line index of the opening fence
    end: int  # line index of the closing fence
    lines: list[str]
    directives: list[str] = field(default_factory=list)

    @property
    def is_session(self) -> bool:
        return any(line.startswith("$ ") for line in self.lines)


def read_blocks(lines: list[str]) -> list[Block]:
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            k, directives = i - 1, []
            while k >= 0 and (DIRECTIVE.search(lines[k]) or not lines[k].strip()):
                if DIRECTIVE.search(lines[k]):
                    directives.append(DIRECTIVE.search(lines[k]).group(1))
                k -= 1
            blocks.append(Block(i, j, lines[i + 1 : j], directives))
            i = j
        i += 1
    return blocks


def split_session(lines: list[str]) -> list[tuple[str, list[str]]]:
    """[(command, documented output lines), ...] of a ``$`` block."""
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def normalize(line: str, ids: dict[str, str]) -> str:
    """The line with real run ids written as the tutorial's and volatile values as placeholders."""
    line = as_documented(line, ids)
    for pattern, repl in VOLATILE:
        line = pattern.sub(repl, line)
    return line


def as_documented(line: str, ids: dict[str, str]) -> str:
    for real, doc in ids.items():
        line = line.replace(real, doc)
    return line


def matches(documented: list[str], real: list[str]) -> bool:
    """``...`` in the documented lines stands for any number of real lines."""
    if "..." not in documented:
        return documented == real
    parts, chunk = [], []
    for line in documented:
        if line == "...":
            parts.append(chunk)
            chunk = []
        else:
            chunk.append(line)
    parts.append(chunk)
    head, *middle, tail = parts
    if real[: len(head)] != head or (tail and real[len(real) - len(tail):] != tail) or len(real) < len(head) + len(tail):
        return False
    at, stop = len(head), len(real) - len(tail)
    for chunk in middle:
        for k in range(at, stop - len(chunk) + 1):
            if real[k : k + len(chunk)] == chunk:
                at = k + len(chunk)
                break
        else:
            return False
    return True


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


class Session:
    """A scratch folder where the tutorial's commands run one after the other."""

    def __init__(self, folder: Path, doc_ids: list[str]) -> None:
        self.folder = folder
        for name in ("examples", "tests"):
            (folder / name).symlink_to(ROOT / name)
        bin_dir = Path(sys.executable).parent
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "COLUMNS": "200",
            "PYTHONUNBUFFERED": "1",  # stdout and stderr interleaved as a terminal shows them
            "NO_COLOR": "1",
            "TERM": "dumb",
        }
        for key in ("BASISPATH_STORE", "NEO4J_URI"):
            self.env.pop(key, None)
        # Run ids: each "run ID complete" our runs print is paired, in order, with the next
        # "$ NAME=ID" line of the tutorial (the reader pastes their own id there).
        self.doc_ids = list(doc_ids)
        self.ids: dict[str, str] = {}

    def run(self, command: str) -> list[str]:
        m = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=([0-9a-f]{8})", command)
        if m:
            real = next((r for r, d in self.ids.items() if d == m.group(2)), m.group(2))
            self.env[m.group(1)] = real
            return []
        proc = subprocess.run(["bash", "-c", command], cwd=self.folder, env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=600)
        lines = proc.stdout.rstrip("\n").split("\n") if proc.stdout.strip() else []
        lines = [line for line in lines if not PROGRESS_LINE.match(line)]
        for real in re.findall(r"^run ([0-9a-f]{8}) complete", proc.stdout, flags=re.M):
            if real not in self.ids and len(self.ids) < len(self.doc_ids):
                self.ids[real] = self.doc_ids[len(self.ids)]
        return lines


@dataclass
class Drift:
    line: int
    command: str
    documented: list[str]
    real: list[str]


def regenerate(write: bool, tutorial: Path = TUTORIAL) -> tuple[list[Drift], list[str], list[str]]:
    """Run the tutorial; returns (drifts, new text lines, notes). With ``write``, drifted
    outputs are replaced where the block has no ``...`` (trimmed blocks are reported)."""
    lines = tutorial.read_text(encoding="utf-8").split("\n")
    doc_ids = [m.group(1) for m in (re.match(r"\$ [A-Z_][A-Z0-9_]*=([0-9a-f]{8})$", l) for l in lines) if m]
    drifts, notes, new = [], [], list(lines)
    torch = _torch_available()
    with tempfile.TemporaryDirectory(prefix="basispath-tutorial-") as tmp:
        session = Session(Path(tmp), doc_ids)
        replacements: list[tuple[int, int, list[str]]] = []
        for block in read_blocks(lines):
            files = [d.split(" ", 1)[1] for d in block.directives if d.startswith("file ")]
            if files:
                target = session.folder / files[0]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("\n".join(block.lines) + "\n", encoding="utf-8")
                continue
            if "needs torch" in block.directives and not torch:
                notes.append(f"line {block.start + 1}: not run (needs PyTorch, which is not installed)")
                continue
            if "not run" in block.directives:
                pieces = _commands_not_run(block)
                if not pieces:
                    continue
            elif block.is_session:
                pieces, offset = [], block.start + 1
                for k, line in enumerate(block.lines):
                    if line.startswith("$ "):
                        pieces.append((line[2:], None, offset + k + 1))
                documented = split_session(block.lines)
                pieces = [(c, out, at) for (c, _, at), (_, out) in zip(pieces, documented)]
            else:
                continue
            for command, documented, at in pieces:
                real = session.run(command)
                if re.fullmatch(r"[A-Z_][A-Z0-9_]*=[0-9a-f]{8}", command):
                    continue
                shown = [as_documented(l, session.ids) for l in real]
                if not matches([normalize(l, {}) for l in documented], [normalize(l, session.ids) for l in real]):
                    drifts.append(Drift(at, command, documented, shown))
                    if write:
                        if "..." in documented:
                            notes.append(f"line {at}: trimmed output drifted; update by hand (real output shown above)")
                        else:
                            replacements.append((at, len(documented), shown))
        for at, n, fixed in sorted(replacements, reverse=True):
            new[at : at + n] = fixed
        notes += _images(session.folder, lines, write, drifts, tutorial.parent / "img")
    return drifts, new, notes


def _make_echoes() -> set[str]:
    """The lines the Makefile's recipes echo (``@echo "TEXT"``; a bare ``@echo`` is a blank line)."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1).strip().strip('"') for m in re.finditer(r"^\t@?echo\b(.*)$", text, re.M)}


def _commands_not_run(block: Block) -> list[tuple[str, list[str], int]]:
    """The ``.venv/bin/basispath`` lines of a block shown as written (``make demo``), each with
    its documented output: the lines up to the next such line, less the lines make printed
    itself after it (blank, or echoed by the Makefile)."""
    at = [k for k, line in enumerate(block.lines) if line.startswith(".venv/bin/basispath ")]
    echoes = _make_echoes()
    pieces = []
    for k, stop in zip(at, [*at[1:], len(block.lines)]):
        output = block.lines[k + 1 : stop]
        while output and output[-1] in echoes:
            output.pop()
        pieces.append((block.lines[k].removeprefix(".venv/bin/"), output, block.start + 2 + k))
    return pieces


def _images(folder: Path, lines: list[str], write: bool, drifts: list[Drift], images: Path) -> list[str]:
    notes = []
    shown = set(re.findall(r"\(img/tutorial-([\w-]+)\.png\)", "\n".join(lines)))
    for name in sorted(shown):
        fresh = folder / "tut" / f"{name}.png"
        doc = images / f"tutorial-{name}.png"
        if not fresh.exists():
            notes.append(f"img/tutorial-{name}.png: no command wrote tut/{name}.png")
            continue
        if write:
            shutil.copyfile(fresh, doc)
            continue
        difference = _image_difference(doc, fresh)
        if difference is not None:
            drifts.append(Drift(0, f"image img/tutorial-{name}.png", [f"stale: {difference}"], []))
    return notes


def _image_difference(doc: Path, fresh: Path) -> str | None:
    """None when the images agree (same size, mean pixel difference below 1%), else why not."""
    import numpy as np
    from matplotlib import image

    from PIL import Image

    if not doc.exists():
        return "missing"
    a, b = image.imread(doc), image.imread(fresh)
    if a.shape != b.shape:
        return f"size {a.shape[1]}x{a.shape[0]}, now {b.shape[1]}x{b.shape[0]}"
    # A picture that records what it plots (compare --plot: everything but the times, which
    # change run to run) is compared on that; others pixel by pixel.
    said = [Image.open(p).info.get("Description") for p in (doc, fresh)]
    if said[1] is not None:
        return None if said[0] == said[1] else "it plots other data than a run does now"
    mean = float(np.abs(a.astype(float) - b.astype(float)).mean())
    return None if mean < 0.01 else f"mean pixel difference {mean:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when an output or image drifted")
    mode.add_argument("--write", action="store_true", help="rewrite outputs and images from real runs")
    parser.add_argument("--tutorial", type=Path, default=TUTORIAL, help="the tutorial file (images in img/ beside it)")
    args = parser.parse_args()
    drifts, new, notes = regenerate(args.write, args.tutorial)
    for d in drifts:
        print(f"{args.tutorial.name}:{d.line}: $ {d.command}")
        print("  documented:\n" + "\n".join(f"    {l}" for l in d.documented))
        print("  real:\n" + "\n".join(f"    {l}" for l in d.real))
    for n in notes:
        print(f"note: {n}")
    if args.write:
        args.tutorial.write_text("\n".join(new), encoding="utf-8")
        trimmed = [n for n in notes if "update by hand" in n]
        print(f"rewrote docs/tutorial.md ({len(drifts) - len(trimmed)} output(s) replaced) and its images")
        return 1 if trimmed else 0
    print(f"{len(drifts)} drift(s)" if drifts else "tutorial is current: every output and image matches a real run")
    return 1 if drifts else 0


if __name__ == "__main__":
    sys.exit(main())
