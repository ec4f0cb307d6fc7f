"""Read an ONNX model at channel level into a general spec (``basispath spec from-onnx``).

The ONNX front end of :mod:`basispath_graph.general.channel_graph` (the rules, shared with
``spec from-torch``): this module maps ONNX nodes, attributes and initializers onto its calls.
Channels are the neurons. The graph is walked in its (topological) node order, keeping for every
tensor either

- a **layer view**: the channels of existing layers it consists of, in order (``Concat`` joins
  views; ReLU, pooling, Dropout, Identity and Flatten pass them through: channel-wise, no weights),
  flagged ``flat`` after Flatten/Reshape, or
- a **pending sum**: a pre-activation not yet given a layer, the connections into it (a Conv or a
  Gemm/MatMul of a view, identity edges from ``Add`` with a view) and its number of biases.

A pending sum becomes a layer when something other than ``Add`` or a foldable BatchNorm reads it
(ReLU, a conv, pooling, concat, the graph output). Rules:

- ``Conv`` (groups = 1): a ``dense`` connection from each layer of its input view with k_h*k_w
  taps; its bias input, if any, is one bias per channel. A depthwise conv (groups = in = out
  channels) is a ``diagonal`` connection with k_h*k_w taps; another grouped conv a ``grouped`` one.
- ``Mul`` by a constant of one value per channel: a per-channel scale (layer scale), folded
  into the conv before it or a ``diagonal`` connection, as from-torch reads ``gamma * x``.
- ``Gemm`` (B transposed or not) / ``MatMul`` with a weight initializer: ``dense``; after
  Flatten of C channels with S spatial positions each, S taps (in_features = C*S).
- ``BatchNormalization`` (eval): folded into the conv or linear before it when that pending sum
  has no other reader (the sum gets one bias per channel, replacing a conv bias: one bias per
  channel in all); otherwise a ``diagonal`` connection from a layer view plus a bias (a
  per-channel trainable scale and shift).
- ``Add``: pending + pending merge; pending + view adds ``identity`` edges (the ResNet shortcut;
  equal channel counts, a view of one layer); view + view makes a layer of two identities;
  an initializer operand is a bias.
- ``Constant`` nodes are constants like initializers (the legacy exporter writes Reshape shapes
  and ReduceMean axes as Constants). **Shape arithmetic** (``Shape``, ``Gather``, ``Unsqueeze``,
  ``Squeeze``, ``Concat``, ``Cast`` on shapes: ``x.view(x.size(0), -1)``) is followed as a list
  of known or unknown sizes, so a ``Reshape`` to N x features reads as a flatten wherever its
  shape comes from.
- ``ReduceMean`` over the spatial axes (``x.mean((2, 3))``: global average pooling, channel-wise
  and positively homogeneous) passes the channels through, flat unless ``keepdims``; over the
  channel axis it mixes channels without a weight and is refused. ``Squeeze`` of 1 x 1 spatial
  axes is a flatten.
- anything else (GELU, attention, LayerNorm, Softmax, ...) is refused by its op name.
"""

from __future__ import annotations

import numpy as np

from .channel_graph import ChannelGraph, ChannelImportError, Pending, SplitChannels, View, per_channel

__all__ = ["OnnxImportError", "spec_from_onnx", "Pending", "View"]

PASS_THROUGH = {"Relu", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Dropout", "Identity"}
#: Ops computed here when every input is a constant (the legacy exporter builds a Pad's pads from
#: the PyTorch pad tuple so: ConstantOfShape, Concat, Reshape, a reversing Slice, Transpose, Cast).
FOLDABLE = {"ConstantOfShape", "Concat", "Reshape", "Slice", "Transpose", "Cast", "Unsqueeze", "Squeeze", "Gather", "Range",
            "Add", "Sub", "Mul", "Div", "Neg", "Expand", "Shape"}


#: Integer arithmetic on shape values (sizes are positive: ONNX's truncating Div is a floor).
_ARITHMETIC = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b, "Div": lambda a, b: a // b}


class OnnxImportError(ChannelImportError):
    """The model uses something that is not a ReLU network at channel level (one line)."""


def _where(node) -> str:
    return f"{node.op_type} node {node.name!r}"


class _Importer:
    def __init__(self, model, name: str):
        import onnx
        from onnx import numpy_helper

        self.model = model
        try:  # ranks of intermediate tensors (MatMul/Gemm must read N x features)
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - a model shape inference cannot follow: ranks stay unknown
            pass
        self.graph = model.graph
        self.name = name
        self.init = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        self.rank = {v.name: len(v.type.tensor_type.shape.dim) for v in (*self.graph.value_info, *self.graph.input, *self.graph.output)
                     if v.type.tensor_type.HasField("shape")}
        self.shapes: dict[str, list[int | None]] = {}  # shape tensors: their entries (None: unknown)
        self.g = ChannelGraph(name, OnnxImportError)
        for node in self.graph.node:
            for t in node.input:
                self.g.readers[t] = self.g.readers.get(t, 0) + 1
        for out in self.graph.output:
            self.g.readers[out.name] = self.g.readers.get(out.name, 0) + 1
        self._onnx = onnx

    def run(self) -> dict:
        inputs = [i for i in self.graph.input if i.name not in self.init]
        for i in inputs:
            dims = i.type.tensor_type.shape.dim
            if len(dims) < 2 or not dims[1].dim_value:
                raise OnnxImportError(f"input {i.name!r}: need a known channel dimension (shape N x C x ...)")
            self.g.input(i.name, dims[1].dim_value)
        if not inputs or not self.graph.node:
            raise OnnxImportError(f"{self.name}: the model has no graph inputs or no nodes")
        for node in self.graph.node:
            op = node.op_type
            if node.domain not in ("", "ai.onnx"):
                raise OnnxImportError(f"unsupported operation {node.domain}.{op} (node {node.name!r}): only the standard ONNX domain")
            if op == "Constant":  # no input: a constant, as an initializer is
                self._op_Constant(node)
                continue
            if self._fold(node):
                continue
            if self._shape_arithmetic(node):
                continue
            if not node.input or not node.input[0] or not node.output:
                raise OnnxImportError(f"{op} node {node.name!r} has no input or no output")
            handler = getattr(self, f"_op_{op}", None)
            if handler is not None:
                handler(node)
            elif op in PASS_THROUGH:
                self.g.pass_through(node.output[0], node.input[0], _where(node))
            else:
                raise OnnxImportError(f"unsupported operation {op} (node {node.name!r}): only Conv, Gemm, MatMul, BatchNormalization, "
                                      "Relu, pooling, Flatten, Add, Mul (a per-channel scale) and Concat are ReLU networks at channel level")
        return self.g.finish([out.name for out in self.graph.output])

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
        w = self._weight(node, 1, (3, 4, 5))
        taps = int(np.prod(w.shape[2:])) if w.ndim > 2 else 1
        if groups != 1:  # block g of the outputs reads block g of the inputs (depthwise: channel i, channel i)
            self.g.grouped_conv(node.output[0], node.input[0], _where(node), w.shape[1] * groups, w.shape[0], groups, taps,
                                self._bias_input(node, 2))
            return
        self.g.conv(node.output[0], node.input[0], _where(node), w.shape[1], w.shape[0], taps, lambda: self._bias_input(node, 2))

    def _op_Gemm(self, node) -> None:
        if self._attr(node, "transA", 0):
            raise OnnxImportError(f"Gemm node {node.name!r} with transA=1: not supported")
        w = self._weight(node, 1, (2,))
        self._features_input(node)
        out_f, in_f = (w.shape[0], w.shape[1]) if self._attr(node, "transB", 0) else (w.shape[1], w.shape[0])
        self.g.dense_from_features(node.output[0], node.input[0], _where(node), in_f, out_f, has_bias=self._bias_input(node, 2))

    def _op_MatMul(self, node) -> None:
        w = self._weight(node, 1, (2,))
        self._features_input(node)
        self.g.dense_from_features(node.output[0], node.input[0], _where(node), w.shape[0], w.shape[1], has_bias=False)

    def _op_BatchNormalization(self, node) -> None:
        self.g.batchnorm(node.output[0], node.input[0], _where(node))

    def _op_Add(self, node) -> None:
        a_name, b_name = node.input[0], node.input[1]
        consts = [t for t in (a_name, b_name) if t in self.init]
        if consts:  # x + bias vector
            other = b_name if a_name in self.init else a_name
            const = self.init[consts[0]]
            per_channel = self._per_channel(const, other) is not None
            self.g.add_bias(node.output[0], other, _where(node), int(const.size), per_channel)
            return
        self.g.add(node.output[0], a_name, b_name, _where(node))

    def _op_Mul(self, node) -> None:
        """x times a constant of one value per channel: a per-channel scale (layer scale), as
        from-torch reads ``gamma * x`` (folds into the conv before it, else a diagonal
        connection). On N x C x ... maps the constant is C x 1 x ... (a vector of C would
        multiply along the last axis); on N x C, a vector of C."""
        a_name, b_name = node.input[0], node.input[1]
        consts = [t for t in (a_name, b_name) if t in self.init]
        if len(consts) != 1:
            raise OnnxImportError(f"Mul node {node.name!r}: a product of two computed tensors is not positively homogeneous"
                                  " (only x times a constant of one value per channel: a layer scale)")
        other = b_name if a_name in self.init else a_name
        channels = self._per_channel(self.init[consts[0]], other)
        if channels is None or channels < 2:
            raise OnnxImportError(f"Mul node {node.name!r}: a constant of shape {tuple(self.init[consts[0]].shape)} is not one"
                                  " value per channel (only a layer scale: C x 1 x ... on maps, C on features)")
        self.g.scale(node.output[0], other, _where(node), channels)

    def _per_channel(self, const, key: str) -> int | None:
        """C when the constant holds one value per channel of tensor ``key`` (``channel_graph.per_channel``;
        of unknown rank, any C x 1 x ...)."""
        return per_channel(np.shape(const), self.rank.get(key))

    def _op_Concat(self, node) -> None:
        axis = self._attr(node, "axis", 1)
        rank = self.rank.get(node.output[0])
        if axis != 1 and not (rank is not None and axis == 1 - rank):
            raise OnnxImportError(f"Concat node {node.name!r}: only along channels (axis 1)")
        self.g.concat(node.output[0], list(node.input), _where(node))

    def _op_Flatten(self, node) -> None:
        if self._attr(node, "axis", 1) != 1:
            raise OnnxImportError(f"Flatten node {node.name!r} with axis {self._attr(node, 'axis', 1)}: only axis 1 (N x features)")
        self.g.flatten(node.output[0], node.input[0], _where(node))

    def _op_Identity(self, node) -> None:
        """Passes a tensor through; of a constant it is that constant (torch.onnx.export shares
        equal initializers through Identity nodes)."""
        if node.input[0] in self.init:
            self.init[node.output[0]] = self.init[node.input[0]]
        else:
            self.g.pass_through(node.output[0], node.input[0], _where(node))

    def _op_Reshape(self, node) -> None:
        """To N x features (a flatten before a Gemm): a shape [N | -1 | 0, F | -1], constant or
        computed from the input's own shape (``x.view(x.size(0), -1)``); or the reshapes of a
        channel shuffle: N x C x ... to N x g x C/g x ... and back (``_channel_reshape``)."""
        shape = self._shape_value(node.input[1]) if len(node.input) > 1 else None
        if shape is not None and self._channel_reshape(node, shape):
            return
        if shape is None or len(shape) != 2 or (shape[1] is not None and shape[1] != -1 and shape[1] < 1):
            raise OnnxImportError(f"Reshape node {node.name!r}: only to N x features (a flatten) or the reshapes of a channel"
                                  " shuffle (N x C x ... to N x g x C/g x ... and back)")
        self.g.flatten(node.output[0], node.input[0], _where(node))

    def _channel_reshape(self, node, shape: list[int | None]) -> bool:
        """N x C x ... to N x g x C/g x ... (the channel axis split in two; the other axes keep
        their sizes, as the element count then says) and such a tensor back to N x C x ...:
        a channel shuffle's reshapes. False for any other reshape."""
        src, out, where = node.input[0], node.output[0], _where(node)
        split = self.g.tensors.get(src)
        if isinstance(split, SplitChannels):
            rank = self.rank.get(split.source)
            if rank is None or len(shape) != rank or shape[1] not in (split.channels, -1, None):
                raise OnnxImportError(f"Reshape node {node.name!r} to {shape} of a channel axis split in two: only back to the"
                                      " shape it had")
            self.g.join_channel_axes(out, src, where)
            return True
        rank, value = self.rank.get(src), self.g.tensors.get(src)
        if rank is None or rank < 3 or len(shape) != rank + 1 or value is None or isinstance(value, SplitChannels):
            return False
        groups, per_group = shape[1], shape[2]
        if not isinstance(groups, int) or groups < 1 or not (per_group in (-1, None) or groups * per_group == value.channels):
            return False
        self.g.split_channel_axis(out, src, where, groups)
        return True

    def _op_Transpose(self, node) -> None:
        """The transpose of a channel shuffle: the two axes of a split channel axis exchanged."""
        perm = list(self._attr(node, "perm", []))
        split = self.g.tensors.get(node.input[0])
        if not isinstance(split, SplitChannels) or perm != [0, 2, 1, *range(3, len(perm))]:
            raise OnnxImportError(f"Transpose node {node.name!r} with perm {perm}: only exchanging the two axes of a channel"
                                  " axis split in two (a channel shuffle)")
        self.g.swap_channel_axes(node.output[0], node.input[0], _where(node))

    def _op_Split(self, node) -> None:
        """Along channels (``chunk`` / ``split``): each output is its channels (``select_channels``)."""
        rank, axis = self.rank.get(node.input[0]), self._attr(node, "axis", 0)
        if axis != 1 and not (rank is not None and axis == 1 - rank):
            raise OnnxImportError(f"Split node {node.name!r} along axis {axis}: only along channels (axis 1)")
        channels = self.g.view(node.input[0], _where(node)).channels
        if len(node.input) > 1 and node.input[1]:
            sizes = self._constant(node, 1, "split")
        elif self._attr(node, "split", None) is not None:
            sizes = list(self._attr(node, "split", None))
        else:  # equal parts (num_outputs, opset 18: the last one smaller)
            size = -(-channels // len(node.output))
            sizes = [min(size, channels - at) for at in range(0, channels, size)]
        if len(sizes) != len(node.output) or sum(sizes) != channels or min(sizes) < 1:
            raise OnnxImportError(f"Split node {node.name!r}: parts of {sizes} channels for its {len(node.output)} outputs"
                                  f" of {channels} channels")
        first = 0
        for out, size in zip(node.output, sizes):
            self.g.select_channels(out, node.input[0], _where(node), first, size)
            first += size

    def _fold(self, node) -> bool:
        """A node of ``FOLDABLE`` whose inputs are all constants: its outputs are constants too,
        computed by ONNX's reference evaluator. True if folded."""
        if node.op_type not in FOLDABLE or not node.input or not all(not t or t in self.init for t in node.input):
            return False
        from onnx.reference import ReferenceEvaluator

        opset = next((o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")), None)
        try:  # at the model's own opset (Unsqueeze's axes were an attribute before opset 13)
            values = ReferenceEvaluator(node, opsets={"": opset} if opset else None).run(None, {t: self.init[t] for t in node.input if t})
        except Exception:  # noqa: BLE001 - not foldable here: the op's own rule (shape arithmetic, ...) decides
            return False
        for name, value in zip(node.output, values):
            self.init[name] = np.asarray(value)
        return True

    def _constant(self, node, k: int, what: str) -> list[int]:
        """Input ``k`` of ``node`` as a list of integers (a constant)."""
        if len(node.input) <= k or node.input[k] not in self.init:
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: its {what} must be a constant")
        return [int(v) for v in np.atleast_1d(self.init[node.input[k]])]

    def _op_Slice(self, node) -> None:
        """``x[:, :, ::2, ::2]`` of maps: a subsampling of spatial axes, every channel kept
        (channel-wise, no weights); ``x[:, a:b]`` (and the legacy exporter's ``chunk``): channels
        a .. b - 1 (``select_channels``), with any spatial slicing. The batch axis is refused."""
        rank = self.rank.get(node.input[0])
        starts, ends = self._ints(node, 1, "starts"), self._ints(node, 2, "ends")
        axes = self._ints(node, 3, "axes") if len(node.input) > 3 and node.input[3] else list(range(len(starts)))
        steps = self._ints(node, 4, "steps") if len(node.input) > 4 and node.input[4] else [1] * len(axes)
        if rank is None or rank < 2 or any(a % rank == 0 for a in axes) or (rank == 2 and axes):
            raise OnnxImportError(f"Slice node {node.name!r} over axes {axes}: only of the channel and spatial axes of N x C x ... maps")
        channel = [k for k, a in enumerate(axes) if a % rank == 1]
        if not channel:
            self.g.pass_through(node.output[0], node.input[0], _where(node))
            return
        k = channel[0]
        total = self.g.view(node.input[0], _where(node)).channels
        if steps[k] != 1:
            raise OnnxImportError(f"Slice node {node.name!r}: channels with step {steps[k]}: only a stretch of channels")
        first, stop, _ = slice(starts[k], ends[k]).indices(total)
        self.g.select_channels(node.output[0], node.input[0], _where(node), first, stop - first)

    def _ints(self, node, k: int, what: str) -> list[int]:
        """Input ``k`` as integers: a constant, or shape arithmetic that is known."""
        value = self._shape_value(node.input[k]) if len(node.input) > k and node.input[k] else None
        if value is None or None in value:
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: its {what} must be a constant")
        return list(value)

    def _op_Pad(self, node) -> None:
        """Zero padding of maps: of the spatial axes, the channels pass through; of the channel
        axis, channels of zeros around the input (the CIFAR ResNet's option-A shortcut)."""
        rank = self.rank.get(node.input[0])
        pads = list(self._attr(node, "pads", None) or self._constant(node, 1, "pads"))  # an attribute before opset 11
        value = self.init.get(node.input[2]) if len(node.input) > 2 and node.input[2] else self._attr(node, "value", None)
        mode = self._attr(node, "mode", b"constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if rank is None or len(pads) != 2 * rank or mode != "constant" or (value is not None and np.any(value != 0)) or \
                (len(node.input) > 3 and node.input[3]):
            raise OnnxImportError(f"Pad node {node.name!r}: only zero padding (mode constant) of all axes of a tensor of known rank")
        if pads[0] or pads[rank]:
            raise OnnxImportError(f"Pad node {node.name!r}: padding the batch axis")
        if pads[1] or pads[rank + 1]:
            self.g.pad_channels(node.output[0], node.input[0], _where(node), pads[1], pads[rank + 1])
        else:
            self.g.pass_through(node.output[0], node.input[0], _where(node))

    def _op_Constant(self, node) -> None:
        for a in node.attribute:
            if a.name == "value":
                self.init[node.output[0]] = self._onnx.numpy_helper.to_array(a.t)
                return
            if a.name in ("value_int", "value_float", "value_ints", "value_floats"):
                self.init[node.output[0]] = np.array(self._onnx.helper.get_attribute_value(a))
                return
        raise OnnxImportError(f"Constant node {node.name!r}: only a tensor or number value")

    def _shape_value(self, name: str) -> list[int | None] | None:
        """A shape-valued tensor's entries: a constant, or the result of shape arithmetic."""
        if name in self.shapes:
            return self.shapes[name]
        if name in self.init and self.init[name].ndim <= 1 and self.init[name].dtype.kind in "iu":
            return [int(v) for v in np.atleast_1d(self.init[name])]
        return None

    def _dims(self, name: str) -> list[int | None] | None:
        for v in (*self.graph.value_info, *self.graph.input, *self.graph.output):
            if v.name == name and v.type.tensor_type.HasField("shape"):
                return [d.dim_value or None for d in v.type.tensor_type.shape.dim]
        return None

    def _shape_arithmetic(self, node) -> bool:
        """Follow ``Shape`` and the ops on its result (no channels: sizes); True if handled."""
        op, ins = node.op_type, list(node.input)
        if op == "Shape":
            dims = self._dims(ins[0]) or [None] * self.rank.get(ins[0], 0)
            self.shapes[node.output[0]] = dims[self._attr(node, "start", 0):self._attr(node, "end", len(dims)) or None]
            return True
        values = [self._shape_value(t) for t in ins if t]
        if not ins or not node.output or not values or any(v is None for v in values):
            return False  # on a tensor of channels: the op's own rule
        if op == "Gather":
            data, index = values[0], np.atleast_1d(self.init.get(ins[1], np.array(values[1])))
            self.shapes[node.output[0]] = [data[int(i)] if -len(data) <= int(i) < len(data) else None for i in index]
        elif op in ("Unsqueeze", "Squeeze", "Cast", "Identity"):
            self.shapes[node.output[0]] = values[0]
        elif op == "Concat":
            self.shapes[node.output[0]] = [v for value in values for v in value]
        elif op == "Slice" and len(values) >= 3 and all(None not in v for v in values[1:]) \
                and (len(values) < 4 or values[3] in ([0], [-1])):  # of a shape: x.shape[1:3]
            step = values[4][0] if len(values) > 4 else 1
            self.shapes[node.output[0]] = values[0][slice(values[1][0], values[2][0], step)]
        elif op in _ARITHMETIC and len(values) == 2 and 1 in (len(values[0]), len(values[1])):
            a, b = values  # on sizes (the legacy exporter's chunk points: (C + 1) // 2 * k)
            n = max(len(a), len(b))
            a, b = a * n if len(a) == 1 else a, b * n if len(b) == 1 else b
            self.shapes[node.output[0]] = [None if x is None or y is None or (op == "Div" and y == 0) else _ARITHMETIC[op](x, y)
                                           for x, y in zip(a, b)]
        else:
            return False
        return True

    def _axes(self, node, added: bool = False) -> list[int] | None:
        """The ``axes`` of a reduction or squeeze: an attribute (older opsets) or input 1;
        ``added``: of an Unsqueeze (negative axes count from the end of its output)."""
        axes = self._attr(node, "axes", None)
        if axes is None and len(node.input) > 1 and node.input[1]:
            value = self._shape_value(node.input[1])
            if value is None or None in value:
                raise OnnxImportError(f"{node.op_type} node {node.name!r}: its axes must be a constant")
            axes = value
        if axes is None:
            return None
        rank = self.rank.get(node.input[0])
        if rank is None and any(a < 0 for a in axes):
            raise OnnxImportError(f"{node.op_type} node {node.name!r}: axes {list(axes)} of a tensor of unknown rank")
        rank = rank + len(axes) if rank and added else rank
        return sorted(a % rank if rank else a for a in axes)

    def _op_ReduceMean(self, node) -> None:
        """``x.mean((2, 3))``: global average pooling (channel-wise), flat unless ``keepdims``."""
        self._global_pool(node, "a global average pool")

    def _op_ReduceMax(self, node) -> None:
        """``x.amax((2, 3))``, and the dynamo exporter's adaptive max pool to 1: global max pooling."""
        self._global_pool(node, "a global max pool")

    def _global_pool(self, node, what: str) -> None:
        """A reduction over spatial axes only (channel-wise, positively homogeneous)."""
        axes, rank = self._axes(node), self.rank.get(node.input[0])
        if axes is None or 0 in axes or 1 in axes or (rank is not None and rank < 3):
            raise OnnxImportError(f"{node.op_type} node {node.name!r} over axes {axes}: only over spatial axes ({what})")
        if self._attr(node, "keepdims", 1) or (rank is not None and len(axes) < rank - 2):
            self.g.pass_through(node.output[0], node.input[0], _where(node))
        else:
            self.g.flatten(node.output[0], node.input[0], _where(node))

    def _op_Unsqueeze(self, node) -> None:
        """A spatial axis of size 1 added to maps (the dynamo exporter turns a 1d pool into a 2d
        one so): the channels pass through."""
        axes, rank = self._axes(node, added=True), self.rank.get(node.input[0])
        if axes is None or rank is None or rank < 3 or 0 in axes or 1 in axes:
            raise OnnxImportError(f"Unsqueeze node {node.name!r}: only a spatial axis added to N x C x ... maps")
        self.g.pass_through(node.output[0], node.input[0], _where(node))

    def _op_Squeeze(self, node) -> None:
        """Of spatial axes of size 1 (``x.squeeze(-1)`` after a global pool): the channels pass
        through, flat once no spatial axis is left (N x C x 1 x 1 -> N x C)."""
        dims = self._dims(node.input[0])
        axes = self._axes(node) if dims is not None else None
        if axes is None and dims is not None:
            axes = [a for a, d in enumerate(dims) if d == 1 and a >= 2]
        if axes is None or 0 in axes or 1 in axes or any(dims[a] != 1 for a in axes):
            raise OnnxImportError(f"Squeeze node {node.name!r}: only of spatial axes of size 1 (after a global pool)")
        if len(dims) - len(axes) == 2:
            self.g.flatten(node.output[0], node.input[0], _where(node))
        else:
            self.g.pass_through(node.output[0], node.input[0], _where(node))


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
