"""deah-complete's kept set certified from its description (``deah/ear_certificate.py``) against
the explicit certifier on the listed paths, and what happens when a premise fails."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from basispath_graph import Network, solve
from basispath_graph.deah.ear_certificate import certify_ear_union
from basispath_graph.deah.engine import run_deah
from basispath_graph.deah.subroutine_rows import EarRows
from basispath_graph.verify import certify

from .strategies import networks


def _parts(net, seed=0):
    deah = run_deah(net, seed, complete=True)
    step3 = deah.step3
    order = step3.order
    blocks = [b for _, b in deah.kept_blocks()]
    return step3.described[order[0]], [(step3.described[i], step3.ears[i]) for i in order[1:]], blocks, step3


@settings(max_examples=80, deadline=None)
@given(net=networks(max_layers=6, max_width=5), seed=st.integers(0, 3))
def test_the_described_verdict_is_the_explicit_one(net, seed):
    p0, ears, blocks, step3 = _parts(net, seed)
    if not step3.ear_orderable:
        return
    assert certify_ear_union(net, p0, ears, blocks) == certify(net, blocks)


def test_solve_certifies_ear_unions_from_the_description_and_every_path_agrees():
    net = Network.build([3, 4, 5, 4, 3, 2], skips=[(0, 2), (1, 4), (2, 5)])
    result = solve(net)
    assert result.deah.step3.ear_orderable and result.certified
    assert result.verdict == certify(net, result.basis)


def test_a_failed_premise_is_decided_by_the_explicit_certifier():
    net = Network.build([2, 3, 3, 2], skips=[(0, 2)])
    p0, ears, blocks, _ = _parts(net)
    (rows, ear), = ears
    # an ear keeping one row fewer: the count is off, and the explicit verdict names it
    short = EarRows(rows, ear.j)
    short.kept_count -= 1
    listed = blocks[:-1] + [blocks[-1].take(np.arange(1, len(blocks[-1])))]
    verdict = certify_ear_union(net, p0, [(rows, short)], listed)
    assert verdict == certify(net, listed) and not verdict.certified
    assert verdict.defect == f"size {net.m - net.H - 1} != m - H = {net.m - net.H}"
    # an ear whose hop an earlier route already has: not proved by the description
    assert certify_ear_union(net, p0, [(p0, EarRows(p0, 0))], blocks) == certify(net, blocks)


def test_b0_made_otherwise_than_the_proof_reads_it_is_not_proved():
    """(2) is a proof about how Subroutine makes B_0's rows; a row made otherwise (here: the
    direct walk after a made edge replaced by the predecessor map) fails its spot check, and the
    verdict then comes from the listed paths, or names the failed premise when none are listed."""
    net = Network.build([3, 4, 5, 4, 3, 2], skips=[(0, 2), (1, 4), (2, 5)])
    p0, ears, blocks, _ = _parts(net)
    assert certify_ear_union(net, p0, ears, None).certified
    take = type(p0).take

    def bent(self, index):
        block = take(self, index)
        nodes = block.nodes.copy()
        nodes[:, -1] = (nodes[:, -1] + 1) % self.network.widths[self.layers[-1]]  # the last hop off its direct edge
        return type(block)(block.layers, nodes)

    p0.take = bent.__get__(p0)
    verdict = certify_ear_union(net, p0, ears, None)
    assert not verdict.certified and verdict.defect.startswith("not proved from the description: B_0's row ")
    assert verdict.defect.endswith("is not the walk its section makes (docs/deah-complete.md)")
    assert certify_ear_union(net, p0, ears, blocks) == certify(net, blocks)
