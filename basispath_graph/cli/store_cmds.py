"""Store commands: ``run``, ``query``, ``ingest``, ``runs``."""

from __future__ import annotations

import json
from decimal import Decimal
import os
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from ..deah.step1_substructures import DEFAULT_MAX_SUBSTRUCTURE_PATHS, TooManySubstructures
from ..guards import ResourceLimit, memory_limit_bytes
from ..solve import ENGINES
from ..spec import SpecError, load_spec
from ..store import StoreError, StoreUnavailable, open_store
from ..store.base import StoreLocked, WriteRefused
from ..store.runs import execute_run, ingest_network, load_run_for_resume, mark_stale_runs
from .common import EXIT_BAD_INPUT, fail, read_network
from .progress import StageProgress

EXIT_STORE_UNAVAILABLE = 3

STORE_HELP = "Store: a folder (LadybugDB, default ./basispath-store or $BASISPATH_STORE) or neo4j:// / bolt:// URI."


def _console() -> Console:
    """Tables keep their columns when piped (rich would squeeze them to 80 columns)."""
    probe = Console()
    return probe if probe.is_terminal else Console(width=240)


def store_failure(exc: StoreError) -> typer.Exit:
    code = EXIT_STORE_UNAVAILABLE if isinstance(exc, (StoreUnavailable, StoreLocked)) else EXIT_BAD_INPUT
    return fail(str(exc), code)


def open_for_cli(store: Optional[str], write: bool):
    try:
        s = open_store(store, write=write)
    except StoreError as exc:
        raise store_failure(exc) from None
    if write and s.backend == "ladybug":
        mark_stale_runs(s)  # we hold the only write lock: any 'running' run is orphaned
    return s


def run_command(
    spec: Optional[Path] = typer.Argument(None, help="Network spec (JSON or YAML); omit with --resume."),
    engine: str = typer.Option("deah", "--engine", "-e", help=f"Engine: {' | '.join(ENGINES)}."),
    seed: int = typer.Option(0, "--seed", help="Seed of the shared choice rule."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    resume: Optional[str] = typer.Option(None, "--resume", help="Finish (redo) an incomplete run by id."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help="Refuse networks with more weights."),
    max_memory_gb: Optional[float] = typer.Option(
        None, "--max-memory-gb", help="Refuse before starting when the estimated memory is over this (default: $BASISPATH_MAX_MEMORY_GB or 80% of RAM)."
    ),
    max_substructures: int = typer.Option(DEFAULT_MAX_SUBSTRUCTURE_PATHS, "--max-substructures", min=1, help="deah: list (and store) all of G^S's paths up to this many; beyond, generate them lazily."),
) -> None:
    """Solve a network and store the run with every artifact (substructures, U_r, chains, basis, discards).

    Example:

        basispath run examples/resnet-style.json --store ./basispath-store --json
        basispath run --resume 3fa2c1d0
    """
    if engine not in ENGINES:
        raise fail(f"unknown engine '{engine}'; choose one of: {', '.join(ENGINES)}")
    if seed < 0:
        raise fail(f"--seed must be >= 0, got {seed}")
    if resume is None and spec is None:
        raise fail("missing SPEC (or --resume RUN_ID)")
    if resume is not None and spec is not None:
        raise fail("give either SPEC or --resume RUN_ID, not both")
    network = read_network(spec, max_weights) if spec is not None else None
    try:
        memory_limit = memory_limit_bytes(max_memory_gb)
    except ResourceLimit as exc:
        raise fail(str(exc)) from None
    with open_for_cli(store, write=True) as s:
        try:
            if resume is not None:
                network, engine, seed = load_run_for_resume(s, resume)
            with StageProgress(not (quiet or as_json)) as progress:
                outcome = execute_run(
                    s, network, engine, seed, resume=resume, progress=progress, max_substructures=max_substructures,
                    memory_limit=memory_limit,
                )
        except ResourceLimit as exc:
            raise fail(f"{spec}: {exc}") from None
        except TooManySubstructures as exc:
            raise fail(f"{spec}: {exc}; use --engine skeleton") from None
        except StoreError as exc:
            raise store_failure(exc) from None
    r = outcome.result
    summary = {
        "run_id": outcome.run_id,
        "network": network.name,
        "engine": engine,
        "seed": seed,
        "m": network.m,
        "H": network.H,
        "basis_size": r.basis_size(),
        "certified": r.certified,
        "repairs": len(r.repairs),
        "repairs_needed": r.repairs_needed,
        "discarded": len(r.discarded),
        "timings": {k: round(v, 6) for k, v in outcome.timings.items()},
    }
    if as_json:
        print(json.dumps(summary))
    else:
        c = Console(soft_wrap=True, highlight=False)
        verdict = "certified" if r.certified else "NOT certified"
        c.print(
            f"run [bold]{outcome.run_id}[/] complete: {network.name or '(unnamed)'} {engine}, "
            f"{r.basis_size()} basis paths (m - H = {network.m - network.H}), {verdict}, "
            f"{len(r.discarded)} discarded, {len(r.repairs)} repairs"
        )
        c.print(f"time: {', '.join(f'{k} {v:.3f}s' for k, v in outcome.timings.items())}", style="dim")


def _parse_param(text: str) -> tuple[str, object]:
    """key=value; the value is read as JSON when it parses (numbers, lists, true, "text"), else text."""
    if "=" not in text:
        raise fail(f"--param {text!r}: expected key=value")
    key, raw = text.split("=", 1)
    if not key.isidentifier():
        raise fail(f"--param {text!r}: {key!r} is not a valid parameter name")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return key, value


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items() if k not in ("_ID",)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Decimal):  # LadybugDB returns sum() of integers as a Decimal (INT128)
        return int(value) if value == value.to_integral_value() else float(value)
    return str(value)


def query_command(
    cypher: str = typer.Argument(..., help="A Cypher query; values go in as $parameters."),
    param: List[str] = typer.Option([], "--param", "-p", help="Query parameter key=value (repeatable; JSON values allowed)."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print rows as JSON objects."),
    write: bool = typer.Option(False, "--write", help="Allow the query to write (otherwise the store is opened read-only)."),
) -> None:
    """Run a Cypher query against the store and print the rows. Read-only unless --write.

    Example:

        basispath query --json --param run=3fa2c1d0 "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n"
    """
    params = dict(_parse_param(p) for p in param)
    with open_for_cli(store, write=write) as s:
        try:
            cols, rows = s.query(cypher, params)
        except WriteRefused:
            raise fail("the query writes to the store; add --write to allow it") from None
        except StoreError as exc:
            raise store_failure(exc) from None
    rows = [[_jsonable(v) for v in r] for r in rows]
    if as_json:
        print(json.dumps([dict(zip(cols, r)) for r in rows]))
        return
    table = Table(*cols, show_lines=False)
    for r in rows:
        table.add_row(*(json.dumps(v) if not isinstance(v, str) else v for v in r))
    _console().print(table)
    Console(stderr=True).print(f"{len(rows)} row(s)", style="dim")


def _spec_files(items: List[Path]) -> list[Path]:
    files = []
    for item in items:
        if item.is_dir():
            found = sorted(p for p in item.iterdir() if p.suffix.lower() in (".json", ".yaml", ".yml"))
            if not found:
                raise fail(f"{item}: folder holds no .json/.yaml/.yml spec")
            files.extend(found)
        else:
            files.append(item)
    return files


def ingest_command(
    specs: List[Path] = typer.Argument(..., help="Spec files or folders of specs."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help="Refuse networks with more weights."),
) -> None:
    """Store networks without solving them. Every spec is checked before anything is written.

    Example:

        basispath ingest examples/
    """
    networks = []
    for path in _spec_files(specs):
        try:
            networks.append((path, load_spec(path, max_weights=max_weights)))
        except SpecError as exc:
            raise fail(str(exc)) from None
    with open_for_cli(store, write=True) as s:
        for path, net in networks:
            try:
                key = ingest_network(s, net)
            except StoreError as exc:
                raise store_failure(exc) from None
            print(f"ingested {path}: {net.name or '(unnamed)'} m = {net.m}, H = {net.H} (key {key})")


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True


def runs_command(
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print runs as JSON."),
) -> None:
    """List the stored runs with their status (running, complete, incomplete).

    Example:

        basispath runs --store ./basispath-store
    """
    with open_for_cli(store, write=False) as s:
        rows = s.run("list_runs")
        if s.backend == "ladybug":  # an embedded store is local: a dead writer cannot finish
            for r in rows:
                if r["status"] == "running" and not _alive(r["pid"]):
                    r["status"] = "incomplete"
    if as_json:
        print(json.dumps(rows))
        return
    keys = ("id", "network", "engine", "seed", "status", "m", "H", "basis_size", "certified", "repairs", "started")
    table = Table(*keys)
    for r in rows:
        table.add_row(*(str(r[k]) if r[k] is not None else "" for k in keys))
    _console().print(table)
