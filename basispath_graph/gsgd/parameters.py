"""A torch model's parameters as the weights of its network: weight id <-> parameter element.

``from-torch``'s channel-level reader (``general/torch_channels.read_module``) records, for every
connection, the parameters its weights come from (``channel_graph.WeightSource``). This module
turns that into one index: ``position[weight id]`` is the weight's place in the concatenation of
the flattened parameters. G-SGD gathers the weights and gradients through it and writes the new
weights back.

The map must be a bijection between the m weights and the elements of the trainable parameters:
a weight that is no parameter element (a BatchNorm folded into a conv: the weight is a product),
a parameter element on no weight (an unused parameter) or on two (a module called twice) is
refused by name. BatchNorm is refused before anything else (``docs/gsgd.md``): in training mode
its output divides by batch statistics and is not a sum over paths.
"""

from __future__ import annotations

import numpy as np

from ..errors import BadInput
from ..network import Network

__all__ = ["GSGDError", "ParameterMap", "refuse_batchnorm"]


class GSGDError(BadInput):
    """A model, basis or option G-SGD cannot train with exactly (one line)."""


def refuse_batchnorm(model) -> None:
    """GSGDError naming every BatchNorm module of ``model``."""
    import torch

    found = [name or "(the model)" for name, mod in model.named_modules() if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm)]
    if found:
        shown = ", ".join(repr(n) for n in found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
        raise GSGDError(f"G-SGD cannot train {type(model).__name__}: it has BatchNorm ({shown}); with batch statistics the "
                        "output is not a sum over paths, so basis path values do not describe it (train a BatchNorm-free model)")


class ParameterMap:
    """Weight ids of ``network`` (read from ``model``) <-> elements of ``params``.

    ``names`` and ``params``: the trainable parameters the weights come from, in order;
    ``position[w]``: weight id w's index in ``torch.cat([p.reshape(-1) for p in params])``.
    """

    def __init__(self, network: Network, names: list[str], params: list, position: np.ndarray):
        self.network, self.names, self.params, self.position = network, names, params, position
        self.sizes = [int(p.numel()) for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        self._index = {}  # device -> position as a tensor there

    @classmethod
    def of_model(cls, model, *, input_shape: tuple[int, ...] | None = None, name: str = "") -> "ParameterMap":
        """Read ``model`` at channel level (every Linear and Conv bias a weight) and map it."""
        from ..general.torch_channels import read_module
        from ..spec import DEFAULT_MAX_WEIGHTS, parse_general

        refuse_batchnorm(model)
        source = f"<{type(model).__name__}>"
        try:
            spec, sources = read_module(model, source, name or type(model).__name__, input_shape, fold=False)
            network = parse_general(spec, source, DEFAULT_MAX_WEIGHTS)
        except BadInput as exc:  # the reader's refusal, one line: G-SGD's own kind of error
            raise GSGDError(f"G-SGD cannot read {source}: {str(exc).removeprefix(source + ': ')}") from None
        named = dict(model.named_parameters())
        tied = {n for n, _ in model.named_parameters(remove_duplicate=False)} - set(named)
        order: dict[str, int] = {}
        ids, elements, owners = [], [], []
        for k, c in enumerate(network.connections):
            if not c.trainable:
                continue
            found = sources[k]
            where = f"{network.layers[c.source].name} -> {network.layers[c.target].name}"
            if isinstance(found, str):
                raise GSGDError(f"G-SGD cannot train {source}: the weights of {where} are not parameters of the model: {found}")
            i, j, t = network.weight_ends(c, np.arange(network.connection_weights(c), dtype=np.int64))
            wid = network.connection_offsets[k] + np.arange(len(t), dtype=np.int64)
            for s in found:
                if s.param in tied:
                    raise GSGDError(f"G-SGD cannot train {source}: {s.param} (the weights of {where}) is tied to another parameter"
                                    " (shared weights are not a ReLU network's free parameters)")
                if s.param not in named:
                    raise GSGDError(f"G-SGD cannot train {source}: {s.param} (the weights of {where}) is not a trainable parameter")
                rows = (t >= s.tap) & (t < s.tap + s.taps)
                flat = s.elements(i[rows], j[rows], t[rows])
                numel = named[s.param].numel()
                if flat.size and int(flat.max()) >= numel:
                    raise GSGDError(f"G-SGD cannot train {source}: {s.param} has {numel} elements, fewer than the weights of {where}")
                ids.append(wid[rows])
                elements.append(flat)
                owners.append(np.full(len(flat), order.setdefault(s.param, len(order)), dtype=np.int64))
        names = list(order)
        params = [named[n] for n in names]
        unused = [n for n, p in named.items() if n not in order and p.requires_grad]
        if unused:
            raise GSGDError(f"G-SGD cannot train {source}: parameter {unused[0]} is on no path of the network (not used, or used"
                            " by an operation that has no weights of its own)")
        frozen = [n for n, p in zip(names, params) if not p.requires_grad]
        if frozen:
            raise GSGDError(f"G-SGD cannot train {source}: parameter {frozen[0]} is frozen (requires_grad=False); G-SGD trains every weight")
        offsets = np.concatenate([[0], np.cumsum([p.numel() for p in params])]).astype(np.int64)
        ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        flat = offsets[np.concatenate(owners)] + np.concatenate(elements) if ids.size else ids
        position = np.full(network.m, -1, dtype=np.int64)
        position[ids] = flat
        hits = np.bincount(flat, minlength=int(offsets[-1]))
        if len(ids) != network.m or (position < 0).any() or (hits != 1).any():
            twice = np.flatnonzero(hits > 1)
            if twice.size:
                p = int(np.searchsorted(offsets, twice[0], side="right") - 1)
                raise GSGDError(f"G-SGD cannot train {source}: {names[p]} holds the weights of two connections (a module used twice"
                                " shares its weights: not a ReLU network's free parameters)")
            raise GSGDError(f"G-SGD cannot train {source}: its parameters and the network's {network.m} weights do not match"
                            f" one to one ({len(ids)} weights mapped, {int((hits == 1).sum())} of {int(offsets[-1])} elements once)")
        return cls(network, names, params, position)

    @property
    def m(self) -> int:
        return len(self.position)

    def index(self, device):
        import torch

        key = str(device)
        if key not in self._index:
            self._index[key] = torch.as_tensor(self.position, device=device)
        return self._index[key]

    def gather(self, tensors, dtype):
        """The m weights (or gradients: ``tensors`` the parameters' ``.grad``, None as zeros) in
        weight id order, as one ``dtype`` vector on the parameters' device."""
        import torch

        device = self.params[0].device
        flat = torch.cat([torch.zeros(n, device=device, dtype=dtype) if t is None else t.detach().reshape(-1).to(dtype)
                          for t, n in zip(tensors, self.sizes)])
        return flat.index_select(0, self.index(device))

    def write(self, w) -> None:
        """Copy the weights ``w`` (weight id order) into the parameters (in their own dtype)."""
        import torch

        flat = torch.empty_like(w)
        flat.index_copy_(0, self.index(w.device), w)
        with torch.no_grad():
            for p, a, b in zip(self.params, self.offsets[:-1], self.offsets[1:]):
                p.copy_(flat[int(a):int(b)].view_as(p))

    def describe(self, weight: int) -> str:
        """The parameter element of a weight id: ``fc.weight[3, 1]``."""
        pos = int(self.position[weight])
        p = int(np.searchsorted(self.offsets, pos, side="right") - 1)
        index = np.unravel_index(pos - int(self.offsets[p]), tuple(self.params[p].shape))
        return f"{self.names[p]}[{', '.join(str(int(x)) for x in index)}]"
