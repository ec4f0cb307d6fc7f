"""The targets of the issue, judged from the case records: one row per target in ``TABLE``.

Each row holds its limit once; the label the report prints is generated from it
(``Target.label``), and every verdict compares against ``Target.limit``. ``judge(records, grow,
base)`` returns ``[{"target", "measured", "verdict", "note"}, ...]`` in the report's order:
PASS, MISS (with how far off), or NOT MEASURED when no case proves either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cases import BASELINE_ENGINES, DEAH_ENGINES, SPEC_NETS, SWEEP_FULL, store_engine, store_name
from describe import (bytes_per_weight, details, dominant_stage, engine_key, fmb, fn, frate, fs, ft, killed_at_s, partial_write, server_text,
                      shortened_text, stage_text, timeout_text)


def _si(x: float) -> str:
    """3e6 -> '3M', 2e5 -> '200k'."""
    if x >= 1e6:
        return f"{x / 1e6:g}M"
    if x >= 1e3:
        return f"{x / 1e3:g}k"
    return f"{x:g}"


LIMIT_TEXT = {  # unit -> how a limit reads in a label
    "s": lambda x: f"{x:g} s",
    "min": lambda x: f"{x / 60:g} min",  # the limit is in seconds
    "GB": lambda x: f"{x:g} GB",
    "rate": _si,  # per second; the label says of what
    "x": lambda x: f"{x:g}x",
    "number": lambda x: f"{x:g}",
    "us": lambda x: f"{x * 1e6:g} µs",  # the limit is in seconds
    "B": lambda x: f"{x:g} bytes",
}


@dataclass(frozen=True)
class Target:
    key: str
    template: str  # {limit}: the limit as LIMIT_TEXT[unit] writes it; {net}: the network; others given to label()
    limit: float
    unit: str
    net: str = ""
    base: float = 0.0  # a fixed part beside the limit per unit (net-memory: 0.5 GB + 64 bytes per weight)

    @property
    def limit_text(self) -> str:
        return LIMIT_TEXT[self.unit](self.limit)

    def label(self, **fields) -> str:
        return self.template.format(limit=self.limit_text, net=self.net, base=f"{self.base:g}", **fields)


TABLE = (
    Target("skeleton-rate", "skeleton >= {limit} basis paths/s materialised", 3e6, "rate", "dense-8x256"),
    Target("skeleton-time", "skeleton {net} <= {limit}", 1.0, "s", "dense-8x256"),
    # Faithful deah and deah-complete alike ({eng}):
    Target("deah-time", "{eng} {net} solved and certified <= {limit}", 20.0, "s", "dense-8x256"),
    Target("deah-memory", "{eng} {net} peak memory <= {limit}", 4.0, "GB", "dense-8x256"),
    Target("deah-resnet", "{eng} {net} <= {limit}", 20.0, "s", "resnet-32x128"),
    Target("step1", "deah Step 1 on {net} <= {limit} without materialising all of P^S", 10.0, "s", "deep-32x16"),
    Target("certify", "certify the 2.36M-path {net} skeleton basis <= {limit}", 20.0, "s", "dense-8x256"),
    # issue 30: LadybugDB >= 600 k rows/s on a listed run; run <= 3x solve (dense-8x128, ResNet-50)
    Target("store-rate", "embedded store >= {limit} rows/s written (paths and relationships){run}", 6e5, "rate", "dense-8x128"),
    Target("run-vs-solve", "basispath run ({eng}) of {net} within {limit} of its solve", 3.0, "x", "dense-8x128"),
    Target("store-run", "embedded store: full {eng} run of {net} <= {limit}", 120.0, "min", "dense-8x128"),
    Target("neo4j-rate", "Neo4j store >= {limit} rows/s over Bolt (deah-complete run of {net})", 1.5e5, "rate", "dense-8x128"),
    Target("neo4j-vs-embedded", "Neo4j store: the deah-complete run of {on} stored within {limit} of the embedded store's time", 5.0, "x"),
    Target("growth-time", "growth: {eng} time slope <= {limit} (linear)", 1.1, "number"),
    Target("growth-memory", "growth: {eng} memory slope <= {limit} (linear)", 1.1, "number"),
    Target("baseline", "baseline / {eng} >= {limit} on {net}", 100.0, "x", "dense-8x128"),
    Target("complete-vs-deah", "deah-complete within {limit} of faithful deah's time{on}", 2.0, "x"),
    Target("complete-vs-skeleton", "deah-complete within {limit} of the skeleton engine on {on}", 3.0, "x"),
    # issue 28: deah-complete's peak memory against the skeleton's on the torchvision networks
    Target("complete-vs-skeleton-memory", "deah-complete peak memory within {limit} of the skeleton's on {on}", 2.0, "x"),
    Target("deah-128", "faithful deah {net} solved and certified <= {limit}", 30.0, "s", "dense-8x128"),
    Target("complete-repairs", "deah-complete: {limit} repairs{which}", 0, "number"),
    Target("general-time", "skeleton basis of {net} (channel level, biases) built and certified <= {limit}", 60.0, "s", "resnet18"),
    Target("general-memory", "skeleton basis of {net} peak memory <= {limit}", 8.0, "GB", "resnet18"),
    # issue 26, on the torchvision networks of bench/specs/ (cases.SPEC_NETS), every engine:
    Target("net-memory", "{eng} on {on}: peak memory <= {base} GB + {limit} per weight", 64.0, "B", base=0.5),
    Target("net-skeleton-time", "skeleton on {on} certified in <= {limit} per weight", 2e-6, "us"),
    Target("net-depth-memory", "skeleton bytes per weight flat with depth: {net} vs {deep} within {limit}", 1.5, "x", "resnet18"),
    # issue 29: a G-SGD step (forward, backward, step) against SGD's on the same model, CPU
    Target("gsgd-skeleton", "G-SGD step (skeleton basis) within {limit} of SGD's on {on}", 1.5, "x"),
    Target("gsgd-deah-complete", "G-SGD step (deah-complete basis) within {limit} of SGD's on {on}", 2.0, "x"),
)
DEEP = "resnet152"  # the deep end of net-depth-memory
# The largest deah-complete run of the suite stored listed (under described_rows.LISTED_PATHS
# paths): dense-8x128's is stored described since issue 30.
LISTED_NET = "dense-8x64"
T = {t.key: t for t in TABLE}


def _upper(measured: float | None, limit: float, unit: str = "s") -> str:
    if measured is None:
        return "NOT MEASURED"
    if measured <= limit:
        return "PASS"
    return f"MISS by {measured - limit:.3g} {unit} ({measured / limit:.1f}x the target)"


def _lower(measured: float | None, limit: float) -> str:
    if measured is None:
        return "NOT MEASURED"
    if measured >= limit:
        return "PASS"
    return f"MISS: {100 * measured / limit:.0f}% of the target ({limit / measured:.1f}x short)"


class Verdicts:
    """The rows judged so far, and how a case that is missing or did not finish reads."""

    def __init__(self, records: list[dict]):
        self.records = records
        self.by = {r["name"]: r for r in records}
        self.out: list[dict] = []

    def add(self, target, measured, verdict, note=""):
        self.out.append({"target": target, "measured": measured, "verdict": verdict, "note": note})

    @staticmethod
    def missing(name):
        return f"case {name} not run"

    @staticmethod
    def not_ok(rec, limit=None):
        """(measured, verdict) for a case that did not finish normally."""
        if rec["status"] == "memory-cap":
            t = killed_at_s(rec)
            return (f"{rec['error']}, after {fs(t)} unfinished" + stage_text(rec).split("; finished before it")[0],
                    "MISS: over the memory cap" + (f", and > {t / limit:.1f}x the time target" if limit and t > limit else ""))
        if rec["status"] == "timeout":
            return (f"did not finish within {ft(rec['timeout_s'])}" + shortened_text(rec),
                    "MISS" + (f": > {rec['timeout_s'] / limit:.3g}x the target" if limit else ""))
        if rec["status"] == "refused":
            return (rec["result"]["message"], "MISS: refused")
        if rec["status"] == "skipped":  # never ran: proves nothing
            return (rec.get("error") or "skipped", "NOT MEASURED (skipped: suite budget used up)")
        return (rec.get("error") or rec["status"], f"MISS: {rec['status']}")

    def single(self, name, target, limit, on_ok):
        """One target measured by one case: not run, finished (``on_ok(result)``), or not."""
        rec = self.by.get(name)
        if rec is None:
            self.add(target, "-", "NOT MEASURED", self.missing(name))
        elif rec["status"] == "ok":
            self.add(target, *on_ok(rec["result"]))
        else:
            self.add(target, *self.not_ok(rec, limit))


def _certified_within(r, seconds, limit, what):
    verdict = _upper(seconds, limit) if r["certified"] else "MISS: not certified"
    return f"{what}, " + ("certified" if r["certified"] else "NOT certified"), verdict


def judge_skeleton(v: Verdicts) -> None:
    """Skeleton throughput and time on dense-8x256."""
    rate, time = T["skeleton-rate"], T["skeleton-time"]
    name = f"skeleton/{rate.net}"
    rec = v.by.get(name)
    if rec is None:
        v.add(rate.label(), "-", "NOT MEASURED", v.missing(name))
        v.add(time.label(), "-", "NOT MEASURED", v.missing(name))
    elif rec["status"] != "ok":
        m, verdict = v.not_ok(rec, time.limit)
        v.add(rate.label(), m, verdict)
        v.add(time.label(), m, verdict)
    else:
        r = rec["result"]
        others = [x for x in v.records if x["kind"] == "skeleton" and x["status"] == "ok"]
        lo = min(others, key=lambda x: x["result"]["paths_per_s"] or 0)
        v.add(rate.label(), f"{frate(r['paths_per_s'], 'paths')} on {rate.net}",
              _lower(r["paths_per_s"], rate.limit), f"slowest skeleton case: {lo['net']} {frate(lo['result']['paths_per_s'], 'paths')}")
        v.add(time.label(), f"materialise {fs(r['timings']['engine'])}", _upper(r["timings"]["engine"], time.limit),
              f"with exact certification: {fs(r['total_s'])}")


def judge_deah(v: Verdicts, eng: str) -> None:
    """The deah targets of the issue (dense-8x256 time and memory, resnet-32x128 time) for one engine."""
    time, mem, resnet = T["deah-time"], T["deah-memory"], T["deah-resnet"]
    name = f"{eng}/{time.net}"
    rec = v.by.get(name)
    if rec is None:
        v.add(time.label(eng=eng), "-", "NOT MEASURED", v.missing(name))
        v.add(mem.label(eng=eng), "-", "NOT MEASURED", v.missing(name))
    elif rec["status"] == "ok":
        r = rec["result"]
        verdict = _upper(r["total_s"], time.limit) if r["certified"] else "MISS: not certified"
        v.add(time.label(eng=eng), f"{fs(r['total_s'])}, " + ("certified" if r["certified"] else "NOT certified"), verdict)
        v.add(mem.label(eng=eng), fmb(rec["peak_rss_mb"]), _upper(rec["peak_rss_mb"] / 1024, mem.limit, "GB"))
    else:
        m, verdict = v.not_ok(rec, time.limit)
        v.add(time.label(eng=eng), m, verdict)
        if rec["status"] == "skipped" or rec["peak_rss_mb"] is None:
            v.add(mem.label(eng=eng), "-", f"NOT MEASURED ({rec['status']})", m)
        else:
            peak_gb = rec["peak_rss_mb"] / 1024
            v.add(mem.label(eng=eng), f"{fmb(rec['peak_rss_mb'])} until it stopped",
                  f"MISS by {peak_gb - mem.limit:.3g} GB (already over before it stopped)" if peak_gb > mem.limit
                  else "NOT MEASURED (did not finish)",
                  "peak RSS up to the kill is a lower bound of the real peak")
    v.single(f"{eng}/{resnet.net}", resnet.label(eng=eng), resnet.limit,
             lambda r: _certified_within(r, r["total_s"], resnet.limit, fs(r["total_s"])))


def judge_step1_and_certify(v: Verdicts) -> None:
    step1, certify = T["step1"], T["certify"]

    def step1_outcome(r):
        verdict = _upper(r["total_s"], step1.limit)
        if r["ps_materialised"] >= r["ps_total"]:
            verdict = "MISS: materialised all of P^S" + ("" if verdict == "PASS" else f"; time {verdict}")
        return f"{fs(r['total_s'])}; {fn(r['ps_materialised'])} of {fn(r['ps_total'])} substructure paths materialised", verdict

    v.single(f"step1/{step1.net}", step1.label(), step1.limit, step1_outcome)
    v.single(f"certify/{certify.net}", certify.label(), certify.limit,
             lambda r: _certified_within(r, r["certify_s"], certify.limit, f"{fs(r['certify_s'])} for {fn(r['paths'])} paths"))


def judge_store(v: Verdicts, eng: str, net: str | None = None) -> None:
    """The embedded store: write rate and the whole run of ``net`` (dense-8x128), for one engine.
    A run stored described (issue 30) writes a few rows: its rate is not judged, its time is."""
    rate, run = T["store-rate"], T["store-run"]
    net = net or run.net
    name = store_name(eng, net)
    on = "" if net == run.net else f" of {net}"
    rate_target = rate.label(run="" if eng == "deah" and not on else f" ({eng} run{on})")
    run_target = replace(run, net=net).label(eng=eng)
    rec = v.by.get(name)
    if rec is None:
        v.add(rate_target, "-", "NOT MEASURED", v.missing(name))
        v.add(run_target, "-", "NOT MEASURED", v.missing(name))
    elif rec["status"] == "ok":
        r = rec["result"]
        if r.get("stored_as") != "described":
            v.add(rate_target,
                  f"{frate(r['rows_per_s'], 'rows')} ({fn(r['rows_written'])} rows in {fs(r['persist_s'])})", _lower(r["rows_per_s"], rate.limit),
                  f"paths alone: {frate(r['paths_per_s'], 'paths')}")
        v.add(run_target, fs(r["total_s"]), _upper(r["total_s"], run.limit),
              "steps: " + ", ".join(f"{k} {fs(x)}" for k, x in r["timings"].items()))
    else:
        m, verdict = v.not_ok(rec, run.limit)
        pw = partial_write(rec)
        if pw:
            v.add(rate_target,
                  f">= {frate(pw['rows_per_s'], 'rows')} ({fn(pw['rows'])} bulk rows completed in {fs(pw['persist_s'])} before the kill)",
                  "PASS (lower bound; persist did not finish)" if pw["rows_per_s"] >= rate.limit else "NOT MEASURED (the run did not finish;"
                  f" the lower bound {frate(pw['rows_per_s'], 'rows')} decides nothing)",
                  "all bulk rows completed before the kill, incl. discard records; " + timeout_text(rec))
        else:
            v.add(rate_target, m, "NOT MEASURED (the run did not finish)",
                  timeout_text(rec) if rec["status"] == "timeout" else "")
        v.add(run_target, m, verdict)


def judge_run_vs_solve(v: Verdicts, eng: str, net: str | None = None) -> None:
    """The whole stored run against the solve alone, same network, same bench run."""
    t = T["run-vs-solve"]
    net = net or t.net
    run, solve = v.by.get(store_name(eng, net)), v.by.get(f"{eng}/{net}")
    target = replace(t, net=net).label(eng=eng)
    if run is None or solve is None or run["status"] != "ok" or solve["status"] != "ok":
        v.add(target, "-", "NOT MEASURED", "both cases must finish: " + ", ".join(
            f"{n}: {x['status'] if x else 'not run'}" for n, x in ((store_name(eng, net), run), (f"{eng}/{net}", solve))))
        return
    rt, st = run["result"]["total_s"], solve["result"]["total_s"]
    v.add(target, f"{rt / st:.1f}x ({fs(rt)} vs {fs(st)})", "PASS" if rt / st <= t.limit else f"MISS: {rt / st:.1f}x > {t.limit_text}",
          f"persist {fs(run['result']['persist_s'])}; run = solve + Step 1 relations + persist")


def judge_complete_vs_skeleton(v: Verdicts, nets: list[str] | None = None) -> None:
    """deah-complete against the skeleton engine (both with certification) wherever both ran
    (``nets``: only these). A deah-complete case refused, over the memory cap, or killed by its
    timeout after more than the limit times the skeleton's time is a MISS."""
    t = T["complete-vs-skeleton"]
    if nets is None:
        nets = [r["net"] for r in v.records if r["kind"] == "deah-complete"]
    for net in nets:
        c, k = v.by.get(f"deah-complete/{net}"), v.by.get(f"skeleton/{net}")
        target = t.label(on=net)
        if k is None or c is None:
            continue
        if k["status"] == "ok" and c["status"] in ("refused", "memory-cap", "timeout"):
            kt = k["result"]["total_s"]
            measured, verdict = v.not_ok(c)
            ran = c["timeout_s"] if c["status"] == "timeout" else killed_at_s(c)
            if c["status"] == "timeout" and ran / kt <= t.limit:
                v.add(target, measured, "NOT MEASURED", f"timed out after {fs(ran)}, not yet {t.limit_text} the skeleton's {fs(kt)}")
            else:
                v.add(target, measured, verdict + (f" (> {ran / kt:.0f}x the skeleton's {fs(kt)})" if c["status"] == "timeout" else ""),
                      f"skeleton {fs(kt)}")
            continue
        if c["status"] != "ok" or k["status"] != "ok":
            v.add(target, "-", "NOT MEASURED", f"deah-complete: {c['status']}, skeleton: {k['status']}")
            continue
        ct, kt = c["result"]["total_s"], k["result"]["total_s"]
        top = dominant_stage(c)
        v.add(target, f"{ct / kt:.2f}x ({fs(ct)} vs {fs(kt)})", "PASS" if ct / kt <= t.limit else f"MISS: {ct / kt:.2f}x > {t.limit_text}",
              f"deah-complete's largest stage: {top}")


def judge_complete_memory_vs_skeleton(v: Verdicts, nets: list[str]) -> None:
    """Issue 28: deah-complete's peak RSS against the skeleton's, where both finished."""
    t = T["complete-vs-skeleton-memory"]
    for net in nets:
        c, k = v.by.get(f"deah-complete/{net}"), v.by.get(f"skeleton/{net}")
        if c is None or k is None:
            continue
        target = t.label(on=net)
        if c["status"] != "ok" or k["status"] != "ok":
            v.add(target, "-", "NOT MEASURED", f"deah-complete: {c['status']}, skeleton: {k['status']}")
            continue
        ratio = c["peak_rss_mb"] / k["peak_rss_mb"]
        v.add(target, f"{ratio:.2f}x ({fmb(c['peak_rss_mb'])} vs {fmb(k['peak_rss_mb'])})",
              "PASS" if ratio <= t.limit else f"MISS: {ratio:.2f}x > {t.limit_text}")


def judge_neo4j_vs_embedded(v: Verdicts, net: str) -> None:
    """Neo4j over Bolt against the embedded store: the same deah-complete run's persist time
    (issue 30: the alternative to the rate, and the only measure of a run stored described)."""
    t = T["neo4j-vs-embedded"]
    target = t.label(on=net)
    neo, emb = v.by.get(store_name("deah-complete", net, "neo4j")), v.by.get(store_name("deah-complete", net))
    if not neo or not emb or neo["status"] != "ok" or emb["status"] != "ok":
        v.add(target, "-", "NOT MEASURED", "both cases must finish")
        return
    a, b = neo["result"]["total_s"], emb["result"]["total_s"]
    first = neo["result"].get("first_run")
    v.add(target, f"{a / b:.1f}x ({fs(a)} vs {fs(b)})", "PASS" if a / b <= t.limit else f"MISS: {a / b:.1f}x > {t.limit_text}",
          f"persist {fs(neo['result']['persist_s'])} vs {fs(emb['result']['persist_s'])}"
          + (f"; the first run on the fresh server {fs(first['total_s'])} (query planning)" if first else "") + server_text(neo))


def judge_neo4j(v: Verdicts, net: str | None = None) -> None:
    """Neo4j over Bolt: the same deah-complete run of ``net`` (dense-8x128), next to the embedded
    store's rate; a run stored described is judged by its persist time only."""
    t = T["neo4j-rate"]
    net = net or t.net
    name, target = store_name("deah-complete", net, "neo4j"), replace(t, net=net).label()
    rec, emb = v.by.get(name), v.by.get(store_name("deah-complete", net))
    if rec is not None and rec["status"] == "ok" and rec["result"].get("stored_as") == "described":
        return
    emb_note = (f"embedded store ({emb['name']} in this report): {frate(emb['result']['rows_per_s'], 'rows')}"
                if emb and emb["status"] == "ok" else "embedded store: not in this report")
    if rec is None:
        v.add(target, "-", "NOT MEASURED", v.missing(name))
    elif rec["status"] == "ok":
        r = rec["result"]
        v.add(target, f"{frate(r['rows_per_s'], 'rows')} ({fn(r['rows_written'])} rows in {fs(r['persist_s'])})",
              _lower(r["rows_per_s"], t.limit), emb_note + server_text(rec))
    elif rec["status"] == "skipped":
        v.add(target, "-", "NOT MEASURED", rec.get("error") or "skipped")
    else:
        m, _ = v.not_ok(rec, 0.0)
        pw = partial_write(rec)
        # The embedded case wrote the same rows: a persist still running after rows / limit s is a MISS.
        total = emb["result"]["rows_written"] if emb and emb["status"] == "ok" else None
        if pw:
            if pw["rows_per_s"] >= t.limit:
                verdict = "PASS (lower bound; persist did not finish)"
            elif total and pw["persist_s"] > total / t.limit:
                verdict = (f"MISS: persist was still running after {fs(pw['persist_s'])}, the {fn(total)} rows"
                           f" (as the embedded case counted them) at {t.limit_text} rows/s take {fs(total / t.limit)}")
            else:
                verdict = f"NOT MEASURED (the run did not finish; the lower bound {frate(pw['rows_per_s'], 'rows')} decides nothing)"
            v.add(target, f">= {frate(pw['rows_per_s'], 'rows')} ({fn(pw['rows'])} bulk rows completed in {fs(pw['persist_s'])} before the kill)",
                  verdict, emb_note + ("; " + timeout_text(rec) if rec["status"] == "timeout" else ""))
        else:
            v.add(target, m, "NOT MEASURED (the run did not finish)", emb_note)


def judge_growth(v: Verdicts, g: dict) -> None:
    """Time and memory slopes of one engine over the width sweep."""
    note = f"{len(g['points'])} points: " + ", ".join(f"m={fn(p['m'])}" for p in g["points"])
    if g["missing"]:
        note += "; not in the fit: " + ", ".join(g["missing"])
    few = f" (fit on only {len(g['points'])} points)" if len(g["points"]) < 3 else ""

    def verdict(fit, key, limit):
        worst = max(g["bounds"], key=lambda b: b[key], default=None)
        if worst is not None and worst[key] > limit:
            return (f"MISS: the killed point {worst['to']} ({worst['status']}) proves a slope >= {worst[key]:.2f}"
                    f" from {worst['from']}")
        if fit is None:
            return "NOT MEASURED (< 2 points)"
        return ("PASS" if fit <= limit else f"MISS by {fit - limit:.2f}") + few

    def bound_note(key, what):
        return "".join(f"; {b['from']} -> {b['to']} ({b['status']}): {what} slope >= {b[key]:.2f}" for b in g["bounds"])

    time, mem = T["growth-time"], T["growth-memory"]
    ts = g["time_slope"]
    v.add(time.label(eng=g["engine"]), "-" if ts is None else f"{ts:.2f}",
          verdict(ts, "time_slope_at_least", time.limit), note + bound_note("time_slope_at_least", "time"))
    ms = g["work_rss_slope"]
    v.add(mem.label(eng=g["engine"]),
          "-" if ms is None else f"{ms:.2f} (peak above start; raw peak RSS: {g['peak_rss_slope']:.2f})",
          verdict(ms, "work_rss_slope_at_least", mem.limit), note + bound_note("work_rss_slope_at_least", "memory (above start)"))


def judge_baseline(v: Verdicts, base: list[dict], eng: str) -> None:
    """Greedy elimination / engine on dense-8x128 (measured, extrapolated or bounded)."""
    t = T["baseline"]
    x = t.limit_text
    row = next((b for b in base if b["network"] == t.net), None)
    tname = t.label(eng=eng)
    if row is None:
        v.add(tname, "-", "NOT MEASURED", v.missing(f"baseline/{t.net}"))
        return
    k = engine_key(eng)
    ratio = row.get(f"ratio_{k}")
    lb = row.get(f"ratio_{k}_lower_bound")
    ub = row.get(f"ratio_{k}_at_most")
    if ratio is None and ub is not None:
        v.add(tname, f"<= {ub:.2f}x (baseline {fs(row['baseline_s'])} measured; {eng} did not finish, ran {fs(row[f'{k}_s_at_least'])})",
              f"MISS: at most {ub:.2f}x < {x}" if ub < t.limit else "NOT MEASURED",
              f"the {eng} case was killed, so its time is at least what it ran; the ratio is an upper bound")
        return
    if ratio is None:
        v.add(tname, "-", "NOT MEASURED", v.missing(f"{eng}/{t.net}") if v.by.get(f"{eng}/{t.net}") is None else row["note"])
        return
    kind = row["ratio_kind"]
    measured = f"{ratio:.1f}x" + (" (LINEAR EXTRAPOLATION)" if kind == "extrapolated" else "")
    if lb is not None:
        measured += f"; >= {lb:.1f}x proven by the timeout"
    if kind == "measured" or (lb is not None and lb >= t.limit):
        verdict = "PASS" if ratio >= t.limit else f"MISS: {ratio:.1f}x < {x}"
    else:
        verdict = "PASS (extrapolated)" if ratio >= t.limit else f"MISS (extrapolated {ratio:.1f}x < {x})"
    v.add(tname, measured, verdict, f"baseline {fs(row['baseline_s'])} ({row['baseline_kind']}), {eng} {fs(row.get(f'{k}_s'))}")


def judge_complete_vs_deah(v: Verdicts) -> None:
    """deah-complete against faithful deah, where both finished on the same network."""
    t = T["complete-vs-deah"]
    compared, left_out = 0, []
    for w in SWEEP_FULL:
        net = f"dense-8x{w}"
        d, c = v.by.get(f"deah/{net}"), v.by.get(f"deah-complete/{net}")
        if d is None and c is None:
            continue
        if d is None or c is None or d["status"] != "ok" or c["status"] != "ok":
            left_out.append(f"{net} (" + ", ".join(f"{e}: {x['status'] if x else 'not run'}" for e, x in (("deah", d), ("deah-complete", c))) + ")")
            continue
        ct, dt = c["result"]["total_s"], d["result"]["total_s"]
        ratio = ct / dt
        compared += 1
        v.add(t.label(on=f" on {net}"), f"{ratio:.2f}x ({fs(ct)} vs {fs(dt)})",
              "PASS" if ratio <= t.limit else f"MISS: {ratio:.2f}x > {t.limit_text}",
              "deah-complete total / deah total, both full solves incl. certification and certificates")
    if left_out:
        note = "not compared (both must finish): " + "; ".join(left_out)
        if compared:
            v.out[-1]["note"] += "; " + note
        else:
            v.add(t.label(on=""), "-", "NOT MEASURED", note)
    elif not compared:
        v.add(t.label(on=""), "-", "NOT MEASURED", "no dense-8xW case of either engine ran")


def judge_complete_repairs(v: Verdicts) -> None:
    """deah-complete needs no repair: on every case that ran it (solve and store)."""
    t = T["complete-repairs"]
    complete_recs = [r for r in v.records if r["kind"] == "deah-complete"
                     or (r["kind"] == "store" and store_engine(r) == "deah-complete")]
    for rec in complete_recs:
        tname = t.label(which=f" ({rec['name']})")
        if rec["status"] != "ok":
            v.add(tname, details(rec) if rec["status"] == "skipped" else v.not_ok(rec)[0],
                  f"NOT MEASURED ({rec['status']})", "the case did not finish, so whether its union needed repair is unknown")
            continue
        r = rec["result"]
        n = r.get("repairs_needed")
        extra = "; union certified without repair" if r.get("raw_certified") else ""
        v.add(tname, f"{fn(n)} repairs needed{extra}",
              "NOT MEASURED" if n is None else ("PASS" if n <= t.limit else f"MISS: {n:,} repairs needed"),
              "final basis " + ("certified" if r.get("certified") else "NOT certified"))
    if not complete_recs:
        v.add(t.label(which=""), "-", "NOT MEASURED", "no deah-complete case ran")


def judge_general(v: Verdicts) -> None:
    """Issue 18: the skeleton engine on ResNet-18 at channel level, time and peak memory."""
    t, mem = T["general-time"], T["general-memory"]
    name = f"skeleton/{t.net}"
    v.single(name, t.label(), t.limit, lambda r: _certified_within(r, r["total_s"], t.limit, fs(r["total_s"])))
    rec = v.by.get(name)
    if rec is not None and rec["status"] == "ok" and rec.get("peak_rss_mb") is not None:
        v.add(mem.label(), fmb(rec["peak_rss_mb"]), _upper(rec["peak_rss_mb"] / 1024, mem.limit, "GB"))
    else:
        v.add(mem.label(), "-", "NOT MEASURED", "needs the time case to finish")


def _networks_judged(v: Verdicts) -> None:
    """Issue 26 on the torchvision networks of bench/specs/: memory per weight (every engine),
    skeleton time per weight, deah-complete against the skeleton, bytes per weight against depth."""
    mem, sk = T["net-memory"], T["net-skeleton-time"]
    for rec in (r for r in v.records if r["net"] in SPEC_NETS and r["kind"] in ("skeleton",) + DEAH_ENGINES):
        m = (rec.get("network") or {}).get("m")
        target = mem.label(eng=rec["kind"], on=rec["net"])
        bpw = bytes_per_weight(rec)
        if rec["status"] == "ok" and m:
            allowed = mem.base * 1e9 + mem.limit * m
            peak = rec["peak_rss_mb"] * 2**20
            v.add(target, f"{fmb(rec['peak_rss_mb'])} ({bpw:.1f} bytes/weight)",
                  "PASS" if peak <= allowed else f"MISS by {(peak - allowed) / 1e9:.3g} GB ({peak / allowed:.1f}x the target)",
                  f"allowed {allowed / 1e9:.2f} GB for m = {fn(m)}")
        else:
            measured, verdict = v.not_ok(rec)
            v.add(target, measured, verdict, "" if bpw is None else f"peak up to the kill {fmb(rec['peak_rss_mb'])} ({bpw:.1f} bytes/weight, a lower bound)")
    for net in SPEC_NETS:
        rec = v.by.get(f"skeleton/{net}")
        if rec is None:
            continue
        target = sk.label(on=net)
        if rec["status"] != "ok":
            v.add(target, *v.not_ok(rec))
            continue
        r, m = rec["result"], rec["network"]["m"]
        per = r["total_s"] / m
        verdict = ("PASS" if per <= sk.limit else f"MISS: {per * 1e6:.3g} µs ({per / sk.limit:.1f}x the target)") if r["certified"] \
            else "MISS: not certified"
        v.add(target, f"{per * 1e6:.3g} µs per weight ({fs(r['total_s'])}, " + ("certified)" if r["certified"] else "NOT certified)"),
              verdict, f"allowed {fs(sk.limit * m)} for m = {fn(m)}")
    judge_complete_vs_skeleton(v, [n for n in SPEC_NETS if f"deah-complete/{n}" in v.by])
    judge_complete_memory_vs_skeleton(v, [n for n in SPEC_NETS if f"deah-complete/{n}" in v.by])
    d = T["net-depth-memory"]
    a, b = v.by.get(f"skeleton/{d.net}"), v.by.get(f"skeleton/{DEEP}")
    if a is not None or b is not None:
        target = d.label(deep=DEEP)
        if a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
            v.add(target, "-", "NOT MEASURED", "both skeleton cases must finish: " + ", ".join(
                f"{n}: {x['status'] if x else 'not run'}" for n, x in ((d.net, a), (DEEP, b))))
        else:
            x, y = bytes_per_weight(a), bytes_per_weight(b)
            ratio = max(x, y) / min(x, y)

            def above(rec):  # peak RSS above the start (interpreter, numpy, the network) per weight
                start = (rec.get("network") or {}).get("rss_start_mb")
                return None if start is None else (rec["peak_rss_mb"] - start) * 2**20 / rec["network"]["m"]

            xa, ya = above(a), above(b)
            note = (f"above the start (interpreter + network): {xa:.1f} vs {ya:.1f} bytes/weight" if xa and ya else "")
            v.add(target, f"{ratio:.2f}x ({x:.1f} vs {y:.1f} bytes/weight)",
                  "PASS" if ratio <= d.limit else f"MISS: {ratio:.2f}x > {d.limit_text}", note)


def judge_gsgd(v: Verdicts) -> None:
    """Issue 29: G-SGD's step time over SGD's (bench/gsgd_step.py), each basis, each setting."""
    for net in ("resnet20-cifar", "resnet20-digits"):
        for kind in ("gsgd-skeleton", "gsgd-deah-complete"):
            t = T[kind]
            v.single(f"gsgd-step/{net}", t.label(on=net), t.limit,
                     lambda r, kind=kind, t=t: (f"{r[f'ratio_{kind}']:.2f}x ({r[kind]['step_ms']:.1f} vs {r['sgd']['step_ms']:.1f} ms)",
                                                _upper(r[f"ratio_{kind}"], t.limit, "x")))


def _stores_judged(v: Verdicts) -> None:
    """The stored runs (issue 30): rate, whole run, run against solve, Neo4j against embedded."""
    for eng in DEAH_ENGINES:
        judge_store(v, eng)
        judge_run_vs_solve(v, eng)
    judge_store(v, "deah-complete", LISTED_NET)  # a listed deah-complete run: the write rate
    judge_run_vs_solve(v, "deah-complete", "resnet50")
    for net in (T["neo4j-rate"].net, LISTED_NET, "resnet50"):
        judge_neo4j(v, net)
        judge_neo4j_vs_embedded(v, net)


def judge_networks(records: list[dict]) -> list[dict]:
    """A partial run: the issue 26 targets of the bench/specs/ networks and the store targets of
    the store cases it measured (rows for cases it did not run are left out); [] if none."""
    v = Verdicts(records)
    _networks_judged(v)
    if any(r["kind"] == "store" for r in records):
        _stores_judged(v)
    return [row for row in v.out if row["measured"] != "-"]


def judge(records: list[dict], grow: list[dict], base: list[dict]) -> list[dict]:
    """Every target, in the report's order."""
    v = Verdicts(records)
    judge_skeleton(v)
    for eng in DEAH_ENGINES:
        judge_deah(v, eng)
    judge_step1_and_certify(v)
    t = T["deah-128"]
    v.single(f"deah/{t.net}", t.label(), t.limit, lambda r: _certified_within(r, r["total_s"], t.limit, fs(r["total_s"])))
    _stores_judged(v)
    for g in grow:
        judge_growth(v, g)
    for eng in BASELINE_ENGINES:
        judge_baseline(v, base, eng)
    judge_complete_vs_deah(v)
    judge_complete_vs_skeleton(v, [r["net"] for r in records if r["kind"] == "deah-complete" and r["net"] not in SPEC_NETS])
    judge_complete_repairs(v)
    judge_general(v)
    _networks_judged(v)
    judge_gsgd(v)
    return v.out
