"""The filesystem store: topic files on disk, journal and catalog in SQLite.

A write is: new content into `.memdir/tmp/<seq>.md` (with its version fixed
by a forced mtime), then one SQLite transaction with the journal record and
the catalog entry (the commit point, fsynced once), then a rename into place.
A temp file that outlives its write is the mark of an interrupted change:
`recover` renames it into place when the journal has the record, and deletes
it when not. Derived files (MEMORY.md) are written without fsync; their
catalog seq is remembered, so a stale index is rebuilt on the next open.

A staged change that can never be moved into place (its folder is a file, a
link now leads elsewhere) is moved to `.memdir/quarantine/` with a note, so
one bad record never stops the memory from opening; `problems()` reports it.
Every `OSError` and SQLite error becomes a one-line `StoreError`.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import fcntl
import json
import logging
import os
import shutil
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import InvalidPath, MemdirError, NotFound, StoreError
from ..model import Entry
from ..paths import INTERNAL_DIR, TENANTS_DIR
from ..util import login_name
from . import packing, totals
from .base import Blob, Change, Record, check_change, prefix_sql, scrub_sqlite, take_token, use_wal
from .fsio import READ_FLAGS as _READ
from .fsio import boot_id as _boot_id
from .fsio import mkdirs as _mkdirs
from .fsio import open_private as _open_private
from .fsio import plain as _plain
from .fsio import quarantined as _quarantined
from .fsio import read_fd as _read
from .fsio import servable as _servable
from .fsio import storage_error
from .fsio import translated as _translated
from .fsio import version as _version
from .fsio import write_private as _write_private
from .totals import Totals

log = logging.getLogger(__name__)
SCHEMA_VERSION = 4  # 3: the catalog's listing columns and folder totals (`totals`); 4: packed journal records
_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal(
    seq INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    actor TEXT NOT NULL,
    op TEXT NOT NULL,
    path TEXT NOT NULL,
    dest TEXT,
    old_version TEXT,
    new_version TEXT,
    old BLOB,
    new BLOB,
    undoes INTEGER
);
CREATE INDEX IF NOT EXISTS journal_path ON journal(path, seq);
CREATE INDEX IF NOT EXISTS journal_dest ON journal(dest, seq) WHERE dest IS NOT NULL;
CREATE TABLE IF NOT EXISTS catalog(
    path TEXT PRIMARY KEY,
    entry TEXT,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS catalog_seq ON catalog(seq);
CREATE TABLE IF NOT EXISTS state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rate(id INTEGER PRIMARY KEY CHECK (id = 1), tokens REAL NOT NULL, stamp REAL NOT NULL);
"""
_COLUMNS = "seq, time, actor, op, path, dest, old_version, new_version, old, new, undoes"
# The journal is append-only, except inside a rewrite (forgetting, compaction), which marks itself in `state`.
_GUARD = "WHEN NOT EXISTS (SELECT 1 FROM state WHERE key = 'rewriting') BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END"
_PACKED_COLUMNS = ("form TEXT", "base INTEGER")  # how old and new are stored (`packing`), the record `old` refers to
_PACKED = [
    "CREATE INDEX IF NOT EXISTS journal_base ON journal(base) WHERE base IS NOT NULL",
    "DROP TRIGGER IF EXISTS journal_no_update",
    "DROP TRIGGER IF EXISTS journal_no_delete",
    f"CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal {_GUARD}",
    f"CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal {_GUARD}",
]
# Errors that will not go away by retrying: a staged change failing this way is quarantined.
_PERMANENT = {errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENOTEMPTY, errno.ENAMETOOLONG, errno.ELOOP, errno.EINVAL}
class FileStore:
    """A memory folder on the local filesystem (the embedded default)."""

    def __init__(self, root: str | os.PathLike[str], *, create: bool = True) -> None:
        self.root = Path(root).absolute()
        try:
            self._open(root, create)
        except (OSError, sqlite3.Error) as e:
            raise storage_error(self.root, "open the memory folder", e) from None

    def _open(self, root: str | os.PathLike[str], create: bool) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"{self.root} is a file, not a memory folder; pass --root a folder")
        if not self.root.is_dir():
            if not create:
                raise NotFound(f"no memory folder at {self.root}: run `memdir init {root}` or pass --root", path=str(root))
            _mkdirs(self.root)
        self.real = Path(os.path.realpath(self.root))
        self._root_text, self._real_text = str(self.root), str(self.real)
        self.key = f"file://{self.real}"
        self.internal = self.root / INTERNAL_DIR
        self.tmp = self.internal / "tmp"
        self.quarantine = self.internal / "quarantine"
        self._unapplied = False  # a committed change is still staged: move it into place at the next lock
        fresh = not (self.internal / "memdir.db").exists()
        _mkdirs(self.tmp)
        gitignore = self.internal / ".gitignore"
        if not gitignore.exists():
            _write_private(gitignore, b"# memdir's internal data: derived indexes, journal, temp files\n*\n")
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._lock_fd = _open_private(self.internal / "lock", os.O_RDWR | os.O_CREAT)
        if fresh:  # SQLite gives its -wal and -shm files the database file's mode
            os.close(_open_private(self.internal / "memdir.db", os.O_WRONLY | os.O_CREAT))
        self.db = sqlite3.connect(self.internal / "memdir.db", isolation_level=None, check_same_thread=False, timeout=30)
        use_wal(self.db)  # several processes may open a new folder at once
        self.db.execute("PRAGMA synchronous=FULL")
        self.totals = Totals(self.db)
        if self.db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            with self.lock():
                self._migrate()

    def _migrate(self) -> None:
        """Create the tables, or bring an older folder's up to this version (in one transaction)."""
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version >= SCHEMA_VERSION:
            return  # another process did it while this one waited for the lock
        self.db.executescript(_SCHEMA)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if version < 3:
                have = {row[1] for row in self.db.execute("PRAGMA table_info(catalog)")}
                for column in totals.COLUMNS:
                    if column.split()[0] not in have:
                        self.db.execute(f"ALTER TABLE catalog ADD COLUMN {column}")
                for statement in totals.SCHEMA.split(";"):
                    self.db.execute(statement)
                self.totals.rebuild()
            have = {row[1] for row in self.db.execute("PRAGMA table_info(journal)")}
            for column in _PACKED_COLUMNS:  # version 4
                if column.split()[0] not in have:
                    self.db.execute(f"ALTER TABLE journal ADD COLUMN {column}")
            for statement in _PACKED:
                self.db.execute(statement)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        (self.internal / "outline.db").unlink(missing_ok=True)  # what kept these rows before version 3

    # ------------------------------------------------------------ paths

    def _full(self, path: str) -> Path:
        """The on-disk path, refusing any symlink that leads out of the root or into a reserved place."""
        return Path(self._full_text(path))

    def _full_text(self, path: str) -> str:
        """`_full` as text (the read path avoids pathlib)."""
        self._resolve(path)
        return self._root_text + "/" + path

    def _resolve(self, path: str) -> str:
        """`path` with the symlinks inside the root followed (as a memory path); InvalidPath if one leads out."""
        here = self._root_text
        for part in path.split("/"):
            here = f"{here}/{part}"
            try:
                mode = os.lstat(here).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return path  # the rest does not exist yet: nothing to follow
            if stat.S_ISLNK(mode):
                break
        else:
            return path
        real = os.path.realpath(self._root_text + "/" + path)
        if real == self._real_text or not real.startswith(self._real_text + os.sep):
            raise InvalidPath(f"path {path!r} leads outside the memory root through a symlink; refusing it", path=path)
        rel = real[len(self._real_text) + 1 :]
        try:
            paths.folder(rel)
        except InvalidPath:
            raise InvalidPath(
                f"path {path!r} leads through a symlink to {rel!r}, which memdir does not serve; refusing it", path=path
            ) from None
        return rel

    def resolve(self, path: str) -> str:
        return self._resolve(path)

    # ------------------------------------------------------------ reading

    @_translated("read a file")
    def get(self, path: str) -> Blob | None:
        """The file and its version: the folders on the way checked for symlinks, the file opened without
        following one (a read is then an lstat per folder, open, fstat, read); any symlink takes `_get`."""
        self._finish()
        here = self._root_text
        parts = path.split("/")
        for part in parts[:-1]:
            here = f"{here}/{part}"
            try:
                if stat.S_ISLNK(os.lstat(here).st_mode):
                    return self._get(path)
            except (FileNotFoundError, NotADirectoryError):
                return None
        try:
            fd = os.open(f"{here}/{parts[-1]}", _READ | os.O_NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:  # the file itself is a symlink
                return self._get(path)
            raise
        return _read(fd, path)

    def _get(self, path: str) -> Blob | None:
        try:
            fd = os.open(self._full_text(path), _READ)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return _read(fd, path)

    def _stat_version(self, path: str) -> str | None:
        try:
            st = os.stat(self._full(path))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return _version(st)

    @_translated("list the files")
    def list(self, prefix: str = "") -> list[tuple[str, str]]:
        self._finish()
        out: builtins.list[tuple[str, str]] = []
        start = self.root / prefix if prefix else self.root
        plain = _plain()

        def walk(folder: Path, rel: str) -> None:
            try:
                items = list(os.scandir(folder))
            except (FileNotFoundError, NotADirectoryError):
                return
            for item in items:
                if item.name.startswith(".") or (not rel and item.name.casefold() == TENANTS_DIR):
                    continue  # internal data, and other tenants' memories
                if item.is_dir(follow_symlinks=False):
                    walk(Path(item.path), f"{rel}{item.name}/")
                elif item.name.endswith(".md") and item.is_file(follow_symlinks=False) and _servable(rel + item.name, plain):
                    out.append((rel + item.name, _version(item.stat(follow_symlinks=False))))

        walk(start, prefix)
        out.sort()
        return out

    # ------------------------------------------------------------ locking

    def _finish(self) -> None:
        """If a committed change is still staged (its move failed), taking the lock moves it into place."""
        if self._unapplied:
            with self.lock():
                pass

    @contextmanager
    def lock(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
                if self._unapplied:
                    self._unapplied = False
                    try:
                        for name in sorted(os.listdir(self.tmp)):
                            self._recover_staged(name)
                    except OSError as e:
                        log.warning("memdir: could not finish a committed change yet: %s", e)
                        self._unapplied = True
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    # ------------------------------------------------------------ writing

    def _check(self, change: Change) -> None:
        if change.record_only:
            return
        if change.data is not None:
            self._check_folders(change.target)
        dest_taken = change.dest is not None and self._stat_version(change.dest) is not None
        check_change(change, self._stat_version(change.path), dest_taken)

    def _check_folders(self, path: str) -> None:
        """Refuse a target whose folders are files, or which is itself a folder, before the commit point."""
        here = self._root_text
        parts = path.split("/")
        for i, part in enumerate(parts):
            here = f"{here}/{part}"
            try:
                st = os.stat(here)
            except (FileNotFoundError, NotADirectoryError):
                return
            last = i == len(parts) - 1
            if not last and not stat.S_ISDIR(st.st_mode):
                where = "/".join(parts[: i + 1])
                raise InvalidPath(f"path {path!r} puts a file under {where!r}, which is a file, not a folder; pick another path", path=path)
            if last and stat.S_ISDIR(st.st_mode):
                raise InvalidPath(f"path {path!r} is a folder, not a topic file; pick another name", path=path)

    def _prepare(self, seq: int, change: Change) -> str | None:
        """Stage the new content as tmp/<seq>.md (or a delete marker); return its version."""
        if change.record_only:
            return self._stat_version(change.target) if change.data is not None else None
        if change.data is None:
            _write_private(self.tmp / f"{seq}.del", b"")
            return None
        target = self._full(change.target)
        try:
            old_mtime = os.stat(target).st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            old_mtime = 0
        mtime = max(time.time_ns(), old_mtime + 1)
        fd = _open_private(self.tmp / f"{seq}.md")
        try:
            view = memoryview(change.data)
            while view:
                view = view[os.write(fd, view) :]
            os.utime(fd, ns=(mtime, mtime))
            return _version(os.fstat(fd))
        finally:
            os.close(fd)

    def _apply(self, seq: int, op_path: str, dest: str | None, has_data: bool) -> None:
        """Move staged content into place; idempotent, so recovery can repeat it."""
        if has_data:
            staged = self.tmp / f"{seq}.md"
            if not staged.exists():
                return
            if dest is not None:
                self._unlink(op_path)
            target = self._full(dest or op_path)
            _mkdirs(target.parent)
            os.replace(staged, target)
        else:
            marker = self.tmp / f"{seq}.del"
            if not marker.exists():
                return
            self._unlink(op_path)
            marker.unlink()

    def _unlink(self, path: str) -> None:
        full = self._full(path)
        try:
            full.unlink()
        except FileNotFoundError:
            return
        self._prune(full.parent)

    def _prune(self, folder: Path) -> None:
        """Remove folders left empty, up to the root."""
        while folder != self.root and self.root in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent

    @_translated("write the change")
    def commit(self, changes: Sequence[Change]) -> builtins.list[Record]:
        return self._commit(changes, {})

    @_translated("rewrite the journal")
    def rewrite(self, edits: Mapping[int, Record | None], changes: Sequence[Change] = ()) -> builtins.list[Record]:
        with self.lock():
            records = self._commit(changes, edits)
            for seq, rec in edits.items():  # a change the journal holds no more is not kept aside either
                if rec is None or rec.new is None:
                    for name in (f"{seq}.md", f"{seq}.json"):
                        (self.quarantine / name).unlink(missing_ok=True)
                elif (self.quarantine / f"{seq}.md").exists():
                    _write_private(self.quarantine / f"{seq}.md", rec.new)
            return records

    def _commit(self, changes: Sequence[Change], edits: Mapping[int, Record | None]) -> builtins.list[Record]:
        if not changes and not edits:
            return []
        with self.lock():
            for change in changes:
                self._check(change)
            first = (self.db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0]) + 1
            staged: builtins.list[tuple[int, Change, str | None]] = []
            try:
                for i, change in enumerate(changes):
                    staged.append((first + i, change, self._prepare(first + i, change)))
                records = self._record(staged, edits)  # the commit point
            except BaseException:
                for seq in range(first, first + len(changes)):
                    for suffix in (".md", ".del"):
                        (self.tmp / f"{seq}{suffix}").unlink(missing_ok=True)
                raise
            for seq, change, _ in staged:
                if not change.record_only:
                    try:
                        self._apply(seq, change.path, change.dest, change.data is not None)
                    except (OSError, MemdirError) as e:  # committed: the staged file finishes it later
                        log.warning("memdir: change #%d is journaled but not in place yet: %s", seq, e)
                        self._unapplied = True
            return records

    def _record(self, staged: builtins.list[tuple[int, Change, str | None]],
                edits: Mapping[int, Record | None] | None = None) -> builtins.list[Record]:
        records = []
        listed: builtins.list[tuple[str, Entry | None, int]] = []
        try:
            self.db.execute("BEGIN IMMEDIATE")
            for seq, change, version in staged:
                rec = Record(
                    seq=seq,
                    time=change.time,
                    actor=change.actor,
                    op=change.op,
                    path=change.path,
                    dest=change.dest,
                    old_version=change.expect,
                    new_version=version,
                    old=change.old,
                    new=change.data,
                    undoes=change.undoes,
                )
                writer = None if edits else self._writer(rec.path, rec.old_version)  # a rewrite's old may differ
                packed = packing.committed(rec.old, rec.new, writer)
                self.db.execute(
                    f"INSERT INTO journal({_COLUMNS}, form, base) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (seq, rec.time, rec.actor, rec.op, rec.path, rec.dest, rec.old_version,
                     rec.new_version, packed.old, packed.new, rec.undoes, packed.form, packed.base),
                )
                if change.dest is not None:
                    listed.append((change.path, None, seq))
                entry = None if change.entry is None else replace(change.entry, version=version or "")
                listed.append((change.target, entry, seq))
                records.append(rec)
            self.totals.apply(listed)
            if edits:
                self._edit(edits)
            self.db.execute("COMMIT")
        except sqlite3.Error as e:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise StoreError(f"could not record the change in {self.internal / 'memdir.db'}: {e}") from None
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        return records

    def _writer(self, path: str, version: str | None) -> tuple[int, str | None] | None:
        """(seq, form) of the record that wrote `path`'s content at `version`, if it is the latest to write there."""
        if version is None:
            return None
        rows = self.db.execute(
            "SELECT * FROM (SELECT seq, form, new_version FROM journal WHERE path = ? AND dest IS NULL "
            "ORDER BY seq DESC LIMIT 1) UNION ALL SELECT * FROM (SELECT seq, form, new_version FROM journal "
            "WHERE dest = ? ORDER BY seq DESC LIMIT 1)", (path, path)).fetchall()
        last = max(rows, default=None)
        return (last[0], last[1]) if last is not None and last[2] == version else None

    def _edit(self, edits: Mapping[int, Record | None]) -> None:
        """Replace or drop journal records (inside the commit's transaction), the ones referring to them repacked."""
        self.db.execute("INSERT OR REPLACE INTO state(key, value) VALUES ('rewriting', '1')")
        seqs = sorted(edits)
        dependents = []
        for start in range(0, len(seqs), 500):
            part = seqs[start : start + 500]
            dependents += self._decoded(self.db.execute(
                f"SELECT {_COLUMNS}, form, base FROM journal WHERE base IN ({','.join('?' * len(part))})", part).fetchall())
        newest = self.db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0]
        for seq, packed in packing.plan(edits, dependents, newest).items():
            if packed is None:
                self.db.execute("DELETE FROM journal WHERE seq = ?", (seq,))
                continue
            rec = edits.get(seq) or next(d for d in dependents if d.seq == seq)
            self.db.execute(
                "UPDATE journal SET time=?, actor=?, op=?, path=?, dest=?, old_version=?, new_version=?, old=?, new=?, "
                "undoes=?, form=?, base=? WHERE seq=?",
                (rec.time, rec.actor, rec.op, rec.path, rec.dest, rec.old_version, rec.new_version, packed.old,
                 packed.new, rec.undoes, packed.form, packed.base, seq))
        self.db.execute("DELETE FROM state WHERE key = 'rewriting'")

    @_translated("scrub the database")
    def scrub(self) -> builtins.list[str]:
        with self.lock():
            return scrub_sqlite(self.db, str(self.internal / "memdir.db"))

    @_translated("delete the memory")
    def drop(self) -> None:
        """Delete the folder's memory: everything in it but the other tenants (a top `tenants/`), then the folder
        if that leaves it empty."""
        self.close()
        for item in os.scandir(self.root):
            if item.name.casefold() == TENANTS_DIR and item.is_dir(follow_symlinks=False):
                continue
            if item.is_dir(follow_symlinks=False):
                shutil.rmtree(item.path)
            else:
                os.unlink(item.path)
        with contextlib.suppress(OSError):  # the folder, and a `tenants/` folder this leaves empty
            self.root.rmdir()
            if self.root.parent.name == TENANTS_DIR:
                self.root.parent.rmdir()

    # ------------------------------------------------------------ catalog and journal

    def owner(self, path: str) -> str | None:
        """The login name of the file's owner, for the journal of edits made by hand."""
        try:
            return login_name(os.stat(self._full(path)).st_uid)
        except (OSError, MemdirError):
            return None

    @_translated("refresh the catalog")
    def restat(self, versions: Mapping[str, str]) -> None:
        """Give catalog entries the versions their files have now, where only the stat moved (a copied folder):
        no journal record and no seq, since nothing changed; a process that loaded the old ones compares again."""
        with self.lock():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("UPDATE catalog SET entry = json_set(entry, '$.version', ?) WHERE path = ? AND "
                                    "entry IS NOT NULL", [(v, p) for p, v in versions.items()])
            finally:  # each new version holds alone: those set before an error are kept
                self.db.execute("COMMIT")

    @_translated("read the catalog")
    def changes(self, since: int) -> tuple[int, builtins.list[tuple[str, Entry | None]]]:
        rows = self.db.execute("SELECT path, entry, seq FROM catalog WHERE seq > ? ORDER BY seq", (since,)).fetchall()
        if not rows:
            return since, []
        decoded = json.loads("[" + ",".join("null" if e is None else e for _, e, _ in rows) + "]")  # one parse, not one per row
        out = [(p, None if d is None else Entry.from_dict(d)) for (p, _, _), d in zip(rows, decoded, strict=True)]
        return rows[-1][2], out

    @_translated("read the journal")
    def journal(
        self, path: str | None = None, *, limit: int | None = None, prefixes: Sequence[str] | None = None
    ) -> builtins.list[Record]:
        sql = f"SELECT {_COLUMNS}, form, base FROM journal"
        args: list[object] = []
        where: list[str] = []
        if prefixes is not None:
            cond, more = prefix_sql("path", prefixes)
            where.append(cond)
            args += more
        if path is not None:
            filtered = f"{sql} WHERE {' AND '.join(where)} AND" if where else f"{sql} WHERE"
            sql = f"SELECT * FROM ({filtered} path = ? UNION ALL {filtered} dest = ?)"
            args = [*args, path, *args, path]
        elif where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY seq DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._decoded(self.db.execute(sql, args).fetchall())

    def _decoded(self, rows: builtins.list[Any]) -> builtins.list[Record]:
        """Journal rows (`_COLUMNS`, form, base) as records, packed content decoded."""
        return packing.decoded([(Record(*row[:11]), row[11], row[12]) for row in rows], self._by_seq)

    def _by_seq(self, seqs: set[int]) -> dict[int, packing.Row]:
        marks = ",".join("?" * len(seqs))
        rows = self.db.execute(f"SELECT {_COLUMNS}, form, base FROM journal WHERE seq IN ({marks})", sorted(seqs))
        return {row[0]: (Record(*row[:11]), row[11], row[12]) for row in rows}

    # ------------------------------------------------------------ derived files

    @_translated("write MEMORY.md")
    def derive(self, files: Mapping[str, bytes | None], seq: int) -> None:
        with self.lock():
            for path, data in files.items():
                full = self._full(path)
                if data is None:
                    try:
                        full.unlink()
                    except FileNotFoundError:
                        pass
                    else:
                        self._prune(full.parent)
                    continue
                _mkdirs(full.parent)
                staged = self.tmp / f"derived-{os.getpid()}-{threading.get_ident()}"
                _write_private(staged, data)
                os.replace(staged, full)
            self._set_state("derived_seq", str(seq), durable=False)

    @_translated("read the index state")
    def derived(self) -> int:
        return int(self._state("derived_seq") or 0)

    @_translated("take a rate-limit token")
    def take(self, rate: int) -> float:
        """One token from the bucket. Not flushed to disk: a power loss may give back a token, and a
        write need not pay a second fsync for that (NORMAL, so a checkpoint it starts still flushes)."""
        with self.lock():
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("BEGIN IMMEDIATE")
            try:
                row = self.db.execute("SELECT tokens, stamp FROM rate WHERE id = 1").fetchone()
                state, wait = take_token(None if row is None else (row[0], row[1]), rate, time.time())
                self.db.execute("INSERT OR REPLACE INTO rate(id, tokens, stamp) VALUES (1, ?, ?)", state)
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
            finally:
                self.db.execute("PRAGMA synchronous=FULL")
            return wait

    def _state(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_state(self, key: str, value: str, *, durable: bool = True) -> None:
        if not durable:  # NORMAL, not OFF: a checkpoint this commit starts must still flush what it moves
            self.db.execute("PRAGMA synchronous=NORMAL")
        try:
            self.db.execute("INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)", (key, value))
        finally:
            if not durable:
                self.db.execute("PRAGMA synchronous=FULL")

    # ------------------------------------------------------------ recovery

    @_translated("recover interrupted writes")
    def recover(self) -> builtins.list[str]:
        """Repair interrupted writes, and after a reboot, writes a power loss undid."""
        boot = _boot_id()
        if not os.listdir(self.tmp) and (not boot or self._state("boot_id") == boot):
            return []
        notes: builtins.list[str] = []
        with self.lock():
            for name in sorted(os.listdir(self.tmp)):
                notes.extend(self._recover_staged(name))
            if boot and self._state("boot_id") != boot:
                notes.extend(self._verify_since(int(self._state("verified_seq") or 0)))
                # MEMORY.md files are written without a flush: after a power loss one may be empty, so rewrite them all.
                self._set_state("derived_seq", "0")
                top = self.db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0]
                self._set_state("verified_seq", str(top))
                self._set_state("boot_id", boot)
        return notes

    def _recover_staged(self, name: str) -> builtins.list[str]:
        staged = self.tmp / name
        stem, _, suffix = name.partition(".")
        if not stem.isdigit() or suffix not in ("md", "del"):
            staged.unlink(missing_ok=True)
            return [f"removed leftover temporary file .memdir/tmp/{name}"]
        seq = int(stem)
        found = self._decoded(self.db.execute(f"SELECT {_COLUMNS}, form, base FROM journal WHERE seq = ?", (seq,)).fetchall())
        row = (found[0].path, found[0].dest, found[0].new, found[0].new_version) if found else None
        if row is None:
            staged.unlink(missing_ok=True)
            return [f"rolled back an interrupted write that never reached the journal (.memdir/tmp/{name})"]
        if suffix == "md" and row[2] is not None and staged.read_bytes() != row[2]:
            _write_private(staged, row[2])  # torn by a power loss: the journal's copy is the durable one
        try:
            self._apply(seq, row[0], row[1], suffix == "md")
        except (OSError, MemdirError) as e:
            if isinstance(e, OSError) and e.errno not in _PERMANENT:
                return [f"could not complete change #{seq} to {row[1] or row[0]} yet ({e.strerror or e}); it is retried on the next open"]
            try:
                return [self._quarantine(name, seq, row[1] or row[0], e)]
            except OSError as again:  # not even that (a full disk): leave it staged for the next open
                return [f"could not quarantine change #{seq} to {row[1] or row[0]} yet ({again.strerror or again}); "
                        "it is retried on the next open"]
        return [f"completed interrupted change #{seq} to {row[1] or row[0]} from the journal"]

    def _quarantine(self, name: str, seq: int, path: str, e: BaseException) -> str:
        """Keep a staged change that can never be applied out of the way, with a note saying why."""
        why = e.message if isinstance(e, MemdirError) else (e.strerror if isinstance(e, OSError) and e.strerror else str(e))
        _mkdirs(self.quarantine)
        note = {"seq": seq, "path": path, "file": name, "why": why, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _write_private(self.quarantine / f"{seq}.json", (json.dumps(note, ensure_ascii=False) + "\n").encode())
        os.replace(self.tmp / name, self.quarantine / name)
        return _quarantined(note)

    @_translated("read the quarantine")
    def problems(self) -> builtins.list[str]:
        try:
            names = sorted(n for n in os.listdir(self.quarantine) if n.endswith(".json"))
        except FileNotFoundError:
            return []
        out = []
        for name in names:
            try:
                out.append(_quarantined(json.loads((self.quarantine / name).read_text())))
            except (ValueError, KeyError, TypeError):
                out.append(f"unreadable quarantine note .memdir/quarantine/{name}; look at it by hand")
        return out

    def _verify_since(self, seq: int) -> builtins.list[str]:
        """After a reboot: redo journaled changes whose effect did not reach the disk.

        A file is redone only when it is missing, empty or still holds the content
        the change replaced; anything else is an edit made since, and is kept.
        """
        notes = []
        found = self.db.execute(  # the newest change touching each path, as its source or its target
            "SELECT t.p, j.seq, j.time, j.actor, j.op, j.path, j.dest, j.old_version, j.new_version, j.old, j.new, "
            "j.undoes, j.form, j.base FROM journal j JOIN "
            "(SELECT p, max(s) AS s FROM (SELECT path AS p, seq AS s FROM journal WHERE seq > ? "
            "UNION ALL SELECT dest, seq FROM journal WHERE seq > ? AND dest IS NOT NULL) GROUP BY p) t ON j.seq = t.s",
            (seq, seq),
        ).fetchall()
        records = self._decoded([row[1:] for row in found])
        rows = [(row[0], r.seq, r.path, r.dest, r.old, r.new) for row, r in zip(found, records, strict=True)]
        for p, seq_, path, dest, old, new in rows:
            if dest is not None and p == path:
                continue  # renamed away: never bring the old name back (the new name's row restores it)
            try:
                notes.extend(self._redo(seq_, path, dest, old, new))
            except (OSError, MemdirError) as e:
                notes.append(f"could not check journal change #{seq_} to {dest or path} after the reboot: {e}")
        return notes

    def _redo(self, seq_: int, path: str, dest: str | None, old: bytes | None, new: bytes | None) -> builtins.list[str]:
        target = dest or path
        blob = self.get(target)
        current = None if blob is None else blob.data
        if current == new:
            return []
        if new is None:
            if current is not None and current == old:
                self._unlink(target)
                return [f"deleted {target} again: journal change #{seq_} was lost in a crash"]
            return []
        if not (current is None or current == b"" or current == old):
            return []  # an edit made since: keep it
        full = self._full(target)
        _mkdirs(full.parent)
        staged = self.tmp / f"{seq_}.md"
        _write_private(staged, new)
        with open(staged, "rb") as f:
            os.fsync(f.fileno())
        os.replace(staged, full)
        if dest is not None:
            self._unlink(path)
        return [f"restored {target} from journal change #{seq_} (lost in a crash)"]

    def close(self) -> None:
        """Close the database and the lock file; a second call does nothing (the fd number may be reused by then)."""
        if self._lock_fd < 0:
            return
        fd, self._lock_fd = self._lock_fd, -1
        try:
            self.db.close()
        finally:
            os.close(fd)
