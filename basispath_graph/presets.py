"""Named architecture families: a network spec from a depth and a width.

A preset has depth D (= L, the number of consecutive layer pairs, so D + 1 layers), hidden
width W, input width N (default W) and output width K (default W)::

    widths = [N] + [W] * (D - 1) + [K]

and its family decides the skips:

========== ==================================================================================
mlp        no skips
resnet     ResNet-style skips of span 2 from every layer: (a, a+2) for all a with a+2 <= D
densenet   DenseNet-style: every layer feeds every later one: all (a, b) with b >= a+2
unet       U-Net-style mirrored long skips (i, D-i) for 0 <= i < D/2 with D-i >= i+2
stride     skips of a custom span S >= 2 from every layer: (a, a+S) for all a with a+S <= D
========== ==================================================================================

>>> preset_spec("resnet", 4, 3)
{'name': 'resnet-4x3', 'widths': [3, 3, 3, 3, 3], 'skips': [[0, 2], [1, 3], [2, 4]]}
>>> preset_spec("unet", 5, 8, in_width=2, out_width=1)["skips"]
[[0, 5], [1, 4]]
>>> preset_network("densenet", 8, 128).m
589824

Every problem raises :class:`PresetError` (a ValueError) with a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import BadInput
from .network import Network
from .values import is_int
from .spec import DEFAULT_MAX_WEIGHTS, MAX_WEIGHTS_ENV, MAX_WIDTHS, parse_spec, resolve_max_weights

__all__ = [
    "FAMILIES",
    "Family",
    "PresetError",
    "preset_spec",
    "preset_network",
    "weight_count",
]


class PresetError(BadInput):
    """Bad preset arguments; str() is one line."""


@dataclass(frozen=True)
class Family:
    name: str
    description: str
    skips: Callable[[int, int | None], list[tuple[int, int]]]  # (depth, stride) -> skips
    uses_stride: bool = False


def _mlp(D: int, S: int | None) -> list[tuple[int, int]]:
    return []


def _resnet(D: int, S: int | None) -> list[tuple[int, int]]:
    return [(a, a + 2) for a in range(D - 1)]


def _densenet(D: int, S: int | None) -> list[tuple[int, int]]:
    return [(a, b) for a in range(D + 1) for b in range(a + 2, D + 1)]


def _unet(D: int, S: int | None) -> list[tuple[int, int]]:
    return [(i, D - i) for i in range(D) if 2 * i < D and D - i >= i + 2]


def _stride(D: int, S: int | None) -> list[tuple[int, int]]:
    return [(a, a + S) for a in range(D + 1 - S)]


#: The families, in the order ``basispath presets`` lists them.
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("mlp", "plain multilayer perceptron: no skips", _mlp),
        Family("resnet", "ResNet-style: a skip of span 2 from every layer, (a, a+2)", _resnet),
        Family("densenet", "DenseNet-style: every layer feeds every later layer, all (a, b) with b >= a+2", _densenet),
        Family("unet", "U-Net-style mirrored long skips (i, D-i), outermost first", _unet),
        Family("stride", "skips of a custom span S >= 2 from every layer, (a, a+S); needs --stride", _stride, True),
    )
}


def _check_int(what: str, value: object, least: int) -> int:
    if not is_int(value) or int(value) < least:
        shown = repr(value) if not is_int(value) else str(int(value))
        raise PresetError(f"{what} must be an integer >= {least}, got {shown}")
    return int(value)


def preset_spec(
    name: str,
    depth: int,
    width: int,
    *,
    in_width: int | None = None,
    out_width: int | None = None,
    stride: int | None = None,
) -> dict:
    """The spec dict (``name``, ``widths``, ``skips``) of a preset; see the module docstring.

    The network is named ``<family>-<depth>x<width>`` (``stride3-8x16`` for the stride
    family), with ``-in<N>`` / ``-out<K>`` appended when those differ from the width.
    """
    family = FAMILIES.get(name) if isinstance(name, str) else None
    if family is None:
        raise PresetError(f"unknown preset {name!r}; known presets: {', '.join(FAMILIES)}")
    D = _check_int("depth", depth, 1)
    if D > MAX_WIDTHS - 1:
        raise PresetError(f"depth must be at most {MAX_WIDTHS - 1} (a spec has at most {MAX_WIDTHS} layers), got {D}")
    W = _check_int("width", width, 1)
    N = W if in_width is None else _check_int("in width", in_width, 1)
    K = W if out_width is None else _check_int("out width", out_width, 1)
    if family.uses_stride:
        if stride is None:
            raise PresetError(f"preset {family.name!r} needs a stride: an integer >= 2 (--stride)")
        S = _check_int("stride", stride, 2)
        if S > D:
            raise PresetError(f"stride {S} is larger than depth {D}: no skip would fit")
        label = f"stride{S}"
    else:
        if stride is not None:
            raise PresetError(f"a stride applies only to preset 'stride', not {family.name!r}")
        S = None
        label = family.name
    net_name = f"{label}-{D}x{W}"
    if N != W:
        net_name += f"-in{N}"
    if K != W:
        net_name += f"-out{K}"
    widths = [N] + [W] * (D - 1) + [K]
    skips = sorted(set(family.skips(D, S)))
    return {"name": net_name, "widths": widths, "skips": [[a, b] for a, b in skips]}


def weight_count(spec: dict) -> int:
    """m of a spec dict (Python ints, consecutive pairs included, duplicates merged)."""
    w = spec["widths"]
    pairs = {(l, l + 1) for l in range(len(w) - 1)} | {(int(a), int(b)) for a, b in spec.get("skips") or []}
    return sum(w[a] * w[b] for a, b in pairs)


def preset_network(
    name: str,
    depth: int,
    width: int,
    *,
    in_width: int | None = None,
    out_width: int | None = None,
    stride: int | None = None,
    max_weights: int | None = DEFAULT_MAX_WEIGHTS,
) -> Network:
    """The :class:`Network` of a preset, refused (PresetError) above ``max_weights`` weights
    (None: $BASISPATH_MAX_WEIGHTS, else 50,000,000 -- as :func:`spec.resolve_max_weights`)."""
    spec = preset_spec(name, depth, width, in_width=in_width, out_width=out_width, stride=stride)
    limit = resolve_max_weights(max_weights)
    m = weight_count(spec)
    if m > limit:
        raise PresetError(
            f"{spec['name']}: network has {m} weights, more than the limit of {limit}"
            f" (raise it with max_weights or {MAX_WEIGHTS_ENV})"
        )
    # Through the spec checker, so a preset is exactly what loading its written spec gives.
    return parse_spec(spec, spec["name"], limit)
