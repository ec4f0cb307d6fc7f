"""Paths of a described DEAH run found by index arithmetic (``Result.why``, a stored run's ``why``):
a core path is a row of its route's B_r, named by its last cross edge (``SubroutineRows.row_of``),
so whether it was kept (and its basis index) or discarded (and its place among the discards)
needs no search; a tap-lift path is its weight's template with the tap changed, found from the
weight; only the explicit paths (extra layers, identity forest: a few per neuron) are scanned."""

from __future__ import annotations

import numpy as np

from .blocks import GeneralBlock

__all__ = ["ABSENT", "core_path", "described_core_lookup", "described_lookup", "lift_terms"]

#: A path a described run neither kept nor discarded (never a candidate): no search is needed.
ABSENT = ("absent", None)


def core_path(result, target) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """A general path as a path of a DEAH result's core (core layer positions, neuron indices),
    or None when it is not one (a tap other than 0, a layer off the core)."""
    nodes, taps = target
    position = {name: k for k, name in enumerate(result.parts["core_layers"])}
    names = [result.network.layers[l].name for l, _ in nodes]
    if any(t != 0 for t in taps) or any(n not in position for n in names):
        return None
    return tuple(position[n] for n in names), tuple(int(i) for _, i in nodes)


def _described(layered) -> bool:
    deah = getattr(layered, "deah", None)
    return deah is not None and deah.described and not layered.repairs


def described_lookup(layered, layers, indices) -> tuple[str, int | None] | None:
    """A path of a described layered run (``deah.described``): ("kept", basis index),
    ("discarded", discard number) or ``ABSENT``; None when the run is not described (the caller
    searches as for any run)."""
    if not _described(layered):
        return None
    layers, indices = tuple(int(l) for l in layers), tuple(int(i) for i in indices)
    step3 = layered.deah.step3
    start = 0
    for k, idx in enumerate(step3.order):
        rows = step3.described[idx]
        if rows.layers == layers:
            row = rows.row_of(indices)
            if row is None:
                return ABSENT
            if idx not in step3.ears:  # B_0: kept whole
                return "kept", start + row
            ear = step3.ears[idx]
            kept = ear.kept
            at = int(np.searchsorted(kept, row))
            if at < len(kept) and kept[at] == row:
                return "kept", start + at
            return "discarded", _discard_number(step3.discards, idx, ear, row)
        start += len(layered.basis[k])
    return ABSENT


def described_core_lookup(result, target) -> tuple[str, int | None] | None:
    """For a described general DEAH run, any general path found without listing the basis:
    ("kept", basis index), ("discarded", discard number) or ``ABSENT``; None when the run is not
    described. ``why`` on ResNet-50 answers so in milliseconds, not by scanning 25 M kept and
    49 M discarded paths."""
    core = result.core
    if core is None or not _described(core):
        return None
    found = core_path(result, target)
    if found is not None:
        return described_lookup(core, *found)
    lifted = _tap_lift_index(result, target)
    if lifted is not None:
        return lifted
    from .paths import find_general_path

    start = 0
    for part in result.basis.parts:  # core and tap lift are made parts, the rest listed
        if isinstance(part, GeneralBlock):
            at = find_general_path(result.network, [part], target)
            if at is not None:
                return "kept", start + at
            start += len(part)
        else:
            start += part.size
    return ABSENT


def _tap_lift_index(result, target) -> tuple[str, int] | None:
    """A path with tap t > 0 on one core hop and 0 elsewhere is kept iff it is the tap lift of
    that weight: its template (the first kept path through the weight) with tap t there."""
    nodes, taps = target
    lift = [t for t in taps if t not in (0, None)]
    if len(lift) != 1 or None in taps:
        return None
    hop = list(taps).index(lift[0])
    zeroed = (nodes, tuple(0 if k == hop else t for k, t in enumerate(taps)))
    found = core_path(result, zeroed)
    if found is None:
        return None
    layers, indices = found
    lifted = lift_terms(result, tuple(layers[hop: hop + 2]), indices[hop], indices[hop + 1], lift[0])
    if lifted is None:
        return ABSENT
    return ("kept", lifted[0]) if _same_path(result.basis_path(lifted[0]), target) else ABSENT


def lift_terms(result, pair: tuple[int, int], u: int, v: int, t: int) -> tuple[int, int] | None:
    """(basis index of lift(u, v, t), basis index of its template) for the core pair ``pair``."""
    core = result.core
    block_start = np.concatenate([[0], np.cumsum([len(b) for b in core.basis])])
    start = 0
    for part in result.basis.parts:
        if isinstance(part, GeneralBlock):
            start += len(part)
            continue
        rows = getattr(part, "rows", None)
        if rows is not None and tuple(part.source.layers[part.hop: part.hop + 2]) == pair:
            if not 0 < t < part.taps:
                return None
            w = u * part.setting.core.widths[pair[1]] + v
            k = next(i for i, b in enumerate(core.basis) if b is part.source)
            return start + w * (part.taps - 1) + t - 1, int(block_start[k] + rows[w])
        start += part.size
    return None


def _same_path(a, b) -> bool:
    (na, ta), (nb, tb) = a, b
    return [tuple(map(int, n)) for n in na] == [tuple(map(int, n)) for n in nb] and list(ta) == list(tb)


def _discard_number(table, idx: int, ear, row: int) -> int:
    """Place in the discard table of an ear's discarded row (prefix ones ascending, then suffix)."""
    if row >= ear.first_suffix:
        within = ear.prefix_count + row - ear.first_suffix
    else:
        within = row - int(np.searchsorted(np.sort(ear.rows.pstar[ear.j]), row))
    for p, part in enumerate(table._parts):
        if part.idx == idx:
            return table._starts[p] + within
    raise KeyError(idx)
