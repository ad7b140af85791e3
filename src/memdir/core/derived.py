"""What is derived from one store's catalog: the catalog in memory and the MEMORY.md files on disk.

Both follow every commit. Past the store's commit a change has happened, so
nothing here raises after it: index files that cannot be written are marked
stale and rebuilt by the next write, the next look at the catalog, or
reconcile. A process that has not loaded the catalog (a CLI command, a hook)
renders what a write changed from the store's folder totals where the store
keeps them (`Partial`), reading only the rows it shows.
"""

from __future__ import annotations

import logging
import sqlite3

from .. import paths
from ..errors import MemdirError
from ..paths import INDEX_NAME
from ..stores.base import Store
from ..util import gc_paused
from . import index
from .catalog import Catalog, Partial
from .limits import Limits

log = logging.getLogger(__name__)


class Derived:
    """One store's catalog and index files, shared by every view of the memory."""

    def __init__(self, store: Store, limits: Limits, recovered: bool) -> None:
        self.store = store
        self.limits = limits
        self.recovered = recovered  # recovery repaired something at open: render every index file once
        self.catalog: Catalog | None = None  # loaded on first use
        self.written: dict[str, tuple[str, list[str]]] = {}  # folder -> index text and links on disk (as far as known)
        self.derived = -1  # the catalog seq this process last wrote index files for
        self.mine = 0  # changes this process committed since then
        self.stale = False  # writing MEMORY.md failed after a commit: rebuild it all next time
        self.commits = 0  # commits this process rendered for: one writing again keeps the catalog loaded

    # ------------------------------------------------------------ the catalog

    def sync(self) -> tuple[Catalog, set[str]]:
        """Load or catch up the catalog; returns it and the paths changed since the last call."""
        cat = self.catalog
        if cat is None:
            cat = Catalog()
            with gc_paused():
                seq, changes = self.store.changes(0)
                cat.load(entry for _, entry in changes if entry is not None)
            cat.seq = seq
            self.catalog = cat
            derived = self.store.derived()
            if derived < seq or self.recovered:  # the index files lag behind the catalog
                with self.store.lock():
                    self.after(full=not derived or self.recovered,
                               since=None if not derived else {p for p, _ in self.store.changes(derived)[1]})
            return cat, set()
        seq, changes = self.store.changes(cat.seq)
        for path, entry in changes:
            if entry is None:
                cat.remove(path)
            else:
                cat.put(entry)
        cat.seq = seq
        return cat, {p for p, _ in changes}

    def loaded(self) -> Catalog:
        return self.sync()[0]

    def partial(self) -> Catalog | None:
        """For a process's first write (a CLI command, a hook): the store's folder totals, read as far as
        a check or a render needs them (store lock held). None: load the catalog instead, as a process
        writing again does (a server), since rendering from it costs the lines shown and nothing more."""
        totals = getattr(self.store, "totals", None)
        if self.catalog is not None or self.commits or self.stale or self.recovered or totals is None \
                or not self.store.derived():
            return None  # loaded already, writing again, a store without totals, or files to render from scratch
        return Partial(totals, 0, self.limits.index_max_lines + 2)

    def for_checks(self) -> Catalog:
        """What a write checks a new path against: the totals, or the loaded catalog."""
        partial = self.partial()
        return self.loaded() if partial is None else partial

    # ------------------------------------------------------------ the index files

    def stored(self, folder: str) -> str | None:
        """In a process that has not loaded the catalog: the index file as stored, if it reflects the
        latest change (derived state is trusted when its seq matches; nothing is rendered)."""
        if self.catalog is not None or self.recovered or self.store.changes(self.store.derived())[1]:
            return None
        blob = self.store.get(folder + INDEX_NAME)
        return None if blob is None else blob.data.decode("utf-8", "replace")

    def render(self, cat: Catalog, folder: str) -> tuple[str, list[str]]:
        return index.render(cat, folder, self.limits.index_max_lines, self.limits.index_max_bytes)

    def committed(self, records: int) -> None:
        """After a commit of `records` changes (store lock held): bring the index files along."""
        self.mine += records
        self.after()
        self.commits += 1

    def after(self, full: bool = False, since: set[str] | None = None) -> None:
        """Rewrite MEMORY.md files; on failure mark them stale (the next write, open or reconcile rebuilds them).

        `since`: the paths changed since the index files were last written (a
        new process catching up); otherwise the changes of the latest sync.
        """
        try:
            if since is not None and not (full or self.stale):
                self._reindex(self.loaded(), since)
            else:
                self.refresh(full=full or self.stale)
            self.stale = False
        except (OSError, MemdirError, sqlite3.Error) as e:
            self.written = {}
            self.stale = True
            log.warning("memdir: the change is committed but MEMORY.md could not be updated (%s); it is rebuilt later", e)

    def refresh(self, full: bool = False) -> None:
        """Rewrite the index files the latest changes touched (call with the store lock held).

        Only the root and the linked folders on the changed paths are rendered,
        and each render is bounded by the caps. What is on disk for the others
        is trusted (a new process learns it from the files when it needs it).
        """
        partial = None if full else self.partial()
        if partial is not None:  # a process that has not loaded the catalog: the changes since the index files
            partial.seq, since = self.store.changes(self.store.derived())
            if since:
                self._reindex(partial, {p for p, _ in since})
            return
        cat, changed = self.sync()
        if full:
            self._refresh_all(cat)
            self.stale = False
        elif changed:
            self._reindex(cat, changed)

    def is_stale(self, cat: Catalog) -> bool:
        """Whether the top MEMORY.md on disk differs from what the catalog renders."""
        if self.store.derived() < cat.seq:
            return True
        blob = self.store.get(INDEX_NAME)
        if blob is None:
            return len(cat) > 0  # a memory nothing was ever written to has no index yet, and needs none
        return blob.data != self.render(cat, "")[0].encode()

    def forget(self) -> None:
        """Drop the catalog and what is known of the files: the next call reloads from the store."""
        self.catalog, self.written = None, {}

    def _reindex(self, cat: Catalog, changed: set[str]) -> None:
        touched = {a for p in changed for a in paths.ancestors(p)}
        if cat.seq - self.derived != self.mine:
            self.written = {}  # another writer came in between: learn the index files from disk again
        self.mine = 0
        written = self.written
        files: dict[str, bytes | None] = {}

        def known(f: str) -> tuple[str, list[str]] | None:
            prev = written.get(f)
            if prev is None:
                blob = self.store.get(f + INDEX_NAME)
                if blob is not None:
                    text = blob.data.decode("utf-8", "replace")
                    prev = written[f] = (text, index.links(text, f))
            return prev

        def drop(f: str) -> None:  # no longer linked: its index goes, and those it linked
            prev = known(f)
            written.pop(f, None)
            if prev is not None:
                files[f + INDEX_NAME] = None
                for sub in prev[1]:
                    drop(sub)

        stack = [""]
        while stack:
            f = stack.pop()
            old = known(f)
            text, links = written[f] = self.render(cat, f)
            if old is None or old[0] != text:
                files[f + INDEX_NAME] = text.encode()
            before = set() if old is None else set(old[1])
            stack.extend(sub for sub in links if sub in touched or sub not in before)
            for sub in before.difference(links):
                drop(sub)
        self.store.derive(files, cat.seq)
        self.derived = cat.seq

    def _refresh_all(self, cat: Catalog) -> None:
        """Render every index file from the catalog and remove stray ones."""
        rendered: dict[str, tuple[str, list[str]]] = {}
        stack = [""]
        while stack:
            f = stack.pop()
            rendered[f] = self.render(cat, f)
            stack.extend(rendered[f][1])
        files: dict[str, bytes | None] = {f + INDEX_NAME: text.encode() for f, (text, _) in rendered.items()}
        for f in (cat.folders.keys() | self.written.keys()) - rendered.keys():
            if self.store.get(f + INDEX_NAME) is not None:
                files[f + INDEX_NAME] = None
        self.written = rendered
        self.store.derive(files, cat.seq)
        self.derived, self.mine = cat.seq, 0
