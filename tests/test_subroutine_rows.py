"""Subroutine's B_r by index (``deah/subroutine_rows.py``) against Subroutine's own listing, and
an ear's kept rows and discards by index arithmetic against deah-complete's Step 3."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from basispath_graph import guards
from basispath_graph.choices import ChoiceRule
from basispath_graph.deah.engine import run_deah
from basispath_graph.deah.subroutine import subroutine
from basispath_graph.deah.subroutine_rows import KeptRows, SubroutineRows, ear_rows
from basispath_graph.solver import solve

from .strategies import networks


@settings(max_examples=60, deadline=None)
@given(net=networks(max_layers=6, max_width=5), seed=st.integers(0, 3), data=st.data())
def test_every_row_is_subroutines_row(net, seed, data):
    rule = ChoiceRule(net.widths, seed)
    inner = data.draw(st.lists(st.integers(1, net.L - 1), unique=True)) if net.L > 1 else []
    layers = (0, *sorted(inner), net.L)
    listed = subroutine(net, layers, rule)
    rows = SubroutineRows(net, layers, rule)
    assert len(rows) == len(listed)
    assert np.array_equal(rows.take(np.arange(len(rows))).nodes, listed.nodes)
    picked = data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=8))
    assert np.array_equal(rows.take(picked).nodes, listed.nodes[picked].reshape(-1, len(layers)))
    for position, layer in enumerate(layers):  # p*(v): the row of the predecessor walk to v
        walks = rows.backward(position, np.arange(net.widths[layer]))
        if position == len(layers) - 1:
            continue
        made = rows.take(rows.pstar[position]).nodes[:, : position + 1]
        assert np.array_equal(made, walks)
        # the direct walks on from every neuron: the all-direct rows from layer 0 follow them
        onward = rows.forward(position, np.arange(net.widths[layer]))
        assert onward.shape == (net.widths[layer], len(layers) - position)
        direct = rows.take(np.arange(net.widths[layers[0]])).nodes  # section 0: the all-direct paths
        assert np.array_equal(onward[direct[:, position]], direct[:, position:])


@settings(max_examples=60, deadline=None)
@given(net=networks(max_layers=6, max_width=5), seed=st.integers(0, 3), data=st.data())
def test_a_column_is_the_made_rows_column(net, seed, data):
    """``column`` reads one layer's neurons of any rows (in any order, repeated) without making
    them, and a ``KeptRows`` view of some rows reads and makes exactly those rows."""
    rule = ChoiceRule(net.widths, seed)
    inner = data.draw(st.lists(st.integers(1, net.L - 1), unique=True)) if net.L > 1 else []
    layers = (0, *sorted(inner), net.L)
    rows = SubroutineRows(net, layers, rule)
    made = rows.nodes
    picked = np.array(data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=12)), dtype=np.int64)
    for k in range(len(layers)):
        assert np.array_equal(rows.column(k, np.arange(len(rows))), made[:, k])
        assert np.array_equal(rows.column(k, picked), made[picked, k])
    kept = np.unique(picked)
    view = KeptRows(rows, kept)
    at = np.arange(len(kept))[::2]
    part = view.view(at)
    assert np.array_equal(part.take(slice(None)).nodes, made[kept[at]])
    assert all(np.array_equal(part.column(k), made[kept[at], k]) for k in range(len(layers)))
    whole = KeptRows(rows)  # every row: B_0
    assert np.array_equal(whole.view(slice(1, 3)).column(0), made[1:3, 0])


@settings(max_examples=60, deadline=None)
@given(net=networks(max_layers=6, max_width=5), seed=st.integers(0, 3))
def test_an_ears_kept_rows_and_discards_are_step_3s(net, seed):
    deah = run_deah(net, seed, complete=True)
    step3 = deah.step3
    rule = ChoiceRule(net.widths, seed)
    discards = {}
    for part in step3.discards.part_arrays():
        discards.setdefault(part.substructure, []).append(part)
    for idx in step3.order:
        if step3.rules[idx] != "ear":
            continue
        rows = SubroutineRows(net, deah.bases[idx].layers, rule)
        ear = ear_rows(rows, step3.new_hops[idx][0])
        assert np.array_equal(ear.kept, np.flatnonzero(step3.alive[idx]))
        (part,) = discards.get(idx, [None]) if ear.discard_count else (None,)
        if part is None:
            assert ear.discard_count == 0
            continue
        order = np.argsort(part.rows)
        assert np.array_equal(ear.discard_rows(), part.rows[order])
        steps = np.where(ear.discard_rows() < ear.first_suffix, "prefix", "suffix")
        assert list(steps) == list(part.steps[order])
        assert np.array_equal(ear.twins(rows.take(ear.discard_rows())), part.twins[order])
        lo, hi = min(2, ear.discard_count), min(5, ear.discard_count)
        assert np.array_equal(ear.discard_rows(lo, hi), ear.discard_rows()[lo:hi])


@settings(max_examples=40, deadline=None)
@given(net=networks(max_layers=5, max_width=4), seed=st.integers(0, 2), chunk=st.integers(1, 7), described=st.booleans())
def test_discards_read_in_chunks_are_the_discards(net, seed, chunk, described):
    """``DiscardTable.row_runs`` (the discards' rows part by part, never all at once) cut at any
    size gives every discard's substructure and row in table order, a run never mixing two
    substructures; the lazy blocks (``KeptRows`` views of a described B_r) read and make
    exactly the blocks ``iter_blocks`` makes."""
    was = guards.DESCRIBED_ABOVE
    guards.DESCRIBED_ABOVE = 0 if described else was
    try:
        discarded = solve(net, engine="deah-complete", seed=seed).discarded
    finally:
        guards.DESCRIBED_ABOVE = was
    table = discarded.table
    runs = list(table.row_runs(chunk))
    assert all(0 < len(rows) <= chunk for _, rows in runs)
    if runs:
        assert np.array_equal(np.concatenate([rows for _, rows in runs]), table.rows())
        assert np.array_equal(np.concatenate([np.full(len(rows), sub) for sub, rows in runs]), table.substructures())
    made, lazy = list(discarded.iter_blocks(chunk)), list(discarded.iter_blocks(chunk, lazy=True))
    assert len(made) == len(lazy) == len(runs)
    for block, view in zip(made, lazy):
        assert np.array_equal(view.take(slice(None)).nodes, block.nodes)
        assert all(np.array_equal(view.column(k), block.nodes[:, k]) for k in range(len(block.layers)))
