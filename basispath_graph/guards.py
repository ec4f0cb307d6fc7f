"""Resource guards: estimate what an engine will need and refuse before allocating it.

Being refused with the estimate beats being killed by the operating system halfway. The
estimates come from ``make bench`` (bench/results.md): faithful DEAH peaks at about 2 kB per
candidate path (the union of the B_r of the selected substructures: dense-8x128, 1.35M
candidates, 2.66 GB), the skeleton engine with certification at about 450 bytes per weight
(dense-8x256: 1.0 GB). Time estimates come from the same runs (seconds per candidate path or
per weight, whole solve with certificates); they only refuse when a limit is set
(``--max-seconds`` or ``BASISPATH_MAX_SECONDS``): by default long work is allowed.
"""

from __future__ import annotations

import os

from .errors import LimitExceeded
from .network import Network

__all__ = [
    "ResourceLimit", "memory_limit_bytes", "time_limit_seconds", "candidate_paths", "check_memory", "check_time",
    "MEMORY_ENV", "TIME_ENV",
]

MEMORY_ENV = "BASISPATH_MAX_MEMORY_GB"
TIME_ENV = "BASISPATH_MAX_SECONDS"
BYTES_PER_CANDIDATE = 2000
BYTES_PER_WEIGHT_SKELETON = 450
# bench/results.md, dense-8x128 (1.35M candidates, 590k weights): faithful deah ~123 s,
# deah-complete ~40-65 s, skeleton with certification ~2 s per million weights.
SECONDS_PER_CANDIDATE = {"deah": 1e-4, "deah-complete": 5e-5}
SECONDS_PER_WEIGHT_SKELETON = 2e-6


class ResourceLimit(LimitExceeded):
    """The estimated memory or time is over the limit, or a limit is not valid (one-line message
    with the estimate)."""


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


def time_limit_seconds(limit_s: float | None = None) -> float | None:
    """--max-seconds, else $BASISPATH_MAX_SECONDS, else None (no time limit)."""
    if limit_s is None and os.environ.get(TIME_ENV):
        try:
            limit_s = float(os.environ[TIME_ENV])
        except ValueError:
            raise ResourceLimit(f"{TIME_ENV} must be a number of seconds, got {os.environ[TIME_ENV]!r}") from None
    if limit_s is not None and not 0 < limit_s < float("inf"):
        raise ResourceLimit(f"the time limit must be a finite number of seconds > 0, got {limit_s}")
    return limit_s


def check_time(what: str, seconds: float, limit: float | None, hint: str) -> None:
    if limit is not None and seconds > limit:
        shown = f"{seconds:,.0f}" if seconds >= 10 else f"{seconds:.2g}"
        raise ResourceLimit(f"{what} would take about {shown} s, over the limit of {limit:g} s; {hint}")


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
