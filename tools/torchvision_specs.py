"""Regenerate bench/specs/NAME.json: torchvision networks read at channel level by the project's
own importer, so that the benchmarks need no torch (issue 26).

    PYTHONPATH=. .venv/bin/python tools/torchvision_specs.py            # every network below
    PYTHONPATH=. .venv/bin/python tools/torchvision_specs.py resnet50   # some of them

Each spec is what ``basispath spec from-torch tools/torchvision_specs.py:NAME --name NAME
--max-weights 200000000 [--input-shape ...]`` writes (the CLI is run as a subprocess, so the
file is byte for byte the command's output). Every factory below builds the torchvision model
with ``weights=None`` in eval mode (BatchNorm folds into the conv before it).

Inception-v3 needs its own factory: ``torchvision.models.inception_v3(weights=None)`` is refused
by the importer ("unsupported operation torchvision.models.inception.InceptionOutputs": its
auxiliary classifier makes forward() return a named tuple), so it is built with
``aux_logits=False, init_weights=False`` and read on a 1x3x299x299 input.

tests/test_bench_specs.py checks, where torch is installed, that every committed spec is what the
importer gives now and that its m is torchvision's parameter count with BatchNorm folded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "bench" / "specs"
MAX_WEIGHTS = 200_000_000

#: name -> the --input-shape the importer needs (None: its default)
NETWORKS = {
    "resnet18": None,
    "resnet34": None,
    "resnet50": None,
    "resnet101": None,
    "resnet152": None,
    "wide_resnet50_2": None,
    "densenet121": None,
    "inception_v3": (1, 3, 299, 299),
    "vgg16": None,
    "vgg19": None,
}


def build(name: str):
    """The torchvision model NAME, weights=None, in eval mode."""
    import torchvision

    if name == "inception_v3":
        model = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False)
    else:
        model = getattr(torchvision.models, name)(weights=None)
    return model.eval()


# One factory per network, for ``spec from-torch tools/torchvision_specs.py:NAME``.
def resnet18(): return build("resnet18")  # noqa: E704
def resnet34(): return build("resnet34")  # noqa: E704
def resnet50(): return build("resnet50")  # noqa: E704
def resnet101(): return build("resnet101")  # noqa: E704
def resnet152(): return build("resnet152")  # noqa: E704
def wide_resnet50_2(): return build("wide_resnet50_2")  # noqa: E704
def densenet121(): return build("densenet121")  # noqa: E704
def inception_v3(): return build("inception_v3")  # noqa: E704
def vgg16(): return build("vgg16")  # noqa: E704
def vgg19(): return build("vgg19")  # noqa: E704


def command(name: str, output: Path | None = None) -> list[str]:
    """The ``basispath spec from-torch`` command line that writes NAME's spec."""
    cmd = [sys.executable, "-m", "basispath_graph.cli.main", "spec", "from-torch", f"{Path(__file__).resolve()}:{name}",
           "--name", name, "--max-weights", str(MAX_WEIGHTS)]
    if NETWORKS[name] is not None:
        cmd += ["--input-shape", "x".join(map(str, NETWORKS[name]))]
    if output is not None:
        cmd += ["--output", str(output)]
    return cmd


def main(names: list[str]) -> None:
    unknown = [n for n in names if n not in NETWORKS]
    if unknown:
        raise SystemExit(f"unknown network(s) {', '.join(unknown)}; choose from {', '.join(NETWORKS)}")
    SPECS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    for name in names or list(NETWORKS):
        subprocess.run(command(name, SPECS / f"{name}.json"), check=True, env=env, cwd=ROOT)


if __name__ == "__main__":
    main(sys.argv[1:])
