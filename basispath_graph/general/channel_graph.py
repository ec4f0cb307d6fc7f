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

from dataclasses import dataclass, field
from typing import Callable

from ..errors import BadInput

__all__ = ["ChannelGraph", "ChannelImportError", "Pending", "View", "WeightSource", "per_channel"]


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


class ChannelImportError(BadInput):
    """A model that is not a ReLU network at channel level (one line)."""


@dataclass
class View:
    segments: list[tuple[str | None, int]]  # (layer name, channels) in channel order; None: channels of zeros
    flat: bool = False

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
    from neuron i to neuron j at tap ``tap + s`` is its element number
    ``(out_first + j) * in_channels * taps + ((channel + i) % in_channels) * taps + s`` (flattened). One form for
    every layout: a conv's [out, in, *kernel] (``channel``: the source layer's first channel in a
    concatenation), a linear map's [out, C * S] after a flatten, a grouped conv's
    [out, in / groups, *kernel] (``in_channels`` = in / groups), a depthwise conv's [C, 1, *kernel],
    a bias or a per-channel scale [C] (``in_channels`` = ``taps`` = 1)."""

    param: str
    tap: int
    taps: int
    channel: int = 0
    in_channels: int = 1
    out_first: int = 0  # the target layer's first output channel in the parameter (a layer split by a shortcut)

    def shifted(self, by: int) -> "WeightSource":
        return WeightSource(self.param, self.tap + by, self.taps, self.channel, self.in_channels, self.out_first)

    def from_output(self, first: int) -> "WeightSource":
        return WeightSource(self.param, self.tap, self.taps, self.channel, self.in_channels, self.out_first + first)


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

    def with_sources(self, **changes) -> "Pending":
        """A copy (its dicts and lists copied too) with ``changes``."""
        fields = dict(channels=self.channels, dense=dict(self.dense), identity=list(self.identity), biases=self.biases,
                      made_by=self.made_by, diagonal=dict(self.diagonal), grouped=dict(self.grouped),
                      sources={k: list(v) for k, v in self.sources.items()}, unmapped=self.unmapped,
                      identity_at=list(self.identity_at))
        fields.update(changes)
        return Pending(**fields)

    def source(self, key: tuple[str, str], param: str | None, tap: int, taps: int, channel: int = 0, in_channels: int = 1) -> None:
        self.sources.setdefault(key, []).append(None if param is None else WeightSource(param, tap, taps, channel, in_channels))


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
        if value.identity_at:
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
        sizes = {layer: n for layer, n in ((l["name"], l["size"]) for l in self.layers)}
        cuts = sorted({0, value.channels} | {o for _, o in value.identity_at} | {o + sizes[l] for l, o in value.identity_at})
        where = f"{self.labels.get(key, key)}: a sum whose shortcut covers some channels only"
        if value.diagonal or value.grouped or value.identity:
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
            if value.biases:
                self.uses_bias = True
                self._connect({"from": "bias", "to": layer, "kind": "dense", "taps": value.biases}, part, ("bias", "bias"))
            parts.append((layer, end - first))
        view = View(parts)
        self.tensors[key] = view
        return view

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
                self.tensors[key] = View([(s, rest if s == layer else n) for s, n in value.segments], value.flat)
        return View([(s, rest if s == layer else n) for s, n in view.segments], view.flat)

    # -- operations ---------------------------------------------------------------------

    def pass_through(self, out: str, src: str, where: str) -> None:
        """ReLU, pooling, dropout, identity: channel-wise, no weights."""
        self.tensors[out] = self.view(src, where)

    def flatten(self, out: str, src: str, where: str) -> None:
        """N x C x ... to N x features: the view, marked flat (for the taps of the next linear)."""
        self.tensors[out] = View(self.view(src, where).segments, flat=True)

    def concat(self, out: str, sources: list[str], where: str) -> None:
        """Along channels: the next conv reads each concatenated layer (DenseNet)."""
        segments = []
        for key in sources:
            segments += self.view(key, where).segments
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
        first = 0  # the segment's first channel in the weight's input dimension
        for layer, n in view.segments:
            tap = p.dense.get(layer, 0)  # a layer read twice (torch.cat([x, x])) gets more taps
            p.dense[layer] = tap + taps
            p.source(("dense", layer), params[0], tap, taps, first, view.channels)
            first += n
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
        if len(view.segments) != 1:
            raise self.error(f"{where}: a per-channel scale of a concatenation: not supported")
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
        segments = []
        for layer, n in view.segments:  # over a concatenation (DenseNet-BC): a scaled copy of each layer
            scaled = self.new_layer(label if len(view.segments) == 1 else f"{label}.{layer}", n)
            why = f"a BatchNorm's scale and shift ({where}): functions of its parameters and running statistics"
            self._connect({"from": layer, "to": scaled, "kind": "diagonal", "taps": 1}, unmapped=why)
            self._connect({"from": "bias", "to": scaled, "kind": "dense", "taps": 1}, unmapped=why)
            segments.append((scaled, n))
        self.uses_bias = True
        self.tensors[out] = View(segments)

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
        if len(view.segments) != 1:
            raise self.error(f"{where}: a bias added to a concatenation: not supported")
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
