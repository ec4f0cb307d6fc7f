"""Solve a general network (skeleton, a DEAH engine in the paper's setting, or deah-complete on a
layer DAG core), certified exactly (its documents: ``general/documents.py``)."""

from __future__ import annotations

import time

from ..errors import BadInput
from ..guards import MEMORY, MEMORY_ENV, SECONDS, TIME_ENV, check_memory, check_skeleton, check_time, features, model_engine
from ..result import Result
from ..solver import ENGINES
from .dag_deah import run_dag_deah
from .dag_sdvchain import solve_dag_sdvchain
from .deah_solve import solve_general_deah
from .model import GeneralNetwork
from .paper_setting import reads_as_layer_dag
from .described import certify_described
from .skeleton import skeleton_blocks

__all__ = ["GeneralResult", "solve_general", "solve_dag_deah"]


#: The result type's older name for general networks: one ``Result`` for every network.
GeneralResult = Result


def solve_dag_deah(net: GeneralNetwork, seed: int = 0) -> Result:
    """deah-complete on ``net`` read as a layer DAG core (``general/dag_deah.py``; a layered core
    too): the kept basis, described and certified exactly, with the run's artifacts as
    ``result.dag``. UnsupportedFeature for a core with a layer on no source-sink path."""
    run, basis, verdict, timings = run_dag_deah(net)
    result = Result.of_general(net, "deah-complete", seed, basis, verdict, timings, run.parts())
    result.dag = run
    return result


def solve_general(net: GeneralNetwork, engine: str = "skeleton", seed: int = 0, **options) -> Result:
    """A basis path set of a general network, certified exactly.

    Parameters
    ----------
    net : GeneralNetwork
        From ``load_general`` (a general spec, or a layered one read as general).
    engine : {"skeleton", "deah-complete", "deah"}
        "skeleton" (the default): every general network in which each layer has a trainable
        connection in (unless an input) and out (unless an output), or whose identity edges form
        chains; linear time. "deah-complete" / "deah": a network in the paper's setting (a layered core of dense
        connections) plus kernel taps, biases and other extra inputs and outputs
        (``general.deah_solve``, docs/general-networks.md); both also a core that is a
        layer DAG (branches, concatenations, diagonal and grouped connections: deah-complete by
        ``general.dag_deah``, its artifacts as ``result.dag``; faithful deah by
        ``general.dag_sdvchain``, as ``result.sdvchain``, its raw verdict and repairs as for a
        layered run).
    seed, options
        Go to the layered ``solve`` on the core (DEAH engines). ``memory_limit`` (bytes) and
        ``time_limit`` (seconds) refuse (``ResourceLimit``) before starting when the estimate is
        over them (``guards``).

    Returns
    -------
    GeneralResult
        ``certified``, ``basis_size``, ``basis_paths`` (JSON form), ``summary()``, ``export()``;
        ``core`` is the layered ``SolveResult`` on the core for the DEAH engines.

    Raises
    ------
    UnsupportedIdentity, UnsupportedFeature
        (:class:`~basispath_graph.errors.BadInput`, one line) a network the engine does not read.

    Examples
    --------
    >>> from basispath_graph import load_general, solve_general
    >>> net = load_general({"layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 2},
    ...                                {"name": "h", "size": 3}, {"name": "y", "size": 2}],
    ...                     "connections": [{"from": "x", "to": "h", "taps": 9}, {"from": "h", "to": "y"},
    ...                                     {"from": "bias", "to": "h"}, {"from": "bias", "to": "y"}]})
    >>> r = solve_general(net, "deah-complete")
    >>> r.certified, r.basis_size == net.m - net.H, r.parts["tap_lift"]
    (True, True, 48)
    >>> r.basis_paths[0]
    {'nodes': [['x', 0], ['h', 0], ['y', 0]], 'taps': [0, 0]}
    """
    memory_limit, time_limit = options.get("memory_limit"), options.get("time_limit")
    if engine == "deah-complete" and reads_as_layer_dag(net):
        # a layer DAG core (general/dag_deah.py): its kept paths are a skeleton's, held described,
        # and its discards are counted per ear: the skeleton's guards
        check_skeleton(net, memory_limit, time_limit, "deah-complete")
        return solve_dag_deah(net, seed)
    if engine == "deah" and reads_as_layer_dag(net):
        # faithful deah on a layer DAG core (general/dag_sdvchain.py): every B_r listed, guarded there
        return solve_dag_sdvchain(net, seed, repair=options.get("repair", True), memory_limit=memory_limit, time_limit=time_limit,
                                  certificates=options.get("certificates", True))
    if engine != "skeleton":
        if engine not in ENGINES:
            raise BadInput(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
        # one model per engine for layered and general networks: the core's B_r (candidate paths x
        # their layers) and the general network's m (the tap lift, made on demand, and its checks)
        m, candidates, _, _, layers, *later = features(net, engine)  # UnsupportedFeature before any estimate
        key = model_engine(net, engine)  # deah-complete described: its own models
        # faithful deah lists every B_r; deah-complete describes them (ResNet-50: 0.1 s, 114 MB)
        other = "--engine deah-complete or --engine skeleton" if engine == "deah" else "--engine skeleton"
        if memory_limit is not None:
            check_memory(f"{engine} on this general network", MEMORY[key], m, candidates, memory_limit,
                         f"raise --max-memory-gb / {MEMORY_ENV}, or use {other}", candidate_layers=layers, later=later)
        check_time(f"{engine} on this general network", SECONDS[key], m, candidates, time_limit,
                   f"raise --max-seconds / {TIME_ENV}, or use {other}", candidate_layers=layers, later=later)
        return solve_general_deah(net, engine, seed, **options)
    check_skeleton(net, memory_limit, time_limit)
    t0 = time.perf_counter()
    basis = skeleton_blocks(net)  # described: its families are made only when asked for
    t1 = time.perf_counter()
    verdict = certify_described(basis)
    t2 = time.perf_counter()
    return Result.of_general(net, "skeleton", seed, basis, verdict, {"materialise": t1 - t0, "certify": t2 - t1})
