"""``Result.why`` and a stored run's ``why`` give one answer, on layered and general networks.

A notebook user asks the solve; a terminal user asks the store. Both answers must agree on
every path of the run: status, id (kept paths by basis index, then the discards in order),
substructure (its layers), the reason (a rule's with its action, a repair's with its detail, a
re-admitted path's repair with the SDVChain call it undid as ``earlier``), the certificate
(terms with their basis index) and the verdict. Only ``run`` differs: a solve has none. Checked on
both backends, every engine that solves a layered network, with repairs (faithful deah
re-admits a path of densenet-style and drops paths of resnet-style) and on paths the run never had as
candidates. resnet-style has 6,300 paths: its run's kept and discarded ones are asked, and every
20th of the rest. On a general network (taps, a skip, an identity shortcut, a bias; and a
layer DAG core) the same holds with substructures by their layers' names and certificate terms
with their text and id, on every path of the network (the brute-force oracle's enumeration):
deah-complete and faithful deah on a layered core and on a layer DAG core (one whose repair
re-admits SDVChain discards too), and the skeleton.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from basispath_graph import api, load_general, open_store
from basispath_graph.network import Network
from basispath_graph.verify import format_path

from .oracle import enumerate_paths
from .test_dag_deah_store import FIRE
from .test_dag_sdvchain import READMIT
from .test_described_deah_store import GENERAL
from .test_general_networks import oracle_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CASES = [("fig1b.json", "deah"), ("resnet-style.json", "deah"), ("densenet-style.json", "deah"), ("resnet-style.json", "deah-complete"),
         ("densenet-style.json", "deah-complete"), ("fig1b.json", "skeleton")]
EVERY = {"resnet-style.json": 20}


def all_paths(net: Network) -> list[str]:
    """Every input-output path of a small layered network, as text (the oracle's enumeration)."""
    return [format_path([l for l, _ in p], [i for _, i in p]) for p in enumerate_paths(net.widths, net.pairs)]


@pytest.mark.parametrize("spec,engine", CASES)
def test_the_solve_and_its_stored_run_answer_why_alike_on_every_path(store_uri, spec, engine):
    net = api.load_spec(EXAMPLES / spec)
    result = api.solve(net, engine=engine)
    with open_store(str(store_uri), create=True) as store:
        run = store.run(net, engine=engine)
        seen = set()
        run_paths = [format_path([l for l, _ in p], [i for _, i in p]) for p in [*run.basis_paths, *run.discarded_paths]]
        for text in dict.fromkeys(run_paths + all_paths(net)[:: EVERY.get(spec, 1)]):
            mine, theirs = result.why(text), store.why(run.id, text)
            assert theirs["run"] == run.id and mine["run"] is None
            if theirs["status"] == "not a candidate":  # the store's terms also name the kept path's id
                assert all(t.pop("id") == t["index"] for t in theirs["certificate"])
            assert mine == {**theirs, "run": None}, text
            seen.add(mine["status"] if mine["reason"]["step"] != "repair" else f"{mine['status']} by repair")
    assert {"kept", "discarded"} <= seen or engine == "skeleton"
    if engine == "deah":  # the repair's answers were asked too
        assert {"fig1b.json": "not a candidate", "resnet-style.json": "discarded by repair", "densenet-style.json": "kept by repair"}[spec] in seen


GENERAL_CASES = [("general", GENERAL, "deah-complete"), ("general", GENERAL, "deah"), ("general", GENERAL, "skeleton"),
                 ("layer DAG", FIRE, "deah-complete"), ("layer DAG", FIRE, "deah"), ("re-admitting layer DAG", READMIT, "deah")]


@pytest.mark.parametrize("name,spec,engine", GENERAL_CASES, ids=[f"{n}-{e}" for n, _, e in GENERAL_CASES])
def test_a_general_solve_and_its_stored_run_answer_why_alike_on_every_path(store_uri, name, spec, engine):
    net = load_general(spec)
    result = api.solve(net, engine=engine)
    seen = set()
    with open_store(str(store_uri), create=True) as store:
        run = store.run(net, engine=engine)
        for nodes, taps in oracle_paths(spec):
            path = {"nodes": [[layer, i] for layer, i in nodes], "taps": list(taps)}
            mine, theirs = result.why(path), store.why(run.id, path)
            assert theirs["run"] == run.id and mine["run"] is None
            assert mine == {**theirs, "run": None}, path
            seen.add((mine["status"], mine["substructure"] is not None))
    # a layer DAG core's deah-complete basis is a skeleton of its ears' designations: no kept path has a substructure
    kept = ("kept", False) if (name, engine) == ("layer DAG", "deah-complete") else ("kept", True)
    assert ({kept, ("discarded", True), ("not a candidate", False)} <= seen) if engine != "skeleton" else seen == {("kept", False), ("not a candidate", False)}
