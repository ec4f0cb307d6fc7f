"""Graphviz DOT text for both pictures, written by hand (no Graphviz needed to produce it).

Layout of the overview, so scripts can read it back: one ``L<l> [...]`` node line per layer,
one ``L<a> -> L<b> [...]`` edge line per connected layer pair (``class="gs selected"`` when the
pair belongs to a selected substructure path), one ``p<idx>`` node per selected substructure
path, and chain t as ``p<r> -> p<r'>`` edges with ``class="chain<t>"`` in the chain's colour.
A deah-complete run has no chains: its layer-pair edges are labelled with their owner ``p<idx>``,
and its ``p<idx>`` nodes are linked in the ear order (``class="ear-order"``), each node saying
its rule (``class="p0"``, ``"ear"`` or ``"local"``), the pairs it owns and the debts it pays.

A general run (``general_dot``) is drawn at layer level: one ``L<position>`` node per layer (name,
size, kept paths through it), one ``L<a> -> L<b>`` edge per connection labelled with its kind and
taps (``class="dense"``, ``"diagonal"`` or ``"identity"``; identity edges dashed, in their colour).
"""

from __future__ import annotations

from html import escape

from .general_model import GeneralOverview
from .model import Overview, PathView, block_text
from .palette import GREY, HIGHLIGHT, KIND_COLOURS, RULE_COLOURS, colours

__all__ = ["overview_dot", "path_dot", "general_dot"]


def _q(text: str) -> str:
    """A DOT quoted string; a newline in ``text`` becomes a centred line break."""
    body = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{body}"'


def _attrs(**kw) -> str:
    parts = []
    for k, v in kw.items():
        if isinstance(v, str) and v.startswith("<") and v.endswith(">"):
            parts.append(f"{k}={v}")  # HTML-like label
        elif isinstance(v, (int, float)):
            parts.append(f"{k}={v}")
        else:
            parts.append(f"{k}={_q(v)}")
    return "[" + ", ".join(parts) + "]"


def _layers(layers) -> str:
    return "-".join(str(l) for l in layers)


def _legend(rows: list[tuple[str, str]]) -> str:
    """An HTML-like table label: (colour, text) rows."""
    cells = "".join(f'<TR><TD ALIGN="LEFT"><FONT COLOR="{c}">{escape(t)}</FONT></TD></TR>' for c, t in rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2">{cells}</TABLE>>'


def overview_dot(ov: Overview) -> str:
    run = ov.run
    sizes, outcome = ov.counts()
    title = "\n".join([run.title, ", ".join(sizes), ", ".join(outcome)])
    lines = [
        f"// basispath show {run.id}: the substructure graph G^S and {'the ear order' if ov.plan else 'the path subdivision chains'}",
        f"digraph {_q('basispath_' + run.id)} {{",
        f"  graph {_attrs(label=title, labelloc='t', fontname='Helvetica', rankdir='LR', newrank='true', compound='true')};",
        f"  node {_attrs(fontname='Helvetica', fontsize=11)};",
        f"  edge {_attrs(fontname='Helvetica', fontsize=9)};",
        "  subgraph cluster_gs {",
        f"    graph {_attrs(label='G^S: one node per layer, one edge per connected layer pair', style='rounded', color=GREY)};",
        f"    node {_attrs(shape='circle', width=0.6, fixedsize='true')};",
    ]
    for l, w in enumerate(run.widths):
        label = f"{l}\nw={w}"
        lines.append(f"    L{l} {_attrs(label=label, tooltip=f'layer {l}, {w} neurons')};")
    hot, owners = ov.highlighted, ov.owners
    for a, b in run.pairs:
        if (a, b) in owners:  # deah-complete: the block that brought the pair
            style = _attrs(color=HIGHLIGHT, penwidth=2.5, label=f"p{owners[a, b]}", **{"class": "gs selected"})
        elif (a, b) in hot:
            style = _attrs(color=HIGHLIGHT, penwidth=2.5, **{"class": "gs selected"})
        else:
            style = _attrs(color=GREY, style="dashed", **{"class": "gs"})
        lines.append(f"    L{a} -> L{b} {style};")
    lines.append("  }")

    legend: list[tuple[str, str]] = []
    if run.engine in ("deah", "deah-complete"):
        legend.append((HIGHLIGHT, "bold: edge of a selected substructure path; dashed: of none"))
    if ov.plan:
        lines += _ear_order(ov, legend)
    elif ov.selected:
        palette = colours(len(ov.chains))
        lines += [
            "  subgraph cluster_chains {",
            f"    graph {_attrs(label='selected substructure paths p_r and the chains of their sets U_r (U_0 last)', style='rounded', color=GREY)};",
            f"    node {_attrs(shape='box', style='rounded', fontsize=10)};",
        ]
        for s in ov.selected:
            label = f"p{s.idx}: {_layers(s.layers)}\n|U{s.idx}| = {s.u_size}, selected #{s.position + 1}"
            lines.append(f"    p{s.idx} {_attrs(label=label)};")
        for chain, colour in zip(ov.chains, palette):
            for x, y in zip(chain.links, chain.links[1:]):
                lines.append(
                    f"    p{x.r} -> p{y.r} {_attrs(color=colour, fontcolor=colour, penwidth=2, label=str(chain.t), **{'class': f'chain{chain.t}'})};"
                )
            legend.append((colour, f"chain {chain.t}: " + " -> ".join(f"U{k.r}" for k in chain.links)))
        lines.append("  }")
    elif run.engine not in ("deah", "deah-complete"):
        legend.append((HIGHLIGHT, f"engine {run.engine}: no substructure paths or chains stored"))
    lines.append(f"  legend {_attrs(shape='plaintext', label=_legend(legend))};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _ear_order(ov: Overview, legend: list[tuple[str, str]]) -> list[str]:
    """deah-complete's Step 3: the blocks in ear order, each with its rule, owned pairs, debts."""
    lines = [
        "  subgraph cluster_ear_order {",
        f"    graph {_attrs(label='deah-complete: the selected substructure paths in ear order (p_0 first), each with its rule', style='rounded', color=GREY)};",
        f"    node {_attrs(shape='box', style='rounded', fontsize=10)};",
    ]
    selection = {s.idx: s.position for s in ov.selected}
    for block in ov.plan:
        colour = RULE_COLOURS[block.rule]
        label = f"p{block.idx}: {_layers(block.layers)}\n#{block.position + 1} in ear order, selected #{selection[block.idx] + 1}\n{block_text(block)}"
        lines.append(f"    p{block.idx} {_attrs(label=label, color=colour, fontcolor=colour, **{'class': block.rule})};")
    for x, y in zip(ov.plan, ov.plan[1:]):
        lines.append(f"    p{x.idx} -> p{y.idx} {_attrs(color=GREY, **{'class': 'ear-order'})};")
    lines.append("  }")
    legend.append((HIGHLIGHT, "ear order: " + " -> ".join(f"p{b.idx}" for b in ov.plan)))
    legend.append((HIGHLIGHT, "edge label p<idx>: the block that owns the layer pair (brought it first)"))
    for block in ov.plan[1:]:
        legend.append((RULE_COLOURS[block.rule], f"p{block.idx} {block_text(block)}"))
    return lines


def path_dot(pv: PathView) -> str:
    run, path = pv.run, pv.path
    offsets = run.offsets()

    def nid(layer: int, index: int) -> str:
        return f"n{offsets[layer] + index}"

    title = f"{run.title}\npath #{path.id} {path.text}: {path.status}"
    if pv.equation():
        title += f"\ncertificate (CERTIFIED_BY coef): {pv.equation()}"
    lines = [
        f"// basispath show {run.id} --path {path.id}: every neuron and weight, one path highlighted",
        f"digraph {_q(f'basispath_{run.id}_path_{path.id}')} {{",
        f"  graph {_attrs(label=title, labelloc='t', fontname='Helvetica', rankdir='LR', newrank='true', nodesep=0.15, ranksep=1.2)};",
        f"  node {_attrs(shape='circle', width=0.35, fixedsize='true', fontname='Helvetica', fontsize=8)};",
        f"  edge {_attrs(arrowhead='none')};",
    ]
    on_path = {(l, i) for l, i in zip(path.layers, path.indices)}
    for l, w in enumerate(run.widths):
        lines.append(f"  subgraph cluster_l{l} {{")
        lines.append(f"    graph {_attrs(label=f'layer {l}', rank='same', color=GREY, fontname='Helvetica')};")
        for i in range(w):
            extra = {"style": "filled", "fillcolor": "#ffe08a"} if (l, i) in on_path else {}
            lines.append(f"    {nid(l, i)} {_attrs(label=f'{l}:{i}', **extra)};")
        lines.append("  }")
    for a, b in run.pairs:
        for i in range(run.widths[a]):
            for j in range(run.widths[b]):
                lines.append(f"  {nid(a, i)} -> {nid(b, j)} {_attrs(color=GREY, penwidth=0.5, **{'class': 'weight'})};")
    legend = [(HIGHLIGHT, f"path #{path.id} {path.text}: {path.status}")]
    overlay = {"constraint": "false"}
    for (la, ia), (lb, ib) in path.hops():
        lines.append(f"  {nid(la, ia)} -> {nid(lb, ib)} {_attrs(color=HIGHLIGHT, penwidth=3, **overlay, **{'class': 'path'})};")
    if pv.certificate is not None:
        if path.kept:
            legend.append((GREY, "kept path: in the basis, no certificate"))
        elif not pv.certificate:
            legend.append((GREY, "no certificate stored for this path"))
        for (coef, kept), colour in zip(pv.certificate, colours(len(pv.certificate))):
            for (la, ia), (lb, ib) in kept.hops():
                lines.append(
                    f"  {nid(la, ia)} -> {nid(lb, ib)} {_attrs(color=colour, penwidth=2, **overlay, **{'class': f'cert{kept.id}'})};"
                )
            legend.append((colour, f"{coef:+d} x kept #{kept.id} {kept.text}"))
    lines.append(f"  legend {_attrs(shape='plaintext', label=_legend(legend))};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def general_dot(ov: GeneralOverview) -> str:
    """A general run at layer level: layers, connections by kind and taps, kept paths per layer."""
    title = "\n".join([ov.title, ", ".join(ov.counts())])
    lines = [
        f"// basispath show {ov.id}: a general network at layer level (one node per layer, one edge per connection)",
        f"digraph {_q('basispath_' + ov.id)} {{",
        f"  graph {_attrs(label=title, labelloc='t', fontname='Helvetica', rankdir='LR')};",
        f"  node {_attrs(fontname='Helvetica', fontsize=11, shape='box', style='rounded')};",
        f"  edge {_attrs(fontname='Helvetica', fontsize=9)};",
    ]
    for l in ov.layers:
        label = f"{l.name}\nsize {l.size}\n{l.kept} kept paths"
        core = {"peripheries": 2} if l.core else {}  # a layer of a DEAH run's core: double border
        tip = f"layer {l.position}: {l.name}, {l.size} neurons" + (", core" if l.core else "")
        lines.append(f"  L{l.position} {_attrs(label=label, tooltip=tip, **core)};")
    for e in ov.edges:
        style = {"style": "dashed"} if e.kind == "identity" else {}
        colour = KIND_COLOURS[e.kind]
        lines.append(f"  L{e.source} -> L{e.target} {_attrs(label=e.label, color=colour, fontcolor=colour, **style, **{'class': e.kind})};")
    legend = [(KIND_COLOURS[k], text) for k, text in (
        ("dense", "dense xT: every neuron to every neuron, T taps each"),
        ("grouped", "grouped xT: every neuron to every neuron of its group, T taps each"),
        ("diagonal", "diagonal xT: neuron i to neuron i, T taps each"),
        ("identity", "identity (dashed): neuron i to neuron i, weight fixed at 1"),
    ) if any(e.kind == k for e in ov.edges)]
    if any(l.core for l in ov.layers):
        legend.append(("#000000", "double border: the core the DEAH engine solved (its substructure paths)"))
    lines.append(f"  legend {_attrs(shape='plaintext', style='', label=_legend(legend))};")
    lines.append("}")
    return "\n".join(lines) + "\n"
