"""``basispath solve``: find, certify and optionally export a basis path set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from ..deah.step1_substructures import DEFAULT_MAX_SUBSTRUCTURE_PATHS, TooManySubstructures
from ..fileio import write_atomic
from ..guards import ResourceLimit
from ..api import solve
from ..general.documents import export_pieces, paths_export_pieces
from ..general.paper_setting import UnsupportedFeature
from ..general.skeleton import UnsupportedIdentity
from ..solver import ENGINES
from .common import EXIT_NOT_CERTIFIED, MAX_SECONDS_HELP, fail, memory_limit, read_any_network, time_limit
from .help import ENGINE_HELP
from .progress import StageProgress


def _print_union(console: Console, s: dict) -> None:
    """A DEAH engine's raw union, its exact verdict, and the repair (applied or not)."""
    raw = "certified" if s["raw_certified"] else f"NOT certified ({s['raw_defect']})"
    console.print(f"{'faithful DEAH' if s['engine'] == 'deah' else 'deah-complete'} union: {s['raw_size']} paths, {raw}")
    ra = s["repairs_by_action"]
    if s["repairs"] or not s["repairs_needed"]:
        console.print(f"repairs needed: {s['repairs']} ({ra['drop']} dropped, {ra['readmit']} re-admitted, {ra['add']} added)")
    else:
        console.print(f"repairs needed: {s['repairs_needed']} (not applied: --no-repair)")


def _print_report(console: Console, s: dict) -> None:
    console.print(f"network [bold]{escape(s['network']) or '(unnamed)'}[/]: m = {s['m']}, H = {s['H']}, m - H = {s['m'] - s['H']}")
    if s["engine"] in ("deah", "deah-complete"):
        console.print(
            f"{s['engine']} (seed {s['seed']}): |P^S| = {s['substructure_paths']}, R = {s['R']} substructures, "
            + (f"{s['chains']} chain(s), {s['sdvchain_calls']} SDVChain call(s)" if s["engine"] == "deah" else
               "rules " + ", ".join(f"{k} {v}" for k, v in sorted(s["rules"].items())))
        )
        by = s["discards_by_step"]
        if s["engine"] == "deah":
            console.print(f"step 3 discarded {by['chain'] + by['head']} path(s): {by['chain']} in chains, {by['head']} by chain heads")
        else:
            console.print(f"step 3 discarded {sum(by.values())} path(s): " + ", ".join(f"{n} {k}" for k, n in by.items() if n))
        _print_union(console, s)
    else:
        console.print(f"skeleton (seed {s['seed']})")
    verdict = "[green]certified[/]" if s["certified"] else f"[red]NOT certified[/]: {s['defect']}"
    console.print(f"basis: {s['basis_size']} paths, {verdict}")
    if s["engine"] != "skeleton" and s["discarded"] and s["certified"] and s["certificate_max_size"] is None:
        console.print(f"certificates: {s['discarded']} discarded path(s), each made and verified by vector addition when it is"
                      f" read (method: {s['certificate_method']})")
    elif s["engine"] != "skeleton" and s["discarded"] and s["certified"]:
        if s["certificates_rechecked"] >= s["discarded"]:
            checked = "each verified by vector addition"
        else:  # deah-complete on a large network: exact by construction, a spread sample re-added
            checked = (
                f"each assembled from pieces verified by vector addition, {s['certificates_rechecked']} re-added in full"
            )
        console.print(
            f"certificates: {s['discarded']} discarded path(s), {checked} "
            f"(largest uses {s['certificate_max_size']} basis paths; method: {s['certificate_method']})"
        )
    times = ", ".join(f"{k} {v:.3f}s" for k, v in s["timings"].items())
    console.print(f"time: {times}", style="dim")


def solve_command(
    spec: Path = typer.Argument(..., help="Network spec (JSON or YAML)."),
    engine: Optional[str] = typer.Option(None, "--engine", "-e", help=ENGINE_HELP + " A general spec (layers, connections): skeleton by default; deah-complete and deah in the paper's setting or on a core that is a layer DAG (branches, concatenations, BatchNorm per consumer: docs/general-networks.md)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the shared choice rule (0 = identity order)."),
    export: Optional[Path] = typer.Option(None, "--export", help="Write the basis as JSON to this file: every path, or for a general network's skeleton of over a million paths the described basis (a few numbers per neuron; docs/general-networks.md)."),
    export_paths: Optional[Path] = typer.Option(None, "--export-paths", help="Write every path of the basis as JSON to this file, streamed a block at a time (a big network's file is large: about 1 kB per path)."),
    no_repair: bool = typer.Option(False, "--no-repair", help="Return the engine's raw union unrepaired; exit 1 when it is not certified."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary instead of the report."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
    max_weights: Optional[int] = typer.Option(
        None, "--max-weights", min=1, help="Refuse networks with more weights (default 50,000,000 or $BASISPATH_MAX_WEIGHTS)."
    ),
    max_memory_gb: Optional[float] = typer.Option(
        None, "--max-memory-gb", help="Refuse before starting when the estimated memory is over this (default: $BASISPATH_MAX_MEMORY_GB or 80% of RAM)."
    ),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help=MAX_SECONDS_HELP),
    max_substructures: int = typer.Option(
        DEFAULT_MAX_SUBSTRUCTURE_PATHS, "--max-substructures", min=1, help="deah: list (and store) all of G^S's paths up to this many; beyond, generate them lazily."
    ),
) -> None:
    """Find a basis path set, certify it exactly, and report DEAH's discards and repairs.

    The engine is deah-complete unless --engine says otherwise: DEAH's Steps 1-2 with a Step 3
    that is right by construction, certified with no repair. --engine deah runs the paper's
    Algorithm DEAH faithfully and shows whether its union was a basis and how many repairs it
    needed.

    Exit code 0 when the returned basis is certified, 1 when it is not (only possible with
    --no-repair), 2 for refused input.

    Example:

        basispath solve examples/resnet-style.json --export basis.json
        basispath solve examples/resnet-style.json --engine deah
    """
    if engine is not None and engine not in ENGINES:
        raise fail(f"unknown engine '{engine}'; choose one of: {', '.join(ENGINES)}")
    if seed < 0:
        raise fail(f"--seed must be >= 0, got {seed}")
    for target in (export, export_paths):
        if target is not None and (target.is_dir() or not target.expanduser().parent.exists()):
            raise fail(f"cannot write export file {target}: not a file in an existing folder")
    network = read_any_network(spec, max_weights)
    limit = memory_limit(max_memory_gb)
    seconds = time_limit(max_seconds)

    def run_core(solver):
        """``solver`` (the layered solve, or a general engine around it) with progress, limits and one-line refusals."""
        try:
            with StageProgress(not (quiet or as_json), verb="running") as progress:
                return solver(
                    seed=seed, repair=not no_repair, max_substructures=max_substructures, on_stage=progress.stage,
                    memory_limit=limit, time_limit=seconds,
                )
        except ResourceLimit as exc:
            raise fail(f"{spec}: {exc}") from None
        except TooManySubstructures as exc:
            raise fail(f"{spec}: {exc}; use --engine skeleton") from None

    try:
        result = run_core(lambda **options: solve(network, engine, **options))
    except (UnsupportedIdentity, UnsupportedFeature) as exc:
        raise fail(f"{spec}: {exc}") from None
    _write_export(export, lambda: export_pieces(result) if not network.is_layered else json.dumps(result.export()))
    _write_export(export_paths, lambda: paths_export_pieces(result) if not network.is_layered else json.dumps(result.export()))
    s = result.summary()
    if as_json:
        print(json.dumps(s))
    elif network.is_layered:
        _print_report(Console(soft_wrap=True, highlight=False), s)
    else:
        _print_general_report(Console(soft_wrap=True, highlight=False), s)
    if not result.certified:
        raise typer.Exit(EXIT_NOT_CERTIFIED)


def _write_export(export: Path | None, text) -> None:
    """Write ``text()`` (JSON text, or its pieces) to ``export`` (atomically), if asked; one line on failure."""
    if export is None:
        return
    try:
        write_atomic(export, text())
    except OSError as exc:
        raise fail(f"cannot write export file {export}: {exc.strerror or exc}") from None


def _print_dag_report(c: Console, parts: dict) -> None:
    """deah-complete on a layer DAG core (general/dag_deah.py): Step 1's ears, Step 3's counts."""
    p0 = parts["p0"]
    route = ", ".join(p0) if len(p0) <= 8 else f"{', '.join(p0[:3])}, ... {len(p0) - 5} more ..., {', '.join(p0[-2:])}"
    discarded = parts["discarded"]
    c.print(f"deah-complete on the core as a layer DAG: {parts['core_layers']} layers, {parts['core_connections']} connections, "
            f"{parts['substructure_paths']} substructure path(s)")
    c.print(escape(f"Step 1: p_0 through {len(p0)} layers ({route}) and {parts['ears']} ear(s): {parts['selected']} substructures"))
    c.print(f"Step 3: kept {parts['kept']} path(s) (B_0 whole, each ear the rows of its new connections); discarded "
            f"{discarded['prefix'] + discarded['suffix']} (prefix {discarded['prefix']}, suffix {discarded['suffix']}); no repair")
    c.print(f"extra layers and identity shortcuts: {parts['extra_and_identity']} path(s), one per weight into or out of an extra "
            "layer and one per edge of a spanning forest")


def _print_sdvchain_report(c: Console, s: dict) -> None:
    """Faithful deah on a layer DAG core (general/dag_sdvchain.py): Steps 1-3's counts, the raw
    union's verdict and the repair."""
    parts = s["parts"]
    by = parts["discarded"]
    c.print(f"deah on the core as a layer DAG: {parts['core_layers']} layers, {parts['core_connections']} connections, "
            f"{parts['substructure_paths']} substructure path(s)")
    c.print(f"Step 1: p_0 and {parts['selected'] - 1} ear(s): {parts['selected']} substructures; Step 2: "
            f"{parts['candidates']} candidate path(s) in their B_r")
    c.print(f"Step 3: {parts['chains']} chain(s), {parts['sdvchain_calls']} SDVChain call(s); discarded {by['chain'] + by['head']} "
            f"path(s): {by['chain']} in chains, {by['head']} by chain heads")
    c.print(f"extra layers and identity shortcuts: {parts['outside_core']} path(s), one per weight into or out of an extra "
            "layer and one per edge of a spanning forest")
    _print_union(c, s)
    if s["certified"] and s["discarded"] and s["certificates_rechecked"]:
        c.print(f"certificates: {s['discarded']} discarded path(s), each verified by vector addition (method: {s['certificate_method']})")
    elif s["certified"] and s["discarded"]:  # above LISTED_DAG_DISCARDS: made when a discard is asked about
        c.print(f"certificates: {s['discarded']} discarded path(s), each made and verified by vector addition when it is read"
                f" (method: {s['certificate_method']})")


def _print_general_report(c: Console, s: dict) -> None:
    """A general network's report (docs/general-networks.md): skeleton, or a DEAH engine on the
    core (a layered core with taps, plus extra inputs and outputs such as biases)."""
    c.print(f"network [bold]{escape(s['network']) or '(unnamed)'}[/] (general): m = {s['m']}, H = {s['H']}, m - H = {s['m'] - s['H']}")
    if s.get("parts", {}).get("core") == "layer DAG" and s["engine"] == "deah":
        _print_sdvchain_report(c, s)
    elif s.get("parts", {}).get("core") == "layer DAG":
        _print_dag_report(c, s["parts"])
    elif "core" not in s:
        c.print("skeleton: designated walks per layer, one path per trainable weight")
    else:
        parts = s["parts"]
        c.print(f"{s['engine']} on the core ({', '.join(parts['core_layers'])}), one weight per neuron pair (tap 0):")
        _print_report(c, s["core"])
        c.print(
            f"other taps: {parts['tap_lift']} path(s) (tap lift); extra layers: {parts['extra']} path(s), one per weight; "
            f"identity shortcuts: {parts['identity']} path(s), a spanning forest"
        )
    verdict = "[green]certified[/]" if s["certified"] else f"[red]NOT certified[/]: {s['defect']}"
    c.print(f"basis: {s['basis_size']} paths, {verdict}")
    c.print("time: " + ", ".join(f"{k} {v:.3f}s" for k, v in s["timings"].items()), style="dim")
