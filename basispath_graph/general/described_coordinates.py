"""Coordinates of a path over a described deah-complete run's basis, without listing it
(``Result.why`` / ``express`` on a path the run never had; a stored run's ``why``).

A path q along core layers with taps t_j (tap 0 on the core's hops is the layered run's weight):

    q = q_0 + sum over hops j with t_j > 0 of [lift(u_j, v_j, t_j) - template(u_j, v_j)]

q_0 is q with every tap 0, a path of the core, written over the core's kept paths by the ear
recursion (``deah/ear_recursion.py``, which expresses any core path); lift(u, v, t) is the tap
lift's path of the weight (u, v, t) (``deah_solve.TapLiftPart``), template(u, v) the kept core path
it was lifted from: the two differ in that one weight only. Every term is found by index
arithmetic, and the sum is re-added by vector addition (``verified``). A path through an extra
layer or an identity hop is not handled here (None): the caller expresses it over the listed
basis when that is small, and refuses it when not (``DESCRIBED_COORDINATES_LISTED``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..analysis.general_coordinates import check_general_certificate
from .blocks import general_path_json
from .described_lookup import core_path, lift_terms
from .paths import format_general_path

__all__ = ["described_coordinates", "DESCRIBED_COORDINATES_LISTED"]

#: Above this many basis paths a described run's basis is not listed to express a path the
#: arithmetic above does not cover (ResNet-50's 25.5 M paths listed took over 22 GB).
DESCRIBED_COORDINATES_LISTED = 1_000_000


def described_coordinates(result, target) -> dict | None:
    """``general_coordinates``'s answer for ``target`` over a described DEAH result's basis, or
    None when the path leaves the core's layers or takes an identity hop."""
    from ..deah.on_demand_certificates import OnDemandCertificates

    core = result.core
    nodes, taps = target
    if None in taps:  # an identity hop
        return None
    found = core_path(result, (nodes, tuple(0 for _ in taps)))
    if found is None:  # an extra layer
        return None
    layers, indices = found
    net = result.network
    expander = core.discarded.on_demand if getattr(core.discarded, "on_demand", None) is not None else \
        OnDemandCertificates(core.network, core.deah, core.basis)
    total: Counter = Counter(dict(expander.express(layers, np.asarray([indices], dtype=np.int64))))
    for j, t in enumerate(taps):
        if t:
            terms = lift_terms(result, (layers[j], layers[j + 1]), indices[j], indices[j + 1], int(t))
            if terms is None:
                return None
            total[terms[0]] += 1
            total[terms[1]] -= 1
    coefs = sorted((i, c) for i, c in total.items() if c)
    paths = [(c, result.basis_path(i)) for i, c in coefs]
    return {
        "path": general_path_json(net, target),
        "text": format_general_path(net, target),
        "coordinates": [{"coef": c, "path": general_path_json(net, p), "text": format_general_path(net, p), "index": i}
                        for (i, c), (_, p) in zip(coefs, paths)],
        "verified": check_general_certificate(net, target, paths),
    }
