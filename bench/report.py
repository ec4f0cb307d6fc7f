"""The report: growth fits over the width sweep, the baseline comparison, the Markdown text, and
writing results.md / results.json (the targets are judged by bench/targets.py).

``write_results(records, meta, full, out_prefix)`` derives everything from the case records, so
``run.py --render`` can redo it from an earlier results.json without running anything.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from cases import BASELINE_ENGINES, DEAH_ENGINES, SWEEP_FULL
from describe import baseline_estimate, bytes_per_weight, case_time, fbpw, details, dominant_stage, engine_key, fmb, fn, fs, ft, killed_at_s, md_table
from targets import judge, judge_networks

ROOT = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------------------------------------
# Growth fits


def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log(y) against log(x)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else None


def growth(records: list[dict], widths: tuple[int, ...]) -> list[dict]:
    out = []
    for kind in ("skeleton",) + DEAH_ENGINES:
        recs = [next((r for r in records if r["name"] == f"{kind}/dense-8x{w}"), None) for w in widths]
        recs = [r for r in recs if r is not None]
        if not recs:
            continue
        ok = [r for r in recs if r["status"] == "ok"]
        m = [r["network"]["m"] for r in ok]
        t = [r["result"]["total_s"] for r in ok]
        mem = [r["peak_rss_mb"] for r in ok]
        work = [max(r["peak_rss_mb"] - r["network"].get("rss_start_mb", 0.0), 0.01) for r in ok]
        g = {
            "engine": kind,
            "points": [{"width": int(r["net"].split("x")[1]), "m": r["network"]["m"], "time_s": r["result"]["total_s"],
                        "peak_rss_mb": r["peak_rss_mb"], "work_rss_mb": round(w, 1)} for r, w in zip(ok, work)],
            "time_slope": slope(m, t),
            "peak_rss_slope": slope(m, mem),
            "work_rss_slope": slope(m, work),
            "missing": [f"{r['net']} ({r['status']})" for r in recs if r["status"] != "ok"],
        }
        if kind == "skeleton":
            g["materialise_slope"] = slope(m, [r["result"]["timings"]["engine"] for r in ok])
        # Points killed after the last finished one still bound the growth from below: their time
        # was at least the time run until the kill, their peak RSS at least the peak up to the kill.
        g["bounds"] = []
        if ok:
            last = ok[-1]
            for big in recs[recs.index(last) + 1 :]:
                m_big = big["network"].get("m")
                if not m_big or big["status"] not in ("timeout", "memory-cap"):
                    continue
                lm = math.log(m_big / last["network"]["m"])
                start_big = big["network"].get("rss_start_mb", 0.0)
                start_last = last["network"].get("rss_start_mb", 0.0)
                g["bounds"].append({
                    "from": last["net"], "to": big["net"], "status": big["status"],
                    "time_s_at_least": round(killed_at_s(big), 3),
                    "time_slope_at_least": math.log(killed_at_s(big) / last["result"]["total_s"]) / lm,
                    "peak_rss_slope_at_least": math.log(big["peak_rss_mb"] / last["peak_rss_mb"]) / lm,
                    "work_rss_slope_at_least": math.log(max(big["peak_rss_mb"] - start_big, 0.01)
                                                        / max(last["peak_rss_mb"] - start_last, 0.01)) / lm,
                })
        out.append(g)
    return out


# ----------------------------------------------------------------------------------------------
# Baseline comparison


def baseline_rows(records: list[dict]) -> list[dict]:
    rows = []
    by = {r["name"]: r for r in records}
    for rec in records:
        if rec["kind"] == "baseline-all" and rec["status"] == "ok":
            r = rec["result"]
            rows.append({"network": rec["net"], "candidates": f"all {fn(r['candidates'])} paths", "baseline_s": r["baseline_s"],
                         "baseline_kind": "measured", "deah_s": r["deah_s"], "skeleton_s": r["skeleton_s"],
                         "ratio_deah": r["ratio_deah"], "ratio_skeleton": r["ratio_skeleton"], "ratio_kind": "measured",
                         "note": "same process; best of 3 full solves"})
        elif rec["kind"] == "baseline-all":
            rows.append({"network": rec["net"], "candidates": "all paths", "baseline_s": None, "baseline_kind": rec["status"],
                         "note": details(rec)})
    for rec in records:
        if rec["kind"] != "baseline":
            continue
        net = rec["net"]
        engine_recs = {eng: by.get(f"{eng}/{net}") for eng in BASELINE_ENGINES}
        engine_s = {eng: case_time(e) if e else None for eng, e in engine_recs.items()}
        row = {"network": net, **{f"{engine_key(eng)}_s": t for eng, t in engine_s.items()},
               "note": " / ".join(BASELINE_ENGINES) + ": their own cases of this run (full solve incl. certification)"}
        for eng, e in engine_recs.items():
            if e and engine_s[eng] is None:
                row["note"] += f"; {eng} case: {e['status']}"
        if rec["status"] == "ok":
            r = rec["result"]
            row.update(candidates=f"{fn(r['candidates'])} from B_r", baseline_s=r["total_s"], baseline_kind="measured",
                       ratio_kind="measured")
        elif rec["status"] == "timeout" and rec["progress"]:
            b = baseline_estimate(rec)
            row.update(candidates=f"{fn(b['total'])} from B_r", baseline_s=b["extrapolated_s"], baseline_kind="LINEAR EXTRAPOLATION",
                       ratio_kind="extrapolated", baseline_lower_bound_s=rec["timeout_s"],
                       fraction_done=b["fraction"])
            row["note"] = (f"did not finish within {ft(rec['timeout_s'])}: {100 * b['fraction']:.1f}% of the candidates"
                           f" processed; total extrapolated linearly. " + row["note"])
        else:
            row.update(candidates="-", baseline_s=None, baseline_kind=rec["status"], ratio_kind=None,
                       note=details(rec))
        bs = row.get("baseline_s")
        for eng, e in engine_recs.items():
            k, t = engine_key(eng), engine_s[eng]
            if e and e["status"] in ("timeout", "memory-cap") and bs and row.get("baseline_kind") == "measured":
                row[f"{k}_s_at_least"] = killed_at_s(e)
                row[f"ratio_{k}_at_most"] = bs / killed_at_s(e)
            row[f"ratio_{k}"] = bs / t if bs and t else None
            if row.get("baseline_lower_bound_s"):
                row[f"ratio_{k}_lower_bound"] = row["baseline_lower_bound_s"] / t if t else None
        rows.append(row)
    return rows

# ----------------------------------------------------------------------------------------------
# Report


def report(records, grow, base, targs, meta) -> str:
    L = [f"# Benchmark results ({meta['mode']})", ""]
    L.append(f"Generated {meta['generated']} on {meta['machine']}"
             + (f", commit {meta['commit']}" if meta.get("commit") else "") + f"; total elapsed {fs(meta['total_elapsed_s'])}"
             f" (suite budget {meta['budget_s'] / 60:.0f} min). Seed 0 everywhere.")
    if meta.get("rendered"):
        L.append(f"Report re-derived from the recorded cases on {meta['rendered']} (bench/run.py --render; nothing re-run).")
    L.append(f"Each case ran in its own process with a wall-clock timeout and a resident-memory cap of {fmb(meta['mem_cap_mb'])};"
             " peak memory is that process's ru_maxrss"
             " (for a killed case: the peak up to the kill). Times are wall clock (time.perf_counter) on a shared machine.")
    L += ["", "## Cases", ""]
    rows = []
    for r in records:
        net = r["network"]
        rows.append([r["name"], fn(net.get("m")), r["status"], fs(case_time(r)) if case_time(r) is not None else
                     (f"> {ft(r['timeout_s'])}" if r["status"] == "timeout" else "-"), dominant_stage(r), fmb(r["peak_rss_mb"]),
                     fbpw(bytes_per_weight(r)), details(r)])
    L.append(md_table(["case", "m", "status", "time", "dominant stage", "peak RSS", "bytes/weight", "details"], rows))
    L.append("")
    L.append("bytes/weight: peak RSS / m (the whole process: interpreter, numpy and the network included; a killed"
             " case's is a lower bound).")

    deah = [r for r in records if r["kind"] in DEAH_ENGINES]
    if deah:
        L += ["", "## DEAH per step (seconds)", ""]
        names = ["step1", "step2", "step3", "certify", "repair", "certificates"]
        rows = []
        for r in deah:
            if r["status"] == "ok":
                t = r["result"]["timings"]
                cells = [fs(t.get(n)) if n in t else "-" for n in names]
                res = r["result"]
                tail = [fs(res["total_s"]), fmb(r["peak_rss_mb"]), "yes" if res["certified"] else "NO",
                        "yes" if res["raw_certified"] else "no", fn(res["repairs_needed"] if r["kind"] == "deah-complete" else res["repairs"])]
            else:
                got: dict[str, tuple[float, bool]] = {}
                for s in r["stages"]:
                    prev = got.get(s["name"], (0.0, False))
                    got[s["name"]] = (prev[0] + s["seconds"], s["running_when_killed"])
                cells = []
                for n in names:
                    if n not in got:
                        cells.append("-")
                    else:
                        sec, running = got[n]
                        cells.append(f"> {fs(sec)} (killed)" if running else fs(sec))
                label = {"timeout": f"> {ft(r['timeout_s'])} (timeout)", "refused": "refused"}.get(r["status"], r["status"])
                tail = [label, fmb(r["peak_rss_mb"]), "-", "-", "-"]
            rows.append([r["kind"], r["net"], fn(r["network"].get("m"))] + cells + tail)
        L.append(md_table(["engine", "network", "m"] + names + ["total", "peak RSS", "certified", "raw DEAH certified", "repairs"], rows))
        L.append("")
        L.append("certify is summed over both certifications (raw union, then the repaired basis). deah-complete has no"
                 " repair stage: its union is certified once, and 'repairs' is the number the repair would make (must be 0)."
                 " For a killed case the"
                 " step times come from the stage starts the case reported; the step it was in is marked (killed).")

    if grow:
        L += ["", "## Growth over the width sweep (densenet depth 8)", ""]
        rows = []
        for g in grow:
            pts = ", ".join(f"w{p['width']}: {fs(p['time_s'])} / {fmb(p['peak_rss_mb'])}" for p in g["points"])
            def f2(x):
                return "-" if x is None else f"{x:.2f}"
            extra = ""
            if g.get("materialise_slope") is not None:
                extra = f"materialise alone: {f2(g['materialise_slope'])}"
            for b in g.get("bounds", []):
                extra += (("; " if extra else "") + f"{b['from']} -> {b['to']} ({b['status']}, ran {fs(b['time_s_at_least'])}):"
                          f" time >= {b['time_slope_at_least']:.2f}, peak RSS >= {b['peak_rss_slope_at_least']:.2f},"
                          f" RSS above start >= {b['work_rss_slope_at_least']:.2f}")
            rows.append([g["engine"], pts, f2(g["time_slope"]), f2(g["peak_rss_slope"]), f2(g["work_rss_slope"]), extra,
                         ", ".join(g["missing"]) or "-"])
        L.append(md_table(["engine", "points (time / peak RSS)", "time slope", "peak RSS slope", "RSS above start slope",
                           "other slopes", "not in the fit"], rows))
        L.append("")
        L.append("Slopes are least-squares fits of log(y) against log(m) over the finished points (1.0 = linear); a point"
                 " killed after the last finished one bounds the slope from below (its time is at least what it ran, its"
                 " peak RSS at least the peak up to the kill). "
                 "Time is the whole solve (skeleton: materialise + certify; deah, deah-complete: all steps). "
                 "'RSS above start' subtracts the process's RSS after imports and network build (interpreter + numpy).")

    if base:
        L += ["", "## Baseline: greedy exact elimination (IncrementalBasis, one path at a time)", ""]
        rows = []
        for b in base:
            bs = b.get("baseline_s")
            bt = "-" if bs is None else fs(bs) + (" (LINEAR EXTRAPOLATION)" if b.get("baseline_kind") == "LINEAR EXTRAPOLATION" else "")
            def rt(x, lbk):
                if x is None:
                    return "-"
                s = f"{x:.1f}x" + (" (extrap.)" if b.get("ratio_kind") == "extrapolated" else "")
                if b.get(lbk) is not None:
                    s += f", >= {b[lbk]:.1f}x measured"
                return s
            times, ratios = [], []
            for eng in BASELINE_ENGINES:
                k = engine_key(eng)
                times.append(fs(b.get(f"{k}_s")) if b.get(f"{k}_s") is not None else (
                    f"> {fs(b[f'{k}_s_at_least'])} (did not finish)" if b.get(f"{k}_s_at_least") is not None else "-"))
                ratio = rt(b.get(f"ratio_{k}"), f"ratio_{k}_lower_bound")
                if b.get(f"ratio_{k}_at_most") is not None and b.get(f"ratio_{k}") is None:
                    ratio = f"< {b[f'ratio_{k}_at_most']:.2f}x"
                ratios.append(ratio)
            rows.append([b["network"], b.get("candidates", "-"), bt] + times + ratios + [b.get("note", "")])
        L.append(md_table(["network", "candidates", "baseline time"] + [f"{e} time" for e in BASELINE_ENGINES]
                          + [f"baseline / {e}" for e in BASELINE_ENGINES] + ["note"], rows))
        L.append("")
        L.append("The baseline stops as soon as the rank reaches m - H. A linear extrapolation assumes the remaining"
                 " candidates cost what the processed ones did on average (elimination usually gets slower as the"
                 " pivot rows fill in, and the early stop can make it faster): it is an estimate, not a measurement.")

    if targs:
        L += ["", "## Targets", ""]
        L.append(md_table(["target", "measured", "verdict", "note"], [[t["target"], t["measured"], t["verdict"], t["note"]] for t in targs]))
        npass = sum(t["verdict"].startswith("PASS") for t in targs)
        nmiss = sum(t["verdict"].startswith("MISS") for t in targs)
        L += ["", f"{npass} PASS, {nmiss} MISS, {len(targs) - npass - nmiss} not measured."]
    L.append("")
    return "\n".join(L)


def write_results(records: list[dict], meta: dict, full: bool, out_prefix: Path) -> None:
    """Derive growth, baseline and targets from the case records; print and write the report."""
    grow = growth(records, SWEEP_FULL)  # whichever sweep points ran
    base = baseline_rows(records)
    # A partial run judges the targets of the issue 26 networks it measured (bench/specs/), no others.
    targs = judge(records, grow, base) if full else [] if meta["mode"].startswith("calibration") else judge_networks(records)
    text = report(records, grow, base, targs, meta)
    if not full:
        note = ("Only the targets of the torchvision networks and store cases measured here are judged; the others only by the full suite"
                if targs else "Targets are judged only by the full suite")
        text = text.replace("\n## Cases", f"\n{note} (`make bench`).\n\n## Cases", 1)
    print()
    print(text)
    out_prefix.with_suffix(".md").write_text(text, encoding="utf-8")
    out_prefix.with_suffix(".json").write_text(
        json.dumps({**meta, "cases": records, "growth": grow, "baseline": base, "targets": targs}, indent=2) + "\n",
        encoding="utf-8",
    )
    md = out_prefix.with_suffix(".md")
    print(f"wrote {md.relative_to(ROOT) if md.is_relative_to(ROOT) else md} and .json")
