"""The official G-SGD code's scheme for residual networks, as a baseline (docs/gsgd.md).

The public G-SGD code cannot train a network with skip connections in one basis-path space: for a
ResNet it runs G-SGD inside each residual block separately (the block's conv1 -> ReLU -> conv2,
whose middle channels are the only hidden neurons it rescales) and trains everything else -- the
stem, the projection shortcuts, the classifier -- by plain SGD. ``BlockwiseGSGD`` does the same
with this package's G-SGD on each block (a basis of the block's own two-layer network), so the
experiment compares global G-SGD against it on equal terms.
"""

from __future__ import annotations

from .optimizer import GSGD

__all__ = ["BlockwiseGSGD"]


class BlockwiseGSGD:
    """G-SGD on each (conv1, conv2) pair of ``blocks`` (module names), SGD on the rest.

    ``lr``, ``momentum``, ``weight_decay``: both parts'; ``sgd_lr``: the SGD part's learning rate
    when it should differ (default ``lr``). ``step()`` and ``zero_grad()`` as an optimizer's.
    """

    def __init__(self, model, blocks: list[tuple[str, str]], lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                 sgd_lr: float | None = None, engine: str = "skeleton"):
        import torch

        self.model = model
        self.blocks = []
        for first, second in blocks:
            pair = torch.nn.Sequential(model.get_submodule(first), torch.nn.ReLU(), model.get_submodule(second))
            self.blocks.append(GSGD(pair, engine=engine, lr=lr, momentum=momentum, weight_decay=weight_decay))
        inside = {id(p) for opt in self.blocks for p in opt.parameter_map.params}
        rest = [p for p in model.parameters() if id(p) not in inside]
        self.sgd = torch.optim.SGD(rest, lr=lr if sgd_lr is None else sgd_lr, momentum=momentum, weight_decay=weight_decay) \
            if rest else None

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.model.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for opt in self.blocks:
            opt.step()
        if self.sgd is not None:
            self.sgd.step()
