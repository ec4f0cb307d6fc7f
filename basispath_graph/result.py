"""The result of a solve, one type for every network and engine: the basis, its exact verdict,
the discards with their rules and certificates, the parts of the basis, ``why`` and ``express``.

A layered network's result holds the engine's own run (Step 1-3 records under ``deah``); a
general network's result holds the layered run on its core under ``core`` and counts the paths
of each part (core, tap lift, extra layers, identity forest) in ``parts``. Paths are spelled
in the form of their network: ``((layer, index), ...)`` for a layered one, ``{"nodes": [[name,
index], ...], "taps": [...]}`` for a general one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .analysis.coordinates import check_certificate, coordinates
from .analysis.general_coordinates import check_general_certificate, general_coordinates
from .discarded import ITER_ROWS, DiscardedPath, DiscardedList, first_named, layered_rows_named
from .errors import BadInput, LimitExceeded
from .general.described_coordinates import DESCRIBED_COORDINATES_LISTED, described_coordinates
from .export import NEVER_A_CANDIDATE, NEVER_A_CANDIDATE_GENERAL, export_document, kept_reason, record_document, rule_document, summary, why_reason
from .general.blocks import block_general_paths, general_path_json, general_rows_named
from .general.dag_discards import DagDiscardPaths, discard_reason, locate_discard
from .general.described import path_count
from .general.described_lookup import ABSENT, core_path, described_core_lookup, described_lookup
from .deah.described_file import described_deah_document
from .deah.repair_list import path_key, position_named, repairs_that_readmit
from .general.documents import EXPLICIT_EXPORT_PATHS, general_basis_paths, general_core_path, general_export, general_summary, sdvchain_reason, sdvchain_rule
from .general.sdvchain_discards import SdvChainDiscards
from .general.paths import find_general_path, format_general_path, read_any_general_path
from .network import Network, rows_matching
from .verify import Verdict, read_path

__all__ = ["Result", "Repair", "PlainPath"]

PlainPath = tuple[tuple[int, int], ...]  # a path as plain data: ((layer, neuron index), ...) from layer 0 to L


@dataclass
class Repair:
    """One change the exact repair made to DEAH's union.

    action: "drop" (a kept path was dependent on the paths before it), "readmit" (a path SDVChain
    discarded raises the rank and comes back), or "add" (a skeleton path was needed to reach m-H).
    """

    action: str
    layers: tuple[int, ...]
    indices: tuple[int, ...]
    substructure: int | None
    taps: tuple[int, ...] | None = None  # a general network's path: its tap on each hop


@dataclass(repr=False)
class Result:
    """What :func:`~basispath_graph.solve` found: a basis path set, its exact verdict, the
    discards and repairs; the same type for every network and engine.

    ``certified``, ``m``, ``H``, ``basis_size``; ``basis`` holds the paths as blocks of arrays
    (``PathBlock`` for a layered network, ``GeneralBlock`` for a general one: each block is one
    route with its neurons and taps, the form large networks need); ``basis_paths`` and
    ``discarded_paths`` spell them in the network's path form; ``discarded`` holds the discards
    with their rule (``reason``) and certificate over ``basis`` (basis indices); ``parts`` counts
    the paths of each part of a general network's basis and ``core`` is the run on its core.
    ``why(path)`` and ``express(path)`` answer for any path; ``summary()`` and ``export()`` are
    what ``basispath solve --json`` and ``--export`` write.

    Examples
    --------
    >>> from basispath_graph import Network, solve
    >>> r = solve(Network([2, 3, 2]))
    >>> r
    Result(network='', engine='deah-complete', m=12, H=3, basis=9 paths, certified=True, discarded=0, repairs=0)
    >>> r.basis_paths[0]
    ((0, 0), (1, 0), (2, 0))
    >>> r.why([(0, 1), (1, 0), (2, 1)])["status"]
    'not a candidate'
    """

    network: Network
    engine: str
    seed: int
    basis: list  # PathBlock (layered network) or GeneralBlock (general network) blocks
    basis_substructures: list[int | None]  # substructure idx of each basis block (None: skeleton, or not the core)
    verdict: Verdict  # of the returned basis
    raw_verdict: Verdict  # of the engine's output before any repair
    discarded: Sequence[DiscardedPath] = field(default_factory=list)  # a DiscardedList for deah-complete
    repairs: Sequence[Repair] = field(default_factory=list)  # applied to ``basis``; after a repair a RepairList (drops spelled when read)
    deah: object = None  # the DeahResult of a layered network's DEAH run (Steps 1-3)
    repairs_needed: int = 0  # what the repair would change (also counted under --no-repair)
    timings: dict[str, float] = field(default_factory=dict)
    # How the discards' certificates were computed: "ear recursion" and "witness peeling" are
    # deah-complete's local ones (docs/deah-complete.md), "global elimination" the exact Expresser.
    certificate_method: str | None = None
    # Certificates re-added weight by weight in the solve (deah-complete's assembled ones, up to
    # RECHECK_LIMIT spread over the table); 0 when each is re-added as it is made, when read.
    certificates_rechecked: int = 0
    # A general network: the paths of each part (core, tap_lift, extra, identity) and the core's
    # layer names ("core_layers"); ``core`` is the layered Result on the core (DEAH engines).
    parts: dict = field(default_factory=dict)
    core: "Result | None" = None
    # deah-complete on a layer DAG core (general/dag_deah.py): its decomposition, B_r summaries,
    # discards and certificates made on demand
    dag: object | None = None
    # faithful deah on a layer DAG core (general/dag_sdvchain.py): Steps 1-2's plan, the listed B_r,
    # Step 3's chains, Q_t and discards (the discards, repairs and raw verdict are this result's)
    sdvchain: object | None = None

    @classmethod
    def of_general(cls, network: Network, engine: str, seed: int, blocks: list, verdict: Verdict, timings: dict,
                   parts: dict | None = None, core: "Result | None" = None) -> "Result":
        """A general network's result: its blocks and verdict; with a DEAH engine the core's
        discards, certificates (indices into ``blocks``: the core's kept paths come first, in
        the same order) and repairs are this result's."""
        if core is None:
            return cls(network, engine, seed, blocks, [None] * len(blocks), verdict, verdict, timings=timings,
                       parts=dict(parts or {}))
        table = getattr(blocks, "_table", None)  # a LazyBlocks: its blocks' parts (a core part may be chunked)
        if table is not None:
            n = len(core.basis)
            subs = [core.basis_substructures[p] if p < n else None for p, _, _ in table]
        else:
            subs = list(core.basis_substructures) + [None] * (len(blocks) - len(core.basis))
        return cls(network, engine, seed, blocks, subs, verdict, verdict, core.discarded, core.repairs,
                   repairs_needed=core.repairs_needed, timings=timings, certificate_method=core.certificate_method,
                   certificates_rechecked=core.certificates_rechecked, parts=dict(parts or {}), core=core)

    # -- sizes and verdict -----------------------------------------------------------------

    @property
    def certified(self) -> bool:
        """True when the returned basis passed exact verification (``verdict`` says why not)."""
        return self.verdict.certified

    @property
    def m(self) -> int:
        """Number of weights of the network."""
        return self.network.m

    @property
    def H(self) -> int:
        """Number of hidden rescaling classes of the network."""
        return self.network.H

    @property
    def basis_size(self) -> int:
        """Number of paths in the returned basis (m - H when certified)."""
        return path_count(self.basis)

    @property
    def blocks(self) -> list:
        """The basis blocks (the name general results had)."""
        return self.basis

    # -- paths -----------------------------------------------------------------------------

    @property
    def basis_paths(self) -> list:
        """The basis in the network's path form, in basis index order (certificates refer to
        these indices): ``((layer, index), ...)`` tuples, or general paths as JSON objects."""
        if not self.network.is_layered:
            return general_basis_paths(self)
        return [tuple(zip(b.layers, row)) for b in self.basis for row in b.nodes.tolist()]

    @property
    def discarded_paths(self) -> list:
        """The discarded paths in the network's path form, in the order of ``discarded``."""
        if self.dag is not None:  # a layer DAG core: made when read (DenseNet-121: 1.2 G of them)
            return DagDiscardPaths(self.dag, lambda path: general_path_json(self.network, path))
        if not self.network.is_layered and isinstance(self.discarded, DiscardedList):  # a layered core's: no record made
            return [general_core_path(self.parts, self.network, b.layers, tuple(row))
                    for b in self.discarded.iter_blocks(ITER_ROWS) for row in b.nodes.tolist()]
        if not self.network.is_layered:
            return [general_path_json(self.network, (tuple(zip(d.layers, d.indices)), d.taps)) if d.taps is not None
                    else general_core_path(self.parts, self.network, d.layers, d.indices) for d in self.discarded]
        if isinstance(self.discarded, DiscardedList):  # arrays: no record per path
            return [tuple(zip(b.layers, row)) for b in self.discarded.blocks() for row in b.nodes.tolist()]
        return [tuple(zip(d.layers, d.indices)) for d in self.discarded]

    def basis_path(self, index: int):
        """The basis path with this global index: (layers, indices) for a layered network, a
        general path ``((layer, index), ...), taps`` for a general one."""
        path_at = getattr(self.basis, "path_at", None)  # a described basis makes that one path alone
        if path_at is not None:
            return block_general_paths(self.network, path_at(index))[0]
        for block in self.basis:
            if index < len(block):
                if not self.network.is_layered:
                    return block_general_paths(self.network, _take(block, index))[0]
                return block.layers, tuple(int(i) for i in block.take([index]).nodes[0])  # a described block: that row alone
            index -= len(block)
        raise IndexError(index)

    # -- documents ---------------------------------------------------------------------------

    def summary(self) -> dict:
        """Exactly what ``basispath solve --json`` prints."""
        return summary(self) if self.network.is_layered else general_summary(self)

    def export(self, form: str = "auto") -> dict:
        """Exactly the JSON document ``basispath solve --export`` writes (``json.dumps`` it).

        ``form``: "paths" lists every path; "described" writes the description: a general
        network's skeleton (``general/described_io.py``, a few numbers per neuron) or a
        deah-complete run held described (``deah/described_file.py``, a few numbers per core
        neuron); "auto" (the default) is described above a million paths of a described basis,
        else paths.
        """
        if self.network.is_layered:
            described = self.deah is not None and self.deah.described and self.engine == "deah-complete" and not self.repairs
            if form == "described" and not described:
                raise BadInput("this layered run's basis is a list of paths; a described export needs a deah-complete run held described")
            if form == "described" or (form == "auto" and described and self.basis_size > EXPLICIT_EXPORT_PATHS):
                return described_deah_document(self)
            return export_document(self)
        return general_export(self, form)

    # -- questions about one path --------------------------------------------------------------

    def why(self, path) -> dict:
        """Why ``path`` was kept or discarded, or its coordinates when it was never a candidate:
        the answer ``GraphStore.why`` gives for a stored run, re-verified.

        ``path``: for a layered network ``"0:1,1:0,2:1"`` or (layer, index) pairs; for a general
        one ``{"nodes": [[layer, index], ...], "taps": [...]}`` (or its JSON text) or
        ``((layer, index), ...), taps``.

        Returns ``{"run", "path", "id", "status", "substructure", "reason", "certificate",
        "verified"}`` (and the path's ``text`` on a general network): ``status`` is "kept", "discarded" or "not a candidate"; ``reason`` the
        rule that decided it (``{"step", ...}`` in the shape of the rule: SDVChain call, hop
        rule, local rule, repair, or "coordinates"); ``certificate`` the terms ``{"coef",
        "path", "index"}`` with path = sum of coef x basis path (``index`` into ``basis``; on a
        general network with the path's ``text`` and its ``id``); ``verified`` the re-check by
        vector addition, done now. ``id`` is the path's id as a stored run of this result
        numbers it (kept paths by basis index, then the discards in order; None for a path
        never a candidate), ``substructure`` the layers (names, on a general network) of the
        substructure it came from; ``run`` is None (a stored run's answer has its id there).
        The answer is the stored run's but for ``run`` (tests/test_why_one_answer.py); a path
        the repair re-admitted names the repair, with the SDVChain call it undid as ``earlier``.

        Raises BadInput when ``path`` is not a path of the network.
        """
        if self.network.is_layered:
            return self._why_layered(path)
        return self._why_general(path)

    def express(self, path) -> dict:
        """The coordinates of any path of the network over this basis (``basispath_graph.express``):
        ``{"path", "text", "coordinates": [{"coef", "path", "index"}], "verified"}``."""
        if self.network.is_layered:
            return coordinates(self.network, self.basis, path)
        return self._general_coordinates(read_any_general_path(self.network, path))

    def _why_layered(self, path) -> dict:
        layers, indices = read_path(path)
        pairs = [[int(l), int(i)] for l, i in zip(layers, indices)]
        answer = {"run": None, "path": pairs, "id": None}
        described = described_lookup(self, layers, indices)  # a described run: by index arithmetic
        if described is not None and described[0] == "kept":
            found = self._block_of(described[1]), described[1]
        else:
            found = _find_row(self.basis, layers, indices) if described is None else None
        if found is not None:
            block, index = found
            sub = self._substructure_layers(self.basis_substructures[block])
            reason = self._readmission(path_key(layers, indices)) or kept_reason(sub is not None)
            return {**answer, "id": index, "status": "kept", "substructure": sub, "reason": reason,
                    "certificate": [{"coef": 1, "path": pairs, "index": index}], "verified": True}
        if described is not None and described[0] == "discarded":
            k = described[1]
        else:
            k = self._discard_position(layers, indices) if described is None else None
        if k is not None:  # ids as a stored run numbers them: the discards after the basis, in order
            record = self.discarded[k]
            found = self._discard_answer(self, record, pairs, (layers, indices), check_certificate)
            return {**answer, **found, "id": self.basis_size + k, "substructure": self._substructure_layers(record.substructure)}
        coords = coordinates(self.network, self.basis, tuple(zip(layers, indices)))
        return {**answer, "status": "not a candidate", "substructure": None,
                "reason": {"step": "coordinates", "detail": NEVER_A_CANDIDATE},
                "certificate": [{"coef": t["coef"], "path": t["path"], "index": t["index"]} for t in coords["coordinates"]],
                "verified": coords["verified"]}

    def _block_of(self, index: int) -> int:
        """The basis block holding basis index ``index``."""
        for k, block in enumerate(self.basis):
            if index < len(block):
                return k
            index -= len(block)
        raise IndexError(index)

    def _discard_position(self, layers, indices, taps=None) -> int | None:
        """Where a path is in ``discarded`` (None: it is not a discard), found by its rows, no
        record built."""
        if isinstance(self.discarded, (DiscardedList, SdvChainDiscards)):
            return self.discarded.position(layers, indices, taps)
        for k, d in enumerate(self.discarded):
            if tuple(d.layers) == tuple(layers) and tuple(d.indices) == tuple(indices) and d.taps == taps:
                return k
        return None

    def _rows_named(self, key: tuple):
        """``discarded.first_named``'s ``matches`` for the path ``key`` (``path_key``)."""
        return layered_rows_named(*key[:2]) if self.network.is_layered else general_rows_named(self.network, key)

    def _readmission(self, key: tuple) -> dict | None:
        """The repair that re-admitted a kept path, with the SDVChain call it undid as
        ``earlier`` (as a stored run's ``why`` names it); None for a path not re-admitted.
        ``key`` names the path as a ``Repair`` does (``path_key``): (layers, indices), and its
        taps on a general network (faithful deah on a layer DAG core). Both found by rows, no
        record spelled (Inception-v3 has millions of each)."""
        deah = self.deah if self.deah is not None else self.sdvchain
        matches = self._rows_named(key)
        if deah is None or position_named(repairs_that_readmit(self.repairs), key, matches) is None:
            return None
        reason = why_reason({"step": "repair", "action": "readmit"})
        k = first_named(((deah.bases[sub], rows) for sub, rows in deah.step3.discards.row_runs(ITER_ROWS)), matches)
        if k is None:
            return reason
        disc = deah.step3.discards[k]
        earlier = why_reason(rule_document(self, disc)) if self.deah is not None else sdvchain_rule(self, disc)
        return {**reason, "earlier": earlier}

    def _substructure_layers(self, idx) -> list[int] | None:
        """The layers of substructure path ``idx`` of a layered DEAH run (as ``why`` names a
        path's substructure); None for none (a skeleton path, a repair's added path)."""
        if idx is None or idx < 0 or self.deah is None:
            return None
        return list(self.deah.step1.paths[idx].layers)

    def _discard_answer(self, run: "Result", record, path_json, target, check, reason: dict | None = None) -> dict:
        """status, substructure, reason (the rule, from ``run``: this result or its core; or
        ``reason`` as given), certificate over this result's basis and its re-check by vector
        addition."""
        reason = reason if reason is not None else why_reason(record_document(run, record)["reason"])
        indices = [(int(i), int(c)) for i, c in (record.certificate or [])]
        terms = [(c, self.basis_path(i)) for i, c in indices]
        spell = (lambda p: [[int(l), int(i)] for l, i in zip(*p)]) if self.network.is_layered else (
            lambda p: general_path_json(self.network, p))
        return {"status": "discarded", "substructure": None if record.substructure is None else int(record.substructure),
                "reason": reason, "certificate": [{"coef": c, "path": spell(p), "index": i} for (c, p), (i, _) in zip(terms, indices)],
                "verified": bool(terms) and check(target, terms)}

    def _why_general(self, path) -> dict:
        """``why`` on a general network: the answer of the run stored (``analysis/why_general.py``,
        ``why_described.py``) but for ``run``: ids as the store numbers paths (kept by basis
        index, then the discards in order), substructures by their layers' names, certificate
        terms with their text and id."""
        net = self.network
        target = read_any_general_path(net, path)
        answer = {"run": None, "path": general_path_json(net, target), "text": format_general_path(net, target), "id": None}
        found = self._general_answer(target, answer)
        return {**answer, **found, "certificate": [self._general_term(t) for t in found["certificate"]]}

    def _general_answer(self, target, answer: dict) -> dict:
        net = self.network
        check = lambda t, terms: check_general_certificate(net, t, terms)  # noqa: E731
        key = path_key([l for l, _ in target[0]], [i for _, i in target[0]], target[1])  # as a record or a repair names it
        if self.sdvchain is not None:  # faithful deah on a layer DAG core: SDVChain's record or the repair's
            k = self._discard_position(*key)
            if k is not None:
                record = self.discarded[k]
                if not record.certificate and self.certified:  # above LISTED_DAG_DISCARDS: made now
                    coords = general_coordinates(net, self.basis, target)["coordinates"]
                    record = replace(record, certificate=[(t["index"], t["coef"]) for t in coords])
                found = self._discard_answer(self, record, answer["path"], target, check, sdvchain_reason(self, record))
                return {**found, "id": self.basis_size + k, "substructure": self._substructure_names(record.substructure)}
        located = locate_discard(self.dag, target) if self.dag is not None else None
        if located is not None and located[1].status == "discarded":  # a layer DAG core's discard: its ear and rule
            coords = self._general_coordinates(target)
            n, where = located
            return {"id": self.basis_size + int(self.dag.discard_firsts()[n]) + where.offset, "status": "discarded",
                    "substructure": [net.layers[l].name for l in self.dag.ears[n].layers],
                    "reason": discard_reason(self.dag, n, where.reason), "certificate": coords["coordinates"],
                    "verified": coords["verified"]}
        found = described_core_lookup(self, target)  # a described DEAH run: by index arithmetic
        if found is not None and found[0] == "discarded":
            return self._core_discard_answer(found[1], answer["path"], target, check)
        index = found[1] if found is not None else find_general_path(net, self.basis, target)
        if index is not None and found != ABSENT:
            sub = self._kept_substructure(index)
            readmitted = self._readmission(key) if self.sdvchain is not None else None
            return {"id": index, "status": "kept", "substructure": self._substructure_names(sub), "reason": readmitted or kept_reason(sub is not None),
                    "certificate": [{"coef": 1, "path": answer["path"], "index": index}], "verified": True}
        k = self._core_discard(target) if found is None else None
        if k is not None:
            return self._core_discard_answer(k, answer["path"], target, check)
        coords = self._general_coordinates(target)
        return {"status": "not a candidate", "substructure": None,
                "reason": {"step": "coordinates", "detail": NEVER_A_CANDIDATE_GENERAL},
                "certificate": coords["coordinates"], "verified": coords["verified"]}

    def _core_discard_answer(self, k: int, path_json, target, check) -> dict:
        """The answer for discard ``k`` of a general run's layered core."""
        record = self.discarded[k]
        found = self._discard_answer(self.core, record, path_json, target, check)
        return {**found, "id": self.basis_size + k, "substructure": self._substructure_names(record.substructure),
                "reason": core_reason_named(found["reason"], self.parts["core_layers"])}

    def _kept_substructure(self, index: int) -> int | None:
        """The substructure whose B_r gave kept path ``index`` of a general run (None: a path of
        no substructure: the skeleton's, a tap lift's, an extra layer's, the identity forest's)."""
        if self.sdvchain is not None:  # faithful deah on a layer DAG core: per basis block
            return self.basis_substructures[self._block_of(index)]
        if self.core is not None and index < self.core.basis_size:  # a core path: kept from its B_r
            return self.core.basis_substructures[self.core._block_of(index)]
        return None

    def _substructure_names(self, idx) -> list[str] | None:
        """The layers' names of substructure ``idx`` of a general DEAH run (None: none)."""
        if idx is None or idx < 0:
            return None
        if self.sdvchain is not None:
            return [self.network.layers[l].name for l in self.sdvchain.substructures.paths[int(idx)].layers]
        if self.core is None or self.core.deah is None:
            return None
        return [self.parts["core_layers"][l] for l in self.core.deah.step1.paths[int(idx)].layers]

    def _general_term(self, term: dict) -> dict:
        """A certificate term as a stored general run's ``why`` gives it: coef, path, its text,
        its id (a kept path's id is its basis index) and index."""
        path = read_any_general_path(self.network, term["path"])
        return {"coef": term["coef"], "path": term["path"], "text": format_general_path(self.network, path),
                "id": term["index"], "index": term["index"]}

    def _general_coordinates(self, target) -> dict:
        """``general_coordinates`` of a general path over this basis; a described DEAH run's by
        the ear recursion and the tap lift's arithmetic (``general/described_coordinates.py``),
        or refused (``LimitExceeded``, one line) where that does not reach and the basis is too
        big to list."""
        if described_core_lookup(self, target) is not None:  # a described DEAH run
            found = described_coordinates(self, target)
            if found is not None:
                return found
            if self.basis_size > DESCRIBED_COORDINATES_LISTED:
                raise LimitExceeded(
                    f"the coordinates of {format_general_path(self.network, target)} over this basis of {self.basis_size:,} paths,"
                    " held described, are not supported yet: a path through an extra layer or an identity shortcut is expressed"
                    f" only over a listed basis (up to {DESCRIBED_COORDINATES_LISTED:,} paths); paths along the core's layers"
                    " (any taps) are")
        return general_coordinates(self.network, self.basis, target)

    def _core_discard(self, target) -> int | None:
        """Where a general path (tap 0 on every hop, core layers only) is among the core's discards."""
        if self.core is None or not len(self.discarded):
            return None
        found = core_path(self, target)
        return None if found is None else self._discard_position(*found)

    def __repr__(self) -> str:
        return (
            f"Result(network={self.network.name!r}, engine={self.engine!r}, m={self.m}, H={self.H}, "
            f"basis={self.basis_size} paths, certified={self.certified}, "
            f"discarded={self.dag.discard_count if self.dag is not None else len(self.discarded)}, "
            f"repairs={len(self.repairs)})"
        )


def _take(block, index: int):
    """One path of a GeneralBlock as a block of one."""
    return type(block)(block.layers, block.hops, block.nodes[index : index + 1], block.taps[index : index + 1])



def _find_row(blocks, layers, indices) -> tuple[int, int] | None:
    """(block number, basis index) of a layered path in the basis, or None."""
    start, row = 0, np.asarray(indices, dtype=np.int64)
    for k, b in enumerate(blocks):
        if tuple(b.layers) == tuple(layers) and len(b):
            hit = rows_matching(b, row)
            if len(hit):
                return k, start + int(hit[0])
        start += len(b)
    return None


_WEIGHT_KEYS = ("crossing", "differs", "twin_differs", "agrees", "ep", "ucp_star", "iep", "shared")


def core_reason_named(reason: dict, core_layers: list[str]) -> dict:
    """A core discard's rule spelled for the general network, as a stored general run's ``why``
    spells it: layer positions as layer names (substructure, hop, shared layer pairs), the twin
    as a general path with its text, weights as ``[layer_a, i, layer_b, j, tap]`` (tap 0: the
    core holds tap 0 of every weight)."""
    name = lambda l: core_layers[int(l)]  # noqa: E731
    out = dict(reason)
    for key in ("substructure", "hop"):
        if isinstance(out.get(key), list):
            out[key] = [name(l) for l in out[key]]
    if isinstance(out.get("twin"), list):
        nodes = [[name(l), int(i)] for l, i in out["twin"]]
        out["twin"] = {"nodes": nodes, "taps": [0] * (len(nodes) - 1)}
        out["twin_text"] = " -[0]-> ".join(f"{n}:{i}" for n, i in nodes)
    if isinstance(out.get("pair"), dict):
        out["pair"] = {k: [name(l) for l in v] for k, v in out["pair"].items()}
    if isinstance(out.get("shared_layers"), list):
        out["shared_layers"] = [[name(a), name(b)] for a, b in out["shared_layers"]]
    for key in _WEIGHT_KEYS:
        value = out.get(key)
        if isinstance(value, list) and value and isinstance(value[0], list):
            out[key] = [[name(a), i, name(b), j, 0] for a, i, b, j in value]
        elif isinstance(value, list) and len(value) == 4 and not isinstance(value[0], list):
            a, i, b, j = value
            out[key] = [name(a), i, name(b), j, 0]
    return out
