#!/usr/bin/env python3
"""A small mutation tester: apply one simple mutation at a time to a COPY of the package and run a
fast test selection (docs/mutation-testing.md has the run of issue 15 and its survivors).

Usage:
    python tools/mutation_sample.py list FILE.py... > mutants.json        # every candidate mutant
    python tools/mutation_sample.py shuffle mutants.json SEED > order.json  # a random order (sample = a prefix)
    python tools/mutation_sample.py run COPY order.json SHARD NSHARDS out.jsonl

``run`` works in COPY (a copy of the checkout: basispath_graph/, tests/, tools/neo4j_local.py,
pyproject.toml), never in the checkout itself, so other work in the tree is not disturbed and a
killed run cannot leave a mutated file behind in it. Each mutant is written into COPY, the tests
run with ``python -m pytest -x`` (COPY first on sys.path), and the original file is written back
before the next one. Shards split the order (mutant k goes to shard k % NSHARDS, one COPY per
shard). A file named STOP beside out.jsonl ends a run after the mutant in progress.

Mutations (tokens, so strings, docstrings and comments are untouched; ``__all__`` is skipped):
``+``/``-``, ``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``+=``/``-=``, ``&``/``|``, ``and``/``or``,
``True``/``False``, ``min(``/``max(``, and every integer literal n -> n - 1 (0 -> 1).
"""

import io
import json
import os
import random
import subprocess
import sys
import time
import tokenize

SWAP = {"+": "-", "-": "+", "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
        "+=": "-=", "-=": "+=", "&": "|", "|": "&", "and": "or", "or": "and", "True": "False", "False": "True",
        "min": "max", "max": "min"}

TESTS = ["tests/test_certificate_assembly.py", "tests/test_verify.py", "tests/test_engines.py",
         "tests/test_sdvchain.py", "tests/test_deah_complete.py", "tests/test_invariants.py",
         "basispath_graph/linalg", "basispath_graph/verify", "basispath_graph/deah"]
TIMEOUT = 150  # seconds per mutant (the selection takes about 21 s unmutated); a timeout counts as killed


def mutants(path: str) -> list[dict]:
    src = open(path).read()
    lines = src.splitlines(keepends=True)
    out = []
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    in_all = False
    for i, t in enumerate(toks):
        (r, c), (_, c2) = t.start, t.end
        if t.type == tokenize.NAME and t.string == "__all__":
            in_all = True
        if in_all:
            in_all = t.type != tokenize.NEWLINE
            continue
        new = None
        if t.type == tokenize.OP and t.string in SWAP:
            new = SWAP[t.string]
        elif t.type == tokenize.NAME and t.string in SWAP:
            if t.string in ("min", "max") and not (i + 1 < len(toks) and toks[i + 1].string == "("):
                continue
            new = SWAP[t.string]
        elif t.type == tokenize.NUMBER:
            try:
                v = int(t.string.replace("_", ""), 0)
            except ValueError:
                continue
            new = "1" if v == 0 else str(v - 1)
        if new is not None:
            out.append({"file": path, "line": r, "col": c, "end": c2, "old": t.string, "new": new,
                        "text": lines[r - 1].strip()[:120]})
    return out


def apply(copy: str, m: dict) -> tuple[str, str, str]:
    """(path in COPY, original text, mutated text)."""
    p = os.path.join(copy, m["file"])
    src = open(p).read()
    lines = src.splitlines(keepends=True)
    ln = lines[m["line"] - 1]
    if ln[m["col"]:m["end"]] != m["old"]:
        raise RuntimeError(f"mutant {m} does not match {p}: was the file edited after 'list'?")
    lines[m["line"] - 1] = ln[: m["col"]] + m["new"] + ln[m["end"]:]
    return p, src, "".join(lines)


def run_tests(copy: str, timeout: float = TIMEOUT):
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not neo4j",
           "-k", "not stored", *TESTS]
    t = time.time()
    try:
        p = subprocess.run(cmd, cwd=copy, capture_output=True, text=True, timeout=timeout)
        rc, tail = p.returncode, (p.stdout.strip().splitlines() or [""])[-1][:200]
    except subprocess.TimeoutExpired:
        rc, tail = "timeout", ""
    return rc, time.time() - t, tail


def main(argv: list[str]) -> None:
    if argv[0] == "list":
        json.dump([dict(m, index=i) for i, m in enumerate(m for f in argv[1:] for m in mutants(f))], sys.stdout)
    elif argv[0] == "shuffle":
        ms = json.load(open(argv[1]))
        random.Random(int(argv[2])).shuffle(ms)
        json.dump(ms, sys.stdout)
    elif argv[0] == "run":
        copy, order, shard, nshards, out = argv[1], argv[2], int(argv[3]), int(argv[4]), argv[5]
        for k, m in enumerate(json.load(open(order))):
            if k % nshards != shard:
                continue
            if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(out)), "STOP")):
                break
            p, orig, mutated = apply(copy, m)
            try:
                compile(mutated, p, "exec")
            except SyntaxError:
                rec = dict(m, result="invalid")
            else:
                open(p, "w").write(mutated)
                try:
                    rc, dt, tail = run_tests(copy)
                finally:
                    open(p, "w").write(orig)
                rec = dict(m, result="survived" if rc == 0 else "killed", rc=rc, seconds=round(dt, 1), tail=tail)
            with open(out, "a") as f:
                f.write(json.dumps(rec) + "\n")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
