"""Resource guards: estimate what an engine will need and refuse before allocating it.

Being refused with the estimate beats being killed by the operating system halfway. The
estimates come from ``make bench`` (bench/results.md): faithful DEAH peaks at about 2 kB per
candidate path (the union of the B_r of the selected substructures: dense-8x128, 1.35M
candidates, 2.66 GB), the skeleton engine with certification at about 450 bytes per weight
(dense-8x256: 1.0 GB).
"""

from __future__ import annotations

import os

from .network import Network

__all__ = ["ResourceLimit", "memory_limit_bytes", "candidate_paths", "check_memory", "MEMORY_ENV"]

MEMORY_ENV = "BASISPATH_MAX_MEMORY_GB"
BYTES_PER_CANDIDATE = 2000
BYTES_PER_WEIGHT_SKELETON = 450


class ResourceLimit(ValueError):
    """The estimated memory is over the limit (one-line message with the estimate)."""


def memory_limit_bytes(limit_gb: float | None = None) -> int:
    """--max-memory-gb, else $BASISPATH_MAX_MEMORY_GB, else 80% of this machine's memory."""
    if limit_gb is None and os.environ.get(MEMORY_ENV):
        try:
            limit_gb = float(os.environ[MEMORY_ENV])
        except ValueError:
            raise ResourceLimit(f"{MEMORY_ENV} must be a number of GB, got {os.environ[MEMORY_ENV]!r}") from None
    if limit_gb is not None:
        if not limit_gb > 0:
            raise ResourceLimit(f"the memory limit must be > 0 GB, got {limit_gb}")
        return int(limit_gb * 1e9)
    try:
        return int(0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 16 * 10**9


def candidate_paths(network: Network, substructures) -> int:
    """Sum of |B_r| = m_r - H_r over the given substructure layer sequences."""
    w = network.widths
    total = 0
    for layers in substructures:
        total += sum(w[a] * w[b] for a, b in zip(layers, layers[1:])) - sum(w[l] for l in layers[1:-1])
    return total


def check_memory(what: str, needed: int, limit: int, hint: str) -> None:
    if needed > limit:
        raise ResourceLimit(
            f"{what} would need about {needed / 1e9:.1f} GB, over the limit of {limit / 1e9:.1f} GB; {hint}"
        )
