"""Writing output files atomically: a temporary file in the same folder, fsync, rename.

Readers (and a user whose run fails halfway) see the old file or the whole new one, never a
partial file. The result gets the usual permissions (0666 minus the umask), not mkstemp's 0600.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path, data: bytes | str | Iterable[str]) -> None:
    """Write ``data`` (bytes, text, or text in pieces: a file too big to hold is streamed) to
    ``path`` atomically."""
    path = Path(path).expanduser()
    directory = path.parent if str(path.parent) else Path(".")
    pieces = [data] if isinstance(data, (str, bytes)) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in pieces:
                f.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
