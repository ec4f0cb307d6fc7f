"""Solve a network: run an engine, certify, repair DEAH visibly when it fails, certify discards.

This is the Python API behind ``basispath solve``. Nothing here trusts an engine: the union it
returns is certified exactly (``verify.certify``). Faithful DEAH (paper, Section 4) is not always a
basis; then, unless ``repair=False``, the union is repaired by exact elimination and every change
is recorded as a :class:`Repair`, apart from SDVChain's discards. Every discarded path gets a
certificate: integer coefficients over the final basis, checked by vector addition. They are
listed in the solve for deah-complete with no repair (made by its rules); a described
deah-complete run, faithful deah and any repaired run make each when its discard is read.
"""

from __future__ import annotations


import numpy as np

from .choices import ChoiceRule
from .deah.ear_certificate import certify_ear_union
from .deah.repair import exact_repair, taken_blocks
from .deah.repair_list import ReadmittedRows
from .deah.engine import DeahResult, run_deah
from .deah.on_demand_certificates import ExpressedCertificates, OnDemandCertificates
from .deah.repaired_discards import RepairedDiscards
from .deah.ear_recursion import EarRecursion
from .deah.split_certificates import SplitCertificates
from .deah.step1_substructures import DEFAULT_MAX_SUBSTRUCTURE_PATHS
from .deah.walks import ChoiceWalks
from .discarded import ITER_ROWS as REPAIR_ROWS, DiscardedList, DiscardedPath, row_nodes
from .errors import BadInput
from .result import PlainPath, Repair, Result
from .network import Network, PathBlock
from .skeleton import skeleton_basis
from .guards import check_repair, check_skeleton
from .timing import StageTimer
from .verify import Verdict, certify, flatten_blocks
from .verify.rank import CoreChoice
from .verify.checks import Checker, check_certificates
from .linalg.sparse import gather

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Repair", "DiscardedPath", "DiscardedList", "Result", "SolveResult", "PlainPath", "solve", "described_result"]

ENGINES = ("deah", "deah-complete", "skeleton")
#: The engine used when none is named (``solve``, ``execute_run``, the CLI): certified with no
#: repair on every network tried, and fast. ``"deah"`` is the paper's algorithm, faithfully,
#: repaired visibly when its union is not a basis.
DEFAULT_ENGINE = "deah-complete"


#: The result type's older name.
SolveResult = Result


def _repair(network: Network, deah: DeahResult, seed: int, certified: CoreChoice | None = None):
    """Exact elimination (``deah.repair``): keep kept paths greedily, re-admit discards, then skeleton
    paths; ``certified``: the raw certification's choice on the same union (``_certify_raw``)."""
    out = exact_repair(
        network.basis_size, network.m,
        [(idx, deah.bases[idx], np.flatnonzero(deah.step3.alive[idx])) for idx in deah.order],
        lambda: ((sub, deah.bases[sub], rows) for sub, rows in deah.step3.discards.row_runs(REPAIR_ROWS)),
        lambda: skeleton_basis(network, seed), network.weight_ids, lambda block, row: (block.layers, tuple(row_nodes(block, row)), None),
        certified,
    )
    kept = {idx: np.sort(np.concatenate([r for _, r in runs])) for idx, runs in out.kept.items()}  # substructure idx -> rows of B_r kept
    return kept, out.readmitted, taken_blocks(out.added), out.repairs, out.dropped


def _certify_raw(network: Network, deah: DeahResult, blocks: list[PathBlock], record: CoreChoice | None = None) -> Verdict:
    """The exact verdict on DEAH's union: from its description when deah-complete's blocks are
    all p_0 or ears (``deah.ear_certificate``), else by the explicit certifier, whose choice on
    the union's core ``record`` keeps for the repair."""
    step3 = deah.step3
    if getattr(step3, "ears", None) is not None and step3.ear_orderable:
        order = step3.order
        return certify_ear_union(network, step3.described[order[0]],
                                 [(step3.described[idx], step3.ears[idx]) for idx in order[1:]], blocks)
    return certify(network, blocks, record)


def solve(
    network: Network,
    engine: str = DEFAULT_ENGINE,
    seed: int = 0,
    repair: bool = True,
    max_substructures: int = DEFAULT_MAX_SUBSTRUCTURE_PATHS,
    certificates: bool = True,
    relations=None,
    on_step1=None,
    on_stage=None,
    memory_limit: int | None = None,
    time_limit: float | None = None,
) -> Result:
    """Find a basis path set of ``network`` and certify it exactly.

    Parameters
    ----------
    network : Network
    engine : {"deah-complete", "deah", "skeleton"}
        "deah-complete" (the default): Steps 1-2 of DEAH, Step 3 by hop ownership, certified
        with no repair (docs/deah-complete.md). "deah": the paper's algorithm, faithfully,
        repaired visibly when its union is not a basis. "skeleton": one designated path per
        weight beyond the hidden neurons (linear time).
    seed : int
        Seed of the shared choice rule (``ChoiceRule``); 0 is the identity order.
    repair : bool
        deah only: repair a union that is not certified (default); False returns raw DEAH.
    certificates : bool
        Give every discarded path a certificate, verified by vector addition (default): listed
        in the solve, or made when its discard is read (a described deah-complete run, faithful
        deah, any repaired run: ``certificate_method`` says which).
    memory_limit, time_limit : int bytes, float seconds, optional
        Refuse (``ResourceLimit``) before starting when the estimate is over the limit.
    max_substructures, relations, on_step1, on_stage
        deah's P^S listing limit; Step 3's relations from a store and a hook given Step 1's
        result before them (``run_deah``); called with each stage name as it starts
        (progress display).

    Returns
    -------
    SolveResult
        ``certified``, ``m``, ``H``, ``basis_paths``, ``discarded_paths``, ``repairs``,
        ``why(path)``, ``export()``.

    Raises
    ------
    BadInput
        an unknown engine.
    LimitExceeded
        ``TooManySubstructures`` when deah's P^S is too large; ``ResourceLimit`` when an
        estimate is over ``memory_limit`` or ``time_limit``.

    Notes
    -----
    The returned basis is always certified by exact rank, whatever the engine; only
    ``repair=False`` can return one that is not (``certified`` False). bench/results.md has
    the measured times: deah-complete takes about 2-5x the skeleton engine.

    Examples
    --------
    >>> from basispath_graph import Network, solve
    >>> r = solve(Network([2, 2, 3, 2, 2], skips=[(0, 2), (1, 3)], name="fig1b"))
    >>> r.certified, r.basis_size, len(r.discarded)
    (True, 23, 9)
    >>> solve(r.network, engine="deah").repairs_needed  # faithful DEAH is not a basis here
    3
    """
    if engine not in ENGINES:
        raise BadInput(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    timer = StageTimer(on_stage=on_stage)
    timings = timer.timings
    if engine == "skeleton":
        check_skeleton(network, memory_limit, time_limit)
        with timer.stage("engine"):
            basis = skeleton_basis(network, seed)
        with timer.stage("certify"):
            verdict = certify(network, basis)
        return Result(network, engine, seed, basis, [None] * len(basis), verdict, verdict, timings=timings)

    deah = run_deah(
        network, seed, max_substructures, relations, timer, memory_limit, complete=engine == "deah-complete", time_limit=time_limit,
        on_step1=on_step1,
    )
    raw = deah.kept_blocks()
    with timer.stage("certify"):
        choice = CoreChoice()
        raw_verdict = _certify_raw(network, deah, [b for _, b in raw], choice)

    repairs: list[Repair] = []
    readmitted = ReadmittedRows()
    needed = 0
    if raw_verdict.certified:
        basis, subs, verdict = [b for _, b in raw], [idx for idx, _ in raw], raw_verdict
    else:
        # Always work out the repair, so that even --no-repair can say how far DEAH was off.
        if engine == "deah":  # its cost is known to be needed only now (guards.check_repair)
            check_repair(network, deah.step1, memory_limit, time_limit)
        with timer.stage("repair"):
            kept, readmitted, extra, repairs, dropped = _repair(network, deah, seed, choice)
        needed = len(repairs)
        if repair:
            basis = [deah.bases[idx].view(rows) for idx, rows in kept.items()] + extra  # a described B_r's: KeptRows
            subs = list(kept) + [None] * len(extra)
            with timer.stage("certify"):
                verdict = certify(network, basis)
        else:
            basis, subs, verdict = [b for _, b in raw], [idx for idx, _ in raw], raw_verdict
            readmitted, repairs = ReadmittedRows(), []

    if certificates and verdict.certified and deah.described and not repairs:
        # described: each certificate made and checked when its discard is read, not listed
        return described_result(network, seed, deah, verdict, timings, raw)
    # Step 3's table (less re-admissions, then the drops: RepairedDiscards): a record made only when read
    table = RepairedDiscards(deah.step3.discards, readmitted, dropped) if repairs else deah.step3.discards
    discarded = DiscardedList(deah.bases, table)

    result = Result(
        network, engine, seed, basis, subs, verdict, raw_verdict, discarded, repairs,
        deah=deah, timings=timings, repairs_needed=needed,
    )
    if certificates and verdict.certified and discarded:
        with timer.stage("certificates"):
            if engine == "deah-complete" and not repairs:
                result.certificate_method, result.certificates_rechecked = _local_certificates(network, deah, basis, discarded)
            else:  # faithful deah, any repaired run: each made when read
                discarded.on_demand = ExpressedCertificates(network, deah.bases, table, basis)
                result.certificate_method = "global elimination, when asked"
    return result


def described_result(network: Network, seed: int, deah: DeahResult, verdict: Verdict, timings: dict | None = None,
                     raw: list | None = None) -> Result:
    """deah-complete's certified result held described (``deah.described``): its kept blocks
    (``KeptRows``) as the basis, its discards as a ``DiscardedList`` whose certificates are made
    and checked when one is read. ``solve`` builds it after certifying the union; a stored run is
    rebuilt into it from its description (``store/described_deah.py``) with its stored verdict."""
    raw = deah.kept_blocks() if raw is None else raw  # (substructure, kept block) in order
    basis = [b for _, b in raw]
    discarded = DiscardedList(deah.bases, deah.step3.discards)
    result = Result(network, "deah-complete", seed, basis, [idx for idx, _ in raw], verdict, verdict, discarded,
                    deah=deah, timings=dict(timings or {}))
    if len(discarded):
        discarded.on_demand = OnDemandCertificates(network, deah, basis)
        result.certificate_method = "ear recursion, on demand"
    return result


CERTIFICATE_BATCH = 100_000  # discarded paths expanded at once


def _local_certificates(network: Network, deah: DeahResult, basis: list[PathBlock], discarded: DiscardedList) -> tuple[str, int]:
    """deah-complete's certificates, in numpy batches: each discarded row split at its cross edge
    into per-route and per-hop tables (split_certificates.py); the hops of blocks with several
    new hops come from peeling each block's witness system down the order, checked by vector
    addition. Returns (the method, how many finished certificates were re-added in full)."""
    rule = ChoiceRule(network.widths, deah.seed)

    flat_basis = flatten_blocks(network, basis)
    ears = EarRecursion(network, deah.bases, deah.step3, rule, Checker(network, flat_basis))
    method = "ear recursion + witness peeling" if ears.uses_peel else "ear recursion"
    split = SplitCertificates(network, ears, ChoiceWalks(network, rule), flat_basis)
    subs, rows = discarded.subs, discarded.rows
    # Runs of one substructure in table order, in batches of bounded size: the certificates
    # come out sorted by discard, then basis index, with no reordering afterwards.
    cuts = np.flatnonzero(np.r_[True, subs[1:] != subs[:-1], True])
    indices, coefs = [], []
    counts = np.zeros(len(subs), dtype=np.int64)  # terms per discard: the row numbers themselves are not kept
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        block = deah.bases[int(subs[lo])]
        for start in range(lo, hi, CERTIFICATE_BATCH):  # bounded memory per batch
            stop = min(hi, start + CERTIFICATE_BATCH)
            # Each row's certificate is the exact sum of three certificates checked by vector
            # addition when their tables were built (split_certificates.py says why that is a check).
            r, i, c = split.certificates(block.layers, block.nodes[rows[start:stop]], rows[start:stop])
            counts[start:stop] = np.bincount(r, minlength=stop - start)
            indices.append(i)
            coefs.append(c)
    ptr = np.zeros(len(subs) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    discarded.set_certificates(ptr, np.concatenate(indices), np.concatenate(coefs))
    return method, _recheck(network, deah, flat_basis, discarded)


RECHECK_LIMIT = 100_000  # finished certificates re-added in full by vector addition


def _recheck(network: Network, deah: DeahResult, flat_basis, discarded: DiscardedList) -> int:
    """Re-add finished certificates weight by weight: all of them up to RECHECK_LIMIT, else that
    many spread evenly over the table. The assembly is exact by construction (split_certificates.py);
    this guards the implementation. Raises CertificateMismatchError naming a discard that fails."""
    n = len(discarded)
    sample = np.arange(n) if n <= RECHECK_LIMIT else np.unique(np.linspace(0, n - 1, RECHECK_LIMIT).astype(np.int64))
    subs, rows, ptr = discarded.subs[sample], discarded.rows[sample], discarded.ptr
    cuts = np.flatnonzero(np.r_[True, subs[1:] != subs[:-1], True])
    targets = [deah.bases[int(subs[lo])].take(rows[lo:hi]) for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist())]
    take = gather(ptr, sample)
    terms = (np.repeat(np.arange(len(sample), dtype=np.int64), ptr[sample + 1] - ptr[sample]), discarded.idx[take], discarded.coef[take])
    check_certificates(network, flat_basis, targets, terms, row_ids=sample)
    return len(sample)
