"""Small PyTorch models for tests/test_torch_import.py (factories for ``spec from-torch``).

Not a test module itself (pytest collects test_*.py only); it imports torch, so only import
it after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


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
