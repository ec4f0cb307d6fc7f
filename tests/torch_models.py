"""Small PyTorch models for tests/test_torch_import.py (factories for ``spec from-torch``).

Not a test module itself (pytest collects test_*.py only); it imports torch, so only import
it after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from torchvision_specs import pre_activation_wrn  # noqa: E402


class _MLP(nn.Module):
    """3 -> 4 -> 5 -> 2 with ReLU as a module, a function and a method, and a dropout."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 5, bias=False)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(5, 2)

    def forward(self, x):
        h = self.act(self.fc1(x))
        h = self.drop(F.relu(self.fc2(h)))
        return self.out(h.relu())


def mlp() -> nn.Module:
    """Plain MLP, unequal widths: spec widths [3, 4, 5, 2], no skips."""
    return _MLP()


def sequential_mlp() -> nn.Module:
    """The same shape as an nn.Sequential (fx traces through it)."""
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 3), nn.ReLU(inplace=True), nn.Identity(), nn.Linear(3, 1))


class _Dense(nn.Module):
    """DenseNet-style: every Linear reads the concatenation of all earlier layers.

    Layers: 0 input (2), 1 fc1 (3), 2 fc2 (2), 3 out (2):
    fc2 reads cat([x, h1]) -> skip (0, 2); out reads cat([h2, x, h1]) -> skips (0, 3), (1, 3).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 3)
        self.fc2 = nn.Linear(2 + 3, 2)
        self.out = nn.Linear(2 + 2 + 3, 2)

    def forward(self, x):
        h1 = torch.relu(self.fc1(x))
        h2 = F.relu(self.fc2(torch.cat([x, h1], dim=-1)))
        return self.out(torch.cat((h2, x, h1), 1))


def densenet() -> nn.Module:
    return _Dense()


class _Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 3)
        self.fc2 = nn.Linear(3, 3)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(h) + x  # a residual sum: not a layered network


def residual() -> nn.Module:
    return _Residual()


class _Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 2, kernel_size=3)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def conv() -> nn.Module:
    return _Conv()


class _SkipsLayer(nn.Module):
    """fc3 reads only the input and fc1: layer 3 does not read layer 2."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 2)
        self.fc2 = nn.Linear(2, 2)
        self.fc3 = nn.Linear(4, 2)

    def forward(self, x):
        h1 = F.relu(self.fc1(x))
        self.fc2(h1)
        return self.fc3(torch.cat([x, h1], dim=-1))


def broken_chain() -> nn.Module:
    return _SkipsLayer()


class _BadWidth(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 3)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.cat([x, F.relu(self.fc1(x))], dim=-1))


def bad_width() -> nn.Module:
    """fc2 has in_features 4 but reads 2 + 3 = 5 features."""
    return _BadWidth()


def failing() -> nn.Module:
    raise RuntimeError("no weights here")


def not_a_module():
    return 42


# ---------------------------------------------------------------------------------------
# Channel level (general specs): conv, BatchNorm, pooling, flatten, residual add


class _Block(nn.Module):
    """A ResNet basic block: conv-BN-ReLU-conv-BN plus an identity or a projection (1x1 conv + BN)."""

    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or c_in != c_out:
            self.downsample = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class _MiniResNet(nn.Module):
    """torchvision's ResNet layout in miniature: stem conv-BN-ReLU, max-pool, an identity block,
    a projection block, adaptive average pool, flatten, fc."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = _Block(4, 4)
        self.layer2 = _Block(4, 6, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def mini_resnet() -> nn.Module:
    return _MiniResNet()


class _MiniDenseNet(nn.Module):
    """DenseNet-style: each conv reads torch.cat of all earlier feature maps; BN-ReLU-conv layers
    (a BatchNorm over a concatenation cannot fold: a per-channel scale and shift), a transition
    avg-pool, then F.adaptive_avg_pool2d, a flatten (x.view(x.size(0), -1), or torch.flatten for
    torch.onnx.export, whose view exports shape arithmetic) and a classifier."""

    def __init__(self, view: bool = True):
        super().__init__()
        self.view = view
        self.stem = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(4)
        self.conv1 = nn.Conv2d(4, 2, 3, padding=1)
        self.norm2 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 2, 3, padding=1)
        self.pool = nn.AvgPool2d(2)
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        f0 = self.stem(x)
        f1 = self.conv1(F.relu(self.norm1(f0)))
        c1 = torch.cat([f0, f1], 1)
        f2 = self.conv2(F.relu(self.norm2(c1)))
        x = self.pool(torch.cat([f0, f1, f2], dim=1))
        x = F.adaptive_avg_pool2d(x, 1)
        return self.classifier(x.view(x.size(0), -1) if self.view else torch.flatten(x, 1))


def mini_densenet() -> nn.Module:
    return _MiniDenseNet()


class _MeanPoolCNN(nn.Module):
    """Global average pooling written as x.mean((2, 3)) (torch.onnx.export: ReduceMean), then a
    conv read as a 1 x 1 map again through torch.mean(..., keepdim=True)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 6, 1)
        self.fc = nn.Linear(8 + 6, 10)

    def forward(self, x):
        x = F.relu(self.conv(x))
        pooled = x.mean((2, 3))
        head = F.relu(self.head(torch.mean(x, dim=(-2, -1), keepdim=True)))
        return self.fc(torch.cat([pooled, torch.flatten(head, 1)], 1))


def mean_pool_cnn() -> nn.Module:
    return _MeanPoolCNN()


def mini_vgg() -> nn.Module:
    """VGG-style: conv-ReLU-maxpool twice, then nn.Flatten of 8 x 4 x 4 into a Linear of
    in_features 128 (16 spatial taps per channel); needs --input-shape 1x3x16x16 to be checked."""
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 4 * 4, 10), nn.ReLU(), nn.Dropout(), nn.Linear(10, 2),
    )


def conv1d_dilated() -> nn.Module:
    """Conv1d with dilation 2 (still 3 taps) and a bias, BatchNorm1d folded, global pool, Linear."""
    return nn.Sequential(nn.Conv1d(2, 3, 3, dilation=2), nn.BatchNorm1d(3), nn.ReLU(),
                         nn.AdaptiveMaxPool1d(1), nn.Flatten(), nn.Linear(3, 2))


class _SharedBN(nn.Module):
    """conv's output is read by the BatchNorm and by a shortcut: the BN cannot fold (diagonal + bias)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.out = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        h = self.conv(x)
        return self.out(F.relu(self.bn(h)) + h)


def shared_bn() -> nn.Module:
    return _SharedBN()


def grouped_conv() -> nn.Module:
    return nn.Sequential(nn.Conv2d(4, 4, 3, groups=2), nn.ReLU())


def _conv_bn(c_in: int, c_out: int, k: int, padding: int = 0, groups: int = 1, relu: bool = True, stride: int = 1) -> nn.Sequential:
    """conv (no bias), BatchNorm, then ReLU unless ``relu`` is False: the pieces of the ResNeXt,
    inverted-residual and ShuffleNet test blocks (module names .0, .1, .2)."""
    layers = [nn.Conv2d(c_in, c_out, k, stride=stride, padding=padding, groups=groups, bias=False), nn.BatchNorm2d(c_out)]
    return nn.Sequential(*layers, *([nn.ReLU()] if relu else []))


class _ResNeXtBlock(nn.Module):
    """ResNeXt-style bottleneck: 1x1 8 -> 8, a grouped 3x3 (4 groups of 2 channels), 1x1 8 -> 8,
    every conv with its BatchNorm, plus the identity; global pool and a classifier."""

    def __init__(self):
        super().__init__()
        self.stem = _conv_bn(3, 8, 3)
        self.reduce = _conv_bn(8, 8, 1)
        self.grouped = _conv_bn(8, 8, 3, padding=1, groups=4)
        self.expand = _conv_bn(8, 8, 1, relu=False)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.expand(self.grouped(self.reduce(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnext_block() -> nn.Module:
    return _ResNeXtBlock()


def gelu_convnet() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.GELU())


def layernorm_mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.ReLU(), nn.Linear(4, 2))


class _Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)

    def forward(self, x):
        return torch.softmax(self.q(x) @ self.k(x).transpose(-2, -1), dim=-1)


def attention() -> nn.Module:
    return _Attention()


def linear_on_maps() -> nn.Module:
    """nn.Linear on N x C x H x W acts on the last axis, not on channels: refused."""
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Linear(4, 2))


def bn_without_affine() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, affine=False), nn.ReLU())


class _Unused(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.side = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        self.side(h)
        return h


def unused_branch() -> nn.Module:
    return _Unused()


class _PlusOne(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x) + 1.0


def plus_constant() -> nn.Module:
    return _PlusOne()


class _ParamBias(nn.Module):
    """conv + a per-channel parameter (a second bias), returning the logits and the feature maps
    (read inside too: they stay outputs, H = 0)."""

    def __init__(self, shape=(4, 1, 1)):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.shift = nn.Parameter(torch.zeros(shape))
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        h = F.relu(self.conv(x) + self.shift, inplace=True)
        return self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1)), h


def param_bias() -> nn.Module:
    return _ParamBias()


def param_bias_last_axis() -> nn.Module:
    return _ParamBias((4,))


class _TwoBranches(nn.Module):
    """Two Linears on the input, concatenated: not a chain of layers, but a general network."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.b = nn.Linear(3, 2)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(torch.relu(torch.cat([self.a(x), self.b(x)], dim=-1)))


def two_branches() -> nn.Module:
    return _TwoBranches()


class _Blocked(nn.Module):
    """Blockers on one path: SiLU and a squeeze-excitation gate (x * sigmoid(...): a product of
    two functions of x), then LayerNorm; the grouped conv before them is read."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3)
        self.grouped = nn.Conv2d(4, 4, 3, groups=2)
        self.act = nn.SiLU()
        self.gate = nn.Conv2d(4, 4, 1)
        self.norm = nn.LayerNorm(4)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = self.act(self.grouped(torch.relu(self.stem(x))))
        x = x * torch.sigmoid(self.gate(x.mean((2, 3), keepdim=True)))
        return self.fc(self.norm(x.mean((2, 3))))


def blocked() -> nn.Module:
    return _Blocked()


class _Checked(nn.Module):
    """mini CNN with torch._assert shape checks (as torchvision's ViT writes them)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        torch._assert(x.dim() == 4, "expected N x C x H x W")
        n, c, h, w = x.shape
        torch._assert(c == 3, f"expected 3 channels, got {c}")
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def checked() -> nn.Module:
    return _Checked()


class _AuxOutputs(nn.Module):
    """GoogLeNet-like: in training mode a namedtuple of the logits and an auxiliary head's."""

    Outputs = __import__("collections").namedtuple("Outputs", ["logits", "aux"])

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)
        self.aux = nn.Linear(4, 2)

    def forward(self, x):
        h = torch.relu(self.conv(x)).mean((2, 3))
        if self.training:
            return self.Outputs(self.fc(h), self.aux(h))
        return self.fc(h)


def aux_outputs() -> nn.Module:
    return _AuxOutputs()


def aux_outputs_eval() -> nn.Module:
    return _AuxOutputs().eval()


class _Depthwise(nn.Module):
    """MobileNet/MNASNet-style inverted residual with ReLU: 1x1 expand 4 -> 8, BN, ReLU, 3x3
    depthwise 8 (groups=8), BN, ReLU, 1x1 project 8 -> 4, BN, plus the identity; global pool, fc."""

    def __init__(self):
        super().__init__()
        self.stem = _conv_bn(3, 4, 3)
        self.expand = _conv_bn(4, 8, 1)
        self.depthwise = _conv_bn(8, 8, 3, padding=1, groups=8)
        self.project = _conv_bn(8, 4, 1, relu=False)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.project(self.depthwise(self.expand(x)))
        return self.fc(torch.relu(x).mean((2, 3)))


def depthwise_block() -> nn.Module:
    return _Depthwise()


class _LayerScaleBlock(nn.Module):
    """A residual block as papers write it: layer scale (gamma * conv(x), folded into the conv),
    stochastic depth (the identity in eval), a layer scale after a ReLU (a diagonal connection),
    and global pooling written as F.avg_pool2d(x, x.size()[3])."""

    def __init__(self):
        super().__init__()
        import torchvision

        self.stem = nn.Conv2d(3, 4, 3)
        self.conv = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.gamma = nn.Parameter(torch.ones(4, 1, 1))
        self.drop_path = torchvision.ops.StochasticDepth(0.1, "row")
        self.gamma2 = nn.Parameter(torch.ones(4, 1, 1))
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(x + self.drop_path(self.gamma * self.conv(x)))
        x = F.avg_pool2d(self.gamma2 * x, x.size()[3])
        return self.fc(x.view(x.size(0), -1))


def layer_scale_block() -> nn.Module:
    return _LayerScaleBlock().eval()


class _OptionABlock(nn.Module):
    """A CIFAR ResNet basic block (He et al. 2016, option A): where the shape changes, the
    shortcut subsamples x and pads it with zero channels, F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0,
    p, p)): an identity onto the middle channels, no weights."""

    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.pad = (c_out - c_in) // 2 if stride != 1 or c_in != c_out else None

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        short = x if self.pad is None else F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, self.pad, self.pad), "constant", 0)
        return F.relu(out + short)


class _OptionAResNet(nn.Module):
    """ResNet-8 for CIFAR with option-A shortcuts: stem 4, stages of 4, 8, 16 channels."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.layer1 = _OptionABlock(4, 4, 1)
        self.layer2 = _OptionABlock(4, 8, 2)
        self.layer3 = _OptionABlock(8, 16, 2)
        self.linear = nn.Linear(16, 10)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer3(self.layer2(self.layer1(out)))
        out = F.avg_pool2d(out, out.size()[3])
        return self.linear(out.view(out.size(0), -1))


def option_a_resnet() -> nn.Module:
    return _OptionAResNet().eval()


def lenet5() -> nn.Module:
    """LeNet-5 (LeCun et al. 1998) with ReLU and max pooling, for 32 x 32 inputs."""
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def mini_wrn() -> nn.Module:
    """WRN-8-1 in the pre-activation layout of WRN-16-4 (one home: tools/torchvision_specs.py): a
    stem conv, three stages of one block (4, 8, 16 channels), a final BN-ReLU, global pool, linear."""
    return pre_activation_wrn((4, 8, 16), 1, stem=4, classes=10).eval()


def _shuffle_view(x, groups: int):
    """torchvision's channel_shuffle: view to N x g x C/g x H x W, transpose, view back."""
    n, c, h, w = x.size()
    x = x.view(n, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(n, c, h, w)


def _shuffle_permute(x, groups: int):
    """The same shuffle spelled reshape / permute / flatten(1, 2)."""
    n, c, h, w = x.shape
    return x.reshape(n, groups, c // groups, h, w).permute(0, 2, 1, 3, 4).flatten(1, 2)


class _ShuffleUnit(nn.Module):
    """ShuffleNet-V2's unit (torchvision's InvertedResidual): stride 2, two branches over x (the
    first a depthwise conv then a 1x1); stride 1, x split in two along channels, the second half
    through the branch; the halves concatenated and shuffled. ``sliced`` spells the split
    x[:, :c], x[:, c:] and the shuffle with reshape / permute (else chunk and view / transpose)."""

    def __init__(self, c_in: int, c_out: int, stride: int, sliced: bool = False):
        super().__init__()
        half = c_out // 2
        self.stride, self.half, self.sliced = stride, half, sliced
        if stride > 1:
            self.branch1 = nn.Sequential(_conv_bn(c_in, c_in, 3, 1, groups=c_in, relu=False, stride=stride), _conv_bn(c_in, half, 1))
        c = c_in if stride > 1 else half
        self.branch2 = nn.Sequential(_conv_bn(c, half, 1), _conv_bn(half, half, 3, 1, groups=half, relu=False, stride=stride),
                                     _conv_bn(half, half, 1))

    def forward(self, x):
        if self.stride > 1:
            out = torch.cat((self.branch1(x), self.branch2(x)), 1)
        elif self.sliced:
            out = torch.cat((x[:, :self.half], self.branch2(x[:, self.half:])), 1)
        else:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), 1)
        return _shuffle_permute(out, 2) if self.sliced else _shuffle_view(out, 2)


class _MiniShuffleNet(nn.Module):
    """ShuffleNet-V2 in miniature: stem 8, stages (8 -> 16: a stride-2 unit and two stride-1
    units) and (16 -> 32: one of each), a 1x1 conv of 32, global pool, classifier."""

    def __init__(self, sliced: bool = False):
        super().__init__()
        self.stem = _conv_bn(3, 8, 3, 1, stride=2)
        self.stage2 = nn.Sequential(_ShuffleUnit(8, 16, 2, sliced), _ShuffleUnit(16, 16, 1, sliced), _ShuffleUnit(16, 16, 1, sliced))
        self.stage3 = nn.Sequential(_ShuffleUnit(16, 32, 2, sliced), _ShuffleUnit(32, 32, 1, sliced))
        self.conv5 = _conv_bn(32, 32, 1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.stage3(self.stage2(F.max_pool2d(self.stem(x), 3, 2, 1)))
        return self.fc(self.conv5(x).mean((2, 3)))


def mini_shufflenet() -> nn.Module:
    return _MiniShuffleNet().eval()


def mini_shufflenet_sliced() -> nn.Module:
    return _MiniShuffleNet(sliced=True).eval()


def conv_bn_folds(model: nn.Module) -> dict[str, str]:
    """BatchNorm -> conv of every ``_conv_bn`` piece of a model (the BatchNorm folds into it)."""
    return {f"{name}.1": f"{name}.0" for name, mod in model.named_modules()
            if isinstance(mod, nn.Sequential) and len(mod) >= 2 and isinstance(mod[0], nn.Conv2d) and isinstance(mod[1], nn.BatchNorm2d)}
