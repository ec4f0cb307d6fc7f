"""Solve a network and persist the run with every artifact, atomically visible and resumable.

A run is created in status 'running' and becomes 'complete' only after every artifact is
written. A process that dies leaves it 'running'; the next writer of an embedded store marks it
'incomplete' (only one writer can hold the store), and ``--resume`` redoes the run under the
same id, writing only what the killed run had not committed (``store/resume.py``). Earlier runs are never touched. Storage itself is in
``store/``: run records (``store/runs.py``), artifacts (``store/artifacts.py``, one writer for
layered and general runs, spelled by ``store/path_forms.py``), Step 1 and its relations
(``store/relations.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from dataclasses import dataclass

from .deah.step1_substructures import TooManySubstructures
from .general.described import DescribedBasis
from .general.model import GeneralNetwork
from .general.solve import GeneralResult, solve_general
from .guards import ResourceLimit
from .network import Network
from .solver import DEFAULT_ENGINE, SolveResult, solve
from .store.artifacts import write_artifacts
from .store.base import Store, StoreError
from .store.dag_runs import write_dag_run, write_sdvchain_run
from .store.described_deah import is_described_run, write_described_deah
from .store.described_rows import write_described
from .store.general_networks import ingest_general_network
from .store.path_forms import GeneralForm, LayeredForm
from .store.relations import StoreRelations, persist_substructures
from .store.resume import Committed
from .store.runs import ingest_network, new_run_id, now

__all__ = ["execute_run", "execute_general_run", "RunOutcome", "GeneralOutcome", "KILL_ENV", "KILL_POINTS"]

KILL_ENV = "BASISPATH_KILL_AT"

#: Every place where ``BASISPATH_KILL_AT=<name>`` makes ``basispath run`` SIGKILL itself, in the
#: order a deah run passes them (tests/reliability/test_crash_safety.py tries each one).
#:
#: - ``solve:<stage>``: as the solve enters that stage (``solve``'s ``on_stage``): DEAH Step 1,
#:   Step 2, Step 3, certification of the raw union, the repair, the certificates;
#: - ``substructures``: Step 1 is done, before its paths are stored for Cypher to relate;
#: - ``solved``: after the solve, before the first artifact is written;
#: - ``<stage>``: as a persistence stage starts, before anything of it is written;
#: - ``<stage>:batch:<k>``: after the k-th bulk batch of that stage is committed (batches hold
#:   ``BASISPATH_BATCH_ROWS`` rows; the tests make them small so a stage has several);
#: - ``complete``: every artifact written, the run not yet marked complete.
KILL_POINTS = (
    "solve:step1",
    "solve:step2",
    "substructures",
    "solve:step3",
    "solve:certify",
    "solve:repair",
    "solve:certificates",
    "solved",
    "subdivision sets",
    "subdivision sets:batch:1",
    "basis paths",
    "basis paths:batch:1",
    "basis paths:batch:2",
    "discards",
    "discards:batch:1",
    "links",
    "links:batch:1",
    "links:batch:5",
    "complete",
)


_interrupt = {"pending": False}


@contextlib.contextmanager
def interrupt_at_safe_points():
    """Ctrl-C during a run stops it at the next stage or batch boundary (a kill point), as a
    KeyboardInterrupt raised in our own code: raised from inside a store's C extension (a
    LadybugDB query checks the SIGINT handler) it can be swallowed there, and the run would go on
    as if nothing was pressed. A second Ctrl-C interrupts at once. On leaving, a press that came
    after the last boundary is raised then (the run is complete by that time)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum, frame):
        if _interrupt["pending"]:
            raise KeyboardInterrupt
        _interrupt["pending"] = True

    _interrupt["pending"] = False
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if _interrupt["pending"]:
        _interrupt["pending"] = False
        raise KeyboardInterrupt


def _kill_point(stage: str) -> None:
    """Crash-safety tests: BASISPATH_KILL_AT=<stage> makes the process SIGKILL itself there.
    Also where a pending Ctrl-C stops the run (``interrupt_at_safe_points``)."""
    if os.environ.get(KILL_ENV) == stage:
        os.kill(os.getpid(), signal.SIGKILL)
    if _interrupt["pending"]:
        _interrupt["pending"] = False
        raise KeyboardInterrupt


def _run_stored(progress, run_id: str, resumed: bool) -> None:
    """Tell PROGRESS which run it follows, once the run is in the store (``start_run``, an
    optional part of the progress protocol: the CLI names the run when it is interrupted)."""
    start_run = getattr(progress, "start_run", None)
    if start_run is not None:
        start_run(run_id, resumed)


def _write_hooks(progress):
    """(on_stage, on_batch) for the writers: progress display and the kill points
    ``<stage>`` and ``<stage>:batch:<k>`` (KILL_POINTS)."""
    current = {"stage": "", "batches": 0}

    def on_write_stage(name: str) -> None:
        _kill_point(name)
        current.update(stage=name, batches=0)
        if progress:
            progress.stage(name)

    def on_batch(rows: int) -> None:
        if progress:
            progress.advance(rows)
        current["batches"] += 1
        _kill_point(f"{current['stage']}:batch:{current['batches']}")

    return on_write_stage, on_batch


@dataclass
class RunOutcome:
    run_id: str
    result: SolveResult
    timings: dict[str, float]
    resumed_rows: int = 0  # --resume: rows the killed run had committed, kept as they were


def execute_run(
    store: Store,
    network: Network,
    engine: str = DEFAULT_ENGINE,
    seed: int = 0,
    resume: str | None = None,
    progress=None,
    **solve_options,
) -> RunOutcome:
    """Solve ``network`` and persist the run; ``resume`` redoes an unfinished run by id."""
    timings: dict[str, float] = {}
    committed: Committed | None = None
    key = ingest_network(store, network)
    if resume:
        run_id = resume
        _run_stored(progress, run_id, resumed=True)
        if progress is not None:
            progress.stage("reading what the partial run wrote")
        t0 = time.perf_counter()
        committed = Committed.read(store, run_id)  # kept: only the rest is written (store/resume.py)
        timings["resume"] = time.perf_counter() - t0
        store.run("restart_run", id=run_id, pid=os.getpid())
    else:
        run_id = new_run_id()
        store.run("create_run", id=run_id, key=key, engine=engine, seed=seed, started=now(), m=network.m, H=network.H, pid=os.getpid())
        _run_stored(progress, run_id, resumed=False)

    def save_step1(step1) -> None:  # both DEAH engines: P^S and Cypher's relations are part of the graph
        _kill_point("substructures")
        store.run("set_run_stage", id=run_id, stage="substructures")
        persist_substructures(store, run_id, step1, committed)

    def stored_relations(step1) -> StoreRelations:  # faithful deah: SDVChain reads them back
        return StoreRelations.read(store, run_id, step1.network.L)

    def on_stage(name: str) -> None:
        _kill_point(f"solve:{name}")
        if progress is not None:
            progress.stage(name)

    try:
        result = solve(
            network, engine, seed, on_stage=on_stage, **solve_options,
            on_step1=save_step1 if engine in ("deah", "deah-complete") else None,
            relations=stored_relations if engine == "deah" else None,
        )
    except (ResourceLimit, TooManySubstructures):
        if not resume:  # refused before producing anything: leave no trace of a new run
            store.run("delete_run_artifacts", run=run_id)
            store.run("delete_run", id=run_id)
        raise
    _kill_point("solved")
    on_write_stage, on_batch = _write_hooks(progress)

    t0 = time.perf_counter()
    if is_described_run(result):  # the networks people train: the description, not a node per path
        write_described_deah(store, run_id, result, LayeredForm(network), committed, on_write_stage, on_batch)
    else:
        write_artifacts(store, run_id, result, on_write_stage, on_batch, committed)
    if committed is not None:
        committed.check_used()
    timings["persist"] = time.perf_counter() - t0
    all_timings = {**result.timings, **timings}
    _kill_point("complete")
    store.run(
        "complete_run",
        id=run_id,
        finished=now(),
        basis_size=result.basis_size,
        certified=result.certified,
        raw_certified=result.raw_verdict.certified,
        raw_size=result.raw_verdict.size,
        repairs=len(result.repairs),
        repairs_needed=result.repairs_needed,
        discarded=len(result.discarded),
        timings=json.dumps({k: round(v, 6) for k, v in all_timings.items()}),
    )
    return RunOutcome(run_id, result, all_timings, committed.rows if committed is not None else 0)


@dataclass
class GeneralOutcome:
    run_id: str
    result: GeneralResult
    timings: dict[str, float]
    resumed_rows: int = 0


def execute_general_run(store: Store, network: GeneralNetwork, engine: str = "skeleton", seed: int = 0, resume: str | None = None,
                        progress=None, **solve_options) -> GeneralOutcome:
    """Solve a general network (``general.solve.solve_general``: skeleton, or a DEAH engine where
    it reads the network) and persist the run: its Network (layers, connections), a Run and the
    kept paths (``KEPT``); with a DEAH engine also every artifact of the layered run on the
    network's core (Step 1's substructure paths and relations, subdivision sets, chains, the
    discarded paths with their rule records and certificates), in general path form, by the same
    writer as a layered run (``store/artifacts.py``, ``store/path_forms.py``); a DEAH engine on a
    layer DAG core stores its own artifacts (``store/dag_runs.py``: deah-complete's description,
    faithful deah's substructures, Cypher's relations, records and certificates). The run is
    'complete' only once everything is written; ``resume`` redoes a killed run by id, keeping the
    rows it committed (the solve is deterministic). ``solve_options``: ``memory_limit``,
    ``time_limit``."""
    timings: dict[str, float] = {}
    committed: Committed | None = None
    if progress is not None:
        progress.stage(f"solve ({engine})")
    result = solve_general(network, engine, seed, **solve_options)  # a refusal leaves no trace in the store
    core = result.core  # DEAH engines: the layered run on the core
    form = GeneralForm(network, [network.index[name] for name in result.parts["core_layers"]] if core is not None else ())
    if core is not None and (form.core.widths, form.core.pairs) != (core.network.widths, core.network.pairs):
        # why and compare read the core back from its layers (store/path_forms.stored_form): it must be the one solved
        raise StoreError(f"the core of {network.name or 'the network'} read back from its layers is not the one solved; not stored")
    key = ingest_general_network(store, network)
    if resume:
        run_id = resume
        t0 = time.perf_counter()
        committed = Committed.read(store, run_id)
        timings["resume"] = time.perf_counter() - t0
        store.run("restart_run", id=run_id, pid=os.getpid())
    else:
        run_id = new_run_id()
        store.run("create_run", id=run_id, key=key, engine=result.engine, seed=seed, started=now(), m=network.m, H=network.H, pid=os.getpid())
    _run_stored(progress, run_id, resumed=bool(resume))
    _kill_point("solved")
    on_write_stage, on_batch = _write_hooks(progress)

    t0 = time.perf_counter()
    if core is not None and core.deah is not None:  # Step 1 of the core, as a layered run stores it while solving
        on_write_stage("substructures")
        store.run("set_run_stage", id=run_id, stage="substructures")
        persist_substructures(store, run_id, core.deah.step1, committed, form, on_batch)
    if isinstance(result.basis, DescribedBasis):  # the skeleton: walks and families, not a node per path
        write_described(store, run_id, form, result.basis, committed, on_write_stage, on_batch)
        if result.dag is not None:  # deah-complete on a layer DAG core: its substructures and blocks
            write_dag_run(store, run_id, result.dag, result.basis_size, committed, on_write_stage, on_batch)
    elif result.sdvchain is not None:  # faithful deah on a layer DAG core: Step 1, Cypher's relations, every discard
        write_sdvchain_run(store, run_id, result, committed, on_write_stage, on_batch)
    elif is_described_run(result):  # a DEAH run held described: its rule and plan, the explicit paths
        write_described_deah(store, run_id, result, form, committed, on_write_stage, on_batch)
    else:
        write_artifacts(store, run_id, core, on_write_stage, on_batch, committed, form=form, basis=result.blocks)
    if committed is not None:
        committed.check_used()
    timings["persist"] = time.perf_counter() - t0
    all_timings = {**result.timings, **timings}
    _kill_point("complete")
    # The raw union: the core's (before any repair) and the paths of the other parts.
    raw = core.raw_verdict if core is not None else None
    engine_run = core if core is not None else result if result.sdvchain is not None else None  # its repairs and discards
    store.run(
        "complete_run", id=run_id, finished=now(), basis_size=result.basis_size, certified=result.certified,
        raw_certified=raw.certified if raw is not None else result.raw_verdict.certified if engine_run is not None else result.certified,
        raw_size=raw.size + result.basis_size - core.basis_size if raw is not None else result.raw_verdict.size if engine_run is not None else result.basis_size,
        repairs=len(engine_run.repairs) if engine_run is not None else 0,
        repairs_needed=engine_run.repairs_needed if engine_run is not None else 0,
        discarded=len(engine_run.discarded) if engine_run is not None else result.dag.discard_count if result.dag is not None else 0,
        timings=json.dumps({k: round(v, 6) for k, v in all_timings.items()}),
    )
    return GeneralOutcome(run_id, result, all_timings, committed.rows if committed is not None else 0)
