"""Exact verification of basis path sets: rank (peeling + GF(p) elimination), certify, express.

No floating point anywhere: independence is proved by rank modulo a prime, a shortfall (a
dependence) by integer combinations re-added exactly (``rank.exact_rank_of_rows``);
certificates for discarded paths are integer combinations checked by re-adding the vectors.
"""

from .certify import Verdict, certify, describe_weight, find_duplicate, find_invalid, format_path, parse_path, read_path
from .express import (
    CertificateMismatchError,
    DependentBasisError,
    Expresser,
    ExpressError,
    InvalidPathError,
    NonIntegralError,
    NotInSpanError,
)
from .rank import (
    P1,
    P2,
    PRIMES,
    IncrementalBasis,
    ModPElimination,
    PeelResult,
    flatten_blocks,
    independent_mask,
    peel,
    peel_blocks,
    rank_of,
    rank_of_rows,
    exact_rank_of_rows,
)

__all__ = [
    "Verdict", "certify", "describe_weight", "find_duplicate", "find_invalid", "format_path", "parse_path", "read_path",
    "Expresser", "ExpressError", "InvalidPathError", "DependentBasisError", "NotInSpanError",
    "NonIntegralError", "CertificateMismatchError",
    "P1", "P2", "PRIMES", "IncrementalBasis", "ModPElimination", "PeelResult", "flatten_blocks",
    "independent_mask", "peel", "peel_blocks", "rank_of", "rank_of_rows",
    "exact_rank_of_rows",
]
