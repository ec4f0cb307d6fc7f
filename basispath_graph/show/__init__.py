"""``basispath show``: pictures of a stored run.

- :mod:`.model` reads what is drawn from the store (``cypher/queries/show_*.cypher``), and
  :mod:`.general_model` what is drawn of a general run (layers, connections);
- :mod:`.dot` writes Graphviz DOT text, :mod:`.draw` PNG/SVG with matplotlib;
- :mod:`.output` writes the result atomically.
"""

from __future__ import annotations

from .general_model import GeneralOverview
from .model import Overview, PathView, ShowError, load_overview, load_path_view

__all__ = ["FORMATS", "ShowError", "load_overview", "load_path_view", "render"]

FORMATS = ("dot", "png", "svg")


def render(view: Overview | PathView | GeneralOverview, fmt: str) -> bytes:
    """The picture of ``view`` (an overview, a neuron-level path view, or a general run at
    layer level) as ``fmt`` bytes."""
    if fmt == "dot":
        from .dot import general_dot, overview_dot, path_dot

        if isinstance(view, GeneralOverview):
            return general_dot(view).encode("utf-8")
        text = overview_dot(view) if isinstance(view, Overview) else path_dot(view)
        return text.encode("utf-8")
    if fmt in ("png", "svg"):
        from .draw import draw_general, draw_overview, draw_path

        if isinstance(view, GeneralOverview):
            return draw_general(view, fmt)
        return draw_overview(view, fmt) if isinstance(view, Overview) else draw_path(view, fmt)
    raise ValueError(f"unknown format {fmt!r}")
