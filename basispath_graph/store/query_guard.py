"""What a read-only query may not do even though the database's read-only mode lets it.

``basispath query`` without ``--write`` opens LadybugDB read-only and runs Neo4j transactions in
READ access mode, so the database itself refuses CREATE, MERGE, SET, DELETE, schema changes,
COPY FROM, ATTACH, IMPORT and writing procedures. Some statements are not writes to the graph
and pass those modes, yet touch the machine (measured with ladybug 0.22 and Neo4j 5):

- ``LOAD FROM 'file'`` / ``LOAD WITH HEADERS ... FROM`` (LadybugDB) and ``LOAD CSV`` (Neo4j)
  read arbitrary files of the host or server (and URLs);
- ``COPY (...) TO 'file'`` and ``EXPORT DATABASE 'dir'`` write files on the host;
- ``CHECKPOINT`` writes the store's WAL and shadow files and leaves the store unopenable
  read-only until a writer recovers it;
- ``INSTALL`` / ``UPDATE`` / ``LOAD EXTENSION`` download or load native code;
- ``ANALYZE`` recomputes the database's statistics;
- ``CALL name = value`` changes a database setting;
- ``TERMINATE TRANSACTIONS`` (also after ``SHOW TRANSACTIONS ... YIELD``) and the procedures
  ``dbms.killConnection(s)`` (Neo4j 5.26 runs them in a READ transaction) end other clients'
  work, a ``basispath run`` writing to the same server included.

:func:`check_read_only` refuses these with :class:`QueryRefused` before the query reaches the
database. It reads the query with a small Cypher lexer (comments, strings and quoted names are
not code), so ``LOAD/**/FROM`` or lower case do not slip through, and a keyword inside a string
(``RETURN 'LOAD FROM'``) is not refused. Every statement of a multi-statement query is checked,
and a leading EXPLAIN / PROFILE does not hide a statement (PROFILE executes it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import WriteRefused

__all__ = ["QueryRefused", "check_read_only", "statements", "statement_texts"]


class QueryRefused(WriteRefused):
    """A read-only query that would touch files, extensions or settings; str() is one line."""


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "str", "name" (`quoted`), "param", "num", "punct"
    text: str  # upper case for words
    at: int = -1  # where a ";" is in the query text (statement_texts cuts there)

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text in words


_WORD = re.compile(r"[^\W\d]\w*")
_NUM = re.compile(r"\d[\w.]*")


def _tokens(text: str) -> list[Token]:
    """Cypher tokens; comments dropped. An unterminated string or comment is read as code (the
    database refuses it anyway), so nothing can be hidden behind one."""
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                out.append(Token("punct", "/"))
                i += 1
            else:
                i = j + 2
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                out.append(Token("punct", c))
                i += 1
            else:
                out.append(Token("str", text[i + 1 : j]))
                i = j + 1
        elif c == "`":
            j = i + 1
            while j < n and not (text[j] == "`" and not text.startswith("``", j)):
                j += 2 if text.startswith("``", j) else 1
            if j >= n:
                out.append(Token("punct", c))
                i += 1
            else:
                out.append(Token("name", text[i + 1 : j]))
                i = j + 1
        elif c == "$":
            m = _WORD.match(text, i + 1) or _NUM.match(text, i + 1)
            out.append(Token("param", m.group(0) if m else ""))
            i = m.end() if m else i + 1
        elif m := _WORD.match(text, i):
            out.append(Token("word", m.group(0).upper()))
            i = m.end()
        elif m := _NUM.match(text, i):
            out.append(Token("num", m.group(0)))
            i = m.end()
        else:
            out.append(Token("punct", c, i))
            i += 1
    return out


def statements(text: str) -> list[list[Token]]:
    """The tokens of each statement (split at ``;``), empty statements dropped."""
    result, current = [], []
    for tok in _tokens(text):
        if tok.kind == "punct" and tok.text == ";":
            if current:
                result.append(current)
            current = []
        else:
            current.append(tok)
    if current:
        result.append(current)
    return result


def statement_texts(text: str) -> list[str]:
    """The text of each statement, cut at the ``;`` that are code (not in strings, comments or
    quoted names); statements with nothing but comments and spaces are dropped. Neo4j takes one
    statement per query, so its store runs these one by one."""
    cuts = [tok.at for tok in _tokens(text) if tok.kind == "punct" and tok.text == ";"]
    pieces, start = [], 0
    for cut in cuts + [len(text)]:
        piece = text[start:cut]
        if _tokens(piece):
            pieces.append(piece.strip())
        start = cut + 1
    return pieces


def _keyword(toks: list[Token], i: int) -> bool:
    """Is toks[i] a word used as a keyword (not a property, label or map key)?"""
    if toks[i].kind != "word":
        return False
    before = toks[i - 1] if i > 0 else None
    after = toks[i + 1] if i + 1 < len(toks) else None
    if before is not None and before.kind == "punct" and before.text in ".:":
        return False  # n.load, (:Load)
    if after is not None and after.kind == "punct" and after.text == ":":
        return False  # {load: 1}
    return True


# Neo4j procedures that end other clients' connections or queries (the last four are gone in 5.x;
# refused all the same, names compared without case).
_KILLING_PROCEDURES = {
    name.lower(): name
    for name in (
        "dbms.killConnection", "dbms.killConnections",
        "dbms.killTransaction", "dbms.killTransactions", "dbms.killQuery", "dbms.killQueries",
    )
}


def _dotted_name(toks: list[Token], i: int) -> str:
    """The procedure name a.b.c (words or `quoted` parts) starting at toks[i], as written."""
    parts = []
    while i < len(toks) and toks[i].kind in ("word", "name"):
        parts.append(toks[i].text)
        if i + 1 < len(toks) and toks[i + 1].kind == "punct" and toks[i + 1].text == ".":
            i += 2
        else:
            break
    return ".".join(parts)


def _refusal(toks: list[Token]) -> str | None:
    """Why this statement is refused in read-only mode, or None."""
    while toks and toks[0].is_word("EXPLAIN", "PROFILE"):
        toks = toks[1:]
    if not toks:
        return None
    # anywhere: LOAD FROM / LOAD WITH HEADERS ... FROM (LadybugDB), LOAD CSV (Neo4j)
    for i in range(len(toks) - 1):
        if toks[i].is_word("LOAD") and _keyword(toks, i):
            nxt = toks[i + 1]
            if nxt.is_word("FROM"):
                return "reads files (LOAD FROM)"
            if nxt.is_word("CSV"):
                return "reads files or URLs (LOAD CSV)"
            if nxt.is_word("WITH") and i + 2 < len(toks) and toks[i + 2].is_word("HEADERS"):
                return "reads files (LOAD WITH HEADERS ... FROM)"
    for i in range(len(toks) - 1):
        # anywhere: SHOW TRANSACTIONS YIELD ... TERMINATE TRANSACTIONS ... is one command
        if toks[i].is_word("TERMINATE") and _keyword(toks, i) and toks[i + 1].is_word("TRANSACTION", "TRANSACTIONS"):
            return "ends other clients' transactions (TERMINATE TRANSACTIONS)"
        if toks[i].is_word("CALL") and _keyword(toks, i):
            name = _dotted_name(toks, i + 1)
            if name.lower() in _KILLING_PROCEDURES:
                return f"ends other clients' connections (CALL {_KILLING_PROCEDURES[name.lower()]})"
    first = toks[0]
    if first.kind != "word":
        return None
    word = first.text
    if word == "COPY":
        depth = 0
        for i, tok in enumerate(toks):
            if tok.kind == "punct" and tok.text in "([{":
                depth += 1
            elif tok.kind == "punct" and tok.text in ")]}":
                depth -= 1
            elif depth == 0 and tok.is_word("TO") and _keyword(toks, i):
                return "writes files (COPY ... TO)"
        return None  # COPY FROM: a write, refused by the read-only database itself
    if word == "EXPORT":
        return "writes files (EXPORT DATABASE)"
    if word == "IMPORT":
        return "reads files into the store (IMPORT DATABASE)"
    if word == "CHECKPOINT":
        return "writes the store's files (CHECKPOINT)"
    if word in ("INSTALL", "UNINSTALL", "UPDATE", "FORCE", "LOAD"):  # FORCE INSTALL, UPDATE ext
        clause = {"LOAD": "LOAD EXTENSION", "FORCE": "FORCE INSTALL"}.get(word, word)
        return f"installs or loads database extensions ({clause})"
    if word == "ANALYZE":
        return "updates the database's statistics (ANALYZE)"
    if word == "CALL" and len(toks) > 2 and toks[1].kind in ("word", "name") and toks[2].kind == "punct" and toks[2].text == "=":
        return f"changes a database setting (CALL {toks[1].text.lower()} = ...)"
    return None


def check_read_only(text: str) -> None:
    """Raise :class:`QueryRefused` when a read-only query would read or write files, load
    extensions, checkpoint or change settings (what read-only modes do not stop)."""
    for toks in statements(text):
        why = _refusal(toks)
        if why is not None:
            raise QueryRefused(f"the query {why}; add --write to allow it")
