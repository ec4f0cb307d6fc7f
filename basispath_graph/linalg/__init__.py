"""Exact sparse linear algebra for path vectors: one home for each tool.

- :mod:`.sparse`: CSR index ranges and (row, column, value) term lists (merge, tables);
- :mod:`.peeling`: peeling vectors with a private coordinate into triangular rounds;
- :mod:`.elimination`: sparse Gaussian elimination over GF(p) or Q, optionally remembering how
  each echelon row was formed (to read off coordinates);
- :mod:`.greedy_mod_p`: which 0/1 rows, in order, raise the rank modulo a prime: the same choice
  as :mod:`.elimination`'s, its loop in C;
- :mod:`.sparse_inverse`: the inverse of independent sparse rows on pivot coordinates mod p
  (peeling, then elimination of the core);
- :mod:`.checks`: "does this combination add up to that vector?" (certificate re-adding).

No floating point anywhere. ``verify`` (rank, certify, express) and the certificate modules of
``deah`` are built on these.
"""

from .elimination import (
    P1, P2, PRIMES, Echelon, ExactSpan, ModPElimination, NotInSpan, forest_in_order, independent_in_order, nullspace_mod_p,
    rational_reconstruction,
)
from .peeling import PeelResult, peel, peel_entries
from .sparse_inverse import DependentRows, inverse_mod, inverse_on_pivots
from .sparse import Terms, as_table, combine, concat_terms, empty_terms, gather, group_by, grouped_by_value, take_rows

__all__ = [
    "P1", "P2", "PRIMES", "Echelon", "ExactSpan", "ModPElimination", "NotInSpan", "forest_in_order",
    "independent_in_order", "nullspace_mod_p", "rational_reconstruction",
    "PeelResult", "peel", "peel_entries",
    "DependentRows", "inverse_mod", "inverse_on_pivots",
    "Terms", "as_table", "combine", "concat_terms", "empty_terms", "gather", "group_by", "grouped_by_value", "take_rows",
]
