"""JSON documents of a general network's result: the ``--json`` summary and the ``--export`` file."""

from __future__ import annotations

from ..export import summary
from .blocks import block_paths
from .model import GeneralNetwork

__all__ = ["general_summary", "general_export", "general_core_path", "general_basis_paths"]


def general_basis_paths(result) -> list[dict]:
    """The basis of a general result as general paths ``{"nodes": [[layer, index], ...], "taps": [...]}``."""
    return [p for b in result.basis for p in block_paths(result.network, b)]


def general_summary(result) -> dict:
    """The ``--json`` summary; with the DEAH engines also the parts of the basis and the summary
    of the layered run on the core."""
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


def general_export(result) -> dict:
    """The ``--export`` file: spec, engine, m, H, certified and the basis as general paths; with
    the DEAH engines also the core's discards as general paths, each with its certificate over the
    basis (``index`` counts in ``basis``: the core's kept paths come first, in the same order)."""
    net = result.network
    doc = {
        "spec": net.to_dict(), "engine": result.engine, "m": net.m, "H": net.H, "certified": result.certified,
        "basis": general_basis_paths(result),
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
