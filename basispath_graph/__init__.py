"""basispath-graph: basis path sets of ReLU networks (Algorithm DEAH), certified exactly.

A library first, a CLI second. In a notebook:

>>> from basispath_graph import load_spec, solve
>>> net = load_spec({"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [1, 3]]})
>>> result = solve(net)
>>> result.certified, result.basis_size == net.m - net.H
(True, True)
>>> result.why(result.discarded_paths[0])["verified"]
True

Every spec form and engine goes through the same ``load_spec`` and ``solve`` (a general spec:
layers and connections, docs/general-networks.md), and gives the same ``Result`` type.

docs/python-api.md walks through a session: solve, inspect a discard and its certificate,
store runs, query the graph, compare architectures.
"""

__version__ = "0.1.0"

from .api import certify, compare, default_engine, express, from_torch, load_general, load_spec, preset, preset_families, solve
from .general.model import GeneralNetwork
from .general.solve import GeneralResult, solve_general
from .errors import BadInput, BasispathError, LimitExceeded, NotCertified, StoreError, StoreLocked, StoreUnavailable
from .graph_store import GraphStore, StoredRun, open_store
from .network import InvalidNetwork, Network
from .result import Result
from .solver import DEFAULT_ENGINE, ENGINES, SolveResult
from .verify import Verdict

__all__ = [
    "__version__",
    # networks: one class, layered (widths, skips) or general (layers, connections) form
    "Network", "load_spec", "from_torch", "preset", "preset_families",
    # solving and checking: one solve, one Result, for every network and engine
    "solve", "Result", "ENGINES", "DEFAULT_ENGINE", "default_engine", "certify", "Verdict", "compare", "express",
    # older names, thin aliases: GeneralNetwork = Network, SolveResult = GeneralResult = Result,
    # load_general = load_spec in the general form, solve_general = solve on a general network
    "GeneralNetwork", "load_general", "solve_general", "GeneralResult", "SolveResult",
    # stored runs
    "open_store", "GraphStore", "StoredRun",
    # errors
    "BasispathError", "BadInput", "InvalidNetwork", "LimitExceeded", "StoreError", "StoreUnavailable", "StoreLocked",
    "NotCertified",
]
