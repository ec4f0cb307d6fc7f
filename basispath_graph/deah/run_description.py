"""A described deah-complete run as data (``describe``): its choice rule (per core layer, the
neurons by rank), Step 1's selected routes and one ``BlockRow`` per block of the ear order (what a
rebuilt run must match). ``deah/described_run.py`` rebuilds the run from it; the store
(``store/described_deah.py``) and the described file (``deah/described_file.py``) spell it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BlockRow", "RunDescription", "DescriptionMismatch", "describe", "block_rows", "show_block"]


class DescriptionMismatch(ValueError):
    """The rows do not describe the run they claim (a damaged store or file, another version)."""


@dataclass(frozen=True)
class BlockRow:
    """One block of the ear order: its substructure (idx), rule ("p0" or "ear"), new hop (core
    layers; () for p_0), its kept paths (``kept_first`` ..) and its discards (``discard_first``
    .. in Step 3's order, counted from the run's first discard; the first ``prefix`` "prefix")."""

    substructure: int
    rule: str
    hop: tuple[int, ...]
    kept_first: int
    kept: int
    discard_first: int
    discards: int
    prefix: int


@dataclass
class RunDescription:
    seed: int
    orders: list[np.ndarray]  # per core layer, its neurons by rank
    selected: list[tuple[int, tuple[int, ...]]]  # (idx, core layers) in Step 1's selection order, p_0 first
    blocks: list[BlockRow]  # in the ear order


def block_rows(layered) -> list[BlockRow]:
    step3 = layered.deah.step3
    rows, kept_first, discard_first = [], 0, 0
    for idx, kept in zip(step3.order, layered.basis):
        ear = step3.ears.get(idx)
        discards = ear.discard_count if ear is not None else 0
        rows.append(BlockRow(int(idx), step3.rules[idx], tuple(step3.new_hops[idx][0]) if ear is not None else (), kept_first,
                             len(kept), discard_first, discards, ear.prefix_count if ear is not None else 0))
        kept_first += len(kept)
        discard_first += discards
    return rows


def describe(layered) -> RunDescription:
    """The description of a described layered run (a layered network's, or a general one's core)."""
    deah = layered.deah
    rule = next(iter(deah.step3.described.values())).rule  # listed or described B_r: the one shared rule
    selected = [(int(idx), tuple(deah.step1.paths[idx].layers)) for idx in deah.step1.selected]
    return RunDescription(deah.seed, rule.orders, selected, block_rows(layered))


def show_block(row: BlockRow) -> str:
    return (f"substructure {row.substructure} ({row.rule}, hop {list(row.hop)}): kept {row.kept_first} + {row.kept},"
            f" discards {row.discard_first} + {row.discards} ({row.prefix} prefix)")
