"""Counts of cases run by the reliability tests, printed at the end of the pytest session.

Any test in tests/reliability may call :func:`record` (e.g. ``record("fuzz: spec files", 1)``
per hypothesis example, or ``record("kill points", n)`` once); entries with the same name are
added up, and ``tests/reliability/conftest.py`` prints every entry and the total in pytest's
terminal summary. The dict lives for the whole session (module state; pytest imports this
module once).
"""

from __future__ import annotations

import threading

__all__ = ["RELIABILITY_COUNTS", "record", "total"]

#: name -> number of cases run under that name during this pytest session.
RELIABILITY_COUNTS: dict[str, int] = {}
_lock = threading.Lock()


def record(name: str, n: int = 1) -> None:
    """Add N cases to the entry NAME (created at 0)."""
    with _lock:
        RELIABILITY_COUNTS[name] = RELIABILITY_COUNTS.get(name, 0) + int(n)


def total(prefix: str = "") -> int:
    """Sum of the entries whose names start with PREFIX (all of them by default)."""
    with _lock:
        return sum(v for k, v in RELIABILITY_COUNTS.items() if k.startswith(prefix))
