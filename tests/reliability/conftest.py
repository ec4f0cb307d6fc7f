"""Reliability tests: print what tests/reliability/counts.py recorded at the end of the run."""

from __future__ import annotations

from .counts import RELIABILITY_COUNTS


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not RELIABILITY_COUNTS:
        return
    terminalreporter.section("reliability case counts")
    for name in sorted(RELIABILITY_COUNTS):
        terminalreporter.write_line(f"{name}: {RELIABILITY_COUNTS[name]}")
    fuzz = sum(v for k, v in RELIABILITY_COUNTS.items() if k.startswith("fuzz"))
    if fuzz:
        terminalreporter.write_line(f"fuzz cases run: {fuzz}")
    terminalreporter.write_line(f"total cases run: {sum(RELIABILITY_COUNTS.values())}")
