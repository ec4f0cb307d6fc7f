"""Progress display for long store writes: a rich spinner per stage on a terminal, nothing otherwise."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class StageProgress:
    """Adapter for solve stages and store writes: ``stage(name)`` then optionally ``advance(rows)``."""

    def __init__(self, enabled: bool, verb: str = "writing"):
        self._verb = verb
        self._progress = None
        if enabled and sys.stderr.isatty():
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed} rows"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
        self._task = None
        self.run_id: str | None = None  # the run being written, once it is in the store

    def start_run(self, run_id: str, resumed: bool) -> None:
        """The pipeline's run RUN_ID is in the store (new, or RESUMED): an interrupted command
        can name it."""
        self.run_id = run_id

    def __enter__(self):
        if self._progress:
            self._progress.start()
        return self

    def __exit__(self, *exc):
        if self._progress:
            self._progress.stop()

    def stage(self, name: str) -> None:
        if self._progress:
            if self._task is not None:
                self._progress.update(self._task, visible=False)
            self._task = self._progress.add_task(f"{self._verb} {name}", total=None)

    def advance(self, rows: int) -> None:
        if self._progress and self._task is not None:
            self._progress.advance(self._task, rows)
