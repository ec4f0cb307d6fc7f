"""Fit the resource estimates of basispath_graph/guards.py to the calibration runs.

    python bench/fit_estimates.py [CALIBRATION.json ...]   (default: bench/calibration.json)

For every engine, peak memory and time are modelled as ``fixed + per_weight * m + per_candidate
* candidates + per_connection * connections + per_neuron_depth * H x depth + per_candidate_layer *
candidate layers + per_later_candidate * later candidates + per_later_candidate_layer * later
candidate layers + per_call_layer * call layers + per_substructure_pair *
substructure pairs`` (candidates: the paths
in the B_r of the selected substructures, known after Step 1, and candidate layers, those paths
times the layers each visits: the DEAH engines'; the later ones: the same of the substructures
after p_0, faithful deah's; call layers: the rows x layers of the two B_r of each SDVChain call,
and substructure pairs (selected substructures squared), faithful deah's on a layer DAG; connections and H x depth: the skeleton's,
``guards.skeleton_features``). Each subset of the features is tried and
the one with the smallest worst ratio wins. The fit minimises the squared relative error with non-negative
coefficients (then centred on the worst ratios); it prints the models to paste into guards.py and, per record, measured / estimated.
tests/test_guards.py then holds guards.py to the same file: every ratio within [1/2, 2], and the
refusal threshold (``LOWEST``) never above a measured peak.
"""

from __future__ import annotations

import json
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from case import parse_net  # noqa: E402

from basispath_graph.guards import features, model_engine  # noqa: E402


def fit(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative coefficients: least squares of the relative error on each subset of columns,
    scaled so that the worst over- and under-estimate are alike; the subset with the smallest
    worst ratio wins."""
    best, best_err = None, np.inf
    n = X.shape[1]
    for k in range(1, n + 1):
        for cols in combinations(range(n), k):
            A = X[:, cols] / y[:, None]
            c, *_ = np.linalg.lstsq(A, np.ones(len(y)), rcond=None)
            if (c < 0).any():
                continue
            full = np.zeros(n)
            full[list(cols)] = c
            with np.errstate(divide="ignore"):
                ratio = y / (X @ full)
            if (ratio <= 0).any() or not np.isfinite(ratio).all():
                continue
            full *= np.sqrt(ratio.min() * ratio.max())  # centre the band: as far off above as below
            err = np.max(np.abs(np.log((X @ full) / y)))
            if err < best_err:
                best, best_err = full, err
    return best


def main() -> None:
    # several files: an engine's model is fitted to its records in all of them (faithful deah's
    # layered model to calibration.json and calibration-faithful.json, say)
    paths = [Path(p) for p in sys.argv[1:]] or [HERE / "calibration.json"]
    cases = [c for path in paths for c in json.loads(path.read_text())["cases"] if c["status"] == "ok"]
    by_engine: dict[str, list] = {}
    for c in cases:
        f = features(parse_net(c["net"]), c["kind"])  # m, candidates, connections, H x depth, candidate layers, later ones, call layers, substructure pairs
        # a record's model: its engine, or "deah-complete described" (guards.model_engine) where it ran described
        by_engine.setdefault(c.get("model", model_engine(parse_net(c["net"]), c["kind"])), []).append((c["net"], f, c["result"]["total_s"], c["peak_rss_mb"] * 2**20))
    for engine, rows in by_engine.items():
        X = np.array([[1.0, *f] for _, f, _, _ in rows], dtype=float)
        for what, col in (("seconds", 2), ("bytes", 3)):
            y = np.array([r[col] for r in rows], dtype=float)
            c = fit(X, y)
            ratio = y / (X @ c)
            lowest = np.floor(ratio.min() * 100) / 100
            print(f"{engine} {what}: CostModel({c[0]:.4g}, {c[1]:.4g}, {c[2]:.4g}, {lowest:.2f}, {c[3]:.4g}, {c[4]:.4g}, {c[5]:.4g}, {c[6]:.4g}, {c[7]:.4g}, {c[8]:.4g}, {c[9]:.4g})"
                  f"  measured/estimated {ratio.min():.2f} .. {ratio.max():.2f}")
            for (net, *_), r in zip(rows, ratio):
                print(f"    {net:16s} {r:.2f}")


if __name__ == "__main__":
    main()
