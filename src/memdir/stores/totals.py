"""Per-folder totals kept beside the catalog rows, in the commit's own transaction.

A process that has not loaded the catalog (a CLI command, a hook) checks and
renders what a write changes from these rows: each folder's running totals
(entries, index-line bytes and types, for the folder and for its own files),
its largest subfolders and its newest files, read a few rows at a time
whatever the size or shape of the memory. Being written with the journal
record, they can never lag behind the store.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import paths
from ..model import Entry, line_bytes
from ..paths import ancestors, parent

SCHEMA = """
CREATE TABLE IF NOT EXISTS folder(
    path TEXT PRIMARY KEY, parent TEXT, key TEXT NOT NULL, count INTEGER NOT NULL, bytes INTEGER NOT NULL,
    types TEXT NOT NULL, direct_types TEXT NOT NULL, direct_bytes INTEGER NOT NULL,
    files INTEGER NOT NULL, subs INTEGER NOT NULL, newest TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS folder_rank ON folder(parent, count DESC, path);
CREATE INDEX IF NOT EXISTS folder_key ON folder(parent, key);
CREATE INDEX IF NOT EXISTS catalog_recent ON catalog(folder, recent, path) WHERE folder IS NOT NULL;
CREATE INDEX IF NOT EXISTS catalog_key ON catalog(folder, key) WHERE folder IS NOT NULL;
"""
COLUMNS = ("folder TEXT", "key TEXT", "recent TEXT", "bytes INTEGER", "type TEXT")  # added to the catalog table
_FOLDER = "path, count, bytes, types, direct_types, direct_bytes, files, subs, newest"


@dataclass
class FolderTotals:
    """One folder's row: counts below it and of its own files."""

    path: str
    count: int = 0
    bytes: int = 0
    types: Counter[str | None] = field(default_factory=Counter)
    direct_types: Counter[str | None] = field(default_factory=Counter)
    direct_bytes: int = 0
    files: int = 0
    subs: int = 0
    newest: str = ""
    stale: bool = False  # `newest` may be too high: the file that held it left

    @classmethod
    def of(cls, row: tuple[Any, ...]) -> FolderTotals:
        path, count, size, types, direct, direct_bytes, files, subs, newest = row
        return cls(path, count, size, _counter(types), _counter(direct), direct_bytes, files, subs, newest)


def _kinds(counts: Counter[str | None]) -> str:
    return json.dumps({"" if k is None else k: n for k, n in counts.items() if n})


def _counter(text: str) -> Counter[str | None]:
    return Counter({(k or None): n for k, n in json.loads(text).items()})


def _key(path: str, folder: str) -> str:
    """The last component of a path or folder, case-folded (what a case clash compares)."""
    return paths.fold(path[len(folder):].rstrip("/"))


def _chunks(items: builtins.list[str], size: int = 500) -> Iterable[builtins.list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Totals:
    """The folder rows of one SQLite database whose `catalog(path, entry, seq)` table has the `COLUMNS` too."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def apply(self, changes: Iterable[tuple[str, Entry | None, int]]) -> None:
        """Write the catalog rows of the changed paths, (path, entry or None for a path removed, seq), and move
        every total on their way (inside the caller's transaction: the commit's own)."""
        latest = {path: (entry, seq) for path, entry, seq in changes}
        paths = list(latest)
        old: dict[str, tuple[str | None, str, int]] = {}
        for part in _chunks(paths):
            marks = ",".join("?" * len(part))
            for path, recent, kind, size in self.db.execute(
                    f"SELECT path, recent, type, bytes FROM catalog WHERE folder IS NOT NULL AND path IN ({marks})", part):
                old[path] = (kind, recent, size)
        self.db.executemany(
            "INSERT INTO catalog(path, entry, seq, folder, key, recent, bytes, type) VALUES (?,?,?,?,?,?,?,?) "
            "ON CONFLICT(path) DO UPDATE SET entry=excluded.entry, seq=excluded.seq, folder=excluded.folder, "
            "key=excluded.key, recent=excluded.recent, bytes=excluded.bytes, type=excluded.type",
            [(path, None if entry is None else json.dumps(entry.to_dict(), ensure_ascii=False), seq, *_columns(entry))
             for path, (entry, seq) in latest.items()])
        touched = sorted({f for p in paths for f in ancestors(p)})
        nodes: dict[str, FolderTotals] = {}
        for part in _chunks(touched):
            marks = ",".join("?" * len(part))
            for row in self.db.execute(f"SELECT {_FOLDER} FROM folder WHERE path IN ({marks})", part):
                nodes[row[0]] = FolderTotals.of(row)
        for f in touched:
            nodes.setdefault(f, FolderTotals(f))
        for path, (entry, _) in latest.items():
            if path in old:
                kind, recent, size = old[path]
                _move(nodes, path, kind, recent, size, -1)
            if entry is not None:
                _move(nodes, path, entry.type, entry.updated or "", line_bytes(entry), 1)
        self.db.executemany("DELETE FROM folder WHERE path = ?", [(f,) for f, n in nodes.items() if f and not n.count])
        self.db.executemany(
            "INSERT OR REPLACE INTO folder VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(f, parent(f[:-1]) if f else None, _key(f, parent(f[:-1])) if f else "", n.count, n.bytes,
              _kinds(n.types), _kinds(n.direct_types), n.direct_bytes, n.files, n.subs, n.newest)
             for f, n in nodes.items() if n.count or not f],
        )
        for f in sorted((f for f, n in nodes.items() if n.stale and n.count), key=len, reverse=True):
            direct = self.db.execute("SELECT max(recent) FROM catalog WHERE folder = ?", (f,)).fetchone()[0]
            below = self.db.execute("SELECT max(newest) FROM folder WHERE parent = ?", (f,)).fetchone()[0]
            self.db.execute("UPDATE folder SET newest = ? WHERE path = ?", (max(direct or "", below or ""), f))

    def rebuild(self) -> None:
        """Fill the folder rows and listing columns from the catalog's entries (a store made before they existed)."""
        self.db.execute("DELETE FROM folder")
        self.db.execute("UPDATE catalog SET folder = NULL, key = NULL, recent = NULL, bytes = NULL, type = NULL")
        rows = self.db.execute("SELECT path, entry, seq FROM catalog WHERE entry IS NOT NULL").fetchall()
        self.apply((path, Entry.from_dict(json.loads(text)), seq) for path, text, seq in rows)

    # ------------------------------------------------------------ reading

    def folder(self, path: str) -> FolderTotals | None:
        row = self.db.execute(f"SELECT {_FOLDER} FROM folder WHERE path = ?", (path,)).fetchone()
        return None if row is None else FolderTotals.of(row)

    def largest(self, path: str, limit: int) -> builtins.list[FolderTotals]:
        """The folder's largest subfolders, largest first (ties by path)."""
        return [FolderTotals.of(r) for r in self.db.execute(
            f"SELECT {_FOLDER} FROM folder WHERE parent = ? ORDER BY count DESC, path LIMIT ?", (path, limit))]

    def newest(self, folder: str, limit: int) -> builtins.list[Entry]:
        """The folder's own files, newest first (ties by path, the last first)."""
        return self._entries("SELECT entry FROM catalog WHERE folder = ? ORDER BY recent DESC, path DESC LIMIT ?",
                             folder, limit)

    def entry(self, path: str) -> Entry | None:
        found = self._entries("SELECT entry FROM catalog WHERE path = ? AND entry IS NOT NULL", path)
        return found[0] if found else None

    def under(self, folder: str) -> builtins.list[Entry]:
        if not folder:
            return self._entries("SELECT entry FROM catalog WHERE entry IS NOT NULL")
        return self._entries("SELECT entry FROM catalog WHERE path >= ? AND path < ? AND entry IS NOT NULL",
                             folder, folder[:-1] + "0")

    def clash(self, folder: str, name: str) -> str | None:
        """A file or subfolder name in `folder` equal to `name` but for case (or `name` itself), if there is one."""
        key = paths.fold(name)
        row = self.db.execute("SELECT path FROM folder WHERE parent = ? AND key = ? AND path != ?",
                              (folder, key, f"{folder}{name}/")).fetchone()
        if row is not None:
            return str(row[0])[len(folder):-1]
        row = self.db.execute("SELECT path FROM catalog WHERE folder = ? AND key = ? AND path != ?",
                              (folder, key, folder + name)).fetchone()
        return None if row is None else str(row[0])[len(folder):]

    def _entries(self, sql: str, *args: object) -> builtins.list[Entry]:
        rows = self.db.execute(sql, args).fetchall()
        return [Entry.from_dict(d) for d in json.loads("[" + ",".join(r[0] for r in rows) + "]")] if rows else []


def _columns(entry: Entry | None) -> tuple[str | None, str | None, str | None, int | None, str | None]:
    """The catalog row's listing columns for `entry` (all None for a removed path)."""
    if entry is None:
        return None, None, None, None, None
    home = parent(entry.path)
    return home, _key(entry.path, home), entry.updated or "", line_bytes(entry), entry.type


def _move(nodes: dict[str, FolderTotals], path: str, kind: str | None, recent: str, size: int, sign: int) -> None:
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
            node.newest, node.stale = recent, False
        elif sign < 0 and recent == node.newest:
            node.stale = True
    home = nodes[chain[-1]]
    home.direct_types[kind] += sign
    home.direct_bytes += sign * size
    home.files += sign
