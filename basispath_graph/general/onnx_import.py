"""Read an ONNX model at channel level into a general spec (``basispath spec from-onnx``).

Channels are the neurons. The graph is walked in its (topological) node order, keeping for every
tensor either

- a **layer view**: the channels of existing layers it consists of, in order (``Concat`` joins
  views; ReLU, pooling, Dropout, Identity and Flatten pass them through: channel-wise, no weights),
  flagged ``flat`` after Flatten/Reshape, or
- a **pending sum**: a pre-activation not yet given a layer, the connections into it (a Conv or a
  Gemm/MatMul of a view, identity edges from ``Add`` with a view) and its number of biases.

A pending sum becomes a layer when something other than ``Add`` or a foldable BatchNorm reads it
(ReLU, a conv, pooling, concat, the graph output). Rules:

- ``Conv`` (groups = 1; other groups are refused by name): a ``dense`` connection from each layer
  of its input view with k_h*k_w taps; its bias input, if any, is one bias per channel.
- ``Gemm`` (B transposed or not) / ``MatMul`` with a weight initializer: ``dense``; after
  Flatten of C channels with S spatial positions each, S taps (in_features = C*S).
- ``BatchNormalization`` (eval): folded into the conv or linear before it when that pending sum
  has no other reader (the sum gets one bias per channel, replacing a conv bias: one bias per
  channel in all); otherwise a ``diagonal`` connection from a layer view plus a bias (a
  per-channel trainable scale and shift).
- ``Add``: pending + pending merge; pending + view adds ``identity`` edges (the ResNet shortcut;
  equal channel counts, a view of one layer); view + view makes a layer of two identities;
  an initializer operand is a bias.
- anything else (GELU, attention, LayerNorm, Softmax, ...) is refused by its op name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import BadInput

__all__ = ["OnnxImportError", "spec_from_onnx"]

PASS_THROUGH = {"Relu", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Dropout", "Identity"}


class OnnxImportError(BadInput):
    """The model uses something that is not a ReLU network at channel level (one line)."""


@dataclass
class View:
    segments: list[tuple[str, int]]  # (layer name, channels) in channel order
    flat: bool = False

    @property
    def channels(self) -> int:
        return sum(n for _, n in self.segments)


@dataclass
class Pending:
    channels: int
    dense: dict[str, int] = field(default_factory=dict)  # source layer -> taps
    identity: list[str] = field(default_factory=list)
    biases: int = 0
    made_by: str = ""  # op of the last node that wrote it (BatchNorm folds into Conv/Gemm/MatMul only)


class _Importer:
    def __init__(self, model, name: str):
        import onnx
        from onnx import numpy_helper

        try:  # ranks of intermediate tensors (MatMul/Gemm must read N x features)
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - a model shape inference cannot follow: ranks stay unknown
            pass
        self.graph = model.graph
        self.name = name
        self.init = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        self.rank = {v.name: len(v.type.tensor_type.shape.dim) for v in (*self.graph.value_info, *self.graph.input, *self.graph.output)
                     if v.type.tensor_type.HasField("shape")}
        self.layers: list[dict] = []
        self.connections: list[dict] = []
        self.uses_bias = False
        self.tensors: dict[str, View | Pending] = {}
        self.readers: dict[str, int] = {}
        for node in self.graph.node:
            for t in node.input:
                self.readers[t] = self.readers.get(t, 0) + 1
        for out in self.graph.output:
            self.readers[out.name] = self.readers.get(out.name, 0) + 1
        self._onnx = onnx

    # -- layers -------------------------------------------------------------------------

    def _new_layer(self, name: str, size: int) -> str:
        taken = {l["name"] for l in self.layers} | {"bias"}  # "bias" is the constant input's name
        base, n = name or "layer", 1
        while name in taken or not name:
            n += 1
            name = f"{base}_{n}"
        self.layers.append({"name": name, "size": int(size)})
        return name

    def _materialize(self, tensor: str) -> View:
        value = self.tensors[tensor]
        if isinstance(value, View):
            return value
        layer = self._new_layer(tensor, value.channels)
        for source, taps in value.dense.items():
            self.connections.append({"from": source, "to": layer, "kind": "dense", "taps": taps})
        for source in value.identity:
            self.connections.append({"from": source, "to": layer, "kind": "identity"})
        if value.biases:
            self.uses_bias = True
            self.connections.append({"from": "bias", "to": layer, "kind": "dense", "taps": value.biases})
        view = View([(layer, value.channels)])
        self.tensors[tensor] = view
        return view

    def _view(self, tensor: str, node=None) -> View:
        if tensor not in self.tensors:
            where = f"{node.op_type} node {node.name!r}" if node is not None else "the graph output"
            raise OnnxImportError(f"{where} reads {tensor!r}, which no supported node wrote")
        return self._materialize(tensor)

    # -- ops ----------------------------------------------------------------------------

    def run(self) -> dict:
        inputs = [i for i in self.graph.input if i.name not in self.init]
        for i in inputs:
            dims = i.type.tensor_type.shape.dim
            if len(dims) < 2 or not dims[1].dim_value:
                raise OnnxImportError(f"input {i.name!r}: need a known channel dimension (shape N x C x ...)")
            self.tensors[i.name] = View([(self._new_layer(i.name, dims[1].dim_value), dims[1].dim_value)])
        if not inputs or not self.graph.node:
            raise OnnxImportError(f"{self.name}: the model has no graph inputs or no nodes")
        for node in self.graph.node:
            op = node.op_type
            if node.domain not in ("", "ai.onnx"):
                raise OnnxImportError(f"unsupported operation {node.domain}.{op} (node {node.name!r}): only the standard ONNX domain")
            if not node.input or not node.input[0] or not node.output:
                raise OnnxImportError(f"{op} node {node.name!r} has no input or no output")
            handler = getattr(self, f"_op_{op}", None)
            if handler is not None:
                handler(node)
            elif op in PASS_THROUGH:
                self.tensors[node.output[0]] = self._view(node.input[0], node)
            else:
                raise OnnxImportError(f"unsupported operation {op} (node {node.name!r}): only Conv, Gemm, MatMul, BatchNormalization, "
                                      "Relu, pooling, Flatten, Add and Concat are ReLU networks at channel level")
        for out in self.graph.output:
            view = self._view(out.name)
            if self.readers.get(out.name, 0) > 1:
                # Also read inside the graph: its layers have outgoing connections, so they would
                # count as hidden; an output copy (identity edges) keeps them outputs' rescaling.
                for layer, size in view.segments:
                    copy = self._new_layer(f"{out.name}.output", size)
                    self.connections.append({"from": layer, "to": copy, "kind": "identity"})
        layers = ([{"name": "bias", "size": 1}] if self.uses_bias else []) + self.layers
        return {"name": self.name, "layers": layers, "connections": self.connections}

    def _weight(self, node, k: int, ndim: tuple[int, ...]) -> np.ndarray:
        if len(node.input) <= k or node.input[k] not in self.init:
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: its weight must be an initializer (a constant)")
        w = self.init[node.input[k]]
        if w.ndim not in ndim:
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: a weight of {w.ndim} dimensions")
        return w

    def _features_input(self, node) -> None:
        """Gemm/MatMul mix features of an N x features tensor; on more dimensions they would act
        on the last axis, not on channels."""
        r = self.rank.get(node.input[0])
        if r is not None and r != 2:
            raise OnnxImportError(f"{node.op_type} node {node.name!r} on a tensor of rank {r}: only N x features (Flatten first)")

    def _bias_input(self, node, k: int) -> bool:
        """Whether input k is a bias: a constant (a computed tensor there is not a weight)."""
        if len(node.input) <= k or not node.input[k]:
            return False
        if node.input[k] not in self.init:
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: input {k} is computed, not a constant bias: not supported")
        return True

    def _attr(self, node, name: str, default):
        for a in node.attribute:
            if a.name == name:
                return self._onnx.helper.get_attribute_value(a)
        return default

    def _op_Conv(self, node) -> None:
        groups = self._attr(node, "group", 1)
        if groups != 1:
            raise OnnxImportError(f"grouped conv (node {node.name!r}, group={groups}) is not supported: only group=1")
        w = self._weight(node, 1, (3, 4, 5))
        view = self._view(node.input[0], node)
        if w.shape[1] != view.channels:
            raise OnnxImportError(f"Conv node {node.name!r}: weight has {w.shape[1]} input channels, its input {view.channels}")
        taps = int(np.prod(w.shape[2:])) if w.ndim > 2 else 1
        self._linear(node, view, w.shape[0], taps, has_bias=self._bias_input(node, 2))

    def _op_Gemm(self, node) -> None:
        if self._attr(node, "transA", 0):
            raise OnnxImportError(f"Gemm node {node.name!r} with transA=1: not supported")
        w = self._weight(node, 1, (2,))
        self._features_input(node)
        out_f, in_f = (w.shape[0], w.shape[1]) if self._attr(node, "transB", 0) else (w.shape[1], w.shape[0])
        self._dense_from_features(node, in_f, out_f, has_bias=self._bias_input(node, 2))

    def _op_MatMul(self, node) -> None:
        w = self._weight(node, 1, (2,))
        self._features_input(node)
        self._dense_from_features(node, w.shape[0], w.shape[1], has_bias=False)

    def _dense_from_features(self, node, in_f: int, out_f: int, has_bias: bool) -> None:
        view = self._view(node.input[0], node)
        if in_f % view.channels:
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: {in_f} input features are not a whole number per channel of its {view.channels} input channels")
        taps = in_f // view.channels
        if taps > 1 and not view.flat:
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: {in_f} input features from {view.channels} channels without a Flatten")
        self._linear(node, view, out_f, taps, has_bias)

    def _linear(self, node, view: View, out: int, taps: int, has_bias: bool) -> None:
        p = Pending(int(out), made_by=node.op_type)
        for layer, _ in view.segments:
            p.dense[layer] = p.dense.get(layer, 0) + taps
        p.biases = 1 if has_bias else 0
        self.tensors[node.output[0]] = p

    def _op_BatchNormalization(self, node) -> None:
        src = self.tensors.get(node.input[0])
        if isinstance(src, Pending) and src.made_by in ("Conv", "Gemm", "MatMul") and self.readers.get(node.input[0], 0) == 1:
            # folds: scale into the weights, shift (and any conv bias) into one bias per channel
            self.tensors[node.output[0]] = Pending(src.channels, dict(src.dense), list(src.identity), 1, "BatchNormalization")
            return
        view = self._view(node.input[0], node)
        if len(view.segments) != 1:
            raise OnnxImportError(f"BatchNormalization node {node.name!r} over a concatenation that it cannot fold into: not supported yet")
        (layer, n), = view.segments
        scaled = self._new_layer(node.output[0], n)
        self.connections.append({"from": layer, "to": scaled, "kind": "diagonal", "taps": 1})
        self.connections.append({"from": "bias", "to": scaled, "kind": "dense", "taps": 1})
        self.uses_bias = True
        self.tensors[node.output[0]] = View([(scaled, n)])

    def _op_Add(self, node) -> None:
        a_name, b_name = node.input[0], node.input[1]
        consts = [t for t in (a_name, b_name) if t in self.init]
        if consts:  # x + bias vector
            other = b_name if a_name in self.init else a_name
            const = self.init[consts[0]]
            src = self.tensors.get(other)
            channels = src.channels if src is not None else 0
            if const.size != channels or (const.ndim >= 3 and const.shape[-1] * const.shape[-2] != 1):
                raise OnnxImportError(f"Add node {node.name!r}: a constant that is not one value per channel ({const.size} values for {channels} channels)")
            if isinstance(src, Pending) and self.readers.get(other, 0) == 1:
                self.tensors[node.output[0]] = Pending(src.channels, dict(src.dense), list(src.identity), src.biases + 1, src.made_by)
                return
            view = self._view(other, node)  # read elsewhere too: a layer of its own, then x + b
            if len(view.segments) != 1:
                raise OnnxImportError(f"Add node {node.name!r}: a bias added to a concatenation: not supported")
            self.tensors[node.output[0]] = Pending(view.channels, {}, [view.segments[0][0]], 1, "Add")
            return
        if a_name == b_name:
            raise OnnxImportError(f"Add node {node.name!r} adds a tensor to itself: not supported")
        parts = []
        for t in (a_name, b_name):
            v = self.tensors.get(t)
            if isinstance(v, Pending) and self.readers.get(t, 0) == 1:
                parts.append(v)
            else:
                parts.append(self._view(t, node))
        channels = {p.channels for p in parts}
        if len(channels) != 1:
            raise OnnxImportError(f"Add node {node.name!r}: operands of {sorted(channels)} channels")
        total = Pending(channels.pop(), made_by="Add")
        for p in parts:
            if isinstance(p, Pending):
                for source, taps in p.dense.items():
                    total.dense[source] = total.dense.get(source, 0) + taps
                total.identity += p.identity
                total.biases += p.biases
            else:
                if len(p.segments) != 1:
                    raise OnnxImportError(f"Add node {node.name!r}: a shortcut from a concatenation is not an identity between two layers")
                total.identity.append(p.segments[0][0])
        self.tensors[node.output[0]] = total

    def _op_Concat(self, node) -> None:
        axis = self._attr(node, "axis", 1)
        rank = self.rank.get(node.output[0])
        if axis != 1 and not (rank is not None and axis == 1 - rank):
            raise OnnxImportError(f"Concat node {node.name!r}: only along channels (axis 1)")
        segments = []
        for t in node.input:
            segments += self._view(t, node).segments
        self.tensors[node.output[0]] = View(segments)

    def _op_Flatten(self, node) -> None:
        if self._attr(node, "axis", 1) != 1:
            raise OnnxImportError(f"Flatten node {node.name!r} with axis {self._attr(node, 'axis', 1)}: only axis 1 (N x features)")
        view = self._view(node.input[0], node)
        self.tensors[node.output[0]] = View(view.segments, flat=True)

    def _op_Reshape(self, node) -> None:
        """Only to N x features (a flatten before a Gemm): a constant shape [N | -1 | 0, F | -1]."""
        shape = self.init.get(node.input[1]) if len(node.input) > 1 else None
        if shape is None or shape.ndim != 1 or len(shape) != 2 or (shape[1] != -1 and shape[1] < 1):
            raise OnnxImportError(f"Reshape node {node.name!r}: only to N x features with a constant shape (a flatten)")
        view = self._view(node.input[0], node)
        self.tensors[node.output[0]] = View(view.segments, flat=True)


def spec_from_onnx(path, name: str | None = None) -> dict:
    """The general spec of the ONNX model at ``path`` (OnnxImportError, one line, if not readable)."""
    import onnx

    try:
        model = onnx.load(str(path))
    except FileNotFoundError:
        raise OnnxImportError(f"{path}: no such file") from None
    except Exception as exc:  # protobuf's DecodeError and friends: not an ONNX model
        raise OnnxImportError(f"{path}: not an ONNX model ({type(exc).__name__})") from None
    return _Importer(model, name or model.graph.name or "onnx-model").run()
