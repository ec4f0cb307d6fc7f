"""docs/tutorial.md stays true: every command in it is run, and its output and images must match
(tools/tutorial.py; `python tools/tutorial.py --write` regenerates them)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "tutorial.py"


def _check(tutorial: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), "--check", "--tutorial", str(tutorial)],
                          capture_output=True, text=True, timeout=900)


def test_the_tutorial_matches_real_runs():
    res = _check(ROOT / "docs" / "tutorial.md")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "tutorial is current" in res.stdout


def test_a_drifted_output_and_a_stale_image_are_caught(tmp_path):
    """The check is not vacuous: change one documented count, swap one image, both are named."""
    copy = tmp_path / "tutorial.md"
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    line = "certified: 81 independent paths = m - H = 90 - 9"
    assert text.count(line) == 1
    copy.write_text(text.replace(line, line.replace("81", "80")), encoding="utf-8")
    shutil.copytree(ROOT / "docs" / "img", tmp_path / "img")
    shutil.copyfile(tmp_path / "img" / "tutorial-run.png", tmp_path / "img" / "tutorial-compare.png")
    res = _check(copy)
    assert res.returncode == 1
    assert "$ basispath verify tut/densenet-4x3.json tut/basis.json" in res.stdout
    assert "    certified: 80 independent paths" in res.stdout and "    certified: 81 independent paths" in res.stdout
    assert "$ image img/tutorial-compare.png" in res.stdout and "stale: size" in res.stdout
    assert "2 drift(s)" in res.stdout
