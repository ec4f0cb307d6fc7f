"""basispath spec from-onnx (issue 18, item 4): ONNX models built here with onnx.helper, read at
channel level; m and H checked against counts taken from the model's own tensors, the skeleton
basis of the imported spec certified."""

from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx package is not installed (pip install onnx)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from basispath_graph.general.model import parse_general  # noqa: E402
from basispath_graph.general.onnx_import import OnnxImportError, spec_from_onnx  # noqa: E402
from basispath_graph.general.solve import solve_general  # noqa: E402

from .cli_runner import cli  # noqa: E402


class Model:
    """A tiny ONNX graph builder: every weight an initializer, counted as it is made."""

    def __init__(self, in_channels: int):
        self.nodes, self.inits = [], []
        self.inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, in_channels, 8, 8])]
        self.n = 0
        self.weights = 0  # trainable entries of conv/gemm weights
        self.bias_channels = 0  # one per output channel of every conv/gemm with a bias or a folded BN

    def _name(self, op: str) -> str:
        self.n += 1
        return f"{op.lower()}{self.n}"

    def init(self, shape) -> str:
        name = f"w{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name))
        return name

    def conv(self, x: str, c_in: int, c_out: int, k: int, bias: bool = False, group: int = 1) -> str:
        out = self._name("Conv")
        inputs = [x, self.init([c_out, c_in // group, k, k])] + ([self.init([c_out])] if bias else [])
        self.nodes.append(helper.make_node("Conv", inputs, [out], name=out, kernel_shape=[k, k], pads=[k // 2] * 4, group=group))
        self.weights += c_out * (c_in // group) * k * k
        self.bias_channels += c_out if bias else 0
        return out

    def bn(self, x: str, c: int, folds: bool = True) -> str:
        out = self._name("BN")
        params = [self.init([c]) for _ in range(4)]
        self.nodes.append(helper.make_node("BatchNormalization", [x, *params], [out], name=out))
        return out

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        out = self._name(op_type)
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def gemm(self, x: str, f_in: int, f_out: int) -> str:
        out = self._name("Gemm")
        self.nodes.append(helper.make_node("Gemm", [x, self.init([f_out, f_in]), self.init([f_out])], [out], name=out, transB=1))
        self.weights += f_in * f_out
        self.bias_channels += f_out
        return out

    def save(self, path, output: str, c_out: int):
        graph = helper.make_graph(self.nodes, "tiny", self.inputs,
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, [1, c_out])], self.inits)
        onnx.save(helper.make_model(graph), str(path))
        return path


def tiny_resnet(path):
    """conv-BN-ReLU stem, max-pool, an identity block, a projection block, global pool, fc."""
    m = Model(3)
    x = m.op("Relu", m.bn(m.conv("x", 3, 4, 3), 4))
    m.bias_channels += 4  # the stem's BN folds into a bias
    x = m.op("MaxPool", x, kernel_shape=[2, 2])
    h = m.op("Relu", m.bn(m.conv(x, 4, 4, 3), 4))
    y = m.bn(m.conv(h, 4, 4, 3), 4)
    m.bias_channels += 8
    x = m.op("Relu", m.op("Add", y, x))  # identity shortcut
    h = m.op("Relu", m.bn(m.conv(x, 4, 6, 3), 6))
    y = m.bn(m.conv(h, 6, 6, 3), 6)
    p = m.bn(m.conv(x, 4, 6, 1), 6)  # projection shortcut
    m.bias_channels += 18
    x = m.op("Relu", m.op("Add", y, p))
    x = m.op("Flatten", m.op("GlobalAveragePool", x))
    out = m.gemm(x, 6, 5)
    # H by hand: stem 4 channels joined by the identity with the first block's output (one class
    # each), the first block's inner conv 4, the second block's inner conv 6 and output 6
    return m.save(path, out, 5), m, 4 + 4 + 6 + 6


def tiny_densenet(path):
    """DenseNet-style: each conv reads the concatenation of all earlier feature maps."""
    m = Model(3)
    f0 = m.op("Relu", m.conv("x", 3, 4, 3, bias=True))
    f1 = m.op("Relu", m.conv(f0, 4, 2, 3, bias=True))
    c1 = m.op("Concat", f0, f1, axis=1)
    f2 = m.op("Relu", m.conv(c1, 6, 2, 3, bias=True))
    c2 = m.op("Concat", f0, f1, f2, axis=1)
    pooled = m.op("Flatten", m.op("AveragePool", c2, kernel_shape=[4, 4]))  # 8 channels x 2 x 2
    out = m.gemm(pooled, 8 * 4, 3)
    return m.save(path, out, 3), m, 4 + 2 + 2


@pytest.mark.parametrize("build", [tiny_resnet, tiny_densenet], ids=["resnet", "densenet"])
def test_import_counts_the_models_tensors_and_the_skeleton_is_certified(tmp_path, build):
    path, model, hidden = build(tmp_path / "model.onnx")
    spec = spec_from_onnx(path)
    net = parse_general(spec, "model", 10**6)
    assert net.m == model.weights + model.bias_channels
    assert net.H == hidden
    result = solve_general(net)
    assert result.certified and result.basis_size == net.m - net.H


def test_resnet_import_has_identity_and_projection_shortcuts(tmp_path):
    path, _, _ = tiny_resnet(tmp_path / "r.onnx")
    spec = spec_from_onnx(path)
    kinds = [c["kind"] for c in spec["connections"]]
    assert kinds.count("identity") == 1
    bias_taps = sorted(c["taps"] for c in spec["connections"] if c["from"] == "bias")
    assert bias_taps == [1, 1, 1, 1, 1, 2]  # stem, 2 + 1 inner convs, first add, fc; the projection add has 2


def test_from_onnx_cli_writes_a_spec_that_solves(tmp_path):
    path, model, hidden = tiny_resnet(tmp_path / "r.onnx")
    spec = tmp_path / "r.json"
    r = cli("spec", "from-onnx", str(path), "-o", str(spec), check=0)
    m = model.weights + model.bias_channels
    assert r.stderr.startswith("tiny: general network, ") and r.stderr.endswith(f"m = {m}, H = {hidden} (written to {spec})\n")
    out = json.loads(cli("solve", str(spec), "--json", check=0).stdout)
    assert (out["m"], out["H"], out["certified"]) == (m, hidden, True)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda m, x: m.op("Gelu", x), "unsupported operation Gelu (node 'gelu2')"),
        (lambda m, x: m.op("Softmax", x), "unsupported operation Softmax (node 'softmax2')"),
    ],
)
def test_from_onnx_refuses_by_op_name(tmp_path, mutate, message):
    m = Model(3)
    x = m.conv("x", 3, 4, 3, bias=True)
    out = mutate(m, x)
    path = m.save(tmp_path / "bad.onnx", out, 4)
    with pytest.raises(OnnxImportError) as exc:
        spec_from_onnx(path)
    assert str(exc.value).startswith(message)
    r = cli("spec", "from-onnx", str(path), check=2)
    assert r.stderr.startswith(f"error: {message}") and r.stderr.count("\n") == 1
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    assert cli("spec", "from-onnx", str(tmp_path / "junk.onnx"), check=2).stderr.startswith(f"error: {tmp_path / 'junk.onnx'}: not an ONNX model")


# ---------------------------------------------------------------- review findings (issue 18)


def _save(path, nodes, inits, inputs, outputs):
    graph = helper.make_graph(nodes, path.stem, inputs, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def _w(name, *shape):
    return numpy_helper.from_array(np.ones(shape, dtype=np.float32), name)


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_a_graph_output_that_is_also_read_inside_stays_an_output(tmp_path):
    """feat = ReLU(conv(x)) is a model output and feeds the next conv: its channels cannot
    rescale (the output would change), so H is 0, not 4."""
    path = _save(tmp_path / "mid.onnx", [
        helper.make_node("Conv", ["x", "w1"], ["y"], kernel_shape=[1, 1], name="c1"),
        helper.make_node("Relu", ["y"], ["feat"], name="r1"),
        helper.make_node("Conv", ["feat", "w2"], ["out"], kernel_shape=[1, 1], name="c2"),
    ], [_w("w1", 4, 3, 1, 1), _w("w2", 2, 4, 1, 1)], [_vi("x", [1, 3, 8, 8])], [_vi("feat", [1, 4, 8, 8]), _vi("out", [1, 2, 8, 8])])
    net = parse_general(spec_from_onnx(path), "mid", 10**6)
    assert (net.m, net.H) == (12 + 8, 0)
    assert solve_general(net).certified


def test_a_bias_added_to_a_conv_output_read_twice_does_not_copy_the_conv(tmp_path):
    path = _save(tmp_path / "addb.onnx", [
        helper.make_node("Conv", ["x", "w1"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="c1"),
        helper.make_node("Add", ["y", "b"], ["ya"], name="addb"),
        helper.make_node("Relu", ["y"], ["r1"], name="r1"),
        helper.make_node("Relu", ["ya"], ["r2"], name="r2"),
        helper.make_node("Concat", ["r1", "r2"], ["cat"], axis=1, name="cat"),
        helper.make_node("Conv", ["cat", "w2"], ["out"], kernel_shape=[1, 1], name="c2"),
    ], [_w("w1", 4, 3, 3, 3), _w("b", 1, 4, 1, 1), _w("w2", 2, 8, 1, 1)], [_vi("x", [1, 3, 8, 8])], [_vi("out", [1, 2, 8, 8])])
    assert parse_general(spec_from_onnx(path), "addb", 10**6).m == 4 * 3 * 9 + 4 + 2 * 8


@pytest.mark.parametrize(
    "nodes, inits, message",
    [
        ([helper.make_node("MatMul", ["r", "wm"], ["out"], name="mm")], [_w("wm", 4, 5)],
         "MatMul node 'mm' on a tensor of rank 4: only N x features (Flatten first)"),
        ([helper.make_node("Flatten", ["r"], ["f"], axis=2, name="fl"), helper.make_node("Gemm", ["f", "wg"], ["out"], transB=1, name="g")],
         [_w("wg", 5, 16)], "Flatten node 'fl' with axis 2: only axis 1 (N x features)"),
        ([helper.make_node("Reshape", ["r", "shp"], ["rs"], name="rs"), helper.make_node("Conv", ["rs", "w2"], ["out"], kernel_shape=[1, 1], name="c2")],
         [numpy_helper.from_array(np.array([1, 4, 4, 16], dtype=np.int64), "shp"), _w("w2", 2, 4, 1, 1)],
         "Reshape node 'rs': only to N x features (a flatten) or the reshapes of a channel shuffle"
         " (N x C x ... to N x g x C/g x ... and back)"),
        ([helper.make_node("Flatten", ["r"], ["f"], name="fl"), helper.make_node("Gemm", ["f", "wg", "f"], ["out"], transB=1, name="g")],
         [_w("wg", 64, 64)], "Gemm node 'g': input 2 is computed, not a constant bias: not supported"),
        ([helper.make_node("Conv", ["r", "w1d"], ["out"], name="c2")], [_w("w1d", 4)], "Conv node 'c2': a weight of 1 dimensions"),
        # the mean over channels mixes them without a weight: not a pool
        ([helper.make_node("ReduceMean", ["r"], ["out"], axes=[1], keepdims=1, name="rm")], [],
         "ReduceMean node 'rm' over axes [1]: only over spatial axes (a global average pool)"),
        # a squeeze of a spatial axis of size 4 changes the shape, not only its rank
        ([helper.make_node("Squeeze", ["r", "ax"], ["out"], name="sq")], [numpy_helper.from_array(np.array([2], dtype=np.int64), "ax")],
         "Squeeze node 'sq': only of spatial axes of size 1 (after a global pool)"),
        ([helper.make_node("Constant", [], ["c"], name="k", sparse_value=helper.make_sparse_tensor(
            numpy_helper.from_array(np.ones(1, dtype=np.float32), "v"), numpy_helper.from_array(np.zeros(1, dtype=np.int64), "i"), [2])),
          helper.make_node("Add", ["r", "c"], ["out"], name="a")], [], "Constant node 'k': only a tensor or number value"),
    ],
    ids=["matmul-rank4", "flatten-axis2", "reshape", "gemm-computed-c", "conv-1d-weight", "reducemean-channels", "squeeze-size-4",
         "sparse-constant"],
)
def test_operations_that_are_not_channel_mixing_are_refused(tmp_path, nodes, inits, message):
    stem = [helper.make_node("Conv", ["x", "w1"], ["y"], kernel_shape=[1, 1], name="c1"), helper.make_node("Relu", ["y"], ["r"], name="r1")]
    path = _save(tmp_path / "m.onnx", stem + nodes, [_w("w1", 4, 3, 1, 1), *inits], [_vi("x", [1, 3, 4, 4])], [_vi("out", None)])
    r = cli("spec", "from-onnx", str(path), check=2)
    assert r.stderr == f"error: {message}\n"


def test_batchnorm_over_a_concatenation_scales_each_concatenated_layer(tmp_path):
    """DenseNet-BC: BN-ReLU-conv reading a concatenation. The BN cannot fold into the convs that
    wrote the channels (they have other readers): a diagonal connection plus a bias into a scaled
    copy of each concatenated layer, which the next conv reads."""
    m = Model(3)
    f0 = m.conv("x", 3, 4, 3)
    f1 = m.conv(m.op("Relu", m.bn(f0, 4)), 4, 2, 3)  # f0 is read by this BN and by both concats: no fold
    c1 = m.op("Concat", f0, f1, axis=1)
    out = m.conv(m.op("Relu", m.bn(c1, 6)), 6, 2, 3)
    spec = spec_from_onnx(m.save(tmp_path / "bc.onnx", out, 2))
    net = parse_general(spec, "bc", 10**6)
    diagonal = [(c["from"], c["to"]) for c in spec["connections"] if c["kind"] == "diagonal"]
    assert diagonal == [("conv1", "bn2"), ("conv1", "bn6.conv1"), ("conv4", "bn6.conv4")]
    # convs 3*4*9 + 4*2*9 + 6*2*9; BN scale + shift: 4 + 4 (bn2), 6 + 6 (bn6 over 4 + 2 channels)
    assert net.m == m.weights + 8 + 12 == 308
    assert net.H == 4 + 4 + 2 + 6  # conv1, bn2, conv4, bn6's two scaled copies; the last conv is the output
    assert solve_general(net).certified


def test_an_identity_node_on_an_initializer_is_that_constant(tmp_path):
    """torch.onnx.export shares equal initializers through Identity nodes (w2 = Identity(w1))."""
    path = _save(tmp_path / "shared.onnx", [
        helper.make_node("Identity", ["w1"], ["w2"], name="share"),
        helper.make_node("Conv", ["x", "w1"], ["y"], kernel_shape=[1, 1], name="c1"),
        helper.make_node("Relu", ["y"], ["r"], name="r1"),
        helper.make_node("Conv", ["r", "w2"], ["out"], kernel_shape=[1, 1], name="c2"),
    ], [_w("w1", 3, 3, 1, 1)], [_vi("x", [1, 3, 4, 4])], [_vi("out", [1, 3, 4, 4])])
    net = parse_general(spec_from_onnx(path), "shared", 10**6)
    assert (net.m, net.H) == (9 + 9, 3)


def _pooled_classifier(tmp_path, tail, inits=(), opset=13):
    """conv 3 -> 4 channels (1 x 1, a bias), ReLU, then ``tail`` from 'r' to the N x 4 tensor
    'flat', and a Gemm 4 -> 2 (with bias): m = 12 + 4 + 8 + 2, H = 4, however 'flat' is spelled."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["y"], kernel_shape=[1, 1], name="c1"),
             helper.make_node("Relu", ["y"], ["r"], name="r1"), *tail,
             helper.make_node("Gemm", ["flat", "wg", "bg"], ["out"], transB=1, name="fc")]
    graph = helper.make_graph(nodes, "pooled", [_vi("x", [1, 3, 4, 4])], [_vi("out", [1, 2])],
                              [_w("w1", 4, 3, 1, 1), _w("b1", 4), _w("wg", 2, 4), _w("bg", 2), *inits])
    path = tmp_path / "pooled.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return parse_general(spec_from_onnx(path), "pooled", 10**6)


def _i64(name, *values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _const(out, *values):
    return helper.make_node("Constant", [], [out], name=f"const_{out}", value=_i64(out, *values))


@pytest.mark.parametrize(
    "tail, inits, opset",
    [
        # x.mean((2, 3)): ReduceMean with axes as an attribute (opset 13) and as a Constant input (18)
        ([helper.make_node("ReduceMean", ["r"], ["flat"], axes=[2, 3], keepdims=0, name="rm")], [], 13),
        ([_const("axes", -2, -1), helper.make_node("ReduceMean", ["r", "axes"], ["flat"], keepdims=0, name="rm")], [], 18),
        # keepdims, then Squeeze of both 1 x 1 axes, or one at a time (x.squeeze(-1).squeeze(-1))
        ([helper.make_node("ReduceMean", ["r"], ["p"], axes=[2, 3], keepdims=1, name="rm"),
          helper.make_node("Squeeze", ["p", "ax"], ["flat"], name="sq")], [_i64("ax", 2, 3)], 13),
        ([helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"), _const("a1", -1), _const("a2", -1),
          helper.make_node("Squeeze", ["p", "a1"], ["s1"], name="sq1"), helper.make_node("Squeeze", ["s1", "a2"], ["flat"], name="sq2")], [], 13),
        # the legacy exporter's x.view(x.size(0), -1): a Constant shape, or shape arithmetic
        ([helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"), _const("shape", 1, -1),
          helper.make_node("Reshape", ["p", "shape"], ["flat"], name="rs")], [], 13),
        ([helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"), helper.make_node("Shape", ["p"], ["s"], name="shape"),
          _const("zero", 0), helper.make_node("Gather", ["s", "zero"], ["n"], axis=0, name="gather"), _const("minus1", -1),
          _const("ax0", 0), helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="u1"),
          helper.make_node("Concat", ["n1", "minus1"], ["shape2"], axis=0, name="cat"),
          helper.make_node("Reshape", ["p", "shape2"], ["flat"], name="rs")], [], 13),
    ],
    ids=["reducemean-attribute", "reducemean-constant-axes", "keepdims-squeeze", "squeeze-twice", "constant-reshape", "shape-arithmetic"],
)
def test_every_spelling_of_a_global_pool_and_flatten_reads_the_same_network(tmp_path, tail, inits, opset):
    net = _pooled_classifier(tmp_path, tail, inits, opset)
    assert (net.m, net.H) == (12 + 4 + 8 + 2, 4)
    assert solve_general(net).certified


def test_a_grouped_conv_is_a_grouped_connection(tmp_path):
    """ResNeXt's grouped conv (group=2 of 4 channels): block g of the outputs reads block g of the
    inputs only, 3 x 3 taps: 4 x 2 x 9 weights, not 4 x 4 x 9; the skeleton is certified."""
    m = Model(3)
    x = m.op("Relu", m.conv("x", 3, 4, 3, bias=True))
    out = m.conv(x, 4, 4, 3, group=2)
    spec = spec_from_onnx(m.save(tmp_path / "g.onnx", out, 4))
    assert {"from": "conv1", "to": "conv3", "kind": "grouped", "taps": 9, "groups": 2} in spec["connections"]
    net = parse_general(spec, "g", 10**6)
    assert (net.m, net.H) == (m.weights + 4, 4) == (3 * 4 * 9 + 4 * 2 * 9 + 4, 4)
    assert solve_general(net).certified


def test_mul_by_a_per_channel_constant_is_a_layer_scale(tmp_path):
    """gamma * conv(x) folds into the conv (no weight added); gamma * relu(.) is a diagonal
    connection into a scaled copy (4 weights): as from-torch reads a layer-scale parameter."""
    m = Model(3)
    h = m.op("Relu", m.conv("x", 3, 4, 3, bias=True))
    folded = m.op("Mul", m.conv(h, 4, 4, 3), m.init([4, 1, 1]))
    scaled = m.op("Mul", m.init([1, 4, 1, 1]), m.op("Relu", folded))
    out = m.op("Flatten", m.op("GlobalAveragePool", scaled))
    net = parse_general(spec_from_onnx(m.save(tmp_path / "ls.onnx", out, 4)), "ls", 10**6)
    assert (net.m, net.H) == (m.weights + 4 + 4, 8)
    assert solve_general(net).certified
    bad = Model(3)
    h = bad.op("Relu", bad.conv("x", 3, 4, 3))
    prod = bad.op("Mul", h, bad.init([4]))  # along the last axis of the maps: not per channel
    with pytest.raises(OnnxImportError, match=r"^Mul node 'mul3': a constant of shape \(4,\) is not one value per channel"):
        spec_from_onnx(bad.save(tmp_path / "bad.onnx", prod, 4))
    two = Model(3)
    h = two.op("Relu", two.conv("x", 3, 4, 3))
    with pytest.raises(OnnxImportError, match="^Mul node 'mul3': a product of two computed tensors is not positively homogeneous"):
        spec_from_onnx(two.save(tmp_path / "two.onnx", two.op("Mul", h, h), 4))
