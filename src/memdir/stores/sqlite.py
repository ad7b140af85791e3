"""The SQLite store: many tenants in one embedded database file.

`lock()` is `BEGIN IMMEDIATE`: SQLite's one writer at a time, across
processes, held from the read that a compare-and-swap checks to the index it
rewrites, then one durable COMMIT (WAL, synchronous=FULL). Readers do not
wait for writers (WAL). Tenancy is enforced by memdir's queries, which all
name the tenant: SQLite has no row-level security.
"""

from __future__ import annotations

import builtins
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import NotFound, StoreError
from .base import scrub_sqlite, use_wal
from .sql import Migration, MigrationReport, Migrator, SqlStore

_GUARD = ("WHEN NOT EXISTS (SELECT 1 FROM memdir_state WHERE tenant_id = OLD.tenant_id AND key = 'rewriting') "
          "BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END")
MIGRATIONS: list[Migration] = [
    (
        "0001_tables",
        [
            """CREATE TABLE memdir_files(
                tenant_id TEXT NOT NULL, path TEXT NOT NULL, data BLOB NOT NULL, version TEXT NOT NULL,
                PRIMARY KEY (tenant_id, path))""",
            """CREATE TABLE memdir_journal(
                tenant_id TEXT NOT NULL, seq INTEGER NOT NULL, time TEXT NOT NULL, actor TEXT NOT NULL,
                op TEXT NOT NULL, path TEXT NOT NULL, dest TEXT, old_version TEXT, new_version TEXT,
                old BLOB, new BLOB, undoes INTEGER,
                PRIMARY KEY (tenant_id, seq))""",
            "CREATE INDEX memdir_journal_path ON memdir_journal(tenant_id, path, seq)",
            "CREATE INDEX memdir_journal_dest ON memdir_journal(tenant_id, dest, seq) WHERE dest IS NOT NULL",
            """CREATE TRIGGER memdir_journal_no_update BEFORE UPDATE ON memdir_journal
                BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END""",
            """CREATE TRIGGER memdir_journal_no_delete BEFORE DELETE ON memdir_journal
                BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END""",
            """CREATE TABLE memdir_catalog(
                tenant_id TEXT NOT NULL, path TEXT NOT NULL, entry TEXT, seq INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, path))""",
            "CREATE INDEX memdir_catalog_seq ON memdir_catalog(tenant_id, seq)",
            """CREATE TABLE memdir_derived(
                tenant_id TEXT NOT NULL, path TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (tenant_id, path))""",
            """CREATE TABLE memdir_state(
                tenant_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tenant_id, key))""",
        ],
    ),
    (
        "0002_search",
        [
            # The full-text index (memdir.search.fts): the files' fields and text here, and one
            # contentless FTS5 table per tenant, made on first use, so BM25 counts only that tenant.
            """CREATE TABLE memdir_search_docs(
                id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, path TEXT NOT NULL, version TEXT NOT NULL,
                name TEXT NOT NULL, description TEXT NOT NULL, tags TEXT NOT NULL, type TEXT, updated TEXT,
                head INTEGER NOT NULL, body_at INTEGER NOT NULL, text TEXT NOT NULL, UNIQUE (tenant_id, path))""",
            "CREATE TABLE memdir_search_seq(tenant_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
        ],
    ),
    (
        "0003_rate",
        ["CREATE TABLE memdir_rate(tenant_id TEXT PRIMARY KEY, tokens REAL NOT NULL, stamp REAL NOT NULL)"],
    ),
    (
        "0004_rewrite",
        [
            # Packed journal records (memdir.stores.packing), and a journal that is append-only except inside a
            # rewrite (forgetting, redaction, compaction), which marks its tenant in memdir_state while it runs.
            "ALTER TABLE memdir_journal ADD COLUMN form TEXT",
            "ALTER TABLE memdir_journal ADD COLUMN base INTEGER",
            "CREATE INDEX memdir_journal_base ON memdir_journal(tenant_id, base) WHERE base IS NOT NULL",
            "DROP TRIGGER memdir_journal_no_update",
            "DROP TRIGGER memdir_journal_no_delete",
            f"CREATE TRIGGER memdir_journal_no_update BEFORE UPDATE ON memdir_journal {_GUARD}",
            f"CREATE TRIGGER memdir_journal_no_delete BEFORE DELETE ON memdir_journal {_GUARD}",
        ],
    ),
]


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)
    use_wal(db)
    db.execute("PRAGMA synchronous=FULL")
    return db


def _error(where: str, e: sqlite3.Error) -> StoreError:
    hint = "; is this a memdir database?" if "not a database" in str(e) else ""
    return StoreError(f"{where}: {e}{hint}")


class _SQLiteMigrator(Migrator):
    def __init__(self, db: sqlite3.Connection, where: str) -> None:
        super().__init__(where, MIGRATIONS)
        self.db = db

    def run(self, sql: str, args: Sequence[object] = ()) -> builtins.list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as e:
            raise _error(self.where, e) from None

    def has_table(self) -> bool:
        return bool(self.run("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memdir_migrations'"))

    def begin(self) -> None:
        self.run("BEGIN IMMEDIATE")

    def end(self, commit: bool) -> None:
        if self.db.in_transaction:
            self.run("COMMIT" if commit else "ROLLBACK")


def database_path(location: str) -> Path:
    """The file of a `sqlite://` URL: `sqlite:///abs/path.db` or `sqlite://relative.db`."""
    rest = location.split("://", 1)[1] if "://" in location else location
    rest = rest.split("?", 1)[0]
    if not rest or rest.endswith("/"):
        raise StoreError(f"{location!r} names no database file; use sqlite:///path/to/memory.db")
    if rest.startswith("/"):
        rest = "/" + rest.lstrip("/")  # sqlite:////abs/path.db (four slashes) means the same file
    return Path(rest).expanduser().absolute()


def migrate(location: str, *, check: bool = False) -> MigrationReport:
    """Create or upgrade the schema of the database at `location` (with check: only report)."""
    path = database_path(location)
    where = f"sqlite://{path}"
    if check and not path.exists():
        return MigrationReport(where, (), tuple(n for n, _ in MIGRATIONS), ())
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = _connect(path)
    except sqlite3.Error as e:
        raise _error(where, e) from None
    try:
        return _SQLiteMigrator(db, where).migrate(check)
    finally:
        db.close()


class SQLiteStore(SqlStore):
    """One tenant in a SQLite database file (created and migrated on open unless create=False)."""

    def __init__(self, path: str | os.PathLike[str], tenant: str, *, create: bool = True) -> None:
        super().__init__(tenant)
        self.path = Path(path).expanduser().absolute()
        self.where = f"sqlite://{self.path}"
        self.key = f"{self.where}#{tenant}"
        if not self.path.exists():
            if not create:
                raise NotFound(
                    f"no memdir database at {self.path}: create it with `memdir --root {self.where} init`",
                    path=str(self.path),
                )
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = _connect(self.path)
        except sqlite3.Error as e:
            raise _error(self.where, e) from None
        migrator = _SQLiteMigrator(self.db, self.where)
        if migrator.pending():
            if not create:
                migrator.require()
            migrator.migrate()

    def _run(self, sql: str, args: Sequence[object] = ()) -> builtins.list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as e:
            raise _error(self.where, e) from None

    def _begin(self) -> None:
        self._run("BEGIN IMMEDIATE")

    def take(self, rate: int) -> float:
        """A token taken in its own transaction is committed without an fsync: a power loss may give
        it back, and a write need not pay a second flush for that. (NORMAL, so a checkpoint still flushes.)"""
        with self._mutex:
            if self._depth:
                return super().take(rate)
            self._run("PRAGMA synchronous=NORMAL")
            try:
                return super().take(rate)
            finally:
                self._run("PRAGMA synchronous=FULL")

    def _end(self, commit: bool) -> None:
        if not self.db.in_transaction:
            if commit:  # SQLite rolls back by itself after some errors (disk full, I/O): nothing was written
                raise StoreError(f"{self.where}: the change was rolled back after a storage error; nothing was written, retry")
            return
        self._run("COMMIT" if commit else "ROLLBACK")

    def _now(self) -> float:
        return time.time()

    def _rewriting(self, on: bool) -> None:
        if on:
            self._rows("INSERT OR REPLACE INTO memdir_state(tenant_id, key, value) VALUES (?, 'rewriting', '1')")
        else:
            self._rows("DELETE FROM memdir_state WHERE tenant_id = ? AND key = 'rewriting'")

    def _tables(self) -> builtins.list[str]:
        names = [str(r[0]) for r in self._run("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [n for n in names if any(c[1] == "tenant_id" for c in self._run(f'PRAGMA table_info("{n}")'))]

    def scrub(self) -> builtins.list[str]:
        with self._mutex:
            try:
                return scrub_sqlite(self.db, self.where)
            except sqlite3.Error as e:
                raise _error(self.where, e) from None

    def close(self) -> None:
        self.db.close()
