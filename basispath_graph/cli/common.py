"""Shared CLI pieces: the one-line error convention and spec loading."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..guards import MEMORY_ENV, TIME_ENV, ResourceLimit, memory_limit_bytes, time_limit_seconds
from ..network import Network
from ..spec import SpecError, load_spec

EXIT_NOT_CERTIFIED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70  # a bug: sysexits' EX_SOFTWARE


class BadInput(Exception):
    """Refused input: printed as ``error: <message>``, exit code 2."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> "typer.Exit":
    """Print one ``error:`` line to stderr and return the Exit to raise."""
    first_line = " ".join(str(message).split())
    print(f"error: {first_line}", file=sys.stderr)
    return typer.Exit(code)


def memory_limit(max_memory_gb: float | None) -> int:
    """memory_limit_bytes for the CLI: a refused limit is one ``error:`` line."""
    try:
        return memory_limit_bytes(max_memory_gb)
    except ResourceLimit as exc:
        raise fail(str(exc)) from None
    except OverflowError:  # inf or 1e400 (option or $BASISPATH_MAX_MEMORY_GB): int(inf) fails
        raise fail(f"the memory limit must be a finite number of GB (--max-memory-gb or {MEMORY_ENV})") from None


MAX_SECONDS_HELP = f"Refuse before starting when the estimated time is over this many seconds (default: ${TIME_ENV}, else no limit)."


def time_limit(max_seconds: float | None) -> float | None:
    """time_limit_seconds for the CLI: a refused limit is one ``error:`` line."""
    try:
        return time_limit_seconds(max_seconds)
    except ResourceLimit as exc:
        raise fail(str(exc)) from None


def read_network(path: Path, max_weights: int | None) -> Network:
    try:
        return load_spec(path, max_weights=max_weights)
    except SpecError as exc:
        raise fail(str(exc)) from None
