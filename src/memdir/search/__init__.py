"""Finding memories: a persistent full-text index per backend, ranked search, and grep.

- `text`: query words and bounds, and the lines of a file that match them.
- `lexical`: what the index holds (`Doc`), its upkeep (`catch_up`), ranking and hits.
- `fts` (SQLite FTS5: folder, SQLite, S3 cache) and `pg` (PostgreSQL): the indexes.
- `grep`: regular expressions in linear time over the index's copy of the texts.

Modes: `lexical` is this package; `auto` is lexical unless a semantic layer
says otherwise; `semantic` and `hybrid` belong to the optional semantic layer,
a module `memdir.search.semantic` (the `memdir[semantic]` extra) providing
`search(md, query, *, k, mode, where) -> list[SearchHit]`, where `where` is
the `Filter` (scope, prefix, types, since) that must go inside its queries.
"""

from __future__ import annotations

import datetime as dt
import importlib
import re
from types import ModuleType
from typing import Any

from ..errors import InvalidArgument
from ..stores.base import Store
from .lexical import Doc, Filter, LexicalIndex, SearchHit, catch_up, doc_of
from .text import MAX_QUERY_BYTES, MAX_QUERY_TERMS, Query, match_expression, parse, terms

__all__ = [
    "MAX_QUERY_BYTES", "MAX_QUERY_TERMS", "MODES", "Doc", "Filter", "LexicalIndex", "Query", "SearchHit",
    "catch_up", "doc_of", "match_expression", "open_index", "parse", "semantic_layer", "since_of", "terms",
]

MODES = ("auto", "lexical", "semantic", "hybrid")
_SINCE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?$")


def open_index(store: Store) -> LexicalIndex:
    """The persistent lexical index that goes with a store."""
    from .fts import FtsIndex, cache_folder

    # By class name: each store's module is loaded already, and importing the others costs a new process time.
    kind = type(store).__name__
    if kind == "FileStore":
        return FtsIndex.file(store.internal / "search.db")  # type: ignore[attr-defined]
    if kind == "SQLiteStore":
        return FtsIndex.in_store(store)
    if kind == "PostgresStore":
        from .pg import PgIndex

        return PgIndex(store)
    if kind == "S3Store":
        return FtsIndex.file(cache_folder(store.key) / "search.db")
    return FtsIndex.memory()


def semantic_layer(mode: str) -> ModuleType:
    """The semantic layer's module, or a one-line error saying what to install."""
    try:
        return importlib.import_module("memdir.search.semantic")
    except ImportError:
        raise InvalidArgument(
            f"search mode {mode!r} needs the semantic layer, which is not installed: "
            "pip install 'memdir[semantic]' (or use mode 'lexical')"
        ) from None


def since_of(value: Any) -> str | None:
    """`since` as the ISO text `updated` is compared with (a date, a datetime or such text)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        when = value.astimezone(dt.UTC) if value.tzinfo else value
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str) and _SINCE.match(value.strip()):
        text: str = value
        return text.strip().replace(" ", "T")
    raise InvalidArgument(f"since must be a date like 2026-03-05 (or a date and time), got {value!r}")
