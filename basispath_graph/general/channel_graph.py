"""The channel-level rules shared by ``spec from-onnx`` and ``spec from-torch``: one home.

A front end (ONNX nodes, torch.fx nodes) walks its graph in topological order and calls one
method of :class:`ChannelGraph` per supported operation, naming tensors by string keys. The
graph keeps for every tensor either

- a **layer view** (:class:`View`): the channels of existing layers it consists of, in order
  (concatenation joins views; ReLU, pooling, dropout pass them through: channel-wise, no
  weights), flagged ``flat`` after a flatten, or
- a **pending sum** (:class:`Pending`): a pre-activation not yet given a layer, the connections
  into it (a conv or a linear map of a view, identity edges from an add with a view) and its
  number of biases.

A pending sum becomes a layer when something other than an add or a foldable BatchNorm reads it
(:meth:`ChannelGraph.view`). The rules (docs/general-networks.md, "Import"):

- conv / linear (:meth:`linear`, :meth:`dense_from_features`): a ``dense`` connection from each
  layer of the input view with k taps (a conv's kernel size; a linear map after a flatten of
  C channels with S positions each: in_features = C*S, S taps); a bias is one per channel;
- BatchNorm (:meth:`batchnorm`, eval): folded into the conv or linear before it when that
  pending sum has no other reader (one bias per channel in all); otherwise a ``diagonal``
  connection from each layer of the view plus a bias (a per-channel trainable scale and shift;
  over a concatenation, DenseNet-BC, a scaled copy of each concatenated layer);
- add (:meth:`add`, :meth:`add_bias`): pending + pending merge; pending + view adds
  ``identity`` edges (the ResNet shortcut); view + view makes a layer of two identities; a
  constant operand of one value per channel is a bias.

Front ends give each call a ``where`` text naming the operation (``Conv node 'c1'``); every
refusal is ``error(one line)``, the front end's exception class. An input may have an unknown
channel count (``channels=None``, PyTorch without a sample shape): the first conv, linear,
BatchNorm or add that needs it decides it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..errors import BadInput

__all__ = ["ChannelGraph", "ChannelImportError", "Pending", "SplitChannels", "View", "WeightSource", "per_channel"]


def per_channel(shape, rank: int | None, spatial: bool | None = None) -> int | None:
    """C when a constant of ``shape`` holds one value per channel of an N x C x ... tensor of
    ``rank``: C x 1 x ... with one 1 per spatial axis (leading ones broadcast over the batch; a
    (C, 1) on 4-d maps would multiply along H), (C,) on N x C. Of unknown rank: any C x 1 x ...
    when ``spatial`` is None, else C x 1 x ... on maps (``spatial``) and (C,) on features. None
    otherwise. The one rule of both front ends for biases and scales given as constants."""
    shape = list(shape)
    while len(shape) > 1 and shape[0] == 1:
        shape.pop(0)
    if not shape or any(d != 1 for d in shape[1:]):
        return None
    if rank is not None:
        return shape[0] if len(shape) == max(rank - 1, 1) else None
    return shape[0] if spatial is None or (len(shape) > 1) == spatial else None


def _stride(positions: list[int]) -> int | None:
    """d when ``positions`` are p, p + d, p + 2d, ... (1 for a single one), else None."""
    if len(positions) < 2:
        return 1
    d = positions[1] - positions[0]
    return d if d > 0 and all(b - a == d for a, b in zip(positions, positions[1:])) else None


def _placement(view: "View") -> list[tuple[int, int]] | None:
    """Per segment of ``view``: (place of its channel 0 in the tensor, distance between its
    channels), or None when some layer's channels are at no fixed distance."""
    if view.order is None:
        starts = [0]
        for _, n in view.segments:
            starts.append(starts[-1] + n)
        return [(first, 1) for first in starts[:-1]]
    where: dict[str, dict[int, int]] = {}
    for q, (layer, c) in enumerate(view.order):
        where.setdefault(layer, {})[c] = q
    out = []
    for layer, n in view.segments:
        places = [where[layer][c] for c in range(n)]
        step = _stride(places)
        if step is None:
            return None
        out.append((places[0], step))
    return out


class ChannelImportError(BadInput):
    """A model that is not a ReLU network at channel level (one line)."""


@dataclass
class View:
    segments: list[tuple[str | None, int]]  # (layer name, channels) in channel order; None: channels of zeros
    flat: bool = False
    # the channels in the tensor's order as (layer, channel) when it is not the segments' own
    # (a channel shuffle interleaves layers); None: segment after segment, each in order
    order: list[tuple[str, int]] | None = None

    def entries(self) -> list[tuple[str | None, int]]:
        """(layer, channel) of every channel of the tensor, in its order."""
        if self.order is not None:
            return list(self.order)
        return [(layer, c) for layer, n in self.segments for c in range(n)]

    @property
    def zeros(self) -> bool:
        """Whether some channels are constant zeros (a zero-padded shortcut, CIFAR ResNet option A)."""
        return any(layer is None for layer, _ in self.segments)

    @property
    def channels(self) -> int:
        return sum(n for _, n in self.segments)


@dataclass(frozen=True)
class WeightSource:
    """Where some of a connection's weights live in the model (G-SGD writes them back there):
    parameter ``param`` holds taps ``tap .. tap + taps - 1`` of the connection, and the weight
    from neuron i to neuron j at tap ``tap + s`` is its element number (``elements``)
    ``(out_first + out_stride * j) * in_channels * taps + ((channel + stride * i) % in_channels) * taps + s``
    (flattened). One form for every layout: a conv's [out, in, *kernel] (``channel``: the source
    layer's first channel in a concatenation; ``stride``: the distance of its channels there when
    a channel shuffle interleaved it with others), a linear map's [out, C * S] after a flatten, a
    grouped conv's [out, in / groups, *kernel] (``in_channels`` = in / groups), a depthwise conv's
    [C, 1, *kernel], a bias or a per-channel scale [C] (``in_channels`` = ``taps`` = 1)."""

    param: str
    tap: int
    taps: int
    channel: int = 0
    in_channels: int = 1
    out_first: int = 0  # the target layer's first output channel in the parameter (a layer split by a shortcut)
    stride: int = 1
    out_stride: int = 1

    def shifted(self, by: int) -> "WeightSource":
        return replace(self, tap=self.tap + by)

    def from_output(self, first: int, stride: int = 1) -> "WeightSource":
        """The weights into output channels first, first + stride, ... of this one's target."""
        return replace(self, out_first=self.out_first + self.out_stride * first, out_stride=self.out_stride * stride)

    def elements(self, i, j, t):
        """Element numbers (flattened) of the weights from neurons ``i`` to ``j`` at taps ``t``
        (arrays; every t in this source's taps)."""
        return ((self.out_first + self.out_stride * j) * (self.in_channels * self.taps)
                + ((self.channel + self.stride * i) % self.in_channels) * self.taps + (t - self.tap))


@dataclass
class SplitChannels:
    """A tensor whose channel axis is split in two, N x groups x per_group x ... (the first view
    of a channel shuffle); ``swapped`` once a transpose exchanged the two axes. Only swapping
    them and joining them again (``join_channel_axes``) may read it."""

    source: str
    groups: int
    per_group: int
    swapped: bool = False

    @property
    def channels(self) -> int:
        return self.groups * self.per_group


@dataclass
class Pending:
    channels: int
    dense: dict[str, int] = field(default_factory=dict)  # source layer -> taps
    identity: list[str] = field(default_factory=list)
    biases: int = 0
    made_by: str = ""  # "linear", "batchnorm" or "add": a BatchNorm folds into a linear one only
    diagonal: dict[str, int] = field(default_factory=dict)  # source layer -> taps (a depthwise conv)
    grouped: dict[str, tuple[int, int]] = field(default_factory=dict)  # source layer -> (taps, groups)
    # (kind, source layer) -> the parameters holding that connection's weights (None: not known,
    # the ONNX front end); kind "bias" with source "bias". ``unmapped``: why the weights are no
    # model parameters at all (a BatchNorm folded into them); both only for G-SGD (gsgd/).
    sources: dict[tuple[str, str], list] = field(default_factory=dict)
    unmapped: str = ""
    # identity edges onto some channels only: (source layer, first target channel); the layer is
    # split at their ends when it is made (a shortcut zero-padded on channels, CIFAR option A)
    identity_at: list[tuple[str, int]] = field(default_factory=list)
    # depthwise connections onto some channels only: (source layer, first target channel, taps),
    # a depthwise conv over several layers (ShuffleNet's over a shuffled concatenation); the
    # layer is split at their ends when it is made, as for ``identity_at``
    diagonal_at: list[tuple[str, int, int]] = field(default_factory=list)
    # the tensor's channel q is channel order[q] of the layer(s) made (None: the same)
    order: list[int] | None = None

    def with_sources(self, **changes) -> "Pending":
        """A copy (its dicts and lists copied too) with ``changes``."""
        fields = dict(channels=self.channels, dense=dict(self.dense), identity=list(self.identity), biases=self.biases,
                      made_by=self.made_by, diagonal=dict(self.diagonal), grouped=dict(self.grouped),
                      sources={k: list(v) for k, v in self.sources.items()}, unmapped=self.unmapped,
                      identity_at=list(self.identity_at), diagonal_at=list(self.diagonal_at),
                      order=None if self.order is None else list(self.order))
        fields.update(changes)
        return Pending(**fields)

    def source(self, key: tuple[str, str], param: str | None, tap: int, taps: int, channel: int = 0, in_channels: int = 1,
               stride: int = 1, **out) -> None:
        self.sources.setdefault(key, []).append(
            None if param is None else WeightSource(param, tap, taps, channel, in_channels, stride=stride, **out))


class ChannelGraph:
    """Layers and connections of a general spec, built one operation at a time."""

    def __init__(self, name: str, error: type[Exception] = ChannelImportError, fold: bool = True):
        self.name = name
        # False: a per-channel scale never folds into the conv before it (a diagonal connection of
        # its own), so every parameter stays a weight (G-SGD reads so; basis paths fold)
        self.fold = fold
        self.error = error
        self.layers: list[dict] = []
        self.connections: list[dict] = []
        self.uses_bias = False
        self.tensors: dict[str, View | Pending] = {}
        self.readers: dict[str, int] = {}  # tensor -> how many times it is read (graph outputs count)
        self.labels: dict[str, str] = {}  # tensor -> the name its layer gets (default: the key)
        self.unsized: set[str] = set()  # input layers whose channel count no operation told yet
        # per connection: the model parameters holding its weights, or a string saying why they
        # are none (``Pending.sources``); what G-SGD reads (gsgd/parameters.py)
        self.sources: list[list[WeightSource] | str] = []

    # -- layers ---------------------------------------------------------------------------

    def new_layer(self, name: str, size: int) -> str:
        taken = {l["name"] for l in self.layers} | {"bias"}  # "bias" is the constant input's name
        base, n = name or "layer", 1
        while name in taken or not name:
            n += 1
            name = f"{base}_{n}"
        self.layers.append({"name": name, "size": int(size)})
        return name

    def input(self, key: str, channels: int | None) -> None:
        """A graph input of ``channels`` channels (None: decided by its first reader)."""
        layer = self.new_layer(self.labels.get(key, key), channels or 0)
        if not channels:
            self.unsized.add(layer)
        self.tensors[key] = View([(layer, channels or 0)])

    def _materialize(self, key: str) -> View:
        value = self.tensors[key]
        if isinstance(value, View):
            return value
        if value.identity_at or value.diagonal_at:
            return self._materialize_split(key, value)
        layer = self.new_layer(self.labels.get(key, key), value.channels)
        for source, taps in value.dense.items():
            self._connect({"from": source, "to": layer, "kind": "dense", "taps": taps}, value, ("dense", source))
        for source, taps in value.diagonal.items():
            self._connect({"from": source, "to": layer, "kind": "diagonal", "taps": taps}, value, ("diagonal", source))
        for source, (taps, groups) in value.grouped.items():
            self._connect({"from": source, "to": layer, "kind": "grouped", "taps": taps, "groups": groups}, value, ("grouped", source))
        for source in value.identity:
            self._connect({"from": source, "to": layer, "kind": "identity"})
        if value.biases:
            self.uses_bias = True
            self._connect({"from": "bias", "to": layer, "kind": "dense", "taps": value.biases}, value, ("bias", "bias"))
        view = View([(layer, value.channels)])
        self.tensors[key] = view
        return view

    def _materialize_split(self, key: str, value: Pending) -> View:
        """A pending sum with identity edges onto some channels only: one layer per stretch of
        channels between the ends of those identities, each with its share of the dense
        connections and biases (their weights' output channels offset), the identities each onto
        its own layer; the tensor is the view of those layers in order."""
        sizes = self._sizes()
        ranges = [(l, o) for l, o in value.identity_at] + [(l, o) for l, o, _ in value.diagonal_at]
        cuts = sorted({0, value.channels} | {o for _, o in ranges} | {o + sizes[l] for l, o in ranges})
        where = f"{self.labels.get(key, key)}: a {'sum whose shortcut' if value.identity_at else 'depthwise conv that'} covers some channels only"
        if value.diagonal or value.grouped or value.identity or (value.identity_at and value.diagonal_at):
            raise self.error(f"{where}, with a depthwise, grouped or identity part over all of them: not supported")
        label = self.labels.get(key, key)
        parts = []
        for first, end in zip(cuts, cuts[1:]):
            layer = self.new_layer(f"{label}.{first}", end - first)
            part = value.with_sources(channels=end - first, identity_at=[],
                                      sources={k: [s and s.from_output(first) for s in v] for k, v in value.sources.items()})
            for source, taps in value.dense.items():
                self._connect({"from": source, "to": layer, "kind": "dense", "taps": taps}, part, ("dense", source))
            for source, at in value.identity_at:
                if at == first and sizes[source] == end - first:
                    self._connect({"from": source, "to": layer, "kind": "identity"})
                elif at < end and at + sizes[source] > first:
                    raise self.error(f"{where}: two shortcuts overlap part of their channels: not supported")
            for source, at, taps in value.diagonal_at:
                if at == first and sizes[source] == end - first:  # its sources name their output channels already
                    self._connect({"from": source, "to": layer, "kind": "diagonal", "taps": taps}, value, ("diagonal", source))
                elif at < end and at + sizes[source] > first:
                    raise self.error(f"{where}: two of its inputs overlap part of their channels: not supported")
            if value.biases:
                self.uses_bias = True
                self._connect({"from": "bias", "to": layer, "kind": "dense", "taps": value.biases}, part, ("bias", "bias"))
            parts.append((layer, end - first))
        view = View(parts)
        if value.order is not None:  # the tensor's channel q is channel order[q] of the pieces laid end to end
            natural = view.entries()
            view = self._ordered(parts, [natural[i] for i in value.order], view.flat)
        self.tensors[key] = view
        return view

    def _sizes(self) -> dict[str, int]:
        return {l["name"]: l["size"] for l in self.layers}

    @staticmethod
    def _ordered(segments: list[tuple[str | None, int]], order: list[tuple[str, int]], flat: bool = False) -> View:
        """A view of whole layers ``segments`` whose channels come in ``order`` (None kept when
        that is the segments' own order)."""
        view = View(list(segments), flat)
        return view if order == view.entries() else View(list(segments), flat, list(order))

    def _view_of(self, entries: list[tuple[str, int]], flat: bool, where: str) -> View:
        """The view holding exactly the channels ``entries`` (layer, channel), in that order:
        every layer it touches must be in it whole, once."""
        sizes, counts, segments = self._sizes(), {}, []
        for layer, c in entries:
            if layer is None:
                raise self.error(f"{where}: reorders zero-padded channels: not supported")
            if layer not in counts:
                segments.append((layer, sizes[layer]))
            counts[layer] = counts.get(layer, 0) + 1
        if len(set(entries)) != len(entries) or any(counts[l] != n for l, n in segments):
            raise self.error(f"{where}: reorders a tensor that holds a layer twice or in part: not supported")
        return self._ordered(segments, entries, flat)

    def _no_zeros(self, view: View, where: str) -> View:
        """``view`` unless it holds zero channels: those only an add reads (a padded shortcut)."""
        if view.zeros:
            raise self.error(f"{where} reads zero-padded channels: only a residual add may (a shortcut padded with zeros)")
        return view

    def pad_channels(self, out: str, src: str, where: str, before: int, after: int) -> None:
        """``src`` with ``before`` and ``after`` channels of zeros around it (F.pad on the channel
        axis: the CIFAR ResNet's option-A shortcut); spatial padding passes the channels through."""
        if before < 0 or after < 0:
            raise self.error(f"{where}: a negative pad of the channel axis (a crop of channels): not supported")
        view = self.view(src, where)
        if view.order is not None:
            raise self.error(f"{where}: pads a tensor whose channels are reordered (a channel shuffle): not supported")
        self.tensors[out] = View(([(None, before)] if before else []) + view.segments + ([(None, after)] if after else []), view.flat)

    def _connect(self, connection: dict, value: Pending | None = None, key: tuple[str, str] | None = None,
                 unmapped: str = "") -> None:
        """Add a connection with the parameters its weights come from (``sources``)."""
        self.connections.append(connection)
        if value is None:
            self.sources.append(unmapped)  # identity: no weights; else why they are no parameters
            return
        found = value.sources.get(key, [])
        taps = connection["taps"]
        if value.unmapped or any(s is None for s in found) or sum(s.taps for s in found) != taps:
            self.sources.append(value.unmapped or "its weights' parameters are not known (read from ONNX)")
        else:
            self.sources.append(list(found))

    def view(self, key: str, where: str) -> View:
        """The tensor as layers (a pending sum becomes a layer now)."""
        if key not in self.tensors:
            raise self.error(f"{where} reads {key!r}, which no supported node wrote")
        if isinstance(self.tensors[key], SplitChannels):
            raise self.error(f"{where} reads a tensor whose channel axis is split in two: only a transpose of the two axes"
                             " and a reshape back (a channel shuffle) may")
        return self._materialize(key)

    def fit(self, view: View, channels: int, where: str) -> View:
        """Size the one unsized input layer in ``view`` so that it has ``channels`` channels."""
        open_ = [layer for layer, _ in view.segments if layer in self.unsized]
        if not open_:
            return view
        rest = channels - view.channels
        if len(open_) > 1 or rest < 1:
            raise self.error(f"{where}: cannot tell the channels of the input from {channels} channels read")
        layer = open_[0]
        self.unsized.discard(layer)
        next(l for l in self.layers if l["name"] == layer)["size"] = rest
        for key, value in self.tensors.items():
            if isinstance(value, View) and any(s == layer for s, _ in value.segments):
                self.tensors[key] = View([(s, rest if s == layer else n) for s, n in value.segments], value.flat, value.order)
        return View([(s, rest if s == layer else n) for s, n in view.segments], view.flat, view.order)

    # -- operations ---------------------------------------------------------------------

    def pass_through(self, out: str, src: str, where: str) -> None:
        """ReLU, pooling, dropout, identity: channel-wise, no weights."""
        self.tensors[out] = self.view(src, where)

    def flatten(self, out: str, src: str, where: str) -> None:
        """N x C x ... to N x features: the view, marked flat (for the taps of the next linear)."""
        view = self.view(src, where)
        self.tensors[out] = View(view.segments, True, view.order)

    def permute_channels(self, out: str, src: str, where: str, perm: list[int]) -> None:
        """Channel j of ``out`` is channel ``perm[j]`` of ``src`` (ShuffleNet's channel shuffle):
        a relabelling, no weights; the layers stay whole, only their order of channels changes."""
        view = self.view(src, where)
        if sorted(perm) != list(range(view.channels)):
            raise self.error(f"{where}: not a permutation of its {view.channels} channels")
        entries = view.entries()
        self.tensors[out] = self._view_of([entries[i] for i in perm], view.flat, where)

    def split_channel_axis(self, out: str, src: str, where: str, groups: int) -> None:
        """N x C x ... reshaped to N x groups x C / groups x ... (the front end checks the other
        axes stay): the first step of a channel shuffle."""
        view = self._no_zeros(self.view(src, where), where)
        if groups < 1 or view.channels % groups:
            raise self.error(f"{where}: {view.channels} channels in {groups} groups")
        self.tensors[out] = SplitChannels(src, groups, view.channels // groups)

    def swap_channel_axes(self, out: str, src: str, where: str) -> None:
        """The two axes of a split channel axis exchanged (``transpose(1, 2)``)."""
        split = self.tensors.get(src)
        if not isinstance(split, SplitChannels):
            raise self.error(f"{where}: not of a channel axis split in two")
        self.tensors[out] = SplitChannels(split.source, split.groups, split.per_group, not split.swapped)

    def join_channel_axes(self, out: str, src: str, where: str) -> None:
        """A split channel axis reshaped back to one: the channels permuted when the two axes were
        swapped (channel j of C/g x g is channel (j % g) * C/g + j // g of g x C/g)."""
        split = self.tensors.get(src)
        if not isinstance(split, SplitChannels):
            raise self.error(f"{where}: not of a channel axis split in two")
        g, n = split.groups, split.per_group
        perm = [(j % g) * n + j // g for j in range(g * n)] if split.swapped else list(range(g * n))
        self.permute_channels(out, split.source, where, perm)

    def select_channels(self, out: str, src: str, where: str, first: int, count: int) -> None:
        """Channels ``first`` .. ``first + count - 1`` of ``src`` (``chunk`` / ``split`` along
        channels, ``x[:, a:b]``). A layer the selection holds in part is split first into the part
        it holds and the rest (``_split_layer``), so a view is always of whole layers."""
        view = self._no_zeros(self.view(src, where), where)
        if count < 1 or first < 0 or first + count > view.channels:
            raise self.error(f"{where}: channels {first} .. {first + count - 1} of {view.channels}")
        chosen = view.entries()[first:first + count]
        sizes, inside = self._sizes(), {}
        for layer, c in chosen:
            inside.setdefault(layer, set()).add(c)
        for layer, channels in inside.items():
            if len(channels) < sizes[layer]:
                rest = sorted(set(range(sizes[layer])) - channels)
                self._split_layer(layer, [sorted(channels), rest], where)
        self.tensors[out] = self._view_of(self.view(src, where).entries()[first:first + count], view.flat, where)

    def _split_layer(self, layer: str, parts: list[list[int]], where: str) -> None:
        """Replace ``layer`` by one layer per list of its channels in ``parts`` (made after the
        fact: its incoming dense connections and biases are copied onto each part, every view
        holding it now holds the parts). Only a layer nothing reads yet through weights, and that
        only dense connections and biases make, can be split."""
        name = next(l for l in self.layers if l["name"] == layer)
        problem = None
        if layer in self.unsized:
            problem = "its channel count is not known yet"
        elif any(c["from"] == layer for c in self.connections) or any(
                isinstance(v, Pending) and layer in {*v.dense, *v.diagonal, *v.grouped, *v.identity,
                                                     *(l for l, _ in v.identity_at), *(l for l, _, _ in v.diagonal_at)}
                for v in self.tensors.values()):
            problem = "a weight already reads it"
        elif any(c["to"] == layer and c["kind"] != "dense" for c in self.connections):
            problem = "it is made by a depthwise, grouped or identity connection"
        if problem:
            raise self.error(f"{where} takes part of layer {layer!r}'s channels, and {problem}: not supported")
        at = self.layers.index(name)
        pieces = []
        for k, channels in enumerate(parts):
            piece = self.new_layer(f"{layer}.part{k}", len(channels))
            self.layers.insert(at + k, self.layers.pop())  # in the spec where the layer was
            pieces.append(piece)
        self.layers.remove(name)
        connections, sources = [], []
        for c, src in zip(self.connections, self.sources):
            if c["to"] != layer:
                connections.append(c)
                sources.append(src)
                continue
            for piece, channels in zip(pieces, parts):
                connections.append(dict(c, to=piece))
                step = _stride(channels)
                if isinstance(src, str):
                    sources.append(src)
                elif step is not None:
                    sources.append([s.from_output(channels[0], step) for s in src])
                else:
                    sources.append("a layer split by a channel selection: its output channels are at no stride in the parameter")
        self.connections, self.sources = connections, sources
        piece_of = {c: (piece, i) for piece, channels in zip(pieces, parts) for i, c in enumerate(channels)}
        for key, value in self.tensors.items():
            if isinstance(value, View) and any(l == layer for l, _ in value.segments):
                segments = []
                for l, n in value.segments:
                    segments += list(zip(pieces, map(len, parts))) if l == layer else [(l, n)]
                order = [piece_of[c] if l == layer else (l, c) for l, c in value.entries()]
                self.tensors[key] = self._ordered(segments, order, value.flat)

    def concat(self, out: str, sources: list[str], where: str) -> None:
        """Along channels: the next conv reads each concatenated layer (DenseNet)."""
        views = [self.view(key, where) for key in sources]
        segments = [segment for view in views for segment in view.segments]
        if any(view.order is not None for view in views):  # a shuffled part: the order is each part's
            self.tensors[out] = self._ordered(segments, [e for view in views for e in view.entries()])
        else:
            self.tensors[out] = View(segments)

    def conv(self, out: str, src: str, where: str, in_channels: int, out_channels: int, taps: int,
             has_bias: bool | Callable[[], bool], params: tuple[str | None, str | None] = (None, None)) -> None:
        """A conv with ``taps`` kernel positions (groups = 1: the front end checks); ``has_bias``
        may be a check to run once the input is known to fit. ``params``: the names of its weight
        and bias parameters, where the front end knows them (``WeightSource``)."""
        view = self.fit(self.view(src, where), in_channels, where)
        if in_channels != view.channels:
            raise self.error(f"{where}: weight has {in_channels} input channels, its input {view.channels}")
        self.linear(out, view, out_channels, taps, has_bias() if callable(has_bias) else has_bias, params)

    def dense_from_features(self, out: str, src: str, where: str, in_f: int, out_f: int, has_bias: bool,
                            params: tuple[str | None, str | None] = (None, None)) -> None:
        """A linear map of N x features (Gemm, MatMul, nn.Linear): S taps after a flatten of
        C channels with S positions each."""
        view = self.fit(self.view(src, where), in_f, where)  # an input of unknown shape: its features are channels
        if in_f % view.channels:
            raise self.error(f"{where}: {in_f} input features are not a whole number per channel of its {view.channels} input channels")
        taps = in_f // view.channels
        if taps > 1 and not view.flat:
            raise self.error(f"{where}: {in_f} input features from {view.channels} channels without a Flatten")
        self.linear(out, view, out_f, taps, has_bias, params)

    def linear(self, out: str, view: View, channels: int, taps: int, has_bias: bool,
               params: tuple[str | None, str | None] = (None, None)) -> None:
        """``channels`` outputs, each reading every channel of ``view`` at ``taps`` positions."""
        self._no_zeros(view, out)
        p = Pending(int(channels), made_by="linear")
        placed = _placement(view)
        if placed is None:
            p.unmapped = "its input's channels are reordered (a channel shuffle) out of any stride: the weight layout is not followed"
        for s, (layer, n) in enumerate(view.segments):
            tap = p.dense.get(layer, 0)  # a layer read twice (torch.cat([x, x])) gets more taps
            p.dense[layer] = tap + taps
            first, stride = placed[s] if placed else (0, 1)  # its channels' places in the weight's input dimension
            p.source(("dense", layer), params[0], tap, taps, first, view.channels, stride)
        p.biases = 1 if has_bias else 0
        if has_bias:
            p.source(("bias", "bias"), params[1], 0, 1)
        self.tensors[out] = p

    def grouped_conv(self, out: str, src: str, where: str, in_channels: int, out_channels: int, groups: int, taps: int,
                     has_bias: bool, params: tuple[str | None, str | None] = (None, None)) -> None:
        """A conv with ``groups`` > 1: output block g reads input block g only, at ``taps`` kernel
        positions. A depthwise conv (groups = in = out channels: channel i reads channel i) is a
        ``diagonal`` connection, as BatchNorm's scale is (which folds into it); any other a
        ``grouped`` one (ResNeXt, RegNet)."""
        depthwise = groups == in_channels == out_channels
        what = "depthwise" if depthwise else "grouped"
        view = self._no_zeros(self.fit(self.view(src, where), in_channels, where), where)
        if view.channels != in_channels:
            raise self.error(f"{where}: weight has {in_channels} input channels, its input {view.channels}")
        if depthwise and (len(view.segments) > 1 or view.order is not None):
            self._depthwise_over_layers(out, view, taps, has_bias, params)
            return
        if len(view.segments) != 1:
            raise self.error(f"{where}: a {what} conv over a concatenation: not supported")
        p = Pending(int(out_channels), made_by="linear", biases=1 if has_bias else 0)
        layer = view.segments[0][0]
        if depthwise:
            p.diagonal[layer] = taps
        else:
            p.grouped[layer] = (taps, groups)
        p.source(("diagonal" if depthwise else "grouped", layer), params[0], 0, taps, 0, in_channels // groups)
        if has_bias:
            p.source(("bias", "bias"), params[1], 0, 1)
        self.tensors[out] = p

    def _depthwise_over_layers(self, out: str, view: View, taps: int, has_bias: bool, params: tuple) -> None:
        """A depthwise conv over several layers, their channels in any order (ShuffleNet's over a
        shuffled concatenation): one diagonal connection per layer onto its own channels (one
        layer each when made; a BatchNorm after it still folds), the output in the input's order."""
        p = Pending(view.channels, made_by="linear", biases=1 if has_bias else 0)
        placed = _placement(view)
        first, at = 0, {}
        for s, (layer, n) in enumerate(view.segments):
            if layer in at:
                raise self.error(f"{out}: a depthwise conv over a tensor that holds a layer twice: not supported")
            at[layer] = first
            p.diagonal_at.append((layer, first, taps))
            # output channel q of the conv is the tensor's channel q: where this layer's channels are
            out_first, out_stride = placed[s] if placed else (0, 1)
            p.source(("diagonal", layer), params[0], 0, taps, out_first=out_first, out_stride=out_stride)
            first += n
        if view.order is not None:
            p.order = [at[layer] + c for layer, c in view.order]
        if placed is None or (has_bias and view.order is not None):
            p.unmapped = "its input's channels are reordered (a channel shuffle): the weight layout is not followed"
        if has_bias:
            p.source(("bias", "bias"), params[1], 0, 1)
        self.tensors[out] = p

    def scale(self, out: str, src: str, where: str, channels: int, param: str | None = None) -> None:
        """x times a trainable parameter of one value per channel (layer scale): folds into the
        conv or linear before it when that has no other reader (as BatchNorm's scale does), else
        a ``diagonal`` connection into a scaled copy (no shift)."""
        value = self.tensors.get(src)
        if self.fold and isinstance(value, Pending) and value.made_by == "linear" and self.readers.get(src, 0) == 1:
            self._check_channels(value.channels, channels, where)
            self.tensors[out] = value.with_sources(made_by="linear", unmapped=value.unmapped or f"a per-channel scale ({where})"
                                                   " folded into them: their values are products of two parameters")
            return
        view = self._no_zeros(self.fit(self.view(src, where), channels, where), where)
        self._check_channels(view.channels, channels, where)
        if len(view.segments) != 1 or view.order is not None:
            raise self.error(f"{where}: a per-channel scale of a concatenation or of reordered channels: not supported")
        layer = view.segments[0][0]
        p = Pending(view.channels, made_by="linear", diagonal={layer: 1})
        p.source(("diagonal", layer), param, 0, 1)
        self.tensors[out] = p

    def batchnorm(self, out: str, src: str, where: str, channels: int | None = None) -> None:
        """Eval-mode BatchNorm: folds into the conv or linear before it, else a per-channel
        scale (``diagonal``) and shift (a bias). ``channels``: its own count, when known."""
        value = self.tensors.get(src)
        if isinstance(value, Pending) and value.made_by == "linear" and self.readers.get(src, 0) == 1:
            self._check_channels(value.channels, channels, where)
            # folds: scale into the weights, shift (and any conv bias) into one bias per channel
            self.tensors[out] = value.with_sources(biases=1, made_by="batchnorm", unmapped=f"a BatchNorm ({where}) folded into them")
            return
        view = self._no_zeros(self.view(src, where), where)
        if channels is not None:
            view = self.fit(view, channels, where)
            self._check_channels(view.channels, channels, where)
        label = self.labels.get(out, out)
        segments, copy = [], {}
        if len(set(layer for layer, _ in view.segments)) != len(view.segments) and view.order is not None:
            raise self.error(f"{where}: a BatchNorm over reordered channels that hold a layer twice: not supported")
        for layer, n in view.segments:  # over a concatenation (DenseNet-BC): a scaled copy of each layer
            scaled = copy[layer] = self.new_layer(label if len(view.segments) == 1 else f"{label}.{layer}", n)
            why = f"a BatchNorm's scale and shift ({where}): functions of its parameters and running statistics"
            self._connect({"from": layer, "to": scaled, "kind": "diagonal", "taps": 1}, unmapped=why)
            self._connect({"from": "bias", "to": scaled, "kind": "dense", "taps": 1}, unmapped=why)
            segments.append((scaled, n))
        self.uses_bias = True
        order = None if view.order is None else [(copy[layer], c) for layer, c in view.order]
        self.tensors[out] = View(segments, False, order)

    def _check_channels(self, have: int, declared: int | None, where: str) -> None:
        if declared is not None and declared != have:
            raise self.error(f"{where}: {declared} channels, its input {have}")

    def add_bias(self, out: str, src: str, where: str, size: int, per_channel: bool = True, param: str | None = None) -> None:
        """``src`` plus a constant (a trainable bias) of ``size`` values; ``per_channel``: its
        shape puts one value on each channel (no spatial extent)."""
        value = self.tensors.get(src)
        channels = value.channels if value is not None else 0
        if size != channels or not per_channel:
            raise self.error(f"{where}: a constant that is not one value per channel ({size} values for {channels} channels)")
        if isinstance(value, Pending) and self.readers.get(src, 0) == 1:
            p = value.with_sources(biases=value.biases + 1)
            p.source(("bias", "bias"), param, value.biases, 1)
            self.tensors[out] = p
            return
        view = self._no_zeros(self.view(src, where), where)  # read elsewhere too: a layer of its own, then x + b
        if len(view.segments) != 1 or view.order is not None:
            raise self.error(f"{where}: a bias added to a concatenation or to reordered channels: not supported")
        p = Pending(view.channels, {}, [view.segments[0][0]], 1, "add")
        p.source(("bias", "bias"), param, 0, 1)
        self.tensors[out] = p

    def add(self, out: str, a: str, b: str, where: str) -> None:
        """The sum of two computed tensors (a residual block's output)."""
        if a == b:
            raise self.error(f"{where} adds a tensor to itself: not supported")
        parts: list[View | Pending] = []
        for key in (a, b):
            value = self.tensors.get(key)
            if isinstance(value, Pending) and self.readers.get(key, 0) == 1:
                parts.append(value)
            else:
                parts.append(self.view(key, where))
        known = [p.channels for p in parts if not (isinstance(p, View) and any(s in self.unsized for s, _ in p.segments))]
        if known and len(known) < len(parts):  # x + f(x) with x of unknown channels: f(x) tells
            parts = [self.fit(p, known[0], where) if isinstance(p, View) else p for p in parts]
        channels = {p.channels for p in parts}
        if len(channels) != 1:
            raise self.error(f"{where}: operands of {sorted(channels)} channels")
        total = Pending(channels.pop(), made_by="add")
        for p in parts:
            if (isinstance(p, View) and p.order is not None) or (isinstance(p, Pending) and (p.diagonal_at or p.order)):
                raise self.error(f"{where}: adds a tensor whose channels are reordered (a channel shuffle) or a depthwise"
                                 " conv over several layers: not supported")
            if isinstance(p, Pending):
                total.unmapped = total.unmapped or p.unmapped
                for (kind, source), found in p.sources.items():  # p's taps come after total's so far
                    before = total.biases if kind == "bias" else total.dense.get(source, 0) if kind == "dense" else 0
                    total.sources.setdefault((kind, source), []).extend(s and s.shifted(before) for s in found)
                for source, taps in p.dense.items():
                    total.dense[source] = total.dense.get(source, 0) + taps
                for source, taps in p.diagonal.items():
                    if source in total.diagonal:
                        raise self.error(f"{where}: two depthwise convs of one layer summed: not supported")
                    total.diagonal[source] = taps
                for source, tg in p.grouped.items():
                    if source in total.grouped:
                        raise self.error(f"{where}: two grouped convs of one layer summed: not supported")
                    total.grouped[source] = tg
                total.identity += p.identity
                total.identity_at += p.identity_at
                total.biases += p.biases
            elif len(p.segments) == 1 and not p.zeros:
                total.identity.append(p.segments[0][0])
            else:  # zero-padded or concatenated: each layer an identity onto its own channels
                first = 0
                for layer, n in p.segments:
                    if layer is not None:
                        total.identity_at.append((layer, first))
                    first += n
        self.tensors[out] = total

    # -- the spec -----------------------------------------------------------------------

    def finish(self, outputs: list[str], where: str = "the graph output") -> dict:
        """The general spec, with ``outputs`` the graph's output tensors."""
        views = [(out, self._no_zeros(self.view(out, where), where)) for out in outputs]
        read_inside = {c["from"] for c in self.connections}  # layers with an outgoing connection
        for out, view in views:
            for layer, size in view.segments:
                # Also read inside the graph (the output itself, or its layer through a relu, a
                # concatenation, ...): the layer has outgoing connections, so it would count as
                # hidden; an output copy (identity edges) keeps it in an output's rescaling class.
                if self.readers.get(out, 0) > 1 or layer in read_inside:
                    copy = self.new_layer(f"{self.labels.get(out, out)}.output", size)
                    self._connect({"from": layer, "to": copy, "kind": "identity"})
        if self.unsized:
            raise self.error(f"{self.name}: cannot tell how many channels input {sorted(self.unsized)[0]!r} has (no conv, linear or BatchNorm reads it)")
        layers = ([{"name": "bias", "size": 1}] if self.uses_bias else []) + self.layers
        return {"name": self.name, "layers": layers, "connections": self.connections}
