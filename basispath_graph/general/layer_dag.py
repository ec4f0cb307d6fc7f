"""DEAH's Step 1 on a layer DAG: the core G^S, its substructure paths and an ear decomposition.

The paper states Steps 1-3 for a layered network: every layer connected to the next, skips
between any two (Sections 3-4). A network read from torchvision is a DAG of layers instead:
branches that run side by side and meet in a concatenation (Inception, SqueezeNet), a feature
map read by every later layer of its block through its own BatchNorm (DenseNet). Here:

- the **core** G^S: a main input (source), a main output (sink) and every layer that is neither
  an input nor an output, joined by their trainable connections of any kind (dense, grouped,
  diagonal); other inputs (biases) and outputs are *extra*, identity connections are apart
  (``identity_forest``), as in ``paper_setting``. Every core layer must lie on a source-sink
  path: a hidden layer needs a core connection in and one out;
- its **substructure paths** P^S are its source-sink paths (counted, never listed: DenseNet-121
  has 2.9 x 10^17);
- Step 1 selects P_ind^S by an **ear decomposition**: p_0 a longest source-sink path (the
  whole chain, in the paper's setting); then, for each connection not yet covered whose source
  is covered (connections by source layer), the ear it starts: that connection and the first
  connection out of each new layer it reaches, up to the first covered layer. Its substructure
  is the *route* in to the ear's first layer a (the path a was covered by), the ear's
  *segment* S, and the route out of its last layer b. Each ear brings hops no earlier
  substructure has, so their hop vectors (the paper's alpha) are independent, and there are
  |connections| - |layers| + 2 of them: the dimension of the flow space, so the selection is
  maximal, as Step 1 asks.

Every covered layer keeps the connection it was covered by (in) and left by (out): these are
the designations of the walks (``skeleton.walks_from``), the same for every substructure
through it. docs/deah-complete.md ("Layer DAGs") has the argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import GeneralNetwork
from .paper_setting import HINT, UnsupportedFeature, first_core

__all__ = ["DagCore", "Ear", "EarDecomposition", "dag_core", "ear_decomposition"]


@dataclass(frozen=True)
class DagCore:
    """G^S of a general network: its core layers and the trainable connections between them."""

    network: GeneralNetwork
    source: int  # general layer index of the main input
    sink: int  # of the main output
    layers: tuple[int, ...]  # core layers, in spec (topological) order
    connections: tuple[int, ...]  # trainable connections between core layers, in spec order
    extra_connections: tuple[int, ...]  # trainable connections touching an extra layer


@dataclass(frozen=True)
class Ear:
    """A selected substructure after p_0: ``route_in`` (connections from the source to the
    segment's first layer a), ``segment`` (its new connections, a to b; the layers between them
    are new), ``route_out`` (b to the sink)."""

    route_in: tuple[int, ...]
    segment: tuple[int, ...]
    route_out: tuple[int, ...]

    @property
    def route(self) -> tuple[int, ...]:
        return self.route_in + self.segment + self.route_out


@dataclass(frozen=True)
class EarDecomposition:
    """Step 1 on G^S: p_0, the ears in selection order, every core layer's designations."""

    core: DagCore
    p0: tuple[int, ...]  # connections of p_0, source to sink
    ears: tuple[Ear, ...]
    pred: dict[int, int]  # core layer -> the connection it was covered by (not the source)
    succ: dict[int, int]  # core layer -> the connection it is left by on its route (not the sink)
    substructure_count: int  # source-sink paths of G^S (P^S)

    def route_layers(self, route: tuple[int, ...]) -> tuple[int, ...]:
        """The layers a route (connection indices, source to sink) visits."""
        net = self.core.network
        return (net.connections[route[0]].source,) + tuple(net.connections[k].target for k in route)


def dag_core(net: GeneralNetwork, engine: str) -> DagCore:
    """The core G^S of ``net`` (main input and output: the first pair, largest layers first,
    that leaves every hidden layer with a core connection in and out), or UnsupportedFeature."""
    return first_core(net, engine, _core_with)


def _core_with(net: GeneralNetwork, engine: str, source: int, sink: int) -> DagCore:
    extra = (set(net.inputs) | set(net.outputs)) - {source, sink}
    layers = tuple(k for k in range(len(net.layers)) if k not in extra)
    core, extra_connections = [], []
    into, out_of = set(), set()
    for k, c in enumerate(net.connections):
        if c.kind == "identity":
            continue  # apart: the identity forest
        if c.source in extra or c.target in extra:
            extra_connections.append(k)
        else:
            core.append(k)
            into.add(c.target)
            out_of.add(c.source)
    for layer in layers:
        name = net.layers[layer].name
        if layer != source and layer not in into:
            raise UnsupportedFeature(
                f"engine {engine} needs every layer of the core on a path from the main input "
                f"{net.layers[source].name}; {name} is reached only from other inputs; {HINT}"
            )
        if layer != sink and layer not in out_of:
            raise UnsupportedFeature(
                f"engine {engine} needs every layer of the core on a path to the main output "
                f"{net.layers[sink].name}; {name} leads only to other outputs; {HINT}"
            )
    return DagCore(net, source, sink, layers, tuple(core), tuple(extra_connections))


def _count_routes(core: DagCore) -> int:
    """Source-sink paths of G^S, by dynamic programming in topological order (exact, unbounded)."""
    net = core.network
    ways = {core.source: 1}
    for k in sorted(core.connections, key=lambda k: net.connections[k].target):
        c = net.connections[k]
        ways[c.target] = ways.get(c.target, 0) + ways.get(c.source, 0)
    return ways.get(core.sink, 0)


def _longest_route(core: DagCore) -> tuple[int, ...]:
    """A source-sink path visiting the most layers (ties: the earliest connection in spec
    order, so a layered core gives its whole chain)."""
    net = core.network
    best: dict[int, tuple[int, tuple[int, ...]]] = {core.source: (0, ())}
    for k in sorted(core.connections, key=lambda k: (net.connections[k].target, k)):
        c = net.connections[k]
        if c.source not in best:
            continue
        length, route = best[c.source]
        if c.target not in best or best[c.target][0] < length + 1:
            best[c.target] = (length + 1, route + (k,))
    return best[core.sink][1]


def ear_decomposition(core: DagCore) -> EarDecomposition:
    """p_0 and the ears of ``core`` (the module doc), with every core layer's designations."""
    net = core.network
    p0 = _longest_route(core)
    pred: dict[int, int] = {}
    succ: dict[int, int] = {}
    route_in: dict[int, tuple[int, ...]] = {core.source: ()}
    route_out: dict[int, tuple[int, ...]] = {core.sink: ()}
    covered_layers = {core.source}
    for i, k in enumerate(p0):
        c = net.connections[k]
        pred[c.target], succ[c.source] = k, k
        route_in[c.target] = p0[: i + 1]
        covered_layers.add(c.target)
    for i, k in enumerate(p0):
        route_out[net.connections[k].source] = p0[i:]
    covered = set(p0)
    first_out: dict[int, int] = {}
    for k in core.connections:  # spec order: a layer's first connection out
        first_out.setdefault(net.connections[k].source, k)
    ears = []
    for k in sorted(core.connections, key=lambda k: (net.connections[k].source, k)):
        if k in covered:
            continue
        # every connection into this one's source has a smaller source: covered by now
        segment = [k]
        layer = net.connections[k].target
        while layer not in covered_layers:
            segment.append(first_out[layer])
            layer = net.connections[segment[-1]].target
        a, b = net.connections[k].source, layer
        new_layers = [net.connections[h].target for h in segment[:-1]]
        for i, layer in enumerate(new_layers):
            pred[layer], succ[layer] = segment[i], segment[i + 1]
            route_in[layer] = route_in[a] + tuple(segment[: i + 1])
        for i, layer in enumerate(new_layers):
            route_out[layer] = tuple(segment[i + 1:]) + route_out[b]
        covered_layers.update(new_layers)
        covered.update(segment)
        ears.append(Ear(route_in[a], tuple(segment), route_out[b]))
    return EarDecomposition(core, p0, tuple(ears), pred, succ, _count_routes(core))
