"""The in-memory catalog: every topic file's entry, plus per-folder totals.

The totals (entries, index-line bytes and types per folder, counted
recursively, and the same for the folder's own files) and each folder's
subfolders ranked by size are kept up to date on every change, so deciding
what fits in an index never walks all the files or all the folders.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from .. import paths
from ..model import Entry, label
from ..paths import ancestors, parent
from ..stores.totals import FolderTotals, Totals

ARCHIVE = "archive/"


class Folder:
    __slots__ = ("path", "count", "bytes", "types", "direct_types", "direct_bytes", "recent", "subfolders",
                 "ranked", "newest", "link", "files", "subs")

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0  # entries in this folder and below
        self.bytes = 0  # bytes of their index lines (as seen from the root)
        self.types: Counter[str | None] = Counter()
        self.direct_types: Counter[str | None] = Counter()
        self.direct_bytes = 0  # bytes of the index lines of this folder's own files
        self.recent: list[tuple[str, str]] = []  # (updated, path) of direct files, oldest first
        self.subfolders: set[str] = set()
        self.ranked: list[tuple[int, str]] = []  # (-count, path) of the subfolders, largest first
        self.newest: str | None = None  # latest `updated` below; None until computed
        self.link: str | None = None  # its line in the parent's index when collapsed; None until rendered
        self.files = 0  # its own files (`recent` may hold only the newest of them: see `Partial`)
        self.subs = 0  # its subfolders (`ranked` may hold only the largest)


class Catalog:
    def __init__(self, label: Callable[[Entry], tuple[str, str]] = label) -> None:
        self.entries: dict[str, Entry] = {}
        self.folders: dict[str, Folder] = {"": Folder("")}
        self.seq = 0
        self._label = label
        self.labels: dict[str, tuple[str, str]] = {}  # path -> (link text, " — description")
        self._bytes: dict[str, int] = {}
        self._folded: dict[str, set[str]] = {}  # folder + NUL + case-folded name -> the file and folder names there

    def _name(self, folder: str, name: str, add: bool) -> None:
        key = f"{folder}\0{paths.fold(name)}"
        if add:
            self._folded.setdefault(key, set()).add(name)
            return
        names = self._folded.get(key)
        if names is not None:
            names.discard(name)
            if not names:
                del self._folded[key]

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, path: str) -> Entry | None:
        return self.entries.get(path)

    def _recount(self, node: Folder, delta: int) -> None:
        """Change a folder's count and keep its place in its parent's ranking."""
        if node.path:
            ranked = self.folders[parent(node.path[:-1])].ranked
            if node.count:
                del ranked[bisect.bisect_left(ranked, (-node.count, node.path))]
            if node.count + delta:
                bisect.insort(ranked, (-node.count - delta, node.path))
        node.count += delta

    def put(self, entry: Entry) -> None:
        if entry.path in self.entries:
            self.remove(entry.path)
        path = entry.path
        label = self.labels[path] = self._label(entry)
        size = len(label[0].encode()) + len(label[1].encode()) + len(path.encode()) + 9  # "- [](<>)\n"
        self.entries[path] = entry
        self._bytes[path] = size
        chain = ancestors(path)
        for i, name in enumerate(chain):
            node = self.folders.get(name)
            if node is None:
                node = self.folders[name] = Folder(name)
                above = self.folders[chain[i - 1]]
                above.subfolders.add(name)
                above.subs += 1
                self._name(above.path, name[len(above.path):-1], True)
            self._recount(node, 1)
            node.bytes += size
            node.types[entry.type] += 1
            node.newest = node.link = None
        home = self.folders[chain[-1]]
        home.direct_types[entry.type] += 1
        home.direct_bytes += size
        home.files += 1
        self._name(home.path, path[len(home.path):], True)
        bisect.insort(home.recent, (entry.updated or "", path))

    def load(self, entries: Iterable[Entry]) -> None:
        """Fill an empty catalog (a new process loading it): `put`'s totals, sorted once at the end.

        A path given more than once keeps its last entry."""
        assert not self.entries, "load fills an empty catalog; use put for changes"
        folders, label = self.folders, self._label
        chains: dict[str, list[Folder]] = {}  # folder -> its Folder and those above it, root first
        for entry in {e.path: e for e in entries}.values():
            path = entry.path
            name, tail = self.labels[path] = label(entry)
            size = self._bytes[path] = len(name.encode()) + len(tail.encode()) + len(path.encode()) + 9
            self.entries[path] = entry
            chain = chains.get(parent(path))
            if chain is None:
                chain = chains[parent(path)] = []
                for here in ancestors(path):
                    node = folders.get(here)
                    if node is None:
                        node = folders[here] = Folder(here)
                        chain[-1].subfolders.add(here)
                        self._name(chain[-1].path, here[len(chain[-1].path):-1], True)
                    chain.append(node)
            kind = entry.type
            for here_node in chain:
                here_node.count += 1
                here_node.bytes += size
                here_node.types[kind] += 1
            home = chain[-1]
            home.direct_types[kind] += 1
            home.direct_bytes += size
            home.recent.append((entry.updated or "", path))
            self._name(home.path, path[len(home.path):], True)
        for node in folders.values():
            node.recent.sort()
            node.ranked = sorted((-folders[sub].count, sub) for sub in node.subfolders)
            node.files, node.subs = len(node.recent), len(node.subfolders)

    def remove(self, path: str) -> None:
        entry = self.entries.pop(path, None)
        if entry is None:
            return
        size = self._bytes.pop(path)
        del self.labels[path]
        chain = ancestors(path)
        home = self.folders[chain[-1]]
        home.direct_types[entry.type] -= 1
        if home.direct_types[entry.type] == 0:
            del home.direct_types[entry.type]
        home.direct_bytes -= size
        home.files -= 1
        self._name(home.path, path[len(home.path):], False)
        key = (entry.updated or "", path)
        i = bisect.bisect_left(home.recent, key)
        if i < len(home.recent) and home.recent[i] == key:
            del home.recent[i]
        for name in reversed(chain):
            node = self.folders[name]
            self._recount(node, -1)
            node.bytes -= size
            node.newest = node.link = None
            node.types[entry.type] -= 1
            if node.types[entry.type] == 0:
                del node.types[entry.type]
            if node.count == 0 and name:
                del self.folders[name]
                above = self.folders[parent(name[:-1])]
                above.subfolders.discard(name)
                above.subs -= 1
                self._name(above.path, name[len(above.path):-1], False)

    def prepare(self, folder: str) -> None:
        """Make sure what rendering `folder` reads is here (everything is, in a loaded catalog)."""

    def recent(self, node: Folder) -> list[tuple[str, str]]:
        """(updated, path) of a folder's own files, oldest first (a `Partial` reads the newest when first asked)."""
        return node.recent

    def is_file(self, path: str) -> bool:
        return path in self.entries

    def is_folder(self, folder: str) -> bool:
        return folder in self.folders

    def clash(self, folder: str, name: str) -> str | None:
        """A file or subfolder name in `folder` equal to `name` but for case or normalisation, if there is one."""
        names = self._folded.get(f"{folder}\0{paths.fold(name)}")
        return next((n for n in sorted(names) if n != name), None) if names else None

    def line_bytes(self, path: str) -> int:
        return self._bytes[path]

    def walk(self, folder: str = "") -> Iterator[Entry]:
        """Every entry under `folder`, recursively."""
        node = self.folders.get(folder)
        if node is None:
            return
        stack = [node]
        while stack:
            node = stack.pop()
            for _, path in node.recent:
                yield self.entries[path]
            stack.extend(self.folders[f] for f in node.subfolders)

    def newest(self, folder: str) -> str:
        """The latest `updated` under `folder` (cached until something below changes)."""
        node = self.folders[folder]
        if node.newest is None:
            best = node.recent[-1][0] if node.recent else ""
            for sub in node.subfolders:
                best = max(best, self.newest(sub))
            node.newest = best
        return node.newest


class Partial(Catalog):
    """The catalog as far as rendering and checking a few folders needs it, read from a store's totals.

    A folder is read when first rendered (`prepare`): its totals and its largest
    subfolders, at most `rows`; its newest files (as many) when a render lists
    them (`recent`), and one file when asked for it (`get`). Its `files` and
    `subs` are the full counts. Read-only: a change goes to the store, which
    moves the totals in its commit, and the next write reads a new `Partial`.
    """

    def __init__(self, totals: Totals, seq: int, rows: int) -> None:
        super().__init__()
        self.totals = totals
        self.seq = seq
        self.rows = rows
        self.folders = {}
        self._prepared: set[str] = set()
        self._recent: set[str] = set()  # folders whose newest files were read
        self._node("")

    def _folder(self, row: FolderTotals) -> Folder:
        node = self.folders.get(row.path)
        if node is None:
            node = self.folders[row.path] = Folder(row.path)
            node.count, node.bytes, node.direct_bytes, node.files, node.subs, node.newest = (
                row.count, row.bytes, row.direct_bytes, row.files, row.subs, row.newest)
            node.types, node.direct_types = row.types, row.direct_types
        return node

    def _node(self, folder: str) -> Folder | None:
        node = self.folders.get(folder)
        if node is None:
            row = self.totals.folder(folder)
            node = None if row is None else self._folder(row)
        return node

    def _known(self, entries: Iterable[Entry]) -> list[Entry]:
        out = []
        for entry in entries:
            if entry.path not in self.entries:
                self.entries[entry.path] = entry
                name, tail = self.labels[entry.path] = self._label(entry)
                self._bytes[entry.path] = len(name.encode()) + len(tail.encode()) + len(entry.path.encode()) + 9
            out.append(self.entries[entry.path])
        return out

    def prepare(self, folder: str) -> None:
        if folder in self._prepared:
            return
        self._prepared.add(folder)
        node = self._node(folder)
        if node is None:
            return
        kids = [self._folder(r) for r in self.totals.largest(folder, self.rows)]
        node.ranked = [(-k.count, k.path) for k in kids]  # the order of Catalog's ranking: count down, then path
        node.subfolders = {k.path for k in kids}
        if not folder and self._node(ARCHIVE) is not None:
            node.subfolders.add(ARCHIVE)  # the top index always links it, however small

    def recent(self, node: Folder) -> list[tuple[str, str]]:
        if node.path not in self._recent:
            self._recent.add(node.path)
            newest = self._known(self.totals.newest(node.path, self.rows))
            node.recent = [(e.updated or "", e.path) for e in reversed(newest)]
        return node.recent

    def get(self, path: str) -> Entry | None:
        found = self.entries.get(path)
        if found is None:
            entry = self.totals.entry(path)
            found = None if entry is None else self._known([entry])[0]
        return found

    def walk(self, folder: str = "") -> Iterator[Entry]:
        yield from self._known(self.totals.under(folder))

    def is_file(self, path: str) -> bool:
        return self.get(path) is not None

    def is_folder(self, folder: str) -> bool:
        return self._node(folder) is not None

    def clash(self, folder: str, name: str) -> str | None:
        return self.totals.clash(folder, name)

    def load(self, entries: Iterable[Entry]) -> None:
        raise TypeError("a Partial catalog is read from the store's totals")

    def put(self, entry: Entry) -> None:
        raise TypeError("a Partial catalog is read-only: commit to the store and read a new one")

    def remove(self, path: str) -> None:
        raise TypeError("a Partial catalog is read-only: commit to the store and read a new one")
