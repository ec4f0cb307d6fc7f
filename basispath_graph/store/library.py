"""The Cypher query library: named query files under ``cypher/``.

``cypher/queries/NAME.cypher`` serves both backends; ``cypher/<backend>/NAME.cypher`` overrides it
for one backend where the dialects differ (LadybugDB's COPY bulk loads, schema DDL). A file may
hold several statements separated by ``;`` at the end of a line; ``//`` comment lines are kept out
of the statements.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = ["QueryLibrary", "cypher_dir", "shared_query_file"]


def cypher_dir() -> Path:
    """The query folder: $BASISPATH_CYPHER_DIR, the installed package's copy, or the checkout's.

    A wheel or sdist install carries the library as ``basispath_graph/cypher`` (setup.py copies the
    top-level cypher/ in at build time; there is no committed copy in the package). An editable
    install or a bare checkout has no such copy and reads the repo's top-level ``cypher/``.
    """
    env = os.environ.get("BASISPATH_CYPHER_DIR")
    if env:
        return Path(env)
    candidates = []
    packaged = resources.files("basispath_graph") / "cypher"
    if isinstance(packaged, Path):  # an unpacked install; a zip import could not be read as files
        candidates.append(packaged)
    candidates.append(Path(__file__).resolve().parents[2] / "cypher")  # checkout / editable install
    for candidate in candidates:
        if (candidate / "queries").is_dir():
            return candidate
    raise FileNotFoundError(
        "cypher/ query library not found (looked in "
        + ", ".join(str(c) for c in candidates)
        + "); reinstall basispath-graph or set BASISPATH_CYPHER_DIR"
    )


def shared_query_file(name: str) -> Path | None:
    """``cypher/queries/NAME.cypher`` of the library (NAME may end in ``.cypher``), or None when
    NAME is not a bare query name or the library has no such file. What ``basispath query --file
    NAME`` reads when NAME is not a file: installed wheels carry the library as package data."""
    stem = name[: -len(".cypher")] if name.endswith(".cypher") else name
    if not re.fullmatch(r"[A-Za-z0-9_]+", stem):  # a bare name: nothing like ../ gets out of queries/
        return None
    try:
        path = cypher_dir() / "queries" / f"{stem}.cypher"
    except FileNotFoundError:  # no library at all: the name names nothing
        return None
    return path if path.is_file() else None


def split_statements(text: str) -> list[str]:
    """Statements of a query file, comments removed."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return [s.strip() for s in body.split(";\n") if s.strip().rstrip(";").strip()]


class QueryLibrary:
    def __init__(self, backend: str, root: Path | None = None):
        self.backend = backend
        self.root = root or cypher_dir()

    def path(self, name: str, shared_only: bool = False) -> Path:
        override = self.root / self.backend / f"{name}.cypher"
        if override.exists() and not shared_only:
            return override
        shared = self.root / "queries" / f"{name}.cypher"
        if shared.exists():
            return shared
        raise KeyError(f"no query named {name!r} in {self.root}")

    def statements(self, name: str, shared_only: bool = False) -> list[str]:
        """The statements of query ``name``; ``shared_only`` skips this backend's override."""
        return _load(self.path(name, shared_only))


@lru_cache(maxsize=None)
def _load(path: Path) -> list[str]:
    return [s.rstrip(";").strip() for s in split_statements(path.read_text(encoding="utf-8"))]
