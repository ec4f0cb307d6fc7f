"""Solve a general network (skeleton, or a DEAH engine in the paper's setting), certified exactly,
and its summary and export documents."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import BadInput
from ..verify.certify import Verdict
from .blocks import GeneralBlock, block_paths
from .model import GeneralNetwork
from .paths import certify_blocks
from .skeleton import skeleton_blocks

__all__ = ["GeneralResult", "solve_general", "general_export", "general_summary"]


@dataclass(repr=False)
class GeneralResult:
    """A certified (or not: ``verdict`` says why) basis path set of a general network.

    ``blocks`` hold the paths as arrays; ``basis_paths`` as the JSON form; ``summary()`` and
    ``export()`` are what ``basispath solve --json`` and ``--export`` write. With a DEAH engine,
    ``core`` is the layered run on the network's core (its discards, certificates and repairs)
    and ``parts`` counts the paths of each part (docs/general-networks.md)."""

    network: GeneralNetwork
    blocks: list[GeneralBlock]
    verdict: Verdict
    timings: dict[str, float] = field(default_factory=dict)
    engine: str = "skeleton"
    parts: dict = field(default_factory=dict)  # DEAH engines: core layer names and the paths of each part
    core: object = None  # DEAH engines: the layered SolveResult on the core

    @property
    def basis_paths(self) -> list[dict]:
        """The basis as general paths ``{"nodes": [[layer, index], ...], "taps": [...]}``."""
        return [p for b in self.blocks for p in block_paths(self.network, b)]

    def summary(self) -> dict:
        return general_summary(self)

    def export(self) -> dict:
        return general_export(self)

    def __repr__(self) -> str:
        return (f"GeneralResult(network={self.network.name!r}, engine={self.engine!r}, m={self.network.m}, "
                f"H={self.network.H}, basis={self.basis_size} paths, certified={self.certified})")

    @property
    def basis_size(self) -> int:
        return sum(len(b) for b in self.blocks)

    @property
    def certified(self) -> bool:
        return self.verdict.certified


def solve_general(net: GeneralNetwork, engine: str = "skeleton", seed: int = 0, **options) -> GeneralResult:
    """A basis path set of a general network, certified exactly.

    Parameters
    ----------
    net : GeneralNetwork
        From ``load_general`` (a general spec, or a layered one read as general).
    engine : {"skeleton", "deah-complete", "deah"}
        "skeleton" (the default): every general network in which each layer has a trainable
        connection in (unless an input) and out (unless an output), or whose identity edges form
        chains; linear time. "deah-complete" / "deah": a network in the paper's setting (a layered core of dense
        connections) plus kernel taps, biases and other extra inputs and outputs
        (``general.deah_solve``, docs/general-networks.md).
    seed, options
        Go to the layered ``solve`` on the core (DEAH engines). ``memory_limit`` (bytes) and
        ``time_limit`` (seconds) refuse (``ResourceLimit``) before starting when the estimate is
        over them (``guards``).

    Returns
    -------
    GeneralResult
        ``certified``, ``basis_size``, ``basis_paths`` (JSON form), ``summary()``, ``export()``;
        ``core`` is the layered ``SolveResult`` on the core for the DEAH engines.

    Raises
    ------
    UnsupportedIdentity, UnsupportedFeature
        (:class:`~basispath_graph.errors.BadInput`, one line) a network the engine does not read.

    Examples
    --------
    >>> from basispath_graph import load_general, solve_general
    >>> net = load_general({"layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 2},
    ...                                {"name": "h", "size": 3}, {"name": "y", "size": 2}],
    ...                     "connections": [{"from": "x", "to": "h", "taps": 9}, {"from": "h", "to": "y"},
    ...                                     {"from": "bias", "to": "h"}, {"from": "bias", "to": "y"}]})
    >>> r = solve_general(net, "deah-complete")
    >>> r.certified, r.basis_size == net.m - net.H, r.parts["tap_lift"]
    (True, True, 48)
    >>> r.basis_paths[0]
    {'nodes': [['x', 0], ['h', 0], ['y', 0]], 'taps': [0, 0]}
    """
    from ..guards import MEMORY, MEMORY_ENV, SECONDS, TIME_ENV, check_memory, check_time

    memory_limit, time_limit = options.get("memory_limit"), options.get("time_limit")
    if engine != "skeleton":
        from ..solver import ENGINES
        from .deah_solve import solve_general_deah  # builds on this module

        if engine not in ENGINES:
            raise BadInput(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        if memory_limit is not None:
            check_memory(f"{engine} on this general network", MEMORY["general deah"], net.m, 0, memory_limit,
                         f"raise --max-memory-gb / {MEMORY_ENV}, or use --engine skeleton")
        check_time(f"{engine} on this general network", SECONDS["general deah"], net.m, 0, time_limit,
                   f"raise --max-seconds / {TIME_ENV}, or use --engine skeleton")
        return solve_general_deah(net, engine, seed, **options)
    if memory_limit is not None:
        check_memory("skeleton", MEMORY["skeleton"], net.m, 0, memory_limit, f"raise --max-memory-gb / {MEMORY_ENV}")
    check_time("skeleton", SECONDS["skeleton"], net.m, 0, time_limit, f"raise --max-seconds / {TIME_ENV}")
    t0 = time.perf_counter()
    blocks = skeleton_blocks(net)
    t1 = time.perf_counter()
    verdict = certify_blocks(net, blocks)
    t2 = time.perf_counter()
    return GeneralResult(net, blocks, verdict, {"materialise": t1 - t0, "certify": t2 - t1})


def general_summary(result: GeneralResult) -> dict:
    """The ``--json`` summary; with the DEAH engines also the parts of the basis and the summary
    of the layered run on the core."""
    from ..export import summary  # export builds on the solver, which general.deah_solve runs

    net = result.network
    doc = {
        "network": net.name, "engine": result.engine, "kind": "general", "m": net.m, "H": net.H,
        "basis_size": result.basis_size, "certified": result.certified, "defect": result.verdict.defect,
        "timings": {k: round(v, 6) for k, v in result.timings.items()},
    }
    if result.core is not None:
        doc["parts"] = result.parts
        doc["core"] = summary(result.core)
    return doc


def general_export(result: GeneralResult) -> dict:
    """The ``--export`` file: spec, engine, m, H, certified and the basis as general paths; with
    the DEAH engines also the core's discards as general paths, each with its certificate over the
    basis (``index`` counts in ``basis``: the core's kept paths come first, in the same order)."""
    net = result.network
    doc = {
        "spec": net.to_dict(), "engine": result.engine, "m": net.m, "H": net.H, "certified": result.certified,
        "basis": result.basis_paths,
    }
    core = result.core
    if core is not None:
        doc["parts"] = result.parts
        doc["repairs"] = len(core.repairs)
        doc["discarded"] = [
            {"path": general_core_path(result.parts, net, d.layers, d.indices),
             "certificate": [{"coef": int(c), "index": int(i)} for i, c in (d.certificate or [])]}
            for d in core.discarded
        ]
    return doc


def general_core_path(parts: dict, net: GeneralNetwork, layers, indices) -> dict:
    """A core path (core layer positions, neuron indices) as a general path, tap 0 on every hop."""
    names = [parts["core_layers"][l] for l in layers]
    return {"nodes": [[n, int(i)] for n, i in zip(names, indices)], "taps": [0] * (len(names) - 1)}
