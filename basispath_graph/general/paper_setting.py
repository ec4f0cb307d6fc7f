"""Where a general network is in DEAH's setting: a layered core plus extra inputs and outputs.

DEAH's Steps 1-3 (paper, Sections 3-4) are stated for one input layer, one output layer and
fully connected layer pairs, every layer connected to the next. A general network is read as

- a **core**: a main input and a main output layer and every layer that is neither an input nor
  an output, in spec order, each one connected from the one before it by a ``dense`` connection
  (the main input and output are the first pair, largest layers first, for which this holds); more ``dense`` connections between core layers are skips. Its
  taps are kept per layer pair (``taps``);
- **extra** layers: the other input layers (biases are size-1 ones) and output layers, joined to
  the core or to each other by ``dense`` or ``diagonal`` connections;
- **identity** connections (ResNet shortcuts), anywhere, listed apart (``identities``): the core
  is read without them, so every layer must also have a trainable connection in (unless it is
  an input) and out (unless it is an output).

Anything else is refused in one line naming the feature (``UnsupportedFeature``): a diagonal
connection between core layers, a core layer not connected from the one before it, a layer
reached or left only through identity connections.
docs/general-networks.md ("DEAH engines on general networks") has the argument for the parts
the engines add to the core's basis.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BadInput
from ..network import Network
from .identity_forest import identity_free_problem
from .model import GeneralNetwork

__all__ = ["UnsupportedFeature", "PaperSetting", "paper_setting", "in_paper_setting", "reads_as_layer_dag", "first_core", "HINT"]


class UnsupportedFeature(BadInput):
    """A general network outside what an engine reads (one line, naming the feature)."""


@dataclass(frozen=True)
class PaperSetting:
    network: GeneralNetwork
    core_layers: tuple[int, ...]  # general layer index of core layer 0..L
    core: Network  # widths and connected pairs of the core, one weight per neuron pair (tap 0)
    pair_connection: dict[tuple[int, int], int]  # core pair (a, b) -> general connection index
    taps: dict[tuple[int, int], int]  # core pair -> its taps
    extra_connections: tuple[int, ...]  # trainable connections touching an extra layer, in spec order
    identities: tuple[int, ...]  # identity connections, in spec order

    def core_position(self, layer: int) -> int | None:
        """Position of a general layer in the core, or None for an extra layer."""
        try:
            return self.core_layers.index(layer)
        except ValueError:
            return None


def _largest_first(net: GeneralNetwork, layers: tuple[int, ...]) -> list[int]:
    return sorted(layers, key=lambda k: (-net.layers[k].size, k))


#: What a refusal of the DEAH engines points to.
HINT = "solve it with --engine skeleton"


def first_core(net: GeneralNetwork, engine: str, build):
    """``build(net, engine, main_in, main_out)`` for the first pair of main input and output,
    largest layers first, that it accepts (it raises UnsupportedFeature for the others), or the
    first pair's refusal; the refusal of a network whose N loses an input or output first."""
    problem = identity_free_problem(net)
    if problem:
        raise UnsupportedFeature(
            f"engine {engine} needs a trainable connection into every layer but the inputs and out of every layer but "
            f"the outputs; {problem}; {HINT}"
        )
    first_problem = None
    for main_in in _largest_first(net, net.inputs):
        for main_out in _largest_first(net, net.outputs):
            try:
                return build(net, engine, main_in, main_out)
            except UnsupportedFeature as exc:
                first_problem = first_problem or exc
    raise first_problem


def paper_setting(net: GeneralNetwork, engine: str) -> PaperSetting:
    """The core and the extras of ``net``, or UnsupportedFeature naming what ``engine`` cannot read
    (for the first candidate pair of main input and output when none gives a core)."""
    return first_core(net, engine, _core_with)


def in_paper_setting(net: GeneralNetwork) -> bool:
    """Whether the layered DEAH engines read ``net`` (else deah-complete reads it as a layer DAG,
    ``layer_dag``)."""
    try:
        paper_setting(net, "deah-complete")
    except UnsupportedFeature:
        return False
    return True


def reads_as_layer_dag(net) -> bool:
    """Whether the DEAH engines read ``net`` (layered or general) as a layer DAG core
    (deah-complete: ``general/dag_deah.py``; faithful deah: ``general/dag_sdvchain.py``): a general
    network outside the paper's setting. Its runs are stored, loaded and explained as such
    (``store/dag_runs.py``)."""
    return not net.is_layered and not in_paper_setting(net)


def _core_with(net: GeneralNetwork, engine: str, main_in: int, main_out: int) -> PaperSetting:
    names = [layer.name for layer in net.layers]
    hint = HINT
    extra = (set(net.inputs) | set(net.outputs)) - {main_in, main_out}
    core_layers = tuple(k for k in range(len(net.layers)) if k not in extra)
    position = {layer: l for l, layer in enumerate(core_layers)}
    pair_connection, taps, extra_connections, identities = {}, {}, [], []
    for k, c in enumerate(net.connections):
        if c.kind == "identity":
            identities.append(k)
            continue
        if c.source in extra or c.target in extra:
            extra_connections.append(k)
            continue
        if c.kind != "dense":
            raise UnsupportedFeature(
                f"engine {engine} reads dense connections between the layers of the network's core only; "
                f"{names[c.source]} -> {names[c.target]} is {c.kind}; {hint}"
            )
        pair = (position[c.source], position[c.target])
        pair_connection[pair] = k
        taps[pair] = c.taps
    for l in range(1, len(core_layers)):
        if (l - 1, l) not in pair_connection:
            raise UnsupportedFeature(
                f"engine {engine} needs every layer connected from the layer listed before it (DEAH's layered setting); "
                f"{names[core_layers[l - 1]]} -> {names[core_layers[l]]} is missing; {hint}"
            )
    widths = [net.layers[k].size for k in core_layers]
    skips = [p for p in pair_connection if p[1] > p[0] + 1]
    core = Network(widths, skips, net.name)
    return PaperSetting(net, core_layers, core, pair_connection, taps, tuple(extra_connections), tuple(identities))
