"""Certificates re-added by vector addition over a kept set of paths, in numpy batches.

The arithmetic is :func:`basispath_graph.linalg.checks.first_mismatch`; this module speaks in
paths (``PathBlock``) and raises :class:`~basispath_graph.verify.express.CertificateMismatchError`
naming the first target whose certificate does not add up.
"""

from __future__ import annotations

import numpy as np

from ..linalg.checks import first_mismatch, path_entries
from ..linalg.sparse import Terms
from ..network import Network, PathBlock
from .express import CertificateMismatchError
from .rank import flatten_blocks

__all__ = ["Checker", "check_certificates", "check_vector_certificates"]


def check_certificates(network: Network, basis, targets: list[PathBlock], terms: Terms, row_ids: np.ndarray | None = None) -> None:
    """Vector addition, all at once: for every target path, sum of coef x basis path == the path.

    ``basis`` is the list of basis blocks or its ``flatten_blocks`` form (pass that when checking
    batch by batch); ``targets`` are the target paths in row order (concatenated); raises
    ``CertificateMismatchError`` naming the first path whose certificate does not sum to it
    (by its row, or by ``row_ids[row]`` when given).
    """
    flat = basis if isinstance(basis, tuple) else flatten_blocks(network, basis)
    row = first_mismatch(flat, network.m, path_entries(*flatten_blocks(network, targets)), terms)
    if row is not None:
        row = int(row_ids[row]) if row_ids is not None else row
        raise CertificateMismatchError(f"certificate of discarded path {row} does not sum to the path")


def check_vector_certificates(network: Network, basis, rows: np.ndarray, wids: np.ndarray, vals: np.ndarray, terms: Terms) -> None:
    """Vector addition for targets given as entries (target row, weight, value): for every target,
    sum of coef x basis path == the target; raises ``CertificateMismatchError`` naming the first
    target (by row) whose certificate does not sum to it."""
    flat = basis if isinstance(basis, tuple) else flatten_blocks(network, basis)
    row = first_mismatch(flat, network.m, (rows, wids, vals), terms)
    if row is not None:
        raise CertificateMismatchError(f"certificate of vector {row} does not sum to it")


class Checker:
    """Vector addition against one kept set (``flatten_blocks`` form) for certificates of paths
    and of arbitrary integer vectors."""

    def __init__(self, network: Network, flat_basis):
        self.network, self.flat_basis = network, flat_basis

    def paths(self, layers, nodes, terms: Terms) -> None:
        check_certificates(self.network, self.flat_basis, [PathBlock(tuple(layers), nodes)], terms)

    def vectors(self, rows: np.ndarray, wids: np.ndarray, vals: np.ndarray, terms: Terms) -> None:
        check_vector_certificates(self.network, self.flat_basis, rows, wids, vals, terms)
