"""BatchNorm-free ReLU networks for G-SGD experiments (docs/gsgd.md): the three of the G-SGD
experiment (``bench/gsgd_experiment.py``), small enough for a CPU, with what G-SGD must handle:
unequal widths, skips (concatenation), kernel taps, biases, identity shortcuts.

- :class:`SkipMLP`: a multilayer perceptron of unequal widths whose layers also read earlier
  layers (DenseNet-style concatenation): skips between layers of different widths;
- :class:`PlainCNN`: convolutions, max and global average pooling, a linear classifier;
- :class:`ResNet20`: the CIFAR ResNet-20 layout (3 stages of 3 basic blocks, identity shortcuts,
  1x1 projection where the shape changes) without BatchNorm; each block's last conv starts
  small (x ``residual_scale``) so that the sum of 9 blocks stays in range without normalisation.

``residual_blocks(model)`` names the (conv1, conv2) pair of each basic block: the official G-SGD
code's block-wise scheme trains each such pair in its own basis-path space (``BlockwiseGSGD``).
"""

from __future__ import annotations

__all__ = ["SkipMLP", "PlainCNN", "ResNet20", "residual_blocks"]


def _nn():
    import torch

    return torch, torch.nn


torch, nn = _nn()


class SkipMLP(nn.Module):
    """x -> h1 -> h2 -> h3 -> out, where h3 reads [h1, h2] and out reads [h2, h3]."""

    def __init__(self, in_features: int = 64, widths: tuple[int, int, int] = (48, 32, 24), classes: int = 10):
        super().__init__()
        a, b, c = widths
        self.fc1 = nn.Linear(in_features, a)
        self.fc2 = nn.Linear(a, b)
        self.fc3 = nn.Linear(a + b, c)
        self.out = nn.Linear(b + c, classes)

    def forward(self, x):
        x = torch.flatten(x, 1)
        h1 = torch.relu(self.fc1(x))
        h2 = torch.relu(self.fc2(h1))
        h3 = torch.relu(self.fc3(torch.cat([h1, h2], 1)))
        return self.out(torch.cat([h2, h3], 1))


class PlainCNN(nn.Module):
    """conv 3x3 (c1) - conv 3x3 (c1) - max pool - conv 3x3 (c2) - global average pool - linear."""

    def __init__(self, in_channels: int = 1, channels: tuple[int, int] = (16, 32), classes: int = 10):
        super().__init__()
        c1, c2 = channels
        self.conv1 = nn.Conv2d(in_channels, c1, 3, padding=1)
        self.conv2 = nn.Conv2d(c1, c1, 3, padding=1)
        self.conv3 = nn.Conv2d(c1, c2, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c2, classes)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = self.pool(torch.relu(self.conv2(x)))
        x = torch.relu(self.conv3(x))
        return self.fc(torch.flatten(self.gap(x), 1))


class _BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int, residual_scale: float):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1)
        with torch.no_grad():
            self.conv2.weight.mul_(residual_scale)
            self.conv2.bias.mul_(residual_scale)
        self.shortcut = nn.Conv2d(c_in, c_out, 1, stride, bias=False) if stride != 1 or c_in != c_out else None

    def forward(self, x):
        out = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class ResNet20(nn.Module):
    """ResNet-20 for small images without BatchNorm: a 3x3 stem of ``width`` channels, three
    stages of ``blocks`` basic blocks (``width``, 2 ``width``, 4 ``width`` channels; stride 2
    into stages 2 and 3, with a 1x1 projection shortcut), global average pool, linear."""

    def __init__(self, in_channels: int = 1, width: int = 16, blocks: int = 3, classes: int = 10, residual_scale: float = 0.1):
        super().__init__()
        self.stem = nn.Conv2d(in_channels, width, 3, 1, 1)
        layers, c = [], width
        for stage, c_out in enumerate((width, 2 * width, 4 * width)):
            for k in range(blocks):
                layers.append(_BasicBlock(c, c_out, 2 if stage and not k else 1, residual_scale))
                c = c_out
        self.blocks = nn.Sequential(*layers)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = self.blocks(x)
        return self.fc(torch.flatten(self.gap(x), 1))


def residual_blocks(model) -> list[tuple[str, str]]:
    """The (conv1, conv2) module names of every basic block of ``model``."""
    return [(f"{name}.conv1", f"{name}.conv2") for name, mod in model.named_modules() if isinstance(mod, _BasicBlock)]
