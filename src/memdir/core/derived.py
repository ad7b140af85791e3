"""What is derived from one store's catalog: the catalog in memory and the MEMORY.md files on disk.

The index files follow the writes, and only the writes: opening a memory,
reading it, or journaling edits a person made by hand never rewrites a file
outside `.memdir/`; the next write brings the index files along. A MEMORY.md
someone else keeps (Claude Code's notes, a person's) keeps every byte of theirs:
memdir rewrites only its own marked region of the file (`index.Kept`).

Past the store's commit a change has happened, so nothing here raises after it:
index files that cannot be written are marked stale and rebuilt by the next
write, or `reconcile --fix`. A process's first write (a CLI command, a hook)
renders from the store's folder totals where the store keeps them (`Partial`),
reading only the rows it shows.
"""

from __future__ import annotations

import logging
import sqlite3

from .. import paths
from ..errors import Conflict, MemdirError
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
        self.catalog: Catalog | None = None  # loaded on first use
        self.stale = recovered  # render every index file at the next write (a recovery, or a failed write)
        self.behind: set[str] = set()  # paths changed since the index files were written, for the next write
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
            if not derived and seq:
                self.stale = True  # no index file was ever written for this catalog
            elif derived < seq:
                self.behind |= {p for p, _ in self.store.changes(derived)[1]}
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
        if self.catalog is not None or self.commits or self.stale or totals is None or not self.store.derived():
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
        if self.catalog is not None or self.stale or self.store.changes(self.store.derived())[1]:
            return None
        return self.on_disk(folder)

    def on_disk(self, folder: str) -> str | None:
        blob = self.store.get(folder + INDEX_NAME)
        return None if blob is None else blob.data.decode("utf-8", "replace")

    def render(self, cat: Catalog, folder: str, on_disk: str | None = None) -> tuple[str, list[str]]:
        """The folder's MEMORY.md: its generated index, in the room the caps leave beside a hand-kept part
        (of the file `on_disk`), and the subfolders the index links."""
        kept = index.kept(on_disk)
        lines, size = kept.caps(self.limits.index_max_lines, self.limits.index_max_bytes)
        text, links = index.render(cat, folder, lines, size)
        return kept.around(text), links

    def keep(self, folder: str, notes: str, *, replace: bool = False) -> bool:
        """Make `notes` the hand-kept part of `folder`'s MEMORY.md, around memdir's region (store lock held).

        False when they are there already. Refuses when the file keeps other
        notes, so nothing a person wrote there is replaced, unless `replace`.
        """
        want, have = index.kept(notes), index.kept(self.on_disk(folder))
        if (want.empty and not replace) or have == want:
            return False
        if not have.empty and not replace:
            raise Conflict(f"{folder}{INDEX_NAME} already keeps notes of its own ({have.lines} lines); "
                           "merge the new ones into it by hand, or keep them in a topic file", path=folder + INDEX_NAME)
        self.refresh(full=self.stale)
        self.stale = False
        text, _ = self.render(self.loaded(), folder, want.around(""))
        self.store.derive({folder + INDEX_NAME: text.encode()}, self.store.derived())
        return True

    def committed(self, records: int, *, derive: bool = True) -> None:
        """After a commit (store lock held): bring the index files along, or (`derive=False`: edits made by
        hand, journaled by a read) leave the paths to the next write."""
        if not derive:
            if self.catalog is not None:  # else the stored index's seq lags, which the next write reads
                self.behind |= self.sync()[1]
            return
        self.after()
        self.commits += 1

    def after(self) -> None:
        """Rewrite MEMORY.md files; on failure mark them stale (the next write or `reconcile --fix` rebuilds them)."""
        try:
            self.refresh(full=self.stale)
            self.stale = False
        except (OSError, MemdirError, sqlite3.Error) as e:
            self.stale = True
            log.warning("memdir: the change is committed but MEMORY.md could not be updated (%s); it is rebuilt later", e)

    def refresh(self, full: bool = False) -> None:
        """Rewrite the index files the latest changes touched (call with the store lock held).

        Only the root and the linked folders on the changed paths are rendered,
        and each render is bounded by the caps. The others are trusted.
        """
        partial = None if full else self.partial()
        if partial is not None:  # a process that has not loaded the catalog: the changes since the index files
            partial.seq, since = self.store.changes(self.store.derived())
            if since:
                self._reindex(partial, {p for p, _ in since})
            return
        cat, changed = self.sync()  # (a first load may find that no index file was ever written: stale)
        changed |= self.behind
        if full or self.stale:
            self._refresh_all(cat)
        elif changed:
            self._reindex(cat, changed)
        self.behind = set()

    def is_stale(self, cat: Catalog) -> bool:
        """Whether the top MEMORY.md on disk differs from what the catalog renders; when the stored index
        lags the catalog (edits journaled by a read, a cloned folder), whether any linked one does."""
        text = self.on_disk("")
        if text is None:
            return len(cat) > 0  # a memory nothing was ever written to has no index yet, and needs none
        if self.store.derived() < cat.seq:
            return not self._as_rendered(cat, "", text)
        return text != self.render(cat, "", text)[0]

    def _as_rendered(self, cat: Catalog, folder: str, text: str | None) -> bool:
        """Whether the index file of `folder`, and of every folder it links, is what the catalog renders."""
        rendered, links = self.render(cat, folder, text)
        if text != rendered:
            return False
        return all(self._as_rendered(cat, f, self.on_disk(f)) for f in links)

    def forget(self) -> None:
        """Drop the catalog: the next call reloads it from the store."""
        self.catalog = None

    def _reindex(self, cat: Catalog, changed: set[str]) -> None:
        touched = {a for p in changed for a in paths.ancestors(p)}
        files: dict[str, bytes | None] = {}
        texts: dict[str, str | None] = {}

        def disk(f: str) -> str | None:
            if f not in texts:
                texts[f] = self.on_disk(f)
            return texts[f]

        def drop(f: str) -> None:  # no longer linked: its index goes (a hand-kept part stays), and those it linked
            old = disk(f)
            if old is None:
                return
            kept = index.kept(old)
            files[f + INDEX_NAME] = None if kept.empty else (kept.before + kept.after).encode()
            for sub in index.links(index.generated(old), f):
                drop(sub)

        stack = [""]
        while stack:
            f = stack.pop()
            old = disk(f)
            text, links = self.render(cat, f, old)
            if old != text:
                files[f + INDEX_NAME] = text.encode()
            before = set() if old is None else set(index.links(index.generated(old), f))
            stack.extend(sub for sub in links if sub in touched or sub not in before)
            for sub in before.difference(links):
                drop(sub)
        self.store.derive(files, cat.seq)

    def _refresh_all(self, cat: Catalog) -> None:
        """Render every index file from the catalog; an index no folder links any more goes (a hand-kept part stays)."""
        files: dict[str, bytes | None] = {}
        rendered: set[str] = set()
        stack = [""]
        while stack:
            f = stack.pop()
            old = self.on_disk(f)
            text, links = self.render(cat, f, old)
            rendered.add(f)
            if old != text:
                files[f + INDEX_NAME] = text.encode()
            stack.extend(links)
        for f in cat.folders.keys() - rendered:
            old = self.on_disk(f)
            if old is not None:
                kept = index.kept(old)
                if kept.empty:
                    files[f + INDEX_NAME] = None
                elif index.BEGIN in old:
                    files[f + INDEX_NAME] = (kept.before + kept.after).encode()
        self.store.derive(files, cat.seq)
