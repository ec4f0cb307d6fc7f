"""Freed memory handed back to the operating system between the stages of a solve.

numpy arrays under glibc's mmap threshold (which rises to 32 MB once a bigger array is freed)
come from the heap, and a heap that chunked stages filled with arrays of many sizes keeps its
freed pages: whole ResNet-50 by faithful deah held 2.51 GB of resident memory when its final
certification started, most of it free heap, and that certification's peak came on top of it.
``malloc_trim`` returns every free page (not only the top of the heap). Elsewhere than glibc it
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["release_free_memory"]


def _malloc_trim():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl)
        return None


_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Hand the heap's free pages back to the system (a few milliseconds)."""
    if _TRIM is not None:
        _TRIM(0)
