"""Shared CLI pieces: the one-line error convention and spec loading."""

from __future__ import annotations

import json
import sys
from itertools import chain
from pathlib import Path

import typer

from ..errors import BasispathError, NotCertified, StoreLocked, StoreUnavailable
from ..guards import MEMORY_ENV, TIME_ENV, ResourceLimit, memory_limit_bytes, time_limit_seconds
from ..network import Network
from ..spec import SpecError, load_spec

EXIT_NOT_CERTIFIED = 1
EXIT_BAD_INPUT = 2
EXIT_STORE_UNAVAILABLE = 3  # try again later: the server is down or another process holds the store
EXIT_INTERNAL = 70  # a bug: sysexits' EX_SOFTWARE

#: The one table from exception kind to exit code (errors.py describes the kinds); the first
#: class an exception is an instance of wins, so subclasses come before their bases.
EXIT_CODES: tuple[tuple[type, int], ...] = (
    (StoreUnavailable, EXIT_STORE_UNAVAILABLE),
    (StoreLocked, EXIT_STORE_UNAVAILABLE),
    (NotCertified, EXIT_NOT_CERTIFIED),
    (BasispathError, EXIT_BAD_INPUT),  # BadInput, LimitExceeded, StoreError
)


def exit_code(exc: BaseException) -> int:
    """The exit code of an exception basispath raised on purpose; EXIT_INTERNAL for a bug."""
    return next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), EXIT_INTERNAL)


def fail(message: str, code: int = EXIT_BAD_INPUT) -> "typer.Exit":
    """Print one ``error:`` line to stderr and return the Exit to raise."""
    first_line = " ".join(str(message).split())
    print(f"error: {first_line}", file=sys.stderr)
    return typer.Exit(code)


def table_console():
    """A rich Console for tables: they keep their columns when piped (rich would squeeze them
    to 80 columns)."""
    from rich.console import Console

    probe = Console()
    return probe if probe.is_terminal else Console(width=240)


#: Rows above which ``print_rows`` prints plain lines: rich lays a bordered table out in Python
#: per cell (``basispath through``'s 382,219 rows took 104 s as a table, 1 s plain).
TABLE_ROWS = 10_000


def print_rows(headers, rows) -> None:
    """Print rows of text under HEADERS: a bordered table when it fits the console whole (and
    has at most ``TABLE_ROWS`` rows), else plain rows (a header line, then one line per row,
    columns two spaces apart).

    Nothing is ever cut, wrapped inside a cell or shortened to '…': the first column (an id
    the next command needs) stays whole and copyable at any width; a plain line longer than
    the terminal is folded by the terminal, not by us."""
    from rich.markup import escape
    from rich.measure import Measurement
    from rich.table import Table

    console = table_console()
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    # The bordered table is at least its cells, a space either side of each and a rule between
    # and around them wide: wider than the console, no need to lay it out to know.
    if len(rows) <= TABLE_ROWS and sum(widths) + 3 * len(headers) + 1 <= console.width:
        table = Table(*headers)
        for cells in rows:
            table.add_row(*(escape(c) for c in cells))
        if Measurement.get(console, console.options.update_width(1_000_000), table).maximum <= console.width:
            console.print(table)
            return
    for cells in [list(headers), *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())


def stream_rows(headers, first: list, rest) -> int:
    """``print_rows``' plain lines for rows too many to hold: the columns are as wide as in
    ``first`` (the rows read so far) and every later row is printed as it comes (``rest``, an
    iterator), its cells whole: put the widest, most varied column last. Returns the rows printed."""
    widths = [max([len(h), *(len(r[i]) for r in first)]) for i, h in enumerate(headers)]
    count = 0
    for cells in chain([list(headers)], first, rest):
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
        count += 1
    return count - 1


def stream_json(rows) -> int:
    """Rows (dicts, an iterator) as one JSON list, written as they come: the bytes
    ``json.dumps(list(rows))`` would print, in the memory of one row. Returns the rows written."""
    count = 0
    sys.stdout.write("[")
    for row in rows:
        sys.stdout.write((", " if count else "") + json.dumps(row))
        count += 1
    sys.stdout.write("]\n")
    return count


def failure(exc: BasispathError, prefix: str = "") -> "typer.Exit":
    """:func:`fail` with the message and the exit code of ``exc`` (``prefix`` goes in front,
    e.g. the spec file)."""
    return fail(f"{prefix}{exc}", exit_code(exc))


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


def read_any_network(path: Path, max_weights: int | None):
    """``read_network`` for the commands that also read general specs (layers, connections)."""
    from ..spec import load_any_spec

    try:
        return load_any_spec(path, max_weights=max_weights)
    except SpecError as exc:
        raise fail(str(exc)) from None
