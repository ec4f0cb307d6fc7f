"""Architecture presets (``basispath_graph.presets``, ``basispath presets``, ``basispath spec preset``).

Expected widths, skips and weight counts are written out here from the family definitions,
not computed by the product. Every small preset is solved by both engines and must be
certified. CLI runs are real subprocesses, started together and checked afterwards.
"""

from __future__ import annotations

import doctest
import json

import pytest

from basispath_graph.network import Network
from basispath_graph.presets import FAMILIES, PresetError, preset_network, preset_spec, weight_count
from basispath_graph.solver import solve
from basispath_graph.spec import load_spec

from .cli_runner import run_in_process, run_many, show

FAMILY_NAMES = ("mlp", "resnet", "densenet", "unet", "stride")


# ---------------------------------------------------------------------------------------
# The families, exactly


def test_docstring_examples():
    from basispath_graph import presets

    result = doctest.testmod(presets)
    assert result.attempted > 0 and result.failed == 0


def test_family_list():
    assert tuple(FAMILIES) == FAMILY_NAMES
    for family in FAMILIES.values():
        assert family.description and "\n" not in family.description


@pytest.mark.parametrize(
    "family, depth, stride, skips",
    [
        ("mlp", 5, None, []),
        ("resnet", 1, None, []),
        ("resnet", 2, None, [[0, 2]]),
        ("resnet", 5, None, [[0, 2], [1, 3], [2, 4], [3, 5]]),
        ("densenet", 1, None, []),
        ("densenet", 4, None, [[0, 2], [0, 3], [0, 4], [1, 3], [1, 4], [2, 4]]),
        ("unet", 1, None, []),
        ("unet", 2, None, [[0, 2]]),
        ("unet", 3, None, [[0, 3]]),
        ("unet", 4, None, [[0, 4], [1, 3]]),
        ("unet", 5, None, [[0, 5], [1, 4]]),
        ("unet", 6, None, [[0, 6], [1, 5], [2, 4]]),
        ("stride", 6, 2, [[0, 2], [1, 3], [2, 4], [3, 5], [4, 6]]),
        ("stride", 6, 3, [[0, 3], [1, 4], [2, 5], [3, 6]]),
        ("stride", 6, 6, [[0, 6]]),
    ],
)
def test_skips(family, depth, stride, skips):
    spec = preset_spec(family, depth, 3, stride=stride)
    assert spec["skips"] == skips
    assert spec["widths"] == [3] * (depth + 1)


def test_widths_names_and_dict_round_trip():
    spec = preset_spec("unet", 4, 8, in_width=3, out_width=1)
    assert spec == {"name": "unet-4x8-in3-out1", "widths": [3, 8, 8, 8, 1], "skips": [[0, 4], [1, 3]]}
    assert preset_spec("mlp", 1, 5, in_width=2)["widths"] == [2, 5]
    assert preset_spec("mlp", 1, 5)["name"] == "mlp-1x5"
    assert preset_spec("stride", 8, 16, stride=3)["name"] == "stride3-8x16"
    assert preset_spec("resnet", 3, 4, in_width=4, out_width=4)["name"] == "resnet-3x4"  # equal to W: not shown
    net = preset_network("unet", 4, 8, in_width=3, out_width=1)
    assert isinstance(net, Network) and net.to_dict() == spec
    # m = 3*8 + 8*8 + 8*8 + 8*1 (chain) + 3*1 (0, 4) + 8*8 (1, 3); H = 3 * 8
    assert (net.m, net.H) == (24 + 64 + 64 + 8 + 3 + 64, 24)


def test_weight_counts():
    assert preset_network("densenet", 8, 128).m == 589_824 == 36 * 128 * 128
    assert preset_network("resnet", 32, 128).m == 63 * 128 * 128 == 1_032_192
    deep = preset_network("densenet", 32, 16)
    assert len(deep.pairs) == 528 == 33 * 32 // 2
    assert deep.m == 528 * 16 * 16
    assert preset_network("mlp", 4, 10, in_width=3, out_width=2).m == 30 + 100 + 100 + 20
    assert weight_count(preset_spec("stride", 6, 2, stride=3)) == (6 + 4) * 4


def test_weight_limit():
    with pytest.raises(PresetError) as info:
        preset_network("resnet", 32, 128, max_weights=1_000_000)
    assert str(info.value) == (
        "resnet-32x128: network has 1032192 weights, more than the limit of 1000000"
        " (raise it with max_weights or BASISPATH_MAX_WEIGHTS)"
    )
    assert preset_network("resnet", 32, 128, max_weights=1_032_192).m == 1_032_192


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        (("vgg", 2, 2), {}, "unknown preset 'vgg'; known presets: mlp, resnet, densenet, unet, stride"),
        (("mlp", 0, 2), {}, "depth must be an integer >= 1, got 0"),
        (("mlp", 2.0, 2), {}, "depth must be an integer >= 1, got 2.0"),
        (("mlp", True, 2), {}, "depth must be an integer >= 1, got True"),
        (("mlp", 1000, 2), {}, "depth must be at most 999 (a spec has at most 1000 layers), got 1000"),
        (("mlp", 2, 0), {}, "width must be an integer >= 1, got 0"),
        (("mlp", 2, 2), {"in_width": 0}, "in width must be an integer >= 1, got 0"),
        (("mlp", 2, 2), {"out_width": -3}, "out width must be an integer >= 1, got -3"),
        (("stride", 4, 2), {}, "preset 'stride' needs a stride: an integer >= 2 (--stride)"),
        (("stride", 4, 2), {"stride": 1}, "stride must be an integer >= 2, got 1"),
        (("stride", 4, 2), {"stride": 5}, "stride 5 is larger than depth 4: no skip would fit"),
        (("densenet", 4, 2), {"stride": 2}, "a stride applies only to preset 'stride', not 'densenet'"),
    ],
)
def test_bad_arguments(args, kwargs, message):
    with pytest.raises(PresetError) as info:
        preset_spec(*args, **kwargs)
    assert isinstance(info.value, ValueError)
    assert str(info.value) == message


def _small_presets():
    for family in FAMILY_NAMES:
        for depth in range(2, 7):
            for stride in range(2, depth + 1) if family == "stride" else (None,):
                for width in range(1, 5):
                    yield family, depth, width, stride, None, None
                # unequal input and output widths too
                yield family, depth, 3, stride, 2, 1


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_small_presets_are_certified_by_both_engines(family):
    count = 0
    for fam, depth, width, stride, n, k in _small_presets():
        if fam != family:
            continue
        net = preset_network(fam, depth, width, stride=stride, in_width=n, out_width=k)
        for engine in ("deah", "skeleton"):
            result = solve(net, engine)
            assert result.certified, (net.name, engine, result.verdict)
            assert result.basis_size == net.m - net.H
        count += 1
    assert count >= 25


# ---------------------------------------------------------------------------------------
# Command line


def test_cli_presets_list(tmp_path, monkeypatch, capsys):
    res = run_in_process(["presets"], tmp_path, monkeypatch, capsys)
    assert res.returncode == 0, show(res)
    lines = res.stdout.splitlines()
    from basispath_graph.general.presets import GENERAL_FAMILIES

    assert [line.split()[0] for line in lines] == list(FAMILY_NAMES) + list(GENERAL_FAMILIES)
    for line, family in zip(lines, FAMILIES.values()):
        assert line.endswith(family.description)
    for line, (description, _) in zip(lines[len(FAMILY_NAMES):], GENERAL_FAMILIES.values()):
        assert line.endswith(f"{description} (general spec, no --depth/--width)")


def test_cli_spec_preset_round_trip_and_solve(tmp_path):
    cases = {
        "densenet.json": ["densenet", "--depth", "4", "--width", "3"],
        # m = 6+4+4+4+2 (chain) + 6+4+4+2 (skips) = 36: exactly at the limit is allowed
        "resnet.json": ["resnet", "-d", "5", "-w", "2", "--in", "3", "--out", "1", "--max-weights", "36"],
        "stride.json": ["stride", "--depth", "6", "--width", "2", "--stride", "3"],
    }
    (tmp_path / "stride.json").write_text("old content, overwritten\n")
    runs = run_many((["spec", "preset", *args, "-o", name], tmp_path, None) for name, args in cases.items())
    for (name, args), res in zip(cases.items(), runs):
        assert res.returncode == 0, show(res)
        assert res.stdout == "", show(res)
        net = load_spec(tmp_path / name)
        expected = preset_spec(
            args[0],
            int(args[2]),
            int(args[4]),
            in_width=int(args[args.index("--in") + 1]) if "--in" in args else None,
            out_width=int(args[args.index("--out") + 1]) if "--out" in args else None,
            stride=int(args[args.index("--stride") + 1]) if "--stride" in args else None,
        )
        assert net.to_dict() == expected
        assert json.loads((tmp_path / name).read_text()) == expected
        assert res.stderr == (
            f"{expected['name']}: {net.L + 1} layers, {len(net.skips)} skip{'s' if len(net.skips) != 1 else ''},"
            f" m = {net.m}, H = {net.H} (written to {name})\n"
        ), show(res)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(cases)  # no temporary files left
    solved = run_many((["solve", name], tmp_path, None) for name in cases)
    for res in solved:
        assert res.returncode == 0, show(res)
        assert "certified" in res.stdout, show(res)


def test_cli_spec_preset_to_stdout(tmp_path, monkeypatch, capsys):
    res = run_in_process(["spec", "preset", "resnet", "--depth", "3", "--width", "2"], tmp_path, monkeypatch, capsys)
    assert res.returncode == 0, show(res)
    assert json.loads(res.stdout) == {"name": "resnet-3x2", "widths": [2, 2, 2, 2], "skips": [[0, 2], [1, 3]]}
    assert res.stderr == "resnet-3x2: 4 layers, 2 skips, m = 20, H = 4 (written to stdout)\n"


def test_cli_spec_preset_refusals(tmp_path, monkeypatch, capsys):
    cases = [
        (["vgg", "-d", "2", "-w", "2"], "unknown preset 'vgg'; known presets: mlp, resnet, densenet, unet, stride"),
        (["mlp", "-d", "0", "-w", "2"], "depth must be an integer >= 1, got 0"),
        (["mlp", "-d", "2", "-w", "0"], "width must be an integer >= 1, got 0"),
        (["mlp", "-d", "2", "-w", "2", "--in", "0"], "in width must be an integer >= 1, got 0"),
        (["mlp", "-d", "2", "-w", "2", "--out", "0"], "out width must be an integer >= 1, got 0"),
        (["stride", "-d", "4", "-w", "2"], "preset 'stride' needs a stride: an integer >= 2 (--stride)"),
        (["stride", "-d", "4", "-w", "2", "--stride", "1"], "stride must be an integer >= 2, got 1"),
        (["unet", "-d", "4", "-w", "2", "--stride", "2"], "a stride applies only to preset 'stride', not 'unet'"),
        (
            ["resnet", "--depth", "32", "--width", "128", "--max-weights", "1000000", "-o", "big.json"],
            "resnet-32x128: network has 1032192 weights, more than the limit of 1000000"
            " (raise it with --max-weights or BASISPATH_MAX_WEIGHTS)",
        ),
        (["mlp", "-d", "2", "-w", "2", "-o", "missing/x.json"], "cannot write spec file missing/x.json: not a file in an existing folder"),
        (["mlp", "-d", "2", "-w", "2", "-o", "."], "cannot write spec file .: not a file in an existing folder"),
    ]
    for args, message in cases:
        res = run_in_process(["spec", "preset", *args], tmp_path, monkeypatch, capsys)
        assert res.returncode == 2, show(res)
        assert res.stderr == f"error: {message}\n", show(res)
        assert res.stdout == "", show(res)
    assert list(tmp_path.iterdir()) == []


def test_cli_help_has_examples(tmp_path, monkeypatch, capsys):
    for args, example in [
        (["presets", "--help"], "basispath presets"),
        (["spec", "preset", "--help"], "basispath spec preset densenet --depth 8 --width 128"),
        (["spec", "from-torch", "--help"], "basispath spec from-torch models.py:densenet_mlp"),
    ]:
        res = run_in_process(args, tmp_path, monkeypatch, capsys)
        assert res.returncode == 0, show(res)
        assert "Example" in res.stdout and example in res.stdout, show(res)
    res = run_in_process(["spec", "preset"], tmp_path, monkeypatch, capsys)
    assert (res.returncode, res.stderr) == (2, "error: Missing argument 'NAME'.\n"), show(res)
