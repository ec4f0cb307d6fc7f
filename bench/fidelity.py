"""How often is faithful DEAH (no repair) a certified basis? Random networks by family.

Usage: python bench/fidelity.py [N] [--seed S]

Prints a table (family, networks, certified without repair, too many, too few, right size but
dependent, total repairs) and the smallest failing network found (fewest weights).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict

from basispath_graph.network import Network
from basispath_graph.solve import solve


def random_network(rng: random.Random, family: str) -> Network:
    L = rng.randint(2, 7)
    widths = [rng.randint(1, 5) for _ in range(L + 1)]
    if family == "mlp":
        skips = []
    elif family == "resnet":
        stride = rng.choice([2, 3])
        skips = [(a, a + stride) for a in range(0, L - stride + 1, stride)]
    elif family == "densenet":
        skips = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1)]
    else:  # random skips
        skips = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1) if rng.random() < 0.35]
    return Network.build(widths, skips)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    families = ["mlp", "resnet", "densenet", "random"]
    rows = defaultdict(lambda: defaultdict(int))
    smallest = None
    for k in range(args.n):
        family = families[k % len(families)]
        net = random_network(rng, family)
        r = solve(net, "deah", repair=True, certificates=False)
        row = rows[family]
        row["networks"] += 1
        raw = r.raw_verdict
        if raw.certified:
            row["certified"] += 1
        else:
            kind = "too_many" if raw.size > raw.expected else "too_few" if raw.size < raw.expected else "dependent"
            row[kind] += 1
            row["repairs"] += len(r.repairs)
            if smallest is None or net.m < smallest[0].m:
                smallest = (net, raw.defect, len(r.repairs))
        assert r.certified, f"repair failed on {net.to_dict()}"
    if args.json:
        print(json.dumps({f: dict(v) for f, v in rows.items()}))
        return
    print(f"{'family':10} {'networks':>8} {'certified':>9} {'too many':>8} {'too few':>7} {'dependent':>9} {'repairs':>7}")
    for f in families:
        v = rows[f]
        print(f"{f:10} {v['networks']:8} {v['certified']:9} {v['too_many']:8} {v['too_few']:7} {v['dependent']:9} {v['repairs']:7}")
    if smallest:
        net, defect, n = smallest
        print(f"smallest failure: {json.dumps(net.to_dict())} m={net.m}: {defect}; {n} repairs")


if __name__ == "__main__":
    main()
