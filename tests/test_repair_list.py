"""The repair's records with the drops spelled when read (deah/repair_list.py) read as the list
of records they replace: every drop names a union path the basis lacks, row by row, and
indexing, slicing, iteration, counts and equality agree."""

from collections import Counter
from pathlib import Path

from hypothesis import given, settings, strategies as st

from basispath_graph import solve
from basispath_graph.deah.repair_list import RepairList, SpelledRun, repair_counts, repairs_that_keep
from basispath_graph.export import union_fields
from basispath_graph.result import Repair
from basispath_graph.api import load_spec
from tests.strategies import networks

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _paths(blocks):
    return {(tuple(b.layers), tuple(row)) for b in blocks for row in b.nodes.tolist()}


def test_resnet_style_drops_are_read_lazily():
    result = solve(load_spec(EXAMPLES / "resnet-style.json"), "deah")
    assert isinstance(result.repairs, RepairList) and isinstance(result.repairs.parts[0], SpelledRun)
    assert repair_counts(result.repairs) == Counter({"drop": 10})
    _check(result)


@given(networks(), st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_drops_read_lazily_are_the_union_paths_the_basis_lost(net, seed):
    _check(solve(net, "deah", seed=seed))


def _check(result):
    repairs = result.repairs
    records = list(repairs)
    assert len(repairs) == len(records) == result.repairs_needed
    assert repairs == records and records == list(repairs)  # equal to the list, both ways
    assert [repairs[k] for k in range(len(repairs))] == records == repairs[:]
    assert [repairs[-k] for k in range(1, len(records) + 1)] == records[::-1]
    assert repair_counts(repairs) == Counter(r.action for r in records)
    assert list(repairs_that_keep(repairs)) == [r for r in records if r.action != "drop"]
    assert union_fields(result)["repairs_by_action"] == {a: sum(r.action == a for r in records) for a in ("drop", "readmit", "add")}
    basis = _paths(result.basis)
    union = {(tuple(b.layers), tuple(row)) for idx, b in result.deah.bases.items() for row in b.take(range(len(b))).nodes[result.deah.step3.alive[idx]].tolist()}
    for r in records:
        assert isinstance(r, Repair)
        if r.action == "drop":
            assert (r.layers, r.indices) in union and (r.layers, r.indices) not in basis
        else:
            assert (r.layers, r.indices) in basis


def test_a_repair_list_keeps_the_order_of_its_parts():
    class Block:
        layers = (0, 1)

        def take(self, rows):
            return [(0, int(r)) for r in rows]

    import numpy as np

    def drop(key):
        return lambda made, k: Repair("drop", Block.layers, made[k], key)

    out = RepairList()
    out.add_run(SpelledRun(Block(), np.array([5, 7]), drop(3)))
    readmit = Repair("readmit", (0, 1), (1, 1), 4)
    out.append(readmit)
    out.add_run(SpelledRun(Block(), np.array([2]), drop(4)))
    expected = [Repair("drop", (0, 1), (0, 5), 3), Repair("drop", (0, 1), (0, 7), 3), readmit, Repair("drop", (0, 1), (0, 2), 4)]
    assert out == expected and len(out) == 4 and out[2] is readmit and out[3] == expected[3] and out[1:3] == expected[1:3]
    assert out != expected[:3] and RepairList() == [] and RepairList() != [readmit]
    assert list(repairs_that_keep(out)) == [readmit] and repair_counts(out) == Counter({"drop": 3, "readmit": 1})
