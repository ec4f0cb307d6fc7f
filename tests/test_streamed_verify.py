"""Issue 26, item 3: `verify` reads a general network's paths file one path at a time and
certifies it in memory far below the file's (general.streamed_verify on json_stream).

The judge is the whole-document route it replaces: json.load, general_basis_of, certify_general.
Every file here, valid or broken in any of the ways below, gets the same verdict or the same
one-line error from both; json_stream reads what json.loads reads and fails where it fails, at
the same line and column, with chunks of a few characters (so every value crosses a chunk end).
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph import json_stream
from basispath_graph.errors import BadInput
from basispath_graph.export import read_json_file
from basispath_graph.general.model import parse_general
from basispath_graph.general.paths import certify_general, general_basis_of
from basispath_graph.general.streamed_verify import PathRows, certify_path_rows
from basispath_graph.verify.streamed import listed_rows, stream_basis_file
from basispath_graph.guards import STREAMED_BASIS_FILE_MEMORY, _size

from .cli_runner import cli
from .strategies import networks
from .test_general_networks import _path_json, exact_rank, general_specs, oracle_paths, oracle_vector

# ---------------------------------------------------------------- json_stream against json

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**20) | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["basis", "a", "format", "b\n"]), inner, max_size=4),
    max_leaves=20,
)
layouts = st.sampled_from([{}, {"indent": 1}, {"separators": (",", ":")}, {"indent": "\t", "separators": (" ,", " :  ")}])


def _stream(text: str):
    items, restarts = [], []
    doc = json_stream.stream_list(io.StringIO(text), "basis", lambda k, v: items.append((k, v)), lambda: restarts.append(len(items)))
    return doc, items, restarts


def _as_json_reads(data):
    """What stream_list should give for a document json.loads read as ``data``."""
    if isinstance(data, list):
        return None, list(enumerate(data))
    if not isinstance(data, dict):
        return data, []
    doc = {k: json_stream.SKIPPED if isinstance(v, (list, dict)) else v for k, v in data.items()}
    items = []
    if isinstance(data.get("basis"), list):
        doc["basis"] = json_stream.STREAMED
        items = list(enumerate(data["basis"]))
    return doc, items


@pytest.fixture(autouse=True)
def tiny_chunks(monkeypatch):
    monkeypatch.setattr(json_stream, "_CHUNK", 3)


@settings(max_examples=300, deadline=None)
@given(json_values, layouts)
def test_stream_list_reads_what_json_reads(value, layout):
    text = json.dumps(value, **layout)
    doc, items, restarts = _stream(text)
    want_doc, want_items = _as_json_reads(json.loads(text))
    assert doc == want_doc or (doc is want_doc)
    if not restarts:
        assert items == want_items
    else:  # a later "basis" list replaced the first: only its items count
        assert items[restarts[-1]:] == want_items


@settings(max_examples=500, deadline=None)
@given(json_values, layouts, st.integers(0, 10**6), st.sampled_from(["", ",", "]", "}", "[", "{", ":", '"', "x", " ", "1", "\n", "-", "tr"]))
def test_stream_list_fails_where_json_fails(value, layout, where, insert):
    text = json.dumps({"basis": value} if where % 2 else value, **layout)
    at = where % (len(text) + 1)
    broken = text[:at] + insert + text[at + (where % 3 == 0):]  # an insertion, a replacement or a cut
    try:
        data = json.loads(broken)
    except json.JSONDecodeError as exc:
        with pytest.raises(json.JSONDecodeError) as got:
            _stream(broken)
        assert (got.value.msg, got.value.lineno, got.value.colno) == (exc.msg, exc.lineno, exc.colno)
        return
    doc, items, restarts = _stream(broken)
    want_doc, want_items = _as_json_reads(data)
    assert doc == want_doc or doc is want_doc
    assert items[restarts[-1] if restarts else 0:] == want_items


# ---------------------------------------------------------------- the verdict against certify_general


def _outcome(read_and_certify) -> tuple | str:
    """(certified, defect, size, rank) of a verdict, or the BadInput message."""
    try:
        v = read_and_certify()
    except BadInput as exc:
        return str(exc)
    return v.certified, v.defect, v.size, v.rank


def _old_route(net, path):
    """The whole-document route."""
    return _outcome(lambda: certify_general(net, general_basis_of(net, read_json_file(path), str(path))))


def _new_route(net, path):
    rows = PathRows(net, str(path))
    return _outcome(lambda: certify_path_rows(listed_rows(rows, stream_basis_file(path, str(path), rows))))


def _chosen(paths):
    chosen, vectors = [], []
    for p in paths:
        if exact_rank(vectors + [oracle_vector(p)]) > len(vectors):
            chosen.append(p)
            vectors.append(oracle_vector(p))
    return chosen


def _broken(docs: list, rnd, all_paths) -> list:
    """Ways a list of path documents goes wrong: one fewer, a path twice (early or late), a
    dependent path, a neuron or a tap out of range, a layer no network has, a shape error,
    paths of different blocks interleaved."""
    out = [docs, docs[:-1], list(reversed(docs))]
    if len(docs) >= 2:
        out += [docs[:-1] + [docs[0]], [docs[1]] + docs, docs + [docs[-1]]]
    others = [_path_json(p) for p in all_paths if _path_json(p) not in docs]
    if others:
        out.append(docs[:-1] + [rnd.choice(others)])
    k = rnd.randrange(len(docs))
    bad = json.loads(json.dumps(docs[k]))
    bad["nodes"][-1][1] = 40000  # out of every range, and of a 2-byte row: found while reading
    out.append(docs[:k] + [bad] + docs[k + 1:])
    bad = json.loads(json.dumps(docs[k]))
    bad["nodes"][0][1] = -1  # kept in the row, found on the block
    out.append(docs[:k] + [bad] + docs[k + 1:] + [json.loads(json.dumps(bad))])
    taps = [i for i, t in enumerate(docs[k]["taps"]) if t is not None]
    if taps:
        bad = json.loads(json.dumps(docs[k]))
        bad["taps"][taps[0]] = 7
        out.append(docs[:k] + [bad] + docs[k + 1:])
    bad = json.loads(json.dumps(docs[k]))
    bad["nodes"][0][0] = "nowhere"
    out.append(docs[:k] + [bad] + docs[k + 1:])
    bad = json.loads(json.dumps(docs[k]))
    bad["nodes"][-1][0] = [bad["nodes"][-1][0]]  # a name that is not a string (nor hashable)
    out.append(docs[:k] + [bad] + docs[k + 1:])
    bad = json.loads(json.dumps(docs[k]))
    bad["taps"] = bad["taps"][:-1]
    out.append(docs[:k] + [bad] + docs[k + 1:])
    out.append(docs[:k] + [{"nodes": docs[k]["nodes"]}] + docs[k + 1:])
    out.append(docs[:k] + [{"nodes": [[n, 1.0] for n, _ in docs[k]["nodes"]], "taps": docs[k]["taps"]}] + docs[k + 1:])
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(general_specs(), st.randoms(use_true_random=False), st.sampled_from(["list", "export", "export, basis twice"]))
def test_streamed_certify_agrees_with_certify_generals(tmp_path, spec, rnd, form):
    net = parse_general(spec, "<spec>", 10**6)
    paths = oracle_paths(spec)
    rnd.shuffle(paths)
    docs = [_path_json(p) for p in _chosen(paths)]
    for n, basis in enumerate(_broken(docs, rnd, paths)):
        if form == "list":
            text = json.dumps(basis)
        elif form == "export":
            text = json.dumps({"spec": spec, "engine": "x", "m": net.m, "basis": basis, "discarded": [{"path": basis[:1]}]}, indent=1)
        else:
            text = '{"basis": [[["x", 0]]], "m": 3, "basis": ' + json.dumps(basis) + ', "repairs": 0}'
        path = tmp_path / f"basis-{n}.json"
        path.write_text(text)
        assert _new_route(net, path) == _old_route(net, path), (n, text[:300])


def test_a_full_basis_needs_no_duplicate_search(tmp_path, monkeypatch):
    """Full rank implies distinct paths: the (sorting) duplicate search runs only on a shortfall."""
    from basispath_graph.general import streamed_verify

    spec = {"name": "n", "layers": [{"name": "x", "size": 2}, {"name": "h", "size": 3}, {"name": "y", "size": 2}],
            "connections": [{"from": "x", "to": "h"}, {"from": "h", "to": "y"}]}
    net = parse_general(spec, "<spec>", 10**6)
    docs = [_path_json(p) for p in _chosen(oracle_paths(spec))]
    searched = []
    real = streamed_verify._first_duplicate
    monkeypatch.setattr(streamed_verify, "_first_duplicate", lambda *a: searched.append(1) or real(*a))
    (tmp_path / "b.json").write_text(json.dumps(docs))
    assert _new_route(net, tmp_path / "b.json")[0] is True and not searched
    (tmp_path / "b.json").write_text(json.dumps(docs[:-1] + [docs[0]]))
    assert _new_route(net, tmp_path / "b.json")[1] == f"path {len(docs) - 1} ({_text(net, docs[0])}) duplicates path 0"
    assert searched == [1]


def _text(net, doc) -> str:
    from basispath_graph.general.paths import format_general_path, read_general_path

    return format_general_path(net, read_general_path(net, doc, "p"))


# ---------------------------------------------------------------- the CLI

GENERAL = {
    "name": "block",
    "layers": [{"name": "x", "size": 3}, {"name": "a", "size": 4}, {"name": "b", "size": 4}, {"name": "y", "size": 2}],
    "connections": [
        {"from": "x", "to": "a", "taps": 2},
        {"from": "a", "to": "b", "kind": "grouped", "groups": 2},
        {"from": "x", "to": "b"},
        {"from": "b", "to": "y"},
    ],
}


@pytest.mark.parametrize("engine", ["skeleton", "deah", "deah-complete"])
def test_verify_cli_streams_every_engines_paths_export(tmp_path, engine):
    spec, out = tmp_path / "net.json", tmp_path / "basis.json"
    spec.write_text(json.dumps(GENERAL))
    cli("solve", str(spec), "--engine", engine, "--export-paths", str(out), "--quiet", check=0)
    r = cli("verify", str(spec), str(out), check=0)
    net = parse_general(GENERAL, "<spec>", 10**6)
    assert r.stdout == f"certified: {net.m - net.H} independent paths = m - H = {net.m} - {net.H}\n"
    doc = json.loads(out.read_text())
    doc["basis"][3] = doc["basis"][1]
    out.write_text(json.dumps(doc))
    r = cli("verify", str(spec), str(out), check=1)
    assert r.stdout.startswith("not certified: path 3 (") and r.stdout.endswith(") duplicates path 1\n")


@pytest.mark.parametrize("network", [GENERAL, {"widths": [3, 4, 4, 2], "skips": [[0, 2]]}], ids=["general", "layered"])
def test_verify_cli_refuses_a_paths_file_over_its_streamed_estimate(tmp_path, network):
    spec, out = tmp_path / "net.json", tmp_path / "basis.json"
    spec.write_text(json.dumps(network))
    cli("solve", str(spec), "--export-paths", str(out), "--quiet", check=0)
    size = out.stat().st_size
    need = STREAMED_BASIS_FILE_MEMORY(size)
    r = cli("verify", str(spec), str(out), "--max-memory-gb", "0.00001", check=2)
    assert (r.stdout, r.stderr) == ("", file_refusal(out, size, need, "10 kB"))


def file_refusal(path, size: int, need: float, limit: str) -> str:
    """What ``verify`` says when it refuses to read ``path`` (``size`` bytes, ``need`` estimated)."""
    return (f"error: reading {path} ({_size(size)} of JSON) would need about {_size(need)} (at least {_size(need / 2)}),"
            f" over the limit of {limit}; export a described basis (solve --export of deah-complete or the skeleton:"
            " a few numbers per neuron) or raise --max-memory-gb / BASISPATH_MAX_MEMORY_GB\n")


# ---------------------------------------------------------------- layered networks: against certify


def _old_layered(net, path):
    from basispath_graph.export import basis_paths_of
    from basispath_graph.network import blocks_from_json
    from basispath_graph.verify import certify

    return _outcome(lambda: certify(net, blocks_from_json(basis_paths_of(read_json_file(path), str(path)))))


def _new_layered(net, path):
    from basispath_graph.verify.streamed import LayeredRows, certify_layered_rows

    rows = LayeredRows(net, str(path))
    return _outcome(lambda: certify_layered_rows(listed_rows(rows, stream_basis_file(path, str(path), rows))))


def _broken_layered(paths: list, rnd, net) -> list:
    out = [paths, paths[:-1], list(reversed(paths)), paths[:-1] + [paths[0]], [paths[-1]] + paths]
    k = rnd.randrange(len(paths))
    other = [[l, rnd.randrange(net.widths[l])] for l, _ in paths[k]]
    out.append(paths[:k] + [other] + paths[k + 1:])  # maybe dependent, maybe a duplicate, maybe fine
    past = [[l, 40000] if n == 1 else [l, i] for n, (l, i) in enumerate(paths[k])]
    huge = [[l, -(2**63) - 1] if n == 0 else [l, i] for n, (l, i) in enumerate(paths[-1])]
    out.append(paths[:k] + [past] + paths[k:] + [huge])  # an invalid path, then one not in the form of a path
    for bad in (
        [[l, i + (net.widths[l] if n == len(paths[k]) - 1 else 0)] for n, (l, i) in enumerate(paths[k])],  # neuron out of range
        [[l, 40000] if n == len(paths[k]) - 1 else [l, i] for n, (l, i) in enumerate(paths[k])],  # past a 2-byte row
        [[l, -40000] if n == 0 else [l, i] for n, (l, i) in enumerate(paths[k])],
        [[l, 2**63] if n == 0 else [l, i] for n, (l, i) in enumerate(paths[k])],  # out of 64 bits
        [[2**63, i] if n == 0 else [l, i] for n, (l, i) in enumerate(paths[k])],
        list(reversed(paths[k])),  # layers not ascending
        paths[k][1:],  # starts past layer 0
        [],
        [[0, True]] + paths[k][1:],
        [[0, 1.0]] + paths[k][1:],
        [[0, 1, 2]] + paths[k][1:],
        {"nodes": paths[k]},
    ):
        out.append(paths[:k] + [bad] + paths[k + 1:])
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(networks(max_layers=5, max_width=4), st.randoms(use_true_random=False), st.sampled_from(["list", "export"]))
def test_streamed_layered_verdict_is_certifys(tmp_path, net, rnd, form):
    from basispath_graph.network import paths_to_json
    from basispath_graph.skeleton import skeleton_basis

    paths = paths_to_json(skeleton_basis(net, rnd.randrange(5)))
    for n, basis in enumerate(_broken_layered(paths, rnd, net)):
        doc = basis if form == "list" else {"spec": {"widths": net.widths}, "basis": basis, "discarded": [basis[:2]], "repairs": 0}
        path = tmp_path / f"basis-{n}.json"
        path.write_text(json.dumps(doc))
        assert _new_layered(net, path) == _old_layered(net, path), (n, json.dumps(basis)[:300])


# ---------------------------------------------------------------- peel_by_holders against peel


class _Block:
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def take(self, idx):
        return _Block(self.rows[idx])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.lists(st.lists(st.integers(0, 11), min_size=1, max_size=4, unique=True), max_size=30),
       st.integers(1, 3), st.integers(0, 4))
def test_peel_by_holders_peels_what_peel_peels(m, vectors, hops, chunk_log):
    """Blocks of vectors with the same number of coordinates (rows of weight ids): the same
    peeled count and the same core as peel on their CSR arrays, whatever the chunk size (weight
    ids made at a time: blocks of 15 rows cut into chunks of max(2**chunk_log, m // 4) // hops); and
    peel_result_by_holders (what Expresser peels with) gives peel's whole result."""
    import numpy as np

    from basispath_graph.linalg import peeling

    vectors = [v[:hops] for v in vectors if len(v) >= hops and max(v[:hops]) < m]
    blocks = [_Block(np.array(vectors[i:i + 15], dtype=np.int64).reshape(-1, hops)) for i in range(0, len(vectors), 15)]
    ptr = np.arange(0, hops * len(vectors) + 1, hops)
    want = peeling.peel(ptr, np.array(vectors, dtype=np.int64).reshape(-1), m)
    old = peeling._ENTRIES
    peeling._ENTRIES = 2**chunk_log
    try:
        peeled, core = peeling.peel_by_holders(blocks, lambda b: b.rows, m)
        whole = peeling.peel_result_by_holders(blocks, lambda b: b.rows, m)
    finally:
        peeling._ENTRIES = old
    assert peeled == want.n_peeled
    rows = core.materialise()  # the core made from the blocks; held: the coordinates its rows hold
    assert sorted(rows) == sorted(vectors[i] for i in want.core.tolist()) and len(rows) == len(core) == len(want.core)
    assert np.flatnonzero(core.held).tolist() == sorted({w for i in want.core.tolist() for w in vectors[i]})
    # the whole result is peel's: the same vectors in the same order, the same pivots and rounds
    assert whole.order.tolist() == want.order.tolist() and whole.private.tolist() == want.private.tolist()
    assert whole.core.tolist() == want.core.tolist() and whole.round_ends.tolist() == want.round_ends.tolist()
