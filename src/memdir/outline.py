"""The catalog's outline on disk, so a new process reads only the folders it touches.

A process that has not loaded the catalog (a CLI command, a hook) checks and
renders what a write changes from this outline: per-folder running totals
(the catalog's), each folder's largest subfolders and its newest files, read
a few hundred rows at a time whatever the size or shape of the memory. It is
derived data like the index files and the search index: stamped with the
catalog seq it reflects and the journal record it saw last, caught up from
`Store.changes(seq)` (only the paths that changed), rebuilt from scratch when
it is unreadable, of another format, or does not match the store's journal.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .catalog import Catalog, Folder
from .model import Entry
from .paths import ancestors, parent
from .stores.base import Store

log = logging.getLogger(__name__)

FORMAT = 1  # bump when a column or the index line's size rule changes: the outline is rebuilt
ARCHIVE = "archive/"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entry(
    path TEXT PRIMARY KEY, folder TEXT NOT NULL, key TEXT NOT NULL, recent TEXT NOT NULL, bytes INTEGER NOT NULL,
    label TEXT NOT NULL, tail TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, type TEXT,
    tags TEXT NOT NULL, created TEXT, updated TEXT, size INTEGER NOT NULL, lines INTEGER NOT NULL, version TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS entry_recent ON entry(folder, recent, path);
CREATE INDEX IF NOT EXISTS entry_key ON entry(folder, key);
CREATE TABLE IF NOT EXISTS folder(
    path TEXT PRIMARY KEY, parent TEXT, key TEXT NOT NULL, count INTEGER NOT NULL, bytes INTEGER NOT NULL,
    types TEXT NOT NULL, direct_types TEXT NOT NULL, direct_bytes INTEGER NOT NULL,
    files INTEGER NOT NULL, subs INTEGER NOT NULL, newest TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS folder_rank ON folder(parent, count DESC, path);
CREATE INDEX IF NOT EXISTS folder_key ON folder(parent, key);
"""
_FOLDER = "path, count, bytes, types, direct_types, direct_bytes, files, subs, newest"
_ENTRY = "bytes, label, tail, path, name, description, type, tags, created, updated, size, lines, version"


def location(store: Store) -> Path | None:
    """Where a store's outline lives: beside the folder store's journal. Elsewhere None: the
    catalog is loaded whole (those stores pay a round trip per query anyway)."""
    if type(store).__name__ == "FileStore":  # by name: importing the other stores costs a new process time
        internal: Path = store.internal  # type: ignore[attr-defined]
        return internal / "outline.db"
    return None


def _kinds(counts: Counter[str | None]) -> str:
    return json.dumps({"" if k is None else k: n for k, n in counts.items() if n})


def _counter(text: str) -> Counter[str | None]:
    return Counter({(k or None): n for k, n in json.loads(text).items()})


def _name(path: str, folder: str) -> str:
    """The last component of a path or folder, case-folded (what a case clash compares)."""
    return path[len(folder):].rstrip("/").casefold()


class _Node:
    """A folder row being changed."""

    __slots__ = ("count", "bytes", "types", "direct_types", "direct_bytes", "files", "subs", "newest", "dirty")

    def __init__(self, row: tuple[Any, ...] | None) -> None:
        if row is None:
            self.count = self.bytes = self.direct_bytes = self.files = self.subs = 0
            self.types: Counter[str | None] = Counter()
            self.direct_types: Counter[str | None] = Counter()
            self.newest = ""
        else:
            _, self.count, self.bytes, types, direct, self.direct_bytes, self.files, self.subs, self.newest = row
            self.types, self.direct_types = _counter(types), _counter(direct)
        self.dirty = False  # `newest` may be too high: the file that held it left


class Outline:
    """One memory's outline in a SQLite file of its own."""

    def __init__(self, db: sqlite3.Connection, label: Callable[[Entry], tuple[str, str]], path: Path) -> None:
        self.db = db
        self.path = path
        self.label = label
        self._verified = False
        self.seen: dict[str, tuple[tuple[Any, ...], Folder]] = {}  # folder -> its row and node as a Partial last read them

    @classmethod
    def open(cls, path: Path, label: Callable[[Entry], tuple[str, str]]) -> Outline | None:
        """The outline at `path` (made if missing, remade if unreadable); None where no file can be written."""
        for attempt in (1, 2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
                try:
                    os.fchmod(fd, 0o600)  # private whatever the umask, as the journal (its -wal and -shm follow)
                finally:
                    os.close(fd)
                db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            except (OSError, sqlite3.Error):
                return None
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # no flush per change; a power loss loses changes, never the file
                if db.execute("PRAGMA user_version").fetchone()[0] != FORMAT:  # new, or of another format
                    db.execute("BEGIN IMMEDIATE")
                    for table in ("meta", "entry", "folder"):
                        db.execute(f"DROP TABLE IF EXISTS {table}")
                    for statement in _SCHEMA.split(";"):
                        db.execute(statement)
                    db.execute(f"PRAGMA user_version={FORMAT}")
                    db.execute("COMMIT")
                return cls(db, label, path)
            except sqlite3.DatabaseError as e:
                db.close()
                if attempt == 2 or isinstance(e, sqlite3.OperationalError):
                    return None
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
        return None

    def close(self) -> None:
        self.db.close()

    def discard(self) -> None:
        """Close and delete the outline (it failed): the next process builds a new one."""
        self.db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    # ------------------------------------------------------------ upkeep

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def seq(self) -> int:
        return int(self._meta("seq") or 0)

    def size(self) -> int:
        """The files the outline lists (as of its seq)."""
        row = self.db.execute("SELECT count FROM folder WHERE path = ''").fetchone()
        return 0 if row is None else int(row[0])

    def catch_up(self, store: Store) -> tuple[int, builtins.set[str]]:
        """Bring the outline to the store's latest change (hold the store's lock); returns that seq
        and the paths changed since the outline last matched it."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if not self._verified:
                self._check(store)
                self._verified = True
            since = self.seq()
            seq, changes = store.changes(since)
            if changes:
                self._apply(changes)
                newest = store.journal(limit=1)
                mark = json.dumps([newest[0].seq, newest[0].time, newest[0].path]) if newest else "[]"
                self.db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                    [("seq", str(seq)), ("mark", mark)])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return seq, {p for p, _ in changes}

    def _check(self, store: Store) -> None:
        """Empty the outline unless the last journal record it saw is in the store's journal."""
        seq = self.seq()
        if not seq:
            return
        ok = False
        try:
            at, time, path = json.loads(self._meta("mark") or "[]")
        except ValueError:
            at = time = path = None
        if at == seq and isinstance(path, str):
            # Records carry their texts: ask for one (the mark is nearly always its path's newest), then for more.
            found = [r for r in store.journal(path, limit=1) if r.seq == seq]
            found = found or [r for r in store.journal(path, limit=64) if r.seq == seq]
            ok = bool(found) and found[0].time == time and found[0].path == path
        if not ok:
            for table in ("meta", "entry", "folder"):
                self.db.execute(f"DELETE FROM {table}")

    def _apply(self, changes: list[tuple[str, Entry | None]]) -> None:
        """Move entries and every total on their paths (each path once: its latest entry or None)."""
        paths = [p for p, _ in changes]
        old: dict[str, tuple[str, str, str | None, int]] = {}
        for part in _chunks(paths):
            marks = ",".join("?" * len(part))
            for row in self.db.execute(f"SELECT path, folder, recent, type, bytes FROM entry WHERE path IN ({marks})", part):
                old[row[0]] = row[1:]
        touched = sorted({f for p in paths for f in ancestors(p)})
        nodes: dict[str, _Node] = {}
        for part in _chunks(touched):
            marks = ",".join("?" * len(part))
            for row in self.db.execute(f"SELECT {_FOLDER} FROM folder WHERE path IN ({marks})", part):
                nodes[row[0]] = _Node(row)
        for f in touched:
            nodes.setdefault(f, _Node(None))
        gone: builtins.list[str] = []
        rows: builtins.list[tuple[object, ...]] = []
        for path, entry in changes:
            was = old.get(path)
            if was is not None:
                folder, recent, kind, size = was
                self._move(nodes, path, recent, kind, size, -1)
                if entry is None:
                    gone.append(path)
            if entry is not None:
                name, tail = self.label(entry)
                size = len(name.encode()) + len(tail.encode()) + len(path.encode()) + 9  # as Catalog.put
                recent = entry.updated or ""
                self._move(nodes, path, recent, entry.type, size, 1)
                rows.append((path, parent(path), _name(path, parent(path)), recent, size, name, tail, entry.name,
                             entry.description, entry.type, json.dumps(entry.tags, ensure_ascii=False), entry.created, entry.updated,
                             entry.size, entry.lines, entry.version))
        self.db.executemany("DELETE FROM entry WHERE path = ?", [(p,) for p in gone])
        self.db.executemany("INSERT OR REPLACE INTO entry VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        self.db.executemany("DELETE FROM folder WHERE path = ?", [(f,) for f, n in nodes.items() if f and not n.count])
        self.db.executemany(
            "INSERT OR REPLACE INTO folder VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(f, parent(f[:-1]) if f else None, _name(f, parent(f[:-1])) if f else "", n.count, n.bytes,
              _kinds(n.types), _kinds(n.direct_types), n.direct_bytes, n.files, n.subs, n.newest)
             for f, n in nodes.items() if n.count or not f],
        )
        for f in sorted((f for f, n in nodes.items() if n.dirty and n.count), key=len, reverse=True):
            direct = self.db.execute("SELECT max(recent) FROM entry WHERE folder = ?", (f,)).fetchone()[0]
            below = self.db.execute("SELECT max(newest) FROM folder WHERE parent = ?", (f,)).fetchone()[0]
            self.db.execute("UPDATE folder SET newest = ? WHERE path = ?", (max(direct or "", below or ""), f))

    @staticmethod
    def _move(nodes: dict[str, _Node], path: str, recent: str, kind: str | None, size: int, sign: int) -> None:
        """Add (sign 1) or take away (-1) one file's share of the totals of every folder above it."""
        chain = ancestors(path)
        for i, f in enumerate(chain):
            node = nodes[f]
            before = node.count
            node.count += sign
            if f and (before == 0) != (node.count == 0):
                nodes[chain[i - 1]].subs += sign  # a folder appears or goes
            node.bytes += sign * size
            node.types[kind] += sign
            if sign > 0 and recent >= node.newest:
                node.newest, node.dirty = recent, False
            elif sign < 0 and recent == node.newest:
                node.dirty = True
        home = nodes[chain[-1]]
        home.direct_types[kind] += sign
        home.direct_bytes += sign * size
        home.files += sign

    # ------------------------------------------------------------ reading

    def catalog(self, seq: int, rows: int) -> Partial:
        """The catalog at `seq` (the seq `catch_up` returned), reading at most `rows` files and subfolders per folder."""
        return Partial(self, seq, rows)


def _chunks(items: builtins.list[str], size: int = 500) -> Iterator[builtins.list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Partial(Catalog):
    """The catalog as far as rendering and checking a few folders needs it, read from the outline.

    A folder is read when first rendered (`prepare`): its totals and its largest
    subfolders, at most `rows`; its newest files (as many) when a render lists
    them (`recent`), and one file when asked for it (`get`). Its `files` and
    `subs` are the full counts. Read-only: a change goes to the store, the
    outline catches up, and the next write reads a new `Partial`.
    """

    def __init__(self, outline: Outline, seq: int, rows: int) -> None:
        super().__init__(outline.label)
        self.outline = outline
        self.seq = seq
        self.rows = rows
        self.folders = {}
        self._prepared: set[str] = set()
        self._recent: set[str] = set()  # folders whose newest files were read
        self._node("")

    def _folder(self, row: tuple[Any, ...]) -> Folder:
        path, count, size, types, direct, direct_bytes, files, subs, newest = row
        node = self.folders.get(path)
        if node is None:
            seen = self.outline.seen.get(path)
            if seen is not None and seen[0] == row:
                # Unchanged since a Partial before read it: its node, with the types parsed and the link line
                # made (what `prepare` reads besides the row, it reads again).
                node = self.folders[path] = seen[1]
                return node
            node = self.folders[path] = Folder(path)
            node.count, node.bytes, node.direct_bytes, node.files, node.subs, node.newest = (
                count, size, direct_bytes, files, subs, newest)
            node.types, node.direct_types = _counter(types), _counter(direct)
            self.outline.seen[path] = (row, node)
        return node

    def _node(self, folder: str) -> Folder | None:
        node = self.folders.get(folder)
        if node is None:
            row = self.outline.db.execute(f"SELECT {_FOLDER} FROM folder WHERE path = ?", (folder,)).fetchone()
            node = None if row is None else self._folder(row)
        return node

    def _entries(self, sql: str, *args: object) -> builtins.list[Entry]:
        out = []
        for size, label, tail, *fields in self.outline.db.execute(sql, args):
            path = fields[0]
            entry = self.entries.get(path)
            if entry is None:
                fields[4] = tuple(json.loads(fields[4])) if fields[4] != "[]" else ()
                entry = self.entries[path] = Entry(*fields)
                self.labels[path] = (label, tail)
                self._bytes[path] = size
            out.append(entry)
        return out

    def prepare(self, folder: str) -> None:
        if folder in self._prepared:
            return
        self._prepared.add(folder)
        node = self._node(folder)
        if node is None:
            return
        db, rows = self.outline.db, self.rows
        kids = [self._folder(r) for r in db.execute(
            f"SELECT {_FOLDER} FROM folder WHERE parent = ? ORDER BY count DESC, path LIMIT ?", (folder, rows))]
        node.ranked = [(-k.count, k.path) for k in kids]  # the order of Catalog's ranking: count down, then path
        node.subfolders = {k.path for k in kids}
        if not folder and self._node(ARCHIVE) is not None:
            node.subfolders.add(ARCHIVE)  # the top index always links it, however small

    def recent(self, node: Folder) -> builtins.list[tuple[str, str]]:
        if node.path not in self._recent:
            self._recent.add(node.path)
            newest = self._entries(f"SELECT {_ENTRY} FROM entry WHERE folder = ? ORDER BY recent DESC, path DESC LIMIT ?",
                                   node.path, self.rows)
            node.recent = [(e.updated or "", e.path) for e in reversed(newest)]
        return node.recent

    def get(self, path: str) -> Entry | None:
        found = self.entries.get(path)
        if found is None:
            got = self._entries(f"SELECT {_ENTRY} FROM entry WHERE path = ?", path)
            found = got[0] if got else None
        return found

    def walk(self, folder: str = "") -> Iterator[Entry]:
        if not folder:
            yield from self._entries(f"SELECT {_ENTRY} FROM entry")
        else:
            yield from self._entries(f"SELECT {_ENTRY} FROM entry WHERE path >= ? AND path < ?", folder, folder[:-1] + "0")

    def is_file(self, path: str) -> bool:
        return path in self.entries or bool(
            self.outline.db.execute("SELECT 1 FROM entry WHERE path = ?", (path,)).fetchone())

    def is_folder(self, folder: str) -> bool:
        return self._node(folder) is not None

    def clash(self, folder: str, name: str) -> str | None:
        db, key = self.outline.db, name.casefold()
        row = db.execute("SELECT path FROM folder WHERE parent = ? AND key = ?", (folder, key)).fetchone()
        if row is not None:
            return str(row[0])[len(folder):-1]
        row = db.execute("SELECT path FROM entry WHERE folder = ? AND key = ?", (folder, key)).fetchone()
        return None if row is None else str(row[0])[len(folder):]

    def load(self, entries: Iterable[Entry]) -> None:
        raise TypeError("a Partial catalog is read from its outline")

    def put(self, entry: Entry) -> None:
        raise TypeError("a Partial catalog is read-only: commit to the store and read a new one")

    def remove(self, path: str) -> None:
        raise TypeError("a Partial catalog is read-only: commit to the store and read a new one")
