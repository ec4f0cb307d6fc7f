"""Subroutine's B_r by index (``deah/subroutine_rows.py``) against Subroutine's own listing, and
an ear's kept rows and discards by index arithmetic against deah-complete's Step 3."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from basispath_graph.choices import ChoiceRule
from basispath_graph.deah.engine import run_deah
from basispath_graph.deah.subroutine import subroutine
from basispath_graph.deah.subroutine_rows import SubroutineRows, ear_rows

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
