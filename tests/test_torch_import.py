"""Reading PyTorch models (``basispath_graph.torch_import``, ``basispath spec from-torch``).

The models are the factories in tests/torch_models.py. Every test that needs PyTorch skips,
with the reason shown, when it is not installed; the test of the "PyTorch missing" message
needs no PyTorch: it hides any installed one behind a ``torch`` package that fails to import.
"""

from __future__ import annotations

import json
import re
import os
from pathlib import Path

import pytest

from basispath_graph.solver import solve
from basispath_graph.spec import load_spec

from .cli_runner import run_in_process, run_many, show

HERE = Path(__file__).resolve().parent
MODELS = HERE / "torch_models.py"
TORCH_MISSING = "error: 'spec from-torch' needs PyTorch in this environment: pip install torch (a CPU build is enough)\n"
SKIP_REASON = "PyTorch is not installed (pip install torch, CPU build, to run the from-torch tests)"


@pytest.fixture(scope="module")
def models():
    pytest.importorskip("torch", reason=SKIP_REASON)
    from tests import torch_models

    return torch_models


@pytest.fixture(scope="module")
def ti():
    pytest.importorskip("torch", reason=SKIP_REASON)
    from basispath_graph import torch_import

    return torch_import


# ---------------------------------------------------------------------------------------
# Without PyTorch


def test_cli_says_how_to_install_torch_when_it_is_missing(tmp_path):
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text('raise ImportError("PyTorch is hidden by the test")\n')
    path = os.pathsep.join(p for p in (str(fake), os.environ.get("PYTHONPATH", "")) if p)
    (res,) = run_many([(["spec", "from-torch", f"{MODELS}:mlp", "-o", "out.json"], tmp_path, {"PYTHONPATH": path})])
    assert res.returncode == 2, show(res)
    assert res.stderr == TORCH_MISSING, show(res)
    assert res.stdout == "", show(res)
    assert not (tmp_path / "out.json").exists()


# ---------------------------------------------------------------------------------------
# Conversion (in process)


@pytest.mark.parametrize(
    "factory, spec, modules",
    [
        ("mlp", {"name": "mlp", "widths": [3, 4, 5, 2], "skips": []}, ["input", "fc1", "fc2", "out"]),
        ("sequential_mlp", {"name": "sequential_mlp", "widths": [2, 3, 3, 1], "skips": []}, ["input", "0", "2", "5"]),
        (
            "densenet",
            {"name": "densenet", "widths": [2, 3, 2, 2], "skips": [[0, 2], [0, 3], [1, 3]]},
            ["input", "fc1", "fc2", "out"],
        ),
    ],
)
def test_supported_models(ti, factory, spec, modules):
    model = ti.read_torch_model(f"{MODELS}:{factory}")
    assert model.spec == spec
    assert model.layer_modules == modules
    net = ti.network_from_torch(f"{MODELS}:{factory}")
    assert net.to_dict() == spec
    for engine in ("deah", "skeleton"):
        assert solve(net, engine).certified, (factory, engine)


def test_network_from_module_and_name(ti, models):
    net = ti.network_from_module(models.densenet(), name="dense")
    assert net.to_dict() == {"name": "dense", "widths": [2, 3, 2, 2], "skips": [[0, 2], [0, 3], [1, 3]]}
    # m = 2*3 + 3*2 + 2*2 (chain) + 2*2 (0, 2) + 2*2 (0, 3) + 3*2 (1, 3); H = 3 + 2
    assert (net.m, net.H) == (6 + 6 + 4 + 4 + 4 + 6, 5)
    assert ti.read_torch_model("tests.torch_models:mlp", name="mine").spec["name"] == "mine"


@pytest.mark.parametrize(
    "factory, error, message",
    [
        ("broken_chain", "TorchImportError", "{src}: layers must form a chain, but layer 3 ('fc3') does not read"
         " layer 2 ('fc2'); it reads the input (layer 0), layer 1 ('fc1')"),
        ("bad_width", "TorchImportError", "{src}: nn.Linear 'fc2' has in_features=4, but its input has 5 features"
         " (the input (layer 0), layer 1 ('fc1'): 2 + 3)"),
        ("failing", "TorchImportError", "{src}() raised RuntimeError: no weights here"),
        ("not_a_module", "TorchImportError", "{src}() returned int, not a torch.nn.Module"),
        ("no_such_factory", "TorchImportError", f"{MODELS} has no attribute 'no_such_factory'"),
    ],
)
def test_refused_models(ti, factory, error, message):
    src = f"{MODELS}:{factory}"
    with pytest.raises(ti.TorchImportError) as info:
        ti.read_torch_model(src)
    assert type(info.value).__name__ == error
    assert str(info.value) == message.format(src=src)
    if error == "UnsupportedOperation":
        assert info.value.op in str(info.value)


def test_bad_targets(ti, tmp_path):
    for target, message in [
        ("torch_models", "expected MODULE:FACTORY or path/to/file.py:FACTORY, got 'torch_models'"),
        ("no_such_module_xyz:f", "cannot import module no_such_module_xyz: ModuleNotFoundError: No module named 'no_such_module_xyz'"),
        (f"{tmp_path}/missing.py:f", f"cannot import {tmp_path}/missing.py: file not found"),
    ]:
        with pytest.raises(ti.TorchImportError) as info:
            ti.read_torch_model(target)
        assert str(info.value) == message


# ---------------------------------------------------------------------------------------
# Command line


def test_cli_from_torch_subprocess(models, tmp_path):
    """The real console entry point end to end: write a spec, then solve it."""
    (dense,) = run_many([(["spec", "from-torch", f"{MODELS}:densenet", "-o", "dense.json", "--name", "dense"], tmp_path, None)])
    assert dense.returncode == 0, show(dense)
    assert dense.stdout == ""
    assert dense.stderr == (
        "dense: 4 layers (input, fc1, fc2, out), 3 skips, m = 30, H = 5 (written to dense.json)\n"
    ), show(dense)
    spec = {"name": "dense", "widths": [2, 3, 2, 2], "skips": [[0, 2], [0, 3], [1, 3]]}
    assert json.loads((tmp_path / "dense.json").read_text()) == spec
    assert load_spec(tmp_path / "dense.json").to_dict() == spec
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dense.json"]  # no temporary file left

    (solved,) = run_many([(["solve", "dense.json"], tmp_path, None)])
    assert solved.returncode == 0, show(solved)
    assert "certified" in solved.stdout


def test_cli_from_torch_stdout(models, tmp_path, monkeypatch, capsys):
    res = run_in_process(["spec", "from-torch", f"{MODELS}:mlp"], tmp_path, monkeypatch, capsys)
    assert res.returncode == 0, show(res)
    assert json.loads(res.stdout) == {"name": "mlp", "widths": [3, 4, 5, 2], "skips": []}
    assert res.stderr == "mlp: 4 layers (input, fc1, fc2, out), 0 skips, m = 42, H = 9 (written to stdout)\n"


def test_cli_from_torch_refusals(models, tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(HERE.parent))  # for the MODULE:FACTORY form
    cases = [
        (
            [f"{MODELS}:gelu_convnet", "-o", "gelu.json"],
            f"unsupported operation torch.nn.GELU (module '1') in {MODELS}:gelu_convnet; not positively homogeneous (basis paths do not describe this network)",
        ),
        ([f"{MODELS}:mini_vgg", "--input-shape", "1x3"], f"cannot run {MODELS}:mini_vgg on an input of shape 1x3:"
         " RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [1, 3]"),
        ([f"{MODELS}:mini_vgg", "--input-shape", "1x3xa"], "--input-shape '1x3xa': expected N x C x ... as positive integers, e.g. 1x3x32x32"),
        ([f"{MODELS}:failing"], f"{MODELS}:failing() raised RuntimeError: no weights here"),
        (
            [f"{MODELS}:densenet", "--max-weights", "29"],
            "densenet: network has 30 weights, more than the limit of 29 (raise it with --max-weights or BASISPATH_MAX_WEIGHTS)",
        ),
        ([f"{MODELS}:mlp", "-o", "no/such/dir.json"], "cannot write spec file no/such/dir.json: not a file in an existing folder"),
    ]
    for args, message in cases:
        res = run_in_process(["spec", "from-torch", *args], tmp_path, monkeypatch, capsys)
        assert res.returncode == 2, show(res)
        assert res.stderr == f"error: {message}\n", show(res)
        assert res.stdout == "", show(res)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------
# Channel level: conv, BatchNorm, pooling, flatten, residual add, biases -> a general spec


def tensor_count(model, folded: dict[str, str]) -> int:
    """m from the model's own tensors: conv/linear weights and biases; a BatchNorm that folds
    (``folded``: BN module -> the conv/linear it folds into) is one bias per channel, replacing
    that conv's own bias; any other BatchNorm keeps its weight and bias (scale and shift)."""
    import torch.nn as nn

    m = 0
    for name, mod in model.named_modules():
        if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)):
            m += mod.weight.numel()
            if mod.bias is not None and name not in folded.values():
                m += mod.bias.numel()
        elif isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            m += mod.num_features if name in folded else mod.weight.numel() + mod.bias.numel()
    return m


RESNET_FOLDS = {"bn1": "conv1", "layer1.bn1": "layer1.conv1", "layer1.bn2": "layer1.conv2", "layer2.bn1": "layer2.conv1",
                "layer2.bn2": "layer2.conv2", "layer2.downsample.1": "layer2.downsample.0"}
CHANNEL_MODELS = [
    # factory, input shape (for --input-shape and torch.onnx.export), folded BatchNorms ("conv_bn":
    # those of every conv-BN piece, ``torch_models.conv_bn_folds``), H by hand
    # mini ResNet: stem 4 (one class with the first block's output through the identity), the
    # blocks' inner convs 4 and 6, the projection block's output 6
    ("mini_resnet", (1, 3, 32, 32), RESNET_FOLDS, 4 + 4 + 6 + 6),
    # DenseNet: stem 4, norm1 4 (the stem is read twice: no fold), conv1 2, norm2 over the
    # concatenation 4 + 2, conv2 2; every map feeds the classifier
    ("mini_densenet", (1, 3, 8, 8), {}, 4 + 4 + 2 + 6 + 2),
    ("mini_vgg", (1, 3, 16, 16), {}, 4 + 8 + 10),
    ("conv1d_dilated", (1, 2, 10), {"1": "0"}, 3),
    # shared BN: conv, its scaled copy and their sum are one class (identity edges)
    ("shared_bn", (1, 3, 8, 8), {}, 4),
    # x.mean((2, 3)) and torch.mean(keepdim=True) as global pools: conv 8 and head 6 channels
    ("mean_pool_cnn", (1, 3, 8, 8), {}, 8 + 6),
    # a depthwise conv (groups = channels) is a diagonal connection with 9 taps: stem 4 (one class
    # with the block's output through the identity), expand 8, depthwise 8
    ("depthwise_block", (1, 3, 8, 8), {"stem.1": "stem.0", "expand.1": "expand.0", "depthwise.1": "depthwise.0",
                                       "project.1": "project.0"}, 4 + 8 + 8),
    # a grouped conv (4 groups) is a grouped connection: stem 8 (one class with the block's output
    # through the identity), reduce 8, grouped 8
    ("resnext_block", (1, 3, 8, 8), {f"{n}.1": f"{n}.0" for n in ("stem", "reduce", "grouped", "expand")}, 8 + 8 + 8),
    ("grouped_conv", (1, 4, 8, 8), {}, 0),
    # option-A shortcuts (zero-padded channels): stem 4 (one class with layer1's output), the
    # blocks' inner convs 4, 8, 16, and of each padded block output the channels the shortcut
    # does not reach: 8 - 4 and 16 - 8
    ("option_a_resnet", (1, 3, 16, 16), {"bn1": "conv1", **{f"layer{k}.bn{j}": f"layer{k}.conv{j}" for k in (1, 2, 3) for j in (1, 2)}},
     4 + 4 + 8 + 4 + 16 + 8),
    # LeNet-5: every conv channel and hidden feature (6 + 16 + 120 + 84)
    ("lenet5", (1, 1, 32, 32), {}, 6 + 16 + 120 + 84),
    # pre-activation WRN (WRN-16-4's layout): a block's first BN reads its input, which the
    # shortcut reads too, so it cannot fold (a diagonal layer: 4, 4, 8); its second folds into
    # conv1. Classes: the stem joined by the identity with block 1's output (4), the diagonal
    # layers 4 + 4 + 8, the conv1 outputs 4 + 8 + 16, the projected block outputs 8 + 16, the
    # final BN's diagonal layer 16
    ("mini_wrn", (1, 3, 16, 16), {f"blocks.{k}.bn2": f"blocks.{k}.conv1" for k in range(3)},
     4 + (4 + 4 + 8) + (4 + 8 + 16) + (8 + 16) + 16),
    # ShuffleNet-V2 (channel shuffles, halves split along channels, depthwise convs over
    # shuffled concatenations; every BatchNorm folds): every conv's output channels are a class,
    # stem 8, the stride-2 units 8 + 8 + 8 + 8 + 8 and 16 x 5, the stride-1 units 8 x 3 twice and
    # 16 x 3, conv5 32; chunk / view / transpose, and x[:, :c] / reshape / permute / flatten
    *[(factory, (1, 3, 32, 32), "conv_bn", 8 + 40 + 48 + 80 + 48 + 32) for factory in ("mini_shufflenet", "mini_shufflenet_sliced")],
]


@pytest.mark.parametrize("factory, shape, folds, hidden", CHANNEL_MODELS, ids=[c[0] for c in CHANNEL_MODELS])
def test_channel_level_models_count_the_models_tensors_and_certify(ti, models, factory, shape, folds, hidden):
    from basispath_graph.general.model import GeneralNetwork
    from basispath_graph.general.solve import solve_general

    net = ti.network_from_torch(f"{MODELS}:{factory}")
    assert isinstance(net, GeneralNetwork) and not net.is_layered
    model = getattr(models, factory)()
    folds = models.conv_bn_folds(model) if folds == "conv_bn" else folds  # every conv-BN piece's BN folds
    assert net.m == tensor_count(model, folds)
    assert net.H == hidden
    result = solve_general(net)
    assert result.certified and result.basis_size == net.m - net.H
    # a sample input shape gives the input's channels and checks ranks: the same spec
    with_shape = ti.read_torch_model(f"{MODELS}:{factory}", input_shape=shape)
    assert with_shape.general and with_shape.spec == ti.read_torch_model(f"{MODELS}:{factory}").spec


def test_resnet_spec_has_kernel_taps_identity_and_projection_shortcuts(ti):
    spec = ti.read_torch_model(f"{MODELS}:mini_resnet").spec
    conns = {(c["from"], c["to"]): c for c in spec["connections"]}
    assert conns[("x", "bn1")]["taps"] == 49  # 7 x 7 stem, its BatchNorm folded (named after the BN)
    assert [k for k, c in conns.items() if c["kind"] == "identity"] == [("bn1", "add")]  # the identity block
    assert conns[("add", "add_1")] == {"from": "add", "to": "add_1", "kind": "dense", "taps": 1}  # the 1x1 projection
    assert conns[("bias", "add_1")]["taps"] == 2  # conv2's and the projection's folded BatchNorms
    assert spec["layers"][0] == {"name": "bias", "size": 1}


def test_vgg_flatten_into_linear_has_spatial_taps(ti):
    spec = ti.read_torch_model(f"{MODELS}:mini_vgg", input_shape=(1, 3, 16, 16)).spec
    assert {"from": "3", "to": "7", "kind": "dense", "taps": 16} in spec["connections"]  # 128 = 8 channels x 4 x 4


def test_batchnorm_with_another_reader_is_a_diagonal_connection(ti):
    spec = ti.read_torch_model(f"{MODELS}:shared_bn").spec
    assert [c for c in spec["connections"] if c["kind"] == "diagonal"] == [{"from": "conv", "to": "bn", "kind": "diagonal", "taps": 1}]
    dense = ti.read_torch_model(f"{MODELS}:mini_densenet").spec
    assert [(c["from"], c["to"]) for c in dense["connections"] if c["kind"] == "diagonal"] == [
        ("stem", "norm1"), ("stem", "norm2.stem"), ("conv1", "norm2.conv1")]


def test_a_parameter_added_per_channel_is_a_bias_and_a_second_output_stays_an_output(ti):
    spec = ti.read_torch_model(f"{MODELS}:param_bias").spec
    net = ti.network_from_torch(f"{MODELS}:param_bias")
    assert {"from": "bias", "to": "add", "kind": "dense", "taps": 2} in spec["connections"]  # conv bias + shift
    assert (net.m, net.H) == (3 * 4 * 9 + 4 + 4 + 4 * 2 + 2, 0)  # the maps are an output: no hidden neuron
    assert [layer["name"] for layer in spec["layers"]] == ["bias", "x", "add", "fc", "relu.output"]


def test_a_layered_refusal_says_when_the_general_form_reads_the_model(ti):
    src = f"{MODELS}:two_branches"
    with pytest.raises(ti.TorchImportError) as info:
        ti.read_torch_model(src)
    assert str(info.value) == (f"{src}: layers must form a chain, but layer 2 ('b') does not read layer 1 ('a'); it reads"
                               " the input (layer 0) (it reads as a general spec with --general)")
    net = ti.network_from_torch(src, general=True)
    assert (net.m, net.H) == (2 * (3 * 2 + 2) + 4 + 1, 4)


def test_general_flag_reads_a_plain_mlp_at_channel_level_with_its_biases(ti):
    layered = ti.network_from_torch(f"{MODELS}:mlp")
    general = ti.network_from_torch(f"{MODELS}:mlp", general=True)
    # fc1 3*4 + 4 biases, fc2 4*5 (no bias), out 5*2 + 2 biases
    assert (layered.m, general.m) == (42, 42 + 4 + 2)
    assert layered.H == general.H == 9


def test_torch_and_onnx_export_of_the_same_model_agree(ti, models, tmp_path):
    """torch.onnx.export of each model, read by from-onnx: the same m and H as from-torch (the
    exporter folds BatchNorm into the conv before it itself where it can). Its Constant nodes,
    ReduceMean and, with a dynamic batch axis, the shape arithmetic of x.view(x.size(0), -1)
    (Shape, Gather, Unsqueeze, Concat into a Reshape) are read."""
    import contextlib
    import io
    import warnings

    import torch

    onnx = pytest.importorskip("onnx", reason="the onnx package is not installed")
    from basispath_graph.general.model import parse_general
    from basispath_graph.general.onnx_import import spec_from_onnx

    exports = [(factory, shape, {}) for factory, shape, _, _ in CHANNEL_MODELS]
    exports.append(("mini_densenet", (2, 3, 8, 8), {"input_names": ["x"], "dynamic_axes": {"x": {0: "N"}}, "do_constant_folding": False}))
    # opset 11: Unsqueeze's axes an attribute (constants are folded at the model's own opset)
    exports.append(("mini_densenet", (2, 3, 8, 8), {"input_names": ["x"], "dynamic_axes": {"x": {0: "N"}}, "do_constant_folding": False,
                                                    "opset_version": 11}))
    for factory, shape, options in exports:
        model = getattr(models, factory)().eval()
        path = tmp_path / f"{factory}.onnx"
        try:
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                torch.onnx.export(model, (torch.zeros(shape),), str(path), dynamo=False, **options)
        except Exception as exc:  # noqa: BLE001 - an exporter this torch cannot run
            pytest.skip(f"torch.onnx.export does not work here: {type(exc).__name__}: {exc}")
        ops = {n.op_type for n in onnx.load(str(path)).graph.node}
        if factory == "mean_pool_cnn":
            assert "ReduceMean" in ops
        if options:
            assert {"Shape", "Gather", "Unsqueeze", "Concat", "Reshape"} <= ops
        from_onnx = parse_general(spec_from_onnx(path), factory, 10**7)
        from_torch = ti.network_from_module(model, factory, factory, general=True)
        assert (from_torch.m, from_torch.H) == (from_onnx.m, from_onnx.H), factory


def test_the_dynamo_onnx_exporter_agrees_on_models_with_nonzero_biases(ti, models, tmp_path):
    """torch.onnx.export(dynamo=True), the default exporter (needs onnxscript), read by
    from-onnx: the same m and H as from-torch on every channel-level model, once every bias and
    BatchNorm statistic is non-zero. On a fresh model it folds BatchNorm and drops the biases that
    are exactly 0 (a fresh BatchNorm's folded shift, torchvision's zero-initialised conv biases),
    so m is smaller by those channels: ResNet-18 by its 4,800 BatchNorm channels."""
    import contextlib
    import io
    import warnings

    import torch

    pytest.importorskip("onnx", reason="the onnx package is not installed")
    pytest.importorskip("onnxscript", reason="the dynamo exporter needs onnxscript")
    from basispath_graph.general.model import parse_general
    from basispath_graph.general.onnx_import import spec_from_onnx

    gen = torch.Generator().manual_seed(0)
    for factory, shape, _, _ in CHANNEL_MODELS:
        model = getattr(models, factory)().eval()
        with torch.no_grad():  # nothing exactly 0: the exporter drops zero biases
            for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
                if tensor.is_floating_point():
                    tensor.copy_(torch.rand(tensor.shape, generator=gen) + 0.5)
        path = tmp_path / f"{factory}-dynamo.onnx"
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (torch.zeros(shape),), str(path), dynamo=True)
        from_onnx = parse_general(spec_from_onnx(path), factory, 10**7)
        from_torch = ti.network_from_module(model, factory, factory, general=True)
        assert (from_torch.m, from_torch.H) == (from_onnx.m, from_onnx.H), factory


@pytest.mark.parametrize(
    "factory, message",
    [
        ("gelu_convnet", "unsupported operation torch.nn.GELU (module '1') in {src}; not positively homogeneous (basis paths do not describe this network)"),
        ("layernorm_mlp", "unsupported operation torch.nn.LayerNorm (module '1') in {src}; not positively homogeneous (basis paths do not describe this network)"),
        # every blocker is named, grouped by why
        ("attention", "3 unsupported operations in {src}; not positively homogeneous (basis paths do not describe this network):"
         " operator.matmul; torch.softmax | not supported yet: Tensor.transpose"),
        ("plus_constant", "unsupported operation operator.add in {src} (adds a constant: only a + b of two computed tensors"
         " or a per-channel parameter)"),
        ("bn_without_affine", "unsupported operation torch.nn.BatchNorm2d (module '1') in {src}: BatchNorm without affine=True"
         " and running statistics is not a trainable per-channel scale and shift"),
        ("linear_on_maps", "torch.nn.Linear (module '2') in {src} on a tensor of rank 4: only N x features (flatten first)"),
        ("param_bias_last_axis", "unsupported operation operator.add in {src} (a parameter of shape (4,) adds along the last"
         " axis of N x C x ... maps, not per channel: shape (C, 1, ...) is a bias)"),
        ("unused_branch", "torch.nn.Conv2d (module 'side') in {src}: its result is not used (not a part of the network's function)"),
    ],
)
def test_channel_level_refusals_name_the_operation(ti, factory, message):
    src = f"{MODELS}:{factory}"
    with pytest.raises(ti.TorchImportError) as info:
        ti.read_torch_model(src)
    assert str(info.value) == message.format(src=src)


def test_every_blocker_is_named_grouped_by_why(ti):
    src = f"{MODELS}:blocked"
    with pytest.raises(ti.TorchImportError) as info:
        ti.read_torch_model(src)
    assert str(info.value) == (
        f"4 unsupported operations in {src}; not positively homogeneous (basis paths do not describe this network):"
        " torch.nn.SiLU (module 'act'); torch.sigmoid; operator.mul; torch.nn.LayerNorm (module 'norm')")


def test_a_depthwise_conv_is_a_diagonal_connection_with_its_taps(ti):
    spec = ti.read_torch_model(f"{MODELS}:depthwise_block").spec
    diagonal = [c for c in spec["connections"] if c["kind"] == "diagonal"]
    assert diagonal == [{"from": "expand.1", "to": "depthwise.1", "kind": "diagonal", "taps": 9}]  # its BatchNorm folded


def test_layer_scale_stochastic_depth_and_a_pool_sized_by_the_input(ti):
    """gamma * conv(x) folds into the conv (as a BatchNorm's scale does); StochasticDepth is the
    identity in eval; gamma2 * relu(x) is a diagonal connection (4 weights); F.avg_pool2d(x,
    x.size()[3]) is a global pool. m by hand: stem 3*4*9 + 4, conv 4*4*9, gamma2 4, fc 4*2 + 2;
    H: the stem's 4 channels (one class each with the block's sum) and the scaled copy's 4."""
    net = ti.network_from_torch(f"{MODELS}:layer_scale_block")
    assert (net.m, net.H) == (3 * 4 * 9 + 4 + 4 * 4 * 9 + 4 + 4 * 2 + 2, 4 + 4)
    assert [c.kind for c in net.connections].count("diagonal") == 1


def test_a_product_of_two_computed_tensors_is_refused_as_not_homogeneous(ti):
    src = f"{MODELS}:blocked"  # x * sigmoid(gate(x)): squeeze-excitation
    with pytest.raises(ti.TorchImportError, match=r"operator\.mul"):
        ti.read_torch_model(src)


def test_shape_checks_are_ignored(ti, models):
    net = ti.network_from_torch(f"{MODELS}:checked")
    assert (net.m, net.H) == (3 * 4 * 9 + 4 + 4 * 2 + 2, 4)


def test_a_model_in_training_mode_with_auxiliary_outputs_is_told_to_call_eval(ti):
    src = f"{MODELS}:aux_outputs"
    with pytest.raises(ti.TorchImportError) as info:
        ti.read_torch_model(src)
    assert re.fullmatch(rf"unsupported operation \S+\.Outputs in {re.escape(src)}; .*", str(info.value))  # the namedtuple
    assert str(info.value).endswith("; the model is in training mode, where it returns auxiliary outputs: call .eval() first")
    net = ti.network_from_torch(f"{MODELS}:aux_outputs_eval")
    assert (net.m, net.H) == (3 * 4 * 9 + 4 + 4 * 2 + 2, 4)  # the auxiliary head is not in eval's function


def test_linear_on_maps_is_refused_with_the_rank_from_an_input_shape(ti):
    src = f"{MODELS}:linear_on_maps"
    with pytest.raises(ti.TorchImportError, match=r"on a tensor of rank 4: only N x features \(flatten first\)$"):
        ti.read_torch_model(src, input_shape=(1, 3, 6, 6))


def test_cli_from_torch_writes_a_general_spec_that_solves(models, tmp_path):
    jobs = [(["spec", "from-torch", f"{MODELS}:mini_resnet", "-o", "r.json", "--input-shape", "1x3x32x32"], tmp_path, None),
            (["spec", "from-torch", f"{MODELS}:mlp", "--general", "-o", "mlp.json"], tmp_path, None)]
    resnet, mlp = run_many(jobs)
    assert resnet.returncode == 0, show(resnet)
    assert resnet.stderr == "mini_resnet: general network, 8 layers, 14 connections, m = 1505, H = 20 (written to r.json)\n"
    assert mlp.returncode == 0 and mlp.stderr.startswith("mlp: general network, ") and mlp.stderr.endswith("m = 48, H = 9 (written to mlp.json)\n")
    (solved,) = run_many([(["solve", "r.json", "--json"], tmp_path, None)])
    out = json.loads(solved.stdout)
    assert (out["m"], out["H"], out["certified"]) == (1505, 20, True)


def test_torchvision_mnasnet_reads_with_its_depthwise_convs_and_certifies(ti):
    """MNASNet (depthwise convs, ReLU, every BatchNorm after a conv; refused before as a grouped
    conv): m is the model's parameter count with each BatchNorm's scale folded into the conv before
    it, and the skeleton basis is certified."""
    tvm = pytest.importorskip("torchvision.models", reason="torchvision is not installed")
    import torch.nn as nn

    from basispath_graph.general.solve import solve_general

    model = tvm.mnasnet0_5(weights=None).eval()
    net = ti.network_from_module(model, "mnasnet0_5", "mnasnet0_5", max_weights=10**9)
    params = sum(p.numel() for p in model.parameters())
    folded = sum(m.num_features for m in model.modules() if isinstance(m, nn.BatchNorm2d))
    assert net.m == params - folded == 2_208_200
    depthwise = [m for m in model.modules() if isinstance(m, nn.Conv2d) and m.groups > 1]
    assert depthwise and all(m.groups == m.in_channels == m.out_channels for m in depthwise)
    result = solve_general(net)
    assert result.certified and result.basis_size == net.m - net.H


@pytest.mark.parametrize("arch, m", [("resnext50_32x4d", 24_994_792), ("regnet_x_400mf", 5_477_048)])
def test_torchvision_grouped_conv_networks_read_and_certify(ti, arch, m):
    """ResNeXt and RegNet-X (grouped convs, refused before): m is the parameter count with every
    BatchNorm's scale folded into its conv, every grouped conv a grouped connection, and the
    skeleton basis is certified."""
    tvm = pytest.importorskip("torchvision.models", reason="torchvision is not installed")
    import torch.nn as nn

    from basispath_graph.general.solve import solve_general

    model = getattr(tvm, arch)(weights=None).eval()
    net = ti.network_from_module(model, arch, arch, max_weights=10**9)
    folded = sum(mod.num_features for mod in model.modules() if isinstance(mod, nn.BatchNorm2d))
    assert net.m == sum(p.numel() for p in model.parameters()) - folded == m
    grouped = [mod for mod in model.modules() if isinstance(mod, nn.Conv2d) and mod.groups > 1]
    assert len([c for c in net.connections if c.kind == "grouped"]) == len(grouped) > 0
    result = solve_general(net)
    assert result.certified and result.basis_size == net.m - net.H


@pytest.mark.parametrize("arch", ["resnet18", "vgg11", "densenet121"])
def test_torchvision_models_match_the_presets_and_their_own_tensors(ti, arch):
    """Real architectures (skipped without torchvision): from-torch gives the channel-level preset's
    m and H for resnet18 and vgg11, and for each m is the model's own tensor count with every
    BatchNorm that follows a conv alone folded (densenet121: norm0 and each layer's norm2 fold;
    the norms over concatenations keep weight and bias)."""
    tvm = pytest.importorskip("torchvision.models", reason="torchvision is not installed")
    import torch.nn as nn

    from basispath_graph.general.model import parse_general
    from basispath_graph.general.presets import general_preset_spec

    model = getattr(tvm, arch)()
    net = ti.network_from_module(model, arch, arch, max_weights=10**9)
    modules = dict(model.named_modules())
    folds = {}
    if arch == "resnet18":
        folds = {n: n.replace("bn", "conv") for n in modules if ".bn" in n or n == "bn1"}
        folds |= {n: n[:-1] + "0" for n in modules if n.endswith("downsample.1")}
    elif arch == "densenet121":
        folds = {"features.norm0": "features.conv0"} | {n: n[:-5] + "conv1" for n in modules if n.endswith(".norm2")}
    assert all(isinstance(modules[b], nn.BatchNorm2d) and isinstance(modules[c], nn.Conv2d) for b, c in folds.items())
    assert net.m == tensor_count(model, folds)
    if arch != "densenet121":
        preset = parse_general(general_preset_spec(arch), arch, 10**9)
        assert (net.m, net.H) == (preset.m, preset.H)


def test_channel_pads_and_per_channel_parameters_are_checked_against_the_maps_rank():
    """A negative pad of the channel axis (a crop) is refused, not read as a shortcut; a
    parameter of shape (C, 1) on 4-d maps multiplies along H, so it is no per-channel bias."""
    import torch
    from torch import nn

    from basispath_graph import from_torch
    from basispath_graph.torch_fx import TorchImportError

    class Crop(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x):
            return self.a(x) + nn.functional.pad(torch.cat([self.b(x), self.b(x)], 1), (0, 0, 0, 0, -4, 0))

    with pytest.raises(TorchImportError, match="a negative pad of the channel axis \\(a crop of channels\\): not supported$"):
        from_torch(Crop())

    class Column(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.b = nn.Conv2d(3, 4, 3, padding=1), nn.Parameter(torch.zeros(4, 1))

        def forward(self, x):
            return self.conv(x) + self.b

    with pytest.raises(TorchImportError, match="a constant that is not one value per channel"):
        from_torch(Column(), input_shape=(1, 3, 4, 4))
