"""A described basis in the store (issue 26, item 4): a skeleton run of a general network stores
its designated walks and families (O(layers + connections) rows) and, above ``LISTED_PATHS``
paths, only its explicit paths as nodes; ``why``, ``load`` and the coordinates make any other
path from the description. Both backends (``store_uri``)."""

from __future__ import annotations

import json

import pytest

from basispath_graph import api
from basispath_graph.general.blocks import general_path_json
from basispath_graph.general.presets import general_preset_spec
from basispath_graph.graph_store import GraphStore, open_store
from basispath_graph.store import described_rows

from .test_general_networks import oracle_paths

# Three layers with biases, a 3-tap convolution, a BatchNorm scale and an identity shortcut.
SPEC = {
    "name": "described", "layers": [
        {"name": "bias", "size": 1}, {"name": "x", "size": 2}, {"name": "h", "size": 3}, {"name": "bn", "size": 3},
        {"name": "g", "size": 3}, {"name": "y", "size": 2}],
    "connections": [
        {"from": "x", "to": "h", "taps": 3}, {"from": "bias", "to": "h"}, {"from": "h", "to": "bn", "kind": "diagonal"},
        {"from": "bn", "to": "g", "taps": 2}, {"from": "h", "to": "g", "kind": "identity"}, {"from": "bias", "to": "g"},
        {"from": "g", "to": "y"}, {"from": "x", "to": "y"}],
}


def _count(gs: GraphStore, label: str, run: str) -> int:
    return gs.query(f"MATCH (n:{label} {{run: $run}}) RETURN count(n) AS n", run=run)[0]["n"]


@pytest.mark.parametrize("listed", [True, False], ids=["listed", "described-only"])
def test_a_stored_skeleton_answers_as_the_solved_one(store_uri, monkeypatch, listed):
    """Stored with every path a node, or (threshold lowered) only the explicit ones: ``load``
    gives the solved basis in order, and ``why`` on every path of the network (the oracle's list)
    gives the status, certificate coefficients and paths the in-memory result gives; a kept
    path's id is its basis index either way."""
    if not listed:
        monkeypatch.setattr(described_rows, "LISTED_PATHS", 0)
    net = api.load_spec(SPEC)
    solved = api.solve(net)
    with open_store(str(store_uri), create=True) as gs:
        run = gs.run(net)
        stored_nodes = _count(gs, "BasisPath", run.id)
        explicit = sum(len(b) for b in solved.basis.explicit)
        assert stored_nodes == (net.m - net.H if listed else explicit)
        # one per layer and side: in for every non-input layer, out for every non-output one
        designations = 2 * len(net.layers) - len(net.inputs) - len(net.outputs)
        assert _count(gs, "Designation", run.id) == designations == 9
        assert _count(gs, "Family", run.id) == len(solved.basis.families) == 6
        loaded = gs.load(run.id)
        assert len(loaded.basis_paths) == net.m - net.H
        assert [general_path_json(net, p) for p in loaded.basis_paths] == solved.basis_paths
        for path in oracle_paths(SPEC):
            as_json = {"nodes": [[l, i] for l, i in path[0]], "taps": list(path[1])}
            mine, theirs = gs.why(run.id, json.dumps(as_json)), solved.why(as_json)
            assert mine["status"] == theirs["status"] and mine["verified"] and theirs["verified"]
            assert [(t["coef"], t["path"]) for t in mine["certificate"]] == [(t["coef"], t["path"]) for t in theirs["certificate"]]
            if mine["status"] == "kept":
                assert mine["id"] == theirs["certificate"][0]["index"]


def test_a_resnet34_run_is_stored_in_thousands_of_rows_and_answers_why(store_uri):
    """ResNet-34 at channel level (21.8 M weights, 21.8 M basis paths): the run stores its
    explicit paths and its description, a few thousand rows; ``why`` on a family path given by
    its id and on a path that is no basis path answers, verified; ``delete`` leaves none of it."""
    spec = general_preset_spec("resnet34")
    net = api.load_spec(spec, max_weights=None)
    with open_store(str(store_uri), create=True) as gs:
        run = gs.run(net)
        rows = sum(_count(gs, label, run.id) for label in ("BasisPath", "Designation", "Family"))
        assert rows < 10_000 and len(run.basis_paths) == net.m - net.H == 21_784_424
        pid = net.m - net.H - 1000
        kept = gs.why(run.id, str(pid))
        assert (kept["status"], kept["id"], kept["verified"]) == ("kept", pid, True)
        nodes = kept["path"]["nodes"]
        nodes[1][1] = (nodes[1][1] + 1) % net.layers[net.index[nodes[1][0]]].size
        other = gs.why(run.id, json.dumps(kept["path"]))
        assert other["verified"] and other["status"] in ("kept", "not a candidate")
        assert sum(t["coef"] * 0 + 1 for t in other["certificate"]) >= 1
        gs.delete(run.id)
        assert sum(_count(gs, label, run.id) for label in ("BasisPath", "Designation", "Family")) == 0
