"""A described deah-complete run in the store: O(layers + substructures) rows, not a node per path.

A run held described (``guards.DESCRIBED_ABOVE``: every block p_0 or an ear, the B_r as
``SubroutineRows``) is a function of three things, and those are what it stores:

- Step 1's selected substructure paths (``SubstructurePath``, stored as for every DEAH run, with
  ``SUBDIVIDES``, ``SHARES_EDGE`` and the subdivision sets);
- the choice rule: one ``ChoiceOrder`` per core layer, its neurons by rank;
- the plan Step 3 follows (``plan_blocks`` of the selected layer sequences), written out as one
  ``DescribedBlock`` per block of the ear order: its rule, its new hop and where its kept and
  discarded paths sit among the run's path ids (what the rebuilt run is checked against).

A general run also stores its explicit paths (the extra layers' and the identity forest's: a
few per neuron) as ``BasisPath`` nodes with ``KEPT``, ids their basis indices, as the
skeleton's described store does. ResNet-50: 5 blocks, 54 orders, 38,824 paths instead of 25.5 M
kept and 49 M discarded paths with their records.

``load_described_deah`` rebuilds the run from these rows into the ``Result`` the solve returned
(``solver.described_result``, ``general.deah_solve.general_result``), with the stored verdict:
``why``, ``GraphStore.load`` and ``show`` make any path, record and certificate from it, in
Python (each certificate is checked by vector addition when it is made).
"""

from __future__ import annotations


from ..choices import ChoiceRule
from ..deah.engine import DeahResult
from ..deah.step1_substructures import Step1Result, SubstructurePath
from ..deah.step3_complete import run_step3_complete
from ..deah.subroutine_rows import SubroutineRows
from ..general.blocks import GeneralBlock
from ..general.deah_solve import general_result
from ..general.paper_setting import paper_setting
from ..result import Result
from ..solver import described_result
from ..verify import Verdict
from . import resume
from .base import Store, StoreError
from .path_forms import LayeredForm, stored_form

__all__ = ["is_described_run", "write_described_deah", "load_described_deah", "described_deah_rows", "kept_paths_per_layer"]


def is_described_run(result: Result) -> bool:
    """Whether ``result`` (layered, or general with a DEAH core) is stored described."""
    layered = result.core if result.core is not None else result
    deah = layered.deah
    return deah is not None and layered.engine == "deah-complete" and deah.described and not layered.repairs


def described_deah_rows(run_id: str, result: Result, form: LayeredForm) -> tuple[list[dict], list[dict]]:
    """The ChoiceOrder and DescribedBlock rows of a described run (layered, or general: its core)."""
    layered = result.core if result.core is not None else result
    deah, step3 = layered.deah, layered.deah.step3
    rule = next(iter(deah.bases.values())).rule
    orders = [{"uid": f"{run_id}:o{k}", "run": run_id, "layer": form.layers([k])[0], "neurons": [int(x) for x in order]}
              for k, order in enumerate(rule.orders)]
    blocks, kept_first, discard_first = [], 0, result.basis_size
    for position, (idx, kept) in enumerate(zip(step3.order, layered.basis)):
        ear = step3.ears.get(idx)
        discards = ear.discard_count if ear is not None else 0
        blocks.append({
            "uid": f"{run_id}:b{position}", "run": run_id, "position": position, "substructure": int(idx), "rule": step3.rules[idx],
            "hop": form.layers(step3.new_hops[idx][0]) if ear is not None else [], "kept_first": kept_first, "kept_count": len(kept),
            "discard_first": discard_first, "discard_count": discards, "prefix_count": ear.prefix_count if ear is not None else 0,
        })
        kept_first += len(kept)
        discard_first += discards
    return orders, blocks


def _columns(rows: list[dict]) -> dict:
    return {k: [r[k] for r in rows] for k in rows[0]} if rows else {}


def write_described_deah(store: Store, run_id: str, result: Result, form: LayeredForm, committed=None, on_stage=None,
                         on_batch=None) -> None:
    """Store a described run (see the module doc) with the writer's stages and resume; Step 1's
    substructure paths are stored already (``relations.persist_substructures``)."""
    from .artifacts import write_subdivision_sets

    def stage(name: str) -> None:
        if on_stage:
            on_stage(name)
        store.run("set_run_stage", id=run_id, stage=name)

    def bulk(name: str, columns: dict) -> None:
        resume.bulk(store, name, columns, committed, on_batch)

    layered = result.core if result.core is not None else result
    write_subdivision_sets(store, run_id, layered.deah, bulk, stage, committed)
    stage("basis paths")
    if result.core is not None:  # the explicit parts: extra layers and identity forest, listed
        explicit = [p for p in result.basis.parts if isinstance(p, GeneralBlock)]
        start = result.parts["core"] + result.parts["tap_lift"]
        if sum(map(len, explicit)) != result.basis_size - start:
            raise StoreError(f"run {run_id}: the explicit paths of the described run do not follow its core and tap lift")
        columns = form.path_columns(run_id, explicit, start, True)
        bulk("insert_basis_paths", columns)
        kept = columns["uid"]
        bulk("link_kept", {"from": [run_id] * len(kept), "to": kept})
    stage("description")
    orders, blocks = described_deah_rows(run_id, result, form)
    bulk("insert_choice_orders", _columns(orders))
    bulk("insert_described_blocks", _columns(blocks))


def load_described_deah(store: Store, run_id: str, network, run: dict) -> Result | None:
    """The stored run rebuilt from its description into the solve's ``Result`` (with the stored
    verdict; certificates are made and checked when read), or None when the run is not stored
    described. ``run``: its ``get_run`` row. StoreError when the rows do not rebuild the run
    they describe (a damaged store, or one written by another version of the engine)."""
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
    seed = int(run["seed"])
    orders = {at[int(r["layer"])]: r["neurons"] for r in store.run("run_choice_orders", run=run_id)}
    try:
        rule = ChoiceRule.from_orders([orders[k] for k in range(core.L + 1)], seed)
    except (KeyError, ValueError) as exc:
        raise StoreError(f"run {run_id}: its stored choice rule is not one of the core's layers ({exc})") from None
    if rule.widths != tuple(core.widths):
        raise StoreError(f"run {run_id}: its stored choice rule does not fit the core's widths")
    selected = store.run("selected_substructures", run=run_id)
    paths = {int(r["idx"]): SubstructurePath(int(r["idx"]), tuple(at[int(l)] for l in r["layers"]), 0) for r in selected}
    order = [int(r["idx"]) for r in selected]
    step1 = Step1Result(core, paths, order, len(order), order, total=len(order))
    bases = {idx: SubroutineRows(core, paths[idx].layers, rule) for idx in order}
    step3 = run_step3_complete(core, step1, bases, rule)
    deah = DeahResult(core, seed, step1, bases, step3)
    certified = bool(run["certified"])
    size = int(run["basis_size"])
    core_size = sum(int(b["kept_count"]) for b in blocks)
    core_verdict = Verdict(bool(run["raw_certified"]), None if run["raw_certified"] else "stored run: not certified", core_size,
                           core.m - core.H, core_size if run["raw_certified"] else None)
    layered = described_result(core, seed, deah, core_verdict)
    _check_blocks(run_id, form, layered, blocks, size)
    if not general:
        result = layered
    else:
        verdict = Verdict(certified, None if certified else "stored run: not certified", size, network.m - network.H,
                          size if certified else None)
        result = general_result(setting, "deah-complete", seed, layered, verdict)
    if result.basis_size != size or len(result.discarded) != int(run["discarded"]):
        raise StoreError(f"run {run_id}: its description rebuilds {result.basis_size:,} kept and {len(result.discarded):,} discarded"
                         f" paths, the run stored {size:,} and {int(run['discarded']):,}; it was written by another version")
    return result


def _check_blocks(run_id: str, form, layered: Result, rows: list[dict], basis_size: int) -> None:
    """The rebuilt plan is the stored one, block for block (order, rule, hop, counts)."""
    step3 = layered.deah.step3
    if not step3.ear_orderable or len(rows) != len(step3.order):
        raise StoreError(f"run {run_id}: its description does not rebuild a run of p_0 and ears")
    discard_first = basis_size
    kept_first = 0
    for row, idx, kept in zip(rows, step3.order, layered.basis):
        ear = step3.ears.get(idx)
        mine = (int(idx), step3.rules[idx], form.layers(step3.new_hops[idx][0]) if ear is not None else [], kept_first, len(kept),
                discard_first, ear.discard_count if ear is not None else 0, ear.prefix_count if ear is not None else 0)
        stored = (int(row["substructure"]), row["rule"], [int(x) for x in row["hop"] or []], int(row["kept_first"]), int(row["kept_count"]),
                  int(row["discard_first"]), int(row["discard_count"]), int(row["prefix_count"]))
        if mine != stored:
            raise StoreError(f"run {run_id}: block {row['position']} of its description rebuilds as {mine}, stored {stored};"
                             " it was written by another version")
        kept_first += len(kept)
        discard_first += mine[6]


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
