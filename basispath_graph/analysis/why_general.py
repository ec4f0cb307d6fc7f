"""``basispath why`` on a general run: is a path kept, and if not, its coordinates over the
run's stored basis, re-verified now by vector addition (``analysis/general_coordinates.py``).

A path is given by its stored id, or in the JSON form ``{"nodes": [[layer, index], ...],
"taps": [...]}`` (``general.paths.read_general_path``), as text or in a file holding it.
"""

from __future__ import annotations

from ..errors import BadInput
from ..general.model import GeneralNetwork
from ..general.paths import format_general_path, read_general_path_argument
from ..store import Store
from ..verify import ExpressError
from ..general.blocks import general_path_json
from .general_coordinates import blocks_from_stored, general_coordinates, stored_general_path

__all__ = ["explain_general"]

def explain_general(store: Store, run_id: str, status: str, net: GeneralNetwork, path: str, error=BadInput) -> dict:
    """The ``why --json`` answer on a general run: ``status`` 'kept' (with its id), or for a path
    that is not kept its coordinates over the run's basis (``"not a candidate"`` for a path the
    run never stored), re-verified by vector addition (``verified``)."""
    text, pid = "", -1
    if path.strip().isdigit():
        pid = int(path.strip())
    else:
        text = format_general_path(net, read_general_path_argument(net, path, error))
    rows = store.run("general_path", run=run_id, text=text, id=pid)
    if not rows and pid >= 0:
        raise error(f"path id {pid} is not a path of run {run_id}")
    if rows:
        target = stored_general_path(net, rows[0])
        text = format_general_path(net, target)
    else:
        target = read_general_path_argument(net, path, error)
    answer = {"run": run_id, "path": general_path_json(net, target), "text": text, "id": rows[0]["id"] if rows else None,
              "substructure": None}
    if rows and rows[0]["kept"]:
        return {**answer, "status": "kept", "reason": {"step": "kept", "detail": "kept: a path of the run's basis"},
                "certificate": [{"coef": 1, "path": answer["path"], "text": text, "id": rows[0]["id"]}], "verified": True}
    if status != "complete":
        raise error(f"path {text} is not kept by run {run_id}, and the run is {status}: no basis to express it over")
    kept = store.run("general_kept_paths", run=run_id)
    try:
        coords = general_coordinates(net, blocks_from_stored(net, kept), target)
    except ExpressError as exc:  # the stored basis is certified: this would be a damaged store
        raise error(f"cannot express {text} over the basis of run {run_id}: {exc}") from None
    ids = [row["id"] for row in kept]
    detail = "discarded by the run" if rows else "never a candidate of this run: its coordinates over the run's basis"
    return {
        **answer,
        "status": "discarded" if rows else "not a candidate",
        "reason": {"step": "coordinates", "detail": detail},
        "certificate": [{"coef": t["coef"], "path": t["path"], "text": t["text"], "id": ids[t["index"]]} for t in coords["coordinates"]],
        "verified": coords["verified"],
    }
