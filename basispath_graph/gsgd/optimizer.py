"""G-SGD as a ``torch.optim.Optimizer``: SGD on the basis path values of a certified basis.

``GSGD(model, basis=None, engine="skeleton", lr=..., momentum=0, weight_decay=0)`` reads the
model at channel level (``ParameterMap``), takes a certified basis of its network (given as a
``Result``, a ``StoredRun`` or solved with ``engine``), and each :meth:`GSGD.step` does, in torch
on the model's device (``PathSpace``):

1. the path gradient dL/dv from the weights' gradient (the inverse chain rule, forward in
   peeling order);
2. SGD on v: ``d = dL/dv + weight_decay * v``; with momentum ``buf = momentum * buf + d``,
   ``d = buf`` (as ``torch.optim.SGD``, on v); ``v <- v - lr * d``;
3. the weight allocation: every free weight set so that each basis path's value is its new v,
   backward in peeling order; the fixed weights are never changed.

The model's function depends on its weights only through the basis path values (positive
rescaling of a hidden neuron changes no path value), so G-SGD's trajectory does not depend on how
the initial weights are scaled (tests/test_gsgd.py checks it).
"""

from __future__ import annotations

import hashlib

import numpy as np

from .parameters import GSGDError, ParameterMap
from .path_space import PathSpace

__all__ = ["GSGD"]


def _torch_optimizer():
    import torch

    return torch.optim.Optimizer


def _same_network(a, b) -> bool:
    da, db = a.general_dict(), b.general_dict()
    da.pop("name"), db.pop("name")
    return da == db


def _blocks_of_paths(network, paths) -> list:
    """General paths as blocks, one per route (a stored run's listed basis)."""
    from ..general.blocks import GeneralBlock
    from ..general.paths import path_block

    routes: dict = {}
    for p in paths:
        b = path_block(network, p)
        routes.setdefault((b.layers, b.hops), []).append(b)
    return [GeneralBlock(layers, hops, np.concatenate([b.nodes for b in bs]), np.concatenate([b.taps for b in bs]))
            for (layers, hops), bs in routes.items()]


def resolve_basis(network, basis, engine: str):
    """(the basis as blocks, where it came from): ``basis`` None (solved with ``engine``), a
    ``Result`` or a ``StoredRun`` of this network, certified."""
    from ..api import solve
    from ..general.described import DescribedPaths
    from ..graph_store import StoredRun
    from ..result import Result

    if basis is None:
        basis = solve(network, engine=engine)
    if isinstance(basis, Result):
        if not _same_network(basis.network, network):
            raise GSGDError(f"the basis is of network {basis.network.name or '(unnamed)'!r}, not of the network G-SGD reads"
                            " from this model (solve that one: ParameterMap.of_model(model).network)")
        if not basis.certified:
            raise GSGDError(f"the basis ({basis.engine}) is not certified: {basis.verdict.reason}")
        return basis.basis, {"engine": basis.engine}
    if isinstance(basis, StoredRun):
        if not _same_network(basis.network, network):
            raise GSGDError(f"stored run {basis.id} is of network {basis.network.name!r}, not of this model's")
        if basis.status != "complete" or not basis.certified:
            raise GSGDError(f"stored run {basis.id} is {basis.status}, certified={basis.certified}: G-SGD needs a complete,"
                            " certified run")
        paths = basis.basis_paths
        blocks = paths.basis if isinstance(paths, DescribedPaths) else _blocks_of_paths(network, paths)
        return blocks, {"engine": basis.engine, "run": basis.id}
    raise GSGDError(f"basis must be None, a Result or a StoredRun, got {type(basis).__name__}")


class GSGD(_torch_optimizer()):
    """G-SGD over a certified basis path set of ``model`` (see the module doc).

    Parameters
    ----------
    model : torch.nn.Module
        A ReLU network ``from_torch`` reads at channel level, without BatchNorm (refused by
        name: with batch statistics the output is not a sum over paths). Every trainable
        parameter must be a set of its weights (Linear, Conv and their biases, per-channel
        parameters added or multiplied).
    basis : Result or StoredRun, optional
        A certified basis of the model's network (``solve(from_torch(model, general=True))``,
        or a stored run of it); default: solved with ``engine``.
    engine : str
        The engine that solves the basis when none is given ("skeleton": linear time, the
        dense per-connection form; "deah-complete": DEAH's basis, level-scheduled solves).
    lr, momentum, weight_decay : float
        As ``torch.optim.SGD``'s, applied to the basis path values.
    input_shape : tuple, optional
        A sample input shape for the reader (needed when a Linear follows a flatten of maps).
    dtype : torch.dtype
        The dtype of the path-space arithmetic (default float64: path values are products of
        many weights).

    Attributes
    ----------
    network, basis_source (``{"engine", "run"}``), space (``PathSpace``: ``free``, ``fixed``),
    parameter_map (``ParameterMap``).

    Examples
    --------
    >>> import torch
    >>> from basispath_graph.gsgd import GSGD
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3))
    >>> opt = GSGD(model, lr=0.1)
    >>> opt.network.m, opt.network.H, len(opt.space.fixed)
    (51, 6, 6)
    >>> loss = model(torch.randn(8, 4)).square().mean()
    >>> loss.backward()
    >>> opt.step()
    """

    def __init__(self, model, basis=None, engine: str = "skeleton", lr: float = 0.01, momentum: float = 0.0,
                 weight_decay: float = 0.0, *, input_shape: tuple[int, ...] | None = None, dtype=None):
        import torch

        for what, value in (("lr", lr), ("momentum", momentum), ("weight_decay", weight_decay)):
            if not isinstance(value, (int, float)) or value < 0 or value != value:
                raise GSGDError(f"{what} must be a number >= 0, got {value!r}")
        self.parameter_map = ParameterMap.of_model(model, input_shape=input_shape)
        self.network = self.parameter_map.network
        blocks, self.basis_source = resolve_basis(self.network, basis, engine)
        params = self.parameter_map.params
        device = params[0].device
        self.space = PathSpace(self.network, blocks, device=device, dtype=dtype or torch.float64)
        self._device = device
        # which basis a momentum buffer belongs to (load_state_dict checks it)
        self._basis_key = hashlib.sha1(np.ascontiguousarray(self.space.free).tobytes()).hexdigest()[:16]
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay})
        self._ready = True
        w = self._weights()
        zeros = self.space.zero_divisors(w)
        if len(zeros):
            raise GSGDError(f"weight {self.parameter_map.describe(int(zeros[0]))} is 0 ({len(zeros)} such weight{'s' * (len(zeros) > 1)}) and the path"
                            " coordinates divide by it: it lies on a designated walk or on a basis path besides that path's free"
                            " weight (initialise it away from 0)")

    def add_param_group(self, param_group) -> None:
        """The one group (the whole model) is made by the constructor; more are refused: G-SGD
        moves every weight of the network together."""
        if getattr(self, "_ready", False):
            raise GSGDError("G-SGD takes one parameter group (the whole model): add_param_group is not supported")
        super().add_param_group(param_group)

    def load_state_dict(self, state_dict) -> None:
        """As ``torch.optim.Optimizer``'s; the momentum buffer (of the basis path values) must
        come from an optimizer over the same basis, and is moved to this one's device."""
        saved = state_dict.get("state", {}).get("path_values")
        if saved is not None and saved.get("basis") != self._basis_key:
            raise GSGDError("the optimizer state was saved by a G-SGD over another basis (its momentum is in other coordinates)")
        super().load_state_dict(state_dict)
        mine = self.state.get("path_values", {})
        if "momentum_buffer" in mine:
            mine["momentum_buffer"] = mine["momentum_buffer"].to(device=self._device, dtype=self.space.dtype)

    def _weights(self):
        return self.parameter_map.gather(self.parameter_map.params, self.space.dtype)

    def _gradients(self):
        return self.parameter_map.gather([p.grad for p in self.parameter_map.params], self.space.dtype)

    def path_values(self):
        """The basis path values of the model's current weights (basis index order)."""
        import torch

        with torch.no_grad():
            return self.space.values(self._weights())

    def path_gradient(self):
        """dL/dv for the gradients now in the parameters' ``.grad`` (basis index order)."""
        import torch

        with torch.no_grad():
            return self.space.gradient(self._weights(), self._gradients())[1]

    def step(self, closure=None):
        """One G-SGD step (see the module doc). ``closure``: re-evaluates the loss, as for SGD."""
        import torch

        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        group = self.param_groups[0]
        moved = self.parameter_map.params[0].device
        if moved != self._device:
            raise GSGDError(f"the model is on {moved} now, G-SGD was made for it on {self._device}: make the optimizer after"
                            " moving the model")
        with torch.no_grad():
            w = self._weights()
            v, d = self.space.gradient(w, self._gradients())
            if group["weight_decay"]:
                d = d.add(v, alpha=group["weight_decay"])
            state = self.state["path_values"]
            if group["momentum"]:
                buf = state.get("momentum_buffer")
                d = d.clone() if buf is None else buf * group["momentum"] + d
            new = self.space.allocate(v - group["lr"] * d, w)
            if not bool(torch.isfinite(new).all()):
                raise GSGDError("this step would make weights that are not finite, and was not taken (the model is unchanged):"
                                " a path value's step is too large for it (lower lr: docs/gsgd.md), or a weight the solves"
                                " divide by is 0")
            if group["momentum"]:
                state["momentum_buffer"] = d
            state["basis"] = self._basis_key
            self.parameter_map.write(new)
        return loss
