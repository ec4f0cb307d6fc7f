"""``basispath show``: pictures of a stored run.

- :mod:`.model` reads what is drawn from the store (``cypher/queries/show_*.cypher``);
- :mod:`.dot` writes Graphviz DOT text, :mod:`.draw` PNG/SVG with matplotlib;
- :mod:`.output` writes the result atomically.
"""

from __future__ import annotations

from .model import Overview, PathView, ShowError, load_overview, load_path_view

__all__ = ["FORMATS", "ShowError", "load_overview", "load_path_view", "render"]

FORMATS = ("dot", "png", "svg")


def render(view: Overview | PathView, fmt: str) -> bytes:
    """The picture of ``view`` (an overview or a neuron-level path view) as ``fmt`` bytes."""
    if fmt == "dot":
        from .dot import overview_dot, path_dot

        text = overview_dot(view) if isinstance(view, Overview) else path_dot(view)
        return text.encode("utf-8")
    if fmt in ("png", "svg"):
        from .draw import draw_overview, draw_path

        return draw_overview(view, fmt) if isinstance(view, Overview) else draw_path(view, fmt)
    raise ValueError(f"unknown format {fmt!r}")
