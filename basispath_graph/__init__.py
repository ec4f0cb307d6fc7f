"""basispath-graph: basis path sets of ReLU networks (Algorithm DEAH), certified exactly.

A library first, a CLI second. In a notebook:

>>> from basispath_graph import load_spec, solve
>>> net = load_spec({"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [1, 3]]})
>>> result = solve(net)
>>> result.certified, result.basis_size == net.m - net.H
(True, True)

docs/python-api.md walks through a session: solve, inspect a discard and its certificate,
store runs, query the graph, compare architectures.
"""

__version__ = "0.1.0"

from .api import certify, compare, express, load_general, load_spec, preset, preset_families
from .general.model import GeneralNetwork
from .general.solve import GeneralResult, solve_general
from .errors import BadInput, BasispathError, LimitExceeded, NotCertified, StoreError, StoreLocked, StoreUnavailable
from .graph_store import GraphStore, StoredRun, open_store
from .network import InvalidNetwork, Network
from .solver import DEFAULT_ENGINE, ENGINES, SolveResult, solve
from .verify import Verdict

__all__ = [
    "__version__",
    # networks
    "Network", "load_spec", "preset", "preset_families",
    # general networks (channels, kernel taps, biases, identity shortcuts)
    "GeneralNetwork", "load_general", "solve_general", "GeneralResult",
    # solving and checking
    "solve", "SolveResult", "ENGINES", "DEFAULT_ENGINE", "certify", "Verdict", "compare", "express",
    # stored runs
    "open_store", "GraphStore", "StoredRun",
    # errors
    "BasispathError", "BadInput", "InvalidNetwork", "LimitExceeded", "StoreError", "StoreUnavailable", "StoreLocked",
    "NotCertified",
]
