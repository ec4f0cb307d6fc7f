"""Channel permutations and selections in the channel-level reader (``general/channel_graph.py``):
ShuffleNet-V2's channel shuffle and ``chunk``, without PyTorch (the rules both front ends call).

A shuffle only relabels channels; a selection that takes part of a layer splits that layer into
the part taken and the rest, each with the layer's incoming connections: m and H are unchanged,
and the views hold whole layers in the tensor's channel order.
"""

from __future__ import annotations

import pytest

from basispath_graph.general.channel_graph import ChannelGraph, ChannelImportError, View
from basispath_graph.general.model import parse_general
from basispath_graph import solve


def _two_convs(g: ChannelGraph) -> None:
    """x (3 channels) -> a (4), b (4), 1x1 convs with biases; t = cat(a, b) shuffled in 2 groups."""
    g.input("x", 3)
    g.readers.update({"x": 2, "a": 1, "b": 1, "cat": 1, "split": 1, "t": 2})
    g.conv("a", "x", "conv a", 3, 4, 1, True)
    g.conv("b", "x", "conv b", 3, 4, 1, True)
    g.concat("cat", ["a", "b"], "cat")
    g.split_channel_axis("split", "cat", "view", 2)
    g.swap_channel_axes("swapped", "split", "transpose")
    g.join_channel_axes("t", "swapped", "view back")


def test_a_shuffle_interleaves_the_layers_channels_and_makes_no_weights():
    g = ChannelGraph("shuffle")
    _two_convs(g)
    view = g.tensors["t"]
    assert view.segments == [("a", 4), ("b", 4)]
    assert view.order == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2), ("a", 3), ("b", 3)]
    # not swapped: joining the axes again is the identity, and the view has no order of its own
    g.split_channel_axis("s2", "cat", "view", 2)
    g.join_channel_axes("same", "s2", "view back")
    assert g.tensors["same"] == View([("a", 4), ("b", 4)])


def test_a_chunk_of_a_shuffled_tensor_splits_each_layer_into_the_part_it_takes_and_the_rest():
    g = ChannelGraph("chunk")
    _two_convs(g)
    g.select_channels("x1", "t", "chunk", 0, 4)
    g.select_channels("x2", "t", "chunk", 4, 4)
    names = [layer["name"] for layer in g.layers]
    assert names == ["x", "a.part0", "a.part1", "b.part0", "b.part1"]
    assert g.tensors["x1"].order == [("a.part0", 0), ("b.part0", 0), ("a.part0", 1), ("b.part0", 1)]
    assert g.tensors["x2"].order == [("a.part1", 0), ("b.part1", 0), ("a.part1", 1), ("b.part1", 1)]
    # each part gets the layer's incoming connections (dense from x, its biases): m is unchanged
    into = {(c["from"], c["to"]) for c in g.connections}
    assert {("x", p) for p in ("a.part0", "a.part1", "b.part0", "b.part1")} <= into
    assert {("bias", p) for p in ("a.part0", "a.part1", "b.part0", "b.part1")} <= into
    g.conv("y", "x2", "conv y", 4, 2, 1, False)
    spec = g.finish(["x1", "y"])
    net = parse_general(spec, "chunk", 10**6)
    assert net.m == 2 * (3 * 4 + 4) + 4 * 2
    # the parts in x1 are outputs, those in x2 hidden (y reads them): a shuffle and a split make
    # no neurons of their own
    assert net.H == 4
    assert solve(net, engine="skeleton").certified


def test_a_selection_within_one_layer_is_a_view_of_its_part():
    g = ChannelGraph("slice")
    g.input("x", 3)
    g.readers.update({"x": 1, "a": 1})
    g.conv("a", "x", "conv a", 3, 6, 1, False)
    g.select_channels("lo", "a", "x[:, 1:3]", 1, 2)
    assert [layer["name"] for layer in g.layers] == ["x", "a.part0", "a.part1"]
    assert g.tensors["lo"] == View([("a.part0", 2)])
    assert g.tensors["a"].segments == [("a.part0", 2), ("a.part1", 4)]  # channels 1, 2 | 0, 3, 4, 5
    assert g.tensors["a"].order == [("a.part1", 0), ("a.part0", 0), ("a.part0", 1), ("a.part1", 1), ("a.part1", 2), ("a.part1", 3)]


@pytest.mark.parametrize("build, message", [
    # a layer a weight already reads cannot be split after the fact: its outgoing weights would
    # have to be split too
    (lambda g: (g.conv("y", "a", "conv y", 4, 2, 1, False), g.view("y", "relu"), g.select_channels("h", "a", "chunk", 0, 2)),
     "chunk takes part of layer 'a''s channels, and a weight already reads it: not supported"),
    (lambda g: g.select_channels("h", "a", "chunk", 2, 3), "chunk: channels 2 .. 4 of 4"),
    (lambda g: g.split_channel_axis("s", "a", "view", 3), "view: 4 channels in 3 groups"),
    (lambda g: (g.split_channel_axis("s", "a", "view", 2), g.pass_through("r", "s", "relu")),
     "relu reads a tensor whose channel axis is split in two: only a transpose of the two axes and a reshape back"
     " (a channel shuffle) may"),
    (lambda g: g.permute_channels("p", "a", "perm", [0, 0, 1, 2]), "perm: not a permutation of its 4 channels"),
    (lambda g: (g.permute_channels("p", "a", "perm", [1, 0, 2, 3]), g.add("s", "p", "a", "add")),
     "add: adds a tensor whose channels are reordered (a channel shuffle) or a depthwise conv over several layers: not supported"),
])
def test_refusals_name_what_is_not_supported(build, message):
    g = ChannelGraph("refused")
    g.input("x", 3)
    g.readers.update({"x": 1, "a": 3})
    g.conv("a", "x", "conv a", 3, 4, 1, False)
    with pytest.raises(ChannelImportError) as info:
        build(g)
    assert str(info.value) == message


def test_a_depthwise_conv_over_a_shuffled_concatenation_is_one_diagonal_layer_per_layer_in_its_order():
    g = ChannelGraph("depthwise")
    _two_convs(g)
    g.grouped_conv("d", "t", "depthwise", 8, 8, 8, 9, False)
    g.readers.update({"d": 1, "n": 1})
    g.batchnorm("n", "d", "bn", 8)  # folds into it: one bias per channel
    view = g.view("n", "relu")
    assert view.segments == [("n.0", 4), ("n.4", 4)]
    assert view.order == [("n.0", 0), ("n.4", 0), ("n.0", 1), ("n.4", 1), ("n.0", 2), ("n.4", 2), ("n.0", 3), ("n.4", 3)]
    kinds = {(c["from"], c["to"]): (c["kind"], c.get("taps")) for c in g.connections}
    assert kinds[("a", "n.0")] == ("diagonal", 9) and kinds[("b", "n.4")] == ("diagonal", 9)
    assert ("bias", "n.0") in kinds and ("a", "n.4") not in kinds
