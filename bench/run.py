"""Benchmark suite: every case in its own subprocess (bench/case.py) with a wall-clock timeout.

Usage:
    python bench/run.py                 # the full suite (about 15-20 minutes on 2 cores)
    python bench/run.py --quick         # small sizes only, a fast check (about 2 minutes)
    python bench/run.py --only deah/dense-8x128 [--only 'skeleton/*']
    python bench/run.py --list          # the case names
    python bench/run.py --render bench/results.json   # redo the report from recorded cases

Writes a readable report to stdout and to bench/results.md + bench/results.json (full suite) or
bench/results-partial.md / .json (--quick / --only; see --out). A case that exceeds its timeout is
killed and reported as "did not finish within N s", with the stage it had reached. Peak memory is
the ru_maxrss of the case's own process (os.wait4), also for killed cases (peak until the kill).

This is the command line only; the work is in cases.py (which cases), runner.py (running them),
describe.py (what a record says), targets.py (the targets table and verdicts) and report.py
(growth, baseline, the Markdown and JSON). bench/README.md describes the layout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from cases import FULL_BUDGET_S, FULL_CASES, QUICK_BUDGET_S, QUICK_CASES, select_cases
from report import write_results
from runner import run_suite

HERE = Path(__file__).resolve().parent


def memory_text() -> str:
    """' 24 GB memory,' (MemTotal), or '' where /proc/meminfo cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(line for line in f if line.startswith("MemTotal:")).split()[1])
        return f" {kb / 2**20:.0f} GB memory,"
    except (OSError, StopIteration, ValueError):
        return ""


def commit() -> str | None:
    """The checked-out commit (short hash, '+ local changes' when the tree differs), or None."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + (" + local changes" if dirty else "")


def main() -> None:
    ap = argparse.ArgumentParser(description="basispath_graph benchmark suite (see bench/README.md)")
    ap.add_argument("--quick", action="store_true", help="small sizes only (width sweep 32, 64), about 2 minutes")
    ap.add_argument("--calibration", action="store_true",
                    help="the resource estimator's measurements (every engine, dense and resnet 8xW, W 32-512): bench/calibration.json")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="run only these cases: a name (deah/dense-8x128), a glob ('skeleton/*'), a comma list, or any"
                         " KIND/NET (e.g. deah/resnet-8x16, store-deah-complete/dense-8x64); repeatable")
    ap.add_argument("--list", action="store_true", help="list the case names and exit")
    ap.add_argument("--out", help="output prefix (default bench/results for the full suite, bench/results-partial otherwise)")
    ap.add_argument("--timeout-scale", type=float, default=1.0, help="multiply every case timeout (default 1)")
    ap.add_argument("--mem-cap-gb", type=float, default=12.0,
                    help="kill a case whose resident memory exceeds this (default 12 GB; reported as memory-cap)")
    ap.add_argument("--render", metavar="RESULTS_JSON",
                    help="run nothing: re-derive the report (growth, baseline, targets) from the case records of an"
                         " earlier results .json and rewrite it and its .md")
    args = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C: the running case is killed and a local Neo4j started for it stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.render:
        path = Path(args.render)
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = {k: data[k] for k in ("generated", "mode", "machine", "commit", "total_elapsed_s", "budget_s", "mem_cap_mb") if k in data}
        meta.setdefault("mem_cap_mb", args.mem_cap_gb * 1024)
        meta["rendered"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        write_results(data["cases"], meta, data.get("mode") == "full suite", path.with_suffix(""))
        return
    if args.list:
        print("full suite:")
        for c in FULL_CASES:
            print(f"  {c['name']:34} timeout {c['timeout']} s")
        print("--quick:")
        for c in QUICK_CASES:
            print(f"  {c['name']:34} timeout {c['timeout']} s")
        return
    cases, mode = select_cases(args.only, args.quick, args.calibration)
    full = not args.quick and not args.only and not args.calibration
    budget = 45 * 60 if args.calibration else FULL_BUDGET_S if not args.quick else QUICK_BUDGET_S
    out_prefix = Path(args.out) if args.out else HERE / ("results" if full else "calibration" if args.calibration else "results-partial")

    def log(msg: str) -> None:
        print(msg, flush=True)

    started = time.perf_counter()
    log(f"basispath_graph benchmarks: {mode}, {len(cases)} case(s), suite budget {budget / 60:.0f} min")
    records = run_suite(cases, budget, args.timeout_scale, args.mem_cap_gb * 1024, log)
    total = time.perf_counter() - started
    meta = {
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "mode": mode,
        "machine": f"{platform.node()} ({platform.system()} {platform.machine()}, {os.cpu_count()} CPUs,"
                   f"{memory_text()} Python {platform.python_version()})",
        "commit": commit(),
        "total_elapsed_s": round(total, 1),
        "budget_s": budget,
        "mem_cap_mb": args.mem_cap_gb * 1024,
    }
    write_results(records, meta, full, out_prefix)
    print(f"total elapsed: {total:.1f} s ({total / 60:.1f} min)")


if __name__ == "__main__":
    main()
