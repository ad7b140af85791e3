"""The SQLite FTS5 index: in `.memdir/memdir.db` for a folder, in the database for the SQLite store,
in a local cache folder for S3, or in memory for any other store.

Two tables per tenant: `docs` (path, version, the fields and the whole text,
which grep reads instead of the store) and a contentless FTS5 table over
name, description, tags and body (`unicode61`), one per tenant so
that BM25's statistics are the tenant's own. The FTS table is given the
fields as memdir reads them (`text.indexed`): words as their stems, spaceless
scripts as character pairs, the name with the words of the file's name; its
name carries the version of that form (`_fts5_`), and an index of an older
form is dropped and rebuilt from the files on open. The seq the index reflects is stored with it, in the same
transaction as the rows it describes.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import StoreError
from ..stores.base import prefix_bounds
from .lexical import WEIGHTS, Doc, Filter
from .text import indexed, match_expression, name_words

_COLUMNS = "path, version, name, description, tags, type, updated, head, body_at, text"
TOKENIZE = "unicode61"  # the text comes stemmed (`text.indexed`): FTS5's own porter merged different words
FORM = "fts5"  # the form the FTS table is given its text in (2: spaceless pairs; 3: file-name words; 4: Porter2 stems;
#                 5: Porter2 with the families it would merge kept apart)
OLDER = ("fts", "fts2", "fts3", "fts4")  # the forms before, dropped when an index of this form is made


def docs_table(name: str) -> str:
    return f"""CREATE TABLE IF NOT EXISTS {name}(
        id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, path TEXT NOT NULL, version TEXT NOT NULL,
        name TEXT NOT NULL, description TEXT NOT NULL, tags TEXT NOT NULL, type TEXT, updated TEXT,
        head INTEGER NOT NULL, body_at INTEGER NOT NULL, text TEXT NOT NULL, UNIQUE (tenant_id, path))"""


def seq_table(name: str) -> str:
    return f"CREATE TABLE IF NOT EXISTS {name}(tenant_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)"


class FtsIndex:
    """One tenant's FTS5 index over a SQLite connection (see the module docstring)."""

    def __init__(self, db: sqlite3.Connection, tenant: str, *, docs: str, seqs: str,
                 writing: Callable[[], AbstractContextManager[None]] | None = None,
                 mutex: Any = None, owned: bool = True, tables: Sequence[str] = ()) -> None:
        self.db = db
        self.tenant = tenant
        self._docs, self._seqs = docs, seqs
        digest = hashlib.blake2b(tenant.encode(), digest_size=6).hexdigest()
        self._fts = f"{docs}_{FORM}_{digest}"
        older = [f"{docs}_{form}_{digest}" for form in OLDER]
        self._mutex = mutex or threading.RLock()
        self._writing = writing or self._own_transaction
        self._owned = owned
        self.shared_transaction = not owned
        names = (self._fts, docs, seqs) if tables else (self._fts,)
        if len(self._rows(f"SELECT 1 FROM sqlite_master WHERE name IN ({','.join('?' * len(names))})", *names)) < len(names):
            try:
                with self._writing():
                    for sql in tables:  # made with the FTS table, the first time
                        self.db.execute(sql)
                    self.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._fts} USING fts5("
                                    f"name, description, tags, body, content='', tokenize='{TOKENIZE}')")
                    # One of them was lost, or the index is of an older form: what is left cannot be
                    # trusted, start empty (at seq 0), and the next search rebuilds it from the files.
                    for table in older:
                        self.db.execute(f"DROP TABLE IF EXISTS {table}")
                    self._empty()
            except sqlite3.Error as e:
                raise StoreError(f"search index: {e}; rebuild it with `memdir reindex`") from None

    # ------------------------------------------------------------ opening

    @classmethod
    def file(cls, path: Path) -> FtsIndex:
        """An index in a database file of its own (derived: deleted and rebuilt if unreadable).

        Where no file can be written (a read-only memory), the index is kept
        in memory instead, built on the first search as before persistence.
        """
        for attempt in (1, 2):
            try:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)  # private; -wal and -shm follow its mode
                try:
                    if os.fstat(fd).st_mode & 0o777 != 0o600:  # a chmod is a metadata write: only when needed
                        os.fchmod(fd, 0o600)
                finally:
                    os.close(fd)
                db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            except (OSError, sqlite3.Error):
                return cls.memory()
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(docs_table("docs"))
                db.execute(seq_table("seqs"))
                return cls(db, "", docs="docs", seqs="seqs")
            except (sqlite3.DatabaseError, StoreError) as e:
                db.close()
                if attempt == 2 or not isinstance(e, sqlite3.DatabaseError) or isinstance(e, sqlite3.OperationalError):
                    return cls.memory()
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
        raise AssertionError  # unreachable

    @classmethod
    def in_folder(cls, store: Any) -> FtsIndex:
        """The folder store's index, in `.memdir/memdir.db` beside the journal: a new process opens one
        SQLite file, not two (each costs it a WAL set up, and a flush of the new WAL's header on the first write).

        Derived, as in a file of its own: written after the commit point, in
        transactions of its own that are not flushed (synchronous NORMAL: a power
        loss can lose the last of them, never corrupt the file, and the next search
        catches up from the store; checkpoints are still flushed).
        """

        @contextmanager
        def writing() -> Iterator[None]:
            with store.lock():
                store.db.execute("PRAGMA synchronous=NORMAL")
                try:
                    store.db.execute("BEGIN IMMEDIATE")
                    try:
                        yield
                    except BaseException:
                        if store.db.in_transaction:  # SQLite may have rolled it back itself (a full disk)
                            store.db.execute("ROLLBACK")
                        raise
                    store.db.execute("COMMIT")
                finally:
                    store.db.execute("PRAGMA synchronous=FULL")

        index = cls(store.db, "", docs="search_docs", seqs="search_seq", writing=writing, mutex=store._thread_lock,
                    owned=False, tables=(docs_table("search_docs"), seq_table("search_seq")))
        index.shared_transaction = False
        try:  # where it was kept before: a file of its own
            (store.internal / "search.db").unlink()
        except FileNotFoundError:
            return index
        for suffix in ("-wal", "-shm"):
            (store.internal / f"search.db{suffix}").unlink(missing_ok=True)
        return index

    @classmethod
    def memory(cls) -> FtsIndex:
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        db.execute(docs_table("docs"))
        db.execute(seq_table("seqs"))
        return cls(db, "", docs="docs", seqs="seqs")

    @classmethod
    def in_store(cls, store: Any) -> FtsIndex:
        """The index inside a SQLite store's database, written in the store's own transactions."""

        @contextmanager
        def writing() -> Iterator[None]:
            with store.lock():
                store.db.execute("SAVEPOINT memdir_search")
                try:
                    yield
                except BaseException:
                    store.db.execute("ROLLBACK TO memdir_search")
                    store.db.execute("RELEASE memdir_search")
                    raise
                store.db.execute("RELEASE memdir_search")

        return cls(store.db, store.tenant, docs="memdir_search_docs", seqs="memdir_search_seq",
                   writing=writing, mutex=store._mutex, owned=False)

    @contextmanager
    def _own_transaction(self) -> Iterator[None]:
        with self._mutex:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    # ------------------------------------------------------------ helpers

    def _rows(self, sql: str, *args: object) -> builtins.list[tuple[Any, ...]]:
        with self._mutex:
            try:
                return self.db.execute(sql, args).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"search index: {e}; rebuild it with `memdir reindex`") from None

    def _where(self, where: Filter, alias: str = "d") -> tuple[str, builtins.list[object]]:
        sql = f" AND {alias}.tenant_id = ?"
        args: builtins.list[object] = [self.tenant]
        ranges = [p for p in where.prefixes if p]
        if "" not in where.prefixes:
            if not ranges:
                return " AND 0", []
            sql += " AND (" + " OR ".join(f"({alias}.path >= ? AND {alias}.path < ?)" for _ in ranges) + ")"
            for p in ranges:
                args += prefix_bounds(p)
        if where.types:
            sql += f" AND {alias}.type IN ({','.join('?' * len(where.types))})"
            args += where.types
        if where.since is not None:
            sql += f" AND {alias}.updated >= ?"
            args.append(where.since)
        return sql, args

    # ------------------------------------------------------------ the protocol

    def seq(self) -> int:
        row = self._rows(f"SELECT seq FROM {self._seqs} WHERE tenant_id = ?", self.tenant)
        return int(row[0][0]) if row else 0

    def count(self) -> int:
        return int(self._rows(f"SELECT count(*) FROM {self._docs} WHERE tenant_id = ?", self.tenant)[0][0])

    def versions(self, paths: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for start in range(0, len(paths), 500):
            part = paths[start : start + 500]
            out.update(self._rows(
                f"SELECT path, version FROM {self._docs} WHERE tenant_id = ? AND path IN ({','.join('?' * len(part))})",
                self.tenant, *part,
            ))
        return out

    def apply(self, since: int, seq: int, removed: Iterable[str], docs: Iterable[Doc]) -> bool:
        try:
            return self._apply(since, seq, list(removed), list(docs))
        except sqlite3.Error as e:
            raise StoreError(f"search index: {e}; rebuild it with `memdir reindex`") from None

    def _apply(self, since: int, seq: int, removed: list[str], docs: list[Doc]) -> bool:
        with self._writing():
            if self.seq() != since:
                return False
            for path in [*removed, *(d.path for d in docs)]:
                self._delete(path)
            for d in docs:
                cur = self.db.execute(
                    f"INSERT INTO {self._docs}(tenant_id, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (self.tenant, d.path, d.version, d.name, d.description, d.tags, d.type, d.updated, d.head,
                     d.body_at, d.text),
                )
                self.db.execute(f"INSERT INTO {self._fts}(rowid, name, description, tags, body) VALUES (?,?,?,?,?)",
                                (cur.lastrowid, _title(d.path, d.name), indexed(d.description), indexed(d.tags),
                                 indexed(d.body)))
            if seq != since:
                self.db.execute(f"INSERT INTO {self._seqs}(tenant_id, seq) VALUES (?, ?) "
                                "ON CONFLICT(tenant_id) DO UPDATE SET seq = excluded.seq", (self.tenant, seq))
        return True

    def _delete(self, path: str) -> None:
        row = self.db.execute(
            f"SELECT id, name, description, tags, substr(text, body_at + 1) FROM {self._docs} "
            "WHERE tenant_id = ? AND path = ?", (self.tenant, path),
        ).fetchone()
        if row is not None:  # a contentless table forgets a row by being given the text it indexed
            self.db.execute(f"INSERT INTO {self._fts}({self._fts}, rowid, name, description, tags, body) "
                            "VALUES ('delete', ?, ?, ?, ?, ?)",
                            (row[0], _title(path, str(row[1])), *(indexed(str(v)) for v in row[2:])))
            self.db.execute(f"DELETE FROM {self._docs} WHERE id = ?", (row[0],))

    def clear(self) -> None:
        try:
            with self._writing():
                self._empty()
        except sqlite3.Error as e:
            raise StoreError(f"search index: {e}; rebuild it with `memdir reindex`") from None

    def _empty(self) -> None:
        self.db.execute(f"INSERT INTO {self._fts}({self._fts}) VALUES ('delete-all')")
        self.db.execute(f"DELETE FROM {self._docs} WHERE tenant_id = ?", (self.tenant,))
        self.db.execute(f"DELETE FROM {self._seqs} WHERE tenant_id = ?", (self.tenant,))

    def _script(self, *statements: str) -> None:
        """Run statements in one write transaction; a statement with a ? gets the tenant."""
        try:
            with self._writing():
                for sql in statements:
                    self.db.execute(sql, (self.tenant,) if "?" in sql else ())
        except sqlite3.Error as e:
            raise StoreError(f"search index: {e}; rebuild it with `memdir reindex`") from None

    def candidates(self, words: Sequence[str], n: int, where: Filter) -> builtins.list[tuple[str, float]]:
        weights = ", ".join(str(w) for w in WEIGHTS)
        match = match_expression(words)
        if where.everything:  # the table is this tenant's: no join needed to rank
            top = self._rows(f"SELECT rowid, bm25({self._fts}, {weights}) AS r FROM {self._fts} "
                             f"WHERE {self._fts} MATCH ? ORDER BY r LIMIT ?", match, n)
            if not top:
                return []
            ids = dict(self._rows(f"SELECT id, path FROM {self._docs} WHERE tenant_id = ? AND id IN "
                                  f"({','.join('?' * len(top))})", self.tenant, *(i for i, _ in top)))
            return [(ids[i], -float(r)) for i, r in top if i in ids]
        cond, args = self._where(where)
        rows = self._rows(
            f"SELECT d.path, bm25({self._fts}, {weights}) AS r FROM {self._fts} JOIN {self._docs} d "
            f"ON d.id = {self._fts}.rowid WHERE {self._fts} MATCH ?{cond} ORDER BY r LIMIT ?", match, *args, n,
        )
        return [(str(p), -float(r)) for p, r in rows]

    def fields(self, words: Sequence[str], paths: Sequence[str], where: Filter) -> dict[str, dict[str, float]]:
        """BM25 of each field alone (its weight, the others 0) for `paths`: what `--explain` shows."""
        if not words or not paths:
            return {}
        alone = [", ".join(str(w if i == j else 0.0) for j, w in enumerate(WEIGHTS)) for i in range(len(WEIGHTS))]
        cond, args = self._where(where)
        rows = self._rows(
            f"SELECT d.path, {', '.join(f'bm25({self._fts}, {a})' for a in alone)} FROM {self._fts} JOIN {self._docs} "
            f"d ON d.id = {self._fts}.rowid WHERE {self._fts} MATCH ? AND d.path IN ({','.join('?' * len(paths))}){cond}",
            match_expression(words), *paths, *args,
        )
        return {str(r[0]): dict(zip(("name", "description", "tags", "body"), (-float(x) for x in r[1:]), strict=True))
                for r in rows}

    def frequencies(self, words: Sequence[str], where: Filter) -> dict[str, int]:
        # Over the tenant's whole table, as bm25() counts its statistics: a count inside a scope or a
        # prefix would join every match with its row (100x slower on common words) for the same weights.
        unique = list(dict.fromkeys(words))
        if not unique:
            return {}
        one = f"(SELECT count(*) FROM {self._fts} WHERE {self._fts} MATCH ?)"
        row = self._rows("SELECT " + ", ".join([one] * len(unique)), *(match_expression([w]) for w in unique))[0]
        return {w: int(n) for w, n in zip(unique, row, strict=True)}

    def containing(self, needles: Sequence[str], where: Filter) -> builtins.list[tuple[str, int]]:
        cond, args = self._where(where)
        found = " + ".join("(instr(d.text, ?) > 0)" for _ in needles)
        rows = self._rows(f"SELECT path, n FROM (SELECT d.path, {found} AS n FROM {self._docs} d WHERE 1{cond}) "
                          "WHERE n > 0", *needles, *args)
        return [(str(p), int(n)) for p, n in rows]

    def docs(self, paths: Sequence[str], where: Filter) -> dict[str, Doc]:
        if not paths:
            return {}
        cond, args = self._where(where)
        rows = self._rows(f"SELECT {_COLUMNS} FROM {self._docs} d WHERE d.path IN ({','.join('?' * len(paths))}){cond}",
                          *paths, *args)
        return {str(r[0]): Doc(*r) for r in rows}

    def exists(self, paths: Sequence[str], where: Filter) -> set[str]:
        if not paths:
            return set()
        cond, args = self._where(where)
        rows = self._rows(f"SELECT path FROM {self._docs} d WHERE d.path IN ({','.join('?' * len(paths))}){cond}",
                          *paths, *args)
        return {str(r[0]) for r in rows}

    def texts(self, where: Filter, needles: Sequence[Sequence[str]], ignore_case: bool) -> Iterator[tuple[str, str]]:
        cond, args = self._where(where)
        for group in needles:
            if ignore_case:  # the needles are ASCII then, and LIKE folds ASCII case without a lowered copy of each text
                cond += " AND (" + " OR ".join("d.text LIKE ? ESCAPE '\\'" for _ in group) + ")"
                args += ["%" + n.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for n in group]
            else:
                cond += " AND (" + " OR ".join("instr(d.text, ?) > 0" for _ in group) + ")"
                args += group
        yield from ((str(p), str(t)) for p, t in self._rows(
            f"SELECT path, text FROM {self._docs} d WHERE 1{cond} ORDER BY path", *args))

    def drop(self) -> None:
        """Delete this tenant's index, its FTS table with it (a tenant dropped: `remember.forget.drop_tenant`)."""
        self._script(f"DROP TABLE IF EXISTS {self._fts}", f"DELETE FROM {self._docs} WHERE tenant_id = ?",
                     f"DELETE FROM {self._seqs} WHERE tenant_id = ?")

    def optimize(self) -> None:
        self._script(f"INSERT INTO {self._fts}({self._fts}) VALUES ('optimize')")

    def close(self) -> None:
        if self._owned:
            self.db.close()


def _title(path: str, name: str) -> str:
    """The name field as indexed: the name, and the words of the file's name it lacks (`text.name_words`)."""
    return indexed(f"{name}\n{words}" if (words := name_words(path, name)) else name)


def cache_folder(key: str) -> Path:
    """Where the local copy of a remote store's index lives: in the user cache folder."""
    return paths.user_cache() / hashlib.blake2b(key.encode(), digest_size=12).hexdigest()
