"""Stored runs from Python: ``open_store`` and the :class:`GraphStore` it returns.

The same operations as ``basispath run / runs / why / compare / delete / query``, on the
same graph (LadybugDB folder or Neo4j 5), through the same functions the CLI uses.
"""

from __future__ import annotations

import json
from itertools import islice
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .analysis.compare import Comparison, column_from_run
from .analysis.general_coordinates import stored_general_path
from .general.blocks import block_general_paths
from .general.described import DescribedBasis, DescribedPaths
from .general.lazy_blocks import CHUNK_ROWS, SpelledRows, iter_chunks
from .store import described_rows
from .general.dag_discards import DagDiscardPaths
from .general.paper_setting import reads_as_layer_dag
from .store.dag_runs import load_dag_run
from .store.described_deah import is_described_run, load_described_deah
from .store.described_rows import load_described
from .store.path_forms import GeneralForm
from .general.documents import general_core_path
from .analysis.paths_through import held_rows, path_sources, paths_through, resolve_layer, stored_described
from .analysis.why import explain
from .errors import BadInput, StoreError, StoreLocked, StoreUnavailable
from .guards import memory_limit_bytes
from .general.model import GeneralNetwork
from .network import Network
from .solver import DEFAULT_ENGINE, PlainPath, SolveResult
from .store.base import Store, is_neo4j_uri, resolve_store_uri
from .store.ladybug_store import WAIT_OPTION, holds_store
from .pipeline import execute_general_run, execute_run
from .store.general_networks import stored_network
from .store.runs import delete_run, list_runs, network_from_row, open_run_store
from .verify import parse_path

__all__ = ["open_store", "GraphStore", "StoredRun"]


@dataclass(repr=False)
class StoredRun:
    """A run as the store holds it: its network, engine, status and paths.

    ``basis_paths`` are in basis index order (the indices certificates use); ``result`` is the
    :class:`SolveResult` when this process solved the run, else None.
    """

    id: str
    network: Network
    engine: str
    seed: int
    status: str
    certified: bool | None
    basis_paths: list[PlainPath]
    discarded_paths: list[PlainPath]
    result: SolveResult | None = None

    @property
    def m(self) -> int:
        return self.network.m

    @property
    def H(self) -> int:
        return self.network.H

    @property
    def basis_size(self) -> int:
        return len(self.basis_paths)

    def __repr__(self) -> str:
        return (
            f"StoredRun(id={self.id!r}, network={self.network.name!r}, engine={self.engine!r}, status={self.status!r}, "
            f"basis={self.basis_size} paths, certified={self.certified}, discarded={len(self.discarded_paths)})"
        )


class _MadePaths(Sequence):
    """Paths made one at a time by ``make(k)``, k < ``n`` (a described run's kept or discarded paths)."""

    def __init__(self, n: int, make, blocks=None):
        self.n, self.make = n, make
        if blocks is not None:  # the same paths as blocks in order (what paths_through reads)
            self.iter_blocks = blocks

    @classmethod
    def of(cls, result) -> tuple["_MadePaths", "_MadePaths"]:
        """The kept and discarded paths of a rebuilt described run, in the stored path form."""
        net = result.network
        kept_blocks = lambda: iter_chunks(result.basis)  # noqa: E731
        arrays = hasattr(result.discarded, "iter_blocks")  # Step 3's table (DiscardedList): blocks; a layer DAG's: records
        # A discard spelled without its record: an on-demand certificate is not made to read a path.
        spelled = result.discarded.path if arrays else (lambda k: (result.discarded[k].layers, result.discarded[k].indices))
        if net.is_layered:
            kept = cls(result.basis_size, lambda k: tuple(zip(*result.basis_path(k))), kept_blocks)
            return kept, cls(len(result.discarded), lambda k: tuple(zip(*spelled(k))),
                             (lambda: result.discarded.iter_blocks(CHUNK_ROWS, lazy=True)) if arrays else None)

        def discarded(k: int):
            doc = general_core_path(result.parts, net, *spelled(k))
            return tuple((net.index[name], i) for name, i in doc["nodes"]), tuple(doc["taps"])

        form = GeneralForm(net, [net.index[name] for name in result.parts["core_layers"]])
        discarded_blocks = lambda: (SpelledRows(b, lambda made, at: form.block(made.layers, made.nodes))  # noqa: E731
                                    for b in result.discarded.iter_blocks(CHUNK_ROWS, lazy=True))
        return (cls(result.basis_size, result.basis_path, kept_blocks),
                cls(len(result.discarded), discarded, discarded_blocks if arrays else None))

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.n))]
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError(k)
        return self.make(k)


def _plain(text: str) -> PlainPath:
    layers, indices = parse_path(text)
    return tuple(zip(layers, indices))


class GraphStore:
    """An open store of runs; close it (or use ``with``) to release it.

    An embedded store opened for writing (the default) is held by this process alone: other
    processes, ``basispath`` commands included, wait or fail with exit code 3 until it is
    closed. ``open_store(uri, read_only=True)`` shares it with other readers.
    """

    def __init__(self, store: Store, uri: str | None):
        self._store = store
        self.uri = uri

    @property
    def backend(self) -> str:
        """``"ladybug"`` (embedded) or ``"neo4j"``."""
        return self._store.backend

    def run(self, network: Network | GeneralNetwork, engine: str | None = None, seed: int = 0, **solve_options) -> StoredRun:
        """Solve ``network`` and store the run with every artifact (``basispath run``).

        ``engine`` defaults to deah-complete, and to skeleton for a general network (layers,
        connections: ``load_general``), whose run stores its layers, connections and kept paths.
        ``solve_options`` are :func:`~basispath_graph.solver.solve`'s (``memory_limit``,
        ``time_limit``, ``on_stage``, ...; ``solve_general``'s for a general network). The run
        becomes 'complete' only once everything is written; an error leaves no complete run behind.

        Returns
        -------
        StoredRun
            with ``result``, the SolveResult (a GeneralResult for a general network, whose
            ``basis_paths`` are general paths: ``(((layer, index), ...), taps)``).
        """
        if not network.is_layered:
            general = execute_general_run(self._store, network, engine or "skeleton", seed, **solve_options)
            result = general.result
            big = (isinstance(result.basis, DescribedBasis) and result.basis_size > described_rows.LISTED_PATHS) or is_described_run(result)
            basis = DescribedPaths(result.basis, network=network) if big else [p for b in result.blocks for p in block_general_paths(network, b)]  # big: made when read
            discarded = _MadePaths.of(result)[1] if result.core is not None else []  # a DEAH run's: its core's, made when read
            if result.dag is not None:  # a layer DAG core's: made when read
                discarded = DagDiscardPaths(result.dag)
            if result.sdvchain is not None:  # faithful deah on a layer DAG core: its records, in id order
                discarded = [(tuple(zip(d.layers, d.indices)), d.taps) for d in result.discarded]
            return StoredRun(general.run_id, network, result.engine, seed, "complete", result.certified, basis, discarded, result)
        engine = engine or DEFAULT_ENGINE
        outcome = execute_run(self._store, network, engine, seed, **solve_options)
        result = outcome.result
        return StoredRun(
            outcome.run_id, network, result.engine, seed, "complete", result.certified,
            result.basis_paths, result.discarded_paths, result,
        )

    def runs(self) -> list[dict]:
        """Every run, newest first (``basispath runs --json``): id, network, engine, seed,
        status (running, complete, incomplete), m, H, basis_size, certified, repairs, times."""
        return list_runs(self._store)

    def network_of(self, run_id: str) -> Network | GeneralNetwork:
        """The network a stored run was solved on. StoreError for an unknown run."""
        return self._stored(run_id)[2]

    def _stored(self, run_id: str) -> tuple[dict, dict, Network | GeneralNetwork]:
        """(its row in ``runs``, its Run node, its network) of a stored run; StoreError if none."""
        row = next((r for r in list_runs(self._store) if r["id"] == run_id), None)
        if row is None:
            raise StoreError(f"no run {run_id!r} in this store (see 'basispath runs')")
        (run,) = self._store.run("get_run", id=run_id)
        return row, run, stored_network(self._store, run)

    def load(self, run_id: str) -> StoredRun:
        """One stored run with its basis and discarded paths. StoreError for an unknown run.
        O(paths of the run)."""
        return self._load(run_id, *self._stored(run_id))

    def _load(self, run_id: str, row: dict, run: dict, net) -> StoredRun:
        general = run["kind"] == "general"
        rebuilt = load_described_deah(self._store, run_id, net, run) if run["engine"] == "deah-complete" else None
        if rebuilt is not None:  # a described DEAH run: every path made from its description when read
            kept, discarded = _MadePaths.of(rebuilt)
            return StoredRun(run_id, net, run["engine"], int(run["seed"]), row["status"], row["certified"], kept, discarded, rebuilt)
        kept, discarded = [], []
        rows = self._store.run("run_paths", run=run_id)
        described = load_described(self._store, run_id, net, [r for r in rows if r["kept"]]) if general else None
        for p in rows:  # a general DEAH run's discards are its core's
            (kept if p["kept"] else discarded).append(stored_general_path(net, p) if general else _plain(p["text"]))
        if general:
            unlisted = described is not None and len(kept) < described.path_count  # a big skeleton run's: made when read
            basis = DescribedPaths(described) if unlisted else kept
            if run["engine"] == "deah-complete" and reads_as_layer_dag(net) and row["status"] == "complete":
                discarded = DagDiscardPaths(load_dag_run(self._store, run_id, net, run))  # a layer DAG core: made when read
            return StoredRun(run_id, net, run["engine"], int(run["seed"]), row["status"], row["certified"], basis, discarded)
        return StoredRun(
            run_id, network_from_row(run), run["engine"], int(run["seed"]), row["status"], row["certified"], kept, discarded,
        )

    def delete(self, run_id: str) -> None:
        """Delete one run and every artifact it owns; other runs and the network stay."""
        delete_run(self._store, run_id)

    def why(self, run_id: str, path) -> dict:
        """Why a path of a run was kept or discarded (``basispath why --json``): the reason and
        the certificate, re-verified by vector addition now (``"verified"``).

        ``path`` is a stored path id, text like ``"0:1,1:0,2:1"`` or (layer, index) pairs; on
        a general run a stored id or a general path ``{"nodes": [[layer, index], ...], "taps": [...]}``
        (a mapping or its JSON text)."""
        if isinstance(path, Mapping):
            path = json.dumps(path)
        elif not isinstance(path, (str, int)):
            path = ",".join(f"{int(l)}:{int(i)}" for l, i in path)
        return explain(self._store, run_id, str(path))

    def paths_through(self, run_id: str, layer: int | str, neuron: int, *, limit: int | None = None, progress=None) -> list[dict]:
        """Every path of a run, kept and discarded, through neuron ``neuron`` of ``layer`` (an
        index, a general layer's position in the spec or its name), by id: rows ``{"id", "text",
        "kept"}`` (``basispath through``). A run whose paths are ``BasisPath`` nodes is asked in
        Cypher (``paths_through_neuron.cypher``); a run stored described has no node for most of
        its paths, so they are made from its description, block by block, and filtered in Python
        (``analysis/paths_through.py``; ResNet-50's 25.5 M skeleton paths in seconds). The first
        ``limit`` rows only, when given; ``progress(paths read)`` on the Python side. No row for a
        layer the network does not have or a neuron outside it; StoreError for an unknown run;
        LimitExceeded, in one line, for an answer that would not fit in half the memory limit
        (``guards.memory_limit_bytes``): read it with ``iter_paths_through``."""
        rows = islice(self.iter_paths_through(run_id, layer, neuron, progress=progress), limit)
        return held_rows(rows, f"{layer}:{neuron} of run {run_id}", memory_limit_bytes() // 2)

    def iter_paths_through(self, run_id: str, layer: int | str, neuron: int, *, progress=None) -> Iterator[dict]:
        """``paths_through``'s rows one at a time, in id order, in the memory of one block:
        for answers too big to hold (VGG-19's skeleton run has over 100 M paths through one
        neuron of its first layer). The run is looked up now (StoreError for an unknown one),
        the rows made as they are read."""
        row, run, network = self._stored(run_id)
        position = resolve_layer(network, layer)
        if not stored_described(self._store, run_id, int(run["basis_size"] or 0)):
            return iter(self._store.run("paths_through_neuron", run=run_id, layer=position, neuron=int(neuron)))
        stored = self._load(run_id, row, run, network)
        return paths_through(network, path_sources(stored.basis_paths, stored.discarded_paths), position, neuron, progress)

    def compare(self, *run_ids: str) -> Comparison:
        """Stored runs side by side (``basispath compare RUN...``)."""
        columns = []
        for run_id in run_ids:
            column = column_from_run(self._store, run_id)
            if column is None:
                raise StoreError(f"no run {run_id!r} in this store (see 'basispath runs')")
            columns.append(column)
        return Comparison(columns)

    def query(self, cypher: str, **params) -> list[dict]:
        """Run Cypher with ``$params`` given as keywords; rows as dicts (column -> value).
        Read-only when the store was opened with ``read_only=True``."""
        columns, rows = self._store.query(cypher, params)
        return [dict(zip(columns, row)) for row in rows]

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GraphStore({self.uri!r}, backend={self.backend!r})"


def open_store(uri: str | None = None, *, read_only: bool = False, wait: float = 0, create: bool = False) -> GraphStore:
    """Open a store of runs: a folder (LadybugDB, embedded) or a ``neo4j://`` / ``bolt://`` URI.

    Parameters
    ----------
    uri : str, optional
        Default ``$BASISPATH_STORE``, else ``./basispath-store``. A folder that holds no store
        is refused unless ``create``, so a mistyped path never becomes a new, empty store.
        Neo4j credentials come from ``$NEO4J_USER`` / ``$NEO4J_PASSWORD``.
    read_only : bool
        Open for reading only (runs, load, why, compare, read queries).
    wait : float
        Seconds to wait for an embedded store another process holds (0: fail at once).
    create : bool
        Create the embedded store when the folder does not exist (or is empty); an existing
        store is opened as it is. Not with ``read_only``; a Neo4j server's database is always
        there.

    Returns
    -------
    GraphStore

    Raises
    ------
    StoreLocked
        another process holds the embedded store (wait up to ``wait`` seconds for it instead).
    StoreUnavailable
        no store at the path (and not ``create``), or the Neo4j server cannot be reached or
        refused the login.

    Examples
    --------
    >>> import tempfile
    >>> from basispath_graph import Network
    >>> with open_store(tempfile.mkdtemp() + "/store", create=True) as store:
    ...     run = store.run(Network([2, 2, 2], name="tiny"))
    ...     [(r["network"], r["engine"], r["status"], r["certified"]) for r in store.runs()]
    [('tiny', 'deah-complete', 'complete', True)]
    """
    if create and read_only:
        raise BadInput("open_store: create=True makes a store to write in; it cannot be read_only=True")
    path = resolve_store_uri(uri)
    if not create and not is_neo4j_uri(path) and "://" not in path and not holds_store(Path(path)):
        raise StoreUnavailable(f"no store at {path} (pass create=True to create one there)")
    try:
        return GraphStore(open_run_store(uri, write=not read_only, wait=wait, create=create), uri)
    except StoreLocked as exc:  # the refusal names the CLI's option; here it is a parameter
        raise StoreLocked(str(exc).replace(WAIT_OPTION, "wait=SECONDS")) from None
