"""Store commands: ``run``, ``query``, ``ingest``, ``runs``, ``delete``."""

from __future__ import annotations

import json
import shlex
import sys
from decimal import Decimal
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from ..deah.step1_substructures import DEFAULT_MAX_SUBSTRUCTURE_PATHS, TooManySubstructures
from ..guards import ResourceLimit
from ..solver import DEFAULT_ENGINE, ENGINES
from ..spec import SpecError, load_any_spec
from ..errors import BadInput, LimitExceeded
from ..pipeline import execute_general_run, execute_run, interrupt_at_safe_points
from ..store import StoreError
from ..store.base import WriteRefused
from ..store.library import shared_query_file
from ..store.general_networks import ingest_any
from ..store.general_networks import load_run_for_resume
from ..store.runs import delete_run, list_runs, open_run_store, run_status
from .common import MAX_SECONDS_HELP, fail, failure, memory_limit, print_rows, read_any_network, time_limit
from .help import ENGINE_HELP
from .progress import StageProgress

STORE_HELP = "Store: a folder (LadybugDB, default ./basispath-store or $BASISPATH_STORE) or neo4j:// / bolt:// URI."


WAIT_HELP = (
    "Seconds to wait for an embedded store another process holds (a writer excludes everyone, "
    "readers exclude a writer); 0 = fail at once with exit code 3."
)


def open_for_cli(store: Optional[str], write: bool, wait: float = 0):
    """open_run_store, refusals as one ``error:`` line with their exit code."""
    try:
        return open_run_store(store, write=write, wait=wait)
    except StoreError as exc:
        raise failure(exc) from None


#: Exit code of a command stopped by Ctrl-C (SIGINT): 128 + 2, as the shell reports it.
EXIT_INTERRUPTED = 130


def _interrupted(run_id: Optional[str], complete: bool, store: Optional[str]) -> "typer.Exit":
    """The one line ``run`` prints when Ctrl-C stops it: which run, in what state, and the
    command that finishes it."""
    if run_id is None:
        return fail("interrupted before the run was stored; nothing to resume", EXIT_INTERRUPTED)
    if complete:
        return fail(f"interrupted; run {run_id} is complete", EXIT_INTERRUPTED)
    where = f" --store {shlex.quote(store)}" if store is not None else ""
    return fail(f"interrupted: run {run_id} is incomplete; finish it with: basispath run --resume {run_id}{where}", EXIT_INTERRUPTED)


def _report_general(outcome, network, resume: Optional[str], as_json: bool) -> None:
    """What ``basispath run`` prints for a general run: the JSON summary or the report lines."""
    summary = {"run_id": outcome.run_id, "kind": "general", **outcome.result.summary()}
    summary["timings"] = {k: round(v, 6) for k, v in outcome.timings.items()}
    if resume is not None:
        summary["resumed_rows"] = outcome.resumed_rows
    if as_json:
        print(json.dumps(summary))
        return
    c = Console(soft_wrap=True, highlight=False)
    verdict = "certified" if summary["certified"] else "NOT certified"
    c.print(
        f"run [bold]{outcome.run_id}[/] complete: {escape(network.name) or '(unnamed)'} (general) {summary['engine']}, "
        f"{summary['basis_size']} basis paths (m - H = {network.m - network.H}), {verdict}"
    )
    if resume is not None:
        c.print(f"resumed: kept the {outcome.resumed_rows} rows the killed run had committed, wrote the rest")
    c.print(f"time: {', '.join(f'{k} {v:.3f}s' for k, v in outcome.timings.items())}", style="dim")


def run_command(
    spec: Optional[Path] = typer.Argument(None, help="Network spec (JSON or YAML); omit with --resume."),
    engine: Optional[str] = typer.Option(None, "--engine", "-e", help=ENGINE_HELP + " A general spec (layers, connections) is run with skeleton unless --engine says otherwise."),
    seed: int = typer.Option(0, "--seed", help="Seed of the shared choice rule."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    resume: Optional[str] = typer.Option(None, "--resume", help="Finish (redo) an incomplete run by id."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress: neither the display on a terminal nor, in a log, the line per stage on stderr."
    ),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help="Refuse networks with more weights."),
    max_memory_gb: Optional[float] = typer.Option(
        None, "--max-memory-gb", help="Refuse before starting when the estimated memory is over this (default: $BASISPATH_MAX_MEMORY_GB or 80% of RAM)."
    ),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help=MAX_SECONDS_HELP),
    max_substructures: int = typer.Option(DEFAULT_MAX_SUBSTRUCTURE_PATHS, "--max-substructures", min=1, help="deah: list (and store) all of G^S's paths up to this many; beyond, generate them lazily."),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
) -> None:
    """Solve a network and store the run with every artifact (substructures, U_r, chains, basis, discards).

    The engine is deah-complete unless --engine says otherwise: certified, with no repair;
    --engine deah runs the paper's Algorithm DEAH faithfully and stores its repairs. A general
    spec (layers, connections) is solved by skeleton and stored with its layers, connections
    and kept paths.

    Example:

        basispath run examples/resnet-style.json --store ./basispath-store --json
        basispath run examples/resnet-style.json --engine deah --json
        basispath run --resume 3fa2c1d0
        basispath run examples/mlp.json --wait 600   # queue behind a run in progress
        basispath run examples/general/resnet-block.json --json
    """
    if engine is not None and engine not in ENGINES:
        raise fail(f"unknown engine '{engine}'; choose one of: {', '.join(ENGINES)}")
    if seed < 0:
        raise fail(f"--seed must be >= 0, got {seed}")
    if resume is None and spec is None:
        raise fail("missing SPEC (or --resume RUN_ID)")
    if resume is not None and spec is not None:
        raise fail("give either SPEC or --resume RUN_ID, not both")
    network = read_any_network(spec, max_weights) if spec is not None else None
    what = str(spec) if spec is not None else f"run {resume}"  # names the input in a refusal
    limit = memory_limit(max_memory_gb)
    seconds = time_limit(max_seconds)
    # a spinner on a terminal; in a log (stderr not a terminal) one line per stage, --json or not
    progress = StageProgress(not (quiet or as_json), lines=not quiet)
    outcome = None
    try:
        with open_for_cli(store, write=True, wait=wait) as s:
            try:
                if resume is not None:
                    network, engine, seed = load_run_for_resume(s, resume)
                general = not network.is_layered
                # a general spec (layers, connections) is solved by skeleton unless --engine says otherwise
                engine = engine or ("skeleton" if general else DEFAULT_ENGINE)
                with progress, interrupt_at_safe_points():
                    if general:
                        outcome = _execute_general(s, what, network, engine, seed, resume, progress, limit, seconds)
                    else:
                        outcome = execute_run(
                            s, network, engine, seed, resume=resume, progress=progress, max_substructures=max_substructures,
                            memory_limit=limit, time_limit=seconds,
                        )
            except ResourceLimit as exc:
                raise fail(f"{what}: {exc}") from None
            except TooManySubstructures as exc:
                raise fail(f"{what}: {exc}; use --engine skeleton") from None
            except StoreError as exc:
                raise failure(exc) from None
        if general:
            _report_general(outcome, network, resume, as_json)
        else:
            _report_layered(outcome, network, engine, seed, resume, as_json)
    except KeyboardInterrupt:  # Ctrl-C: say which run is left incomplete and how to finish it
        raise _interrupted(progress.run_id or resume, outcome is not None, store) from None


def _execute_general(s, what: str, network, engine: str, seed: int, resume: Optional[str], progress, limit, seconds):
    """execute_general_run, a network the engine does not read (UnsupportedIdentity,
    UnsupportedFeature) refused in one line naming the input."""
    try:
        return execute_general_run(s, network, engine, seed, resume=resume, progress=progress, memory_limit=limit, time_limit=seconds)
    except BadInput as exc:
        raise fail(f"{what}: {exc}") from None


def _report_layered(outcome, network, engine: str, seed: int, resume: Optional[str], as_json: bool) -> None:
    """What ``basispath run`` prints for a layered run: the JSON summary or the report lines."""
    r = outcome.result
    summary = {
        "run_id": outcome.run_id,
        "network": network.name,
        "engine": engine,
        "seed": seed,
        "m": network.m,
        "H": network.H,
        "basis_size": r.basis_size,
        "certified": r.certified,
        "repairs": len(r.repairs),
        "repairs_needed": r.repairs_needed,
        "discarded": len(r.discarded),
        "timings": {k: round(v, 6) for k, v in outcome.timings.items()},
    }
    if resume is not None:
        summary["resumed_rows"] = outcome.resumed_rows
    if as_json:
        print(json.dumps(summary))
    else:
        c = Console(soft_wrap=True, highlight=False)
        verdict = "certified" if r.certified else "NOT certified"
        c.print(
            f"run [bold]{outcome.run_id}[/] complete: {escape(network.name) or '(unnamed)'} {engine}, "
            f"{r.basis_size} basis paths (m - H = {network.m - network.H}), {verdict}, "
            f"{len(r.discarded)} discarded, {len(r.repairs)} repairs"
        )
        if resume is not None:
            c.print(
                f"resumed: kept the {outcome.resumed_rows} rows the killed run had committed "
                f"(counted in {outcome.timings['resume']:.3f}s), wrote the rest"
            )
        c.print(f"time: {', '.join(f'{k} {v:.3f}s' for k, v in outcome.timings.items())}", style="dim")


PARAM_HELP = (
    "Query parameter KEY=VALUE (repeatable). VALUE is read as JSON when it parses (12, 1.5, true, "
    "[1, 2], '\"text\"'), else it is text; a number that is the id of a run in the store stays text "
    "(run ids are text, even 12345678). Quote as JSON to force text: KEY='\"123\"'."
)


def _parse_param(text: str) -> tuple[str, object]:
    """key=value; the value is read as JSON when it parses (numbers, lists, true, "text"), else text.

    A number may still be a run id (ids made by other tools or older versions, "12345678"):
    :func:`_run_ids_as_text` turns it back into its text once the store is open."""
    if "=" not in text:
        raise fail(f"--param {text!r}: expected key=value")
    key, raw = text.split("=", 1)
    if not key.isidentifier():
        raise fail(f"--param {text!r}: {key!r} is not a valid parameter name")
    try:
        value = json.loads(raw)
    except RecursionError:  # json's own nesting limit: "[[[[..." is neither JSON we can read nor text
        raise fail(f"--param {key}: the JSON value is nested too deeply") from None
    except ValueError:
        value = raw
    problem = _param_problem(value)
    if problem:
        raise fail(f"--param {key}: {problem}")
    return key, value


def _run_ids_as_text(store, texts: List[str], params: dict) -> None:
    """Give back as text every --param number that is the id of a run in STORE.

    Run ids are text; one that reads as a number ("12345678", "791049e3" = 7.91e8) would
    otherwise be passed as a number and match no run. New runs never get such ids
    (``new_run_id``), but stores written by older versions or other tools may hold them."""
    raw = dict(t.split("=", 1) for t in texts)
    for key, value in params.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and raw[key] and store.run("get_run", id=raw[key]):
            params[key] = raw[key]


def _param_problem(value) -> str | None:
    """What the stores cannot take in a parameter value (they fail with unreadable messages)."""
    todo = [value]
    while todo:  # iterative: the value may be nested as deep as json allows
        v = todo.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int) and not -(2**63) <= v < 2**63:
            return "integer out of the 64-bit range"
        if isinstance(v, str) and any("\ud800" <= c <= "\udfff" for c in v):
            return "text contains a lone surrogate, which is not valid Unicode"
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return None


def _missing_params(cypher: str, params: dict) -> list[str]:
    """The $parameters the query uses that --param did not give, in order of first use.

    Both stores read a missing parameter as null (LadybugDB) or refuse it in an unreadable way,
    and a null matches nothing: the query would print 0 rows instead of saying what is wrong.
    The query guard's lexer finds them, so '$x' in a string, a comment or a `quoted name` is
    not a parameter."""
    from ..store.query_guard import statements

    missing: list[str] = []
    for tokens in statements(cypher):
        for tok in tokens:
            if tok.kind == "param" and tok.text and tok.text not in params and tok.text not in missing:
                missing.append(tok.text)
    return missing


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


FILE_HELP = (
    "Read the query from this file instead of the argument; a bare NAME that is no file reads the "
    "packaged cypher/queries/NAME.cypher (e.g. --file shared_layer_pairs)."
)


def _query_file(given: str) -> Path:
    """--file's path: the file itself, else the library's query of that name (one error line)."""
    path = Path(given)
    if path.is_file():
        return path
    if path.exists():
        raise fail(f"--file {given}: not a file")
    named = shared_query_file(given)
    if named is None:
        raise fail(f"--file {given}: no such file, and no query of that name in the query library")
    return named


def _query_text(cypher: Optional[str], file: Optional[str]) -> tuple[str, Path | None]:
    """The Cypher to run, the argument or the --file (exactly one of them), and the file's path."""
    if cypher is not None and file is not None:
        raise fail("give the query as an argument or with --file, not both")
    if cypher is None and file is None:
        raise fail("missing the query: give it as an argument or with --file PATH")
    if cypher is not None:
        return cypher, None
    path = _query_file(file)
    try:
        return path.read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"--file {file}: cannot read it ({exc.strerror if isinstance(exc, OSError) else 'not UTF-8 text'})") from None


def _described_answer(store, path: Path | None, params: dict) -> tuple[list, list] | None:
    """The packaged paths_through_neuron question (``path``: the --file read) on a run stored
    described: its Cypher would see only the paths stored as nodes, so the rows are made in
    Python from the description (``GraphStore.paths_through``), with a note on stderr. None:
    run the Cypher."""
    if path is None or path != shared_query_file("paths_through_neuron"):
        return None
    from ..analysis.paths_through import stored_described
    from ..graph_store import GraphStore

    run = store.run("get_run", id=params["run"]) if isinstance(params.get("run"), str) else []
    if not run or not stored_described(store, params["run"], int(run[0]["basis_size"] or 0)):
        return None
    if not all(isinstance(params.get(k), int) for k in ("layer", "neuron")):
        return ["id", "text", "kept"], []  # what the Cypher answers for a layer or neuron that is not one
    Console(stderr=True).print(f"run {params['run']} is stored described: answered in Python from its description "
                               "(basispath through)", style="dim")
    rows = GraphStore(store, None).paths_through(params["run"], params["layer"], params["neuron"])
    return ["id", "text", "kept"], [[r["id"], r["text"], r["kept"]] for r in rows]


def query_command(
    cypher: Optional[str] = typer.Argument(None, help="A Cypher query; values go in as $parameters. Or use --file."),
    file: Optional[str] = typer.Option(None, "--file", "-f", metavar="PATH|NAME", help=FILE_HELP),
    param: List[str] = typer.Option([], "--param", "-p", metavar="KEY=VALUE", help=PARAM_HELP),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print rows as JSON objects."),
    write: bool = typer.Option(False, "--write", help="Allow the query to write (otherwise the store is opened read-only)."),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
) -> None:
    """Run a Cypher query (the argument, or --file) against the store and print the rows. Read-only unless --write.

    Values go in as $parameters with --param KEY=VALUE: JSON when it parses, else text; a
    number that is the id of a stored run stays text, so --param run=12345678 finds run
    "12345678". Put the query in single quotes so the shell leaves $run alone.

    Example:

        basispath query --json --param run=3fa2c1d0 'MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n'
        basispath query --param run=3fa2c1d0 --param id=7 'MATCH (b:BasisPath {run: $run, id: $id}) RETURN b.text AS path'
        basispath query --file shared_layer_pairs --param run=3fa2c1d0 --param p=0 --param q=1
        basispath query --file my-question.cypher --param run=3fa2c1d0
    """
    cypher, path = _query_text(cypher, file)
    params = dict(_parse_param(p) for p in param)
    missing = _missing_params(cypher, params)
    if missing:
        names = ", ".join(f"${name}" for name in missing)
        hint = " ".join(f"--param {name}=VALUE" for name in missing)
        verb = "was" if len(missing) == 1 else "were"
        raise fail(f"query parameter{'s' if len(missing) > 1 else ''} {names} {verb} not given (use {hint})")
    with open_for_cli(store, write=write, wait=wait) as s:
        try:
            _run_ids_as_text(s, param, params)
            cols, rows = _described_answer(s, path, params) or s.query(cypher, params)
        except WriteRefused as exc:
            from ..store.query_guard import QueryRefused  # refused by the tool, says what and why

            message = str(exc) if isinstance(exc, QueryRefused) else "the query writes to the store; add --write to allow it"
            raise fail(message) from None
        except (StoreError, LimitExceeded) as exc:  # LimitExceeded: the described answer would not fit (is a ValueError too)
            raise failure(exc) from None
        except (ValueError, TypeError, OverflowError) as exc:
            if not params:
                raise
            # The driver converts parameters in Python: e.g. LadybugDB raises ValueError for [1, "a"].
            raise fail(f"cannot pass the --param values to the store: {exc}") from None
    rows = [[_jsonable(v) for v in r] for r in rows]
    if as_json:
        print(json.dumps([dict(zip(cols, r)) for r in rows]))
        return
    print_rows(list(cols), [[json.dumps(v) if not isinstance(v, str) else v for v in r] for r in rows])
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
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
) -> None:
    """Store networks without solving them. Every spec is checked before anything is written.

    Example:

        basispath ingest examples/
    """
    networks = []
    for path in _spec_files(specs):
        try:
            networks.append((path, load_any_spec(path, max_weights=max_weights)))
        except SpecError as exc:
            raise fail(str(exc)) from None
    with open_for_cli(store, write=True, wait=wait) as s:
        for path, net in networks:
            try:
                key = ingest_any(s, net)
            except StoreError as exc:
                raise failure(exc) from None
            print(f"ingested {path}: {net.name or '(unnamed)'} m = {net.m}, H = {net.H} (key {key})")


def runs_command(
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print runs as JSON."),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
) -> None:
    """List the stored runs with their status (running, complete, incomplete).

    An embedded store is not read while a run is being written to it (exit code 3, or wait with
    --wait), so what you see is only ever complete runs and runs that were killed (incomplete).

    Example:

        basispath runs --store ./basispath-store
    """
    with open_for_cli(store, write=False, wait=wait) as s:
        try:
            rows = list_runs(s)  # 'running' only while its writer lives (store/runs.list_runs)
        except StoreError as exc:  # e.g. Neo4j retries exhausted after connecting
            raise failure(exc) from None
    if as_json:
        print(json.dumps(rows))
        return
    keys = ("id", "network", "engine", "seed", "status", "stage", "m", "H", "basis_size", "certified", "repairs", "started")
    print_rows(keys, [[str(r[k]) if r[k] is not None else "" for k in keys] for r in rows])


def delete_command(
    run_id: str = typer.Argument(..., help="Run id (see 'basispath runs')."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask; needed when stdin is not a terminal."),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
) -> None:
    """Delete one run and every artifact it owns (paths, discards, chains, substructures).

    Other runs are untouched, and so is the run's network (other runs and 'ingest' use it).
    Asks first unless --yes; a run still being written is refused (exit code 3).

    Example:

        basispath delete 3fa2c1d0 --store ./basispath-store --yes
    """
    with open_for_cli(store, write=True, wait=wait) as s:  # LadybugDB: no run is being written now
        try:
            status = run_status(s, run_id)
            if not yes:
                if not sys.stdin.isatty():
                    raise fail(f"not deleting run {run_id} without confirmation: stdin is not a terminal, pass --yes")
                if not typer.confirm(f"delete run {run_id} ({status}) and all its artifacts?", default=False, err=True):
                    print(f"run {run_id} kept", file=sys.stderr)
                    return
            delete_run(s, run_id)  # refuses a Neo4j run still being written (StoreLocked: exit 3)
        except StoreError as exc:
            raise failure(exc) from None
    print(f"deleted run {run_id}")
