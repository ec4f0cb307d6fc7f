"""Doctests that need PyTorch and torchvision (the examples of ``from_torch``) skip, with the
reason, where they are not installed; ``make test`` installs them, so CI runs them."""

from __future__ import annotations

import importlib.util

import pytest

NEEDS_TORCHVISION = ("basispath_graph.api.from_torch",)


def pytest_collection_modifyitems(config, items):
    if importlib.util.find_spec("torch") and importlib.util.find_spec("torchvision"):
        return
    skip = pytest.mark.skip(reason="needs torch and torchvision (make test installs them)")
    for item in items:
        if item.name in NEEDS_TORCHVISION:
            item.add_marker(skip)
