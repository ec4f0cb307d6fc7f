"""Solve a general network: the skeleton basis, certified exactly, and its export document."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..verify.certify import Verdict
from .blocks import GeneralBlock, block_paths
from .model import GeneralNetwork
from .paths import certify_blocks
from .skeleton import skeleton_blocks

__all__ = ["GeneralResult", "solve_general", "general_export", "general_summary"]


@dataclass
class GeneralResult:
    network: GeneralNetwork
    blocks: list[GeneralBlock]
    verdict: Verdict
    timings: dict[str, float] = field(default_factory=dict)
    engine: str = "skeleton"

    @property
    def basis_size(self) -> int:
        return sum(len(b) for b in self.blocks)

    @property
    def certified(self) -> bool:
        return self.verdict.certified


def solve_general(net: GeneralNetwork) -> GeneralResult:
    """The skeleton engine on a general network (``skeleton.skeleton_blocks``), certified."""
    t0 = time.perf_counter()
    blocks = skeleton_blocks(net)
    t1 = time.perf_counter()
    verdict = certify_blocks(net, blocks)
    t2 = time.perf_counter()
    return GeneralResult(net, blocks, verdict, {"materialise": t1 - t0, "certify": t2 - t1})


def general_summary(result: GeneralResult) -> dict:
    net = result.network
    return {
        "network": net.name, "engine": result.engine, "kind": "general", "m": net.m, "H": net.H,
        "basis_size": result.basis_size, "certified": result.certified, "defect": result.verdict.defect,
        "timings": {k: round(v, 6) for k, v in result.timings.items()},
    }


def general_export(result: GeneralResult) -> dict:
    """The ``--export`` file: spec, engine, m, H, certified and the basis as general paths."""
    net = result.network
    return {
        "spec": net.to_dict(), "engine": result.engine, "m": net.m, "H": net.H, "certified": result.certified,
        "basis": [p for b in result.blocks for p in block_paths(net, b)],
    }
