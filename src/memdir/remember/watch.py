"""Following edits made outside memdir while a process runs: `memdir watch` and the servers.

A `Watcher` asks the operating system (inotify on Linux, through watchfiles)
for changes under a memory folder and hands the topic files named to
`Memdir.sync`, which journals them as `external` changes and brings the
catalog, the MEMORY.md files and search up to date. memdir's own writes
arrive as events too: `sync` finds their versions already in the catalog and
does nothing. An event that names a folder (a folder moved or removed by
hand) is followed by a stat check of every file. Where no watcher runs, the
CLI does that stat check before each command that shows derived state.

`.memdir/` is not watched: SQLite writes its write-ahead log there several
times a write, and following those events cost a server about 0.2 ms a write.
So the root is watched on its own level, and each of its folders deeply; a
folder made or removed at the top renews the deep watch.

A server watches its root once (`Watchers`), for every memory it serves there,
the folder's own and its tenants' (`tenants/T/`, watched deeply with the rest,
their `.memdir/` events dropped): two inotify instances and their threads
however many tenants are open, where a watcher each took two (the 64th tenant
met the account's limit of 128 and broke every other inotify user).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgument
from ..paths import INDEX_NAME, INTERNAL_DIR, TENANTS_DIR

if TYPE_CHECKING:
    from ..core.memdir import Memdir

logger = logging.getLogger(__name__)

DEBOUNCE_MS = 50  # events closer than this are handled together
STEP_MS = 10


def folder_of(md: Memdir) -> str | None:
    """The folder a memory's files live in, or None when it is not a folder store."""
    root = getattr(md.store, "root", None)
    return None if root is None else os.fspath(root)


def topics(root: str, events: Iterable[tuple[int, str]]) -> tuple[set[str], bool]:
    """(topic paths named by events, whether a folder or unknown path was named: check everything)."""
    named: set[str] = set()
    everything = False
    for _, full in events:
        rel = os.path.relpath(full, root).replace(os.sep, "/")
        if rel == "." or rel.startswith("../"):
            continue
        first, _, rest = rel.partition("/")
        if first == INTERNAL_DIR or rel.rsplit("/", 1)[-1] == INDEX_NAME:
            continue  # memdir's own data and the generated indexes
        if rel.endswith(".md"):
            named.add(rel)
        elif os.path.isdir(full) or not os.path.exists(full) and "." not in rel.rsplit("/", 1)[-1]:
            everything = True  # a folder made, moved or removed: its files sent no events of their own
    return named, everything


def _folders(root: str, tenants: bool = False) -> list[str]:
    """The root's folders that hold memories: all but `.memdir/` (and any dot-folder), and `tenants/` if asked."""
    try:
        with os.scandir(root) as found:
            return sorted(e.path for e in found if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                          and (tenants or e.name != TENANTS_DIR))
    except OSError:
        return []


class _Notify:
    """One watchfiles notifier and the thread that hands its event sets to a queue."""

    def __init__(self, paths: list[str], recursive: bool, out: queue.SimpleQueue[tuple[_Notify, Any]],
                 debounce_ms: int) -> None:
        from watchfiles._rust_notify import RustNotify

        self.notify: Any = RustNotify(paths, False, False, 300, recursive, True)  # watching starts here
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(out, debounce_ms), daemon=True,
                                        name=f"memdir-notify {paths[0] if paths else ''}")
        self._thread.start()

    def _run(self, out: queue.SimpleQueue[tuple[_Notify, Any]], debounce_ms: int) -> None:
        while not self.stop.is_set():
            events = self.notify.watch(debounce_ms, STEP_MS, 500, self.stop)
            if isinstance(events, set) and events:
                out.put((self, events))

    def close(self) -> None:
        self.stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
        self.notify.close()


class Watcher:
    """Keeps one memory in step with its folder from a background thread; `with Watcher(md):`."""

    def __init__(self, md: Memdir, *, on_change: Callable[[list[str]], None] | None = None,
                 debounce_ms: int = DEBOUNCE_MS) -> None:
        root = folder_of(md)
        if root is None:
            raise InvalidArgument("only a memory folder can be watched; other backends change only through memdir")
        try:
            import watchfiles._rust_notify  # noqa: F401
        except ImportError:
            raise InvalidArgument("watching needs the watchfiles package: pip install 'memdir[watch]'") from None
        self.md, self.root = md, root
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self.errors = 0
        self.rounds = 0  # batches of events handled (the first is the catch-up)
        self._stop = threading.Event()
        self._events: queue.SimpleQueue[tuple[_Notify, Any]] = queue.SimpleQueue()
        # Watching starts here, so the first round's stat check misses nothing made after it.
        self._top = _Notify([root], False, self._events, debounce_ms)
        self._deep = self._watch_folders()
        self._thread = threading.Thread(target=self._run, name=f"memdir-watch {root}", daemon=True)

    def _watch_folders(self) -> _Notify | None:
        folders = _folders(self.root)
        return _Notify(folders, True, self._events, self.debounce_ms) if folders else None

    def start(self) -> Watcher:
        """Follow events; the thread first catches up with what changed while nothing watched."""
        self._thread.start()
        return self

    def _handle(self, changed: list[str]) -> None:
        if changed and self.on_change is not None:
            self.on_change(changed)

    def _run(self) -> None:
        everything, named = True, set[str]()  # first a stat check of every file (the watch began before it)
        while not self._stop.is_set():
            try:
                if everything:
                    self._handle(self.md.sync())
                elif named:
                    self._handle(self.md.sync(sorted(named)))
            except Exception:  # a watcher that dies silently is worse than one that logs and goes on
                self.errors += 1
                logger.exception("memdir watch: could not catch up with changes in %s", self.root)
            self.rounds += 1
            named, everything = set(), False
            try:
                source, events = self._events.get(timeout=0.5)
            except queue.Empty:
                continue
            while True:
                found, folder = topics(self.root, events)
                named |= found
                if folder and source is self._top:  # a folder made or removed at the top: watch what is there now
                    old, self._deep = self._deep, self._watch_folders()
                    if old is not None:
                        old.close()
                everything |= folder
                try:
                    source, events = self._events.get_nowait()
                except queue.Empty:
                    break

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        for notify in (self._top, self._deep):
            if notify is not None:
                notify.close()

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Watchers:
    """One watch of a server's root for every memory served under it (its own and its tenants'); `add` and
    `remove` each memory as it is opened and closed. Events are handed to one memory of the folder they are in
    (`Memdir.sync`); a memory added is first checked whole, as `Watcher` does when it starts."""

    def __init__(self, root: str, *, debounce_ms: int = DEBOUNCE_MS) -> None:
        try:
            import watchfiles._rust_notify  # noqa: F401
        except ImportError:
            raise InvalidArgument("watching needs the watchfiles package: pip install 'memdir[watch]'") from None
        self.root, self.debounce_ms = os.path.realpath(root), debounce_ms
        self.errors = 0
        self.rounds = 0  # batches of events handled
        self._held: dict[str, list[Memdir]] = {}  # a memory's folder under the root ("" or tenants/T) -> its memories
        self._due: set[str] = set()  # folders to check whole (a memory just added, a folder moved)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._events: queue.SimpleQueue[tuple[_Notify, Any]] = queue.SimpleQueue()
        self._top: _Notify | None = None
        self._deep: _Notify | None = None
        self._thread: threading.Thread | None = None

    def _key(self, md: Memdir) -> str | None:
        folder = folder_of(md)
        if folder is None:
            return None
        rel = os.path.relpath(os.path.realpath(folder), self.root).replace(os.sep, "/")
        return "" if rel == "." else rel if rel.startswith(TENANTS_DIR + "/") and rel.count("/") == 1 else None

    def add(self, md: Memdir) -> bool:
        """Follow `md`'s folder (False: it is not the root or a tenant of it, so it is not watched here)."""
        key = self._key(md)
        if key is None:
            return False
        with self._lock:
            self._held.setdefault(key, []).append(md)
            self._due.add(key)
            if self._thread is None:  # the first memory: watching starts now, before its whole check
                self._top = _Notify([self.root], False, self._events, self.debounce_ms)
                self._deep = self._watch_folders()
                self._thread = threading.Thread(target=self._run, name=f"memdir-watch {self.root}", daemon=True)
                self._thread.start()
            elif self._top is not None:
                self._events.put((self._top, set()))  # wake the thread for the check
        return True

    def remove(self, md: Memdir) -> None:
        key = self._key(md)
        with self._lock:
            held = self._held.get(key or "", [])
            if md in held:
                held.remove(md)
            if not held:
                self._held.pop(key or "", None)

    def _watch_folders(self) -> _Notify | None:
        folders = _folders(self.root, tenants=True)
        return _Notify(folders, True, self._events, self.debounce_ms) if folders else None

    def _sync(self, key: str, paths: list[str] | None) -> None:
        with self._lock:
            held = list(self._held.get(key, ()))
        if not held:
            return  # no memory of that folder is open: the one opened later checks it whole
        try:
            held[0].sync(paths)  # the memories of one folder share its store: one of them journals it
        except Exception:  # a watcher that dies silently is worse than one that logs and goes on
            self.errors += 1
            logger.exception("memdir watch: could not catch up with changes in %s", os.path.join(self.root, key))

    def _run(self) -> None:
        named: dict[str, set[str]] = {}
        while not self._stop.is_set():
            with self._lock:
                due, self._due = self._due, set()
            for key in sorted(due):
                self._sync(key, None)
            for key, paths in sorted(named.items()):
                if key not in due and paths:
                    self._sync(key, sorted(paths))
            self.rounds += 1
            named = {}
            try:
                source, events = self._events.get(timeout=0.5)
            except queue.Empty:
                continue
            while True:
                by_folder: dict[str, list[tuple[int, str]]] = {}
                for event in events:  # each to the memory whose folder it is in: a tenant's, or the root's
                    parts = os.path.relpath(event[1], self.root).replace(os.sep, "/").split("/")
                    owner = "/".join(parts[:2]) if parts[0] == TENANTS_DIR and len(parts) > 1 else ""
                    by_folder.setdefault(owner, []).append(event)
                for key, found_events in by_folder.items():
                    found, folder = topics(os.path.join(self.root, key), found_events)
                    named.setdefault(key, set()).update(found)
                    if folder:
                        with self._lock:
                            self._due.add(key)
                        if key == "" and source is self._top:  # a folder made or removed at the top
                            old, self._deep = self._deep, self._watch_folders()
                            if old is not None:
                                old.close()
                try:
                    source, events = self._events.get_nowait()
                except queue.Empty:
                    break

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            if self._top is not None:
                self._events.put((self._top, set()))  # wake it now, not at its next half-second wait's end
            self._thread.join()
        for notify in (self._top, self._deep):
            if notify is not None:
                notify.close()
