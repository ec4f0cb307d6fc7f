"""Algorithm DEAH end to end (paper, Section 4): Step 1, Step 2 (Subroutine per selected
substructure), Step 3; returns the raw union B and every intermediate artifact."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock
from .subroutine import subroutine
from ..guards import MEMORY, MEMORY_ENV, SECONDS, TIME_ENV, candidate_features, check_memory, check_time, describes
from ..timing import StageTimer
from .step1_substructures import DEFAULT_MAX_SUBSTRUCTURE_PATHS, Step1Result, run_step1
from .step3_complete import CompleteStep3, run_step3_complete
from .subroutine_rows import KeptRows, SubroutineRows
from .step3_sdvchain import Relations, Step3Result, run_step3

__all__ = ["DeahResult", "run_deah"]


@dataclass
class DeahResult:
    network: Network
    seed: int
    step1: Step1Result
    bases: dict[int, PathBlock]  # B_r per selected substructure idx (Step 2)
    step3: Step3Result
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def order(self) -> list[int]:
        """Selection order (deah), or the ear order of Step 3 (deah-complete)."""
        return getattr(self.step3, "order", None) or self.step1.selected

    @property
    def rows_described(self) -> bool:
        """Whether the B_r are held as their description (``SubroutineRows``), not listed:
        always for faithful deah, for deah-complete above ``guards.DESCRIBED_ABOVE``."""
        return any(isinstance(b, SubroutineRows) for b in self.bases.values())

    @property
    def described(self) -> bool:
        """Whether this is a described deah-complete run: its B_r described and its Step 3 the
        ear plan (``CompleteStep3``), so kept rows, discards and certificates follow from the
        description by index arithmetic (``solver.described_result``, the store's described runs)."""
        return self.rows_described and isinstance(self.step3, CompleteStep3)

    def kept_blocks(self) -> list[tuple[int, PathBlock]]:
        """The raw union as (substructure idx, B'_r) in ``order`` (described B_r: ``KeptRows``,
        each row made when read)."""
        if self.rows_described:
            alive = self.step3.alive
            return [(idx, KeptRows(self.bases[idx], None if alive[idx].all() else np.flatnonzero(alive[idx]))) for idx in self.order]
        return [(idx, self.bases[idx].take(self.step3.alive[idx])) for idx in self.order]


def run_deah(
    network: Network,
    seed: int = 0,
    max_substructures: int = DEFAULT_MAX_SUBSTRUCTURE_PATHS,
    relations: Callable[[Step1Result], Relations] | None = None,
    timer: StageTimer | None = None,
    memory_limit: int | None = None,
    complete: bool = False,
    time_limit: float | None = None,
    on_step1: Callable[[Step1Result], None] | None = None,
) -> DeahResult:
    """Run Steps 1-3 of DEAH faithfully; no certification or repair here (see ``solve``).

    ``complete`` replaces Step 3 by the hop-ownership rule of ``deah-complete``
    (``step3_complete``; docs/deah-complete.md).

    ``on_step1`` is given Step 1's result once Step 2 is done (a stored run persists P^S
    there and lets Cypher derive the subdivision and shared-edge relations, for both engines).
    ``relations`` (deah only) then builds the relations SDVChain uses from Step 1's result,
    e.g. read back from the store (default: computed in memory). Both are timed as the stage
    "relations", apart from Step 3.
    """
    timer = timer or StageTimer()
    with timer.stage("step1"):
        step1 = run_step1(network, max_substructures)
    candidates, layers, *later = candidate_features(network, step1)
    described = complete and describes(network, step1)
    engine = "deah-complete described" if described else "deah-complete" if complete else "deah"
    later = (0, 0) if complete else tuple(later)  # only faithful deah's models read the later candidates (guards.features)
    what = f"{engine.split()[0]} ({candidates:,} candidate paths in the B_r of {len(step1.selected)} substructures)"
    check_time(
        what,
        SECONDS[engine], network.m, candidates,
        time_limit,
        f"use --engine skeleton or raise --max-seconds / {TIME_ENV}",
        candidate_layers=layers, later=later,
    )
    if memory_limit is not None:
        check_memory(
            what,
            MEMORY[engine], network.m, candidates,
            memory_limit,
            f"use --engine skeleton or raise --max-memory-gb / {MEMORY_ENV}",
            candidate_layers=layers, later=later,
        )
    with timer.stage("step2"):
        rule = ChoiceRule(network.widths, seed)  # one rule for every substructure (Claim 1)
        # described: each row made from its index when read. Faithful deah's SDVChain reads
        # its B_r a column at a time (ResNet-18's 6 M candidate paths listed were 841 MB).
        make = SubroutineRows if described or not complete else subroutine
        bases = {idx: make(network, step1.paths[idx].layers, rule) for idx in step1.selected}
    rel = None
    if on_step1 is not None or (relations is not None and not complete):
        with timer.stage("relations"):
            if on_step1 is not None:
                on_step1(step1)
            if relations is not None and not complete:  # deah-complete's Step 3 needs none
                rel = relations(step1)
    with timer.stage("step3"):
        if complete:
            step3 = run_step3_complete(network, step1, bases, rule)
        else:
            step3 = run_step3(network, step1, bases, rel)
    return DeahResult(network, seed, step1, bases, step3, timer.timings)
