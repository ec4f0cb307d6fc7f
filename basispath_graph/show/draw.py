"""PNG and SVG pictures with matplotlib (Agg; no display and no Graphviz binary needed).

Every axes uses inches as data units (``_panel``), so sizes, gaps and fonts are laid out
directly and the figure grows with the network instead of squeezing labels together.
"""

from __future__ import annotations

import io

from .general_model import GeneralOverview
from .model import Overview, PathView, StoredPath, block_text
from .palette import GREY, HIGHLIGHT, KIND_COLOURS, RULE_COLOURS, colours

__all__ = ["draw_overview", "draw_path", "draw_general", "ear_order_lines", "MAX_CHAIN_ROWS"]

MAX_CHAIN_ROWS = 40  # more chains than this: the picture lists the first ones (DOT has all)
FONT = 9
HALO = "#ffd24d"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110)


def _panel(fig, x: float, y: float, w: float, h: float):
    """Axes at (x, y) inches from the bottom left, w x h inches, data units = inches, no frame."""
    W, H = fig.get_size_inches()
    ax = fig.add_axes((x / W, y / H, w / W, h / H))
    ax.set_xlim(0, w)
    ax.set_ylim(0, h)
    ax.set_axis_off()
    return ax


def _save(fig, fmt: str) -> bytes:
    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else None  # reproducible SVG
    fig.savefig(buf, format=fmt, metadata=metadata)
    return buf.getvalue()


def _layers(layers, limit: int = 8) -> str:
    """``0-1-2-4``; past ``limit`` layers, runs of 3+ consecutive layers shrink: ``0..12-14``."""
    if len(layers) <= limit:
        return "-".join(str(l) for l in layers)
    runs: list[list[int]] = []
    for l in layers:
        if runs and l == runs[-1][-1] + 1:
            runs[-1].append(l)
        else:
            runs.append([l])
    parts = [f"{r[0]}..{r[-1]}" if len(r) >= 3 else "-".join(map(str, r)) for r in runs]
    return "-".join(parts)


def _arc_rad(span: float) -> float:
    """Bend of a skip arc ``span`` inches long: apex span * rad / 2, growing slowly for long arcs."""
    return 2 * min(0.35 * span / 2, 1.0 + 0.04 * span) / span


def _fill(entries: list[str], chars: int, sep: str = "   ") -> list[str]:
    """Entries on lines of at most ``chars`` characters, never breaking an entry."""
    lines: list[str] = []
    for e in entries:
        if lines and len(lines[-1]) + len(sep) + len(e) <= chars:
            lines[-1] += sep + e
        else:
            lines.append(e)
    return lines


def ear_order_lines(ov: Overview, chars: int) -> list[tuple[str, str]]:
    """deah-complete's blocks in ear order as (text, colour) lines of at most ``chars``
    characters: position, substructure, selection number, rule, owned pairs, paid debts."""
    import textwrap

    selection = {s.idx: s.position for s in ov.selected}
    lines: list[tuple[str, str]] = []
    for block in ov.plan[:60]:
        head = f"#{block.position + 1} p{block.idx}: {_layers(block.layers)} (selected #{selection[block.idx] + 1})  "
        lines += [(part, RULE_COLOURS[block.rule]) for part in textwrap.wrap(head + block_text(block), chars, subsequent_indent=" " * 4)]
    if len(ov.plan) > 60:
        lines.append((f"... and {len(ov.plan) - 60} more (all are in --format dot)", "#555555"))
    return lines


# -- overview: G^S and the chains (deah) or the ear order (deah-complete) -------------------------

def draw_overview(ov: Overview, fmt: str) -> bytes:
    from matplotlib.patches import Circle, FancyArrowPatch

    run = ov.run
    L = run.L
    chains = ov.chains[:MAX_CHAIN_ROWS]
    palette = colours(len(ov.chains))
    box_chars = max([len(f"U{k.r}  p{k.r}: {_layers(k.layers)}") for c in chains for k in c.links] or [10])
    box_w = 0.068 * box_chars + 0.25  # generous: arrows are clipped to the real boxes
    col_w = box_w + 0.5
    ncols = max([len(c.links) for c in chains] or [0])
    gap = 1.5 if L <= 12 else max(0.45, 12 * 1.5 / L)
    width = max(10.0, 1.0 + L * gap + 1.0, 1.2 + ncols * col_w + 0.4)
    apex = max([_arc_rad((b - a) * gap) * (b - a) * gap / 2 for a, b in run.pairs if b > a + 1] or [0])
    ny, header_h = 0.5, 0.8 if ov.plan else 0.6  # node line above the width labels; header band above the arcs
    gs_h = ny + 0.35 + apex + header_h
    selected = ov.selected
    entries = [f"#{s.position + 1} p{s.idx}: {_layers(s.layers)} (|U|={s.u_size})" for s in selected[:60]]
    if len(selected) > 60:
        entries.append(f"... and {len(selected) - 60} more")
    sel_lines = _fill(entries, int((width - 0.6) / 0.078))
    ear_lines = ear_order_lines(ov, int((width - 0.6) / 0.078))  # deah-complete: replaces the selection order
    if ear_lines:
        sel_lines = ear_lines
    sel_h = (0.45 + 0.2 * len(sel_lines)) if sel_lines else 0
    row_h = 0.62
    chain_h = (0.5 + row_h * len(chains) + (0.3 if len(ov.chains) > len(chains) else 0)) if chains else 0
    title_h = 1.0
    height = title_h + gs_h + 0.1 + sel_h + chain_h + 0.2
    fig = _figure(width, height)

    sizes, outcome = ov.counts()
    fig.text(0.5, 1 - 0.25 / height, run.title, ha="center", va="center", fontsize=13, weight="bold")
    fig.text(0.5, 1 - 0.55 / height, "   ".join(sizes), ha="center", va="center", fontsize=FONT + 1)
    fig.text(0.5, 1 - 0.8 / height, "   ".join(outcome), ha="center", va="center", fontsize=FONT + 1,
             color=HIGHLIGHT if run.certified else "#c0392b")

    # G^S: layers on a line, consecutive pairs straight, skips as arcs above.
    y0 = height - title_h - gs_h
    ax = _panel(fig, 0, y0, width, gs_h)
    x0 = (width - L * gap) / 2
    hot, owners = ov.highlighted, ov.owners
    rules = {b.idx: b.rule for b in ov.plan}
    r = 0.2
    for a, b in run.pairs:
        on = (a, b) in hot
        if b > a + 1 and (a, b) in owners:  # deah-complete: the owner of the skip, at the arc's apex
            owner = owners[a, b]
            top = ny + _arc_rad((b - a) * gap) * (b - a) * gap / 2
            ax.text(x0 + (a + b) / 2 * gap, top + 0.02, f"p{owner}", ha="center", va="bottom", fontsize=FONT - 2,
                    color=RULE_COLOURS[rules[owner]], zorder=3)
        ax.add_patch(FancyArrowPatch(
            (x0 + a * gap, ny), (x0 + b * gap, ny),
            connectionstyle=f"arc3,rad={-_arc_rad((b - a) * gap) if b > a + 1 else 0}",
            arrowstyle="-|>", mutation_scale=10, shrinkA=r * 72, shrinkB=r * 72,
            color=HIGHLIGHT if on else GREY, lw=1.8 if on else 1.0, ls="-" if on else (0, (4, 3)), zorder=1,
        ))
    for l, w in enumerate(run.widths):
        ax.add_patch(Circle((x0 + l * gap, ny), r, fc="white", ec=HIGHLIGHT, lw=1.2, zorder=2))
        ax.text(x0 + l * gap, ny, str(l), ha="center", va="center", fontsize=FONT + 1, weight="bold", zorder=3)
        ax.text(x0 + l * gap, ny - r - 0.08, f"w={w}", ha="center", va="top", fontsize=FONT - 1, color="#555555")
    ax.text(0.25, gs_h - 0.1, "substructure graph $G^S$", ha="left", va="top", fontsize=FONT + 1, weight="bold")
    ax.text(0.25, gs_h - 0.32, "node = layer (w = width); edge = connected layer pair", ha="left", va="top",
            fontsize=FONT - 1, color="#555555")
    if run.engine in ("deah", "deah-complete"):
        ax.plot([width - 3.1, width - 2.7], [gs_h - 0.2] * 2, color=HIGHLIGHT, lw=1.8)
        ax.text(width - 2.6, gs_h - 0.2, "on a selected substructure path", va="center", fontsize=FONT - 1)
        ax.plot([width - 3.1, width - 2.7], [gs_h - 0.42] * 2, color=GREY, lw=1.0, ls=(0, (4, 3)))
        ax.text(width - 2.6, gs_h - 0.42, "on none", va="center", fontsize=FONT - 1)
        if owners:
            ax.text(width - 3.1, gs_h - 0.64, "pN over an arc: the block owning it", va="center", fontsize=FONT - 1)
    else:
        ax.text(width - 0.25, gs_h - 0.1, f"engine {run.engine}: no substructure paths or chains stored",
                ha="right", va="top", fontsize=FONT - 1, color="#555555")

    y = y0 - 0.1
    if sel_lines:
        y -= sel_h
        ax = _panel(fig, 0, y, width, sel_h)
        if ear_lines:
            ax.text(0.25, sel_h - 0.05, "deah-complete's Step 3 in ear order: each block's rule (p_0 / ear / local), "
                    "the layer pairs it owns, the debts it pays", ha="left", va="top", fontsize=FONT + 1, weight="bold")
            for k, (line, colour) in enumerate(ear_lines):  # one text per line: each in its rule's colour
                ax.text(0.25, sel_h - 0.3 - 0.2 * k, line, ha="left", va="top", fontsize=FONT - 0.5,
                        family="monospace", color=colour)
        else:
            ax.text(0.25, sel_h - 0.05, "selected substructure paths, in selection order", ha="left", va="top",
                    fontsize=FONT + 1, weight="bold")
            ax.text(0.25, sel_h - 0.3, "\n".join(sel_lines), ha="left", va="top", fontsize=FONT - 0.5,
                    family="monospace", linespacing=1.35)
    if chains:
        y -= chain_h
        ax = _panel(fig, 0, y, width, chain_h)
        ax.text(0.25, chain_h - 0.05, "path subdivision chains: sets $U_r$ in LINK order ($U_0$ of $p_0$ last)",
                ha="left", va="top", fontsize=FONT + 1, weight="bold")
        for row, (chain, colour) in enumerate(zip(chains, palette)):
            cy = chain_h - 0.6 - row * row_h
            ax.text(0.25, cy, f"chain {chain.t}", ha="left", va="center", fontsize=FONT, weight="bold", color=colour)
            prev = None
            for k, link in enumerate(chain.links):
                cx = 1.2 + k * col_w + box_w / 2
                box = ax.text(cx, cy, f"$U_{{{link.r}}}$  p{link.r}: {_layers(link.layers)}\n|U| = {link.size}",
                              ha="center", va="center", fontsize=FONT - 0.5, linespacing=1.2,
                              bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=colour, lw=1.4))
                if prev is not None:  # from the right edge of the previous box to the left edge of this one
                    ax.annotate("", xy=(0, 0.5), xycoords=box, xytext=(1, 0.5), textcoords=prev,
                                arrowprops=dict(arrowstyle="-|>", color=colour, lw=1.6, shrinkA=6, shrinkB=6))
                prev = box
        if len(ov.chains) > len(chains):
            ax.text(0.25, 0.15, f"... and {len(ov.chains) - len(chains)} more chains (all are in --format dot)",
                    fontsize=FONT, color="#555555")
    return _save(fig, fmt)


# -- neuron level: every weight, one path and its certificate ------------------------------------

def draw_path(pv: PathView, fmt: str) -> bytes:
    from matplotlib.lines import Line2D
    from matplotlib.path import Path as MPath
    from matplotlib.patches import PathPatch

    run, path = pv.run, pv.path
    gap_x, gap_y = 1.5, 0.5
    wmax = max(run.widths)
    bulge_max = max([0.3 + 0.25 * (b - a - 1) for a, b in run.pairs if b > a + 1] or [0])
    plot_w = run.L * gap_x + 1.0
    plot_h = (wmax - 1) * gap_y + bulge_max + 1.1
    legend_w = 3.6
    title_lines = 3 if pv.equation() else 2
    title_h = 0.3 + 0.27 * title_lines
    width, height = max(8.0, plot_w + legend_w + 0.4), plot_h + title_h + 0.2
    fig = _figure(width, height)
    ax = _panel(fig, 0.2, 0.1, plot_w, plot_h)

    def pos(l: int, i: int) -> tuple[float, float]:
        return 0.5 + l * gap_x, 0.45 + ((wmax - 1) / 2 - (i - (run.widths[l] - 1) / 2)) * gap_y

    def curve(a, i, b, j, shift=0.0) -> MPath:
        (xa, ya), (xb, yb) = pos(a, i), pos(b, j)
        ya, yb = ya + shift, yb + shift
        if b == a + 1:
            return MPath([(xa, ya), (xb, yb)])
        lift = 0.3 + 0.25 * (b - a - 1)
        ctrl = ((xa + xb) / 2, max(ya, yb) + 2 * lift)  # apex of the quadratic = midpoint + lift
        return MPath([(xa, ya), ctrl, (xb, yb)], [MPath.MOVETO, MPath.CURVE3, MPath.CURVE3])

    def draw(p: StoredPath, **style) -> None:
        shift = style.pop("shift", 0.0)
        for (la, ia), (lb, ib) in p.hops():
            ax.add_patch(PathPatch(curve(la, ia, lb, ib, shift), fc="none", capstyle="round", **style))

    for a, b in run.pairs:
        for i in range(run.widths[a]):
            for j in range(run.widths[b]):
                ax.add_patch(PathPatch(curve(a, i, b, j), fc="none", ec=GREY, lw=0.5, alpha=0.8, zorder=1))

    handles = [Line2D([], [], color=GREY, lw=0.8, label=f"weight (m = {run.m})")]
    cert = pv.certificate or ()
    if cert:
        draw(path, ec=HALO, lw=10, alpha=0.7, zorder=2)
        handles.append(Line2D([], [], color=HALO, lw=8, alpha=0.7, label=f"#{path.id} {path.text}\n(discarded)"))
        cols = colours(len(cert))
        for k, ((coef, kept), colour) in enumerate(zip(cert, cols)):
            draw(kept, ec=colour, lw=2.0, zorder=3, shift=(k - (len(cert) - 1) / 2) * 0.045)
            handles.append(Line2D([], [], color=colour, lw=2.0, label=f"{coef:+d} x kept #{kept.id} {kept.text}"))
    else:
        draw(path, ec=HIGHLIGHT, lw=3.2, zorder=3)
        handles.append(Line2D([], [], color=HIGHLIGHT, lw=3.2, label=f"#{path.id} {path.text}\n({path.status})"))
        if pv.certificate is not None:
            note = "kept: in the basis, no certificate" if path.kept else "no certificate stored"
            handles.append(Line2D([], [], color="none", label=note))

    on_path = set(zip(path.layers, path.indices))
    for l, w in enumerate(run.widths):
        x, _ = pos(l, 0)
        ax.text(x, plot_h - 0.12, f"layer {l}", ha="center", va="top", fontsize=FONT, weight="bold")
        for i in range(w):
            px, py = pos(l, i)
            hit = (l, i) in on_path
            ax.scatter([px], [py], s=190, c=HALO if hit else "white", edgecolors=HIGHLIGHT, linewidths=1.0, zorder=4)
            ax.text(px, py, str(i), ha="center", va="center", fontsize=FONT - 2, zorder=5)

    leg = fig.legend(handles=handles, loc="upper left", bbox_to_anchor=((plot_w + 0.4) / width, (plot_h + 0.1) / height),
                     fontsize=FONT - 0.5, frameon=False, handlelength=2.2, labelspacing=0.8,
                     title="circle = neuron, number = its index in the layer" + ("\npath = sum of coef x kept path" if cert else ""),
                     title_fontsize=FONT, alignment="left")
    leg.set_zorder(6)
    top = height - 0.3
    fig.text(0.5, top / height, run.title, ha="center", va="center", fontsize=12, weight="bold")
    fig.text(0.5, (top - 0.27) / height, f"path #{path.id} {path.text}: {path.status}", ha="center", va="center", fontsize=FONT + 1)
    if pv.equation():
        fig.text(0.5, (top - 0.54) / height, f"certificate (CERTIFIED_BY coef): {pv.equation()}",
                 ha="center", va="center", fontsize=FONT + 1)
    return _save(fig, fmt)


# -- a general network at layer level ------------------------------------------------------------

def draw_general(ov: GeneralOverview, fmt: str) -> bytes:
    """Layers on a line in spec order (name, size, kept paths), connections between consecutive
    layers straight and the others as arcs above, labelled with kind and taps; identity dashed."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    n = len(ov.layers)
    gap = max(1.3, 0.085 * max(len(l.name) for l in ov.layers) + 0.5)
    width = max(10.0, 1.0 + (n - 1) * gap + 1.0)
    spans = [(e.target - e.source) * gap for e in ov.edges if e.target > e.source + 1]
    apex = max([_arc_rad(s) * s / 2 for s in spans] or [0])
    ny, title_h = 0.9, 1.0
    plot_h = ny + 0.45 + apex + 0.6
    height = title_h + plot_h + 0.5
    fig = _figure(width, height)
    fig.text(0.5, 1 - 0.25 / height, ov.title, ha="center", va="center", fontsize=13, weight="bold")
    fig.text(0.5, 1 - 0.6 / height, "   ".join(ov.counts()), ha="center", va="center", fontsize=FONT + 1,
             color=HIGHLIGHT if ov.certified else "#c0392b")
    ax = _panel(fig, 0, 0.5, width, plot_h)
    x0 = (width - (n - 1) * gap) / 2
    bw, bh = min(gap - 0.25, 1.2), 0.5
    for e in ov.edges:
        span = (e.target - e.source) * gap
        rad = -_arc_rad(span) if e.target > e.source + 1 else 0
        colour = KIND_COLOURS[e.kind]
        ax.add_patch(FancyArrowPatch(
            (x0 + e.source * gap, ny + bh / 2), (x0 + e.target * gap, ny + bh / 2),
            connectionstyle=f"arc3,rad={rad}", arrowstyle="-|>", mutation_scale=10, shrinkA=8, shrinkB=8,
            color=colour, lw=1.3, ls=(0, (4, 3)) if e.kind == "identity" else "-", zorder=1,
        ))
        top = ny + bh / 2 + (_arc_rad(span) * span / 2 if rad else 0)
        ax.text(x0 + (e.source + e.target) / 2 * gap, top + 0.03, e.label, ha="center", va="bottom",
                fontsize=FONT - 2, color=colour, zorder=3)
    for l in ov.layers:
        x = x0 + l.position * gap
        ax.add_patch(FancyBboxPatch((x - bw / 2, ny), bw, bh, boxstyle="round,pad=0.02", fc="white", ec=HIGHLIGHT,
                                    lw=2.6 if l.core else 1.1, zorder=2))  # a DEAH run's core: thick border
        ax.text(x, ny + bh / 2, l.name, ha="center", va="center", fontsize=FONT - 1, weight="bold", zorder=3)
        ax.text(x, ny - 0.08, f"size {l.size}\n{l.kept} kept", ha="center", va="top", fontsize=FONT - 2, color="#555555")
    handles = [Line2D([], [], color=KIND_COLOURS[k], lw=1.3, ls=(0, (4, 3)) if k == "identity" else "-", label=k)
               for k in ("dense", "grouped", "diagonal", "identity") if any(e.kind == k for e in ov.edges)]
    fig.legend(handles=handles, loc="lower right", fontsize=FONT - 1, frameon=False,
               title="connections (label: kind x taps)", title_fontsize=FONT - 1)
    return _save(fig, fmt)
