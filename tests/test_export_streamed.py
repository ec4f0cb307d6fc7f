"""``basispath solve --export`` of a general network writes its document in pieces, a block of
paths at a time (``documents.export_pieces``): the same bytes as ``json.dumps(result.export())``,
without the whole document held as Python objects (faithful deah's 11.7 M paths of ResNet-18
had taken more memory that way than the solve, and the kernel killed it). Above
``LISTED_DAG_DISCARDS`` discards a faithful run on a layered core exports their count
(``discarded_on_demand``), as the layer DAG engines do; `why` makes a certificate when asked."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from basispath_graph import api
from basispath_graph.general import documents
from basispath_graph.general.blocks import block_paths, block_paths_text
from basispath_graph.general.documents import export_pieces
from basispath_graph.general.model import parse_general
from basispath_graph.general.solve import solve_general

from .cli_runner import cli
from .test_dag_deah_store import FIRE
from .test_described_deah_store import GENERAL
from .test_general_networks import general_specs


@pytest.mark.parametrize("spec, engine", [(GENERAL, "deah"), (GENERAL, "deah-complete"), (GENERAL, "skeleton"),
                                          (FIRE, "deah"), (FIRE, "deah-complete")])
def test_the_streamed_export_is_the_export_document_byte_for_byte(spec, engine):
    result = api.solve(spec, engine=engine)
    assert "".join(export_pieces(result)) == json.dumps(result.export())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs())
def test_the_streamed_export_of_any_general_network_is_its_document(spec):
    result = solve_general(parse_general(spec, "<spec>", 10**6), "deah")
    assert "".join(export_pieces(result)) == json.dumps(result.export())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs())
def test_a_block_s_paths_text_is_its_paths_json(spec):
    # identity hops (null taps), taps, biases: one format per block gives json.dumps's bytes
    net = parse_general(spec, "<spec>", 10**6)
    for block in solve_general(net, "deah-complete").basis:
        assert block_paths_text(net, block) == json.dumps(block_paths(net, block))[1:-1]


def test_many_faithful_discards_on_a_layered_core_are_exported_as_their_count(monkeypatch):
    result = api.solve(GENERAL, engine="deah")
    listed = result.export()
    assert len(listed["discarded"]) == len(result.core.discarded) > 0
    monkeypatch.setattr(documents, "LISTED_DAG_DISCARDS", len(result.core.discarded) - 1)
    doc = json.loads("".join(export_pieces(result)))
    assert "discarded" not in doc and doc["discarded_on_demand"] == len(result.core.discarded)
    assert doc["basis"] == listed["basis"] and doc["repairs"] == listed["repairs"]


def test_solve_export_writes_the_streamed_document(tmp_path):
    spec, out = tmp_path / "net.json", tmp_path / "basis.json"
    spec.write_text(json.dumps(GENERAL))
    r = cli("solve", str(spec), "--engine", "deah", "--export", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert out.read_text() == json.dumps(api.solve(GENERAL, engine="deah").export())


def test_verify_refuses_a_described_file_too_big_to_read_whole_in_one_line(tmp_path):
    # Paths files are read one path at a time (tests/test_streamed_verify.py); a described basis
    # is read whole by json.load, about 20 bytes a byte of file, so one estimated over the limit
    # is refused after the streamed pass has told it by its format. Padded with whitespace (valid
    # JSON) to 10 MB: 103 MB at least to stream, 155 MB at least to read whole.
    from basispath_graph.guards import BASIS_FILE_MEMORY

    from .test_streamed_verify import file_refusal

    spec, out = tmp_path / "net.json", tmp_path / "basis.json"
    spec.write_text(json.dumps(GENERAL))
    described = documents.general_export(api.solve(GENERAL, engine="skeleton"), "described")
    assert described["format"] == "basispath-described/1"
    out.write_text(json.dumps(described) + " " * 10_000_000)
    size = out.stat().st_size
    need = BASIS_FILE_MEMORY(size)
    r = cli("verify", str(spec), str(out), "--max-memory-gb", "0.12", check=2)
    assert (r.stdout, r.stderr) == ("", file_refusal(out, size, need, "120 MB"))
    r = cli("verify", str(spec), str(out), check=0)
    assert r.stdout.startswith("certified: ")
