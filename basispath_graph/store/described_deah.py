"""A described deah-complete run in the store: O(layers + substructures) rows, not a node per path.

A run held described (``guards.DESCRIBED_ABOVE``: every block p_0 or an ear, the B_r as
``SubroutineRows``), and a listed run of a layered network whose blocks are all p_0 and ears with
more than ``described_rows.LISTED_PATHS`` paths (kept and discarded), is a function of three
things, and those are what it stores:

- Step 1's selected substructure paths (``SubstructurePath``, stored as for every DEAH run, with
  ``SUBDIVIDES``, ``SHARES_EDGE`` and the subdivision sets);
- the choice rule: one ``ChoiceOrder`` per core layer, its neurons by rank;
- the plan Step 3 follows (``plan_blocks`` of the selected layer sequences), written out as one
  ``DescribedBlock`` per block of the ear order: its rule, its new hop and where its kept and
  discarded paths sit among the run's path ids (what the rebuilt run is checked against).

No path is a node, not even a general run's explicit ones (the extra layers' and the identity
forest's): they are a function of the network and the core's run, made again on load (issue 30:
ResNet-50's 38,824 explicit paths, 50-layer lists and texts each, took 1.4 s of a 2.1 s run to
write for a Cypher view of 0.15% of its basis). ResNet-50: 16 substructure paths, 51 orders and
5 blocks instead of 25.5 M kept and 49 M discarded paths with their records.

``load_described_deah`` rebuilds the run from these rows into the ``Result`` the solve returned
(``solver.described_result``, ``general.deah_solve.general_result``), with the stored verdict:
``why``, ``GraphStore.load`` and ``show`` make any path, record and certificate from it, in
Python (each certificate is checked by vector addition when it is made).
"""

from __future__ import annotations


from ..deah.described_run import rebuild
from ..deah.run_description import BlockRow, DescriptionMismatch, RunDescription, describe
from ..general.blocks import GeneralBlock
from ..general.deah_solve import general_result
from ..general.paper_setting import paper_setting, reads_as_layer_dag
from ..result import Result
from ..verify import Verdict
from . import described_rows, resume
from .base import Store, StoreError
from .path_forms import LayeredForm, stored_form

__all__ = ["is_described_run", "write_described_deah", "load_described_deah", "described_deah_rows", "kept_paths_per_layer"]


def is_described_run(result: Result) -> bool:
    """Whether ``result`` (layered, or general with a DEAH core) is stored described."""
    layered = result.core if result.core is not None else result
    deah = layered.deah
    if deah is None or layered.engine != "deah-complete" or layered.repairs:
        return False
    if deah.described:
        return True
    # A listed run of a layered network whose blocks are all p_0 and ears is as much a function of
    # its description: above LISTED_PATHS paths it is stored as that, like the skeleton's families
    # (issue 30: dense-8x128's 1.35 M paths and 6.4 M certificate terms took 13x its solve to write).
    paths = result.basis_size + len(result.discarded)
    return result.core is None and deah.step3.ear_orderable and paths > described_rows.LISTED_PATHS


def described_deah_rows(run_id: str, result: Result, form: LayeredForm) -> tuple[list[dict], list[dict]]:
    """The ChoiceOrder and DescribedBlock rows of a described run (layered, or general: its core):
    ``deah.described_run.describe`` spelled in stored layers, path ids counted as stored (the
    discards follow the whole basis)."""
    description = describe(result.core if result.core is not None else result)
    orders = [{"uid": f"{run_id}:o{k}", "run": run_id, "layer": form.layers([k])[0], "neurons": [int(x) for x in order]}
              for k, order in enumerate(description.orders)]
    blocks = [{
        "uid": f"{run_id}:b{position}", "run": run_id, "position": position, "substructure": row.substructure, "rule": row.rule,
        "hop": form.layers(row.hop), "kept_first": row.kept_first, "kept_count": row.kept,
        "discard_first": result.basis_size + row.discard_first, "discard_count": row.discards, "prefix_count": row.prefix,
    } for position, row in enumerate(description.blocks)]
    return orders, blocks


def _columns(rows: list[dict]) -> dict:
    return {k: [r[k] for r in rows] for k in rows[0]} if rows else {}


def write_described_deah(store: Store, run_id: str, result: Result, form: LayeredForm, committed=None, on_stage=None,
                         on_batch=None) -> None:
    """Store a described run (see the module doc) with the writer's stages and resume; Step 1's
    substructure paths are stored already (``relations.persist_substructures``)."""
    from .artifacts import write_subdivision_sets
    stage, bulk = resume.writer(store, run_id, committed, on_stage, on_batch)

    layered = result.core if result.core is not None else result
    write_subdivision_sets(store, run_id, layered.deah, bulk, stage, committed)
    stage("description")
    orders, blocks = described_deah_rows(run_id, result, form)
    bulk("insert_choice_orders", _columns(orders))
    bulk("insert_described_blocks", _columns(blocks))


def load_described_deah(store: Store, run_id: str, network, run: dict) -> Result | None:
    """The stored run rebuilt from its description into the solve's ``Result`` (with the stored
    verdict; certificates are made and checked when read), or None when the run is not stored
    described. ``run``: its ``get_run`` row. StoreError when the rows do not rebuild the run
    they describe (a damaged store, or one written by another version of the engine)."""
    if reads_as_layer_dag(network):
        return None  # a layer DAG core: its blocks are dag_runs.py's, its basis a skeleton's
    blocks = store.run("run_described_blocks", run=run_id)
    if not blocks:
        return None
    if run.get("status") != "complete":
        raise StoreError(f"run {run_id} is {run.get('status')}: its description is not complete (basispath run --resume {run_id})")
    form = stored_form(store, run_id, network)
    general = not network.is_layered
    setting = paper_setting(network, "deah-complete") if general else None
    core = setting.core if general else network
    if general and tuple(int(p) for p in form.positions) != tuple(setting.core_layers):
        raise StoreError(f"run {run_id}: its stored core is not the core of its network")
    at = {int(p): k for k, p in enumerate(form.positions)}
    seed, size = int(run["seed"]), int(run["basis_size"])
    orders = {at.get(int(r["layer"]), -1): r["neurons"] for r in store.run("run_choice_orders", run=run_id)}
    selected = [(int(r["idx"]), tuple(at.get(int(l), -1) for l in r["layers"])) for r in store.run("selected_substructures", run=run_id)]
    rows = [BlockRow(int(b["substructure"]), b["rule"], tuple(at.get(int(l), -1) for l in b["hop"] or []), int(b["kept_first"]),
                     int(b["kept_count"]), int(b["discard_first"]) - size, int(b["discard_count"]), int(b["prefix_count"])) for b in blocks]
    description = RunDescription(seed, [orders.get(k, []) for k in range(core.L + 1)], selected, rows)
    core_size = sum(row.kept for row in rows)
    raw = bool(run["raw_certified"])
    core_verdict = Verdict(raw, None if raw else "stored run: not certified", core_size, core.m - core.H, core_size if raw else None)
    try:
        layered = rebuild(core, description, core_verdict)
    except DescriptionMismatch as exc:
        raise StoreError(f"run {run_id}: its stored description does not rebuild it ({exc}); it was written by another version") from None
    if not general:
        result = layered
    else:
        certified = bool(run["certified"])
        verdict = Verdict(certified, None if certified else "stored run: not certified", size, network.m - network.H,
                          size if certified else None)
        result = general_result(setting, "deah-complete", seed, layered, verdict)
    if result.basis_size != size or len(result.discarded) != int(run["discarded"]):
        raise StoreError(f"run {run_id}: its description rebuilds {result.basis_size:,} kept and {len(result.discarded):,} discarded"
                         f" paths, the run stored {size:,} and {int(run['discarded']):,}; it was written by another version")
    return result


def kept_paths_per_layer(result: Result) -> dict[int, int]:
    """For a rebuilt general run, how many kept paths visit each general layer (``show``'s
    counts), from the parts' sizes and routes: no path is made."""
    counts: dict[int, int] = {}
    core_layers = result.parts["core_layers"]
    index = {layer.name: k for k, layer in enumerate(result.network.layers)}
    for part in result.basis.parts:
        if isinstance(part, GeneralBlock):
            layers, n = part.layers, len(part)
        else:  # a core block or a tap lift: paths along its core block's route
            layers, n = [index[core_layers[l]] for l in part.source.layers], part.size
        for layer in layers:
            counts[int(layer)] = counts.get(int(layer), 0) + n
    return counts
