"""The exceptions basispath raises on purpose: one root, one subclass per kind of trouble.

Catch :class:`BasispathError` to catch everything the package refuses or cannot do, or a
subclass for one kind. Every message is one line. The CLI turns each kind into one exit code
(``cli/common.exit_code``): that table is the only place the mapping lives.

========================= ======================================================== =====
class                     raised when                                              exit
========================= ======================================================== =====
:class:`BadInput`         a spec, preset, path, parameter or file is not valid      2
:class:`LimitExceeded`    the work would exceed a size, memory or time limit        2
:class:`StoreError`       a store operation was refused (unknown run, bad query)    2
:class:`StoreUnavailable` the Neo4j server is unreachable or refused the login      3
                          (Python ``open_store``: no store at the path)
:class:`StoreLocked`      another process holds the embedded store                  3
:class:`NotCertified`     a basis (or a certificate) failed exact verification     1
========================= ======================================================== =====

The modules that raise keep their specific names (``SpecError``, ``PresetError``,
``ResourceLimit``, ``TooManySubstructures``, ``WhyError``, ...), all subclasses of these.
:class:`BadInput` and :class:`LimitExceeded` are also ``ValueError``\\ s, as Python code expects.

Examples
--------
>>> from basispath_graph import Network, BadInput
>>> try:
...     Network([2, 0, 2])
... except BadInput as exc:
...     print(exc)
widths[1] must be an integer >= 1, got 0
"""

from __future__ import annotations

__all__ = ["BasispathError", "BadInput", "LimitExceeded", "StoreError", "StoreUnavailable", "StoreLocked", "NotCertified"]


class BasispathError(Exception):
    """Root of every exception basispath raises on purpose; str() is one line."""


class BadInput(BasispathError, ValueError):
    """Input that is not valid: a spec, preset, path, parameter or file (CLI exit code 2)."""


class LimitExceeded(BasispathError, ValueError):
    """Refused before starting: over a weight, memory, time or substructure limit (exit code 2)."""


class StoreError(BasispathError):
    """A store operation the user can act on failed: unknown run, refused query (exit code 2)."""


class StoreUnavailable(StoreError):
    """The Neo4j server cannot be reached or refused the credentials (exit code 3); from Python,
    also ``open_store`` on a path that holds no store, without ``create=True``."""


class StoreLocked(StoreError):
    """Another process holds the embedded store: a writer (for anyone) or readers (for a writer)
    (exit code 3)."""


class NotCertified(BasispathError):
    """A basis path set or a certificate failed exact verification (exit code 1).

    ``verdict`` is the :class:`~basispath_graph.verify.Verdict` when there is one."""

    def __init__(self, message: str, verdict=None):
        super().__init__(message)
        self.verdict = verdict
