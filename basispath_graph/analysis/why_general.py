"""``basispath why`` on a general run: how its answers spell paths, layers and weights
(``GeneralSpelling``, used by ``analysis/why.py``'s one ``explain``).

A path is given by its stored id, or in the JSON form ``{"nodes": [[layer, index], ...],
"taps": [...]}`` (``general.paths.read_general_path``), as text or in a file holding it. A
discarded path of a DEAH run (a path of the network's core, tap 0) gets the rule of its stored
records and its certificate; in the answer its layers are names, its weights ``[a, i, b, j, tap]``
(layer names, neuron indices, tap) and its paths JSON paths with their text. A kept path is
kept; any other path gets its coordinates over the run's stored basis, re-verified now by vector
addition (``analysis/general_coordinates.py``).
"""

from __future__ import annotations

import re

from ..deah.local_witness import explain_local
from ..errors import BadInput
from ..export import NEVER_A_CANDIDATE_GENERAL, kept_reason
from ..general.blocks import general_weight_endpoints
from ..general.paths import GeneralPath, format_general_path, read_general_path_argument
from ..store import Store
from ..store.path_forms import stored_form
from ..store.runs import stored_plan
from ..verify import ExpressError
from ..general.blocks import block_general_paths, general_path_json
from ..store.described_rows import load_described
from .general_coordinates import blocks_from_stored, check_general_certificate, general_coordinates, stored_general_path

__all__ = ["GeneralSpelling", "general_weight_endpoints"]


_WEIGHT_KEY = re.compile(r"^(\d+):(\d+)->(\d+):(\d+)$")
_PHI_KEY = re.compile(r"^phi (\d+):(\d+)$")


class GeneralSpelling:
    """A general run's side of ``analysis/why.py``'s answer (see ``LayeredSpelling``): paths as
    JSON paths with their text, layers by name, weights ``[a, i, b, j, tap]``. The DEAH records
    of a general run are those of its core, stored in general form (``store/path_forms.py``);
    the local rule's witness is recomputed on the core and its layers named."""

    without_certificate = True  # a path not kept, stored without a certificate (before the core's artifacts were): its coordinates
    never_a_candidate = NEVER_A_CANDIDATE_GENERAL

    def __init__(self, store: Store, ctx, error=BadInput) -> None:
        self.store, self.ctx, self.network, self.error = store, ctx, ctx.network, error
        self._form = None

    @property
    def form(self):
        """The run's ``GeneralForm`` (its core read back from its substructure paths)."""
        if self._form is None:
            self._form = stored_form(self.store, self.ctx.run_id, self.network)
        return self._form

    def argument(self, path: str) -> tuple[str, int]:
        if path.strip().isdigit():
            return "", int(path.strip())
        return format_general_path(self.network, read_general_path_argument(self.network, path, self.error)), -1

    def stored_path(self, row: dict) -> GeneralPath:
        return stored_general_path(self.network, row)

    def answer_head(self, path: GeneralPath, row: dict, status: str) -> dict:
        return {"run": self.ctx.run_id, "path": general_path_json(self.network, path), "text": format_general_path(self.network, path),
                "id": row["id"], "status": status, "substructure": self.layers(row["substructure"])}

    def term(self, coef: int, path: GeneralPath, row: dict) -> dict:
        return {"coef": coef, "path": general_path_json(self.network, path), "text": format_general_path(self.network, path), "id": row["id"],
                "index": row["id"]}  # the kept path's id is its index into the basis

    def kept_detail(self, row: dict) -> str:
        return kept_reason(row["substructure"] is not None)["detail"]

    def check(self, target: GeneralPath, terms) -> bool:
        return check_general_certificate(self.network, target, terms)

    def layers(self, layers):
        """Stored layer positions as names."""
        return None if layers is None else [self.network.layers[int(l)].name for l in layers]

    def weights(self, ids) -> list:
        return general_weight_endpoints(self.network, ids)

    def edge(self, code: int) -> list:
        return self.layers(divmod(int(code), len(self.network.layers)))

    def twin(self, text: str) -> dict:
        """The kept twin of the hop rule, looked up by its stored text."""
        rows = self.store.run("general_path", run=self.ctx.run_id, text=text, id=-1)
        if not rows:
            return {"twin": None, "twin_text": text}
        return {"twin": general_path_json(self.network, stored_general_path(self.network, rows[0])), "twin_text": text}

    def local(self, sub: int, path: GeneralPath, terms) -> dict:
        """``deah.local_witness.explain_local`` on the core, its layers named."""
        form = self.form
        core_index = {int(p): k for k, p in enumerate(form.positions)}

        def core_path(p: GeneralPath):
            nodes, _ = p
            return [core_index[l] for l, _ in nodes], [i for _, i in nodes]

        plans = stored_plan(self.store, self.ctx.run_id, form)
        w = explain_local(form.core, plans, sub, core_path(path), [(c, core_path(p)) for c, p in terms])
        name = [self.network.layers[int(p)].name for p in form.positions]

        def hops(pairs):
            return [[name[a], name[b]] for a, b in pairs]

        def coords(values: dict) -> dict:
            out = {}
            for key, v in values.items():
                m, phi = _WEIGHT_KEY.match(key), _PHI_KEY.match(key)
                if m:
                    a, i, b, j = map(int, m.groups())
                    key = f"{name[a]}:{i}->{name[b]}:{j}"
                elif phi:
                    key = f"phi {name[int(phi.group(1))]}:{phi.group(2)}"
                out[key] = v
            return out

        def general(p) -> tuple:
            layers = [int(form.positions[l]) for l, _ in p]
            return tuple(zip(layers, (i for _, i in p))), (0,) * (len(layers) - 1)

        block = w["block"]
        return {
            **w,
            "block": {**block, "new_hops": hops(block["new_hops"]),
                      "paid_debts": [{**d, "layer": name[d["layer"]], "into": hops(d["into"]), "out_of": hops(d["out_of"])} for d in block["paid_debts"]]},
            "witness": coords(w["witness"]),
            "block_terms": [{"coef": t["coef"], "path": general_path_json(self.network, general(t["path"])),
                             "text": format_general_path(self.network, general(t["path"])), "witness": coords(t["witness"])}
                            for t in w["block_terms"]],
        }

    def not_found(self, pid: int) -> str:
        return f"path id {pid} is not a path of run {self.ctx.run_id}"

    def described(self, kept_rows: list[dict] | None = None):
        """The run's described basis (a skeleton run: ``store/described_rows.py``), None when its
        basis is stored path by path or the run is not complete."""
        if not hasattr(self, "_described"):
            complete = self.ctx.status == "complete"
            rows = kept_rows if kept_rows is not None else (self.store.run("general_kept_paths", run=self.ctx.run_id) if complete else [])
            self._described = load_described(self.store, self.ctx.run_id, self.network, rows) if complete else None
        return self._described

    def unlisted(self, path: str, pid: int) -> dict | None:
        """A kept path a described basis does not store as a node (a family path: by its basis id
        or as a path), made from the stored description; None for any other."""
        basis = self.described()
        if basis is None:
            return None
        if pid >= 0:
            if not 0 <= pid < basis.path_count:
                return None
            index, target = pid, block_general_paths(self.network, basis.path_at(pid))[0]
        else:
            target = read_general_path_argument(self.network, path, self.error)
            index = basis.index_of(target)
            if index is None:
                return None
        row = {"id": index, "substructure": None}
        return {**self.answer_head(target, row, "kept"),
                "reason": kept_reason(False),
                "certificate": [self.term(1, target, row)], "verified": True}

    def coordinates(self, path: str, text: str, row: dict | None = None) -> dict:
        """A path the run did not keep and holds no certificate for: its coordinates over the
        run's basis (``"not a candidate"`` for a path the run never stored)."""
        net, run_id, error = self.network, self.ctx.run_id, self.error
        target = stored_general_path(net, row) if row is not None else read_general_path_argument(net, path, error)
        text = format_general_path(net, target)
        if self.ctx.status != "complete":
            raise error(f"path {text} is not kept by run {run_id}, and the run is {self.ctx.status}: no basis to express it over")
        kept = self.store.run("general_kept_paths", run=run_id)
        basis = self.described(kept)
        try:
            coords = general_coordinates(net, basis if basis is not None else blocks_from_stored(net, kept), target)
        except ExpressError as exc:  # the stored basis is certified: this would be a damaged store
            raise error(f"cannot express {text} over the basis of run {run_id}: {exc}") from None
        id_of = int if basis is not None else [r["id"] for r in kept].__getitem__  # basis index -> stored id
        detail = "discarded by the run" if row is not None else self.never_a_candidate
        return {
            "run": run_id, "path": general_path_json(net, target), "text": text, "id": row["id"] if row is not None else None,
            "status": "discarded" if row is not None else "not a candidate", "substructure": None,
            "reason": {"step": "coordinates", "detail": detail},
            "certificate": [{"coef": t["coef"], "path": t["path"], "text": t["text"], "id": id_of(t["index"]), "index": t["index"]}
                            for t in coords["coordinates"]],
            "verified": coords["verified"],
        }
