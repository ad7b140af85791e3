"""Finding memories: a persistent full-text index per backend, ranked search, and grep.

- `text`: query words and bounds, and the lines of a file that match them.
- `lexical`: what the index holds (`Doc`), its upkeep (`catch_up`), ranking and hits.
- `fts` (SQLite FTS5: folder, SQLite, S3 cache) and `pg` (PostgreSQL): the indexes.
- `grep`: regular expressions in linear time over the index's copy of the texts.
- `evidence`: how much of a query a file holds; a hit holding `COVER` of it is sure.
- `confidence`: how sure a hit is and the signals that scored it; history below knowledge.

Modes: `lexical` is this package; `semantic` and `hybrid` are the semantic
layer (`semantic`, `vectors`, `embed`; the `memdir[semantic]` extra), whose
`search(md, query, *, k, mode, where, cover) -> list[SearchHit]` takes the `Filter`
(scope, prefix, types, since) that goes inside its queries; `auto` is lexical,
and with the extra and a vector index already built it adds the semantic side
when the lexical result is weak.
"""

from __future__ import annotations

import datetime as dt
import importlib
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import paths
from ..errors import InvalidArgument
from ..stores.base import Change, Record, Store, in_store_transaction, scrub_sqlite
from . import embed
from .confidence import asks_about_past, without_past
from .evidence import COVER
from .fts import FtsIndex, cache_folder
from .lexical import Doc, Filter, LexicalIndex, SearchHit, catch_up, commit_docs, doc_of
from .pg import PgIndex
from .text import MAX_QUERY_BYTES, MAX_QUERY_TERMS, Query, match_expression, parse, terms

__all__ = [
    "COVER", "MAX_QUERY_BYTES", "asks_about_past", "MAX_QUERY_TERMS", "MODES", "Doc", "Filter", "LexicalIndex", "Query", "SearchHit",
    "Searcher", "catch_up", "doc_of", "in_store_transaction", "match_expression", "open_index", "parse",
    "semantic_layer", "semantic_ready", "since_of", "terms", "VECTOR_SIDES", "vector_files", "vector_location", "without_past",
]

MODES = ("auto", "lexical", "semantic", "hybrid")
_SINCE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?$")


def open_index(store: Store) -> LexicalIndex:
    """The persistent lexical index that goes with a store."""
    # By class name: each store's module is loaded already, and importing the others costs a new process time.
    kind = type(store).__name__
    if kind == "FileStore":
        return FtsIndex.in_folder(store)
    if kind == "SQLiteStore":
        return FtsIndex.in_store(store)
    if kind == "PostgresStore":
        return PgIndex(store)
    if kind == "S3Store":
        return FtsIndex.file(cache_folder(store.key) / "search.db")
    return FtsIndex.memory()


class Searcher:
    """One memory's lexical index, held by the facade for every view: opened on first use, caught up
    with the store before it answers, and kept current by the writes.

    A process that has loaded the catalog catches the index up to the
    catalog's seq (`catalog_seq`). One that has not (a CLI command, a hook)
    does not load it for a search: it asks the store for the changes from the
    index's own seq on, and trusts the index when the latest of them is the
    one it reflects; newer changes are read and applied; an index never built
    is built from the store's changes. When the store has nothing at that seq
    (an index ahead of a replaced store, or a change with no file), the
    catalog decides.
    """

    def __init__(self, store: Store, types: tuple[str, ...], lock: threading.RLock, catalog_seq: Callable[[], int],
                 loaded: Callable[[], bool]) -> None:
        self.store = store
        self.types = types
        self.lock = lock  # the memory's own: the index, the catalog and the writes move together
        self._catalog_seq = catalog_seq
        self._loaded = loaded
        self._index: LexicalIndex | None = None

    @property
    def opened(self) -> bool:
        return self._index is not None

    def index(self) -> LexicalIndex:
        """The index, caught up with the store (only changed files are read); hold `lock`."""
        idx = self._open()
        if not self._loaded():
            seq = idx.seq()
            latest, changed = self.store.changes(max(seq - 1, 0))
            if not seq:  # never built (the writes so far were CLI commands or hooks): from the store's changes
                if changed:
                    catch_up(idx, self.store, latest, self.types)
                return idx
            if changed and latest >= seq:
                if latest > seq:
                    catch_up(idx, self.store, latest, self.types)
                return idx
        seq = self._catalog_seq()
        if idx.seq() != seq:
            catch_up(idx, self.store, seq, self.types)
        return idx

    def committed(self, changes: Sequence[Change], records: Sequence[Record]) -> None:
        """A write's rows: in its transaction on SQL stores; elsewhere only once this process has searched
        (a CLI write or a hook leaves them to the next search, which catches up once for all)."""
        inside = in_store_transaction(self.store)
        if not records or not (inside or self.opened):
            return
        removed, docs = commit_docs(changes, records, self.types)
        if inside:
            self._open().apply(records[0].seq - 1, records[-1].seq, removed, docs)
            return
        try:  # a derived file after the commit point: if it fails, the next search catches it up
            self._open().apply(records[0].seq - 1, records[-1].seq, removed, docs)
        except Exception:
            self.close()

    def rebuild(self, seq: int, progress: Callable[[int, int], None] | None = None) -> int:
        """Empty the index and fill it from the files (catalog seq `seq`); returns how many it holds."""
        idx = self._open()
        idx.clear()
        catch_up(idx, self.store, seq, self.types, progress)
        return idx.count()

    def scrub(self) -> list[str]:
        """After the past was rewritten: the index caught up and merged, so no word of deleted text stays in it,
        and an index in a file of its own (S3's local copy) vacuumed; the store's own files are the store's."""
        with self.lock:
            idx = self.index()
            idx.optimize()
            if type(self.store).__name__ == "S3Store" and isinstance(idx, FtsIndex):
                return scrub_sqlite(idx.db, "the local copy of the search index")
        return []

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def _open(self) -> LexicalIndex:
        if self._index is None:
            self._index = open_index(self.store)
        return self._index


def semantic_layer(mode: str) -> ModuleType:
    """The semantic layer's module, or a one-line error saying what to install."""
    module = importlib.import_module("memdir.search.semantic")
    if not module.ready():
        raise InvalidArgument(
            f"search mode {mode!r} needs the semantic layer, which is not installed: "
            "pip install 'memdir[semantic]' (or 'memdir[multilingual]' for 16 languages; or use mode 'lexical')"
        )
    return module


def semantic_ready(md: Any = None) -> bool:
    """Whether `auto` may call on the semantic layer: the extra is installed (nothing warns if not)
    and, for `md`, the layer is in use in this process or a vector index was built.

    Without vectors an auto search is lexical, and this answers from a stat
    without importing the layer (a hook's process has no time for it).
    """
    if md is not None and "memdir.search.semantic" not in sys.modules:
        where = vector_location(md.store)
        if where is None or not where.is_file():
            return False

    return embed.available()


def vector_location(store: Any, side: str = "") -> Path | None:
    """Where a memory's vectors live: beside a local store's data, else in a local cache.

    Folder: `.memdir/vectors.sqlite3`. SQLite: `<db>-vectors/<tenant>.sqlite3`.
    The multilingual model's vectors (`side="multilingual"`) sit beside, named
    `vectors.multilingual.sqlite3` and `<tenant>.multilingual.sqlite3`.
    PostgreSQL and S3: `paths.user_cache()`
    + `/vectors/<hash of the store and tenant>.sqlite3`, a cache a new process
    picks up again; the catalog seq and file versions it records make it
    catch up with changes made meanwhile, and vectors are found by content.
    """
    import hashlib

    root = getattr(store, "root", None)
    if isinstance(root, Path):
        return _side(root / paths.INTERNAL_DIR / "vectors.sqlite3", side)
    db = getattr(store, "path", None)
    tenant = getattr(store, "tenant", None)
    if isinstance(db, Path) and tenant:
        return _side(db.with_name(db.name + "-vectors") / f"{tenant}.sqlite3", side)
    key = getattr(store, "key", None)
    if not isinstance(key, str):
        return None
    cache = paths.user_cache()
    name = hashlib.sha256(f"{key}\0{tenant or ''}".encode()).hexdigest()[:24]
    return _side(cache / "vectors" / f"{name}.sqlite3", side)


def _side(path: Path, side: str) -> Path:
    return path.with_name(f"{path.stem}.{side}{path.suffix}") if side else path  # no tenant id holds a dot


VECTOR_SIDES = ("", "multilingual")  # the English model's vectors, and the multilingual model's


def vector_files(store: Any) -> list[Path]:
    """Every vector file of a memory that exists (what forgetting scrubs and dropping a tenant deletes)."""
    found = [vector_location(store, side) for side in VECTOR_SIDES]
    return [f for f in found if f is not None and f.is_file()]


def scrub_vectors(store: Store, current: Mapping[str, str]) -> list[str]:
    """Drop the chunks (their text) of files that are gone or changed since, and the vectors no chunk uses, then
    vacuum the file, so a forgotten paragraph leaves nothing there; the next sync embeds what changed again."""
    return [line for where in vector_files(store) for line in _scrub(where, current)]


def _scrub(where: Path, current: Mapping[str, str]) -> list[str]:
    db = sqlite3.connect(where, isolation_level=None, timeout=30)
    try:
        db.execute("BEGIN IMMEDIATE")
        stale = [(p, v) for p, v in db.execute("SELECT DISTINCT path, version FROM chunk") if current.get(p) != v]
        db.executemany("DELETE FROM chunk WHERE path = ? AND version = ?", stale)
        db.execute("DELETE FROM vector WHERE hash NOT IN (SELECT hash FROM chunk)")
        db.execute("COMMIT")
        return scrub_sqlite(db, str(where))
    except sqlite3.Error as e:
        return [f"{where}: {e}; delete the file (the vectors are rebuilt from the files)"]
    finally:
        db.close()


def close_layers(md: Any) -> None:
    """Close what the semantic layer holds open for `md` (its vector index), if it was ever used."""
    module = sys.modules.get("memdir.search.semantic")
    if module is not None:
        module.close(md)


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
