"""Writing a picture: atomically to a file (temporary file + rename), or to stdout."""

from __future__ import annotations

import sys

from ..fileio import write_atomic

__all__ = ["write_atomic", "write_stdout"]


def write_stdout(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
