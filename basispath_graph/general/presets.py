"""Real architectures at channel level, as general specs (``basispath spec preset resnet18``).

Channel counts and kernel sizes are the published ones. Conventions (docs/general-networks.md):

- a conv with a k x k kernel is a ``dense`` connection with k*k taps (groups = 1);
- eval-mode BatchNorm after a conv folds into it: the conv gains a per-channel bias, a weight
  from the size-1 layer ``bias``; a conv without BatchNorm keeps its own bias;
- ReLU and pooling are channel-wise and add no weights; VGG's flatten of 512 x 7 x 7 makes the
  first classifier layer a ``dense`` connection with 49 taps (one per spatial position);
- ResNet's ``x + F(x)`` is an ``identity`` connection into the block's output layer; a block that
  changes the channel count has a projection shortcut instead (1 x 1 conv + BatchNorm: a
  ``dense`` connection with 1 tap, and a second bias into the same channels, as 2 taps on the
  bias connection, one per BatchNorm).

m is the count of the model's own tensors with each BatchNorm folded into a per-channel bias:
resnet18 11,684,712 (torchvision: 11,678,912 conv/fc weights + 1,000 fc biases + 4,800 folded
BatchNorm shifts), vgg11 132,863,336 (exactly torchvision's parameter count).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GENERAL_FAMILIES", "general_preset_spec"]


@dataclass
class _Builder:
    name: str
    layers: list = field(default_factory=list)
    connections: list = field(default_factory=list)

    def layer(self, name: str, size: int) -> str:
        self.layers.append({"name": name, "size": size})
        return name

    def dense(self, a: str, b: str, taps: int = 1) -> None:
        self.connections.append({"from": a, "to": b, "kind": "dense", "taps": taps})

    def identity(self, a: str, b: str) -> None:
        self.connections.append({"from": a, "to": b, "kind": "identity"})

    def spec(self) -> dict:
        return {"name": self.name, "layers": self.layers, "connections": self.connections}


def _resnet(name: str, stem_taps: int, stem: int, stages: list[tuple[int, int]], classes: int) -> dict:
    """BasicBlock ResNets: stem conv (+BN), stages of two-conv blocks, global pool, fc."""
    b = _Builder(name)
    b.layer("bias", 1)
    b.layer("input", 3)
    prev, width = b.layer("conv1", stem), stem
    b.dense("input", "conv1", stem_taps)
    b.dense("bias", "conv1")
    for s, (channels, blocks) in enumerate(stages, start=1):
        for k in range(blocks):
            inner = b.layer(f"layer{s}.{k}.conv1", channels)
            b.dense(prev, inner, 9)
            b.dense("bias", inner)
            out = b.layer(f"layer{s}.{k}", channels)
            b.dense(inner, out, 9)
            if width == channels:
                b.identity(prev, out)
                b.dense("bias", out)
            else:  # projection shortcut: 1x1 conv + BatchNorm; two folded biases into out
                b.dense(prev, out, 1)
                b.dense("bias", out, 2)
            prev, width = out, channels
    b.layer("fc", classes)
    b.dense(prev, "fc")
    b.dense("bias", "fc")
    return b.spec()


def _vgg11() -> dict:
    """VGG-11 (configuration A, no BatchNorm): 8 convs with biases, three fc layers."""
    b = _Builder("vgg11")
    b.layer("bias", 1)
    prev = b.layer("input", 3)
    for n, channels in enumerate([64, 128, 256, 256, 512, 512, 512, 512], start=1):
        conv = b.layer(f"conv{n}", channels)
        b.dense(prev, conv, 9)
        b.dense("bias", conv)
        prev = conv
    for n, (size, taps) in enumerate([(4096, 49), (4096, 1), (1000, 1)], start=1):
        fc = b.layer(f"fc{n}", size)
        b.dense(prev, fc, taps)
        b.dense("bias", fc)
        prev = fc
    return b.spec()


def _densenet_bc(name: str, growth: int, layers_per_block: int, blocks: int, classes: int) -> dict:
    """DenseNet-BC for CIFAR (Huang et al. 2017): a 3x3 stem of 2k channels; dense blocks of
    bottleneck layers BN-ReLU-Conv1x1(4k)-BN-ReLU-Conv3x3(k), each reading the concatenation of
    every earlier feature map of its block; transitions BN-ReLU-Conv1x1 halving the channels
    (compression 0.5); BN-ReLU, global pool and fc at the end. Convs have no bias.

    A BatchNorm over a concatenation has its own scale and shift per consumer, so it cannot fold
    into the convs that wrote the channels: each consumer reads every feature map through a
    ``diagonal`` connection plus a bias (a layer per consumer and feature map). The BatchNorm
    inside a bottleneck follows its 1x1 conv alone and folds into it as a bias."""
    b = _Builder(name)
    b.layer("bias", 1)
    b.layer("input", 3)
    stem = b.layer("conv0", 2 * growth)
    b.dense("input", stem, 9)
    groups = [stem]

    def normalised(consumer: str) -> list[str]:  # BN-ReLU of each feature map, for one consumer
        out = []
        for g in groups:
            size = next(l["size"] for l in b.layers if l["name"] == g)
            bn = b.layer(f"{consumer}.norm.{g}", size)
            b.connections.append({"from": g, "to": bn, "kind": "diagonal", "taps": 1})
            b.dense("bias", bn)
            out.append(bn)
        return out

    for block in range(1, blocks + 1):
        for n in range(1, layers_per_block + 1):
            base = f"block{block}.layer{n}"
            inputs = normalised(base)
            neck = b.layer(f"{base}.conv1", 4 * growth)
            for bn in inputs:
                b.dense(bn, neck, 1)
            b.dense("bias", neck)  # the folded BatchNorm after the 1x1 conv
            feature = b.layer(f"{base}.conv2", growth)
            b.dense(neck, feature, 9)
            groups.append(feature)
        if block < blocks:
            channels = sum(next(l["size"] for l in b.layers if l["name"] == g) for g in groups)
            inputs = normalised(f"transition{block}")
            trans = b.layer(f"transition{block}.conv", channels // 2)
            for bn in inputs:
                b.dense(bn, trans, 1)
            groups = [trans]
    inputs = normalised("final")
    b.layer("fc", classes)
    for bn in inputs:
        b.dense(bn, "fc", 1)
    b.dense("bias", "fc")
    return b.spec()


GENERAL_FAMILIES = {
    "resnet18": ("ResNet-18 (torchvision), channel level, BatchNorm folded into biases", lambda: _resnet("resnet18", 49, 64, [(64, 2), (128, 2), (256, 2), (512, 2)], 1000)),
    "resnet34": ("ResNet-34 (torchvision), channel level, BatchNorm folded into biases", lambda: _resnet("resnet34", 49, 64, [(64, 3), (128, 4), (256, 6), (512, 3)], 1000)),
    "resnet20": ("CIFAR ResNet-20 (He et al. 2016), projection shortcuts where channels change", lambda: _resnet("resnet20", 9, 16, [(16, 3), (32, 3), (64, 3)], 10)),
    "vgg11": ("VGG-11 (torchvision, configuration A), channel level, conv and fc biases", _vgg11),
    "densenet-bc-40": ("DenseNet-BC for CIFAR, depth 40, growth rate 12 (3 blocks of 6 bottleneck layers)", lambda: _densenet_bc("densenet-bc-40", 12, 6, 3, 10)),
}


def general_preset_spec(name: str) -> dict:
    """The general spec of a real family (``GENERAL_FAMILIES``)."""
    return GENERAL_FAMILIES[name][1]()
