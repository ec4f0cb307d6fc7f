"""Writing a solved run's artifacts to a store: paths, subdivision sets, chains, discards,
certificates, as bulk columns (numpy and ``Ragged`` lists, no Python object per path).

One writer for every run: a layered run, and a general run, whose DEAH artifacts are those of
the layered run on its core spelled in general path form (``store/path_forms.py``)."""

from __future__ import annotations

import numpy as np

from ..deah.discard_table import DiscardTable, HopDiscard, LocalDiscard
from ..deah.repair_list import repairs_that_keep
from ..deah.step3_sdvchain import Discard
from ..discarded import DiscardedList, discards_named
from ..general.blocks import GeneralBlock, general_path_keys
from ..solver import Repair, SolveResult
from . import resume
from .base import ArrowStrings, Nullable, Ragged, Store, concat_columns
from .path_forms import LayeredForm
from .resume import Committed

__all__ = ["write_artifacts", "write_subdivision_sets"]


#: Discard node properties of the other rules are null (absent on Neo4j, NULL on LadybugDB): a
#: property set to -1, [] or '' cost a Neo4j server about 18 us a discard (``base.Nullable``).
#: Runs stored before hold those values; readers take both.
_SDVCHAIN = ("chain", "pair", "shared_pairs", "ep", "ucp_star", "iep", "shared")
_HOP_RULE = ("hop", "crossing", "twin", "differs", "twin_differs", "agrees")
_UNUSED = dict.fromkeys(_SDVCHAIN + ("substructure",) + _HOP_RULE)


def _discard_row(run_id: str, k: int, form: LayeredForm, reason, bases) -> dict:
    """The Discard node of one record, with the properties of its rule (docs/graph-model.md):
    SDVChain's call, deah-complete's hop rule, the local rule or a repair; layers, edge codes,
    weight ids and the twin's text spelled by ``form``."""
    row = {"uid": f"{run_id}:d{k}", "run": run_id, "step": reason.step if not isinstance(reason, Repair) else "repair"}
    row["action"] = reason.action if isinstance(reason, Repair) else "discard"
    row.update(_UNUSED)
    if isinstance(reason, Discard):
        row.update(
            substructure=reason.substructure,
            chain=reason.chain,
            pair=list(reason.pair),
            shared_pairs=[form.hop_code(key) for key in reason.shared_pairs],
            ep=_weights(form, reason.ep),
            ucp_star=_weights(form, reason.ucp_star),
            iep=_weights(form, reason.iep),
            shared=_weights(form, reason.shared),
        )
    elif isinstance(reason, HopDiscard):
        block = bases[reason.substructure]
        row.update(
            substructure=reason.substructure,
            hop=form.layers(reason.hop),
            crossing=int(form.weights(reason.crossing)),
            twin=form.texts(block.layers, block.nodes[[reason.twin]]).tolist()[0],
            differs=_weights(form, reason.differs),
            twin_differs=_weights(form, reason.twin_differs),
            agrees=_weights(form, reason.agrees),
        )
    elif isinstance(reason, LocalDiscard):
        row["substructure"] = reason.substructure
    elif reason.substructure is not None:  # a repair of a path of a substructure
        row["substructure"] = reason.substructure
    return row


def _weights(form: LayeredForm, ids) -> list[int]:
    return form.weights(list(ids)).tolist()


def _columns(rows: list[dict]) -> dict[str, list]:
    if not rows:
        return {}
    return {k: [r[k] for r in rows] for k in rows[0]}


def write_artifacts(store: Store, run_id: str, result: SolveResult | None, on_stage=None, on_batch=None, committed: Committed | None = None,
                    form: LayeredForm | None = None, basis: list | None = None) -> None:
    """Write every artifact of a solved run, stage by stage (the run's ``stage`` property says
    which): subdivision sets and chains, basis and discarded paths, discard records, then every
    relationship between them (``links``: KEPT, DISCARDED, FROM_SUBSTRUCTURE, REASON and the
    certificates, independent writes that ``Store.bulk_together`` may run at once).

    ``result`` is the layered run: a layered network's, or the one on a general network's core
    (then ``form`` is its ``GeneralForm`` and ``basis`` the general basis, the core's kept paths
    first in the same order, so certificates keep their indices); None for a general run with no
    layered part (skeleton): its ``basis`` only. ``form`` spells layers, weights and paths
    (default: the layered network's own).

    ``on_stage(name)`` is called as a stage starts, before anything of it is written;
    ``on_batch(rows)`` after each bulk batch is committed (progress, crash-safety tests).
    ``committed``: what a killed run of the same id already wrote (--resume); only the rest is
    written."""
    form = form or LayeredForm(result.network)
    basis = result.basis if basis is None else basis
    stage, bulk = resume.writer(store, run_id, committed, on_stage, on_batch)

    # the DEAH artifacts: a layered run's, or faithful deah's on a layer DAG core (same shape)
    deah = (result.deah if result.deah is not None else result.sdvchain) if result is not None else None
    if deah is not None:
        write_subdivision_sets(store, run_id, deah, bulk, stage, committed)

    stage("basis paths")
    discarded = result.discarded if result is not None else []
    columnar = isinstance(discarded, DiscardedList)  # Step 3's table: arrays, no record per path
    if columnar:
        discarded_blocks = discarded.blocks()
        discarded_subs = discarded.subs
    else:
        discarded_blocks = form.discarded_blocks(discarded)
        discarded_subs = np.array([-1 if d.substructure is None else d.substructure for d in discarded], dtype=np.int64)
    kept_columns = form.path_columns(run_id, basis, 0, True)
    n = len(kept_columns["id"])
    discarded_columns = form.path_columns(run_id, discarded_blocks, n, False)
    n_discarded = len(discarded_columns["id"])
    # One load of kept then discarded paths (ids 0, 1, ...): LadybugDB checkpoints after every
    # COPY, and a second COPY into the table cost more than the first (dense-8x64: 1.76 s as two,
    # 1.18 s as one). Still one write, so a killed run's stored paths are a prefix of it.
    paths = concat_columns([kept_columns, discarded_columns])
    bulk("insert_basis_paths", paths)
    uids = paths.get("uid", ArrowStrings.keys(f"{run_id}:", []))  # path id k's uid is uids[k]: links take them
    links = [
        ("link_kept", {"from": [run_id] * n, "to": kept_columns["uid"]}),
        ("link_discarded", {"from": [run_id] * n_discarded, "to": discarded_columns["uid"]}),
    ]
    if deah is not None:
        kept_subs = np.repeat(  # the layered run's kept paths: ids 0 .. its basis size - 1
            np.array([-1 if s is None else s for s in result.basis_substructures], dtype=np.int64),
            [len(b) for b in result.basis],
        )
        path_ids = np.concatenate([np.arange(len(kept_subs), dtype=np.int64), n + np.arange(n_discarded, dtype=np.int64)])
        subs = np.concatenate([kept_subs, np.asarray(discarded_subs, dtype=np.int64)])
        has = subs >= 0
        sub_uids = ArrowStrings.keys(f"{run_id}:s", np.arange(int(subs.max()) + 1 if has.any() else 0))
        links.append(("link_from_substructure", {"from": uids.take(path_ids[has]), "to": sub_uids.take(subs[has])}))

        stage("discards")
        if columnar and isinstance(discarded.table, DiscardTable):  # deah-complete's rules, from arrays
            links += _write_discard_table(run_id, form, discarded, n, uids, bulk)
        else:
            links += _write_discard_records(run_id, form, result, n, bulk)
    # Every node is stored: the relationships are independent writes, which a server can take at once.
    stage("links")
    resume.bulk_together(store, links, committed, on_batch)


def write_subdivision_sets(store: Store, run_id: str, deah, bulk, stage, committed: Committed | None = None) -> None:
    """A DEAH run's subdivision sets U_r (with Cypher's CONTAINS) and SDVChain's chains."""
    stage("subdivision sets")
    s1, s3 = deah.step1, deah.step3
    sets = [
        {"uid": f"{run_id}:u{idx}", "run": run_id, "r": idx, "size": s1.paths[idx].u_size, "path": f"{run_id}:s{idx}"}
        for idx in s1.selected
    ]
    bulk("insert_subdivision_sets", _columns(sets))
    resume.derive(store, "compute_contains", committed, run=run_id)
    links = []
    for t, chain in enumerate(s3.chains, start=1):
        for pos, idx in enumerate(chain + [s1.p0], start=1):
            links.append({"chain_uid": f"{run_id}:c{t}", "run": run_id, "t": t, "pos": pos, "set_uid": f"{run_id}:u{idx}"})
    bulk("insert_chains", _columns(links))


def _write_discard_table(run_id: str, form: LayeredForm, discarded: DiscardedList, n: int, uids: ArrowStrings, bulk) -> list[tuple[str, dict]]:
    """deah-complete's discard records as columns straight from its arrays
    (``DiscardTable.part_arrays``): the same nodes ``_write_discard_records`` writes record by
    record, without a Python object per discard or per certificate term. Returns the writes of
    their relationships (``REASON``, ``CERTIFIED_BY``), for the links stage. ``uids``: every
    path's uid by id (the discarded paths are ids n, n + 1, ...)."""
    table: DiscardTable = discarded.table
    count = len(discarded)
    cols = {"substructure": [], "hop": [], "crossing": [], "twin": [], "differs": [], "twin_differs": [], "agrees": [], "step": []}
    has_hop = []  # the hop rule's records (a local rule's have none of its properties)
    for part in table.part_arrays():
        k = len(part.rows)
        cols["step"].append(part.steps)
        cols["substructure"].append(np.full(k, part.substructure, dtype=np.int64))
        has_hop.append(np.full(k, part.hop is not None))
        if part.hop is None:
            cols["hop"].append(Ragged.empty(k))
            cols["crossing"].append(np.full(k, -1, dtype=np.int64))
            cols["twin"].append(ArrowStrings.repeat("", k))
            for name in ("differs", "twin_differs", "agrees"):
                cols[name].append(Ragged.empty(k))
            continue
        cols["hop"].append(Ragged(np.tile(np.array(form.layers(part.hop), dtype=np.int64), k), np.arange(0, 2 * k + 1, 2, dtype=np.int64)))
        cols["crossing"].append(form.weights(part.crossing))
        cols["twin"].append(form.texts(part.block.layers, part.block.nodes[part.twins]))
        same = part.mine == part.theirs
        mine, theirs = form.weights(part.mine), form.weights(part.theirs)
        cols["differs"].append(Ragged.from_mask(mine, ~same))
        cols["twin_differs"].append(Ragged.from_mask(theirs, ~same))
        cols["agrees"].append(Ragged.from_mask(mine, same))
    none = Nullable.none(Ragged.empty(count))  # SDVChain's properties: no record here has them
    hop = np.concatenate(has_hop) if count else np.zeros(0, dtype=bool)
    records = {
        "uid": ArrowStrings.keys(f"{run_id}:d", np.arange(count)),
        "run": [run_id] * count,
        "step": np.concatenate(cols["step"]) if count else np.zeros(0, dtype=object),
        "action": ["discard"] * count,
        "chain": Nullable.none(np.zeros(count, dtype=np.int64)),
        "pair": none, "shared_pairs": none, "ep": none, "ucp_star": none, "iep": none, "shared": none,
        "substructure": np.concatenate(cols["substructure"]) if count else np.zeros(0, dtype=np.int64),
        "hop": Nullable(Ragged.concat(cols["hop"]), hop),
        "crossing": Nullable(np.concatenate(cols["crossing"]) if count else np.zeros(0, dtype=np.int64), hop),
        "twin": Nullable(ArrowStrings.concat(cols["twin"]), hop),
        "differs": Nullable(Ragged.concat(cols["differs"]), hop),
        "twin_differs": Nullable(Ragged.concat(cols["twin_differs"]), hop),
        "agrees": Nullable(Ragged.concat(cols["agrees"]), hop),
    }
    bulk("insert_discards", records if count else {})
    discard_ids = n + np.arange(count, dtype=np.int64)
    links = [("link_reason", {"from": uids[n : n + count], "to": records["uid"]} if count else {})]
    if discarded.ptr is None:  # a described run's certificates are made when asked for (why), not stored
        return links
    lengths = np.diff(discarded.ptr)
    if len(discarded.idx):
        links.append(("link_certified_by", {
            "from": uids.take(np.repeat(discard_ids, lengths)),
            "to": uids.take(discarded.idx),
            "coef": discarded.coef,
        }))
    return links


def _write_discard_records(run_id: str, form: LayeredForm, result: SolveResult, n: int, bulk) -> list[tuple[str, dict]]:
    """The discard records and re-admissions of faithful deah (and of any run with repairs), one
    record at a time: SDVChain's calls, repairs. Returns the writes of their relationships
    (``REASON``, ``CERTIFIED_BY``), for the links stage."""
    deah = result.deah if result.deah is not None else result.sdvchain
    kept_back = list(repairs_that_keep(result.repairs))  # the drops, most of a repair, unread
    readmitted = {(r.layers, r.indices, r.taps) for r in kept_back}
    # Only re-admitted paths need their basis id looked up (rare: repairs only).
    index_of = {}
    if readmitted:
        i = 0
        for block in result.basis:
            for key in _row_keys(result.network, block):
                if key in readmitted:
                    index_of[key] = i
                i += 1
    records, reasons, certs = [], [], []
    for k, d in enumerate(result.discarded):
        records.append(_discard_row(run_id, len(records), form, d.reason, deah.bases))
        reasons.append((f"{run_id}:{n + k}", records[-1]["uid"]))
        certs.extend((f"{run_id}:{n + k}", f"{run_id}:{i}", c) for i, c in d.certificate)
    # Paths SDVChain discarded that the repair re-admitted keep both records: their keys read a
    # run of rows at a time, a record made only for a re-admitted one (ResNet-18 has 2.6 M discards).
    if readmitted:
        discards = deah.step3.discards
        for key, k in discards_named(discards, deah.bases, readmitted, lambda made: _row_keys(result.network, made)):
            records.append(_discard_row(run_id, len(records), form, discards[k], deah.bases))
            reasons.append((f"{run_id}:{index_of[key]}", records[-1]["uid"]))
    for r in kept_back:
        records.append(_discard_row(run_id, len(records), form, r, deah.bases))
        reasons.append((f"{run_id}:{index_of[(r.layers, r.indices, r.taps)]}", records[-1]["uid"]))
    bulk("insert_discards", _columns(records))
    return [
        ("link_reason", {"from": [a for a, _ in reasons], "to": [b for _, b in reasons]}),
        ("link_certified_by", {"from": [a for a, _, _ in certs], "to": [b for _, b, _ in certs], "coef": [c for _, _, c in certs]}),
    ]


def _row_keys(network, block) -> list[tuple]:
    """(layers, neurons, taps) of every path of a block, as ``Repair`` records name a path: taps
    None for a layered path, None on a general path's identity hops."""
    if isinstance(block, GeneralBlock):
        return general_path_keys(network, block)
    return [(block.layers, tuple(row), None) for row in block.nodes.tolist()]
