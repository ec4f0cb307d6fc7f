"""A real (non-editable) install works outside the checkout: the wheel carries the Cypher library.

Builds an sdist from a copy of the checkout's packaging inputs, a wheel from that sdist (so both
carry cypher/), installs the wheel into a fresh venv and runs the CLI from a folder outside the
checkout with BASISPATH_CYPHER_DIR unset, against an embedded LadybugDB store there.

How the install stays fast and offline-friendly: the fresh venv is made without pip
(``python -m venv --without-pip``, no ensurepip) and filled by the test venv's pip
(``pip --python``) with ``--no-index --find-links WHEELHOUSE``. The wheelhouse lives inside the
test venv (``.venv/.packaging-wheelhouse``: it goes with the venv, like make's stamps) and holds
the dependencies' wheels plus the build backend (setuptools, wheel) for the isolated build. It is
filled from PyPI (``pip download``) only when an offline install from it fails, i.e. on the first
run or after a dependency changed; later runs need no network. Measured on 2 cores: about 50 s with
a filled wheelhouse (building and filling the venv about 35 s, the CLI about 11 s), about 75 s on
the first run. Without network and without a usable wheelhouse the test skips and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WHEELHOUSE = Path(sys.prefix) / ".packaging-wheelhouse"
BUILD_TOOLS = ["setuptools>=64", "wheel"]
# What the build reads: pyproject.toml, setup.py (the copy of cypher/ into the wheel), MANIFEST.in.
PACKAGING_INPUTS = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "basispath_graph", "cypher"]

SPEC = {"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [2, 4]]}  # m = 32, H = 7


def _pip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True, text=True, timeout=600,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"pip {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def _download(*what: str) -> None:
    """Fill the wheelhouse from PyPI; skip the test (with the reason) when that is impossible."""
    WHEELHOUSE.mkdir(exist_ok=True)
    proc = _pip("download", "-q", "-d", str(WHEELHOUSE), *what, check=False)
    if proc.returncode != 0:
        pytest.skip(f"no usable wheelhouse at {WHEELHOUSE} and pip download failed (offline?): "
                    f"{proc.stderr.strip().splitlines()[-1:]}")
    for stale in WHEELHOUSE.glob("basispath_graph-*"):
        stale.unlink()  # our own wheel is always the fresh build, never a cached one


def _offline(*args: str) -> subprocess.CompletedProcess:
    return _pip(*args, "--no-index", "--find-links", str(WHEELHOUSE), check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin folder, work folder outside the checkout, sdist path, wheel path)."""
    root = tmp_path_factory.mktemp("packaging")
    assert not root.resolve().is_relative_to(REPO), "the work folder must be outside the checkout"

    # 1. sdist from a copy of what the build reads (the checkout's build/ and egg-info stay untouched).
    src = root / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.so")  # the editable install's own build
    for name in PACKAGING_INPUTS:
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=ignore)
        else:
            shutil.copy2(p, src / name)
    dist = root / "dist"
    dist.mkdir()
    sdist = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
         "print(b.build_sdist(sys.argv[1]))", str(dist)],
        cwd=src, capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()[-1]
    sdist = dist / sdist

    # 2. wheel from the sdist, isolated build with the backend from the wheelhouse.
    wheel_args = ("wheel", "-q", "--no-deps", "-w", str(dist), str(sdist))
    if _offline(*wheel_args).returncode != 0:
        _download(*BUILD_TOOLS)
        proc = _offline(*wheel_args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = dist.glob("basispath_graph-*.whl")

    # 3. fresh venv (no pip, no system or test-venv site-packages), real install with dependencies.
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    install_args = ("--python", str(py), "install", "-q", str(wheel))
    if _offline(*install_args).returncode != 0:
        _download(str(wheel))
        proc = _offline(*install_args)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    work = root / "work"
    work.mkdir()
    return venv / "bin", work, sdist, wheel


def _env(bin_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("BASISPATH_CYPHER_DIR", "BASISPATH_STORE", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def _cli(installed, *args: str) -> str:
    bin_dir, work, _, _ = installed
    proc = subprocess.run([str(bin_dir / "basispath"), *args], cwd=work, env=_env(bin_dir),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"basispath {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _cypher_files() -> set[str]:
    return {p.relative_to(REPO / "cypher").as_posix() for p in (REPO / "cypher").rglob("*.cypher")}


def test_sdist_and_wheel_carry_the_query_library(installed):
    _, _, sdist, wheel = installed
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {f"cypher/{f}" for f in _cypher_files()} <= names
    assert not any(n.startswith("basispath_graph/cypher") for n in names)  # no second copy in the source
    with zipfile.ZipFile(wheel) as whl:
        packaged = {n.removeprefix("basispath_graph/cypher/") for n in whl.namelist()
                    if n.startswith("basispath_graph/cypher/")}
    assert _cypher_files() <= packaged


def test_installed_package_reads_its_own_copy(installed):
    bin_dir, work, _, _ = installed
    out = subprocess.run(
        [str(bin_dir / "python"), "-c",
         "import basispath_graph.store.library as l; print(l.__file__); print(l.cypher_dir())"],
        cwd=work, env=_env(bin_dir), capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    module, cypher = Path(out[0]), Path(out[1])
    assert module.is_relative_to(bin_dir.parent) and not module.is_relative_to(REPO)
    assert cypher == module.parents[1] / "cypher"
    assert (cypher / "queries" / "why.cypher").is_file()


def test_the_wheel_carries_the_compiled_loop(installed):
    # setup.py builds linalg/greedy_mod_p_ext.c into the wheel from the sdist's source
    bin_dir, work, sdist, wheel = installed
    with tarfile.open(sdist) as tar:
        assert any(n.endswith("basispath_graph/linalg/greedy_mod_p_ext.c") for n in tar.getnames())
    out = subprocess.run(
        [str(bin_dir / "python"), "-c", "from basispath_graph.linalg import greedy_mod_p as g; print(g.COMPILED, g.reduce_rows.__module__)"],
        cwd=work, env=_env(bin_dir), capture_output=True, text=True, check=True,
    ).stdout.split()
    assert out == ["True", "basispath_graph.linalg.greedy_mod_p_ext"]


def test_cli_outside_the_checkout(installed):
    _, work, _, _ = installed
    (work / "net.json").write_text(json.dumps(SPEC), encoding="utf-8")
    store = "store"

    solved = json.loads(_cli(installed, "solve", "net.json", "--json"))
    assert (solved["m"], solved["H"], solved["basis_size"], solved["certified"]) == (32, 7, 25, True)

    run = json.loads(_cli(installed, "run", "net.json", "--engine", "deah", "--store", store, "--json", "-q"))
    assert (run["basis_size"], run["certified"], run["discarded"]) == (25, True, 8)
    run_id = run["run_id"]
    assert (work / store).exists()

    count = "MATCH (:Run {id: $run})-[:%s]->(b:BasisPath) RETURN count(b) AS n"
    for rel, n in (("KEPT", 25), ("DISCARDED", 8)):
        rows = json.loads(_cli(installed, "query", count % rel, "-p", f"run={run_id}", "--store", store, "--json"))
        assert rows == [{"n": n}]
    rows = json.loads(_cli(
        installed, "query",
        "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN b.id AS id ORDER BY b.id LIMIT 1",
        "-p", f"run={run_id}", "--store", store, "--json"))
    discarded_id = rows[0]["id"]

    # a packaged query by name, from a folder that has no such file (values: fig1b deah, as in docs/graph-model.md)
    rows = json.loads(_cli(installed, "query", "--file", "substructure_counts", "-p", f"run={run_id}", "--store", store, "--json"))
    assert [(r["idx"], r["kept"], r["discarded"], r["chain"]) for r in rows] == [(0, 8, 5, 5), (1, 8, 3, 3), (2, 0, 0, 0), (3, 9, 0, 0)]

    why = json.loads(_cli(installed, "why", run_id, str(discarded_id), "--store", store, "--json"))
    assert why["status"] == "discarded" and why["verified"] is True
    assert why["reason"]["step"] == "chain" and len(why["certificate"]) >= 2

    columns = json.loads(_cli(installed, "compare", run_id, "--store", store, "--json"))
    assert [(c["source"], c["basis_size"], c["certified"]) for c in columns] == [(f"run {run_id}", 25, True)]

    dot = _cli(installed, "show", run_id, "--store", store, "--format", "dot")
    assert f'digraph "basispath_{run_id}"' in dot and "|B| = 25" in dot and "certified" in dot


def test_python_api_outside_the_checkout(installed):
    """The one-liner of issue 14 and the whole docs/python-api.md session, on the installed
    wheel (not the checkout: PYTHONPATH is dropped and the folder is elsewhere)."""
    bin_dir, work, _, _ = installed
    (work / "x.json").write_text(json.dumps(SPEC), encoding="utf-8")

    def python(code: str) -> str:
        proc = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=work, env=_env(bin_dir),
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    assert python("from basispath_graph import load_spec, solve; r = solve(load_spec('x.json')); print(r.certified)") == "True\n"
    assert python("import basispath_graph; print(basispath_graph.__file__)").startswith(str(bin_dir.parent))

    session = work / "session"
    session.mkdir()
    (session / "python-api.md").write_text((REPO / "docs" / "python-api.md").read_text(encoding="utf-8"), encoding="utf-8")
    report = python(
        "import doctest, os, re\n"
        "os.chdir('session')\n"
        "page = open('python-api.md', encoding='utf-8').read()\n"
        "text = '\\n\\n'.join(re.findall(r'^```pycon\\n(.*?)^```', page, flags=re.M | re.S))\n"
        "test = doctest.DocTestParser().get_doctest(text, {}, 'python-api.md', 'python-api.md', 0)\n"
        "runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)\n"
        "runner.run(test)\n"
        "print('failures', runner.failures, 'tries', runner.tries)\n"
    )
    failures, tries = re.search(r"failures (\d+) tries (\d+)\n\Z", report).groups()
    assert failures == "0" and int(tries) > 40, report
