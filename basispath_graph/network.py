"""The network model (one class for every network: layered or general form), weight ids and path blocks.

A network has layers 0..L with widths w_l. Every consecutive pair (l, l+1) is connected,
and each skip (a, b) with a < b adds one more fully connected layer pair. A *weight* is one
neuron pair of a connected layer pair; weights are numbered pair by pair (pairs sorted),
row-major inside a pair: ``offset[(a, b)] + i * w_b + j``.

Paths are kept in *blocks*: all paths of one block visit the same layer sequence, so a block
is a layer tuple plus an integer array of neuron indices with one column per visited layer.
This keeps millions of paths as a few numpy arrays instead of Python objects.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .errors import BadInput
from .values import is_int, show_int, show_value

__all__ = ["Network", "Layer", "Connection", "KINDS", "TRAINABLE_KINDS", "kind_counts", "InvalidNetwork", "check_structure", "check_general", "DEFAULT_MAX_WEIGHTS", "PathBlock", "paths_to_json", "blocks_from_json", "MAX_LAYERS"]

#: Most layers a network may have (layers 0..L, so L <= MAX_LAYERS - 1).
MAX_LAYERS = 1000
#: Default limit on the number of weights m of a network (``spec`` reads it, ``--max-weights``).
DEFAULT_MAX_WEIGHTS = 50_000_000


class InvalidNetwork(BadInput):
    """Widths, skips or name that do not make a network; str() is one line (``spec.SpecError``
    adds the file name in front)."""


def check_structure(widths, skips, name) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], str]:
    """(widths, sorted connected pairs, name) or InvalidNetwork naming the first problem.

    The one home of the structural rules: specs, presets, imports and ``Network(...)`` all
    come through here, so every refusal reads the same."""
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise InvalidNetwork(f"name must be a string, got {show_value(name)}")
    bad = next((c for c in name if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:  # a "\ud800" JSON escape: not Unicode text, cannot be printed or stored
        raise InvalidNetwork(f"name contains a lone surrogate U+{ord(bad):04X}, which is not valid Unicode text")
    if isinstance(widths, np.ndarray):
        widths = widths.tolist()
    if not isinstance(widths, (list, tuple)):
        raise InvalidNetwork(f"widths must be a list of integers, got {show_value(widths)}")
    if len(widths) < 2:
        raise InvalidNetwork(f"widths must have at least 2 entries (input and output layer), got {len(widths)}")
    if len(widths) > MAX_LAYERS:
        raise InvalidNetwork(f"widths has {len(widths)} entries, more than the limit of {MAX_LAYERS}")
    checked: list[int] = []
    for i, w in enumerate(widths):
        if not is_int(w) or int(w) < 1:
            raise InvalidNetwork(f"widths[{i}] must be an integer >= 1, got {show_value(w)}")
        checked.append(int(w))
    L = len(checked) - 1
    if skips is None:
        skips = []
    if isinstance(skips, np.ndarray):
        skips = skips.tolist()
    if not isinstance(skips, (list, tuple)):
        raise InvalidNetwork(f"skips must be a list of [a, b] pairs, got {show_value(skips)}")
    pairs = {(l, l + 1) for l in range(L)}
    for i, s in enumerate(skips):
        if not isinstance(s, (list, tuple)) or len(s) != 2:
            raise InvalidNetwork(f"skips[{i}] must be a pair [a, b] of layer indices, got {show_value(s)}")
        for j, v in enumerate(s):
            if not is_int(v):
                raise InvalidNetwork(f"skips[{i}][{j}] must be an integer, got {show_value(v)}")
        a, b = int(s[0]), int(s[1])
        where = f"skips[{i}] = [{show_int(a)}, {show_int(b)}]"
        if not (0 <= a <= L and 0 <= b <= L):
            raise InvalidNetwork(f"{where} is out of range: layers are 0..{L}")
        if a == b:
            raise InvalidNetwork(f"{where} connects layer {a} to itself: need a < b")
        if a > b:
            raise InvalidNetwork(f"{where} goes backwards: need a < b")
        pairs.add((a, b))
    return tuple(checked), tuple(sorted(pairs)), name


@dataclass(frozen=True)
class Layer:
    """A layer of a network: a name and its number of neurons (channels)."""

    name: str
    size: int


@dataclass(frozen=True)
class Connection:
    """A connection between two layers (indices into ``Network.layers``): ``dense`` (every neuron
    to every neuron, ``taps`` parallel weights each), ``grouped`` (the neurons split into
    ``groups`` equal blocks on each side, dense within a block: a grouped conv), ``diagonal``
    (neuron i to neuron i, ``taps`` weights each) or ``identity`` (neuron i to neuron i, fixed
    weight 1, ``taps`` 0). Dense and diagonal are the two ends of grouped: 1 group, and one
    group per neuron (``Network.group_sizes``)."""

    source: int
    target: int
    kind: str
    taps: int
    groups: int = 1  # a grouped connection's; dense 1, diagonal and identity: see group_sizes

    @property
    def trainable(self) -> bool:
        return self.kind in TRAINABLE_KINDS


#: Connection kinds, and those that carry trainable weights (docs/general-networks.md).
KINDS = ("dense", "grouped", "diagonal", "identity")
TRAINABLE_KINDS = ("dense", "grouped", "diagonal")


def kind_counts(connections) -> dict[str, int]:
    """Connections by kind: dense, diagonal and identity always, grouped where there is one
    (summaries of networks without grouped connections stay as they were)."""
    counts = {k: sum(c.kind == k for c in connections) for k in ("dense", "grouped", "diagonal", "identity")}
    if not counts["grouped"]:
        del counts["grouped"]
    return counts


class Network:
    """A ReLU network: layers of neurons and the connections between them; checked when made.

    One class for every network. Two forms build it:

    - the *layered* form ``Network(widths, skips, name)``: layers 0..L of the given widths, every
      consecutive pair and every skip (a, b) fully connected (the paper's setting);
    - the *general* form ``Network(layers=[...], connections=[...], name=...)``: named layers and
      typed connections (kernel taps, biases, identity shortcuts, concatenations:
      docs/general-networks.md), checked by the same rules as a general spec file.

    Both have ``name``, ``m``, ``H``, ``basis_size``, ``layers``, ``connections``,
    ``is_layered`` and ``to_dict()`` (the spec they were made from). A layered network also has
    ``widths``, ``skips``, ``pairs`` and ``L``, which DEAH's layered machinery works on; a
    general one runs DEAH on its layered *core* (engines/general solve), invisibly.

    Parameters
    ----------
    widths : sequence of int
        Layered form: widths w_0..w_L of the layers (each >= 1, at least 2 layers).
    skips : sequence of (a, b), optional
        Layered form: extra fully connected layer pairs, 0 <= a < b <= L. Consecutive pairs are
        always connected; duplicates are merged and a skip (a, a+1) is harmless.
    name : str, optional
    layers, connections : lists of mappings, keyword only
        General form: ``{"name", "size"}`` per layer, ``{"from", "to", "kind", "taps"}`` per
        connection, as in a general spec file.

    Raises
    ------
    InvalidNetwork
        (a :class:`~basispath_graph.errors.BadInput`) naming the first problem, in the words
        ``basispath`` prints for a spec file.

    Notes
    -----
    ``pairs`` holds every connected layer pair (a, b), a < b, sorted and without duplicates.
    Making a layered network costs O(L + number of skips); ``m`` and ``H`` are computed once.
    Weight ids: connections in order, each a contiguous range; in a dense connection (a -> b) the
    weight from neuron i to neuron j with tap t is ``offset + (i * size_b + j) * taps + t`` (for
    a layered network: pairs sorted, ``offsets[(a, b)] + i * w_b + j``, the same numbering).

    Examples
    --------
    >>> net = Network([2, 2, 3, 2, 2], skips=[(0, 2), (1, 3)], name="fig1b")
    >>> net
    Network(name='fig1b', widths=(2, 2, 3, 2, 2), skips=((0, 2), (1, 3)))
    >>> net.m, net.H, net.basis_size
    (30, 7, 23)
    >>> conv = Network(layers=[{"name": "x", "size": 3}, {"name": "y", "size": 2}],
    ...                connections=[{"from": "x", "to": "y", "taps": 9}], name="conv")
    >>> conv.m, conv.H, conv.is_layered
    (54, 0, False)
    >>> Network([2, 0, 2])
    Traceback (most recent call last):
    ...
    basispath_graph.network.InvalidNetwork: widths[1] must be an integer >= 1, got 0
    """

    def __init__(self, widths=None, skips=(), name: str = "", *, layers=None, connections=None):
        if layers is not None or connections is not None:
            if widths is not None:
                raise InvalidNetwork("give widths (the layered form) or layers and connections (the general form), not both")
            checked = check_general({"name": name or "", "layers": layers, "connections": connections}, DEFAULT_MAX_WEIGHTS)
            object.__setattr__(self, "__dict__", dict(checked.__dict__))
            return
        widths, pairs, name = check_structure(widths, skips, name)
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "pairs", pairs)
        object.__setattr__(self, "name", name)

    @classmethod
    def build(cls, widths, skips=(), name: str = "") -> "Network":
        """Same as ``Network(widths, skips, name)`` (the name older code uses)."""
        return cls(widths, skips, name)

    @classmethod
    def from_parts(cls, name: str, layers, connections) -> "Network":
        """A general network from checked ``Layer`` and ``Connection`` objects (the spec reader
        and the store use this after checking; users write ``Network(layers=..., connections=...)``)."""
        net = object.__new__(cls)
        d = net.__dict__
        d["name"] = name
        d["layers"] = tuple(layers)
        d["connections"] = tuple(connections)
        d["widths"] = None
        return net

    # -- immutability and identity -------------------------------------------------------

    def __setattr__(self, key, value):
        raise AttributeError(f"a Network cannot be changed (tried to set {key!r})")

    def __delattr__(self, key):
        raise AttributeError(f"a Network cannot be changed (tried to delete {key!r})")

    def _key(self):
        if self.is_layered:
            return ("layered", self.widths, self.pairs, self.name)
        return ("general", self.name, self.layers, self.connections)

    def __eq__(self, other) -> bool:
        return isinstance(other, Network) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        object.__setattr__(self, "__dict__", state)

    def __repr__(self) -> str:
        if not self.is_layered:
            return (f"Network(name={self.name!r}, {len(self.layers)} layers, {len(self.connections)} connections, "
                    f"m={self.m}, H={self.H})")
        widths = self.widths if len(self.widths) <= 12 else f"({', '.join(map(str, self.widths[:6]))}, ... {len(self.widths)} layers)"
        skips = self.skips if len(self.skips) <= 8 else f"({len(self.skips)} skips)"
        return f"Network(name={self.name!r}, widths={widths}, skips={skips})"

    # -- both forms ----------------------------------------------------------------------

    @property
    def is_layered(self) -> bool:
        """True for the layered form (widths and skips): the paper's setting, DEAH reads it as it is."""
        return self.__dict__.get("widths") is not None

    @cached_property
    def layers(self) -> tuple[Layer, ...]:
        """The layers in topological order (a layered network's are named "0".."L")."""
        return tuple(Layer(str(l), int(w)) for l, w in enumerate(self.widths))

    @cached_property
    def connections(self) -> tuple[Connection, ...]:
        """The connections (a layered network's: one dense connection per connected pair, sorted)."""
        return tuple(Connection(a, b, "dense", 1) for a, b in self.pairs)

    @cached_property
    def index(self) -> dict[str, int]:
        """Layer name -> position in ``layers``."""
        return {layer.name: k for k, layer in enumerate(self.layers)}

    @cached_property
    def inputs(self) -> tuple[int, ...]:
        """Layers with no incoming connection (a size-1 input layer is a bias)."""
        has_in = {c.target for c in self.connections}
        return tuple(k for k in range(len(self.layers)) if k not in has_in)

    @cached_property
    def outputs(self) -> tuple[int, ...]:
        """Layers with no outgoing connection."""
        has_out = {c.source for c in self.connections}
        return tuple(k for k in range(len(self.layers)) if k not in has_out)

    @cached_property
    def neuron_offset(self) -> np.ndarray:
        """Neuron ids: layers in order, ``neuron_offset[layer] + index``."""
        return np.concatenate([[0], np.cumsum([layer.size for layer in self.layers])]).astype(np.int64)

    @cached_property
    def connection_offsets(self) -> dict[int, int]:
        """First weight id of each trainable connection (by its position in ``connections``)."""
        out, m = {}, 0
        for k, c in enumerate(self.connections):
            if c.trainable:
                out[k] = m
                m += self.connection_weights(c)
        return out

    @cached_property
    def hop(self) -> dict[tuple[int, int, bool], int]:
        """(source, target, trainable) -> connection index: a hop of a path is one of these."""
        return {(c.source, c.target, c.trainable): k for k, c in enumerate(self.connections)}

    @cached_property
    def classes(self) -> np.ndarray:
        """Rescaling class of every neuron (the smallest neuron id in it), joining identity edges."""
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

    def group_sizes(self, c: Connection) -> tuple[int, int]:
        """Neurons per group on each side: a weight joins neuron i to neuron j iff
        i // ga == j // gb (dense: one group; diagonal and identity: one neuron per group)."""
        if c.kind in ("diagonal", "identity"):
            return 1, 1
        return self.layers[c.source].size // c.groups, self.layers[c.target].size // c.groups

    def connection_weights(self, c: Connection) -> int:
        """Trainable weights of one connection."""
        return self.layers[c.source].size * self.group_sizes(c)[1] * c.taps

    def local_weight(self, c: Connection, i, j, tap):
        """Offset in connection ``c`` of the weight from neuron i to neuron j (same group), tap
        ``tap`` (numbers or numpy arrays): weights in order of i, then j, then tap."""
        gb = self.group_sizes(c)[1]
        if gb != self.layers[c.target].size:  # grouped: j's place in its group (else j itself:
            j = j % gb  # a modulo over every row was a fifth of a layer DAG's Step 3)
        return (i * gb + j) * c.taps + tap

    def weight_ends(self, c: Connection, local):
        """(i, j, tap) of the weight at offset ``local`` in connection ``c`` (``local_weight``'s inverse)."""
        ga, gb = self.group_sizes(c)
        q, tap = divmod(local, c.taps)
        i, jj = divmod(q, gb)
        return i, (i // ga) * gb + jj, tap

    def weight_id(self, k: int, i: int, j: int, tap: int) -> int:
        """Id of the weight of connection ``k`` from neuron i to neuron j, tap ``tap``."""
        return self.connection_offsets[k] + self.local_weight(self.connections[k], i, j, tap)

    @cached_property
    def m(self) -> int:
        """Number of trainable weights."""
        if self.is_layered:
            return sum(self.widths[a] * self.widths[b] for a, b in self.pairs)
        return sum(self.connection_weights(c) for c in self.connections if c.trainable)

    @cached_property
    def H(self) -> int:
        """Number of hidden rescaling classes: hidden neurons (layers 1..L-1 of a layered network);
        neurons joined by identity edges rescale together and count once, and a class that holds
        an input or output neuron does not count (math notes, section 7)."""
        if self.is_layered:
            return sum(self.widths[1:-1])
        touches = np.zeros(len(self.classes), dtype=bool)
        for k in (*self.inputs, *self.outputs):
            touches[self.classes[self.neuron_offset[k] : self.neuron_offset[k + 1]]] = True
        return int(sum(1 for r in np.unique(self.classes) if not touches[r]))

    @property
    def basis_size(self) -> int:
        """|B| = m - H for every basis path set: the path vectors span a space of dimension m - H
        (each hidden neuron's rescaling invariance removes one dimension; the paper, Section 2)."""
        return self.m - self.H

    def to_dict(self) -> dict:
        """The spec of this network, in the form it was made from (layered or general)."""
        if self.is_layered:
            return {"name": self.name, "widths": list(self.widths), "skips": [list(p) for p in self.skips]}
        return self.general_dict()

    def general_dict(self) -> dict:
        """The spec in the general form (layers and connections), whichever form made it."""
        conns = []
        for c in self.connections:
            d = {"from": self.layers[c.source].name, "to": self.layers[c.target].name, "kind": c.kind}
            if c.trainable:
                d["taps"] = c.taps
            if c.kind == "grouped":
                d["groups"] = c.groups
            conns.append(d)
        return {"name": self.name, "layers": [{"name": l.name, "size": l.size} for l in self.layers], "connections": conns}

    # -- the layered form ------------------------------------------------------------------

    def _layered_only(self, what: str):
        raise AttributeError(f"{what}: network {self.name or '(unnamed)'} is general (layers and connections), not layered (widths and skips)")

    @property
    def L(self) -> int:
        """Layered form: index of the output layer."""
        if not self.is_layered:
            self._layered_only("L")
        return len(self.widths) - 1

    @property
    def skips(self) -> tuple[tuple[int, int], ...]:
        """Layered form: the connected pairs that are not consecutive."""
        if not self.is_layered:
            self._layered_only("skips")
        return tuple((a, b) for a, b in self.pairs if b > a + 1)

    @cached_property
    def offsets(self) -> dict[tuple[int, int], int]:
        """Layered form: first weight id of each connected pair."""
        if not self.is_layered:
            self._layered_only("offsets")
        out, base = {}, 0
        for a, b in self.pairs:
            out[(a, b)] = base
            base += self.widths[a] * self.widths[b]
        return out

    @cached_property
    def successors(self) -> dict[int, tuple[int, ...]]:
        """Layered form: layer -> the layers it connects to."""
        nxt: dict[int, list[int]] = {l: [] for l in range(self.L + 1)}
        for a, b in self.pairs:
            nxt[a].append(b)
        return {l: tuple(v) for l, v in nxt.items()}

    def weight_ids(self, block: "PathBlock") -> np.ndarray:
        """Layered form: weight ids of every path in a block, shape (n, hops), int64."""
        layers, nodes = block.layers, block.nodes
        if len(layers) < 2:
            return np.zeros((len(nodes), 0), dtype=np.int64)
        hops = list(zip(layers, layers[1:]))
        width_b = np.array([self.widths[b] for _, b in hops], dtype=np.int64)
        offset = np.array([self.offsets[h] for h in hops], dtype=np.int64)
        # All hops at once (broadcast over columns): a few passes over contiguous memory.
        ids = nodes[:, :-1] * width_b
        ids += nodes[:, 1:]
        ids += offset
        return ids


_SPEC_KEYS = ("name", "layers", "connections")
_LAYER_KEYS = ("name", "size")
_CONNECTION_KEYS = ("from", "to", "kind", "taps", "groups")


def _check_object(where: str, raw: object, keys: tuple[str, ...], what: str) -> None:
    """``raw`` is a mapping with only ``keys``; else InvalidNetwork naming ``where``."""
    if not isinstance(raw, Mapping):
        raise InvalidNetwork(f"{where} must be an object with {', '.join(keys)}, got {show_value(raw)}")
    extra = [k for k in raw if k not in keys]
    if extra:
        raise InvalidNetwork(f"{where}: unknown key {show_value(extra[0])} ({what} has: {', '.join(keys)})")


def check_general(data: Mapping, max_weights: int) -> "Network":
    """Check a general spec (layers, connections) and build the network; InvalidNetwork naming
    the first problem otherwise (``spec.parse_general`` puts the file name in front).

    The one home of the general form's rules, as ``check_structure`` is of the layered one;
    sizes are checked against ``max_weights`` while reading, before anything proportional to
    the network is allocated."""
    unknown = [k for k in data if k not in _SPEC_KEYS]
    if unknown:
        raise InvalidNetwork(f"unknown key {show_value(unknown[0])} (a general spec has: {', '.join(_SPEC_KEYS)})")
    name = data.get("name") or ""
    if not isinstance(name, str):
        raise InvalidNetwork(f"name must be a string, got {show_value(name)}")
    raw_layers, raw_conns = data.get("layers"), data.get("connections")
    if not isinstance(raw_layers, list) or len(raw_layers) < 2:
        raise InvalidNetwork(f"layers must be a list of at least 2 layers, got {show_value(raw_layers)}")
    if not isinstance(raw_conns, list) or not raw_conns:
        raise InvalidNetwork(f"connections must be a non-empty list, got {show_value(raw_conns)}")
    layers, index = [], {}
    for n, raw in enumerate(raw_layers):
        where = f"layers[{n}]"
        _check_object(where, raw, _LAYER_KEYS, "a layer")
        lname, size = raw.get("name"), raw.get("size")
        if not isinstance(lname, str) or not lname:
            raise InvalidNetwork(f"{where}.name must be a non-empty string, got {show_value(lname)}")
        if lname in index:
            raise InvalidNetwork(f"{where}.name {show_value(lname)} is used twice")
        if not is_int(size) or int(size) < 1:
            raise InvalidNetwork(f"{where}.size must be an integer >= 1, got {show_value(size)}")
        index[lname] = n
        layers.append(Layer(lname, int(size)))
    neurons = sum(l.size for l in layers)
    if neurons > max_weights:  # the rescaling classes are found neuron by neuron
        raise InvalidNetwork(f"more than {max_weights} neurons (the limit; raise it with --max-weights)")
    conns: list[Connection] = []
    seen: dict[tuple[int, int, bool], int] = {}
    m = 0
    for n, raw in enumerate(raw_conns):
        where = f"connections[{n}]"
        _check_object(where, raw, _CONNECTION_KEYS, "a connection")
        ends = []
        for key in ("from", "to"):
            v = raw.get(key)
            if not isinstance(v, str) or v not in index:
                raise InvalidNetwork(f"{where}.{key} must name a layer, got {show_value(v)}")
            ends.append(index[v])
        a, b = ends
        if a >= b:
            raise InvalidNetwork(f"{where}: {layers[a].name} -> {layers[b].name} goes backwards; list layers in topological order")
        kind = raw.get("kind", "dense")
        if kind not in KINDS:
            raise InvalidNetwork(f"{where}.kind must be one of {', '.join(KINDS)}, got {show_value(kind)}")
        if kind == "identity":
            if "taps" in raw:
                raise InvalidNetwork(f"{where}: an identity connection has no taps (its weight is fixed at 1)")
            taps = 0
        else:
            taps = raw.get("taps", 1)
            if not is_int(taps) or int(taps) < 1:
                raise InvalidNetwork(f"{where}.taps must be an integer >= 1, got {show_value(taps)}")
            taps = int(taps)
        groups = 1
        if kind == "grouped":
            groups = raw.get("groups")
            if not is_int(groups) or int(groups) < 1:
                raise InvalidNetwork(f"{where}.groups must be an integer >= 1, got {show_value(groups)}")
            groups = int(groups)
            if layers[a].size % groups or layers[b].size % groups:
                raise InvalidNetwork(f"{where}: {groups} groups do not divide {layers[a].name} ({layers[a].size}) and {layers[b].name} ({layers[b].size})")
        elif "groups" in raw:
            raise InvalidNetwork(f"{where}: only a grouped connection has groups")
        if kind in ("diagonal", "identity") and layers[a].size != layers[b].size:
            raise InvalidNetwork(f"{where}: {'an' if kind == 'identity' else 'a'} {kind} connection joins layers of equal size, got {layers[a].name} ({layers[a].size}) -> {layers[b].name} ({layers[b].size})")
        key = (a, b, kind != "identity")
        if key in seen:
            what = "an identity" if kind == "identity" else "a trainable (dense, grouped or diagonal)"
            raise InvalidNetwork(f"{where}: {layers[a].name} -> {layers[b].name} already has {what} connection (connections[{seen[key]}]); use taps for parallel weights")
        seen[key] = n
        c = Connection(a, b, kind, taps, groups)
        per_target = {"dense": layers[b].size, "grouped": layers[b].size // groups}.get(kind, 1)
        m += layers[a].size * per_target * taps if kind != "identity" else 0
        if m > max_weights:
            raise InvalidNetwork(f"more than {max_weights} weights (the limit; raise it with --max-weights)")
        conns.append(c)
    connected = {c.source for c in conns} | {c.target for c in conns}
    lonely = [layers[k].name for k in range(len(layers)) if k not in connected]
    if lonely:
        raise InvalidNetwork(f"layer {show_value(lonely[0])} has no connection")
    if m == 0:
        raise InvalidNetwork("no trainable weight: every connection is an identity")
    return Network.from_parts(name, layers, conns)



@dataclass
class PathBlock:
    """Paths that all visit ``layers``; ``nodes[i, k]`` is the neuron of path i at layers[k]."""

    layers: tuple[int, ...]
    nodes: np.ndarray = field(repr=False)

    def __post_init__(self):
        self.layers = tuple(int(l) for l in self.layers)
        self.nodes = np.asarray(self.nodes, dtype=np.int64).reshape(-1, len(self.layers))

    def __len__(self) -> int:
        return len(self.nodes)

    def take(self, index) -> "PathBlock":
        return PathBlock(self.layers, self.nodes[index])

    # A listed block read like a described one (``subroutine_rows.KeptRows``): its rows are made.
    view = take

    def column(self, k: int) -> np.ndarray:
        return self.nodes[:, k]

    def as_lists(self) -> list[list[list[int]]]:
        """Paths as lists of [layer, neuron] pairs (the export format)."""
        ls = self.layers
        return [[[ls[k], int(i)] for k, i in enumerate(row)] for row in self.nodes.tolist()]


def rows_matching(block, indices) -> np.ndarray:
    """Positions of the rows of ``block`` equal to ``indices`` (its neurons along the block's
    layers), ascending: the rows with its first neuron are found on one column and only those
    made (a described block's rows are made on reading: ResNet-18's basis has 11 M)."""
    want = np.asarray(indices, dtype=np.int64)
    near = np.flatnonzero(block.column(0) == want[0])
    return near[(block.take(near).nodes == want).all(axis=1)] if len(near) else near


def paths_to_json(blocks) -> list[list[list[int]]]:
    out = []
    for b in blocks:
        out.extend(b.take(slice(None)).as_lists())  # a described block (KeptRows) made here
    return out


def blocks_from_json(paths) -> list[PathBlock]:
    """Paths ([[layer, index], ...]) as blocks, in file order: a new block starts whenever the
    layer sequence changes, so path k of the file is path k of the blocks (error messages count
    the way the user does)."""
    blocks: list[PathBlock] = []
    run_layers, rows = None, []
    for p in paths:
        layers = tuple(int(l) for l, _ in p)
        if layers != run_layers and rows:
            blocks.append(PathBlock(run_layers, np.array(rows, dtype=np.int64)))
            rows = []
        run_layers = layers
        rows.append([int(i) for _, i in p])
    if rows:
        blocks.append(PathBlock(run_layers, np.array(rows, dtype=np.int64)))
    return blocks


def weight_endpoints(network: Network, weight_ids) -> list[list[int]]:
    """Each weight id as [layer_a, index_a, layer_b, index_b] (inverse of the numbering)."""
    starts = sorted((off, pair) for pair, off in network.offsets.items())
    offs = [o for o, _ in starts]
    out = []
    for wid in weight_ids:
        wid = int(wid)
        k = bisect.bisect_right(offs, wid) - 1
        off, (a, b) = starts[k]
        i, j = divmod(wid - off, network.widths[b])
        out.append([a, i, b, j])
    return out
