"""The general network model: named layers of neurons (channels) and typed connections.

A spec looks like::

    {"name": "block", "layers": [{"name": "x", "size": 3}, {"name": "h", "size": 3}, ...],
     "connections": [{"from": "x", "to": "h", "kind": "dense", "taps": 9},
                     {"from": "x", "to": "y", "kind": "identity"}, ...]}

Kinds (docs/general-networks.md has the argument for each):

- ``dense``: every neuron of ``from`` to every neuron of ``to``, ``taps`` parallel trainable
  weights each (a conv layer at channel level: one tap per kernel entry). Default ``taps`` 1.
- ``diagonal``: neuron i to neuron i (sizes equal), ``taps`` trainable weights each: a
  per-channel scale that does not fold away (BatchNorm after a layer it cannot fold into), or a
  depthwise conv. Default ``taps`` 1.
- ``identity``: neuron i to neuron i (sizes equal), weight fixed at 1, not trainable: ResNet's
  ``x + F(x)``. It carries paths but is no coordinate of them.

Layers are listed in topological order (every connection goes from an earlier layer to a later
one). Inputs are the layers with no incoming connection (a size-1 input layer is a bias),
outputs those with no outgoing one. Between two layers there is at most one trainable
connection (dense or diagonal) and at most one identity.

Counting (math notes, section 7): m = trainable weights; neurons joined by identity edges
rescale together, so H = the number of classes of hidden neurons under "joined by an identity
edge", leaving out every class that holds an input or output neuron; |B| = m - H.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import BadInput
from ..values import is_int, show_value

__all__ = ["GeneralNetwork", "GLayer", "GConnection", "KINDS", "TRAINABLE_KINDS", "parse_general", "is_general_spec", "from_layered"]

KINDS = ("dense", "diagonal", "identity")
TRAINABLE_KINDS = ("dense", "diagonal")
_SPEC_KEYS = ("name", "layers", "connections")
_LAYER_KEYS = ("name", "size")
_CONNECTION_KEYS = ("from", "to", "kind", "taps")


@dataclass(frozen=True)
class GLayer:
    name: str
    size: int


@dataclass(frozen=True)
class GConnection:
    source: int  # layer index
    target: int
    kind: str
    taps: int  # 0 for identity (no trainable weight)

    @property
    def trainable(self) -> bool:
        return self.kind in TRAINABLE_KINDS


class GeneralNetwork:
    """Layers and connections, checked; counts m, H and the rescaling classes.

    Weight ids: the trainable connections in spec order, each a contiguous range; in a dense
    connection (a -> b) the weight from neuron i to neuron j with tap t is
    ``offset + (i * size_b + j) * taps + t``, in a diagonal one ``offset + i * taps + t``.
    Neuron ids: layers in order, ``neuron_offset[layer] + index``.
    """

    def __init__(self, name: str, layers: list[GLayer], connections: list[GConnection]) -> None:
        self.name = name
        self.layers = tuple(layers)
        self.connections = tuple(connections)
        self.index = {layer.name: k for k, layer in enumerate(self.layers)}
        has_in = {c.target for c in self.connections}
        has_out = {c.source for c in self.connections}
        self.inputs = tuple(k for k in range(len(self.layers)) if k not in has_in)
        self.outputs = tuple(k for k in range(len(self.layers)) if k not in has_out)
        sizes = [layer.size for layer in self.layers]
        self.neuron_offset = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.offsets: dict[int, int] = {}
        m = 0
        for k, c in enumerate(self.connections):
            if c.trainable:
                self.offsets[k] = m
                m += self.connection_weights(c)
        self.m = m
        self.classes = self._rescaling_classes()
        self.H = int(sum(1 for hidden in self._class_is_hidden() if hidden))
        self.basis_size = self.m - self.H
        # (source, target, trainable) -> connection index: a hop is one of these
        self.hop = {(c.source, c.target, c.trainable): k for k, c in enumerate(self.connections)}

    def connection_weights(self, c: GConnection) -> int:
        a, b = self.layers[c.source].size, self.layers[c.target].size
        return a * b * c.taps if c.kind == "dense" else a * c.taps

    def weight_id(self, k: int, i: int, j: int, tap: int) -> int:
        c = self.connections[k]
        if c.kind == "dense":
            return self.offsets[k] + (i * self.layers[c.target].size + j) * c.taps + tap
        return self.offsets[k] + i * c.taps + tap

    def _rescaling_classes(self) -> np.ndarray:
        """Class label (smallest neuron id in it) of every neuron, joining identity edges."""
        parent = np.arange(int(self.neuron_offset[-1]), dtype=np.int64)

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = int(parent[x])
            return x

        for c in self.connections:
            if c.kind != "identity":
                continue
            a0, b0 = int(self.neuron_offset[c.source]), int(self.neuron_offset[c.target])
            for i in range(self.layers[c.source].size):
                ra, rb = find(a0 + i), find(b0 + i)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
        return np.array([find(x) for x in range(len(parent))], dtype=np.int64)

    def _class_is_hidden(self):
        """One bool per class: True when no neuron of it is in an input or output layer."""
        touches = np.zeros(len(self.classes), dtype=bool)
        for k in (*self.inputs, *self.outputs):
            touches[self.classes[self.neuron_offset[k] : self.neuron_offset[k + 1]]] = True
        return [not touches[r] for r in np.unique(self.classes)]

    def to_dict(self) -> dict:
        conns = []
        for c in self.connections:
            d = {"from": self.layers[c.source].name, "to": self.layers[c.target].name, "kind": c.kind}
            if c.trainable:
                d["taps"] = c.taps
            conns.append(d)
        return {"name": self.name, "layers": [{"name": l.name, "size": l.size} for l in self.layers], "connections": conns}

    def __repr__(self) -> str:
        return f"GeneralNetwork({self.name!r}, {len(self.layers)} layers, {len(self.connections)} connections, m={self.m}, H={self.H})"


def is_general_spec(data: object) -> bool:
    """A mapping with ``layers`` or ``connections`` is a general spec (``widths``: layered)."""
    return isinstance(data, Mapping) and ("layers" in data or "connections" in data)


def _fail(source: str, message: str) -> BadInput:
    from ..spec import SpecError  # spec.py dispatches here: import at call time

    return SpecError(f"{source}: {message}")


def _check_object(source: str, where: str, raw: object, keys: tuple[str, ...], what: str) -> None:
    """``raw`` is a mapping with only ``keys``; else a SpecError naming ``where``."""
    if not isinstance(raw, Mapping):
        raise _fail(source, f"{where} must be an object with {', '.join(keys)}, got {show_value(raw)}")
    extra = [k for k in raw if k not in keys]
    if extra:
        raise _fail(source, f"{where}: unknown key {show_value(extra[0])} ({what} has: {', '.join(keys)})")


def parse_general(data: Mapping, source: str, max_weights: int) -> GeneralNetwork:
    """Check a general spec and build the network; SpecError ``<source>: <what>`` otherwise."""
    unknown = [k for k in data if k not in _SPEC_KEYS]
    if unknown:
        raise _fail(source, f"unknown key {show_value(unknown[0])} (a general spec has: {', '.join(_SPEC_KEYS)})")
    name = data.get("name") or ""
    if not isinstance(name, str):
        raise _fail(source, f"name must be a string, got {show_value(name)}")
    raw_layers, raw_conns = data.get("layers"), data.get("connections")
    if not isinstance(raw_layers, list) or len(raw_layers) < 2:
        raise _fail(source, f"layers must be a list of at least 2 layers, got {show_value(raw_layers)}")
    if not isinstance(raw_conns, list) or not raw_conns:
        raise _fail(source, f"connections must be a non-empty list, got {show_value(raw_conns)}")
    layers, index = [], {}
    for n, raw in enumerate(raw_layers):
        where = f"layers[{n}]"
        _check_object(source, where, raw, _LAYER_KEYS, "a layer")
        lname, size = raw.get("name"), raw.get("size")
        if not isinstance(lname, str) or not lname:
            raise _fail(source, f"{where}.name must be a non-empty string, got {show_value(lname)}")
        if lname in index:
            raise _fail(source, f"{where}.name {show_value(lname)} is used twice")
        if not is_int(size) or int(size) < 1:
            raise _fail(source, f"{where}.size must be an integer >= 1, got {show_value(size)}")
        index[lname] = n
        layers.append(GLayer(lname, int(size)))
    neurons = sum(l.size for l in layers)
    if neurons > max_weights:  # the rescaling classes are found neuron by neuron
        raise _fail(source, f"more than {max_weights} neurons (the limit; raise it with --max-weights)")
    conns: list[GConnection] = []
    seen: dict[tuple[int, int, bool], int] = {}
    m = 0
    for n, raw in enumerate(raw_conns):
        where = f"connections[{n}]"
        _check_object(source, where, raw, _CONNECTION_KEYS, "a connection")
        ends = []
        for key in ("from", "to"):
            v = raw.get(key)
            if not isinstance(v, str) or v not in index:
                raise _fail(source, f"{where}.{key} must name a layer, got {show_value(v)}")
            ends.append(index[v])
        a, b = ends
        if a >= b:
            raise _fail(source, f"{where}: {layers[a].name} -> {layers[b].name} goes backwards; list layers in topological order")
        kind = raw.get("kind", "dense")
        if kind not in KINDS:
            raise _fail(source, f"{where}.kind must be one of {', '.join(KINDS)}, got {show_value(kind)}")
        if kind == "identity":
            if "taps" in raw:
                raise _fail(source, f"{where}: an identity connection has no taps (its weight is fixed at 1)")
            taps = 0
        else:
            taps = raw.get("taps", 1)
            if not is_int(taps) or int(taps) < 1:
                raise _fail(source, f"{where}.taps must be an integer >= 1, got {show_value(taps)}")
            taps = int(taps)
        if kind != "dense" and layers[a].size != layers[b].size:
            raise _fail(source, f"{where}: {'an' if kind == 'identity' else 'a'} {kind} connection joins layers of equal size, got {layers[a].name} ({layers[a].size}) -> {layers[b].name} ({layers[b].size})")
        key = (a, b, kind != "identity")
        if key in seen:
            what = "an identity" if kind == "identity" else "a trainable (dense or diagonal)"
            raise _fail(source, f"{where}: {layers[a].name} -> {layers[b].name} already has {what} connection (connections[{seen[key]}]); use taps for parallel weights")
        seen[key] = n
        c = GConnection(a, b, kind, taps)
        m += layers[a].size * layers[b].size * taps if kind == "dense" else layers[a].size * taps
        if m > max_weights:
            raise _fail(source, f"more than {max_weights} weights (the limit; raise it with --max-weights)")
        conns.append(c)
    connected = {c.source for c in conns} | {c.target for c in conns}
    lonely = [layers[k].name for k in range(len(layers)) if k not in connected]
    if lonely:
        raise _fail(source, f"layer {show_value(lonely[0])} has no connection")
    if m == 0:
        raise _fail(source, "no trainable weight: every connection is an identity")
    return GeneralNetwork(name, layers, conns)


def from_layered(network) -> GeneralNetwork:
    """A layered network (``Network``: widths and skips) as a general one: layers named "0" ..
    "L", a dense connection with one tap per connected layer pair. Same m, H and paths."""
    layers = [GLayer(str(l), int(w)) for l, w in enumerate(network.widths)]
    conns = [GConnection(a, b, "dense", 1) for a, b in network.pairs]
    return GeneralNetwork(network.name, layers, conns)
