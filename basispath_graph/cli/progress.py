"""Progress of long solves and store writes: a rich spinner per stage on a terminal; for ``run``
in a log (stderr not a terminal), one plain line per stage."""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

#: In a log, a stage still running after this many seconds says so again (with its rows so far)
#: each time a batch of rows is written.
HEARTBEAT_S = 15.0


class StageProgress:
    """Adapter for solve stages and store writes: ``stage(name)`` then optionally ``advance(rows)``;
    the pipeline also calls ``start_run(run_id, resumed)`` once its run is in the store.

    ``enabled``: the spinner, when stderr is a terminal. ``lines``: when stderr is not a
    terminal, a line as each stage ends, e.g. ``run 3fa2c1d0: step1 ... 0.4 s`` or
    ``run 3fa2c1d0: writing basis paths ... 3.1 s, 56688 rows`` (a stage that wrote rows is a
    write), and every HEARTBEAT_S seconds of a long write; a stage that ends in an error prints
    nothing (the error says what happened: a run refused in its first stage leaves no line).
    """

    def __init__(self, enabled: bool, verb: str = "writing", lines: bool = False):
        self._verb = verb
        self._progress = None
        terminal = sys.stderr.isatty()
        if enabled and terminal:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed} rows"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
        self._lines = lines and not terminal
        self._task = None
        self._stage: str | None = None  # the stage now running, its start, its rows, the last line's time
        self._began = self._said = 0.0
        self._rows = 0
        self.run_id: str | None = None  # the run being written, once it is in the store

    def start_run(self, run_id: str, resumed: bool) -> None:
        """The pipeline's run RUN_ID is in the store (new, or RESUMED): lines name it, and an
        interrupted command can too."""
        self.run_id = run_id

    def __enter__(self):
        if self._progress:
            self._progress.start()
        return self

    def __exit__(self, kind, *exc):
        if self._progress:
            self._progress.stop()
        if kind is None:
            self._end_stage()
        self._stage = None

    def stage(self, name: str) -> None:
        if self._progress:
            if self._task is not None:
                self._progress.update(self._task, visible=False)
            self._task = self._progress.add_task(f"{self._verb} {name}", total=None)
        self._end_stage()
        self._stage, self._began, self._rows = name, time.monotonic(), 0
        self._said = self._began

    def advance(self, rows: int) -> None:
        if self._progress and self._task is not None:
            self._progress.advance(self._task, rows)
        self._rows += rows
        if self._stage is not None and time.monotonic() - self._said >= HEARTBEAT_S:
            self._say_stage(" so far")

    def _end_stage(self) -> None:
        if self._stage is not None:
            self._say_stage("")

    def _say_stage(self, suffix: str) -> None:
        now = time.monotonic()
        label = f"writing {self._stage}" if self._rows else self._stage
        rows = f", {self._rows} rows" if self._rows else ""
        self._say(f"{label} ... {now - self._began:.1f} s{suffix}{rows}")
        self._said = now

    def _say(self, text: str) -> None:
        if self._lines:
            print(f"run {self.run_id}: {text}" if self.run_id else f"run: {text}", file=sys.stderr, flush=True)
