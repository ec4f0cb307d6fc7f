"""A MemoryError is one line with exit code 2, never a traceback or 'internal error' (issue 26):
``basispath solve`` under an address-space limit (RLIMIT_AS) that the imports and the spec fit in
but the solve does not."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

resource = pytest.importorskip("resource", reason="RLIMIT_AS needs the resource module (Unix)")

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 600 * 2**20  # address space: the interpreter, numpy, typer and the spec fit; VGG-19's 2.4 GB peak does not


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _solve(spec: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")  # BLAS threads reserve address space at import
    env.pop("BASISPATH_DEBUG", None)
    env.pop("BASISPATH_MAX_MEMORY_GB", None)
    return subprocess.run([sys.executable, "-m", "basispath_graph.cli.main", "solve", spec, *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, preexec_fn=_limited, timeout=300)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds allocations as tested on Linux")
def test_a_memory_error_in_a_solve_is_one_line_with_the_estimate_and_exit_2():
    p = _solve("bench/specs/vgg19.json", "--engine", "skeleton", "--max-weights", "200000000")
    assert p.returncode == 2, p.stderr[-2000:]
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr[-2000:]
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    assert re.fullmatch(r"error: out of memory: skeleton on vgg19 needed more than this machine gave \(estimated 2\.\d GB,"
                        r" under the limit of [\d.]+ GB\); free memory or run it where more is available, and set"
                        r" --max-memory-gb / BASISPATH_MAX_MEMORY_GB to what this process may really use so that such a run"
                        r" is refused before it starts", lines[0]), lines[0]
    assert p.stdout == ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds allocations as tested on Linux")
def test_under_the_same_limit_a_small_network_still_solves():
    # the limit leaves room for the command itself: what fails above is the solve, not the imports
    p = _solve("examples/resnet-style.json", "--engine", "skeleton")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "certified" in p.stdout
