"""Named, timed stages: one place that records seconds per step and tells an observer (progress)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager

from .heap import release_free_memory

__all__ = ["StageTimer", "STEP_ORDER"]

#: The stages of a solve and a run, in the order they happen (tables and plots list times so).
STEP_ORDER = ["step1", "step2", "relations", "step3", "engine", "certify", "repair", "certificates", "persist_substructures", "persist"]


class StageTimer:
    """``with timer.stage("step1"): ...`` adds the elapsed seconds to ``timings["step1"]``.

    ``on_stage(name)`` is called as each stage starts (a CLI shows it as progress). Each stage
    ends by handing the memory it freed back to the system (``heap.release_free_memory``): the
    next stage's peak starts from what is live, not from what the last one left in the heap.
    """

    def __init__(self, timings: dict[str, float] | None = None, on_stage: Callable[[str], None] | None = None):
        self.timings = timings if timings is not None else {}
        self.on_stage = on_stage

    @contextmanager
    def stage(self, name: str):
        if self.on_stage:
            self.on_stage(name)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            release_free_memory()
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0
