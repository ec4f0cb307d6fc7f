"""Distinct colours as ``#rrggbb`` strings, shared by the DOT and matplotlib pictures."""

from __future__ import annotations

import colorsys

__all__ = ["colours", "GREY", "HIGHLIGHT", "RULE_COLOURS", "KIND_COLOURS"]

# matplotlib's tab10 without its grey (grey is for plain weights and unused edges).
_BASE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
GREY = "#b0b0b0"
HIGHLIGHT = "#111111"
# deah-complete's rules, one colour each (tab10's green, blue and red).
RULE_COLOURS = {"p0": "#2ca02c", "ear": "#1f77b4", "local": "#d62728"}
# A general network's connection kinds (show of a general run): identity shortcuts stand out.
KIND_COLOURS = {"dense": HIGHLIGHT, "grouped": "#1f77b4", "diagonal": "#9467bd", "identity": "#ff7f0e"}


def colours(n: int) -> list[str]:
    """``n`` distinct colours: tab10 first, then evenly spread hues (no two equal)."""
    if n <= len(_BASE):
        return list(_BASE[:n])
    out: list[str] = []
    seen: set[str] = set()
    for k in range(n):
        # dark enough for text on white whatever the hue (HSV yellow would be unreadable)
        r, g, b = colorsys.hls_to_rgb(k / n, 0.36 if k % 2 else 0.44, 0.85)
        rgb = [round(r * 255), round(g * 255), round(b * 255)]
        while "#{:02x}{:02x}{:02x}".format(*rgb) in seen:  # only for thousands of colours
            rgb = [(c + 1) % 256 for c in rgb[:2]] + [(rgb[2] + 7) % 256]
        out.append("#{:02x}{:02x}{:02x}".format(*rgb))
        seen.add(out[-1])
    return out
