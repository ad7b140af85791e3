"""The in-memory catalog: every topic file's entry, plus per-folder totals.

The totals (entries, index-line bytes and types per folder, counted
recursively) are kept up to date on every change, so deciding what fits in
an index never walks all the files.
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Callable, Iterator

from .model import Entry
from .paths import ancestors, parent


class Folder:
    __slots__ = ("path", "count", "bytes", "types", "direct_types", "recent", "subfolders")

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0  # entries in this folder and below
        self.bytes = 0  # bytes of their index lines (as seen from the root)
        self.types: Counter[str | None] = Counter()
        self.direct_types: Counter[str | None] = Counter()
        self.recent: list[tuple[str, str]] = []  # (updated, path) of direct files, oldest first
        self.subfolders: set[str] = set()


class Catalog:
    def __init__(self, line_bytes: Callable[[Entry], int]) -> None:
        self.entries: dict[str, Entry] = {}
        self.folders: dict[str, Folder] = {"": Folder("")}
        self.seq = 0
        self._line_bytes = line_bytes
        self._bytes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, path: str) -> Entry | None:
        return self.entries.get(path)

    def put(self, entry: Entry) -> None:
        if entry.path in self.entries:
            self.remove(entry.path)
        path = entry.path
        size = self._line_bytes(entry)
        self.entries[path] = entry
        self._bytes[path] = size
        chain = ancestors(path)
        for i, name in enumerate(chain):
            node = self.folders.get(name)
            if node is None:
                node = self.folders[name] = Folder(name)
                self.folders[chain[i - 1]].subfolders.add(name)
            node.count += 1
            node.bytes += size
            node.types[entry.type] += 1
        home = self.folders[chain[-1]]
        home.direct_types[entry.type] += 1
        bisect.insort(home.recent, (entry.updated or "", path))

    def remove(self, path: str) -> None:
        entry = self.entries.pop(path, None)
        if entry is None:
            return
        size = self._bytes.pop(path)
        chain = ancestors(path)
        home = self.folders[chain[-1]]
        home.direct_types[entry.type] -= 1
        if home.direct_types[entry.type] == 0:
            del home.direct_types[entry.type]
        key = (entry.updated or "", path)
        i = bisect.bisect_left(home.recent, key)
        if i < len(home.recent) and home.recent[i] == key:
            del home.recent[i]
        for name in reversed(chain):
            node = self.folders[name]
            node.count -= 1
            node.bytes -= size
            node.types[entry.type] -= 1
            if node.types[entry.type] == 0:
                del node.types[entry.type]
            if node.count == 0 and name:
                del self.folders[name]
                self.folders[parent(name[:-1])].subfolders.discard(name)

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
        """The latest `updated` under `folder`."""
        best = ""
        stack = [self.folders[folder]]
        while stack:
            node = stack.pop()
            if node.recent and node.recent[-1][0] > best:
                best = node.recent[-1][0]
            stack.extend(self.folders[f] for f in node.subfolders)
        return best

