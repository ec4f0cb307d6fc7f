"""The Python API (issue 14): what a notebook user imports from ``basispath_graph``.

docs/python-api.md is executed here line by line (doctest), the docstring examples of the
package run under ``--doctest-modules`` (pyproject.toml), and each promise of the API is
checked against what the CLI does with the same input.
"""

from __future__ import annotations

import doctest
import inspect
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

import basispath_graph
from basispath_graph import (
    BadInput, BasispathError, GraphStore, InvalidNetwork, LimitExceeded, Network, NotCertified, SolveResult, StoreError,
    StoreLocked, StoreUnavailable, certify, compare, load_spec, open_store, preset, solve,
)
from basispath_graph.cli.common import EXIT_CODES, exit_code

from .cli_runner import cli
from .pages import run_page

ROOT = Path(__file__).resolve().parent.parent
FIG1B = {"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [1, 3]]}


def test_docs_python_api_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the session writes files and a store in its folder
    assert run_page(ROOT / "docs" / "python-api.md") > 40  # the whole session ran, not an empty page


def _public_functions():
    for name in basispath_graph.__all__:
        obj = getattr(basispath_graph, name)
        if inspect.isfunction(obj):
            yield name, obj


@pytest.mark.parametrize("name,function", list(_public_functions()))
def test_every_public_function_has_a_numpydoc_docstring_with_a_runnable_example(name, function):
    doc = inspect.getdoc(function) or ""
    for section in ("Returns\n-------", "Examples\n--------"):
        assert section in doc, f"{name}: no {section.splitlines()[0]} section"
    examples = doctest.DocTestParser().get_examples(doc)
    assert examples, f"{name}: no >>> example"


def test_the_api_is_importable_from_the_package_and_names_are_not_shadowed():
    import importlib

    for name in basispath_graph.__all__:
        assert hasattr(basispath_graph, name), name
    # a function named like a submodule would hide it from `import basispath_graph.X as m`
    for name in basispath_graph.__all__:
        try:
            importlib.import_module(f"basispath_graph.{name}")
        except ModuleNotFoundError:
            continue
        raise AssertionError(f"basispath_graph.{name} is both a public name and a submodule")


# --- Network ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        {"widths": [2, 0, 2]},
        {"widths": [3]},
        {"widths": [2, 2.5, 2]},
        {"widths": [2, 2, 2], "skips": [[0, 5]]},
        {"widths": [2, 2, 2], "skips": [[1, 1]]},
        {"widths": [2, 2, 2], "skips": [[2, 0]]},
        {"widths": [2, 2, 2], "skips": [[0]]},
        {"widths": [2, 2], "name": 7},
        {"widths": "2,2"},
    ],
)
def test_network_refuses_what_the_cli_refuses_with_the_same_message(tmp_path, spec):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spec))
    res = cli("solve", str(path))
    assert res.returncode == 2
    prefix = f"error: {path}: "
    assert res.stderr.startswith(prefix), res.stderr
    with pytest.raises(InvalidNetwork) as exc:
        Network(spec["widths"], spec.get("skips", ()), spec.get("name", ""))
    assert str(exc.value) == res.stderr[len(prefix):].strip()
    assert isinstance(exc.value, BadInput) and isinstance(exc.value, ValueError)


def test_network_from_numpy_widths_and_short_repr_of_a_deep_network():
    import numpy as np

    assert Network(np.array([2, 3, 2])).widths == (2, 3, 2)
    deep = Network([4] * 40, skips=[(a, a + 2) for a in range(38)], name="deep")
    assert repr(deep) == "Network(name='deep', widths=(4, 4, 4, 4, 4, 4, ... 40 layers), skips=(38 skips))"


def test_load_spec_reads_files_and_mappings_alike(tmp_path):
    path = tmp_path / "fig1b.json"
    path.write_text(json.dumps(FIG1B))
    assert load_spec(path) == load_spec(FIG1B) == Network(FIG1B["widths"], FIG1B["skips"], "fig1b")
    with pytest.raises(BadInput, match=r"^<spec>: network has 30 weights, more than the limit of 10 "):
        load_spec(FIG1B, max_weights=10)


# --- solve and its result --------------------------------------------------------------------


def test_solve_result_plain_views_and_export_match_the_cli(tmp_path):
    spec = tmp_path / "fig1b.json"
    spec.write_text(json.dumps(FIG1B))
    exported = tmp_path / "basis.json"
    res = cli("solve", str(spec), "--export", str(exported), "-q")
    assert res.returncode == 0, res.stderr
    result = solve(load_spec(spec))
    assert result.engine == "deah-complete"
    assert json.loads(json.dumps(result.export())) == json.loads(exported.read_text())
    assert isinstance(result.basis_size, int) and result.basis_size == result.m - result.H == 23
    assert result.basis_paths == [tuple(map(tuple, p)) for p in result.export()["basis"]]
    assert result.discarded_paths == [tuple(map(tuple, p)) for p in result.export()["discarded"]]
    assert len(repr(result)) < 200


def test_repr_of_a_big_result_is_one_short_line():
    result = solve(preset("densenet", 5, 24))
    assert result.basis_size > 2000
    text = repr(result)
    assert "\n" not in text and len(text) < 200


def test_why_answers_discarded_kept_and_never_candidate_paths_and_refuses_non_paths():
    result = solve(Network(FIG1B["widths"], FIG1B["skips"]), engine="deah")

    def weights(p):
        return Counter(zip(map(tuple, p), map(tuple, p[1:])))

    for path in result.discarded_paths:
        answer = result.why(path)
        total = Counter()
        for term in answer["certificate"]:
            for w, n in weights(term["path"]).items():
                total[w] += term["coef"] * n
        assert +total == weights(path)
        assert answer["status"] == "discarded" and answer["verified"] is True
    as_text = ",".join(f"{l}:{i}" for l, i in result.discarded_paths[0])
    assert result.why(as_text) == result.why(result.discarded_paths[0])
    # a kept path and a path that was never a candidate answer too, in the same shape
    kept = result.why(result.basis_paths[4])
    assert (kept["status"], kept["reason"]["step"], kept["verified"]) == ("kept", "kept", True)
    assert kept["certificate"] == [{"coef": 1, "path": [list(p) for p in result.basis_paths[4]], "index": 4}]
    candidates = set(result.basis_paths) | set(result.discarded_paths)
    never = next(p for p in [((0, a), (1, b), (2, c), (3, d), (4, e)) for a in range(2) for b in range(2)
                             for c in range(3) for d in range(2) for e in range(2)] if p not in candidates)
    answer = result.why(never)
    assert (answer["status"], answer["reason"]["step"], answer["verified"]) == ("not a candidate", "coordinates", True)
    total = Counter()
    for term in answer["certificate"]:
        assert term["path"] == [list(p) for p in result.basis_paths[term["index"]]]
        for w, n in weights(term["path"]).items():
            total[w] += term["coef"] * n
    assert +total == weights(never)
    assert set(kept) == set(answer) == {"run", "path", "id", "status", "substructure", "reason", "certificate", "verified"}
    with pytest.raises(BadInput, match=r"^query \(0:0,2:0,4:0\): hop 2->4 is not a connected layer pair$"):
        result.why("0:0,2:0,4:0")


def test_solve_refuses_an_unknown_engine_as_bad_input():
    with pytest.raises(BadInput, match="^unknown engine 'fast'; choose one of deah, deah-complete, skeleton$"):
        solve(Network([2, 2]), engine="fast")


# --- certify ---------------------------------------------------------------------------------


def test_certify_accepts_every_form_of_a_basis(tmp_path):
    net = Network(FIG1B["widths"], FIG1B["skips"])
    result = solve(net)
    doc = result.export()
    path = tmp_path / "basis.json"
    path.write_text(json.dumps(doc))
    for basis in (result, doc, doc["basis"], str(path), path, result.basis_paths, result.basis):
        verdict = certify(net, basis)
        assert verdict.certified and verdict.rank == 23
    broken = result.basis_paths[:-1] + [result.basis_paths[0]]
    assert certify(net, broken).defect == f"path 22 ({','.join(f'{l}:{i}' for l, i in broken[0])}) duplicates path 0"
    with pytest.raises(BadInput, match=r"^basis: basis\[0\] is not a list of \[layer, index\] integer pairs$"):
        certify(net, [[1, 2, 3]])
    with pytest.raises(BadInput, match=r"^.*missing\.json: no such file$"):
        certify(net, tmp_path / "missing.json")


# --- compare ---------------------------------------------------------------------------------


def test_compare_table_has_one_column_per_result_and_the_cli_rows():
    a, b = solve(preset("mlp", 4, 8)), solve(preset("resnet", 4, 8), engine="deah")
    table = compare(a, b)
    rows = dict(table.rows())
    assert rows["|B|"] == [a.basis_size, b.basis_size]
    assert rows["repairs"] == [0, len(b.repairs)]
    assert "T chains" in rows  # the deah column brings the chain rows
    md = table.to_markdown().splitlines()
    assert md[0] == "|  | mlp-4x8 (deah-complete) | resnet-4x8 (deah) |"
    assert md[-1] == "Sources: mlp-4x8 (deah-complete): solved now; resnet-4x8 (deah): solved now."
    with pytest.raises(BadInput, match="^1 labels for 2 results$"):
        compare(a, b, labels=["x"])


# --- stored runs -----------------------------------------------------------------------------


def test_store_runs_lists_loads_explains_and_deletes(store_uri):
    net = Network(FIG1B["widths"], FIG1B["skips"], "fig1b")
    with open_store(store_uri.uri, create=True) as store:
        assert isinstance(store, GraphStore) and store.backend == store_uri.backend
        first = store.run(net, engine="deah")
        second = store.run(net)
        ids = {r["id"]: r for r in store.runs()}
        assert set(ids) == {first.id, second.id}
        assert ids[first.id]["engine"] == "deah" and ids[second.id]["status"] == "complete"
        loaded = store.load(first.id)
        assert loaded.basis_paths == first.result.basis_paths
        assert loaded.discarded_paths == first.result.discarded_paths
        assert certify(loaded.network, loaded).certified
        path = first.result.discarded_paths[0]
        answer = store.why(first.id, path)
        assert answer["verified"] and answer["status"] == "discarded"
        assert store.query("MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n", run=second.id) == [{"n": 23}]
        assert dict(store.compare(first.id, second.id).rows())["repairs"] == [len(first.result.repairs), 0]
        store.delete(first.id)
        assert [r["id"] for r in store.runs()] == [second.id]
        with pytest.raises(StoreError, match=f"^no run '{first.id}' in this store"):
            store.load(first.id)
        with pytest.raises(StoreError, match="^no run 'gone' in this store"):
            store.delete("gone")
    # the CLI sees what Python stored
    res = cli("why", second.id, ",".join(f"{l}:{i}" for l, i in second.result.discarded_paths[0]), "--store", store_uri.uri, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["verified"] is True


def test_a_read_only_store_refuses_writes_and_shares_with_readers(tmp_path):
    uri = str(tmp_path / "store")
    with open_store(uri, create=True) as store:
        store.run(Network([2, 2, 2]))
    with open_store(uri, read_only=True) as a, open_store(uri, read_only=True) as b:
        assert len(a.runs()) == len(b.runs()) == 1
        with pytest.raises(StoreError):
            a.query("CREATE (:Network {key: 'x'})")
    with open_store(uri) as writer:
        with pytest.raises(StoreLocked):
            open_store(uri, read_only=True)
        assert writer.runs()


# --- errors ----------------------------------------------------------------------------------


def test_every_refusal_is_a_basispath_error_of_its_kind():
    from basispath_graph.analysis.why import WhyError
    from basispath_graph.deah.step1_substructures import TooManySubstructures
    from basispath_graph.guards import ResourceLimit
    from basispath_graph.presets import PresetError
    from basispath_graph.show.model import ShowError
    from basispath_graph.spec import SpecError
    from basispath_graph.store.base import WriteRefused
    from basispath_graph.torch_import import TorchImportError
    from basispath_graph.verify import DependentBasisError, InvalidPathError

    kinds = {
        SpecError: BadInput, PresetError: BadInput, WhyError: BadInput, ShowError: BadInput, TorchImportError: BadInput,
        InvalidPathError: BadInput, InvalidNetwork: BadInput, ResourceLimit: LimitExceeded, TooManySubstructures: LimitExceeded,
        WriteRefused: StoreError, StoreLocked: StoreError, StoreUnavailable: StoreError, DependentBasisError: NotCertified,
    }
    for cls, kind in kinds.items():
        assert issubclass(cls, kind) and issubclass(cls, BasispathError), cls


def test_the_cli_maps_each_kind_to_one_exit_code():
    assert [exit_code(e) for e in (
        BadInput("x"), LimitExceeded("x"), StoreError("x"), StoreUnavailable("x"), StoreLocked("x"), NotCertified("x"),
        RuntimeError("x"),
    )] == [2, 2, 2, 3, 3, 1, 70]
    assert all(issubclass(kind, BasispathError) for kind, _ in EXIT_CODES)


def test_a_refusal_raised_deep_inside_a_command_is_one_line_with_its_exit_code(tmp_path, monkeypatch):
    # no command catches a StoreLocked raised by the engine: main() maps it (exit 3), no traceback
    import basispath_graph.solver as solver

    def locked(*args, **kwargs):
        raise StoreLocked("held elsewhere")

    monkeypatch.setattr(solver, "run_deah", locked)
    from basispath_graph.cli.main import main

    spec = tmp_path / "fig1b.json"
    spec.write_text(json.dumps(FIG1B))
    monkeypatch.setattr("sys.argv", ["basispath", "solve", str(spec), "-q"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 3


def test_readme_python_example_runs_as_written(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- tested as written: tests/test_python_api.py -->\n```python\n(.*?)^```", readme, re.M | re.S)
    assert block, "the README's Python example is gone"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)  # noqa: S102 - our own README
    assert namespace["result"].certified and (tmp_path / "basispath-store").is_dir()
    # the values its comments quote
    net, result, why, faithful = (namespace[k] for k in ("net", "result", "why", "faithful"))
    assert (net.m, net.H, net.basis_size) == (271690, 448, 271242)
    assert (result.certified, result.repairs_needed, len(result.discarded)) == (True, 0, 47776)
    assert (why["reason"]["step"], why["verified"]) == ("prefix", True)
    assert (faithful.raw_verdict.defect, faithful.repairs_needed, faithful.certified) == ("size 140 != m - H = 130", 10, True)
    run = namespace["run"]
    assert run.certified and run.basis_size == 130
    with open_store(str(tmp_path / "basispath-store"), read_only=True) as store:
        assert store.why(run.id, "0:0,1:1,2:1,3:1,5:1")["status"] == "discarded"
        assert store.query("MATCH (:Run {id: $run})-[:DISCARDED]->(b) RETURN count(b) AS n", run=run.id) == [{"n": 90}]
