#!/usr/bin/env python3
"""How often faithful deah's raw union is a basis on random layer DAGs (docs/deah-interpretation.md,
D.5-D.6): the property test's generator (``tests/test_dag_deah.layer_dag_specs``), derandomised, so
the figures in the docs come out again.

Usage:  .venv/bin/python tools/faithful_dag_census.py [EXAMPLES]     (default 400)
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from basispath_graph import solve_general  # noqa: E402
from basispath_graph.general.model import parse_general  # noqa: E402
from tests.test_dag_deah import layer_dag_specs  # noqa: E402


def main(examples: int) -> None:
    verdicts: Counter = Counter()
    actions: Counter = Counter()

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(spec=layer_dag_specs())
    def census(spec):
        net = parse_general(spec, "<spec>", 10**6)
        r = solve_general(net, "deah")
        if r.sdvchain is None:
            verdicts["layered core (the layered engine's)"] += 1
            return
        assert r.certified
        raw = r.raw_verdict
        verdicts["raw union a basis" if raw.certified else "over m - H" if raw.size > net.basis_size
                 else "under m - H" if raw.size < net.basis_size else "m - H, dependent"] += 1
        actions.update(x.action for x in r.repairs)

    census()
    dags = sum(n for k, n in verdicts.items() if not k.startswith("layered"))
    print(f"{sum(verdicts.values())} networks drawn, {dags} layer DAGs")
    for k, n in sorted(verdicts.items()):
        print(f"  {k}: {n}" + (f" ({100 * n / dags:.0f}% of the DAGs)" if not k.startswith("layered") else ""))
    print("repairs: " + ", ".join(f"{a} {actions[a]}" for a in ("drop", "readmit", "add")) + "; every basis certified")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
