"""The DEAH engines' basis of a general network is certified from its parts (issue 26:
``general/union_certificate.py``); a broken part is refused with its defect, and the explicit
certifier over the listed union refuses it too."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from basispath_graph.general import deah_solve
from basispath_graph.general.identity_forest import forest_blocks
from basispath_graph.general.lazy_blocks import LazyBlocks
from basispath_graph.general.model import parse_general
from basispath_graph.general.paper_setting import paper_setting
from basispath_graph.general.paths import certify_blocks
from basispath_graph.general.union_certificate import certify_union
from basispath_graph.solver import solve
from basispath_graph.spec import load_any_spec
from basispath_graph.verify import Verdict

BLOCK = Path(__file__).resolve().parents[1] / "examples" / "general" / "resnet-block.json"


def _parts():
    net = load_any_spec(BLOCK, None)
    setting = paper_setting(net, "deah-complete")
    layered = solve(setting.core, engine="deah-complete")
    core = [deah_solve.core_block(setting, b) for b in layered.basis]
    lifted = list(LazyBlocks(deah_solve._tap_lift(setting, layered.basis)))
    extra = deah_solve._extra_blocks(setting)
    forest = forest_blocks(net, *deah_solve._core_walks(setting))
    return net, layered.verdict, set(setting.pair_connection.values()), core, lifted, extra, forest


def _row_copied(block, src: int, dst: int):
    nodes, taps = block.nodes.copy(), block.taps.copy()
    nodes[dst], taps[dst] = nodes[src], taps[src]
    return dataclasses.replace(block, nodes=nodes, taps=taps)


def test_the_parts_verdict_is_the_judges_on_the_resnet_block():
    net, verdict, conns, core, lifted, extra, forest = _parts()
    assert lifted and extra and forest
    mine = certify_union(net, verdict, conns, core, lifted, extra, forest)
    judge = certify_blocks(net, core + lifted + extra + forest)
    assert mine.certified and judge.certified and mine.size == judge.size == net.m - net.H


@pytest.mark.parametrize("part, change, defect", [
    ("lifted", "copy a row", "two paths share a private weight (tap lift or extra layers)"),
    ("extra", "copy a row", "two paths share a private weight (tap lift or extra layers)"),
    ("lifted", "tap 0", "tap lift block 0: not one private weight per path"),
    ("forest", "copy a row", "closes a cycle"),
    ("core", "not certified", "the core's paths: dependent: rank 1 < 2"),
])
def test_a_broken_part_is_refused_as_the_judge_refuses_it(part, change, defect):
    net, verdict, conns, core, lifted, extra, forest = _parts()
    parts = {"core": core, "lifted": lifted, "extra": extra, "forest": forest}
    blocks = parts[part]
    k = next(n for n, b in enumerate(blocks) if len(b) >= 2) if change == "copy a row" else 0
    if change == "copy a row":
        blocks[k] = _row_copied(blocks[k], 0, 1)
    elif change == "tap 0":
        blocks[k] = dataclasses.replace(blocks[k], taps=np.zeros_like(blocks[k].taps))
    else:
        verdict = Verdict(False, "dependent: rank 1 < 2", 2, 2, 1)
    mine = certify_union(net, verdict, conns, core, lifted, extra, forest)
    assert not mine.certified and defect in mine.defect
    if change != "not certified":
        assert not certify_blocks(net, core + lifted + extra + forest).certified
