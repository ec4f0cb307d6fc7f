"""The committed torchvision specs of the benchmarks (bench/specs/, written by
tools/torchvision_specs.py) against torch itself: each is what the project's importer gives now,
and its m is torchvision's parameter count with BatchNorm folded.

The count is taken from the torch.fx graph, independently of the importer: every Conv2d / Linear
weight and bias, plus per BatchNorm2d channel one bias when the BatchNorm reads a bias-free conv
that nothing else reads (folded into it: general/presets.py), else two (its scale, a diagonal
connection, and its shift: DenseNet's BatchNorms after a concatenation)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "bench" / "specs"
sys.path.insert(0, str(ROOT / "tools"))

import torchvision_specs  # noqa: E402

torch = pytest.importorskip("torch", reason="the committed specs are checked against torch where it is installed (CI installs it)")
pytest.importorskip("torchvision", reason="the committed specs are checked against torchvision where it is installed")


def folded_parameter_count(model) -> int:
    import torch.fx

    graph = torch.fx.symbolic_trace(model)
    modules = dict(graph.named_modules())
    total = 0
    for node in graph.graph.nodes:
        if node.op != "call_module":
            continue
        module = modules[node.target]
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
            total += module.weight.numel() + (0 if module.bias is None else module.bias.numel())
        elif isinstance(module, torch.nn.BatchNorm2d):
            source = node.args[0]
            folded = (source.op == "call_module" and isinstance(modules[source.target], torch.nn.Conv2d)
                      and modules[source.target].bias is None and len(source.users) == 1)
            total += module.num_features * (1 if folded else 2)
    return total


def test_every_network_of_the_tool_has_a_committed_spec_and_nothing_else_is_there():
    assert sorted(p.stem for p in SPECS.glob("*.json")) == sorted(torchvision_specs.NETWORKS)


@pytest.mark.parametrize("name", list(torchvision_specs.NETWORKS))
def test_committed_spec_is_what_the_importer_gives_and_m_is_torchvisions_count(name):
    from basispath_graph.spec import parse_general
    from basispath_graph.torch_import import convert_module

    model = torchvision_specs.build(name)
    committed = json.loads((SPECS / f"{name}.json").read_text())
    now = convert_module(model, f"tools/torchvision_specs.py:{name}", name, False, torchvision_specs.NETWORKS[name]).spec
    assert committed == json.loads(json.dumps(now)), f"bench/specs/{name}.json is stale: rerun tools/torchvision_specs.py {name}"
    net = parse_general(committed, name, torchvision_specs.MAX_WEIGHTS)
    expected = folded_parameter_count(model)
    assert net.m == expected, f"{name}: m = {net.m}, torchvision with BatchNorm folded: {expected}"
