"""Weight vectors of paths and sums of certificates, computed independently of the product.

A path is a list of ``[layer, index]`` pairs; its weight vector is the multiset of the
weights (edges between consecutive visited neurons) it runs over, each with coefficient 1.
A certificate is a list of ``{"coef": int, "path": path}`` terms.
"""

from __future__ import annotations

from collections import Counter


def weight_vector(path) -> Counter:
    """The path's weights (edges between consecutive visited neurons), each with coefficient 1."""
    return Counter((tuple(a), tuple(b)) for a, b in zip(path, path[1:]))


def combination(certificate) -> dict:
    """The certificate's terms added up as weight vectors, without the weights that cancel."""
    total: Counter = Counter()
    for term in certificate:
        for edge, n in weight_vector(term["path"]).items():
            total[edge] += term["coef"] * n
    return {e: c for e, c in total.items() if c != 0}


def sums_to(certificate, path) -> bool:
    """Whether the certificate adds up to exactly the path's weight vector."""
    return combination(certificate) == dict(weight_vector(path))
