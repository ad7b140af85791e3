"""Full-text search: a derived, disposable SQLite FTS5 index over the topic files.

The index lives in an in-memory SQLite database, so it works the same over any
store and never has to be migrated: it is built from the files on the first
search and then kept current from the catalog changes `Memdir` already syncs
(only changed files are read again). Ranking is FTS5's BM25 with the file's
name, description and tags weighted above its body, since they are the
author's own summary of what the file is about.

Queries are words, not FTS5 syntax: the words minus common function words,
joined with OR. Dropping words like "what" or "did" matters more for recall
than the BM25 variant (they match almost every file and drown the rare words
that carry the question). Scope filtering happens in the SQL, so a principal's
top-k is computed only over what it may read.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .model import Memory

# Column weights for bm25(): name, description, tags, body.
WEIGHTS = (3.0, 2.0, 2.0, 1.0)
SNIPPET_CHARS = 200
_OPEN, _CLOSE = "\x01", "\x02"
_WORD = re.compile(r"\w+")

# Function words that carry no topic: articles, pronouns, auxiliaries,
# prepositions, question words and fillers. Kept small on purpose: a word
# like "first" or "never" can be the point of a query.
STOPWORDS = frozenset(
    """
    a an the this that these those
    i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs
    am is are was were be been being do does did doing done have has had having
    will would shall should can could may might must
    and or but nor so if then than because while although though
    of to in on at by for with from about as into onto over under after before between through during
    up down out off again further once
    what which who whom whose when where why how
    there here some any all each every both either neither more most other such
    no not only just also very too own same
    """.split()
)


@dataclass(frozen=True)
class SearchHit:
    """One search result: a topic file, its relevance and the line that matched best.

    `score` is higher for better matches (the negated BM25 of FTS5); it ranks
    the hits of one query and means nothing across queries. `line` is the
    1-based line of `snippet` in the file (frontmatter included).
    """

    path: str
    score: float
    name: str
    description: str
    snippet: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def terms(query: str) -> list[str]:
    """The words of a query that are worth matching, in order, without repeats."""
    words = [w.lower() for w in _WORD.findall(query)]
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(kept))


def match_expression(words: Iterable[str]) -> str:
    """An FTS5 MATCH expression: every word as a quoted string, joined with OR."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


@dataclass
class _Doc:
    rowid: int
    version: str
    name: str
    description: str
    body_line: int  # lines before the body (the frontmatter block)


class SearchIndex:
    """The FTS5 index of one memory; the caller serialises access (Memdir's lock)."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("CREATE VIRTUAL TABLE fts USING fts5(name, description, tags, body, tokenize='porter unicode61')")
        # Paths live in a narrow table of their own: a scope filter joined on it reads a few bytes
        # per match, where a column of the FTS table would load each matching row's whole body.
        self._db.execute("CREATE TABLE doc(id INTEGER PRIMARY KEY, path TEXT NOT NULL)")
        self._docs: dict[str, _Doc] = {}
        self._paths: dict[int, str] = {}  # rowid -> path
        self._next = 1
        self.dirty: set[str] = set()

    def __len__(self) -> int:
        return len(self._docs)

    def version(self, path: str) -> str | None:
        doc = self._docs.get(path)
        return None if doc is None else doc.version

    def put(self, memory: Memory) -> None:
        """Index (or re-index) one topic file."""
        self.remove(memory.path)
        # The description is indexed only when the author wrote one: a derived
        # description repeats the body's first line and would count it twice.
        written = memory.meta.get("description")
        description = str(written) if written not in (None, "") else ""
        rowid = self._next
        self._next += 1
        self._db.execute(
            "INSERT INTO fts(rowid, name, description, tags, body) VALUES (?, ?, ?, ?, ?)",
            (rowid, memory.name, description, " ".join(memory.tags), memory.body),
        )
        self._db.execute("INSERT INTO doc(id, path) VALUES (?, ?)", (rowid, memory.path))
        self._paths[rowid] = memory.path
        head = len(memory.text) - len(memory.body)
        self._docs[memory.path] = _Doc(rowid, memory.version, memory.name, memory.description,
                                       memory.text.count("\n", 0, head))

    def remove(self, path: str) -> None:
        doc = self._docs.pop(path, None)
        if doc is not None:
            del self._paths[doc.rowid]
            self._db.execute("DELETE FROM fts WHERE rowid = ?", (doc.rowid,))
            self._db.execute("DELETE FROM doc WHERE id = ?", (doc.rowid,))

    def query(self, query: str, k: int, prefixes: Sequence[str]) -> list[SearchHit]:
        """The top `k` files matching `query` among paths starting with one of `prefixes`."""
        words = terms(query)
        if not words or not prefixes or k < 1:
            return []
        join = where = ""
        args: list[Any] = [match_expression(words)]
        if "" not in prefixes:
            join = " JOIN doc ON doc.id = fts.rowid"
            where = " AND (" + " OR ".join("substr(doc.path, 1, ?) = ?" for _ in prefixes) + ")"
            for p in prefixes:
                args += [len(p), p]
        weights = ", ".join(str(w) for w in WEIGHTS)
        # Rank first, highlight only the top k (highlight in the ranking query runs for every match).
        top = self._db.execute(
            f"SELECT fts.rowid, bm25(fts, {weights}) AS rank FROM fts{join} WHERE fts MATCH ?{where}"
            " ORDER BY rank LIMIT ?",
            [*args, k],
        ).fetchall()
        if not top:
            return []
        marks = ",".join("?" * len(top))
        marked = dict(self._db.execute(
            f"SELECT rowid, highlight(fts, 3, ?, ?) FROM fts WHERE fts MATCH ? AND rowid IN ({marks})",
            [_OPEN, _CLOSE, args[0], *(r for r, _ in top)],
        ).fetchall())
        rows = [(self._paths[rowid], rank, marked[rowid]) for rowid, rank in top]
        hits = []
        for path, rank, marked in rows:
            doc = self._docs[path]
            snippet, line = _best_line(marked)
            if line:
                line += doc.body_line
            else:  # only the name, description or tags matched
                snippet, line = doc.description, 0
            hits.append(SearchHit(path, -float(rank), doc.name, doc.description, snippet, line))
        return hits

    def close(self) -> None:
        self._db.close()


def _best_line(marked: str) -> tuple[str, int]:
    """The body line with the most distinct matched words (first wins a tie), and its 1-based number."""
    best, best_line, best_count = "", 0, 0
    for number, line in enumerate(marked.split("\n"), 1):
        if _OPEN not in line:
            continue
        found = {m.lower() for m in re.findall(f"{_OPEN}(.*?){_CLOSE}", line)}
        if len(found) > best_count:
            best, best_line, best_count = line, number, len(found)
    if not best_line:
        return "", 0
    return _clip(best), best_line


def _clip(marked: str) -> str:
    """The line without match marks, cut to SNIPPET_CHARS around its first match."""
    first = marked.index(_OPEN)
    plain = marked.replace(_OPEN, "").replace(_CLOSE, "").strip()
    if len(plain) <= SNIPPET_CHARS:
        return plain
    at = len(marked[:first].replace(_CLOSE, "").lstrip())
    start = max(0, min(at - SNIPPET_CHARS // 4, len(plain) - SNIPPET_CHARS))
    cut = plain[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + cut + ("…" if start + SNIPPET_CHARS < len(plain) else "")
