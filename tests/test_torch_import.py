"""Reading PyTorch models (``basispath_graph.torch_import``, ``basispath spec from-torch``).

The models are the factories in tests/torch_models.py. Every test that needs PyTorch skips,
with the reason shown, when it is not installed; the test of the "PyTorch missing" message
needs no PyTorch: it hides any installed one behind a ``torch`` package that fails to import.
"""

from __future__ import annotations

import json
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
        ("residual", "UnsupportedOperation", "unsupported operation operator.add in {src}"
         " (a residual sum is not a layered network: use torch.cat for skip connections)"),
        ("conv", "UnsupportedOperation", "unsupported operation torch.nn.Conv1d (module 'conv') in {src}"),
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
            [f"{MODELS}:residual", "-o", "residual.json"],
            f"unsupported operation operator.add in {MODELS}:residual"
            " (a residual sum is not a layered network: use torch.cat for skip connections)",
        ),
        (["tests.torch_models:conv"], "unsupported operation torch.nn.Conv1d (module 'conv') in tests.torch_models:conv"),
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
