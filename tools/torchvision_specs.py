"""Regenerate bench/specs/NAME.json: torchvision networks read at channel level by the project's
own importer, so that the benchmarks need no torch (issue 26).

    PYTHONPATH=. .venv/bin/python tools/torchvision_specs.py            # every network below
    PYTHONPATH=. .venv/bin/python tools/torchvision_specs.py resnet50   # some of them

Each spec is what ``basispath spec from-torch tools/torchvision_specs.py:NAME --name NAME
--max-weights 200000000 [--input-shape ...]`` writes (the CLI is run as a subprocess, so the
file is byte for byte the command's output). Every factory below builds the torchvision model
with ``weights=None`` in eval mode (BatchNorm folds into the conv before it).

WRN-16-4 is not in torchvision: ``wrn16_4`` builds it as Zagoruyko & Komodakis write it for
CIFAR (pre-activation blocks BN-ReLU-conv twice, widths 64/128/256, a 1x1 conv of the activated
input where the shape changes), read on a 1x3x32x32 input. GoogLeNet is built with
``aux_logits=False, init_weights=False``, as Inception-v3.

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
    # issue 28: layer DAG cores (parallel branches, concatenations, BatchNorm before a conv)
    "googlenet": None,
    "squeezenet1_1": None,
    "wrn16_4": (1, 3, 32, 32),
}


def build(name: str):
    """The torchvision model NAME, weights=None, in eval mode."""
    import torchvision

    if name in ("inception_v3", "googlenet"):
        model = getattr(torchvision.models, name)(weights=None, aux_logits=False, init_weights=False)
    elif name == "wrn16_4":
        model = pre_activation_wrn((64, 128, 256), 2, 16)
    else:
        model = getattr(torchvision.models, name)(weights=None)
    return model.eval()


def pre_activation_wrn(widths: tuple[int, ...], blocks_per_stage: int, stem: int, classes: int = 10):
    """A wide ResNet for CIFAR in the pre-activation layout (Zagoruyko & Komodakis 2016): a 3x3
    stem conv of ``stem`` channels; per stage ``blocks_per_stage`` blocks BN-ReLU-conv twice, the
    first of stages after the first with stride 2, the identity shortcut or a 1x1 conv of the
    activated input where the shape changes; BN-ReLU, global pool, linear. WRN-16-4 is
    ``((64, 128, 256), 2, 16)``; tests/torch_models.py's mini WRN ``((4, 8, 16), 1, 4)``."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class PreActBlock(nn.Module):
        def __init__(self, c_in: int, c_out: int, stride: int):
            super().__init__()
            self.bn1, self.conv1 = nn.BatchNorm2d(c_in), nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn2, self.conv2 = nn.BatchNorm2d(c_out), nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.equal = c_in == c_out and stride == 1
            self.shortcut = None if self.equal else nn.Conv2d(c_in, c_out, 1, stride, bias=False)

        def forward(self, x):
            o = F.relu(self.bn1(x))
            y = self.conv2(F.relu(self.bn2(self.conv1(o))))
            return y + (x if self.equal else self.shortcut(o))

    class WideResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, stem, 3, 1, 1, bias=False)
            blocks, c = [], stem
            for stage, width in enumerate(widths):
                for i in range(blocks_per_stage):
                    blocks.append(PreActBlock(c, width, 2 if stage > 0 and i == 0 else 1))
                    c = width
            self.blocks = nn.Sequential(*blocks)
            self.bn, self.fc = nn.BatchNorm2d(c), nn.Linear(c, classes)

        def forward(self, x):
            x = F.relu(self.bn(self.blocks(self.conv1(x))))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    return WideResNet()


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
def googlenet(): return build("googlenet")  # noqa: E704
def squeezenet1_1(): return build("squeezenet1_1")  # noqa: E704
def wrn16_4(): return build("wrn16_4")  # noqa: E704


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
