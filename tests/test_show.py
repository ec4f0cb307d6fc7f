"""``basispath show``: DOT structure, PNG/SVG files, the neuron-level picture and its errors.

Each store is made once by the real CLI (``run ... --json``), once per backend (a LadybugDB
folder, then the session's Neo4j server: tests/conftest.py); the ``show`` calls only read it, so
they are started together and the tests check the collected results (interpreter and matplotlib
start-up dominate the cost).
"""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from basispath_graph.presets import preset_network
from basispath_graph.show import load_overview
from basispath_graph.show.dot import _q
from basispath_graph.show.draw import ear_order_lines
from basispath_graph.show.model import RunInfo, ShowError, block_text, find_path, load_path_view
from basispath_graph.show.palette import RULE_COLOURS
from basispath_graph.solver import solve
from basispath_graph.show.palette import colours
from basispath_graph.store import open_store

from .cli_runner import run_many
from .conftest import BACKEND_PARAMS, module_store

# Module-scoped stores per backend; the Neo4j one carries the neo4j marker like store_uri's.

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "densenet-style.json"
# deah-complete uses all three rules on it (p_0, ear and local blocks, one paying a layer debt)
COMPLETE_NETWORK = preset_network("resnet", 6, 2)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_all(jobs: dict[str, tuple[list, Path]]) -> dict[str, subprocess.CompletedProcess]:
    """Start the jobs together (the store is only read), then collect them by name.

    stdout stays bytes (pictures); matplotlib draws off screen (Agg)."""
    results = run_many(((args, cwd, {"MPLBACKEND": "Agg"}) for args, cwd in jobs.values()), text=False)
    return dict(zip(jobs, results))


def _run_id(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["run_id"]


def _rows(result: subprocess.CompletedProcess) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def shown(request, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("show")
    store = module_store(request, tmp_path_factory, "show-store")  # these tests only read it
    spec = root / "resnet-6x2.json"
    spec.write_text(json.dumps(COMPLETE_NETWORK.to_dict()))
    run_id = _run_id(run_all({"run": (["run", SPEC, "--store", store, "--engine", "deah", "--json"], root)})["run"])
    complete_id = _run_id(run_all({"run": (["run", spec, "--store", store, "--engine", "deah-complete", "--json"], root)})["run"])
    with open_store(str(store)) as s:  # read-only: the CLI calls below read the store too
        _, rows = s.query(
            "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) MATCH (b)-[:CERTIFIED_BY]->(k:BasisPath) "
            "RETURN b.id, b.text, count(k) ORDER BY b.id LIMIT 1",
            {"run": run_id},
        )
        discarded = dict(zip(("id", "text", "terms"), rows[0]))
        _, rows = s.query("MATCH (b:BasisPath {run: $run, id: 0}) RETURN b.layers", {"run": run_id})
        path0_layers = rows[0][0]
    out = root / "out"
    out.mkdir()
    s = ["--store", store]
    jobs = {
        "chains": (["query", *s, "--json", "--param", f"run={run_id}", "MATCH (c:Chain {run: $run}) RETURN count(c) AS n"], root),
        "dot": (["show", run_id, *s, "--format", "dot"], root),
        "png": (["show", run_id, *s, "--format", "png"], out),  # default file name RUN_ID.png
        "svg": (["show", run_id, *s, "-o", out / "overview.svg"], root),  # format from the suffix
        "path0_dot": (["show", run_id, *s, "--path", "0"], root),
        "path0_png": (["show", run_id, *s, "--path", "0", "--format", "png", "-o", out / "path0.png"], root),
        "cert_dot": (["show", run_id, *s, "--path", discarded["text"], "--certificate"], root),
        "cert_svg": (["show", run_id, *s, "--path", str(discarded["id"]), "--certificate", "-o", out / "cert.svg"], root),
        "complete_dot": (["show", complete_id, *s], root),
        "complete_png": (["show", complete_id, *s, "-o", out / "complete.png"], root),
        "bad_run": (["show", "nope0000", *s], root),
        "bad_path_id": (["show", run_id, *s, "--path", "99999"], root),
        "bad_path_text": (["show", run_id, *s, "--path", "0:9,1:9"], root),
    }
    results = run_all(jobs)
    with open_store(str(store)) as st:
        complete_overview = load_overview(st, complete_id)
    return {
        "results": results,
        "run_id": run_id,
        "complete_id": complete_id,
        "complete_overview": complete_overview,
        "chains": _rows(results["chains"])[0]["n"],
        "discarded": discarded,
        "path0_layers": path0_layers,
        "out": out,
    }


def _ok(shown, name: str) -> subprocess.CompletedProcess:
    result = shown["results"][name]
    assert result.returncode == 0, f"{name}: {result.stderr}"
    return result


def _network():
    spec = json.loads(SPEC.read_text())
    widths = spec["widths"]
    pairs = {(l, l + 1) for l in range(len(widths) - 1)} | {tuple(p) for p in spec["skips"]}
    return widths, pairs


def _attr(line: str, name: str) -> str | None:
    m = re.search(rf'\b{name}="([^"]*)"', line)
    return m.group(1) if m else None


# -- the overview in DOT ---------------------------------------------------------------------

def test_dot_overview_structure(shown) -> None:
    text = _ok(shown, "dot").stdout.decode()
    widths, pairs = _network()
    assert "digraph" in text
    assert text.count("{") == text.count("}")
    lines = text.splitlines()
    layer_nodes = [int(m.group(1)) for line in lines if (m := re.match(r"\s*L(\d+) \[", line))]
    assert sorted(layer_nodes) == list(range(len(widths)))  # one node line per layer
    layer_edges = Counter(
        (int(m.group(1)), int(m.group(2))) for line in lines if (m := re.match(r"\s*L(\d+) -> L(\d+) \[", line))
    )
    assert set(layer_edges) == pairs and set(layer_edges.values()) == {1}  # one edge line per pair
    chain_colour: dict[str, set[str]] = {}
    for line in lines:
        cls = _attr(line, "class")
        if cls and cls.startswith("chain"):
            chain_colour.setdefault(cls, set()).add(_attr(line, "color"))
    assert all(len(c) == 1 for c in chain_colour.values())  # one colour per chain ...
    distinct = {c for cs in chain_colour.values() for c in cs}
    assert len(distinct) == len(chain_colour) == shown["chains"] > 0  # ... and one chain per colour
    title = _attr(lines[2], "label") or ""
    assert "densenet-style" in title and f"T = {shown['chains']} chains" in title and "certified" in title


# -- a deah-complete run: its ear order, not chains -------------------------------------------

def _step3():
    return solve(COMPLETE_NETWORK, engine="deah-complete").deah.step3


def test_dot_of_a_deah_complete_run_draws_its_ear_order(shown) -> None:
    step3 = _step3()
    assert set(step3.rules.values()) == {"p0", "ear", "local"} and any(step3.paid_debts.values())
    text = _ok(shown, "complete_dot").stdout.decode()
    lines = text.splitlines()
    title = _attr(lines[2], "label") or ""
    rules = Counter(step3.rules.values())
    assert f"ear order: p_0, {rules['ear']} ear, {rules['local']} local" in title
    assert "chains" not in title and "T = " not in title
    # the ear order: p<idx> -> p<idx> edges, in order
    order = [(int(m.group(1)), int(m.group(2))) for line in lines if _attr(line, "class") == "ear-order"
             and (m := re.match(r"\s*p(\d+) -> p(\d+) \[", line))]
    assert order == list(zip(step3.order, step3.order[1:]))
    # each block: its rule, and the layer pairs it owns (p_0 owns the consecutive ones)
    nodes = {int(m.group(1)): line for line in lines if (m := re.match(r"\s*p(\d+) \[label", line))}
    assert set(nodes) == set(step3.order)
    for idx, line in nodes.items():
        assert _attr(line, "class") == step3.rules[idx]
        label = _attr(line, "label") or ""
        if step3.rules[idx] != "p0":
            owns = ", ".join(f"({a}, {b})" for a, b in step3.new_hops[idx]) or "no layer pair"
            assert f"{step3.rules[idx]}: owns {owns}" in label
        for layer, into, out_of in step3.paid_debts.get(idx, []):
            assert f"pays the debt of layer {layer} (in over {', '.join(f'({a}, {b})' for a, b in sorted(into))}" in label
    # G^S: every layer pair labelled with the block that brought it
    owner = {h: idx for idx, hops in step3.new_hops.items() for h in hops}
    owner |= {(l, l + 1): step3.order[0] for l in range(COMPLETE_NETWORK.L)}
    edges = {(int(m.group(1)), int(m.group(2))): _attr(line, "label") for line in lines if (m := re.match(r"\s*L(\d+) -> L(\d+) \[", line))}
    assert edges == {h: f"p{idx}" for h, idx in owner.items()}
    legend = text[text.index("legend [") :]
    assert "ear order: " + " -&gt; ".join(f"p{idx}" for idx in step3.order) in legend


def test_picture_of_a_deah_complete_run_lists_its_ear_order(shown) -> None:
    step3, ov = _step3(), shown["complete_overview"]
    assert [b.idx for b in ov.plan] == step3.order
    assert {b.idx: b.rule for b in ov.plan} == step3.rules
    assert {b.idx: list(b.new_hops) for b in ov.plan} == step3.new_hops
    assert {b.idx: [(d.layer, d.into, d.out_of) for d in b.paid] for b in ov.plan if b.rule == "local"} == step3.paid_debts
    lines = ear_order_lines(ov, 200)  # what the PNG/SVG prints under G^S, one line per block here
    assert [(text.split(":")[0], colour) for text, colour in lines] == [
        (f"#{k + 1} p{idx}", RULE_COLOURS[step3.rules[idx]]) for k, idx in enumerate(step3.order)]
    assert all(text.endswith(block_text(b)) for (text, _), b in zip(lines, ov.plan))
    sizes, _ = ov.counts()  # the picture's second title line
    assert "ear order: p_0, {} ear, {} local".format(*(Counter(step3.rules.values())[r] for r in ("ear", "local"))) in sizes
    assert not any(s.startswith("T = ") for s in sizes)


# -- PNG and SVG files ---------------------------------------------------------------------------

def test_png_and_svg_written(shown) -> None:
    out, run_id = shown["out"], shown["run_id"]
    for name in ("png", "svg", "path0_png", "cert_svg"):
        _ok(shown, name)
    assert f"wrote {run_id}.png" in shown["results"]["png"].stdout.decode()
    for png in (f"{run_id}.png", "path0.png", "complete.png"):
        data = (out / png).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
    for svg in ("overview.svg", "cert.svg"):
        root = ET.parse(out / svg).getroot()
        assert root.tag.endswith("svg")
    # written atomically: no temporary files are left beside the pictures
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{run_id}.png", "cert.svg", "complete.png", "overview.svg", "path0.png"])


# -- the neuron-level picture -------------------------------------------------------------------

def test_path_dot_by_id(shown) -> None:
    text = _ok(shown, "path0_dot").stdout.decode()
    widths, pairs = _network()
    lines = text.splitlines()
    neurons = [line for line in lines if re.match(r"\s*n\d+ \[", line)]
    weights = [line for line in lines if _attr(line, "class") == "weight"]
    path_edges = [line for line in lines if _attr(line, "class") == "path"]
    assert len(neurons) == sum(widths)
    assert len(weights) == sum(widths[a] * widths[b] for a, b in pairs)
    assert len(path_edges) == len(shown["path0_layers"]) - 1
    assert not any((_attr(line, "class") or "").startswith("cert") for line in lines)


def test_path_certificate_by_text(shown) -> None:
    text = _ok(shown, "cert_dot").stdout.decode()
    d = shown["discarded"]
    assert f"path #{d['id']} {d['text']}: discarded" in text
    cert_classes = {c for line in text.splitlines() if (c := _attr(line, "class")) and c.startswith("cert")}
    assert len(cert_classes) == d["terms"]  # one colour per kept path of the certificate
    legend = text[text.index("legend [") :]
    assert legend.count(" x kept #") == d["terms"]


# -- errors: one line, exit 2 -------------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad_run", "error: no run 'nope0000' in this store"),
        ("bad_path_id", "error: no path '99999' in run "),
        ("bad_path_text", "error: no path '0:9,1:9' in run "),
    ],
)
def test_errors_are_one_line(shown, name: str, message: str) -> None:
    result = shown["results"][name]
    assert result.returncode == 2, result.stderr
    assert result.stdout == b""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr


# -- small pieces, in process --------------------------------------------------------------------

def test_colours_distinct() -> None:
    for n in (1, 9, 10, 40, 500):
        assert len(set(colours(n))) == n
        assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours(n))


def test_dot_quoting() -> None:
    assert _q('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


class StubStore:
    """Answers ``show_run_summary`` with one run of the given widths; any other query fails."""

    def __init__(self, widths: list[int]):
        self.widths = widths

    def run(self, name: str, **params) -> list[dict]:
        if name == "show_run_summary":
            m = sum(a * b for a, b in zip(self.widths, self.widths[1:]))
            return [dict(id=params["run"], engine="deah", seed=0, status="complete", kind="layered", key="k", name="too-big", widths=self.widths,
                         skips=[], m=m, H=sum(self.widths[1:-1]), basis_size=None, certified=None, repairs=None, discarded=None)]
        if name == "show_discard_steps":
            return []
        raise AssertionError(f"unexpected query {name}")


@pytest.mark.parametrize(("widths", "message"), [([2, 62, 2], "66 neurons and 248 weights"), ([1, 20, 20, 1], "42 neurons and 440 weights")])
def test_neuron_picture_refuses_big_networks(widths, message) -> None:
    with pytest.raises(ShowError, match=message) as exc:
        load_path_view(StubStore(widths), "abcd0123", "0")
    assert "limited to 64 neurons and 400 weights" in str(exc.value) and "\n" not in str(exc.value)


def test_bad_path_syntax() -> None:
    run = RunInfo("r", "deah", 0, "complete", "x", (2, 2), ((0, 1),), 4, 0, None, None, None, None, {})
    for spec in ("zero", "0:1,", "0-1,1:0", "-1"):
        with pytest.raises(ShowError, match="give a path id"):
            find_path(StubStore([2, 2]), run, spec)
