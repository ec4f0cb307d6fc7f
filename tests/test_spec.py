"""Tests for basispath_graph.spec: every refusal has an exact one-line message."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph import spec as spec_mod
from basispath_graph.network import Network
from basispath_graph.spec import SpecError, load_spec, parse_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LIMIT_TAIL = "(raise it with max_weights or BASISPATH_MAX_WEIGHTS)"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return p


def error_of(func, *args, **kwargs) -> str:
    with pytest.raises(SpecError) as info:
        func(*args, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg and "\r" not in msg
    return msg


def bad(data, source="spec.json", **kwargs) -> str:
    return error_of(parse_spec, data, source, **kwargs)


# ---------------------------------------------------------------------------------------
# Good inputs


def test_json_file(tmp_path):
    p = write(tmp_path, "net.json", '{"name": "n", "widths": [2, 3, 4], "skips": [[0, 2]]}')
    net = load_spec(p)
    assert isinstance(net, Network)
    assert net.name == "n"
    assert net.widths == (2, 3, 4)
    assert net.pairs == ((0, 1), (0, 2), (1, 2))
    assert net.m == 2 * 3 + 2 * 4 + 3 * 4


@pytest.mark.parametrize("ext", [".yaml", ".yml", ".YAML"])
def test_yaml_file(tmp_path, ext):
    text = "name: y\nwidths:\n  - 2\n  - 3\n  - 4\nskips:\n  - [0, 2]\n"
    net = load_spec(write(tmp_path, "net" + ext, text))
    assert net == Network.build([2, 3, 4], [(0, 2)], name="y")


@pytest.mark.parametrize("name", ["net.txt", "net", "net.spec"])
def test_other_extension_json_then_yaml(tmp_path, name):
    assert load_spec(write(tmp_path, name, '{"widths": [2, 3]}')).widths == (2, 3)
    assert load_spec(write(tmp_path, name, "widths: [2, 3]\nskips: []\n")).widths == (2, 3)


def test_name_optional_and_null():
    assert parse_spec({"widths": [1, 1]}, "s").name == ""
    assert parse_spec({"widths": [1, 1], "name": None}, "s").name == ""
    assert parse_spec({"widths": [1, 1], "skips": None}, "s").skips == ()


def test_skips_optional():
    net = parse_spec({"widths": [2, 2, 2]}, "s")
    assert net.pairs == ((0, 1), (1, 2))


def test_duplicate_skips_merged():
    net = parse_spec({"widths": [2, 2, 2, 2], "skips": [[0, 2], [0, 2], (0, 2), [1, 3]]}, "s")
    assert net.pairs == ((0, 1), (0, 2), (1, 2), (1, 3), (2, 3))
    assert net.skips == ((0, 2), (1, 3))


def test_consecutive_skip_harmless():
    net = parse_spec({"widths": [2, 3, 2], "skips": [[0, 1], [1, 2], [1, 2]]}, "s")
    assert net == Network.build([2, 3, 2])
    assert net.m == 12


def test_utf8_bom_accepted(tmp_path):
    p = write(tmp_path, "bom.json", b'\xef\xbb\xbf{"widths": [1, 2]}')
    assert load_spec(p).widths == (1, 2)


def test_numpy_integers_accepted():
    np = pytest.importorskip("numpy")
    net = parse_spec({"widths": [np.int64(2), np.int32(3)], "skips": []}, "s")
    assert net.widths == (2, 3)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_examples_load(path):
    net = load_spec(path)
    data = json.loads(path.read_text())
    assert net.name == data["name"]
    assert list(net.widths) == data["widths"]
    assert set(net.skips) == {tuple(s) for s in data["skips"] if s[1] > s[0] + 1}


def test_examples_present():
    names = {p.name for p in EXAMPLES.glob("*.json")}
    assert {"fig1b.json", "mlp.json", "resnet-style.json", "densenet-style.json"} <= names


def test_limit_exactly_reached_is_fine():
    assert parse_spec({"widths": [10, 10]}, "s", max_weights=100).m == 100


# ---------------------------------------------------------------------------------------
# Top level


@pytest.mark.parametrize(
    "data, shown",
    [
        ([1, 2], "a list of 2 items"),
        ([], "an empty list"),
        ("widths", '"widths"'),
        (None, "null"),
        (3, "3"),
        (3.5, "3.5"),
        (True, "true"),
    ],
)
def test_top_level_not_mapping(data, shown):
    assert bad(data) == (
        f'spec.json: top level must be a mapping with keys "name", "widths", "skips", got {shown}'
    )


def test_unknown_key():
    assert bad({"widths": [1, 1], "width": 3}) == (
        'spec.json: unknown top-level key "width" (allowed: name, widths, skips)'
    )


def test_unknown_keys_listed():
    data = {"widths": [1, 1], "a": 1, 7: 2, "b": 3, "c": 4, "d": 5, "e": 6, "f": 7}
    assert bad(data) == (
        'spec.json: unknown top-level keys "a", 7, "b", "c", "d" and 2 more (allowed: name, widths, skips)'
    )


def test_missing_widths():
    assert bad({"name": "x"}) == 'spec.json: missing required key "widths"'
    assert bad({}) == 'spec.json: missing required key "widths"'


@pytest.mark.parametrize("name, shown", [(3, "3"), (["a"], "a list of 1 item"), (False, "false"), ({}, "a mapping")])
def test_name_not_string(name, shown):
    assert bad({"name": name, "widths": [1, 1]}) == f"spec.json: name must be a string, got {shown}"


# ---------------------------------------------------------------------------------------
# widths


@pytest.mark.parametrize(
    "widths, shown",
    [("2,3", '"2,3"'), (5, "5"), (None, "null"), ({"0": 2}, "a mapping"), ("x" * 100, '"' + "x" * 40 + '..."')],
)
def test_widths_not_list(widths, shown):
    assert bad({"widths": widths}) == f"spec.json: widths must be a list of integers, got {shown}"


@pytest.mark.parametrize("widths", [[], [3]])
def test_widths_too_short(widths):
    assert bad({"widths": widths}) == (
        f"spec.json: widths must have at least 2 entries (input and output layer), got {len(widths)}"
    )


def test_widths_too_long():
    assert bad({"widths": [1] * 1001}) == "spec.json: widths has 1001 entries, more than the limit of 1000"
    assert parse_spec({"widths": [1] * 1000}, "s").L == 999


@pytest.mark.parametrize(
    "value, shown",
    [
        (0, "0"),
        (-2, "-2"),
        (3.0, "3.0"),
        (2.5, "2.5"),
        (True, "true"),
        (False, "false"),
        ("3", '"3"'),
        (None, "null"),
        ([3], "a list of 1 item"),
        ({"w": 3}, "a mapping"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (-(10**40), "at most -2^132"),
    ],
)
def test_widths_entry_bad(value, shown):
    assert bad({"widths": [2, 3, value, 4]}) == f"spec.json: widths[2] must be an integer >= 1, got {shown}"


# ---------------------------------------------------------------------------------------
# skips


@pytest.mark.parametrize("skips, shown", [({"0": 2}, "a mapping"), ("0-2", '"0-2"'), (1, "1"), (True, "true")])
def test_skips_not_list(skips, shown):
    assert bad({"widths": [2, 2, 2], "skips": skips}) == (
        f"spec.json: skips must be a list of [a, b] pairs, got {shown}"
    )


@pytest.mark.parametrize(
    "entry, shown",
    [
        ([0], "a list of 1 item"),
        ([0, 1, 2], "a list of 3 items"),
        ([], "an empty list"),
        (2, "2"),
        ("0,2", '"0,2"'),
        ({"a": 0, "b": 2}, "a mapping"),
        (None, "null"),
    ],
)
def test_skip_malformed(entry, shown):
    assert bad({"widths": [2, 2, 2], "skips": [[0, 2], entry]}) == (
        f"spec.json: skips[1] must be a pair [a, b] of layer indices, got {shown}"
    )


@pytest.mark.parametrize(
    "entry, j, shown",
    [
        ([0.0, 2], 0, "0.0"),
        ([0, 2.0], 1, "2.0"),
        ([True, 2], 0, "true"),
        ([0, "2"], 1, '"2"'),
        ([None, 2], 0, "null"),
        ([0, [2]], 1, "a list of 1 item"),
    ],
)
def test_skip_not_integer(entry, j, shown):
    assert bad({"widths": [2, 2, 2], "skips": [entry]}) == (
        f"spec.json: skips[0][{j}] must be an integer, got {shown}"
    )


@pytest.mark.parametrize("entry", [[0, 3], [-1, 2], [3, 5], [0, 10**40], [5, 1]])
def test_skip_out_of_range(entry):
    a, b = entry
    b_shown = "at least 2^132" if b == 10**40 else str(b)
    assert bad({"widths": [2, 2, 2], "skips": [[0, 2], entry]}) == (
        f"spec.json: skips[1] = [{a}, {b_shown}] is out of range: layers are 0..2"
    )


def test_skip_to_itself():
    assert bad({"widths": [2, 2, 2], "skips": [[1, 1]]}) == (
        "spec.json: skips[0] = [1, 1] connects layer 1 to itself: need a < b"
    )


@pytest.mark.parametrize("entry", [[2, 0], [1, 0]])
def test_skip_backwards(entry):
    a, b = entry
    assert bad({"widths": [2, 2, 2], "skips": [entry]}) == (
        f"spec.json: skips[0] = [{a}, {b}] goes backwards: need a < b"
    )


# ---------------------------------------------------------------------------------------
# Weight limit


def test_weights_over_limit():
    assert bad({"widths": [10, 10, 10], "skips": [[0, 2]]}, max_weights=299) == (
        f"spec.json: network has 300 weights, more than the limit of 299 {LIMIT_TAIL}"
    )


def test_default_limit_huge_widths():
    assert bad({"widths": [10**6, 10**6, 10**6]}) == (
        f"spec.json: network has 2000000000000 weights, more than the limit of 50000000 {LIMIT_TAIL}"
    )


def test_huge_counts_shown_compactly():
    assert bad({"widths": [10**20, 10**20]}) == (
        f"spec.json: network has at least 2^132 weights, more than the limit of 50000000 {LIMIT_TAIL}"
    )
    # A width far too large to multiply out is still refused at once.
    assert bad({"widths": [2**100_000, 3]}) == (
        f"spec.json: network has at least 2^100000 weights, more than the limit of 50000000 {LIMIT_TAIL}"
    )


def test_limit_from_environment(monkeypatch):
    data = {"widths": [10, 10]}
    monkeypatch.setenv("BASISPATH_MAX_WEIGHTS", "99")
    assert bad(data, max_weights=None) == (
        f"spec.json: network has 100 weights, more than the limit of 99 {LIMIT_TAIL}"
    )
    # An explicit limit wins over the environment.
    assert parse_spec(data, "s", max_weights=100).m == 100
    monkeypatch.setenv("BASISPATH_MAX_WEIGHTS", "1_000")
    assert parse_spec(data, "s", max_weights=None).m == 100
    monkeypatch.delenv("BASISPATH_MAX_WEIGHTS")
    assert parse_spec({"widths": [7000, 7000]}, "s", max_weights=None).m == 49_000_000
    assert bad({"widths": [7100, 7100]}, max_weights=None) == (
        f"spec.json: network has 50410000 weights, more than the limit of 50000000 {LIMIT_TAIL}"
    )


@pytest.mark.parametrize("raw", ["lots", "0", "-5", "1.5e6"])
def test_bad_environment_limit(monkeypatch, raw):
    monkeypatch.setenv("BASISPATH_MAX_WEIGHTS", raw)
    assert bad({"widths": [1, 1]}, max_weights=None) == (
        f'BASISPATH_MAX_WEIGHTS: must be an integer >= 1, got "{raw}"'
    )


@pytest.mark.parametrize("limit, shown", [(0, "0"), (-1, "-1"), (1.5, "1.5"), (True, "true")])
def test_bad_explicit_limit(limit, shown):
    assert bad({"widths": [1, 1]}, max_weights=limit) == f"max_weights: must be an integer >= 1, got {shown}"


def test_limit_through_load_spec(tmp_path, monkeypatch):
    p = write(tmp_path, "big.json", '{"widths": [100, 100, 100]}')
    assert error_of(load_spec, p, max_weights=1000) == (
        f"{p}: network has 20000 weights, more than the limit of 1000 {LIMIT_TAIL}"
    )
    monkeypatch.setenv("BASISPATH_MAX_WEIGHTS", "19999")
    assert error_of(load_spec, p, max_weights=None) == (
        f"{p}: network has 20000 weights, more than the limit of 19999 {LIMIT_TAIL}"
    )


def test_checks_run_before_allocation(monkeypatch):
    """Nothing is built for a refused spec: Network.build is never reached."""

    def boom(*args, **kwargs):
        raise AssertionError("Network.build called for a refused spec")

    monkeypatch.setattr(spec_mod.Network, "build", boom)
    bad({"widths": [10**9, 10**9]})
    bad({"widths": [2, 2], "skips": [[0, 5]]})


# ---------------------------------------------------------------------------------------
# Files


def test_missing_file(tmp_path):
    p = tmp_path / "nope.json"
    assert error_of(load_spec, p) == f"{p}: file not found"


def test_missing_file_relative_name_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert error_of(load_spec, "spec.json") == "spec.json: file not found"


def test_directory(tmp_path):
    d = tmp_path / "dir.json"
    d.mkdir()
    assert error_of(load_spec, d) == f"{d}: is a directory, not a spec file"


def test_unreadable_file_permission(tmp_path, monkeypatch):
    p = write(tmp_path, "secret.json", '{"widths": [1, 1]}')

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(spec_mod, "open", denied, raising=False)
    assert error_of(load_spec, p) == f"{p}: cannot read file: permission denied"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file_chmod(tmp_path):
    p = write(tmp_path, "secret.json", '{"widths": [1, 1]}')
    p.chmod(0)
    try:
        assert error_of(load_spec, p) == f"{p}: cannot read file: permission denied"
    finally:
        p.chmod(0o600)


def test_unreadable_file_io_error(tmp_path, monkeypatch):
    p = write(tmp_path, "disk.json", '{"widths": [1, 1]}')

    def broken(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(spec_mod, "open", broken, raising=False)
    assert error_of(load_spec, p) == f"{p}: cannot read file: input/output error"


def test_file_too_large(tmp_path, monkeypatch):
    monkeypatch.setattr(spec_mod, "MAX_FILE_BYTES", 10)
    p = write(tmp_path, "big.json", '{"widths": [1, 1]}')
    assert error_of(load_spec, p) == f"{p}: file is larger than the limit of 10 bytes"


@pytest.mark.parametrize("content", ["", "   \n\t\n", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("name", ["e.json", "e.yaml", "e.txt"])
def test_empty_file(tmp_path, name, content):
    p = write(tmp_path, name, content)
    assert error_of(load_spec, p) == f"{p}: file is empty"


@pytest.mark.parametrize("name", ["u.json", "u.yaml"])
def test_invalid_utf8(tmp_path, name):
    p = write(tmp_path, name, b'{"name": "ok",\n "widths": [1, 1], "x": "\xff\xfe"}')
    assert error_of(load_spec, p) == f"{p}: not valid UTF-8: byte 0xff at line 2 (byte offset 40)"


def test_invalid_utf8_offset_counts_bom(tmp_path):
    p = write(tmp_path, "b.json", b"\xef\xbb\xbf{}\xc3")
    assert error_of(load_spec, p) == f"{p}: not valid UTF-8: byte 0xc3 at line 1 (byte offset 5)"


@pytest.mark.parametrize(
    "content, detail",
    [
        ('{"widths": [2, 3],}', "at line 1, column 19: expecting property name enclosed in double quotes"),
        ('{"widths": [2, 3]\n  "skips": []}', "at line 2, column 3: expecting ',' delimiter"),
        ("widths: [2, 3]", "at line 1, column 1: expecting value"),
        ('{"widths": [2, 3]', "at line 1, column 18: expecting ',' delimiter"),
        ('{"widths": [2, 3]} x', "at line 1, column 20: extra data"),
        ("[" * 100_000, ": nesting is too deep"),
        (
            '{"widths": [' + "9" * 5000 + "]}",
            ": exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits",
        ),
    ],
)
def test_invalid_json(tmp_path, content, detail):
    p = write(tmp_path, "bad.json", content)
    sep = "" if detail.startswith(":") else " "
    assert error_of(load_spec, p) == f"{p}: invalid JSON{sep}{detail}"


@pytest.mark.parametrize(
    "content, detail",
    [
        (
            "widths: [2, 3\nskips: ]",
            "at line 2, column 6: expected ',' or ']', but got ':' (while parsing a flow sequence at line 1, column 9)",
        ),
        (
            "widths:\n  - 2\n - 3\n",
            "at line 3, column 2: expected <block end>, but found '<block sequence start>'"
            " (while parsing a block mapping at line 1, column 1)",
        ),
        ("widths: a: b", "at line 1, column 10: mapping values are not allowed here"),
        (
            "widths: [1, 1]\n---\nwidths: [2, 2]\n",
            "at line 2, column 1: expected a single document in the stream, but found another document",
        ),
        ("widths: [1, 1]\nname: \x01", "at line 2, column 7: unacceptable character #x0001: special characters are not allowed"),
        ("widths: *w", "at line 1, column 9: found undefined alias 'w'"),
        (
            "widths: !!python/object/apply:os.system ['true']",
            "at line 1, column 9: could not determine a constructor for the tag"
            " 'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        ("name: 2020-13-45\nwidths: [1, 1]", ": month must be in 1..12"),
        ("name: !!bool maybe\nwidths: [1, 1]", ": cannot construct a tagged value (KeyError: 'maybe')"),
        ("[" * 100_000, ": nesting is too deep"),
    ],
)
def test_invalid_yaml(tmp_path, content, detail):
    p = write(tmp_path, "bad.yaml", content)
    sep = "" if detail.startswith(":") else " "
    assert error_of(load_spec, p) == f"{p}: invalid YAML{sep}{detail}"


def test_unknown_extension_neither_json_nor_yaml(tmp_path):
    p = write(tmp_path, "bad.txt", "widths: [2, 3\n")
    assert error_of(load_spec, p) == (
        f"{p}: neither valid JSON nor valid YAML; as YAML at line 2, column 1:"
        " expected ',' or ']', but got '<stream end>' (while parsing a flow sequence at line 1, column 9)"
    )


def test_yaml_is_parsed_safely(tmp_path):
    # A JSON-looking .yml file still goes through safe_load only; python tags are refused.
    p = write(tmp_path, "evil.yml", "!!python/object/new:os.system [echo hacked]")
    msg = error_of(load_spec, p)
    assert msg.startswith(f"{p}: invalid YAML at line 1, column 1: could not determine a constructor")


def test_yaml_content_errors_use_file_name(tmp_path):
    p = write(tmp_path, "n.yaml", "widths: [2, 0]\n")
    assert error_of(load_spec, p) == f"{p}: widths[1] must be an integer >= 1, got 0"
    p = write(tmp_path, "n2.yaml", "- 2\n- 3\n")
    assert error_of(load_spec, p) == (
        f'{p}: top level must be a mapping with keys "name", "widths", "skips", got a list of 2 items'
    )
    p = write(tmp_path, "n3.yaml", "# just a comment\n")
    assert error_of(load_spec, p) == (
        f'{p}: top level must be a mapping with keys "name", "widths", "skips", got null'
    )


def test_json_content_errors_use_file_name(tmp_path):
    p = write(tmp_path, "n.json", '{"widths": [2, 3], "skips": [[1, 0]]}')
    assert error_of(load_spec, p) == f"{p}: skips[0] = [1, 0] goes backwards: need a < b"


def test_spec_error_is_value_error_and_one_line():
    err = SpecError("a\nb\r\nc")
    assert isinstance(err, ValueError)
    assert "\n" not in str(err) and "\r" not in str(err)


# ---------------------------------------------------------------------------------------
# Property: anything JSON-ish gives a Network or a SpecError, nothing else


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-3, max_value=8)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(st.text(max_size=8) | st.sampled_from(["name", "widths", "skips"]), children, max_size=5),
    max_leaves=30,
)

small_int = st.integers(min_value=-2, max_value=6)
near_valid = st.fixed_dictionaries(
    {"widths": st.lists(small_int | json_scalars, min_size=0, max_size=7)},
    optional={
        "name": st.text(max_size=10) | json_scalars,
        "skips": st.lists(st.lists(small_int | json_scalars, min_size=0, max_size=3) | json_values, max_size=6)
        | json_values,
    },
)


def _check(data):
    try:
        net = parse_spec(data, "p.json", max_weights=10_000)
    except SpecError as e:
        msg = str(e)
        assert "\n" not in msg
        assert msg.startswith("p.json: ")
        return
    assert isinstance(net, Network)
    assert net.m <= 10_000
    assert all(w >= 1 for w in net.widths) and net.L >= 1
    assert all(0 <= a < b <= net.L for a, b in net.pairs)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_random_data_only_spec_error(data):
    _check(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid)
def test_random_near_valid_only_spec_error(data):
    _check(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=60) | st.text(max_size=60).map(str.encode), ext=st.sampled_from([".json", ".yaml", ".txt"]))
def test_random_file_bytes_only_spec_error(tmp_path, content, ext):
    p = tmp_path / ("f" + ext)
    p.write_bytes(content)
    try:
        net = load_spec(p, max_weights=10_000)
    except SpecError as e:
        assert "\n" not in str(e) and str(e).startswith(f"{p}: ")
    else:
        assert isinstance(net, Network)
