"""The general form of a network spec: named layers of neurons (channels) and typed connections,
read and checked into a :class:`~basispath_graph.network.Network`.

A spec looks like::

    {"name": "block", "layers": [{"name": "x", "size": 3}, {"name": "h", "size": 3}, ...],
     "connections": [{"from": "x", "to": "h", "kind": "dense", "taps": 9},
                     {"from": "x", "to": "y", "kind": "identity"}, ...]}

Kinds (docs/general-networks.md has the argument for each):

- ``dense``: every neuron of ``from`` to every neuron of ``to``, ``taps`` parallel trainable
  weights each (a conv layer at channel level: one tap per kernel entry). Default ``taps`` 1.
- ``grouped``: each side split into ``groups`` equal blocks; block g of ``from`` dense to block g
  of ``to``, ``taps`` weights each (a grouped conv: ResNeXt, RegNet). ``groups`` divides both sizes.
- ``diagonal``: neuron i to neuron i (sizes equal), ``taps`` trainable weights each: a
  per-channel scale that does not fold away (BatchNorm after a layer it cannot fold into), or a
  depthwise conv. Default ``taps`` 1.
- ``identity``: neuron i to neuron i (sizes equal), weight fixed at 1, not trainable: ResNet's
  ``x + F(x)``. It carries paths but is no coordinate of them.

Layers are listed in topological order (every connection goes from an earlier layer to a later
one). Inputs are the layers with no incoming connection (a size-1 input layer is a bias),
outputs those with no outgoing one. Between two layers there is at most one trainable
connection (dense, grouped or diagonal) and at most one identity.

Counting (math notes, section 7): m = trainable weights; neurons joined by identity edges
rescale together, so H = the number of classes of hidden neurons under "joined by an identity
edge", leaving out every class that holds an input or output neuron; |B| = m - H.
"""

from __future__ import annotations

from ..network import KINDS, TRAINABLE_KINDS, Connection, Layer, Network
from ..spec import is_general_spec, parse_general

__all__ = ["GeneralNetwork", "GLayer", "GConnection", "KINDS", "TRAINABLE_KINDS", "parse_general", "is_general_spec", "from_layered"]

#: The one network class; the names this module had for it, kept as aliases for older code.
GeneralNetwork = Network
GLayer = Layer
GConnection = Connection


def from_layered(network) -> Network:
    """A layered network (widths and skips) as a network of the general form: layers named "0" ..
    "L", a dense connection with one tap per connected layer pair. Same m, H and paths."""
    layers = [GLayer(str(l), int(w)) for l, w in enumerate(network.widths)]
    conns = [GConnection(a, b, "dense", 1) for a, b in network.pairs]
    return Network.from_parts(network.name, layers, conns)

