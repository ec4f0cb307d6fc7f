"""Paths of a general network and exact certification of a basis path set.

A path is ``{"nodes": [[layer_name, index], ...], "taps": [t_1, ..., t_k]}``: from an input
layer to an output layer, one tap per hop, an integer in 0..taps-1 for a trainable hop (dense or
diagonal) and ``null`` for an identity hop. Its vector is the 0/1 vector of the trainable
weights it runs over (identity hops add nothing), so two paths that differ only in identity hops
have the same vector.

``certify_general`` decides exactly, as ``verify.certify`` does for layered networks: every
path valid, no path twice, m - H paths, independent (peeling, then elimination modulo primes;
a shortfall that decides the verdict made exact over Q).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..errors import BadInput
from ..export import read_json_file
from ..linalg.peeling import peel_by_holders
from ..values import is_int, show_value
from ..verify.certify import Verdict, verdict_of
from .blocks import GeneralBlock, block_weight_ids
from .model import GeneralNetwork

__all__ = ["GeneralPath", "read_general_path", "read_general_path_argument", "read_any_general_path", "general_basis_of", "certify_blocks", "path_block", "certify_general", "format_general_path"]

GeneralPath = tuple[tuple[tuple[int, int], ...], tuple[int | None, ...]]  # ((layer, index), ...), taps


def format_general_path(net: GeneralNetwork, path: GeneralPath) -> str:
    """``x:0 -[3]-> h:1 -[id]-> y:1``: nodes with each hop's tap."""
    nodes, taps = path
    out = f"{net.layers[nodes[0][0]].name}:{nodes[0][1]}"
    for (l, i), t in zip(nodes[1:], taps):
        out += f" -[{'id' if t is None else t}]-> {net.layers[l].name}:{i}"
    return out


def read_general_path(net: GeneralNetwork, raw: object, where: str) -> GeneralPath:
    """The JSON form of a path, checked for shape (not yet for being a path of ``net``)."""
    if not isinstance(raw, Mapping) or set(raw) != {"nodes", "taps"}:
        raise BadInput(f"{where}: a path is an object with nodes and taps, got {show_value(raw)}")
    nodes, taps = raw["nodes"], raw["taps"]
    if not isinstance(nodes, list) or not isinstance(taps, list):
        raise BadInput(f"{where}: nodes and taps must be lists")
    out = []
    for k, node in enumerate(nodes):
        if not (isinstance(node, list) and len(node) == 2 and isinstance(node[0], str) and is_int(node[1])):
            raise BadInput(f"{where}: nodes[{k}] must be [layer_name, index], got {show_value(node)}")
        if node[0] not in net.index:
            raise BadInput(f"{where}: nodes[{k}] names no layer: {show_value(node[0])}")
        out.append((net.index[node[0]], int(node[1])))
    if any(t is not None and not is_int(t) for t in taps):
        raise BadInput(f"{where}: taps are integers or null, got {show_value(taps)}")
    return tuple(out), tuple(None if t is None else int(t) for t in taps)


def general_basis_of(net: GeneralNetwork, data: object, source: str) -> list[GeneralPath]:
    """The paths of a basis document (a list of paths, or an object with a "basis" list)."""
    paths = data.get("basis") if isinstance(data, Mapping) else data
    if not isinstance(paths, list):
        raise BadInput(f"{source}: expected a list of paths or an object with a 'basis' list")
    return [read_general_path(net, p, f"{source}: basis[{k}]") for k, p in enumerate(paths)]


def path_problem(net: GeneralNetwork, path: GeneralPath) -> str | None:
    """What makes ``path`` not a path of ``net``, or None."""
    nodes, taps = path
    if len(nodes) < 2:
        return "a path has at least two nodes"
    if len(taps) != len(nodes) - 1:
        return f"{len(nodes) - 1} hops but {len(taps)} taps"
    if nodes[0][0] not in net.inputs:
        return f"starts at layer {net.layers[nodes[0][0]].name}, not an input layer"
    if nodes[-1][0] not in net.outputs:
        return f"ends at layer {net.layers[nodes[-1][0]].name}, not an output layer"
    for l, i in nodes:
        if not 0 <= i < net.layers[l].size:
            return f"neuron {i} out of range in layer {net.layers[l].name} (size {net.layers[l].size})"
    for (a, i), (b, j), t in zip(nodes, nodes[1:], taps):
        k = net.hop.get((a, b, t is not None))
        if k is None:
            kind = "identity" if t is None else "trainable"
            return f"no {kind} connection {net.layers[a].name} -> {net.layers[b].name}"
        c = net.connections[k]
        if c.kind in ("diagonal", "identity") and i != j:
            return f"a {c.kind} hop {net.layers[a].name} -> {net.layers[b].name} keeps the neuron index ({i} -> {j})"
        ga, gb = net.group_sizes(c)
        if c.kind == "grouped" and i // ga != j // gb:
            return f"a grouped hop {net.layers[a].name} -> {net.layers[b].name} stays in its group ({i} -> {j}, {c.groups} groups)"
        if t is not None and not 0 <= t < c.taps:
            return f"tap {t} out of range on {net.layers[a].name} -> {net.layers[b].name} (taps {c.taps})"
    return None


def block_problem(net: GeneralNetwork, block: GeneralBlock, ends: bool = True) -> str | None:
    """What makes a block's rows not paths of ``net`` (``path_problem`` for a whole block at
    once), or None; ``ends=False``: a walk, which need not start at an input or end at an output."""
    layers, hops, n = block.layers, block.hops, len(block)
    if len(layers) != len(hops) + 1 or block.nodes.shape != (n, len(layers)) or block.taps.shape != (n, len(hops)):
        return f"{len(layers)} layers, {len(hops)} hops, nodes {block.nodes.shape}, taps {block.taps.shape}"
    if ends and layers[0] not in net.inputs:
        return f"starts at layer {net.layers[layers[0]].name}, not an input layer"
    if ends and layers[-1] not in net.outputs:
        return f"ends at layer {net.layers[layers[-1]].name}, not an output layer"
    if n == 0:
        return None
    for col, l in enumerate(layers):
        lo, hi = block.nodes[:, col].min(), block.nodes[:, col].max()
        if lo < 0 or hi >= net.layers[l].size:
            return f"neuron {lo if lo < 0 else hi} out of range in layer {net.layers[l].name} (size {net.layers[l].size})"
    for h, k in enumerate(hops):
        if not 0 <= k < len(net.connections):
            return f"hop {h}: no connection {k}"
        c = net.connections[k]
        a, b = net.layers[c.source].name, net.layers[c.target].name
        if (c.source, c.target) != (layers[h], layers[h + 1]):
            return f"hop {h}: connection {a} -> {b} does not join {net.layers[layers[h]].name} -> {net.layers[layers[h + 1]].name}"
        if c.kind in ("diagonal", "identity") and not np.array_equal(block.nodes[:, h], block.nodes[:, h + 1]):
            return f"a {c.kind} hop {a} -> {b} keeps the neuron index"
        ga, gb = net.group_sizes(c)
        if c.kind == "grouped" and not np.array_equal(block.nodes[:, h] // ga, block.nodes[:, h + 1] // gb):
            return f"a grouped hop {a} -> {b} stays in its group ({c.groups} groups)"
        t = block.taps[:, h]
        if c.trainable and (t.min() < 0 or t.max() >= c.taps):
            return f"tap out of range on {a} -> {b} (taps {c.taps})"
        if not c.trainable and t.any():
            return f"an identity hop {a} -> {b} has a tap"
    return None


def path_block(net: GeneralNetwork, path: GeneralPath) -> GeneralBlock:
    """A valid path as a one-path block."""
    nodes, taps = path
    hops = tuple(net.hop[(a, b, t is not None)] for (a, _), (b, _), t in zip(nodes, nodes[1:], taps))
    return GeneralBlock(tuple(l for l, _ in nodes), hops, np.array([[i for _, i in nodes]], dtype=np.int64),
                        np.array([[0 if t is None else t for t in taps]], dtype=np.int64).reshape(1, len(taps)))


def find_general_path(net: GeneralNetwork, blocks, target: GeneralPath) -> int | None:
    """Basis index of a general path in ``blocks`` (a list, or a described basis: found without
    listing it), or None."""
    index_of = getattr(blocks, "index_of", None)
    if index_of is not None:
        return index_of(target)
    nodes, taps = target
    layers = tuple(l for l, _ in nodes)
    row = np.asarray([i for _, i in nodes], dtype=np.int64)
    tap_row = np.asarray([0 if t is None else t for t in taps], dtype=np.int64)
    start = 0
    for b in blocks:
        if tuple(b.layers) == layers and len(b) and all(
            net.connections[k].trainable == (t is not None) for k, t in zip(b.hops, taps)
        ):
            hit = np.flatnonzero((b.nodes == row).all(axis=1) & (b.taps == tap_row).all(axis=1))
            if len(hit):
                return start + int(hit[0])
        start += len(b)
    return None


def certify_general(net: GeneralNetwork, paths: list[GeneralPath]) -> Verdict:
    """Decide exactly whether ``paths`` is a basis path set of ``net`` (see the module doc).

    Defects: ``path 3 (x:0 -[1]-> y:2): ...``, ``path 7 (...) duplicates path 2``,
    ``size 41 != m - H = 44``, ``dependent: rank 40 < 44``.
    """
    for n, p in enumerate(paths):
        problem = path_problem(net, p)
        if problem:
            return Verdict(False, f"path {n} ({format_general_path(net, p)}): {problem}", len(paths), net.basis_size, None)
    first: dict[GeneralPath, int] = {}
    duplicate = None
    for n, p in enumerate(paths):
        if p in first:
            duplicate = f"path {n} ({format_general_path(net, p)}) duplicates path {first[p]}"
            break
        first[p] = n
    return certify_blocks(net, [path_block(net, p) for p in paths], duplicate)


def certify_blocks(net: GeneralNetwork, blocks: list[GeneralBlock], duplicate: str | None = None,
                   expected_size: int | None = None, record=None) -> Verdict:
    """The size and independence part of the certification, on valid blocks (a duplicate found
    by the caller is reported before the size). ``expected_size``: of a part of a basis (default
    m - H: a whole one); ``record``: as ``verify.certify``'s."""
    expected = net.basis_size if expected_size is None else expected_size
    return verdict_of(sum(len(b) for b in blocks), expected, None,
                      lambda: peel_by_holders(blocks, lambda b: block_weight_ids(net, b), net.m), lambda: duplicate, record)


_FORMS = 'give a stored path id, a JSON path {"nodes": [[layer, index], ...], "taps": [...]} or a file holding one'


def read_general_path_argument(net: GeneralNetwork, text: str, error=BadInput) -> GeneralPath:
    """A path of ``net`` from JSON text or a JSON file; ``error`` (one line) when it is neither
    or not a path of the network."""
    raw = text.strip()
    source = "path"
    if raw.startswith("{"):
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            raise error(f"cannot read path {text!r}: not JSON; {_FORMS}") from None
    elif Path(raw).is_file():
        source = raw
        try:
            data = read_json_file(raw)
        except BadInput as exc:
            raise error(str(exc)) from None
    else:
        raise error(f"cannot read path {text!r}: {_FORMS}")
    try:
        path = read_general_path(net, data, source)
    except BadInput as exc:
        raise error(str(exc)) from None
    problem = path_problem(net, path)
    if problem:
        raise error(f"{format_general_path(net, path) if path[0] else source} is not a path of network {net.name or '(unnamed)'}: {problem}")
    return path


def read_any_general_path(net: GeneralNetwork, path, error=BadInput) -> GeneralPath:
    """A path of ``net`` in any form ``why``, ``express`` and ``certify`` take, checked against
    the network: ``{"nodes", "taps"}``, its JSON text or a file holding it, or the tuple form
    ``((layer, index), ...), taps``."""
    if isinstance(path, str):
        return read_general_path_argument(net, path, error)
    if isinstance(path, Mapping):
        try:
            parsed = read_general_path(net, path, "path")
        except BadInput as exc:
            raise error(str(exc)) from None
    elif isinstance(path, (tuple, list)) and len(path) == 2 and all(isinstance(p, (tuple, list)) for p in path):
        nodes, taps = path
        parsed = (tuple((int(l), int(i)) for l, i in nodes), tuple(None if t is None else int(t) for t in taps))
    else:
        raise error(f"cannot read path {path!r}: {_FORMS}")
    problem = path_problem(net, parsed)
    if problem:
        raise error(f"{format_general_path(net, parsed) if parsed[0] else 'path'} is not a path of network {net.name or '(unnamed)'}: {problem}")
    return parsed
