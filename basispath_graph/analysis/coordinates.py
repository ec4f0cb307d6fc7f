"""Coordinates of any path in basis-path space: the integer coefficients over a basis that add
up to it, weight by weight (what G-SGD works with).

``coordinates(network, blocks, path)`` expresses one path with ``verify.Expresser`` (peel the
basis, exact elimination of its core) and re-checks the sum by plain vector addition here, with
an independent weight count (``check_certificate``), before answering.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from ..linalg.checks import combination_equals
from ..network import Network, PathBlock
from ..verify import Expresser, format_path, read_path

__all__ = ["coordinates", "path_weights", "check_certificate"]


def path_weights(layers, indices) -> Counter:
    """A path as the multiset of its weights (layer_a, index_a, layer_b, index_b)."""
    return Counter((la, ia, lb, ib) for (la, ia), (lb, ib) in zip(zip(layers, indices), zip(layers[1:], indices[1:])))


def check_certificate(target: tuple, terms: list[tuple[int, tuple]]) -> bool:
    """Does sum(coef * path) equal the target path, weight by weight?"""
    return combination_equals(
        path_weights(*target).elements(),
        ((coef, path_weights(layers, indices).elements()) for coef, (layers, indices) in terms),
    )


def _basis_path(blocks: Sequence[PathBlock], index: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    for b in blocks:
        if index < len(b):
            return b.layers, tuple(int(i) for i in b.take([index]).nodes[0])  # one row made, not the block
        index -= len(b)
    raise IndexError(index)


def coordinates(network: Network, blocks: Sequence[PathBlock], path, *, expresser: Expresser | None = None) -> dict:
    """``{"path", "coordinates": [{"coef", "path", "index"}, ...], "verified"}``: path = sum of
    coef x basis path (``index``: its position in the basis), non-zero coefficients only.

    Raises ``verify.ExpressError`` subclasses: InvalidPathError (not a path of the network, exit
    code 2 in the CLI), DependentBasisError, NotInSpanError, NonIntegralError.
    """
    layers, indices = read_path(path)
    expresser = expresser or Expresser(network, blocks)
    coefs = expresser.express(layers, indices)
    terms = [(c, _basis_path(blocks, b)) for b, c in coefs]
    return {
        "path": [[l, i] for l, i in zip(layers, indices)],
        "text": format_path(layers, indices),
        "coordinates": [{"coef": c, "path": [[int(l), int(i)] for l, i in zip(*p)], "index": b} for (b, c), (_, p) in zip(coefs, terms)],
        "verified": check_certificate((layers, indices), terms),
    }
