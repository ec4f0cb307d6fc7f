"""The query files for the questions people ask (docs/graph-model.md, "Questions you can ask"),
answered on both backends, and ``basispath query --file``.

Every expected value is computed here from the in-memory solve of the same run (Step 1's
substructure paths and their layers, the basis and discarded paths, the discard reasons and
repairs), never from the store: layer pairs from consecutive layers, not from edge codes;
paths through a neuron by filtering the plain paths; counts from the records of the solve.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

from basispath_graph.network import Network
from basispath_graph.pipeline import execute_run
from basispath_graph.solver import Repair
from basispath_graph.store import StoreError, open_store

from .cli_runner import run_in_process, run_many, show
from .conftest import BACKEND_PARAMS, module_store

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: Networks with skips, both DEAH engines; densenet-style deah has repairs (re-admitted paths).
CASES = [("fig1b", "deah"), ("resnet-style", "deah"), ("resnet-style", "deah-complete"), ("densenet-style", "deah")]
STEPS = ("chain", "head", "prefix", "suffix", "local", "repair")


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def solved(request, tmp_path_factory):
    """The store URI and, per case, (run id, in-memory SolveResult); the store is closed again, so
    CLI subprocesses can open it."""
    uri = module_store(request, tmp_path_factory, "questions")
    runs = {}
    with open_store(uri, write=True) as store:
        for name, engine in CASES:
            spec = json.loads((EXAMPLES / f"{name}.json").read_text())
            outcome = execute_run(store, Network.build(spec["widths"], spec["skips"], name), engine)
            runs[(name, engine)] = (outcome.run_id, outcome.result)
    return uri, runs


def hops(layers) -> list[list[int]]:
    """A substructure path's layer pairs, from its layers (no edge codes involved)."""
    return [[a, b] for a, b in zip(layers, layers[1:])]


def text(path) -> str:
    return ",".join(f"{layer}:{index}" for layer, index in path)


# -- (a) layer pairs ---------------------------------------------------------------------------

def expected_shared(s1, p: int, q: int) -> list[dict]:
    """One row when both are selected and share a layer pair, else none."""
    if p not in s1.selected or q not in s1.selected or p == q:
        return []
    shared = sorted(set(map(tuple, hops(s1.paths[p].layers))) & set(map(tuple, hops(s1.paths[q].layers))))
    if not shared:
        return []
    return [{"p": p, "p_layers": list(s1.paths[p].layers), "q": q, "q_layers": list(s1.paths[q].layers), "pairs": [list(x) for x in shared]}]


def test_shared_layer_pairs_of_every_two_substructure_paths(solved):
    uri, runs = solved
    seen = []
    with open_store(uri) as store:
        for case, (run_id, result) in runs.items():
            s1 = result.deah.step1
            for p, q in combinations(sorted(s1.paths), 2):
                for a, b in ((p, q), (q, p)):  # either order
                    got = store.run("shared_layer_pairs", run=run_id, p=a, q=b)
                    assert got == expected_shared(s1, a, b), (case, a, b)
                    seen.extend(len(r["pairs"]) for r in got)
    # not vacuous: pairs were found, lists of several pairs among them (their order is checked)
    assert max(seen) >= 3 and seen.count(1) > 0


def test_hops_of_every_substructure_path(solved):
    uri, runs = solved
    with open_store(uri) as store:
        for case, (run_id, result) in runs.items():
            s1 = result.deah.step1
            expected = [
                {"idx": idx, "layers": list(s1.paths[idx].layers), "selected": idx in s1.selected, "hops": hops(s1.paths[idx].layers)}
                for idx in sorted(s1.paths)
            ]
            assert store.run("substructure_hops", run=run_id) == expected, case
            assert any(not row["selected"] for row in expected) and any(row["selected"] for row in expected)


def test_hops_keep_their_order_past_one_batch(solved):
    """collect() after WITH ... ORDER BY ... SKIP 0 keeps the order on more rows than one batch
    of LadybugDB's (2048): 16 layers with a skip over every layer have 987 substructure paths and
    thousands of hops."""
    uri, _ = solved
    net = Network.build([1] * 16, [(i, i + 2) for i in range(14)], "long")
    with open_store(uri, write=True) as store:
        outcome = execute_run(store, net, "deah-complete")
        rows = store.run("substructure_hops", run=outcome.run_id)
    paths = outcome.result.deah.step1.paths
    assert len(rows) == len(paths) == 987 and sum(len(r["hops"]) for r in rows) > 2048
    assert rows == [{"idx": i, "layers": list(paths[i].layers), "selected": i in outcome.result.deah.step1.selected,
                     "hops": hops(paths[i].layers)} for i in sorted(paths)]


# -- (b) paths through a neuron ----------------------------------------------------------------

def expected_through(result, layer: int, neuron: int) -> list[dict]:
    """The run's paths in stored id order (kept ones first, in basis order), filtered."""
    paths = [(p, True) for p in result.basis_paths] + [(p, False) for p in result.discarded_paths]
    return [{"id": i, "text": text(p), "kept": kept} for i, (p, kept) in enumerate(paths) if (layer, neuron) in p]


def test_paths_through_every_neuron(solved):
    uri, runs = solved
    mixed = 0  # answers holding kept and discarded paths
    with open_store(uri) as store:
        for case, (run_id, result) in runs.items():
            widths = result.network.widths
            for layer, width in enumerate(widths):
                for neuron in range(width):
                    got = store.run("paths_through_neuron", run=run_id, layer=layer, neuron=neuron)
                    want = expected_through(result, layer, neuron)
                    assert got == want, (case, layer, neuron)
                    mixed += {r["kept"] for r in want} == {True, False}
            # outside the network: no neuron, no path (never a neighbouring layer's neuron)
            for layer, neuron in ((0, widths[0]), (1, -1), (len(widths), 0), (-1, 0)):
                assert store.run("paths_through_neuron", run=run_id, layer=layer, neuron=neuron) == [], (case, layer, neuron)
    assert mixed >= 20


# -- (c) counts per substructure ---------------------------------------------------------------

def expected_counts(result) -> list[dict]:
    s1, bases = result.deah.step1, result.deah.bases
    rows = {idx: {"idx": idx, "layers": list(p.layers), "selected": idx in s1.selected, "kept": 0, "discarded": 0, **dict.fromkeys(STEPS, 0)}
            for idx, p in s1.paths.items()}
    for block, sub in zip(result.basis, result.basis_substructures):
        if sub is not None:
            rows[sub]["kept"] += len(block)
    for d in result.discarded:
        rows[d.substructure]["discarded"] += 1
        rows[d.substructure]["repair" if isinstance(d.reason, Repair) else d.reason.step] += 1
    # A re-admitted path is kept with two records: SDVChain's discard and the repair.
    for r in result.repairs:
        if r.action == "readmit":
            rows[r.substructure]["repair"] += 1
            (disc,) = [d for d in result.deah.step3.discards
                       if (bases[d.substructure].layers, tuple(bases[d.substructure].nodes[d.row].tolist())) == (r.layers, r.indices)]
            rows[disc.substructure][disc.step] += 1
        else:
            assert r.action != "add", "a skeleton path added: belongs to no substructure, not counted here"
    return [rows[idx] for idx in sorted(rows)]


def test_counts_per_substructure(solved):
    uri, runs = solved
    steps_seen = set()
    with open_store(uri) as store:
        for case, (run_id, result) in runs.items():
            want = expected_counts(result)
            assert store.run("substructure_counts", run=run_id) == want, case
            assert sum(r["kept"] for r in want) == result.basis_size - sum(len(b) for b, s in zip(result.basis, result.basis_substructures) if s is None)
            assert sum(r["discarded"] for r in want) == len(result.discarded)
            steps_seen |= {step for r in want for step in STEPS if r[step]}
    assert {"chain", "prefix", "suffix", "repair"} <= steps_seen  # both engines' rules and a repair


# -- the same through the CLI, by packaged name --------------------------------------------------

def test_query_file_by_name_on_the_cli(solved, tmp_path):
    """``basispath query --file NAME`` from a folder with no such file reads the packaged query."""
    uri, runs = solved
    run_id, result = runs[("fig1b", "deah")]
    s1 = result.deah.step1
    # the two selected paths sharing the most layer pairs (checks a list, not [])
    p, q = max(combinations(s1.selected, 2), key=lambda pq: len(sum((r["pairs"] for r in expected_shared(s1, *pq)), [])))
    jobs = {
        "shared_layer_pairs": (["-p", f"p={p}", "-p", f"q={q}"], expected_shared(s1, p, q)),
        "substructure_hops.cypher": ([], [{"idx": i, "layers": list(s1.paths[i].layers), "selected": i in s1.selected, "hops": hops(s1.paths[i].layers)} for i in sorted(s1.paths)]),
        "paths_through_neuron": (["-p", "layer=2", "-p", "neuron=1"], expected_through(result, 2, 1)),
        "substructure_counts": ([], expected_counts(result)),
    }
    results = run_many(
        (["query", "--file", name, "--store", uri, "--json", "-p", f"run={run_id}", *extra], tmp_path, None)
        for name, (extra, _) in jobs.items()
    )
    for (name, (_, want)), r in zip(jobs.items(), results):
        assert r.returncode == 0, show(r)
        assert json.loads(r.stdout) == want, name
    assert len(expected_shared(s1, p, q)[0]["pairs"]) >= 2


# -- what a relationship's type is called ------------------------------------------------------

def test_relationship_type_is_label_in_ladybug_and_type_in_neo4j(solved):
    """docs/graph-model.md, "LadybugDB is not Neo4j": what each backend says (ladybug 0.22,
    Neo4j 5.26)."""
    uri, _ = solved
    ask = "MATCH (:SubstructurePath)-[e:SHARES_EDGE]->(:SubstructurePath) RETURN DISTINCT {}(e) AS t"
    with open_store(uri) as store:
        right, wrong = ("type", "label") if store.backend == "neo4j" else ("label", "type")
        assert store.query(ask.format(right)) == (["t"], [["SHARES_EDGE"]])
        with pytest.raises(StoreError) as refused:
            store.query(ask.format(wrong))
    if store.backend == "neo4j":
        assert "Unknown function 'label'" in str(refused.value)
    else:
        assert str(refused.value) == "Catalog exception: function TYPE does not exist."
    # and a node's label: text from both functions in LadybugDB, a list from labels() in Neo4j
    node = "MATCH (s:SubstructurePath) RETURN DISTINCT {}(s) AS t"
    with open_store(uri) as store:
        if store.backend == "neo4j":
            assert store.query(node.format("labels")) == (["t"], [[["SubstructurePath"]]])
            with pytest.raises(StoreError, match="Unknown function 'label'"):
                store.query(node.format("label"))
        else:
            assert store.query(node.format("labels")) == store.query(node.format("label")) == (["t"], [["SubstructurePath"]])


# -- --file errors -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "args, message",
    [
        (["--file", "no_such_query"], "error: --file no_such_query: no such file, and no query of that name in the query library\n"),
        (["--file", "missing/count_kept.cypher"], "error: --file missing/count_kept.cypher: no such file, and no query of that name in the query library\n"),
        (["--file", "../queries/count_kept"], "error: --file ../queries/count_kept: no such file, and no query of that name in the query library\n"),
        (["--file", "."], "error: --file .: not a file\n"),
        (["--file", "count_kept", "RETURN 1"], "error: give the query as an argument or with --file, not both\n"),
        ([], "error: missing the query: give it as an argument or with --file PATH\n"),
    ],
)
def test_query_file_errors(tmp_path, monkeypatch, capsys, args, message):
    r = run_in_process(["query", "--store", tmp_path / "store", *args], tmp_path, monkeypatch, capsys)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", message)
    assert not (tmp_path / "store").exists()  # refused before any store is opened


def test_query_file_that_is_not_text(tmp_path, monkeypatch, capsys):
    (tmp_path / "q.cypher").write_bytes(b"\xff\xfeRETURN 1")
    r = run_in_process(["query", "--store", tmp_path / "store", "--file", "q.cypher"], tmp_path, monkeypatch, capsys)
    assert (r.returncode, r.stderr) == (2, "error: --file q.cypher: cannot read it (not UTF-8 text)\n")


def test_query_file_path_wins_over_a_packaged_name(tmp_path, monkeypatch, capsys):
    """A file in the folder named like a packaged query is what runs; its $parameters are checked
    like the argument's."""
    (tmp_path / "count_kept").write_text("// mine\nRETURN $n + 1 AS m\n", encoding="utf-8")
    store = tmp_path / "store"
    open_store(str(store), write=True).close()
    r = run_in_process(["query", "--store", store, "--json", "--file", "count_kept", "-p", "n=41"], tmp_path, monkeypatch, capsys)
    assert (r.returncode, json.loads(r.stdout)) == (0, [{"m": 42}]), r.stderr
    r = run_in_process(["query", "--store", store, "--file", "count_kept"], tmp_path, monkeypatch, capsys)
    assert (r.returncode, r.stderr) == (2, "error: query parameter $n was not given (use --param n=VALUE)\n")
