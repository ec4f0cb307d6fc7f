"""Writing a picture: atomically to a file (temporary file + rename), or to stdout."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__all__ = ["write_atomic", "write_stdout"]


def write_atomic(path: Path, data: bytes) -> None:
    """Readers see the old file or the whole new one, never a partial picture."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_stdout(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
