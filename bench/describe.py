"""What one case record says, in words and numbers: formatting, the details line of a case, its
headline time, where a killed case was, the rows a killed store case had written.

A record is what bench/runner.py makes of a case (and what results.json keeps under ``cases``).
"""

from __future__ import annotations

import json

from cases import store_backend, store_engine

# ----------------------------------------------------------------------------------------------
# Formatting


def fs(x: float | None) -> str:
    """Seconds, readable."""
    if x is None:
        return "-"
    if x < 0.01:
        return f"{x * 1000:.2f} ms"
    if x < 10:
        return f"{x:.3f} s"
    return f"{x:.1f} s"


def ft(t: float) -> str:
    """A timeout, as given."""
    return f"{t:.0f} s" if abs(t - round(t)) < 0.05 else f"{t:.1f} s"


def fn(n) -> str:
    return "-" if n is None else f"{int(n):,}"


def frate(x: float | None, what: str = "") -> str:
    """A rate per second: frate(2.1e6, "paths") == "2.10 M paths/s"."""
    if x is None:
        return "-"
    what = f" {what}" if what else ""
    if x >= 1e6:
        return f"{x / 1e6:.2f} M{what}/s"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k{what}/s"
    return f"{x:.0f}{what}/s"


def fmb(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1024:.2f} GB" if x >= 1024 else f"{x:.0f} MB"


def bytes_per_weight(rec: dict) -> float | None:
    """Peak RSS (bytes, ru_maxrss) / m of a case record; None when either is unknown or the case
    did no work (refused, error, skipped). A killed case's (timeout, memory-cap) is a lower bound."""
    m, peak = (rec.get("network") or {}).get("m"), rec.get("peak_rss_mb")
    if rec.get("status") not in ("ok", "timeout", "memory-cap"):
        return None
    return None if not m or peak is None else peak * 2**20 / m


def fbpw(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# A killed case


def killed_at_s(rec: dict) -> float:
    """Seconds the measured work had run when the case was killed (a lower bound of its time)."""
    start = rec["stages"][0]["started_at_s"] if rec.get("stages") else 0.0
    return max(rec["wall_s"] - start, 0.0)


WRITE_STAGES = ("subdivision sets", "basis paths", "discards")  # execute_run's first write stages
MIN_PARTIAL_ROWS = 10_000


def partial_write(rec: dict) -> dict | None:
    """A killed store case: bulk rows whose load had completed, over the persist time until the kill.

    Rows of a load still running at the kill are not counted, so the rate is a lower bound; below
    MIN_PARTIAL_ROWS completed rows it says nothing and is not reported.
    """
    p = rec.get("progress")
    if rec["kind"] != "store" or rec["status"] == "ok" or not p or "rows" not in p:
        return None
    start = next((s["started_at_s"] for s in rec["stages"] if s["name"] in WRITE_STAGES), None)
    if start is None or p["rows"] < MIN_PARTIAL_ROWS:
        return None
    elapsed = rec["wall_s"] - start
    return {"rows": p["rows"], "persist_s": elapsed, "rows_per_s": p["rows"] / elapsed}


# ----------------------------------------------------------------------------------------------
# Describing results


def stage_text(rec: dict) -> str:
    """Where a case that did not finish was: '; was in stage ... ; finished before it: ...'."""
    text = ""
    if rec["stages"]:
        last = rec["stages"][-1]
        done = [f"{s['name']} {fs(s['seconds'])}" for s in rec["stages"][:-1]]
        text += f"; was in stage '{last['name']}' (for {fs(last['seconds'])})"
        if done:
            text += "; finished before it: " + ", ".join(done)
    return text


def shortened_text(rec: dict) -> str:
    """' (timeout shortened from N s by the suite budget)' when it was, else ''."""
    planned = rec.get("timeout_planned_s")
    return f" (timeout shortened from {ft(planned)} by the suite budget)" if planned and planned > rec["timeout_s"] else ""


def timeout_text(rec: dict) -> str:
    return f"did not finish within {ft(rec['timeout_s'])}" + shortened_text(rec) + stage_text(rec)


def partial_write_text(rec: dict) -> str:
    pw = partial_write(rec)
    if not pw:
        return ""
    return (f"; before the kill, persist had completed {fn(pw['rows'])} bulk rows in {fs(pw['persist_s'])}:"
            f" >= {frate(pw['rows_per_s'], 'rows')} (lower bound; all bulk rows, incl. discard records)")


def server_text(rec: dict) -> str:
    """A store-neo4j case: where the server was and, for a local one, the memory it needed."""
    if store_backend(rec) != "neo4j":
        return ""
    sv = rec.get("server")
    if not sv:
        return "; Neo4j over Bolt at NEO4J_URI (server memory not measured)"
    n = (rec.get("result") or {}).get("writers")
    writers = (", one relationship write at a time" if n == 1 else f", {n} relationship writes at once") if n else ""
    text = f"; local Neo4j over Bolt{writers}, heap {sv['heap']} (-Xms = -Xmx), page cache {sv['pagecache_mb']} MB"
    if "vmhwm_mb" in sv:
        text += f": server peak RSS {fmb(sv['vmhwm_mb'])}"
    if "heap_used_mb" in sv:
        text += (f", heap in use at the end {fmb(sv['heap_used_mb'])} (old gen {fmb(sv['old_gen_used_mb'])}),"
                 f" GC {sv['gc_s']:.1f} s ({sv['young_gcs']} young, {sv['full_gcs']} full)")
    if "cpu_s" in sv:
        text += f"; CPU during the case: server {sv['cpu_s']:.0f} s, case process {rec.get('cpu_s', 0):.0f} s (wall {rec['wall_s']:.0f} s)"
    return text


def _general_parts(parts: dict) -> str:
    """A general network's basis by part (docs/general-networks.md): the figures above are the core's."""
    if parts.get("core") == "layer DAG":  # deah-complete on a layer DAG core (general/dag_deah.py)
        return (f" (general network read as a layer DAG: {fn(parts['core_layers'])} core layers, {fn(parts['core_connections'])}"
                f" connections, p_0 through {parts['p0_layers']} layers and {fn(parts['ears'])} ears; kept {fn(parts['kept'])} core"
                f" paths and {fn(parts['extra_and_identity'])} of extra layers and the identity forest)")
    return (f" (general network: core {fn(parts['core'])}, tap lift {fn(parts['tap_lift'])}, extra layers"
            f" {fn(parts['extra'])}, identity forest {fn(parts['identity'])} paths; the figures before are the tap-0 core's)")


def details(rec: dict) -> str:
    r, st = rec["result"] or {}, rec["status"]
    if st == "skipped":
        return rec.get("error", "skipped")
    if st == "error":
        return f"ERROR: {rec.get('error')}" + stage_text(rec)
    if st == "memory-cap":
        return rec["error"] + " after " + fs(rec["wall_s"]) + stage_text(rec) + partial_write_text(rec)
    if st == "refused":
        return f"refused: {r.get('message')} (after {fs(r.get('total_s'))})"
    kind = rec["kind"]
    if st == "timeout":
        text = timeout_text(rec)
        if kind == "baseline" and rec["progress"]:
            b = baseline_estimate(rec)
            text += (
                f"; {fn(b['done'])} of {fn(b['total'])} candidates processed ({100 * b['fraction']:.1f}%),"
                f" rank {fn(b['kept'])} of {fn(rec['network'].get('basis_size'))};"
                f" LINEAR EXTRAPOLATION of the total: {fs(b['extrapolated_s'])}"
            )
        return text + partial_write_text(rec)
    if kind == "skeleton":
        t = r["timings"]
        return (
            f"basis of {fn(r['basis_size'])} paths; materialise {fs(t['engine'])} ({frate(r['paths_per_s'], 'basis paths')});"
            f" certify {fs(t['certify'])}; {'certified' if r['certified'] else 'NOT certified: ' + r['verdict']}"
        )
    if kind == "deah":
        raw = "certified" if r["raw_certified"] else "NOT certified"
        return (
            f"{r['substructures_selected']} substructures; raw DEAH union {raw}; {fn(r['repairs'])} repairs;"
            f" {fn(r['discarded'])} discarded paths; final basis {fn(r['basis_size'])} "
            + ("certified" if r["certified"] else "NOT certified")
        )
    if kind == "deah-complete":
        raw = "certified" if r["raw_certified"] else "NOT certified"
        rules = ", ".join(f"{n} {k}" for k, n in r["rules"].items())
        steps = ", ".join(f"{n:,} {k}" for k, n in r["discards_by_step"].items()) or "none"
        if r["certificates_computed"] == "on demand":  # a described run: each made when its discard is read
            certs = "certificates made on demand"
        else:
            certs = (f"certificates up to {r['certificate_max_size']} paths" if r["certificates_computed"] == r["discarded"]
                     else f"certificates for {fn(r['certificates_computed'])} of them (largest {r['certificate_max_size']} paths)")
        return (
            f"{r['substructures_selected']} substructures (Step 3 rules: {rules}); union {raw};"
            f" {fn(r['repairs_needed'])} repairs needed; {fn(r['discarded'])} discarded paths ({steps}), {certs};"
            f" final basis {fn(r['basis_size'])} " + ("certified" if r["certified"] else "NOT certified")
            + (_general_parts(r["parts"]) if "parts" in r else "")
        )
    if kind == "step1":
        mat = r["ps_materialised"]
        return (
            f"R = {r['selected']} selected after examining {fn(r['examined'])} of the {fn(r['ps_total'])} substructure paths in P^S;"
            f" {fn(mat)} materialised" + (" (all of P^S)" if mat >= r["ps_total"] else "")
        )
    if kind == "certify":
        return (
            f"{fn(r['paths'])} paths, {'certified' if r['certified'] else 'NOT certified: ' + r['verdict']} in {fs(r['certify_s'])}"
            f" (materialise {fs(r['materialise_s'])} not included; peeling alone {fs(r['peel_s'])}: {fn(r['peeled'])} peeled,"
            f" core {fn(r['core'])}, {r['peel_rounds']} rounds)"
        )
    if kind == "store" and r.get("stored_as") == "described":
        nodes = ", ".join(f"{fn(n)} {k}" for k, n in r["nodes_written"].items() if n)
        return (
            f"{store_engine(rec)} run {fs(r['total_s'])} (persist {fs(r['persist_s'])}); stored described: {fn(r['rows_written'])} rows"
            f" ({nodes}) for {fn(r['basis_size'])} basis + {fn(r['discarded'])} discarded paths"
            + (f"; {fn(r['repairs_needed'])} repairs needed" if store_engine(rec) == "deah-complete" else "")
            + (f"; the second run on the store (the first: {fs(r['first_run']['total_s'])}, persist {fs(r['first_run']['persist_s'])})"
               if r.get("first_run") else "")
            + server_text(rec)
        )
    if kind == "store":
        return (
            f"{store_engine(rec)} run {fs(r['total_s'])} (persist {fs(r['persist_s'])}); wrote {fn(r['paths_written'])} paths"
            f" ({fn(r['basis_size'])} basis + {fn(r['discarded'])} discarded) + {fn(r['relationships_written'])}"
            f" relationships = {fn(r['rows_written'])} rows: {frate(r['rows_per_s'], 'rows')} during persist"
            + (f"; {fn(r['repairs_needed'])} repairs needed" if store_engine(rec) == "deah-complete" else "")
            + server_text(rec)
            + (f" [{rec['measured_separately']}]" if rec.get("measured_separately") else "")
        )
    if kind == "baseline":
        return (
            f"{fn(r['processed'])} of {fn(r['candidates'])} candidates from {r['substructures']} B_r,"
            f" rank {fn(r['kept'])} of {fn(r['target'])}; setup {fs(r['setup_s'])}, greedy {fs(r['greedy_s'])}"
        )
    if kind == "baseline-all":
        return (
            f"{fn(r['candidates'])} paths; baseline {fs(r['baseline_s'])}; deah {fs(r['deah_s'])} (x{r['ratio_deah']:.1f});"
            f" skeleton {fs(r['skeleton_s'])} (x{r['ratio_skeleton']:.0f})"
        )
    if kind == "gsgd-step":
        parts = [f"{k} {r[k]['step_ms']:.1f} ms (optimizer {r[k]['optimizer_ms']:.2f} ms)" for k in ("sgd", "gsgd-skeleton", "gsgd-deah-complete")]
        return (f"{'x'.join(map(str, r['input']))} inputs, batch {r['batch']}, {r['device']}, median of {r['steps']} steps: "
                + "; ".join(parts) + f"; deah-complete core {r['gsgd-deah-complete']['core_paths']} paths")
    return json.dumps(r)


def case_time(rec: dict) -> float | None:
    """The headline time of a finished case."""
    r = rec["result"] or {}
    if rec["status"] != "ok":
        return None
    return r.get("total_s")


def baseline_estimate(rec: dict) -> dict:
    """Linear extrapolation of a timed-out greedy baseline from its last progress line."""
    p = rec["progress"]
    done, total = p["done"], p["total"]
    setup, greedy = p.get("setup_s", 0.0), p["greedy_s"]
    frac = done / total if total else 0.0
    est = setup + greedy * total / done if done else None
    return {"done": done, "total": total, "kept": p.get("kept"), "fraction": frac, "greedy_s": greedy,
            "setup_s": setup, "extrapolated_s": est}


def engine_key(engine: str) -> str:
    """An engine name as part of a record key: deah-complete -> deah_complete (ratio_deah_complete)."""
    return engine.replace("-", "_")


# Stage names as the Cases table shows them (the skeleton engine's 'engine' stage materialises).
STAGE_LABEL = {"engine": "materialise"}


def dominant_stage(r: dict) -> str:
    """The stage that took most of a case's time and its share, e.g. ``persist (97%)``: from the
    solve's own timings when it finished (a store case's write is one stage, ``persist``), else
    from the stage starts it reported (a killed case: the stage it was killed in is marked)."""
    timings = (r.get("result") or {}).get("timings") if r["status"] == "ok" else None
    running = set()
    if timings:
        spent = {k: float(v) for k, v in timings.items()}
    else:
        spent = {}
        for s in r.get("stages") or []:
            if "(informational)" in s["name"]:  # measured inside another stage
                continue
            spent[s["name"]] = spent.get(s["name"], 0.0) + float(s["seconds"])
            if s.get("running_when_killed"):
                running.add(s["name"])
    total = sum(spent.values())
    if not spent or total <= 0:
        return "-"
    name = max(spent, key=spent.get)
    label = STAGE_LABEL.get(name, name)
    return f"{label} ({spent[name] / total:.0%}{', killed in it' if name in running else ''})"

