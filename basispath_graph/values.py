"""Values shown in one-line messages, in JSON terms (``widths[1] must be ..., got 0``).

Every refusal names the offending value the way the user wrote it; these helpers keep the
message one short line whatever the value is (a huge integer, a long string, a nested list).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping

__all__ = ["is_int", "show_int", "show_value"]



def is_int(v: object) -> bool:
    """Integers only: not bool, not floats such as 3.0 (numpy integers are fine)."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def show_int(n: int) -> str:
    """An integer for a message; huge ones as a power of two (str() of those is slow or refused)."""
    if abs(n) < 10**30:
        return str(n)
    if n < 0:
        return f"at most -2^{(-n).bit_length() - 1}"
    return f"at least 2^{n.bit_length() - 1}"


def show_value(v: object) -> str:
    """A short, one-line description of a value in JSON terms."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if is_int(v):
        return show_int(int(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        s = json.dumps(v[:40])
        return s[:-1] + '..."' if len(v) > 40 else s
    if isinstance(v, (list, tuple)):
        n = len(v)
        return "an empty list" if n == 0 else f"a list of {n} item{'s' if n != 1 else ''}"
    if isinstance(v, Mapping):
        return "a mapping"
    if isinstance(v, numbers.Real):
        try:
            return repr(float(v))
        except (OverflowError, ValueError):
            pass
    return f"a value of type {type(v).__name__}"

