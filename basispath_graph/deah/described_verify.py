"""``basispath verify`` of a ``basispath-described-deah/1`` file (``deah/described_file.py``):
the run rebuilt from its description (``deah/described_run.py``) and certified from it
(``ear_certificate`` for the core, ``union_certificate`` for the other parts), no path listed."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import BadInput
from ..general.deah_solve import general_result
from ..general.paper_setting import paper_setting
from ..verify import Verdict
from .described_file import DESCRIBED_DEAH_FORMAT
from .described_run import rebuild
from .run_description import BlockRow, DescriptionMismatch, RunDescription

__all__ = ["certify_described_deah"]


def _int(value, where: str) -> int:
    if type(value) is not int or value < 0:
        raise BadInput(f"{where}: expected a non-negative integer")
    return value


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise BadInput(f"{where}: expected a list")
    return value


def certify_described_deah(network, data: Mapping, source: str) -> Verdict:
    """Rebuild the run a ``basispath-described-deah/1`` document describes over ``network`` and
    certify it from the description; BadInput (one line naming the file and the entry) when the
    document is not in that form or does not describe a run of this network's core."""
    for key in ("seed", "orders", "substructures", "blocks"):
        if key not in data:
            raise BadInput(f"{source}: a {DESCRIBED_DEAH_FORMAT} document needs '{key}'")
    general = not network.is_layered
    setting = paper_setting(network, "deah-complete") if general else None
    core = setting.core if general else network
    if general:
        names = [network.layers[k].name for k in setting.core_layers]
        if data.get("core_layers") != names:
            raise BadInput(f"{source}: core_layers are not the core of this network ({', '.join(names[:3])}, ...)")
        position = {name: k for k, name in enumerate(names)}
    else:
        position = {k: k for k in range(core.L + 1)}

    def layer(value, where: str) -> int:
        if isinstance(value, bool) or value not in position:
            raise BadInput(f"{where}: {value!r} is not a layer of the core")
        return position[value]

    orders = []
    for k, order in enumerate(_list(data["orders"], f"{source}: orders")):
        values = _list(order, f"{source}: orders[{k}]")
        if not all(type(v) is int for v in values):
            raise BadInput(f"{source}: orders[{k}]: expected a list of integers")
        orders.append(np.asarray(values, dtype=np.int64))
    selected = []
    for n, s in enumerate(_list(data["substructures"], f"{source}: substructures")):
        where = f"{source}: substructures[{n}]"
        if not isinstance(s, Mapping) or set(s) != {"idx", "layers"}:
            raise BadInput(f"{where}: expected {{\"idx\", \"layers\"}}")
        selected.append((_int(s["idx"], f"{where}.idx"), tuple(layer(l, f"{where}.layers") for l in _list(s["layers"], f"{where}.layers"))))
    keys = {"substructure", "rule", "hop", "kept_first", "kept", "discard_first", "discards", "prefix"}
    blocks = []
    for n, b in enumerate(_list(data["blocks"], f"{source}: blocks")):
        where = f"{source}: blocks[{n}]"
        if not isinstance(b, Mapping) or set(b) != keys:
            raise BadInput(f"{where}: expected {{{', '.join(sorted(keys))}}}")
        blocks.append(BlockRow(_int(b["substructure"], where), str(b["rule"]), tuple(layer(l, f"{where}.hop") for l in _list(b["hop"], where)),
                               *(_int(b[k], f"{where}.{k}") for k in ("kept_first", "kept", "discard_first", "discards", "prefix"))))
    try:
        layered = rebuild(core, RunDescription(_int(data["seed"], f"{source}: seed"), orders, selected, blocks))
    except DescriptionMismatch as exc:
        raise BadInput(f"{source}: does not describe a deah-complete run of this network: {exc}") from None
    verdict = general_result(setting, "deah-complete", layered.seed, layered).verdict if general else layered.verdict
    claimed = data.get("basis_size")
    if claimed is not None and claimed != verdict.size:
        raise BadInput(f"{source}: basis_size says {claimed}, the description has {verdict.size} paths")
    return verdict
