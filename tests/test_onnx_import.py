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
        (lambda m, x: m.conv(x, 4, 4, 3, group=2), "grouped conv (node 'conv2', group=2) is not supported: only group=1"),
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
         "Reshape node 'rs': only to N x features with a constant shape (a flatten)"),
        ([helper.make_node("Flatten", ["r"], ["f"], name="fl"), helper.make_node("Gemm", ["f", "wg", "f"], ["out"], transB=1, name="g")],
         [_w("wg", 64, 64)], "Gemm node 'g': input 2 is computed, not a constant bias: not supported"),
        ([helper.make_node("Conv", ["r", "w1d"], ["out"], name="c2")], [_w("w1d", 4)], "Conv node 'c2': a weight of 1 dimensions"),
    ],
    ids=["matmul-rank4", "flatten-axis2", "reshape", "gemm-computed-c", "conv-1d-weight"],
)
def test_operations_that_are_not_channel_mixing_are_refused(tmp_path, nodes, inits, message):
    stem = [helper.make_node("Conv", ["x", "w1"], ["y"], kernel_shape=[1, 1], name="c1"), helper.make_node("Relu", ["y"], ["r"], name="r1")]
    path = _save(tmp_path / "m.onnx", stem + nodes, [_w("w1", 4, 3, 1, 1), *inits], [_vi("x", [1, 3, 4, 4])], [_vi("out", None)])
    r = cli("spec", "from-onnx", str(path), check=2)
    assert r.stderr == f"error: {message}\n"
