"""Read a network spec (JSON or YAML) into a :class:`~basispath_graph.network.Network`.

A spec looks like::

    {"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [1, 3]]}

``widths`` lists the layer widths w_0..w_L (integers >= 1, L >= 1); consecutive layer pairs
are always connected, and each skip [a, b] (0 <= a < b <= L) connects one more pair.
``name`` is optional (default ""); ``skips`` is optional (default: none); null for either
counts as absent. Duplicate skips are merged and a
skip [a, a+1] is harmless (that pair is connected anyway).

Everything is checked before anything proportional to the network is allocated: the number
of weights m = sum of w_a * w_b over the connected pairs is computed with Python ints first
and refused above a limit. Every problem raises :class:`SpecError`, whose message is one
line of the form ``<source>: <what is wrong>``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import yaml

from .errors import BadInput
from .network import DEFAULT_MAX_WEIGHTS, MAX_LAYERS, InvalidNetwork, Network, check_general, check_structure
from .values import is_int, show_int, show_value

__all__ = [
    "SpecError",
    "load_spec",
    "load_any_spec",
    "parse_spec",
    "parse_general",
    "is_general_spec",
    "resolve_max_weights",
    "DEFAULT_MAX_WEIGHTS",
    "MAX_WIDTHS",
    "MAX_FILE_BYTES",
    "MAX_WEIGHTS_ENV",
]

#: Environment variable read for the limit when the caller passes ``max_weights=None``.
MAX_WEIGHTS_ENV = "BASISPATH_MAX_WEIGHTS"
#: Most entries ``widths`` may have (layers 0..L, so L <= MAX_WIDTHS - 1).
MAX_WIDTHS = MAX_LAYERS
#: Largest spec file read (a spec with MAX_WIDTHS layers and every skip is about 7 MB).
MAX_FILE_BYTES = 64 * 1024 * 1024

_KEYS = ("name", "widths", "skips")
# Widths above 2**_EXACT_BITS are too big to multiply out cheaply; the weight count is then
# reported as a lower bound.
_EXACT_BITS = 4096


class SpecError(BadInput):
    """A spec that cannot be read or is not a valid network; str() is one line."""

    def __init__(self, message: str):
        # Keep the message on one line whatever went into it (a file name, parser text).
        super().__init__(" ".join(str(message).split("\n")).replace("\r", " "))


# ---------------------------------------------------------------------------------------
# Limits


def resolve_max_weights(max_weights: int | None) -> int:
    """The weight limit in force: ``max_weights``, or when it is None the environment
    variable BASISPATH_MAX_WEIGHTS, or when that is unset or empty DEFAULT_MAX_WEIGHTS."""
    if max_weights is None:
        raw = os.environ.get(MAX_WEIGHTS_ENV, "").strip()
        if not raw:
            return DEFAULT_MAX_WEIGHTS
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise SpecError(f"{MAX_WEIGHTS_ENV}: must be an integer >= 1, got {show_value(raw)}")
        return value
    if not is_int(max_weights) or int(max_weights) < 1:
        raise SpecError(f"max_weights: must be an integer >= 1, got {show_value(max_weights)}")
    return int(max_weights)


# ---------------------------------------------------------------------------------------
# Files


def load_spec(path: str | os.PathLike, max_weights: int | None = DEFAULT_MAX_WEIGHTS) -> Network:
    """Read and check the spec file ``path`` (JSON for .json, YAML for .yaml/.yml, otherwise
    JSON and then YAML). Messages name the file as given in ``path``."""
    source = os.fspath(path)
    if isinstance(source, bytes):
        source = os.fsdecode(source)
    limit = resolve_max_weights(max_weights)  # a bad limit is reported before any reading
    text = _read_text(source)
    data = _parse_text(text, source)
    return parse_spec(data, source, limit)


def load_any_spec(path: str | os.PathLike, max_weights: int | None = DEFAULT_MAX_WEIGHTS) -> Network:
    """``load_spec`` for a layered spec (widths, skips), a ``GeneralNetwork`` for a general one
    (layers, connections: ``general.model``)."""
    source = os.fspath(path)
    if isinstance(source, bytes):
        source = os.fsdecode(source)
    limit = resolve_max_weights(max_weights)
    data = _parse_text(_read_text(source), source)
    if is_general_spec(data) and "widths" not in data:
        return parse_general(data, source, limit)
    return parse_spec(data, source, limit)


def _read_text(source: str) -> str:
    try:
        with open(source, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SpecError(f"{source}: file not found") from None
    except IsADirectoryError:
        raise SpecError(f"{source}: is a directory, not a spec file") from None
    except PermissionError:
        raise SpecError(f"{source}: cannot read file: permission denied") from None
    except OSError as e:
        reason = (e.strerror or type(e).__name__).lower()
        raise SpecError(f"{source}: cannot read file: {reason}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise SpecError(f"{source}: file is larger than the limit of {MAX_FILE_BYTES} bytes")
    bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0  # a UTF-8 byte order mark is allowed
    try:
        text = raw[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        at = bom + e.start
        line = raw.count(b"\n", 0, at) + 1
        raise SpecError(
            f"{source}: not valid UTF-8: byte 0x{raw[at]:02x} at line {line} (byte offset {at})"
        ) from None
    if not text.strip():
        raise SpecError(f"{source}: file is empty")
    return text


def _parse_text(text: str, source: str) -> object:
    ext = Path(source).suffix.lower()
    if ext == ".json":
        ok, value = _parse_json(text)
        if not ok:
            raise SpecError(f"{source}: invalid JSON{value}")
        return value
    if ext in (".yaml", ".yml"):
        ok, value = _parse_yaml(text)
        if not ok:
            raise SpecError(f"{source}: invalid YAML{value}")
        return value
    ok, value = _parse_json(text)
    if ok:
        return value
    ok, value = _parse_yaml(text)
    if not ok:
        raise SpecError(f"{source}: neither valid JSON nor valid YAML; as YAML{value}")
    return value


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list) -> dict:
    # json.loads keeps the last of two equal keys; a spec with "widths" twice is ambiguous.
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _parse_json(text: str) -> tuple[bool, object]:
    """(True, data), or (False, "<location>: <problem>") with a leading space or colon."""
    try:
        return True, json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as e:
        return False, f": duplicate key {show_value(e.args[0])}"
    except json.JSONDecodeError as e:
        return False, f" at line {e.lineno}, column {e.colno}: {_lower(e.msg)}"
    except RecursionError:
        return False, ": nesting is too deep"
    except ValueError as e:  # e.g. an integer literal longer than Python's digit limit
        return False, f": {_first_clause(e)}"


def _parse_yaml(text: str) -> tuple[bool, object]:
    """Like _parse_json, with a SafeLoader (never the unsafe loaders)."""
    try:
        return True, yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - _SpecLoader is a SafeLoader
    except yaml.MarkedYAMLError as e:
        return False, _yaml_detail(e)
    except yaml.reader.ReaderError as e:
        pos = max(0, min(int(e.position), len(text)))
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return False, f" at line {line}, column {col}: {_first_clause(e)}"
    except RecursionError:
        return False, ": nesting is too deep"
    except (yaml.YAMLError, ValueError, OverflowError) as e:
        # Constructor failures without a position: an integer beyond Python's digit limit,
        # an impossible date, "!!float abc"...
        return False, f": {_first_clause(e)}"
    except Exception as e:  # noqa: BLE001 - PyYAML's constructors leak e.g. KeyError ("!!bool maybe")
        return False, f": cannot construct a tagged value ({type(e).__name__}: {_first_clause(e)})"


#: Most entries one YAML mapping may have after its merge keys (<<) are expanded.
MAX_MERGED_ENTRIES = 10_000


class _SpecLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses duplicate keys and merge-key bombs.

    Aliases alone are safe (they share one object), but every merge key copies the merged
    mapping's entries: ten levels of ``<<: [*m, *m, ...]`` expand to billions of entries and
    never finish. Duplicate keys are refused as in JSON (PyYAML would keep the last).
    """

    def compose_mapping_node(self, anchor):
        node = super().compose_mapping_node(anchor)
        seen = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                if (key.tag, key.value) in seen:
                    raise yaml.composer.ComposerError(
                        "while composing a mapping", node.start_mark,
                        f"found duplicate key {show_value(key.value)}", key.start_mark,
                    )
                seen.add((key.tag, key.value))
        return node

    def flatten_mapping(self, node):
        super().flatten_mapping(node)  # recursive calls come back here: checked level by level
        if len(node.value) > MAX_MERGED_ENTRIES:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"merge keys (<<) expand it to more than {MAX_MERGED_ENTRIES} entries", None,
            )


def _yaml_detail(e: yaml.MarkedYAMLError) -> str:
    def at(mark) -> str:
        return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""

    problem = _lower(e.problem or "")
    context = _lower(e.context or "")
    if problem and context.startswith("while"):
        # "expected ',' or ']', but got ':' (while parsing a flow sequence at line 1, column 9)"
        return f"{at(e.problem_mark)}: {problem} ({context}{at(e.context_mark)})"
    if problem and context:
        # "expected a single document in the stream, but found another document"
        return f"{at(e.problem_mark or e.context_mark)}: {context}, {problem}"
    return f"{at(e.problem_mark or e.context_mark)}: {problem or context or 'cannot parse'}"


def _first_clause(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    msg = msg.split("; use sys.set_int_max_str_digits")[0]
    return _lower(msg)


def _lower(s: str) -> str:
    s = " ".join(str(s).split())
    return s[:1].lower() + s[1:] if s[:2] != s[:2].upper() else s


# ---------------------------------------------------------------------------------------
# Data


def parse_spec(
    data: object, source: str = "<spec>", max_weights: int | None = DEFAULT_MAX_WEIGHTS
) -> Network:
    """Check parsed spec data (a mapping) and build the Network.

    ``source`` starts every error message; ``max_weights`` limits m (None: read the
    environment variable BASISPATH_MAX_WEIGHTS, default 50,000,000).
    """
    limit = resolve_max_weights(max_weights)
    src = source

    if not isinstance(data, Mapping):
        raise SpecError(
            f'{src}: top level must be a mapping with keys "name", "widths", "skips", got {show_value(data)}'
        )
    if is_general_spec(data) and "widths" not in data:
        raise SpecError(
            f"{src}: a general network (layers and connections); so far only 'basispath spec info', "
            "'basispath verify', 'basispath solve', 'basispath run', 'basispath ingest' and 'basispath compare' read it "
            "(docs/general-networks.md)"
        )
    unknown = [k for k in data if not (isinstance(k, str) and k in _KEYS)]
    if unknown:
        shown = ", ".join(show_value(k) for k in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        word = "key" if len(unknown) == 1 else "keys"
        raise SpecError(f"{src}: unknown top-level {word} {shown}{more} (allowed: name, widths, skips)")

    if "widths" not in data:
        raise SpecError(f'{src}: missing required key "widths"')
    try:
        widths, pairs, name = check_structure(data["widths"], data.get("skips"), data.get("name"))
    except InvalidNetwork as exc:
        raise SpecError(f"{src}: {exc}") from None

    over, count = _weights_over(widths, pairs, limit)
    if over:
        raise SpecError(
            f"{src}: network has {count} weights, more than the limit of {limit}"
            f" (raise it with max_weights or {MAX_WEIGHTS_ENV})"
        )
    return Network(widths, pairs, name)


def is_general_spec(data: object) -> bool:
    """A mapping with ``layers`` or ``connections`` is a general spec (``widths``: layered)."""
    return isinstance(data, Mapping) and ("layers" in data or "connections" in data)


def parse_general(data: Mapping, source: str, max_weights: int) -> Network:
    """Check a general spec (layers, connections: docs/general-networks.md) and build the
    network; SpecError ``<source>: <what>`` otherwise (``network.check_general`` has the rules)."""
    try:
        return check_general(data, max_weights)
    except InvalidNetwork as exc:
        raise SpecError(f"{source}: {exc}") from None


def _weights_over(widths: list[int], pairs: set[tuple[int, int]], limit: int) -> tuple[bool, str]:
    """(m > limit, m shown for a message) without multiplying out absurdly large widths."""
    biggest = max(widths)
    if biggest.bit_length() > _EXACT_BITS:
        # m >= biggest: every layer sits in a consecutive pair with a width >= 1.
        return True, f"at least 2^{biggest.bit_length() - 1}"
    m = sum(widths[a] * widths[b] for a, b in pairs)
    return m > limit, show_int(m)
