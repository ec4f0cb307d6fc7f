"""End-to-end tests of the ``basispath`` command line, run as real subprocesses.

Every run goes through ``python -m basispath_graph.cli.main`` (the console script's entry
point) with its own working folder, so messages that name files are stable and exact.
Interpreter start-up dominates the cost (~0.5 s a run), so runs that do not depend on each
other are started together in batches (see :func:`tests.cli_runner.run_many`) and the tests
only check the collected results.

Everything a basis is checked against is computed here, independently of the product:
m and H from the spec, path validity, and weight vectors (edge multisets) for certificates
(tests/certificates.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from .certificates import combination, weight_vector
from .cli_runner import cli, cli_env, finish, run_many, show, start

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
EXAMPLE_NAMES = ("fig1b", "mlp", "resnet-style", "densenet-style")
ENGINES = ("deah", "skeleton")
# The independent checker lives in ../shared beside the repository (CI has it there too).
CERTIFY_TOOL = Path(__file__).resolve().parents[2] / "shared" / "tools" / "certify.py"
needs_certify_tool = pytest.mark.skipif(
    not CERTIFY_TOOL.is_file(), reason=f"independent checker {CERTIFY_TOOL} not found (../shared is not beside the repo)"
)

SENTINEL = b'{"sentinel": "a refused run must leave this file alone"}\n'


# ---------------------------------------------------------------------------------------
# Running the CLI (see cli_runner: run_many takes ``(args, cwd, extra env)`` jobs)


def basispath(*args, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return finish(start(args, cwd, env))


def assert_refused(res: subprocess.CompletedProcess, message: str, prefix: bool = False) -> None:
    """Exit 2 and exactly one stderr line ``error: <message>`` (or starting so), nothing else."""
    assert res.returncode == 2, show(res)
    assert "Traceback" not in res.stderr, show(res)
    lines = res.stderr.splitlines()
    assert len(lines) == 1, show(res)
    assert res.stderr == lines[0] + "\n", show(res)
    assert lines[0].startswith("error: "), show(res)
    if prefix:
        assert lines[0].startswith(f"error: {message}"), show(res)
    else:
        assert lines[0] == f"error: {message}", show(res)
    assert res.stdout == "", show(res)


def run_certify_tool(spec: Path, export: Path) -> subprocess.CompletedProcess:
    python = shutil.which("python3") or sys.executable
    return subprocess.run(
        [python, str(CERTIFY_TOOL), str(spec), str(export)], capture_output=True, text=True, timeout=120
    )


# ---------------------------------------------------------------------------------------
# Independent model of networks and paths


def connected_pairs(spec: dict) -> set[tuple[int, int]]:
    L = len(spec["widths"]) - 1
    return {(l, l + 1) for l in range(L)} | {(int(a), int(b)) for a, b in spec.get("skips") or []}


def m_and_h(spec: dict) -> tuple[int, int]:
    w = spec["widths"]
    return sum(w[a] * w[b] for a, b in connected_pairs(spec)), sum(w[1:-1])


def assert_valid_path(spec: dict, path) -> None:
    """PATH = list of [layer, index] int pairs from layer 0 to L over connected layer pairs."""
    w, pairs = spec["widths"], connected_pairs(spec)
    assert isinstance(path, list) and path, path
    for item in path:
        assert isinstance(item, list) and len(item) == 2 and all(type(v) is int for v in item), path
        assert 0 <= item[0] < len(w) and 0 <= item[1] < w[item[0]], path
    assert path[0][0] == 0 and path[-1][0] == len(w) - 1, path
    for (la, _), (lb, _) in zip(path, path[1:]):
        assert (la, lb) in pairs, path


def load_example(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))
    }


# ---------------------------------------------------------------------------------------
# solve on every example with both engines (shared by several tests)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """``solve EXAMPLE --engine E --export out.json --json`` for every example and engine.

    out.json exists beforehand, so each run also shows that an export replaces a file.
    """
    runs = {}
    for name in EXAMPLE_NAMES:
        for engine in ENGINES:
            folder = tmp_path_factory.mktemp(f"solve-{name}-{engine}")
            (folder / "out.json").write_bytes(SENTINEL)
            runs[name, engine] = folder
    keys = list(runs)
    results = run_many(
        (["solve", EXAMPLES / f"{name}.json", "--engine", engine, "--export", "out.json", "--json"], runs[name, engine], None)
        for name, engine in keys
    )
    out = {}
    for (name, engine), res in zip(keys, results):
        folder = runs[name, engine]
        assert res.returncode == 0, show(res)
        out[name, engine] = SimpleNamespace(
            res=res,
            folder=folder,
            export=folder / "out.json",
            doc=json.loads((folder / "out.json").read_text()),
            summary=json.loads(res.stdout),
            spec=load_example(name),
            spec_path=EXAMPLES / f"{name}.json",
        )
    return out


ALL_RUNS = [pytest.param(name, engine, id=f"{name}-{engine}") for name in EXAMPLE_NAMES for engine in ENGINES]


@pytest.mark.parametrize("name, engine", ALL_RUNS)
def test_solve_export_document(solved, name, engine):
    run = solved[name, engine]
    doc, spec = run.doc, run.spec
    assert run.res.stderr == "", show(run.res)
    m, H = m_and_h(spec)
    for key in ("spec", "engine", "m", "H", "basis", "discarded", "repairs"):
        assert key in doc, key
    assert doc["spec"]["widths"] == spec["widths"]
    assert doc["spec"]["name"] == spec["name"]
    assert sorted(map(tuple, doc["spec"]["skips"])) == sorted({tuple(s) for s in spec["skips"] if s[1] > s[0] + 1})
    assert doc["engine"] == engine
    assert (doc["m"], doc["H"]) == (m, H)
    assert type(doc["repairs"]) is int and doc["repairs"] >= 0
    assert len(doc["basis"]) == m - H
    for path in doc["basis"] + doc["discarded"]:
        assert_valid_path(spec, path)
    basis = {json.dumps(p) for p in doc["basis"]}
    assert len(basis) == len(doc["basis"]), "basis paths must be distinct"
    assert not basis & {json.dumps(p) for p in doc["discarded"]}, "a discarded path is in the basis"
    if engine == "skeleton":
        assert doc["discarded"] == [] and doc["repairs"] == 0


@pytest.mark.parametrize("name, engine", ALL_RUNS)
def test_solve_json_summary(solved, name, engine):
    run = solved[name, engine]
    assert run.res.stdout.count("\n") == 1 and run.res.stdout.endswith("\n"), "--json prints one line"
    s = run.summary
    m, H = m_and_h(run.spec)
    for key in ("m", "H", "basis_size", "certified", "repairs", "repairs_needed", "timings"):
        assert key in s, key
    assert (s["m"], s["H"], s["basis_size"]) == (m, H, m - H)
    assert s["certified"] is True
    assert s["repairs"] == run.doc["repairs"]
    assert s["repairs_needed"] == s["repairs"]  # repair on: everything needed was applied
    assert isinstance(s["timings"], dict) and s["timings"]
    assert all(isinstance(v, (int, float)) and v >= 0 for v in s["timings"].values())


def test_json_summary_values_fig1b(solved):
    s = solved["fig1b", "deah"].summary
    assert (s["m"], s["H"], s["basis_size"]) == (32, 7, 25)
    assert s["certified"] is True
    assert s["repairs"] == 0 and s["repairs_needed"] == 0
    assert s["engine"] == "deah" and s["network"] == "fig1b"


@needs_certify_tool
@pytest.mark.parametrize("name, engine", ALL_RUNS)
def test_export_certified_by_independent_checker(solved, name, engine):
    run = solved[name, engine]
    res = run_certify_tool(run.spec_path, run.export)
    assert res.returncode == 0 and res.stdout.startswith("basis ok"), show(res)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_discard_certificates_sum_to_discarded_path(solved, name):
    doc, spec = solved[name, "deah"].doc, solved[name, "deah"].spec
    if name in ("densenet-style", "resnet-style"):
        assert doc["discarded"], "these examples make DEAH discard paths"
    reasons = doc.get("discard_reasons", [])
    assert len(reasons) == len(doc["discarded"])
    basis = {json.dumps(p) for p in doc["basis"]}
    for path, reason in zip(doc["discarded"], reasons):
        cert = reason["certificate"]
        assert cert, f"no certificate for discarded path {path}"
        for term in cert:
            assert type(term["coef"]) is int and term["coef"] != 0, term
            assert json.dumps(term["path"]) in basis, f"certificate uses a path outside the basis: {term}"
            assert_valid_path(spec, term["path"])
        assert combination(cert) == dict(weight_vector(path)), f"certificate of {path} does not add up"


def test_verify_accepts_solve_exports(solved):
    keys = [("resnet-style", "deah"), ("densenet-style", "skeleton")]
    results = run_many((["verify", solved[k].spec_path, "out.json"], solved[k].folder, None) for k in keys)
    for k, res in zip(keys, results):
        m, H = m_and_h(solved[k].spec)
        assert res.returncode == 0, show(res)
        assert res.stdout == f"certified: {m - H} independent paths = m - H = {m} - {H}\n", show(res)
        assert res.stderr == "", show(res)


# ---------------------------------------------------------------------------------------
# --no-repair


def test_no_repair_resnet_exports_raw_union_and_exits_1(solved, tmp_path):
    (tmp_path / "raw.json").write_bytes(SENTINEL)
    spec = EXAMPLES / "resnet-style.json"
    raw, report, fig = run_many(
        [
            (["solve", spec, "--engine", "deah", "--no-repair", "--export", "raw.json", "--json"], tmp_path, None),
            (["solve", spec, "--engine", "deah", "--no-repair"], tmp_path, None),
            (["solve", EXAMPLES / "fig1b.json", "--engine", "deah", "--no-repair", "--export", "fig.json"], tmp_path, None),
        ]
    )
    assert raw.returncode == 1, show(raw)
    assert raw.stderr == "", show(raw)
    doc = json.loads((tmp_path / "raw.json").read_text())
    assert len(doc["basis"]) == 140
    assert doc["repairs"] == 0
    assert (doc["m"], doc["H"]) == (150, 20)
    for path in doc["basis"]:
        assert_valid_path(load_example("resnet-style"), path)
    s = json.loads(raw.stdout)
    assert s["certified"] is False and s["basis_size"] == 140 and s["repairs"] == 0
    assert s["defect"] == "size 140 != m - H = 130"
    # The repair is still worked out and reported, just not applied; it is the one applied
    # when repair is on.
    repaired = solved["resnet-style", "deah"]
    assert s["repairs_needed"] == repaired.summary["repairs"] == repaired.doc["repairs"] > 0
    assert len(repaired.doc["basis"]) == 130

    assert report.returncode == 1, show(report)
    assert "NOT certified" in report.stdout and "size 140 != m - H = 130" in report.stdout, show(report)
    assert "not applied: --no-repair" in report.stdout, show(report)

    # Raw DEAH is already a basis on fig1b: --no-repair changes nothing and exits 0.
    assert fig.returncode == 0, show(fig)
    assert json.loads((tmp_path / "fig.json").read_text())["basis"] == solved["fig1b", "deah"].doc["basis"]

    if CERTIFY_TOOL.is_file():  # the independent checker agrees the raw union is no basis
        tool = run_certify_tool(spec, tmp_path / "raw.json")
        assert tool.returncode == 1 and "size 140" in tool.stdout, show(tool)


# ---------------------------------------------------------------------------------------
# verify: defects (exit 1) on a doctored solve export


def _fmt(path) -> str:
    return ",".join(f"{l}:{i}" for l, i in path)


def _doctored_bases(doc: dict):
    """(id, file content, expected stdout line) for basis files made from a resnet export."""
    basis = doc["basis"]
    last = basis[-1]
    out_of_range = [list(p) for p in last[:-1]] + [[last[-1][0], 7]]
    # A discarded path is a combination of basis paths; swap it in for a basis path its
    # certificate does not use and the set is the right size but dependent.
    reasons = doc["discard_reasons"]
    k = next(i for i in range(len(basis) - 1, -1, -1) if all(t["path"] != basis[i] for t in reasons[0]["certificate"]))
    dependent = basis[:k] + [doc["discarded"][0]] + basis[k + 1 :]
    return [
        ("remove-one", {**doc, "basis": basis[:-1]}, "not certified: size 129 != m - H = 130"),
        (
            "duplicate",
            {**doc, "basis": basis + [last]},
            f"not certified: path 130 ({_fmt(last)}) duplicates path 129",
        ),
        (
            "index-out-of-range",
            {**doc, "basis": basis[:-1] + [out_of_range]},
            f"not certified: path 129 ({_fmt(out_of_range)}): neuron index 7 out of range at layer 5 (width 2)",
        ),
        (
            "unconnected-hop",
            {**doc, "basis": basis[:-1] + [[[0, 0], [5, 0]]]},
            "not certified: path 129 (0:0,5:0): hop 0->5 is not a connected layer pair",
        ),
        ("dependent", {**doc, "basis": dependent}, "not certified: dependent: rank 129 < 130"),
        ("empty", [], "not certified: size 0 != m - H = 130"),
    ]


def test_verify_names_the_defect(solved, tmp_path):
    doc = solved["resnet-style", "deah"].doc
    cases = _doctored_bases(doc)
    for case_id, content, _ in cases:
        (tmp_path / f"{case_id}.json").write_text(json.dumps(content))
    # A bare list of paths is accepted as well as a solve export.
    (tmp_path / "bare.json").write_text(json.dumps(doc["basis"]))
    spec = EXAMPLES / "resnet-style.json"
    jobs = [(["verify", spec, f"{case_id}.json"], tmp_path, None) for case_id, _, _ in cases]
    jobs.append((["verify", spec, "bare.json"], tmp_path, None))
    *results, bare = run_many(jobs)
    for (case_id, _, expected), res in zip(cases, results):
        assert res.returncode == 1, f"{case_id}\n{show(res)}"
        assert res.stdout == expected + "\n", f"{case_id}\n{show(res)}"
        assert res.stderr == "", f"{case_id}\n{show(res)}"
    assert bare.returncode == 0, show(bare)
    assert bare.stdout.startswith("certified: 130 independent paths"), show(bare)


def test_verify_numbers_paths_in_file_order(tmp_path):
    spec = EXAMPLES / "fig1b.json"
    bad = [[0, 0], [1, 0], [2, 0], [3, 0], [4, 9]]
    (tmp_path / "b.json").write_text(
        json.dumps([[[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]], [[0, 0], [2, 0], [3, 0], [4, 0]], bad])
    )
    res = basispath("verify", spec, "b.json", cwd=tmp_path)
    assert res.returncode == 1, show(res)
    # The bad path is the third one in the file: index 2.
    assert res.stdout == f"not certified: path 2 ({_fmt(bad)}): neuron index 9 out of range at layer 4 (width 2)\n"


# ---------------------------------------------------------------------------------------
# Refused input: exit 2, one ``error:`` line, nothing written


def spec_text(**data) -> str:
    return json.dumps(data)


NET4 = {"widths": [2, 2, 2, 2]}  # L = 3
GOOD_BASIS = json.dumps([[[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]])
LIMIT_TAIL = "(raise it with max_weights or BASISPATH_MAX_WEIGHTS)"


def refusal(case_id, args, message, files=None, env=None, prefix=False):
    return SimpleNamespace(id=case_id, args=args, message=message, files=files or {}, env=env, prefix=prefix)


def bad_spec(case_id, content, message, name="s.json", prefix=False):
    """``solve`` on a spec file with this content; the message follows ``<name>: ``."""
    return refusal(
        case_id, ["solve", name, "--export", "out.json"], f"{name}: {message}", files={name: content}, prefix=prefix
    )


REFUSALS = [
    # Unreadable or unparseable spec files.
    bad_spec("spec-invalid-json", '{"widths": [2, 3\n', "invalid JSON at line 2, column 1: expecting ',' delimiter"),
    bad_spec(
        "spec-invalid-yaml",
        "widths: [2, 3\n",
        "invalid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>' "
        "(while parsing a flow sequence at line 1, column 9)",
        name="s.yaml",
    ),
    refusal("spec-missing-file", ["solve", "nope.json", "--export", "out.json"], "nope.json: file not found"),
    # Bad widths.
    bad_spec("widths-missing", spec_text(name="x", skips=[]), 'missing required key "widths"'),
    bad_spec("width-float", spec_text(widths=[2, 2.5, 2]), "widths[1] must be an integer >= 1, got 2.5"),
    bad_spec("width-zero", spec_text(widths=[2, 0, 2]), "widths[1] must be an integer >= 1, got 0"),
    bad_spec("width-negative", spec_text(widths=[2, 2, -3]), "widths[2] must be an integer >= 1, got -3"),
    # Bad skips.
    bad_spec("skip-backwards", spec_text(**NET4, skips=[[2, 0]]), "skips[0] = [2, 0] goes backwards: need a < b"),
    bad_spec("skip-to-itself", spec_text(**NET4, skips=[[1, 1]]), "skips[0] = [1, 1] connects layer 1 to itself: need a < b"),
    bad_spec("skip-out-of-range", spec_text(**NET4, skips=[[0, 2], [0, 4]]), "skips[1] = [0, 4] is out of range: layers are 0..3"),
    bad_spec("skip-not-a-pair", spec_text(**NET4, skips=[[0, 1, 2]]), "skips[0] must be a pair [a, b] of layer indices, got a list of 3 items"),
    bad_spec("skip-not-integer", spec_text(**NET4, skips=[[0, "2"]]), 'skips[0][1] must be an integer, got "2"'),
    # Limits (fig1b has m = 32 weights and 4 substructure paths).
    refusal(
        "max-weights-option",
        ["solve", "net.json", "--max-weights", "31", "--export", "out.json"],
        f"net.json: network has 32 weights, more than the limit of 31 {LIMIT_TAIL}",
    ),
    refusal(
        "max-weights-env",
        ["solve", "net.json", "--export", "out.json"],
        f"net.json: network has 32 weights, more than the limit of 31 {LIMIT_TAIL}",
        env={"BASISPATH_MAX_WEIGHTS": "31"},
    ),
    refusal(
        "max-weights-option-beats-env",
        ["solve", "net.json", "--max-weights", "31", "--export", "out.json"],
        f"net.json: network has 32 weights, more than the limit of 31 {LIMIT_TAIL}",
        env={"BASISPATH_MAX_WEIGHTS": "1000"},
    ),
    refusal(
        "max-substructures-zero",
        ["solve", "net.json", "--max-substructures", "0", "--export", "out.json"],
        "Invalid value for '--max-substructures': Input should be greater than or equal to 1",
    ),
    # Options and arguments.
    refusal(
        "engine-unknown",
        ["solve", "net.json", "--engine", "foo", "--export", "out.json"],
        "unknown engine 'foo'; choose one of: deah, deah-complete, skeleton",
    ),
    refusal("seed-negative", ["solve", "net.json", "--seed", "-1", "--export", "out.json"], "--seed must be >= 0, got -1"),
    refusal(
        "seed-not-integer", ["solve", "net.json", "--seed", "1.5", "--export", "out.json"], "Invalid value for '--seed'", prefix=True
    ),
    refusal("unknown-option", ["solve", "net.json", "--bogus", "--export", "out.json"], "No such option: --bogus"),
    refusal("missing-spec", ["solve", "--export", "out.json"], "Missing argument 'SPEC'."),
    refusal(
        "export-missing-folder",
        ["solve", "net.json", "--export", "missing/out.json"],
        "cannot write export file missing/out.json: not a file in an existing folder",
    ),
    # verify: unreadable or malformed basis files, and bad specs.
    refusal("verify-missing-basis-arg", ["verify", "net.json"], "Missing argument 'BASIS'."),
    refusal("verify-basis-missing", ["verify", "net.json", "nope.json"], "nope.json: no such file"),
    refusal(
        "verify-basis-not-json",
        ["verify", "net.json", "b.json"],
        "b.json: not valid JSON: Expecting value at line 1 column 1",
        files={"b.json": "nope\n"},
    ),
    refusal(
        "verify-basis-not-a-list",
        ["verify", "net.json", "b.json"],
        "b.json: expected a list of paths or an object with a 'basis' list",
        files={"b.json": '{"basis": 3}'},
    ),
    refusal(
        "verify-path-not-pairs",
        ["verify", "net.json", "b.json"],
        "b.json: basis[1] is not a list of [layer, index] integer pairs",
        files={"b.json": '[[[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]], [[0, 0], [1, "a"]]]'},
    ),
    refusal(
        "verify-bad-spec",
        ["verify", "s.json", "b.json"],
        "s.json: widths[1] must be an integer >= 1, got 0",
        files={"s.json": spec_text(widths=[2, 0, 2]), "b.json": GOOD_BASIS},
    ),
]


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """Run every REFUSALS case in its own folder; id -> (result, snapshot before, folder)."""
    fig1b = (EXAMPLES / "fig1b.json").read_bytes()
    prepared = []
    for case in REFUSALS:
        folder = tmp_path_factory.mktemp(f"refused-{case.id}")
        (folder / "net.json").write_bytes(fig1b)
        (folder / "out.json").write_bytes(SENTINEL)  # an earlier export that must survive
        (folder / "sub").mkdir()
        for name, content in case.files.items():
            (folder / name).write_text(content)
        prepared.append((case, folder, snapshot(folder)))
    results = run_many((case.args, folder, case.env) for case, folder, _ in prepared)
    return {case.id: (res, before, folder) for (case, folder, before), res in zip(prepared, results)}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in REFUSALS])
def test_refused_input(refused, case):
    res, before, folder = refused[case.id]
    assert_refused(res, case.message, prefix=case.prefix)
    # Nothing written: the existing export is byte-identical, no new or temporary files,
    # and no missing folder created.
    assert snapshot(folder) == before


def test_max_weights_limit_is_inclusive(tmp_path):
    spec = EXAMPLES / "fig1b.json"
    by_option, by_env = run_many(
        [
            (["solve", spec, "--max-weights", "32", "--json"], tmp_path, None),
            (["solve", spec, "--json"], tmp_path, {"BASISPATH_MAX_WEIGHTS": "32"}),
        ]
    )
    for res in (by_option, by_env):
        assert res.returncode == 0, show(res)
        assert json.loads(res.stdout)["m"] == 32


# ---------------------------------------------------------------------------------------
# Seeds


def test_seeds_are_reproducible_and_each_certified(tmp_path):
    spec = EXAMPLES / "densenet-style.json"
    runs = [
        ("deah-3a", "deah", 3),
        ("deah-3b", "deah", 3),
        ("skeleton-3a", "skeleton", 3),
        ("skeleton-3b", "skeleton", 3),
        ("skeleton-1", "skeleton", 1),
        ("skeleton-2", "skeleton", 2),
    ]
    results = run_many(
        (["solve", spec, "--engine", engine, "--seed", seed, "--export", f"{rid}.json", "--json"], tmp_path, None)
        for rid, engine, seed in runs
    )
    for res in results:
        assert res.returncode == 0, show(res)
        assert json.loads(res.stdout)["certified"] is True, show(res)
    data = {rid: (tmp_path / f"{rid}.json").read_bytes() for rid, _, _ in runs}
    assert data["deah-3a"] == data["deah-3b"]
    assert data["skeleton-3a"] == data["skeleton-3b"]

    skeletons = ["skeleton-1", "skeleton-2", "skeleton-3a"]
    docs = {rid: json.loads(data[rid]) for rid in skeletons}
    for (rid, _, seed) in runs:
        if rid in docs:
            assert docs[rid]["seed"] == seed and docs[rid]["engine"] == "skeleton"
    assert len({json.dumps(docs[rid]["basis"]) for rid in skeletons}) > 1, "the seed must change the skeleton basis"
    if CERTIFY_TOOL.is_file():
        for rid in skeletons:
            tool = run_certify_tool(spec, tmp_path / f"{rid}.json")
            assert tool.returncode == 0 and tool.stdout.startswith("basis ok"), show(tool)
    else:  # fall back on the project's own checker
        for res in run_many((["verify", spec, f"{rid}.json"], tmp_path, None) for rid in skeletons):
            assert res.returncode == 0 and res.stdout.startswith("certified: "), show(res)


# ---------------------------------------------------------------------------------------
# YAML specs


def test_yaml_spec_works_like_json(solved, tmp_path):
    spec = load_example("resnet-style")
    # Block style, a comment, and flow-style skips: real YAML, not JSON.
    text = "# resnet-style as YAML\n" + yaml.safe_dump({"name": spec["name"], "widths": spec["widths"]}, default_flow_style=False)
    text += "skips:\n" + "".join(f"  - [{a}, {b}]\n" for a, b in spec["skips"])
    names = ["net.yaml", "net"]  # "net": no extension, JSON tried first, then YAML
    for name in names:
        (tmp_path / name).write_text(text)
    results = run_many(
        (["solve", name, "--engine", "deah", "--export", f"{name}.out.json", "--json"], tmp_path, None) for name in names
    )
    reference = solved["resnet-style", "deah"]
    for name, res in zip(names, results):
        assert res.returncode == 0, show(res)
        doc = json.loads((tmp_path / f"{name}.out.json").read_text())
        assert doc == reference.doc, name
        summary = json.loads(res.stdout)
        summary.pop("timings")
        expected = dict(reference.summary)
        expected.pop("timings")
        assert summary == expected, name
    res = basispath("verify", "net.yaml", "net.yaml.out.json", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith("certified: 130 independent paths"), show(res)


# ---------------------------------------------------------------------------------------
# Help


def test_help_mentions_an_example(tmp_path):
    invocations = [["--help"], ["solve", "--help"], ["verify", "--help"]]
    results = run_many((args, tmp_path, None) for args in invocations)
    for args, res in zip(invocations, results):
        assert res.returncode == 0, show(res)
        assert res.stderr == "", show(res)
        assert "Usage" in res.stdout, show(res)
    top, solve_help, verify_help = (r.stdout for r in results)
    assert "solve" in top and "verify" in top
    assert "Example" in solve_help and "basispath solve examples/" in solve_help
    assert "Example" in verify_help and "basispath verify examples/" in verify_help
    for option in ("--engine", "--seed", "--export", "--no-repair", "--json", "--max-weights"):
        assert option in solve_help, option


def test_bare_command_prints_help_and_exits_0(tmp_path):
    res = basispath(cwd=tmp_path)
    assert res.returncode == 0, show(res)
    assert "Usage" in res.stdout and "solve" in res.stdout, show(res)
    assert "error" not in res.stderr, show(res)


def test_console_script_entry_point(tmp_path):
    script = Path(sys.executable).parent / "basispath"
    if not script.is_file():
        pytest.skip(f"no console script at {script} (package not installed in this interpreter's environment)")
    res = subprocess.run(
        [str(script), "solve", str(EXAMPLES / "fig1b.json"), "--json"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120,
    )
    assert res.returncode == 0, show(res)
    assert json.loads(res.stdout)["basis_size"] == 25


def test_lazy_substructures_give_the_same_export(tmp_path):
    # --max-substructures below |P^S| switches Step 1 to lazy generation: same basis, same discards.
    spec = EXAMPLES / "densenet-style.json"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    cli("solve", str(spec), "--export", str(a), "-q", check=0)
    cli("solve", str(spec), "--export", str(b), "-q", "--max-substructures", "1", check=0)
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert (da["basis"], da["discarded"], da["repairs"]) == (db["basis"], db["discarded"], db["repairs"])
