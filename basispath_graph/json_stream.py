"""Reading one list of a JSON document an element at a time: a basis file of millions of paths.

``json.load`` holds a whole document as Python objects, about 20 bytes for each byte of a paths
export (a 4.2 GB export of ResNet-18 needs about 85 GB). ``stream_list`` reads the file in
chunks and hands the elements of one list (the top-level list, or the list of one top-level
member) to a callback one at a time; every other member's value is read element by element and
dropped, except scalars (``"format"``, ``"engine"``), which it returns. Memory: a chunk plus the
largest single element. Errors are ``json.JSONDecodeError`` with the line and column in the whole
file, with the messages of ``json`` itself ("Expecting ',' delimiter", "Extra data", ...).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

__all__ = ["stream_list", "SKIPPED", "STREAMED"]

#: What ``stream_list`` returns for a member whose value is a list or an object (not kept),
#: and for the list it streamed.
SKIPPED = object()
STREAMED = object()

_CHUNK = 1 << 23  # characters read at a time
_MAX_ELEMENT = 1 << 28  # an element longer than this is read as an error where it is cut off
_WHITESPACE = " \t\n\r"
_NUMBER_TAIL = "0123456789.eE+-"
_decoder = json.JSONDecoder()


class _Reader:
    """A window on a text file: the decoded characters from ``pos`` on, refilled on demand; line
    and column of any position in the file for error messages."""

    def __init__(self, f) -> None:
        self.f = f
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line = 1  # line of buf[0]
        self.line_start = 0  # index in buf of the start of that line (<= 0: it began before buf)

    def _fill(self) -> bool:
        """Read another chunk; False at the end of the file."""
        if self.eof:
            return False
        text = self.f.read(_CHUNK)
        if not text:
            self.eof = True
            return False
        if self.pos > len(self.buf) // 2:  # drop what was read, keeping count of its lines
            done = self.buf[: self.pos]
            lines = done.count("\n")
            if lines:
                self.line += lines
                self.line_start = done.rindex("\n") + 1
            self.line_start -= self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += text
        return True

    def error(self, msg: str, at: int | None = None) -> json.JSONDecodeError:
        """``msg`` at buffer index ``at`` (default: the current position), as json reports it."""
        at = self.pos if at is None else at
        before = self.buf[:at]
        lines = before.count("\n")
        line = self.line + lines
        start = before.rindex("\n") + 1 if lines else self.line_start
        exc = json.JSONDecodeError(msg, "", 0)
        exc.lineno, exc.colno = line, at - start + 1
        exc.args = (f"{msg}: line {exc.lineno} column {exc.colno}",)
        return exc

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end), without consuming it."""
        while True:
            buf, n = self.buf, len(self.buf)
            while self.pos < n and buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < n or not self._fill():
                return self.buf[self.pos] if self.pos < len(self.buf) else ""

    def take(self, char: str, msg: str) -> None:
        if self.peek() != char:
            raise self.error(msg)
        self.pos += 1

    def value(self) -> object:
        """The next JSON value (the reader must be on its first character)."""
        while True:
            try:
                obj, end = _decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # Cut off by the chunk's end (the error is there, or a string runs into it): read
                # on and try again, up to an element of _MAX_ELEMENT.
                cut = exc.pos >= len(self.buf) - 8 or exc.msg.startswith("Unterminated string")
                if cut and len(self.buf) - self.pos < _MAX_ELEMENT and self._fill():
                    continue
                raise self.error(exc.msg, exc.pos) from None
            # A number cut off by the chunk's end reads as a shorter one ("0." as 0): go on
            # when what follows could continue it (it is an error otherwise, also after reading on).
            if (end < len(self.buf) and self.buf[end] not in _NUMBER_TAIL) or not self._fill():
                self.pos = end
                return obj

    def elements(self, close: str, member: bool) -> Iterator:
        """Iterate a list (``close`` "]") or an object's members (``close`` "}", ``member``):
        yields each element's index or key, the reader on the start of its value."""
        def gen():
            k = 0
            if self.peek() == close:
                self.pos += 1
                return
            while True:
                if member:
                    if self.peek() != '"':
                        raise self.error("Expecting property name enclosed in double quotes")
                    key = self.value()
                    self.take(":", "Expecting ':' delimiter")
                if not self.peek():
                    raise self.error("Expecting value")
                yield key if member else k
                k += 1
                c = self.peek()
                if c == close:
                    self.pos += 1
                    return
                if c != ",":
                    raise self.error("Expecting ',' delimiter")
                self.pos += 1
                if member and self.peek() != '"':
                    raise self.error("Expecting property name enclosed in double quotes")
        return gen()

    def skip(self) -> None:
        """Read past the next value, a list's or an object's elements one at a time."""
        c = self.peek()
        if c in "[{":
            self.pos += 1
            for _ in self.elements("]" if c == "[" else "}", c == "{"):
                self.value()
        else:
            self.value()


def stream_list(f, key: str, on_item: Callable[[int, object], None], on_restart: Callable[[], None] = lambda: None) -> dict | None:
    """Read the JSON document of the text file ``f``, calling ``on_item(k, element)`` for each
    element of its list: the document itself when it is a list, else its member ``key`` when
    that is a list (a later member ``key`` replaces it, as in ``json.load``: ``on_restart`` is
    called first). Returns None for a list document, else the object's members: scalars as they
    are, the ``key`` list as ``STREAMED``, other lists and objects as ``SKIPPED``. Any other
    document is returned as it is. Raises what ``json.load`` would (``json.JSONDecodeError``,
    ``RecursionError``, ``ValueError`` for an integer over Python's digit limit)."""
    r = _Reader(f)
    c = r.peek()
    if c == "\ufeff":
        raise r.error("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    if c == "[":
        r.pos += 1
        for k in r.elements("]", False):
            on_item(k, r.value())
        out = None
    elif c == "{":
        r.pos += 1
        out, seen = {}, False
        for name in r.elements("}", True):
            if name == key and r.peek() == "[":
                if seen:
                    on_restart()
                seen = True
                r.pos += 1
                for k in r.elements("]", False):
                    on_item(k, r.value())
                out[name] = STREAMED
            elif r.peek() in "[{":
                r.skip()
                out[name] = SKIPPED
            else:
                out[name] = r.value()
    else:
        if not c:
            raise r.error("Expecting value")
        out = r.value()
    if r.peek():
        raise r.error("Extra data")
    return out
