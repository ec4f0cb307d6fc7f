"""Running cases: each in its own process (bench/case.py) with a wall-clock timeout and a
resident-memory cap, the Neo4j server of a store-neo4j case, and the suite's time budget.

``run_suite(cases, ...)`` runs the cases one after the other (never two at once) and returns one
record per case (the shape bench/describe.py reads and results.json keeps).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path

from describe import case_time, details, fmb, fn, fs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASE_PY = HERE / "case.py"


def rss_now_mb(pid: int) -> float | None:
    """Current resident set of a process (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError):
        return None
    return None


def _neo4j_local():
    """tools/neo4j_local.py (standard library only; a script, not part of the package)."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.append(str(ROOT / "tools"))
    import neo4j_local

    return neo4j_local


class Neo4jForCase:
    """The Neo4j server of a ``store-neo4j`` case: NEO4J_URI (with NEO4J_USER / NEO4J_PASSWORD)
    when set, else a local Neo4j Community server (tools/neo4j_local.py, jars from .neo4j/lib)
    started in a temporary folder for this case and stopped (and deleted) after it. The server runs
    outside the case's process, so its memory is not in the case's peak RSS; for a local server
    the report gives the server's own peak RSS and heap (``server``). ``reason`` says why there is
    none (no NEO4J_URI and no java/javac/mvn, or the server did not start): the case is then not
    measured."""

    def __init__(self, log):
        self.log, self.uri, self.env, self.reason, self.server, self.home, self.mod = log, None, {}, None, None, None, None

    def __enter__(self):
        if os.environ.get("NEO4J_URI"):
            self.uri = os.environ["NEO4J_URI"]
            return self
        try:
            self.mod = _neo4j_local()
            missing = self.mod.missing_tools()
            if "java" in missing or (missing and not self.mod.installed()):
                self.reason = f"not measured: NEO4J_URI is not set and a local Neo4j needs {', '.join(missing)} (OpenJDK 17, Maven)"
                return self
            self.home = Path(tempfile.mkdtemp(prefix="basispath-bench-neo4j-"))
            t0 = time.perf_counter()
            self.server = self.mod.start(self.home / "server", port=None, jars=self.mod.default_home(), quiet=True)
            self.log(f"      local Neo4j {self.mod.NEO4J_VERSION} at {self.server.uri} (heap {self.heap()},"
                     f" page cache {self.pagecache_mb()} MB) started in {time.perf_counter() - t0:.1f} s (not timed)")
        except Exception as exc:  # Neo4jLocalError, OSError: the case is not measured, with the reason
            self.reason = f"not measured: could not start a local Neo4j: {' '.join(str(exc).split())}"
            return self
        self.uri = self.server.uri
        self.env = {"NEO4J_USER": self.server.user, "NEO4J_PASSWORD": self.server.password}
        return self

    def heap(self) -> str:
        return os.environ.get(self.mod.HEAP_ENV, "1g") if self.mod else "-"

    def pagecache_mb(self) -> str:
        return os.environ.get(self.mod.PAGECACHE_ENV, "256") if self.mod else "-"

    def cpu_s(self) -> float | None:
        """CPU seconds the local server has used so far (all its threads, /proc/PID/stat)."""
        try:
            with open(f"/proc/{self.server.pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError, AttributeError):
            return None

    def measure(self, cpu_before: float | None = None) -> dict | None:
        """The local server's memory after the case: peak RSS (VmHWM), heap configured and, from
        ``jstat -gc`` (when there), heap in use and the time spent in garbage collection; and the
        CPU seconds it used during the case."""
        if self.server is None:
            return None
        out = {"uri": "local", "heap": self.heap(), "pagecache_mb": int(self.pagecache_mb())}
        cpu_after = self.cpu_s()
        if cpu_before is not None and cpu_after is not None:
            out["cpu_s"] = round(cpu_after - cpu_before, 2)
        try:
            with open(f"/proc/{self.server.pid}/status") as fh:
                for line in fh:
                    if line.startswith(("VmHWM:", "VmRSS:")):
                        out[line.split(":")[0].lower() + "_mb"] = round(int(line.split()[1]) / 1024.0, 1)
        except OSError:
            pass
        try:
            proc = subprocess.run(["jstat", "-gc", str(self.server.pid)], capture_output=True, text=True, timeout=30)
            head, vals = proc.stdout.split("\n")[:2]
            gc = dict(zip(head.split(), vals.split()))
            used_kb = sum(float(gc.get(k, 0)) for k in ("S0U", "S1U", "EU", "OU"))
            out["heap_used_mb"] = round(used_kb / 1024.0, 1)
            out["old_gen_used_mb"] = round(float(gc["OU"]) / 1024.0, 1)
            out["gc_s"] = float(gc["GCT"])
            out["young_gcs"], out["full_gcs"] = int(gc["YGC"]), int(gc["FGC"])
        except (OSError, ValueError, KeyError, subprocess.SubprocessError):
            pass
        return out

    def __exit__(self, *exc):
        if self.server is not None:
            self.mod.stop(self.home / "server", quiet=True)
        if self.home is not None:
            import shutil

            shutil.rmtree(self.home, ignore_errors=True)


def run_case(case: dict, timeout: float, log, mem_cap_mb: float) -> dict:
    if case["kind"] == "store" and case.get("store_backend") == "neo4j":
        with Neo4jForCase(log) as neo:
            if neo.reason:
                return _not_run(case, neo.reason)
            cpu_before = neo.cpu_s() if neo.server is not None else None
            rec = _run_case(case, timeout, log, mem_cap_mb, neo)
            rec["server"] = neo.measure(cpu_before)
            return rec
    return _run_case(case, timeout, log, mem_cap_mb, None)


def _not_run(case: dict, reason: str) -> dict:
    return {"name": case["name"], "kind": case["kind"], "net": case["net"],
            **({"store_engine": case.get("store_engine", "deah"), "store_backend": case.get("store_backend", "ladybug")}
               if case["kind"] == "store" else {}),
            "timeout_s": 0, "status": "skipped",
            "wall_s": 0, "peak_rss_mb": None, "network": {}, "result": None, "stages": [], "progress": None,
            "error": reason}


def _run_case(case: dict, timeout: float, log, mem_cap_mb: float, neo: Neo4jForCase | None) -> dict:
    cmd = [sys.executable, str(CASE_PY), "--net", case["net"], "--engine", case["kind"]]
    if case["kind"] in ("skeleton", "deah-complete") and case.get("guard", True):  # the guard refuses, with its estimate, what the cap would kill
        cmd += ["--memory-limit-bytes", str(int(mem_cap_mb * 2**20))]
    if case.get("repeat", 1) > 1:
        cmd += ["--repeat", str(case["repeat"])]
    store_root = None
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if neo is not None:
        cmd += ["--store-uri", neo.uri, "--store-engine", case.get("store_engine", "deah")]
        env.update(neo.env)
    elif case["kind"] == "store":
        store_root = tempfile.mkdtemp(prefix="basispath-bench-")
        cmd += ["--store-dir", os.path.join(store_root, "store"), "--store-engine", case.get("store_engine", "deah")]
    events: list[dict] = []  # every JSON line, with "_at": parent clock seconds since start
    stderr_tail: deque[str] = deque(maxlen=30)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )

    def read_stdout():
        for line in proc.stdout:
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                stderr_tail.append(line.rstrip())
                continue
            ev["_at"] = time.perf_counter() - t0
            events.append(ev)

    def read_stderr():
        for line in proc.stderr:
            stderr_tail.append(line.rstrip())

    readers = [threading.Thread(target=read_stdout, daemon=True), threading.Thread(target=read_stderr, daemon=True)]
    for th in readers:
        th.start()
    timed_out = over_memory = False
    next_note = t0 + 30
    next_rss = t0
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            now = time.perf_counter()
            if now - t0 >= timeout:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            if now >= next_rss:
                rss = rss_now_mb(proc.pid)
                next_rss = now + 0.2
                if rss is not None and rss > mem_cap_mb:
                    over_memory = True
                    os.killpg(proc.pid, signal.SIGKILL)
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
            if now >= next_note:
                log(f"      ... {now - t0:.0f} s, {_where(events)}")
                next_note = now + 30
            time.sleep(0.05)
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            os.wait4(proc.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        raise
    finally:
        if store_root:
            import shutil

            shutil.rmtree(store_root, ignore_errors=True)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    for th in readers:
        th.join(timeout=5)

    network = next((e for e in events if e["event"] == "network"), {})
    result = next((e for e in events if e["event"] == "result"), None)
    stages = [e for e in events if e["event"] == "stage"]
    progress = [e for e in events if e["event"] == "progress"]
    if timed_out:
        state = "timeout"
    elif over_memory:
        state = "memory-cap"
    elif result is not None:
        state = result.get("status", "ok")
    else:
        state = "error"
    rec = {
        "name": case["name"],
        "kind": case["kind"],
        "net": case["net"],
        **({"store_engine": case.get("store_engine", "deah"), "store_backend": case.get("store_backend", "ladybug")}
           if case["kind"] == "store" else {}),
        "timeout_s": timeout,
        "status": state,
        "wall_s": round(wall, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024.0, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "returncode": proc.returncode,
        "network": {k: v for k, v in network.items() if not k.startswith("_") and k != "event"},
        "result": {k: v for k, v in (result or {}).items() if not k.startswith("_") and k != "event"} or None,
        "stages": _stage_durations(stages, wall, finished=state in ("ok", "refused")),
        "progress": {k: v for k, v in progress[-1].items() if k != "event" and not k.startswith("_")} if progress else None,
    }
    if state == "memory-cap":
        rec["error"] = f"killed: resident memory went over the cap of {fmb(mem_cap_mb)} (--mem-cap-gb)"
    if state == "error":
        msg = (result or {}).get("message")
        if msg is None:
            sig = -proc.returncode if proc.returncode < 0 else None
            msg = f"exited with code {proc.returncode}" + (f" (killed by signal {sig})" if sig else "")
        rec["error"] = msg
        rec["stderr_tail"] = list(stderr_tail)[-12:]
    return rec


def _where(events: list[dict]) -> str:
    st = [e for e in events if e["event"] == "stage"]
    pr = [e for e in events if e["event"] == "progress"]
    parts = []
    if st:
        parts.append(f"stage {st[-1]['name']}")
    if pr:
        p = pr[-1]
        if "done" in p:
            parts.append(f"{fn(p['done'])}/{fn(p['total'])} candidates")
        elif "rows" in p:
            parts.append(f"{fn(p['rows'])} rows written")
    return ", ".join(parts) or "starting"


def _stage_durations(stages: list[dict], wall: float, finished: bool) -> list[dict]:
    """Per stage start (parent clock): how long until the next stage started (or the end)."""
    out = []
    for k, st in enumerate(stages):
        end = stages[k + 1]["_at"] if k + 1 < len(stages) else wall
        out.append({"name": st["name"], "started_at_s": round(st["_at"], 3), "seconds": round(end - st["_at"], 3),
                    "running_when_killed": (not finished) and k + 1 == len(stages)})
    return out



def run_suite(cases: list[dict], budget: float, timeout_scale: float, mem_cap_mb: float, log) -> list[dict]:
    """Run the cases in order within the suite budget (seconds): a case that would overrun it gets
    a shortened timeout (recorded as ``timeout_planned_s``), one with under 20 s left is skipped."""
    started = time.perf_counter()
    records = []
    for k, case in enumerate(cases, start=1):
        left = budget - (time.perf_counter() - started)
        timeout = case["timeout"] * timeout_scale
        if left < 20:
            rec = _not_run(case, f"skipped: suite budget of {budget / 60:.0f} min used up")
            records.append(rec)
            log(f"[{k}/{len(cases)}] {case['name']}: SKIPPED (suite budget used up)")
            continue
        if timeout > left - 10:
            timeout = max(left - 10, 10)
            log(f"[{k}/{len(cases)}] {case['name']} (timeout shortened to {timeout:.0f} s by the suite budget) ...")
        else:
            log(f"[{k}/{len(cases)}] {case['name']} (timeout {timeout:.0f} s) ...")
        rec = run_case(case, timeout, log, mem_cap_mb)
        if timeout < case["timeout"] * timeout_scale:
            rec["timeout_planned_s"] = case["timeout"] * timeout_scale
        records.append(rec)
        t = case_time(rec)
        head = f"{rec['status']} in {fs(t)}" if t is not None else rec["status"]
        log(f"      {head}, peak {fmb(rec['peak_rss_mb'])}; {details(rec)}")
    return records
