"""The comparison as a PNG a person can read: four panels, one bar group per column."""

from __future__ import annotations

import io
from pathlib import Path

from ..fileio import write_atomic

__all__ = ["plot_comparison"]

from .compare import STEP_ORDER


def plot_comparison(columns, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [c.label for c in columns]
    x = range(len(columns))
    fig, axes = plt.subplots(2, 2, figsize=(max(9, 2.2 * len(columns) + 4), 8), constrained_layout=True)
    fig.suptitle("basispath compare", fontsize=14)

    ax = axes[0][0]
    ax.bar(x, [c.values.get("ratio") or 0 for c in columns], color="#4c72b0")
    ax.set_title("basis size relative to weights: |B| / m")
    for i, c in enumerate(columns):
        ax.annotate(f"{c.values.get('basis_size')}", (i, c.values.get("ratio") or 0), ha="center", va="bottom", fontsize=9)

    ax = axes[0][1]
    chain = [c.values.get("chain_discards", 0) for c in columns]
    head = [c.values.get("head_discards", 0) for c in columns]
    repairs = [c.values.get("repairs", 0) or 0 for c in columns]
    left = [i - 0.2 for i in x]
    right = [i + 0.2 for i in x]
    ax.bar(left, chain, width=0.4, label="SDVChain discards in chains", color="#55a868")
    ax.bar(left, head, width=0.4, bottom=chain, label="SDVChain discards by chain heads", color="#c44e52")
    ax.bar(right, repairs, width=0.4, label="repairs (drops + re-admissions)", color="#8172b2")
    ax.set_title("SDVChain discards per step (left) and repairs (right)")
    ax.legend(fontsize=8)

    ax = axes[1][0]
    steps = [s for s in STEP_ORDER if any(s in c.timings for c in columns)]
    bottom = [0.0] * len(columns)
    for s in steps:
        vals = [c.timings.get(s, 0.0) for c in columns]
        ax.bar(x, vals, bottom=bottom, label=s)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_title("time per step (s)")
    ax.legend(fontsize=8)

    ax = axes[1][1]
    ax.bar(x, [c.values.get("R", 0) or 0 for c in columns], label="R selected", color="#dd8452")
    ax.bar(x, [c.values.get("chains", 0) or 0 for c in columns], width=0.4, label="T chains", color="#937860")
    ax.set_title("substructures and chains")
    ax.legend(fontsize=8)

    for row in axes:
        for a in row:
            a.set_xticks(list(x))
            a.set_xticklabels(labels, rotation=20, ha="right", fontsize=9)
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, dpi=110, format="png")
    finally:
        plt.close(fig)
    write_atomic(path, buffer.getvalue())
