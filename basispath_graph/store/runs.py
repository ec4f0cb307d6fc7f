"""Solve a network and persist every artifact of the run, atomically visible and resumable.

A run is created in status 'running' and becomes 'complete' only after every artifact is
written. A process that dies leaves it 'running'; the next writer of an embedded store marks it
'incomplete' (only one writer can hold the store), and ``--resume`` deletes the partial artifacts
and redoes the run under the same id. Earlier runs are never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import time

import numpy as np
from dataclasses import dataclass
from datetime import datetime, timezone

from ..deah.step1_substructures import TooManySubstructures
from ..deah.step3_sdvchain import Discard
from ..guards import ResourceLimit
from ..network import Network, PathBlock, blocks_from_json
from ..discarded import DiscardedList
from ..solver import DEFAULT_ENGINE, SolveResult, solve
from .base import Ragged, Store, StoreError, StoreLocked, open_store
from .relations import StoreRelations, edge_code

__all__ = [
    "network_key", "ingest_network", "execute_run", "RunOutcome", "mark_stale_runs", "new_run_id", "KILL_POINTS",
    "network_from_row", "list_runs", "run_status", "delete_run", "open_run_store", "load_run_for_resume", "live_writer_pid",
]

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
    "basis paths:batch:5",
    "discards",
    "discards:batch:1",
    "certificates",
    "certificates:batch:1",
    "complete",
)


def _kill_point(stage: str) -> None:
    """Crash-safety tests: BASISPATH_KILL_AT=<stage> makes the process SIGKILL itself there."""
    if os.environ.get(KILL_ENV) == stage:
        os.kill(os.getpid(), signal.SIGKILL)


def _reads_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def new_run_id() -> str:
    """8 hex characters that never read as a number.

    About 3% of random hex ids do ("12345678", "791049e3" = 7.91e8): ``--param run=791049e3``
    then passed a float and matched no run, so queries on such a run found nothing.
    """
    while True:
        run_id = secrets.token_hex(4)
        if not _reads_as_number(run_id):
            return run_id


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def network_key(network: Network) -> str:
    """Networks are identified by their structure (widths and skips), not by name."""
    text = json.dumps({"widths": list(network.widths), "skips": [list(s) for s in network.skips]})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ingest_network(store: Store, network: Network) -> str:
    key = network_key(network)
    store.run(
        "merge_network",
        key=key,
        name=network.name,
        widths=list(network.widths),
        skips=[v for pair in network.skips for v in pair],
        m=network.m,
        H=network.H,
        layers=[{"uid": f"{key}:{l}", "index": l, "width": w} for l, w in enumerate(network.widths)],
    )
    return key


def mark_stale_runs(store: Store) -> list[str]:
    """Embedded store only: the writer holds the lock, so any 'running' run is orphaned."""
    return [r["id"] for r in store.run("mark_stale_runs")]


@dataclass
class RunOutcome:
    run_id: str
    result: SolveResult
    timings: dict[str, float]


def _neuron_offsets(network: Network) -> list[int]:
    out, base = [], 0
    for w in network.widths:
        out.append(base)
        base += w
    return out


def _path_columns(run_id: str, network: Network, blocks, start_id: int, kept: bool) -> dict:
    """Columns for ``insert_basis_paths`` of all paths of ``blocks`` (ids start_id, ...).

    List columns are ``Ragged`` (numpy values + offsets) so that millions of paths never become
    Python lists on the way to a COPY.
    """
    offs = np.array(_neuron_offsets(network), dtype=np.int64)
    n = sum(len(b) for b in blocks)
    text: list[str] = []
    for block in blocks:
        template = ",".join(f"{l}:%d" for l in block.layers)  # the form of verify.format_path
        text.extend(template % tuple(row) for row in block.nodes.tolist())
    return {
        "uid": [f"{run_id}:{i}" for i in range(start_id, start_id + n)],
        "run": [run_id] * n,
        "id": np.arange(start_id, start_id + n, dtype=np.int64),
        "nodes": Ragged.from_rows([b.nodes + offs[list(b.layers)] for b in blocks]),
        "layers": Ragged.from_rows([np.broadcast_to(np.array(b.layers), (len(b), len(b.layers))) for b in blocks]),
        "text": text,
        "kept": np.full(n, kept),
    }


def _discard_row(run_id: str, k: int, network: Network, reason) -> dict:
    L = network.L
    if isinstance(reason, Discard):
        return {
            "uid": f"{run_id}:d{k}",
            "run": run_id,
            "step": reason.step,
            "action": "discard",
            "chain": reason.chain,
            "pair": list(reason.pair),
            "shared_pairs": [edge_code(L, a, b) for a, b in reason.shared_pairs],
            "ep": list(reason.ep),
            "ucp_star": list(reason.ucp_star),
            "iep": list(reason.iep),
            "shared": list(reason.shared),
        }
    return {
        "uid": f"{run_id}:d{k}",
        "run": run_id,
        "step": "repair",
        "action": reason.action,
        "chain": -1,
        "pair": [],
        "shared_pairs": [],
        "ep": [],
        "ucp_star": [],
        "iep": [],
        "shared": [],
    }


def _columns(rows: list[dict]) -> dict[str, list]:
    if not rows:
        return {}
    return {k: [r[k] for r in rows] for k in rows[0]}


def _write_artifacts(store: Store, run_id: str, result: SolveResult, progress) -> None:
    net = result.network

    current = {"stage": "", "batches": 0}

    def stage(name: str):
        _kill_point(name)
        store.run("set_run_stage", id=run_id, stage=name)
        current.update(stage=name, batches=0)
        if progress:
            progress.stage(name)

    def committed(rows: int):
        """Called by the store after each bulk batch is committed."""
        if progress:
            progress.advance(rows)
        current["batches"] += 1
        _kill_point(f"{current['stage']}:batch:{current['batches']}")

    def bulk(name: str, columns: dict):
        if columns:
            store.bulk(name, columns, committed)

    deah = result.deah
    if deah is not None:
        stage("subdivision sets")
        s1, s3 = deah.step1, deah.step3
        sets = [
            {"uid": f"{run_id}:u{idx}", "run": run_id, "r": idx, "size": s1.paths[idx].u_size, "path": f"{run_id}:s{idx}"}
            for idx in s1.selected
        ]
        bulk("insert_subdivision_sets", _columns(sets))
        store.run("compute_contains", run=run_id)
        links = []
        for t, chain in enumerate(s3.chains, start=1):
            for pos, idx in enumerate(chain + [s1.p0], start=1):
                links.append({"chain_uid": f"{run_id}:c{t}", "run": run_id, "t": t, "pos": pos, "set_uid": f"{run_id}:u{idx}"})
        bulk("insert_chains", _columns(links))

    stage("basis paths")
    if isinstance(result.discarded, DiscardedList):  # arrays: no record per path needed here
        discarded_blocks = result.discarded.blocks()
        discarded_subs = result.discarded.subs.tolist()
    else:
        discarded_blocks = blocks_from_json([[[l, i] for l, i in zip(d.layers, d.indices)] for d in result.discarded])
        discarded_subs = [d.substructure for d in result.discarded]
    kept_columns = _path_columns(run_id, net, result.basis, 0, True)
    kept_uids = kept_columns["uid"]
    n = len(kept_uids)
    bulk("insert_basis_paths", kept_columns)
    discarded_columns = _path_columns(run_id, net, discarded_blocks, n, False)
    discarded_uids = discarded_columns["uid"]
    bulk("insert_basis_paths", discarded_columns)
    bulk("link_kept", {"from": [run_id] * n, "to": kept_uids})
    bulk("link_discarded", {"from": [run_id] * len(discarded_uids), "to": discarded_uids})
    if deah is not None:
        subs = [s for b, s in zip(result.basis, result.basis_substructures) for _ in range(len(b))]
        origin = [(kept_uids[i], f"{run_id}:s{s}") for i, s in enumerate(subs) if s is not None]
        origin += [(discarded_uids[k], f"{run_id}:s{s}") for k, s in enumerate(discarded_subs) if s is not None]
        bulk("link_from_substructure", {"from": [a for a, _ in origin], "to": [b for _, b in origin]})

        stage("discards")
        readmitted = {(r.layers, r.indices) for r in result.repairs if r.action != "drop"}
        # Only re-admitted paths need their basis id looked up (rare: repairs only).
        index_of = {}
        if readmitted:
            i = 0
            for block in result.basis:
                for row in block.nodes.tolist():
                    if (block.layers, tuple(row)) in readmitted:
                        index_of[(block.layers, tuple(row))] = i
                    i += 1
        records, reasons, certs = [], [], []
        for k, d in enumerate(result.discarded):
            records.append(_discard_row(run_id, len(records), net, d.reason))
            reasons.append((f"{run_id}:{n + k}", records[-1]["uid"]))
            certs.extend((f"{run_id}:{n + k}", f"{run_id}:{i}", c) for i, c in d.certificate)
        # Paths SDVChain discarded that the repair re-admitted keep both records.
        for disc in deah.step3.discards:
            block = deah.bases[disc.substructure]
            key = (block.layers, tuple(block.nodes[disc.row].tolist()))
            if key in readmitted:
                records.append(_discard_row(run_id, len(records), net, disc))
                reasons.append((f"{run_id}:{index_of[key]}", records[-1]["uid"]))
        for r in result.repairs:
            if r.action != "drop":
                records.append(_discard_row(run_id, len(records), net, r))
                reasons.append((f"{run_id}:{index_of[(r.layers, r.indices)]}", records[-1]["uid"]))
        bulk("insert_discards", _columns(records))
        bulk("link_reason", {"from": [a for a, _ in reasons], "to": [b for _, b in reasons]})
        stage("certificates")
        bulk("link_certified_by", {"from": [a for a, _, _ in certs], "to": [b for _, b, _ in certs], "coef": [c for _, _, c in certs]})


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
    key = ingest_network(store, network)
    if resume:
        run_id = resume
        store.run("delete_run_artifacts", run=run_id)
        store.run("restart_run", id=run_id, started=now(), pid=os.getpid())
    else:
        run_id = new_run_id()
        store.run("create_run", id=run_id, key=key, engine=engine, seed=seed, started=now(), m=network.m, H=network.H, pid=os.getpid())

    relations = None
    if engine in ("deah", "deah-complete"):
        def relations(step1):
            _kill_point("substructures")
            store.run("set_run_stage", id=run_id, stage="substructures")
            return StoreRelations.compute(store, run_id, step1)

    def on_stage(name: str) -> None:
        _kill_point(f"solve:{name}")
        if progress is not None:
            progress.stage(name)

    try:
        result = solve(network, engine, seed, relations=relations, on_stage=on_stage, **solve_options)
    except (ResourceLimit, TooManySubstructures):
        if not resume:  # refused before producing anything: leave no trace of a new run
            store.run("delete_run_artifacts", run=run_id)
            store.run("delete_run", id=run_id)
        raise
    _kill_point("solved")
    t0 = time.perf_counter()
    _write_artifacts(store, run_id, result, progress)
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
    return RunOutcome(run_id, result, all_timings)


def live_writer_pid(store: Store, run_id: str, status: str) -> int | None:
    """The PID of the process still writing run RUN_ID, or None. Only a Neo4j server needs
    asking (its connections, ``Neo4jStore.live_pids``): an embedded store's writer lock already
    keeps everyone else out while a run is written. When the server does not say who is
    connected, None: the user's word is taken."""
    if status != "running" or store.backend != "neo4j":
        return None
    live = store.live_pids()
    pid = next((x["pid"] for x in store.run("list_runs") if x["id"] == run_id), None)
    return pid if live is not None and pid in live else None


def load_run_for_resume(store: Store, run_id: str) -> tuple[Network, str, int]:
    """The network, engine and seed of a run that may be resumed; refuses complete runs and, on
    Neo4j, runs whose process is still connected (``Neo4jStore.live_pids``)."""
    rows = store.run("get_run", id=run_id)
    if not rows:
        raise StoreError(f"no run {run_id!r} in this store")
    r = rows[0]
    if r["status"] == "complete":
        raise StoreError(f"run {run_id} is already complete; nothing to resume")
    pid = live_writer_pid(store, run_id, r["status"])
    if pid is not None:
        # redoing a run that its process is still writing would delete its artifacts under it
        raise StoreError(f"run {run_id} is still being written by PID {pid} (connected to the server); resume it once that process has ended")
    return network_from_row(r), r["engine"], int(r["seed"])


def network_from_row(row: dict) -> Network:
    """The Network of a stored row with ``widths``, ``skips`` (flat: a0, b0, a1, b1, ...) and
    ``name``, as ``merge_network`` stores them: the one decoder of that layout."""
    skips = [int(v) for v in row["skips"] or []]
    return Network([int(w) for w in row["widths"]], list(zip(skips[0::2], skips[1::2])), row["name"] or "")


def list_runs(store: Store) -> list[dict]:
    """Every run, newest first (``list_runs.cypher``), with the status a reader should see.

    An embedded store is only read while no writer holds it, so a 'running' run there is one
    whose process died: it is reported 'incomplete'. On Neo4j a run is still running while its
    process is connected to the server (``Neo4jStore.live_pids``)."""
    rows = store.run("list_runs")
    if store.backend != "neo4j":
        for r in rows:
            if r["status"] == "running":
                r["status"] = "incomplete"
    elif any(r["status"] == "running" for r in rows):
        live = store.live_pids()
        for r in rows:
            if r["status"] == "running" and live is not None and r["pid"] not in live:
                r["status"] = "incomplete"
    return rows


def run_status(store: Store, run_id: str) -> str:
    """The status of run RUN_ID; StoreError when the store has no such run."""
    rows = store.run("get_run", id=run_id)
    if not rows:
        raise StoreError(f"no run {run_id!r} in this store (see 'basispath runs')")
    return rows[0]["status"]


def delete_run(store: Store, run_id: str) -> None:
    """Delete run RUN_ID and every artifact it owns; its network and other runs stay.

    The run is marked incomplete first, so a delete cut short on LadybugDB never leaves a
    'complete' run without artifacts. StoreError for an unknown run; StoreLocked when a Neo4j
    run is still being written by a connected process."""
    status = run_status(store, run_id)
    pid = live_writer_pid(store, run_id, status)
    if pid is not None:
        raise StoreLocked(
            f"run {run_id} is still being written by PID {pid} (connected to the server); delete it once that process has ended"
        )
    store.run("mark_run_deleting", id=run_id)
    store.run("delete_run_artifacts", run=run_id)
    store.run("delete_run", id=run_id)


def open_run_store(uri: str | None, write: bool, wait: float = 0) -> Store:
    """open_store for the commands and the Python API: a writer of an embedded store holds its
    only write lock, so any run still 'running' there is orphaned and is marked incomplete."""
    store = open_store(uri, write=write, wait=wait)
    if write and store.backend == "ladybug":
        try:
            mark_stale_runs(store)
        except BaseException:
            store.close()
            raise
    return store
