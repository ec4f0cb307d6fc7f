"""Faithful DEAH vs deah-complete on random networks by family, plus every preset (`make fidelity`).

Usage: python bench/fidelity.py [N] [--seed S] [--jobs J] [--json] [--out FILE]

For each network: faithful DEAH (certified without repair? how many repairs?) and deah-complete
without repair (certified? which Step 3 rules? certificate sizes, every certificate checked by
vector addition inside ``solve``). A deah-complete network that is not certified without repair
or whose certificates had to come from the global Expresser is printed as a BUG and the exit
code is 1.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from multiprocessing import Pool

from basispath_graph.discarded import certificate_lengths
from basispath_graph.network import Network
from basispath_graph.presets import FAMILIES as PRESET_FAMILIES, PresetError, preset_network
from basispath_graph.solver import solve

FAMILIES = ["mlp", "resnet", "resnet-every", "densenet", "random", "random-any"]


def random_network(rng: random.Random, family: str) -> Network:
    L = rng.randint(2, 7)
    widths = [rng.randint(1, 5) for _ in range(L + 1)]
    pairs = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1)]
    if family == "mlp":
        skips = []
    elif family == "resnet":
        stride = rng.choice([2, 3])
        skips = [(a, a + stride) for a in range(0, L - stride + 1, stride)]
    elif family == "resnet-every":  # a skip over every two layers, starting at every layer
        skips = [(a, a + 2) for a in range(L - 1)]
    elif family == "densenet":
        skips = pairs
    elif family == "random":
        skips = [p for p in pairs if rng.random() < 0.35]
    else:  # any density
        density = rng.random()
        skips = [p for p in pairs if rng.random() < density]
    return Network.build(widths, skips)


def preset_networks() -> list[tuple[str, Network]]:
    out = []
    for name in sorted(PRESET_FAMILIES):
        for depth in (3, 4, 6, 8, 10):
            for width in (2, 3):
                for stride in ((2, 3) if name == "stride" else (None,)):
                    try:
                        out.append((f"preset:{name}", preset_network(name, depth, width, stride=stride)))
                    except PresetError:
                        continue
    return out


def measure(item: tuple[str, dict]) -> dict:
    family, spec = item
    net = Network.build(spec["widths"], spec["skips"])
    faithful = solve(net, "deah", repair=True, certificates=False)
    complete = solve(net, "deah-complete", repair=False)
    return {
        "family": family,
        "spec": spec,
        "m": net.m,
        "faithful_certified": faithful.raw_verdict.certified,
        "faithful_repairs": len(faithful.repairs),
        "complete_certified": complete.certified,
        "complete_repairs": complete.repairs_needed,
        "complete_defect": complete.verdict.defect,
        "rules": dict(Counter(complete.deah.step3.rules.values())),
        "cert_sizes": _sizes(certificate_lengths(complete.discarded)),
        "cert_method": complete.certificate_method,
    }


def _sizes(lengths) -> dict:
    """Discards per certificate size; none when the certificates are made when read (a repaired run)."""
    return {} if lengths is None else dict(Counter(lengths.tolist()))


def _global(r: dict) -> bool:
    """Did deah-complete need certificates by global elimination (only a repaired run does)?"""
    return (r["cert_method"] or "").startswith("global elimination")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", help="also write the printed report to this file")
    args = ap.parse_args()
    report = _run(args)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(report["text"] + "\n")
    print(report["text"])
    for r in report["bugs"]:
        what = "global certificates" if _global(r) else f"a repair ({r['complete_defect']})"
        print(f"BUG: deah-complete needs {what} on {json.dumps(r['spec'])}", file=sys.stderr)
    return 1 if report["bugs"] else 0


def _run(args) -> dict:
    rng = random.Random(args.seed)
    items = []
    for k in range(args.n):
        family = FAMILIES[k % len(FAMILIES)]
        net = random_network(rng, family)
        items.append((family, {"widths": list(net.widths), "skips": [list(s) for s in net.skips]}))
    for family, net in preset_networks():
        items.append(("presets", {"widths": list(net.widths), "skips": [list(s) for s in net.skips]}))
    with Pool(args.jobs) as pool:
        results = pool.map(measure, items, chunksize=16)

    rows: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    sizes: dict[str, Counter] = defaultdict(Counter)
    bugs = []
    for r in results:
        row = rows[r["family"]]
        row["networks"] += 1
        row["faithful_certified"] += r["faithful_certified"]
        row["faithful_repairs"] += r["faithful_repairs"]
        row["complete_certified"] += r["complete_certified"] and r["complete_repairs"] == 0
        row["complete_repairs"] += r["complete_repairs"]
        row["only_ear_rules"] += set(r["rules"]) <= {"p0", "ear"}
        row["local_rule"] += "local" in r["rules"]
        row["global_certs"] += _global(r)
        for size, n in r["cert_sizes"].items():
            sizes[r["family"]][int(size)] += n
        if not r["complete_certified"] or r["complete_repairs"] or _global(r):
            bugs.append(r)
    table = {}
    for family, row in rows.items():
        s = sizes[family]
        total = sum(s.values())
        row["cert_max"] = max(s, default=0)
        row["cert_mean"] = round(sum(k * n for k, n in s.items()) / total, 2) if total else 0
        table[family] = dict(row)
    lines: list[str] = []
    if args.json:
        lines.append(json.dumps({"table": table, "sizes": {f: dict(sorted(s.items())) for f, s in sizes.items()}, "bugs": bugs}))
    else:
        lines.append(f"{args.n} random networks (seed {args.seed}, L 2..7, widths 1..5) and {len(preset_networks())} preset networks.\n")
        head = ("family", "networks", "DEAH certified", "DEAH repairs", "complete certified", "complete repairs",
                "ear rules only", "local rule used", "global certificates", "cert max", "cert mean")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        order = [f for f in FAMILIES + ["presets"] if f in table]
        for f in order + ["all"]:
            if f == "all":
                v = {k: sum(table[x][k] for x in order) for k in ("networks", "faithful_certified", "faithful_repairs",
                                                                   "complete_certified", "complete_repairs",
                                                                   "only_ear_rules", "local_rule", "global_certs")}
                s = sum((sizes[x] for x in order), Counter())
                v["cert_max"] = max(s, default=0)
                v["cert_mean"] = round(sum(k * n for k, n in s.items()) / max(sum(s.values()), 1), 2)
            else:
                v = table[f]
            lines.append(f"| {f} | {v['networks']} | {v['faithful_certified']} | {v['faithful_repairs']} | {v['complete_certified']} | "
                  f"{v['complete_repairs']} | {v['only_ear_rules']} | {v['local_rule']} | {v['global_certs']} | {v['cert_max']} | {v['cert_mean']} |")
        all_sizes = sum(sizes.values(), Counter())
        lines.append("\ncertificate sizes (basis paths per certificate: discards): "
                     + ", ".join(f"{k}: {n}" for k, n in sorted(all_sizes.items())))
    return {"text": "\n".join(lines), "bugs": bugs}


if __name__ == "__main__":
    sys.exit(main())
