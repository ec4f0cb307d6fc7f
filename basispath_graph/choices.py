"""The one deterministic, seedable rule behind every "random" choice of the engines.

The paper lets Algorithm Subroutine pick direct edges and the prefix p* "randomly", but its
Claim 1 (Section 4) needs the *same* rule in every substructure. So every choice is a
function of (layer, neuron, next layer) only, never of the substructure it is made in.

A seed fixes one permutation of the neurons of each layer (seed 0 is the identity). Neurons are
compared by their rank under that permutation:

- direct edge from layer a to layer b:  rank r at a  ->  rank (r mod w_b) at b.
  When w_a >= w_b the first w_b ranks form a vertex-disjoint matching and the rest pick a
  target; when w_a < w_b all of layer a is matched. This is Subroutine Step 1.
- designated predecessor of a neuron at b in layer a: rank s at b -> rank (s mod w_a) at a.
  It is the smallest-ranked neuron whose direct edge enters it when one exists (s < w_a),
  so following it backwards gives a path that Subroutine really produced (see p*).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ChoiceRule"]


class ChoiceRule:
    """Seeded per-layer neuron ranking; ``direct`` and ``predecessor`` are vectorised."""

    def __init__(self, widths, seed: int = 0):
        self.seed = int(seed)
        self.widths = tuple(int(w) for w in widths)
        self._rank_to_neuron: list[np.ndarray] = []
        self._neuron_to_rank: list[np.ndarray] = []
        for layer, w in enumerate(self.widths):
            if self.seed == 0:
                perm = np.arange(w, dtype=np.int64)
            else:
                # One independent stream per layer, so a layer's order never depends on others.
                perm = np.random.default_rng([self.seed, layer]).permutation(w).astype(np.int64)
            inv = np.empty(w, dtype=np.int64)
            inv[perm] = np.arange(w, dtype=np.int64)
            self._rank_to_neuron.append(perm)
            self._neuron_to_rank.append(inv)

    @property
    def orders(self) -> list[np.ndarray]:
        """Per layer, its neurons by rank (rank r -> neuron): all the rule is (a stored run keeps
        them, so it never depends on how a seed turns into a permutation)."""
        return list(self._rank_to_neuron)

    @classmethod
    def from_orders(cls, orders, seed: int = 0) -> "ChoiceRule":
        """The rule whose per-layer orders are ``orders`` (``orders`` of some rule)."""
        rule = cls.__new__(cls)
        rule.seed = int(seed)
        rule._rank_to_neuron = [np.asarray(o, dtype=np.int64) for o in orders]
        rule.widths = tuple(len(o) for o in rule._rank_to_neuron)
        rule._neuron_to_rank = []
        for perm in rule._rank_to_neuron:
            if not np.array_equal(np.sort(perm), np.arange(len(perm))):
                raise ValueError("a layer's order is not a permutation of its neurons")
            inv = np.empty(len(perm), dtype=np.int64)
            inv[perm] = np.arange(len(perm), dtype=np.int64)
            rule._neuron_to_rank.append(inv)
        return rule

    def direct(self, a: int, b: int, neurons) -> np.ndarray:
        """Target at layer b of the direct edge leaving each given neuron of layer a."""
        ranks = self._neuron_to_rank[a][np.asarray(neurons, dtype=np.int64)]
        return self._rank_to_neuron[b][ranks % self.widths[b]]

    def predecessor(self, a: int, b: int, neurons) -> np.ndarray:
        """Designated predecessor at layer a of each given neuron of layer b."""
        ranks = self._neuron_to_rank[b][np.asarray(neurons, dtype=np.int64)]
        return self._rank_to_neuron[a][ranks % self.widths[a]]
