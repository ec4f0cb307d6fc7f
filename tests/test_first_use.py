"""Frictions a new user met (issue 25, item 5), each pinned by a test that failed before its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .cli_runner import cli, on_terminal, show

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SPEC = EXAMPLES / "resnet-style.json"


def _whole(word: str, text: str) -> bool:
    """WORD appears in TEXT as a whole (not cut, not wrapped, not part of a longer word)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w…-])", text) is not None


# ---------------------------------------------------------------------------------------
# 1. `basispath runs` at a terminal: the run id is never cut or wrapped


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs") / "store"
    for engine in ("deah-complete", "deah"):
        cli("run", SPEC, "--engine", engine, "--store", store, "--quiet", check=0)
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    return store, runs


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_runs_shows_every_run_id_whole_at_any_terminal_width(two_runs, columns):
    store, runs = two_runs
    res = on_terminal("runs", "--store", store, columns=columns)
    assert res.returncode == 0, show(res)
    assert "…" not in res.stdout, show(res)
    for run in runs:
        assert _whole(run["id"], res.stdout), f"run id {run['id']} not printed whole\n{res.stdout}"
        if columns >= 120:
            assert _whole(run["network"], res.stdout) and _whole(run["engine"], res.stdout), res.stdout


def test_runs_keeps_the_table_where_it_fits(two_runs):
    store, runs = two_runs
    res = on_terminal("runs", "--store", store, columns=200)
    assert res.returncode == 0 and res.stdout.startswith("┏"), show(res)
    assert all(_whole(run["id"], res.stdout) for run in runs), res.stdout
