"""What the SQLite and PostgreSQL stores share: one tenant's rows, one transaction per change.

Every table has a `tenant_id` column and every query names it, so one
database holds many tenants. Content, journal, catalog and derived files
(MEMORY.md) change inside the transaction that `lock()` opens, so a write and
the index it changes commit together or not at all. Versions are the journal
seq of the change that wrote the content (`version_of`): a per-tenant counter
that never goes back, so undo gives restored bytes a new version.

Migrations are named, ordered lists of statements recorded in
`memdir_migrations`; checking which are pending never writes.
"""

from __future__ import annotations

import builtins
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from ..errors import StoreError
from ..model import Entry
from ..paths import INDEX_NAME
from . import packing
from .base import Blob, Change, Record, check_change, prefix_bounds, prefix_sql, take_token, version_of

Migration = tuple[str, Sequence[str]]

_RECORD = "seq, time, actor, op, path, dest, old_version, new_version, old, new, undoes"


@dataclass(frozen=True)
class MigrationReport:
    """What `migrate` did (or, with check, would do)."""

    location: str
    applied: tuple[str, ...]  # names applied by this call
    pending: tuple[str, ...]  # names still to apply (with check)
    current: tuple[str, ...]  # names recorded before this call
    granted: str | None = None  # the role given the use of the tables, if asked

    def to_dict(self) -> dict[str, Any]:
        return {"location": self.location, "applied": list(self.applied), "pending": list(self.pending),
                "current": list(self.current), "granted": self.granted}


def _stored(r: Sequence[Any]) -> packing.Row:
    """A journal row selected as `form, base, <_RECORD>` as (record, form, base)."""
    rec = Record(int(r[2]), r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                 None if r[10] is None else bytes(r[10]), None if r[11] is None else bytes(r[11]), r[12])
    return rec, r[0], None if r[1] is None else int(r[1])


def _is_index(path: str) -> bool:
    return path == INDEX_NAME or path.endswith("/" + INDEX_NAME)


class SqlStore:
    """The Store protocol over a DB-API connection; subclasses supply the connection."""

    key: str
    tenant: str
    where: str  # "sqlite:///path" or a redacted postgresql URL, for messages

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self._mutex = threading.RLock()
        self._depth = 0
        self._rewriting_now = False  # committing a rewrite's changes: their old content is stored whole

    # ------------------------------------------------------------ hooks

    def _run(self, sql: str, args: Sequence[object] = ()) -> builtins.list[tuple[Any, ...]]:
        """Execute one statement (placeholders written as ?) and return its rows."""
        raise NotImplementedError

    def _begin(self) -> None:
        raise NotImplementedError

    def _end(self, commit: bool) -> None:
        raise NotImplementedError

    def _now(self) -> float:
        """Seconds since the epoch by the database's clock (the rate bucket's time)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------ helpers

    def _rows(self, sql: str, *args: object) -> builtins.list[tuple[Any, ...]]:
        with self._mutex:
            return self._run(sql, (self.tenant, *args))

    def _one(self, sql: str, *args: object) -> tuple[Any, ...] | None:
        rows = self._rows(sql, *args)
        return rows[0] if rows else None

    # ------------------------------------------------------------ reading

    def get(self, path: str) -> Blob | None:
        if _is_index(path):
            row = self._one("SELECT data, 'derived' FROM memdir_derived WHERE tenant_id = ? AND path = ?", path)
        else:
            row = self._one("SELECT data, version FROM memdir_files WHERE tenant_id = ? AND path = ?", path)
        return None if row is None else Blob(bytes(row[0]), str(row[1]))

    def list(self, prefix: str = "") -> builtins.list[tuple[str, str]]:
        if prefix:
            rows = self._rows(
                "SELECT path, version FROM memdir_files WHERE tenant_id = ? AND path >= ? AND path < ? ORDER BY path",
                *prefix_bounds(prefix),
            )
        else:
            rows = self._rows("SELECT path, version FROM memdir_files WHERE tenant_id = ? ORDER BY path")
        return [(str(p), str(v)) for p, v in rows]

    def _version(self, path: str) -> str | None:
        row = self._one("SELECT version FROM memdir_files WHERE tenant_id = ? AND path = ?", path)
        return None if row is None else str(row[0])

    # ------------------------------------------------------------ locking

    @contextmanager
    def lock(self) -> Iterator[None]:
        """One write transaction, exclusive per tenant; nested calls join it."""
        with self._mutex:
            if self._depth == 0:
                self._begin()
            self._depth += 1
            ok = False
            try:
                yield
                ok = True
            finally:
                self._depth -= 1
                if self._depth == 0:
                    try:
                        self._end(ok)
                    except BaseException:
                        try:  # a failed COMMIT must not leave the transaction open for the next change to join
                            self._end(False)
                        except Exception:
                            pass
                        raise

    # ------------------------------------------------------------ writing

    def commit(self, changes: Sequence[Change]) -> builtins.list[Record]:
        if not changes:
            return []
        with self.lock():
            for change in changes:
                taken = change.dest is not None and self._version(change.dest) is not None
                check_change(change, self._version(change.path), taken)
            row = self._one("SELECT coalesce(max(seq), 0) FROM memdir_journal WHERE tenant_id = ?")
            first = int(row[0] if row else 0) + 1
            return [self._apply(first + i, change) for i, change in enumerate(changes)]

    def _apply(self, seq: int, change: Change) -> Record:
        if change.record_only:
            version = self._version(change.target) if change.data is not None else None
        else:
            version = None if change.data is None else version_of(seq)
        rec = Record(seq=seq, time=change.time, actor=change.actor, op=change.op, path=change.path,
                     dest=change.dest, old_version=change.expect, new_version=version, old=change.old,
                     new=change.data, undoes=change.undoes)
        writer = None if self._rewriting_now else self._writer(rec.path, rec.old_version)  # a rewrite's old may differ
        packed = packing.committed(rec.old, rec.new, writer)
        self._rows(
            f"INSERT INTO memdir_journal(tenant_id, {_RECORD}, form, base) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rec.seq, rec.time, rec.actor, rec.op, rec.path, rec.dest, rec.old_version, rec.new_version,
            packed.old, packed.new, rec.undoes, packed.form, packed.base,
        )
        if not change.record_only:
            if change.dest is not None or change.data is None:
                self._rows("DELETE FROM memdir_files WHERE tenant_id = ? AND path = ?", change.path)
            if change.data is not None:
                self._rows(
                    "INSERT INTO memdir_files(tenant_id, path, data, version) VALUES (?,?,?,?) "
                    "ON CONFLICT(tenant_id, path) DO UPDATE SET data = excluded.data, version = excluded.version",
                    change.target, change.data, version,
                )
        if change.dest is not None:
            self._catalog(change.path, None, seq)
        entry = None if change.entry is None else replace(change.entry, version=version or "")
        self._catalog(change.target, entry, seq)
        return rec

    def _writer(self, path: str, version: str | None) -> tuple[int, str | None] | None:
        """(seq, form) of the record that wrote `path`'s content at `version`, if it is the latest to write there."""
        if version is None:
            return None
        rows = [r for r in (
            self._one("SELECT seq, form, new_version FROM memdir_journal WHERE tenant_id = ? AND path = ? AND dest IS NULL "
                      "ORDER BY seq DESC LIMIT 1", path),
            self._one("SELECT seq, form, new_version FROM memdir_journal WHERE tenant_id = ? AND dest = ? "
                      "ORDER BY seq DESC LIMIT 1", path)) if r is not None]
        last = max(rows, key=lambda r: int(r[0]), default=None)
        return (int(last[0]), last[1]) if last is not None and last[2] == version else None

    def _catalog(self, path: str, entry: Entry | None, seq: int) -> None:
        text = None if entry is None else json.dumps(entry.to_dict(), ensure_ascii=False)
        self._rows(
            "INSERT INTO memdir_catalog(tenant_id, path, entry, seq) VALUES (?,?,?,?) "
            "ON CONFLICT(tenant_id, path) DO UPDATE SET entry = excluded.entry, seq = excluded.seq",
            path, text, seq,
        )

    # ------------------------------------------------------------ catalog and journal

    def changes(self, since: int) -> tuple[int, builtins.list[tuple[str, Entry | None]]]:
        rows = self._rows(
            "SELECT path, entry, seq FROM memdir_catalog WHERE tenant_id = ? AND seq > ? ORDER BY seq", since
        )
        if not rows:
            return since, []
        out = [(str(p), None if e is None else Entry.from_dict(json.loads(e))) for p, e, _ in rows]
        return int(rows[-1][2]), out

    def journal(
        self, path: str | None = None, *, limit: int | None = None, prefixes: Sequence[str] | None = None
    ) -> builtins.list[Record]:
        sql = f"SELECT form, base, {_RECORD} FROM memdir_journal WHERE tenant_id = ?"
        args: list[object] = []
        if path is not None:
            sql += " AND (path = ? OR dest = ?)"
            args += [path, path]
        if prefixes is not None:
            cond, more = prefix_sql("path", prefixes)
            sql += f" AND {cond}"
            args += more
        sql += " ORDER BY seq DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return packing.decoded([_stored(r) for r in self._rows(sql, *args)],
                               self._by_seq)

    def _by_seq(self, seqs: set[int]) -> dict[int, packing.Row]:
        marks = ",".join("?" * len(seqs))
        rows = self._rows(f"SELECT form, base, {_RECORD} FROM memdir_journal WHERE tenant_id = ? AND seq IN ({marks})",
                          *sorted(seqs))
        return {int(r[2]): _stored(r) for r in rows}

    # ------------------------------------------------------------ rewriting the past

    def _rewriting(self, on: bool) -> None:
        """Let the journal's append-only trigger pass this transaction's updates and deletes (or no more)."""
        raise NotImplementedError

    def rewrite(self, edits: Mapping[int, Record | None], changes: Sequence[Change] = ()) -> builtins.list[Record]:
        with self.lock():
            self._rewriting_now = True
            try:
                records = self.commit(changes)  # first: a seq the rewrite drops is never given again
            finally:
                self._rewriting_now = False
            if not edits:
                return records
            self._rewriting(True)
            seqs = sorted(edits)
            dependents: builtins.list[Record] = []
            for start in range(0, len(seqs), 500):
                part = seqs[start : start + 500]
                dependents += packing.decoded([_stored(r) for r in self._rows(
                    f"SELECT form, base, {_RECORD} FROM memdir_journal WHERE tenant_id = ? AND base IN "
                    f"({','.join('?' * len(part))})", *part)], self._by_seq)
            row = self._one("SELECT coalesce(max(seq), 0) FROM memdir_journal WHERE tenant_id = ?")
            by_seq = {d.seq: d for d in dependents}
            for seq, packed in packing.plan(edits, dependents, int(row[0] if row else 0)).items():
                if packed is None:
                    self._rows("DELETE FROM memdir_journal WHERE tenant_id = ? AND seq = ?", seq)
                    continue
                rec = edits.get(seq) or by_seq[seq]
                self._run(
                    "UPDATE memdir_journal SET time = ?, actor = ?, op = ?, path = ?, dest = ?, old_version = ?, "
                    "new_version = ?, old = ?, new = ?, undoes = ?, form = ?, base = ? WHERE tenant_id = ? AND seq = ?",
                    (rec.time, rec.actor, rec.op, rec.path, rec.dest, rec.old_version, rec.new_version, packed.old,
                     packed.new, rec.undoes, packed.form, packed.base, self.tenant, seq))
            self._rewriting(False)
            return records

    def _tables(self) -> builtins.list[str]:
        """Every table of the database with a `tenant_id` column, from the database's own catalog."""
        raise NotImplementedError

    def drop(self) -> None:
        """Delete the tenant's rows from every table that has a `tenant_id` column (the catalog lists them)."""
        with self.lock():
            self._rewriting(True)
            tables = sorted(self._tables(), key=lambda name: name == "memdir_state")  # the rewrite mark goes last
            for table in tables:
                self._rows(f'DELETE FROM "{table}" WHERE tenant_id = ?')
        self.close()

    # ------------------------------------------------------------ derived files

    def derive(self, files: Mapping[str, bytes | None], seq: int) -> None:
        """Write the index rows inside a savepoint: if that fails, the change it follows still commits."""
        with self.lock():
            self._run("SAVEPOINT memdir_derive")
            try:
                for path, data in files.items():
                    if data is None:
                        self._rows("DELETE FROM memdir_derived WHERE tenant_id = ? AND path = ?", path)
                    else:
                        self._rows(
                            "INSERT INTO memdir_derived(tenant_id, path, data) VALUES (?,?,?) "
                            "ON CONFLICT(tenant_id, path) DO UPDATE SET data = excluded.data",
                            path, data,
                        )
                self._rows(
                    "INSERT INTO memdir_state(tenant_id, key, value) VALUES (?, 'derived_seq', ?) "
                    "ON CONFLICT(tenant_id, key) DO UPDATE SET value = excluded.value",
                    str(seq),
                )
            except BaseException:
                self._run("ROLLBACK TO SAVEPOINT memdir_derive")
                self._run("RELEASE SAVEPOINT memdir_derive")
                raise
            self._run("RELEASE SAVEPOINT memdir_derive")

    def derived(self) -> int:
        row = self._one("SELECT value FROM memdir_state WHERE tenant_id = ? AND key = 'derived_seq'")
        return 0 if row is None else int(row[0])

    def recover(self) -> builtins.list[str]:
        """Nothing to repair: a change is one transaction, so a crash leaves it whole or absent."""
        return []

    def problems(self) -> builtins.list[str]:
        return []

    def resolve(self, path: str) -> str:
        return path  # rows have no links

    def take(self, rate: int) -> float:
        """The bucket is one row per tenant, updated in the tenant's write transaction (so writers queue on it)."""
        with self.lock():
            row = self._one("SELECT tokens, stamp FROM memdir_rate WHERE tenant_id = ?")
            state, wait = take_token(None if row is None else (float(row[0]), float(row[1])), rate, self._now())
            self._rows(
                "INSERT INTO memdir_rate(tenant_id, tokens, stamp) VALUES (?,?,?) "
                "ON CONFLICT(tenant_id) DO UPDATE SET tokens = excluded.tokens, stamp = excluded.stamp",
                *state,
            )
            return wait


# ---------------------------------------------------------------- migrations


class Migrator:
    """Applies named migrations in order, each in its own transaction, recording them by name."""

    def __init__(self, where: str, migrations: Sequence[Migration]) -> None:
        self.where = where
        self.migrations = migrations

    def run(self, sql: str, args: Sequence[object] = ()) -> builtins.list[tuple[Any, ...]]:
        raise NotImplementedError

    def has_table(self) -> bool:
        raise NotImplementedError

    def begin(self) -> None:
        """Start a transaction that excludes other migrators."""
        raise NotImplementedError

    def end(self, commit: bool) -> None:
        raise NotImplementedError

    def applied(self) -> builtins.list[str]:
        if not self.has_table():
            return []
        return [str(r[0]) for r in self.run("SELECT name FROM memdir_migrations ORDER BY name")]

    def pending(self) -> builtins.list[str]:
        done = set(self.applied())
        return [name for name, _ in self.migrations if name not in done]

    def migrate(self, check: bool = False) -> MigrationReport:
        before = self.applied()
        if check:
            return MigrationReport(self.where, (), tuple(self.pending()), tuple(before))
        applied = []
        for name, statements in self.migrations:
            self.begin()
            ok = False
            try:
                self.run("CREATE TABLE IF NOT EXISTS memdir_migrations(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
                if not self.run("SELECT 1 FROM memdir_migrations WHERE name = ?", (name,)):
                    for statement in statements:
                        self.run(statement)
                    self.run("INSERT INTO memdir_migrations(name, applied_at) VALUES (?, ?)", (name, _now()))
                    applied.append(name)
                ok = True
            finally:
                self.end(ok)
        return MigrationReport(self.where, tuple(applied), (), tuple(before))

    def require(self) -> None:
        """Raise StoreError unless every migration has been applied."""
        pending = self.pending()
        if pending:
            raise StoreError(
                f"{self.where} lacks memdir's schema (pending migrations: {', '.join(pending)}); "
                f"run `memdir db migrate {self.where}` as the database owner"
            )


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
