"""The comparison as a PNG a person can read: one bar group per column in each panel.

Panels: for solved columns, Step 3's discards and repairs, the selected substructures, the time
per step; when a column is a general network, first its sizes (m, |B| and H, log scale) and its
connections by kind. ``compare --counts`` (nothing solved) draws only those (the sizes alone
for layered specs).

Each panel's legend sits to the right of its axes, so it never covers a bar however tall the
bars are. The bars are built from plain data series (``discard_series``, ``block_series``) so
tests can check the numbers without reading pixels.
"""

from __future__ import annotations

import io
from pathlib import Path

from ..fileio import write_atomic
from ..timing import STEP_ORDER

__all__ = ["comparison_figure", "plot_comparison", "plotted_data", "discard_series", "block_series", "size_series",
           "connection_series", "REPAIRS_COLOUR"]

# (values key, legend text, colour): Step 3's discards by the rule that made them. A column only
# has the keys of its engine (deah: SDVChain's steps; deah-complete: its rules).
DISCARD_STEPS = [
    ("chain_discards", "deah: SDVChain, in chains", "#55a868"),
    ("head_discards", "deah: SDVChain, by chain heads", "#c44e52"),
    ("prefix_discards", "deah-complete: ear hop rule, prefix", "#4c72b0"),
    ("suffix_discards", "deah-complete: ear hop rule, suffix", "#64b5cd"),
    ("local_discards", "deah-complete: local rule", "#dd8452"),
]
REPAIRS_COLOUR = "#8172b2"
CHAINS_COLOUR = "#937860"


def _present(series: list[tuple[str, str, list]]) -> list[tuple[str, str, list]]:
    """The series some column has a non-zero value in."""
    return [(label, colour, values) for label, colour, values in series if any(values)]


def discard_series(columns) -> list[tuple[str, str, list[int]]]:
    """(legend text, colour, count per column) of each discard rule some column used."""
    return _present([(label, colour, [c.values.get(key) or 0 for c in columns]) for key, label, colour in DISCARD_STEPS])


def block_series(columns) -> list[tuple[str, str, list[int]]]:
    """(legend text, colour, count per column) of the selected substructures by what Step 3 made
    of them: deah keeps them as R substructures (in chains), deah-complete as p_0, ear and local blocks."""
    def of(engine: str, value) -> list[int]:
        return [(value(c) or 0) if c.values.get("engine") == engine else 0 for c in columns]

    return _present([
        ("deah: R selected substructures", "#dd8452", of("deah", lambda c: c.values.get("R"))),
        ("deah-complete: p_0", "#55a868", of("deah-complete", lambda c: 1 if c.values.get("R") else 0)),
        ("deah-complete: ear blocks (one new layer pair)", "#4c72b0", of("deah-complete", lambda c: c.values.get("ear_blocks"))),
        ("deah-complete: local blocks", "#c44e52", of("deah-complete", lambda c: c.values.get("local_blocks"))),
    ])


SIZES = [("m", "m (weights)", "#4c72b0"), ("basis_size", "|B| = m - H", "#55a868"), ("H", "H (hidden rescaling classes)", "#c44e52")]
CONNECTION_KINDS = [("dense_connections", "dense", "#4c72b0"), ("grouped_connections", "grouped", "#55a868"),
                    ("diagonal_connections", "diagonal", "#dd8452"),
                    ("identity_connections", "identity shortcuts", "#8172b2")]


def size_series(columns) -> list[tuple[str, str, list[int]]]:
    """(legend text, colour, value per column) of m, |B| and H (side by side, log scale)."""
    return [(label, colour, [c.values.get(key) or 0 for c in columns]) for key, label, colour in SIZES]


def connection_series(columns) -> list[tuple[str, str, list[int]]]:
    """(legend text, colour, count per column) of the connections by kind (general networks)."""
    return _present([(label, colour, [c.values.get(key) or 0 for c in columns]) for key, label, colour in CONNECTION_KINDS])


def _general(columns) -> bool:
    return any(c.values.get("layers") is not None for c in columns)


def _solved(columns) -> bool:
    return any(c.values.get("engine") != "counts" for c in columns)


def _stack(ax, x, series, width: float) -> None:
    bottom = [0] * len(x)
    for label, colour, values in series:
        ax.bar(x, values, width=width, bottom=bottom, label=label, color=colour)
        bottom = [b + v for b, v in zip(bottom, values)]


def _legend_right(ax) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def comparison_figure(columns):
    """The matplotlib Figure of ``compare --plot`` (Agg canvas attached, nothing shown)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    x = list(range(len(columns)))
    sizes = _general(columns) or not _solved(columns)  # --counts of layered specs: sizes only
    panels = sizes + _general(columns) + (3 if _solved(columns) else 0)
    fig = Figure(figsize=(max(10, 1.6 * len(columns) + 6), 11 * panels / 3), layout="constrained")
    FigureCanvasAgg(fig)
    fig.suptitle("basispath compare", fontsize=14)
    axes = list(fig.subplots(panels, 1)) if panels > 1 else [fig.subplots(1, 1)]
    todo = iter(axes)

    if sizes:
        ax = next(todo)
        for k, (label, colour, values) in enumerate(size_series(columns)):
            bars = ax.bar([i + (k - 1) * 0.27 for i in x], values, width=0.27, label=label, color=colour)
            ax.bar_label(bars, labels=[f"{v:,}" for v in values], fontsize=7, rotation=90, padding=2)
        ax.set_yscale("log")
        ax.set_title("sizes (log scale): m, |B| = m - H, H")
    if _general(columns):
        ax = next(todo)
        _stack(ax, x, connection_series(columns), 0.6)
        ax.set_title("connections by kind")

    if _solved(columns):
        ax = next(todo)
        _stack(ax, [i - 0.2 for i in x], discard_series(columns), 0.4)
        repairs = ax.bar([i + 0.2 for i in x], [c.values.get("repairs") or 0 for c in columns], width=0.4,
                         label="repairs (drops + re-admissions)", color=REPAIRS_COLOUR)
        # a 0 written out: "no repair" is a result, not a missing bar (but nothing for a column not solved)
        ax.bar_label(repairs, labels=["" if c.values.get("engine") == "counts" else str(c.values.get("repairs") or 0) for c in columns],
                     fontsize=8)
        ax.set_title("Step 3's discards by rule (left bar) and repairs (right bar)")

        ax = next(todo)
        _stack(ax, [i - 0.2 for i in x], block_series(columns), 0.4)
        chains = [c.values.get("chains") or 0 for c in columns]
        if any(chains):
            bars = ax.bar([i + 0.2 for i in x], chains, width=0.4, label="deah: T chains", color=CHAINS_COLOUR)
            ax.bar_label(bars, labels=[str(t) if t else "" for t in chains], fontsize=8)
        ax.set_title("selected substructures by what Step 3 made of them (left bar); chains (right bar)")

        ax = next(todo)
        steps = [s for s in STEP_ORDER if any(s in c.timings for c in columns)]
        _stack(ax, x, [(s, None, [c.timings.get(s, 0.0) for c in columns]) for s in steps], 0.8)
        ax.set_title("time per step (s)")

    for ax in axes:
        if ax.get_yscale() == "log":
            ax.set_ylim(0.8, ax.get_ylim()[1] * 1000)  # room for the rotated labels above the tallest bar
        else:
            ax.set_ylim(0, ax.get_ylim()[1] * 1.1)  # room for the bar labels above the tallest bar
        _legend_right(ax)
        ax.set_xticks(x)
        ax.set_xticklabels([c.label for c in columns], rotation=15, ha="right", fontsize=9)
    return fig


def plotted_data(columns) -> dict:
    """What the figure shows apart from the times (which change run to run): stored in the PNG's
    Description text, so a check can tell a stale picture from a re-run (tools/tutorial.py)."""
    general = {"sizes": size_series(columns)} if _general(columns) or not _solved(columns) else {}
    if _general(columns):
        general["connections"] = connection_series(columns)
    return {
        "labels": [c.label for c in columns],
        **general,
        "discards": discard_series(columns),
        "repairs": [c.values.get("repairs") or 0 for c in columns],
        "blocks": block_series(columns),
        "chains": [c.values.get("chains") or 0 for c in columns],
        "time_steps": [s for s in STEP_ORDER if any(s in c.timings for c in columns)],
    }


def plot_comparison(columns, path: Path) -> None:
    """Draw the comparison to the PNG file ``path`` (written atomically)."""
    import json

    buffer = io.BytesIO()
    comparison_figure(columns).savefig(buffer, dpi=110, format="png", metadata={"Description": json.dumps(plotted_data(columns))})
    write_atomic(path, buffer.getvalue())
