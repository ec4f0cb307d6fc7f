"""Resource guards: the memory and time a spec would need are estimated before any allocation,
and a spec over a configured limit is refused with the estimate (exit 2), leaving no trace."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

from ..cli_runner import cli, run_in_process
from .counts import record

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def dense_spec(tmp_path) -> Path:
    """dense-8x128: 589,824 weights, 1,352,960 candidate paths in the B_r of 29 substructures."""
    spec = tmp_path / "dense.json"
    spec.write_text(json.dumps({"name": "dense-8x128", "widths": [128] * 9,
                                "skips": [[a, b] for a in range(9) for b in range(a + 2, 9)]}))
    return spec


CASES = [
    # (engine, options, expected message after "error: SPEC: ")
    ("deah", ["--max-seconds", "0.5"],
     "deah (1,352,960 candidate paths in the B_r of 29 substructures) would take about 0.97 s (at least 0.53 s), over the limit of 0.5 s; "
     "use --engine skeleton or raise --max-seconds / BASISPATH_MAX_SECONDS"),
    ("deah-complete", ["--max-seconds", "1"],
     "deah-complete (1,352,960 candidate paths in the B_r of 29 substructures) would take about 2.7 s (at least 1.7 s), over the limit of "
     "1 s; use --engine skeleton or raise --max-seconds / BASISPATH_MAX_SECONDS"),
    ("skeleton", ["--max-seconds", "0.005"],
     "skeleton would take about 0.018 s (at least 0.01 s), over the limit of 0.005 s; raise --max-seconds / BASISPATH_MAX_SECONDS"),
    ("deah", ["--max-memory-gb", "0.05"],
     "deah (1,352,960 candidate paths in the B_r of 29 substructures) would need about 112 MB (at least 57 MB), over the limit of 50 MB; "
     "use --engine skeleton or raise --max-memory-gb / BASISPATH_MAX_MEMORY_GB"),
    ("skeleton", ["--max-memory-gb", "0.04"],
     "skeleton would need about 54 MB (at least 49 MB), over the limit of 40 MB; raise --max-memory-gb / BASISPATH_MAX_MEMORY_GB"),
]


@pytest.mark.parametrize("engine, options, message", CASES, ids=[f"{c[0]}{c[1][0]}" for c in CASES])
def test_over_the_limit_is_refused_with_the_estimate_before_allocating(dense_spec, tmp_path, monkeypatch, capsys, engine, options, message):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = run_in_process(["solve", dense_spec, "--engine", engine, *options], tmp_path, monkeypatch, capsys)
    assert r.returncode == 2
    assert r.stderr == f"error: {dense_spec}: {message}\n"
    assert r.stdout == ""
    # refused before the B_r exist: the process did not grow by anything like the estimate
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB
    record("resource guards: refusals checked", 1)


def test_the_time_limit_comes_from_the_environment_too(dense_spec, tmp_path):
    r = cli("solve", dense_spec, "--engine", "deah", env={"BASISPATH_MAX_SECONDS": "0.5"}, check=2)
    assert "would take about 0.97 s (at least 0.53 s), over the limit of 0.5 s" in r.stderr and r.stderr.count("\n") == 1
    r = cli("solve", EXAMPLES / "fig1b.json", "--json", env={"BASISPATH_MAX_SECONDS": "10"}, check=0)
    assert json.loads(r.stdout)["certified"] is True


@pytest.mark.parametrize("value, shown", [("abc", "BASISPATH_MAX_SECONDS must be a number of seconds, got 'abc'"),
                                          ("0", "the time limit must be a finite number of seconds > 0, got 0.0"),
                                          ("inf", "the time limit must be a finite number of seconds > 0, got inf")])
def test_a_bad_time_limit_is_one_line(value, shown):
    r = cli("solve", EXAMPLES / "fig1b.json", env={"BASISPATH_MAX_SECONDS": value}, check=2)
    assert r.stderr == f"error: {shown}\n"


def test_a_run_over_the_time_estimate_leaves_no_trace(dense_spec, store_uri):
    store = str(store_uri)
    first = json.loads(cli("run", EXAMPLES / "fig1b.json", "--store", store, "--json", check=0).stdout)
    r = cli("run", dense_spec, "--store", store, "--engine", "deah", "--max-seconds", "0.5", check=2)
    assert "would take about 0.97 s" in r.stderr
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert [(x["id"], x["status"]) for x in runs] == [(first["run_id"], "complete")]
    # faithful deah's repair is estimated once its union is known not to be a basis (Step 3 done):
    # refused then, the run leaves no trace either
    r = cli("run", dense_spec, "--store", store, "--engine", "deah", "--max-seconds", "1", "-q", check=2)
    assert r.stderr.endswith(
        "deah's repair (1,352,960 candidate paths in the B_r of 29 substructures; the union is not a basis) would take about 1.9 s "
        "(at least 1.4 s), over the limit of 1 s; use --engine deah-complete (certified with no repair) or --engine skeleton, "
        "or raise --max-seconds / BASISPATH_MAX_SECONDS\n") and r.stderr.count("\n") == 1
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert [(x["id"], x["status"]) for x in runs] == [(first["run_id"], "complete")]
