"""The Memdir facade: the only writer, so every interface gets every guarantee.

A write goes: path checks, the size of what was given, the rate limit, then
frontmatter parse and merge, schema, size limits, secret guard, then one store
commit (content, journal and catalog together) under the store's lock, then the
derived indexes.
"""

from __future__ import annotations

import builtins
import copy
import datetime as dt
import logging
import math
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .. import model, paths
from ..errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    InvalidMemory,
    InvalidPath,
    MemdirError,
    NotFound,
    RateLimited,
)
from ..model import Entry, Memory
from ..paths import INDEX_NAME
from ..stores.base import Blob, Change, Record, Store, in_store_transaction
from . import index
from . import limits as limits_mod
from .catalog import Catalog, Partial, gc_paused
from .limits import Limits
from .scope import Scope

if TYPE_CHECKING:  # loaded where used: a CLI read or write does not import search, context, links or the guard
    from ..recall import context as context_mod
    from ..recall import links as links_mod
    from ..remember.capture import Captured
    from ..search.lexical import Filter, LexicalIndex, SearchHit

log = logging.getLogger(__name__)


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()
"""`expect=ANY` (the default): write whatever version is there."""

_CLEARS: tuple[object, ...] = ("", None, [])


@dataclass(frozen=True)
class Hit:
    """One grep match."""

    path: str
    line: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}


@dataclass(frozen=True)
class Finding:
    """One thing reconcile found: kind is new, changed, missing, index, invalid, quarantined, link (a broken link) or repaired."""

    kind: str
    path: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    fixed: bool = False

    @property
    def clean(self) -> bool:
        """Files, catalog and index agree (a broken link is reported, not a disagreement)."""
        return not [f for f in self.findings if f.kind not in ("repaired", "link")]

    def to_dict(self) -> dict[str, Any]:
        return {"clean": self.clean, "fixed": self.fixed, "findings": [f.to_dict() for f in self.findings]}


@dataclass(frozen=True)
class Op:
    """One change in a batch for `Memdir.apply`: use `Op.write`, `Op.delete` or `Op.rename`."""

    kind: str
    path: str
    text: str | None = None
    dest: str | None = None
    expect: Any = ANY

    @classmethod
    def write(cls, path: str, text: str, *, expect: Any = ANY) -> Op:
        """Create or replace `path` with `text` (frontmatter and body)."""
        return cls("write", path, text, expect=expect)

    @classmethod
    def delete(cls, path: str, *, expect: Any = ANY) -> Op:
        return cls("delete", path, expect=expect)

    @classmethod
    def rename(cls, path: str, dest: str, *, text: str | None = None, expect: Any = ANY) -> Op:
        """Move `path` to `dest` (which must not exist), optionally with new text."""
        return cls("rename", path, text, dest, expect)


class _State:
    """What every view of one memory shares: the catalog, the index files on disk, parsed files."""

    PARSED_BYTES = 64 << 20  # parsed files kept for reads, by text size

    def __init__(self) -> None:
        self.catalog: Catalog | None = None
        self.written: dict[str, tuple[str, list[str]]] = {}  # folder -> index text and links on disk (as far as known)
        self.derived = -1  # the catalog seq this process last wrote index files for
        self.mine = 0  # changes this process committed since then
        self.search: LexicalIndex | None = None  # the persistent lexical index, opened on first use
        self.parsed: dict[str, Memory] = {}  # path -> the file as last parsed; valid while its version holds
        self.parsed_bytes = 0
        self.commits = 0  # changes committed through this memory
        self.generation = 0  # bumped when the caches above are dropped
        self.stale = False  # writing MEMORY.md failed after a commit: rebuild it all next time

    def keep(self, mem: Memory) -> None:
        old = self.parsed.pop(mem.path, None)
        if old is not None:
            self.parsed_bytes -= len(old.text)
        while self.parsed and self.parsed_bytes + len(mem.text) > self.PARSED_BYTES:
            self.parsed_bytes -= len(self.parsed.pop(next(iter(self.parsed))).text)  # the oldest first
        self.parsed[mem.path] = mem
        self.parsed_bytes += len(mem.text)

    def forget(self) -> None:
        """Drop every cache: the next call reloads from the store."""
        if self.search is not None:
            self.search.close()
        self.catalog, self.written, self.search = None, {}, None
        self.parsed, self.parsed_bytes = {}, 0
        self.generation += 1


class Memdir:
    """One tenant's memory. Use `memdir.open()` to get one."""

    def __init__(self, store: Store, limits: Limits, *, actor: str = "library", agent: bool = False) -> None:
        self._store = store
        self.limits = limits
        self.actor = actor
        self._lock = threading.RLock()
        self._state = _State()
        self._scope: Scope | None = None
        self._views: dict[str, tuple[int, int, str]] = {}  # folder -> (generation, seq, index text) for this view
        self._scoped: tuple[tuple[int, int], Catalog] | None = None  # the catalog filtered by the scope
        self._agent = agent  # limits were chosen for a model (the rate limit included)
        self._owner = True  # views (scope, for_agent) share the store and never close it
        self.recovered = store.recover()
        if not store.journal(limit=1) and store.list():
            # Files memdir has never seen (a folder made by hand or another tool): catalogue them.
            self.reconcile(fix=True)

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the store (a view leaves it open for the memory it came from)."""
        if self._owner:
            if self._state.search is not None:
                self._state.search.close()
                self._state.search = None
            searching = sys.modules.get("memdir.search")
            if searching is not None:  # semantic layers exist only where search was imported
                searching.close_layers(self)
            self._store.close()

    def scope(self, read: Iterable[str] | str = (), write: Iterable[str] | str = ()) -> Memdir:
        """A view for one principal: it sees only `read` (and `write`) folders and writes only `write`.

        `md.scope(read=["household/"], write=["people/alice/"])`. A view of a
        view gets the intersection. Views share the store and the catalog.
        """
        wanted = Scope.of(read, write)
        view = copy.copy(self)
        view._owner = False
        view._scope = wanted if self._scope is None else self._scope.narrow(wanted)
        view._views = {}
        view._scoped = None
        return view

    def for_agent(self) -> Memdir:
        """This memory as an interface a model drives uses it: rate limited by default.

        Tools, the memory tool, MCP and HTTP call this, so a `Memdir` opened for
        a person gets the agent limit (60 writes a minute, shared by every process
        of the tenant) unless `writes_per_minute` was set; open with `agent=True`
        to choose the agent limit yourself (0 turns it off).
        """
        if self._agent:
            return self
        view = copy.copy(self)
        view._owner = False
        view._agent = True
        if not view.limits.writes_per_minute:
            view.limits = replace(view.limits, writes_per_minute=limits_mod.AGENT_DEFAULTS["writes_per_minute"])
        return view

    @property
    def principal(self) -> Scope | None:
        """The scope of this view, or None for the whole tenant."""
        return self._scope

    def _readable(self, path: str) -> bool:
        """In the scope, and so is the place it really names (a symlink must not cross the scope)."""
        if self._scope is None:
            return True
        if not self._scope.can_read(path):
            return False
        try:
            return self._scope.can_read(self._store.resolve(path))
        except InvalidPath:
            return False

    def _writable(self, *targets: str) -> None:
        if self._scope is not None:
            for path in targets:
                self._scope.check_write(path)
                if not self._scope.can_write(self._store.resolve(path)):
                    raise Forbidden(
                        f"{path} leads through a symlink outside what this principal may write; write elsewhere", path=path
                    )

    def __enter__(self) -> Memdir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def store(self) -> Store:
        return self._store

    # ------------------------------------------------------------ reading

    def read(self, path: str, *, as_of: str | dt.datetime | dt.date | None = None) -> Memory:
        """The topic file at `path`, with its version for a later `expect=`; with `as_of`, as it was then."""
        if as_of is not None:
            from ..remember import timeline

            return timeline.read_as_of(self, path, as_of)
        p, blob = self._blob(path)
        return self._memory(p, blob)

    def read_text(self, path: str) -> tuple[str, str, str]:
        """(path, text, version) of a topic file: `read` without parsing the frontmatter, for a face that only shows it."""
        p, blob = self._blob(path)
        hit = self._state.parsed.get(p)
        if hit is not None and hit.version == blob.version and blob.version:
            return p, hit.text, hit.version
        return p, _decoded(p, blob), blob.version

    def _blob(self, path: str) -> tuple[str, Blob]:
        p = paths.topic_path(path)
        blob = self._store.get(p) if self._readable(p) else None
        if blob is None:
            raise NotFound(f"{p} does not exist; MEMORY.md lists the memories that do", path=p)
        return p, blob

    def _memory(self, path: str, blob: Blob, change: str = "") -> Memory:
        """The parsed file; parsed again only when its version (on a folder: its stat) changed."""
        hit = self._state.parsed.get(path)
        if hit is not None and hit.version == blob.version and blob.version:
            return replace(hit, meta=dict(hit.meta), change=change)
        mem = model.memory(path, _decoded(path, blob), blob.version, self.limits.types, change=change)
        if blob.version:
            self._state.keep(replace(mem, meta=dict(mem.meta), change=""))
        return mem

    def list(self, prefix: str = "") -> list[Entry]:
        """Catalog entries under a folder (or the one file), sorted by path."""
        with self._lock:
            cat = self._view_catalog()
            if prefix.endswith(".md"):
                e = cat.get(paths.topic_path(prefix))
                return [e] if e else []
            return sorted(cat.walk(paths.folder(prefix)), key=lambda e: e.path)

    def count(self, prefix: str = "") -> int:
        """How many topic files this view sees under a folder, without listing them."""
        with self._lock:
            node = self._view_catalog().folders.get(paths.folder(prefix))
            return 0 if node is None else node.count

    def entries(self, wanted: Iterable[str]) -> dict[str, Entry]:
        """Catalog entries of the given paths that this view can read (one catalog sync for all)."""
        with self._lock:
            cat = self._view_catalog()
            return {p: e for p in wanted if (e := cat.get(p)) is not None}

    def index(self, folder: str = "") -> str:
        """The MEMORY.md text of the root or of one folder (collapsed or not)."""
        f = paths.folder(folder)
        with self._lock:
            if self._state.catalog is None and self._scope is None:
                stored = self._stored_index(f)
                if stored is not None:
                    return stored
            cat = self._view_catalog()
            view = self._views.get(f)
            if view is not None and view[:2] == (self._state.generation, cat.seq):
                return view[2]
            if f and f not in cat.folders:
                raise NotFound(f"no memories under {f}; `memdir ls` shows the folders that exist", path=f)
            text, _ = index.render(cat, f, self.limits.index_max_lines, self.limits.index_max_bytes)
            self._views[f] = (self._state.generation, cat.seq, text)
            return text

    def _stored_index(self, folder: str) -> str | None:
        """In a process that has not loaded the catalog: the index file as stored, if it reflects the
        latest change (derived state is trusted when its seq matches; nothing is rendered)."""
        if self.recovered or self._store.changes(self._store.derived())[1]:
            return None
        blob = self._store.get(folder + INDEX_NAME)
        return None if blob is None else blob.data.decode("utf-8", "replace")

    def grep(self, pattern: str, *, prefix: str = "", ignore_case: bool = True, fixed: bool = False) -> builtins.list[Hit]:
        """Lines matching a regular expression (or a fixed string) in every topic file under `prefix`.

        Linear time whatever the pattern (RE2); the texts come from the search
        index, filtered there by the literal strings a match needs.
        """
        from ..search import grep as grepping  # RE2 loads on the first grep, not with every command

        pattern_ = grepping.compile(pattern, ignore_case=ignore_case, fixed=fixed)
        where = self._search_filter(prefix)
        with self._lock:
            texts = list(self._search_index().texts(where, pattern_.needles, pattern_.ignore_case))
        return [Hit(path, number, line) for path, number, line in pattern_.scan(texts)]

    def search(self, query: str, *, k: int = 10, mode: str = "auto", prefix: str = "",
               types: Iterable[str] | str = (), since: Any = None) -> builtins.list[SearchHit]:
        """The `k` topic files that best match `query`, best first, each with the lines to read first.

        Only files under `prefix` that this view may read are ranked (the
        filter is inside the index's query), of the given `types` and updated
        on or after `since`. `mode` is lexical, semantic, hybrid or auto
        (lexical unless the semantic layer is installed and says otherwise).
        """
        if not isinstance(query, str):
            raise InvalidArgument(f"query must be text, got {type_name(query)}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidArgument(f"k must be a positive integer, got {k!r}")
        from .. import search as searching
        from ..search import lexical

        if mode not in searching.MODES:
            raise InvalidArgument(f"mode must be one of {', '.join(searching.MODES)}; got {mode!r}")
        parsed = searching.parse(query)
        where = self._search_filter(prefix, types, since)
        if mode in ("semantic", "hybrid") or (mode == "auto" and searching.semantic_ready(self)):
            found: builtins.list[SearchHit] = searching.semantic_layer(mode).search(self, query, k=k, mode=mode,
                                                                                   where=where)
            return found
        if not parsed:
            return []
        with self._lock:
            top = lexical.top(self._search_index(), parsed, k, where)
        return lexical.hits(top, parsed)

    def _search_filter(self, prefix: str = "", types: Iterable[str] | str = (), since: Any = None) -> Filter:
        """What this view may see under `prefix`: the filter every index query carries."""
        where = paths.folder(prefix)
        if self._scope is None:
            prefixes = [where]
        else:  # the readable part of `where`
            prefixes = [where if where.startswith(r) else r for r in self._scope.read
                        if where.startswith(r) or r.startswith(where)]
        from .. import search as searching

        kinds = (types,) if isinstance(types, str) else tuple(types)
        if not all(isinstance(t, str) and t for t in kinds):
            raise InvalidArgument(f"types must be type names such as 'feedback', got {types!r}")
        return searching.Filter(tuple(prefixes), kinds, searching.since_of(since))

    def context(self, query: str | None = None, *, budget: int = limits_mod.CONTEXT_BUDGET,
                include: Iterable[str] | str = (), now: dt.datetime | None = None) -> context_mod.Context:
        """What an agent should see at the start of a turn, within `budget` tokens (see `memdir.context`)."""
        from ..recall import context as context_mod

        return context_mod.build(self, query, budget=budget, include=include, now=now)

    def links(self, path: str) -> links_mod.Links:
        """The links in a file (`[[Name]]`, `[text](x.md)`) and the files that link to it."""
        from ..recall import links as links_mod

        return links_mod.of(self, path)

    def _search_index(self) -> LexicalIndex:
        """The lexical index, caught up with the store (only changed files are read)."""
        from .. import search as searching

        return searching.current(self)

    def _open_search(self) -> LexicalIndex:
        if self._state.search is None:
            from .. import search as searching

            self._state.search = searching.open_index(self._store)
        return self._state.search

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the search index from the files; returns how many files it holds."""
        if self._scope is not None:
            raise Forbidden("reindex works on the whole memory; run it without a scope")
        with self._lock:
            cat = self._sync_catalog()
            idx = self._open_search()
            idx.clear()
            from .. import search as searching

            searching.catch_up(idx, self._store, cat.seq, self.limits.types, progress)
            return idx.count()

    def _index_commit(self, changes: builtins.list[Change], records: builtins.list[Record]) -> None:
        """Keep the search index current in the write path (in the write's transaction on SQL stores)."""
        from ..search import lexical

        removed, docs = lexical.commit_docs(changes, records, self.limits.types)
        if in_store_transaction(self._store):
            self._open_search().apply(records[0].seq - 1, records[-1].seq, removed, docs)
            return
        try:  # a derived file after the commit point: if it fails, the next search catches it up
            self._open_search().apply(records[0].seq - 1, records[-1].seq, removed, docs)
        except Exception:
            if self._state.search is not None:
                self._state.search.close()
            self._state.search = None

    def history(self, path: str | None = None, *, limit: int | None = None) -> builtins.list[Record]:
        """Journal records, newest first: every write, delete, rename and undo.

        A scoped view gets only records whose path it may read (filtered and
        limited in the store's query), and a move out of its scope without the
        destination or the content.
        """
        p = None if path is None else paths.topic_path(path)
        if self._scope is None:
            return self._store.journal(p, limit=limit)
        if p is not None and not self._readable(p):
            return []
        records = self._store.journal(p, limit=limit, prefixes=self._scope.read)
        return [r if r.dest is None or self._readable(r.dest) else replace(r, dest=None, new_version=None, old=None, new=None)
                for r in records]

    def changes(self, since: str | dt.datetime | dt.date | None = None, until: str | dt.datetime | dt.date | None = None,
                *, prefix: str = "") -> builtins.list[Record]:
        """Journal records in a time window (`since` inclusive, `until` exclusive) under `prefix`, oldest first."""
        from ..remember import timeline

        return timeline.changes(self, since, until, prefix=prefix)

    # ------------------------------------------------------------ remembering (modules that call the methods above)

    def capture(self, session_id: str, transcript: Any, *, actor: str | None = None, at: Any = None) -> Captured:
        """Write (or replace) the structured record of one session: see `memdir.capture.capture`."""
        from ..remember import capture

        return capture.capture(self, session_id, transcript, actor=actor, at=at)

    def remember_feedback(self, rule: str, why: str, how_to_apply: str) -> Memory:
        """Save a correction or preference as a feedback memory at once: see `memdir.capture.remember_feedback`."""
        from ..remember import capture

        return capture.remember_feedback(self, rule, why, how_to_apply)

    def supersede(self, path: str, *, by: str | None = None, reason: str) -> Memory:
        """Retire a wrong or outdated memory without losing it: see `memdir.timeline.supersede`."""
        from ..remember import timeline

        return timeline.supersede(self, path, by=by, reason=reason)

    # ------------------------------------------------------------ writing

    def write(
        self,
        path: str,
        body: str,
        *,
        name: str | None = None,
        description: str | None = None,
        type: str | None = None,
        tags: Sequence[str] | str | None = None,
        expect: Any = ANY,
        absolute_dates: bool = True,
    ) -> Memory:
        """Replace the whole topic file. Omitted metadata keeps its previous value; "" clears it.

        The body, and any frontmatter it brings, is stored as written: memdir
        edits only the lines of the keys it sets. `expect`: ANY (no check), None
        (must not exist yet) or the version read. `absolute_dates`: relative
        dates in the body ("next Thursday") get the date they mean added
        (`next Thursday (2026-12-03)`); False keeps the text as given.
        """
        p = paths.topic_path(path)
        if not isinstance(body, str):
            raise InvalidArgument(f"{p}: body must be text, got {type_name(body)}")
        self._writable(p)
        self._bound(p, body)  # bounds first, then the rate, then parsing
        self._take(p)
        given, text_body = model.parse(body, path=p, strict=True)
        if absolute_dates:  # only the body part: the frontmatter stays as written
            from .. import dates

            body = body[: len(body) - len(text_body)] + dates.absolute(text_body, dt.datetime.now(dt.UTC).date())
        fields: dict[str, Any] = {}  # what the keywords set; None removes the key
        for key, value in (("name", name), ("description", description), ("type", type)):
            if value is not None:
                fields[key] = value if value not in _CLEARS else None
        if tags is not None:
            fields["tags"] = list(model.tags_of(list(tags) if not isinstance(tags, str) else tags)) or None
        with self._writing():
            cur = self._store.get(p)
            self._check_expect(p, cur, expect)
            old = "" if cur is None else cur.data.decode("utf-8", "replace")
            old_meta, _ = model.parse(old, path=p, strict=True)  # a broken block is refused, never dropped
            if model.split(body, path=p)[0] is not None:  # the body brings its own frontmatter, as written
                kept = {k: v for k, v in old_meta.items() if k not in given and k not in model.STAMPS}
                text = model.set_fields(body, {**kept, **fields}, path=p)
            else:  # a new body under the old frontmatter lines
                text = model.set_fields(model.with_body(old, body, path=p), fields, path=p)
            return self._put(p, cur, old_meta, text)

    def edit(self, path: str, old: str, new: str, *, expect: Any = ANY) -> Memory:
        """Replace the one exact occurrence of `old` in the file (frontmatter included) with `new`.

        Lets an agent change a line without rewriting the whole file. Fails if
        `old` is absent or appears more than once (with the lines where it does),
        so a replacement never lands in the wrong place.
        """
        p = paths.topic_path(path)
        for what, value in (("old", old), ("new", new)):
            if not isinstance(value, str):
                raise InvalidArgument(f"{p}: {what} must be text, got {type_name(value)}")
        if not old:
            raise InvalidArgument(f"{p}: the text to replace is empty; give the exact text that is in the file now")
        self._writable(p)
        with self._writing():
            cur = self._store.get(p)
            if cur is None:
                raise NotFound(f"{p} does not exist; create it with a write first", path=p)
            self._check_expect(p, cur, expect)
            text = self._memory(p, cur).text
            starts = _occurrences(text, old)
            if not starts:
                raise InvalidArgument(
                    f"{p} does not contain {_shown(old)}; read the file and copy the exact text to replace", path=p
                )
            if len(starts) > 1:
                lines = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts)
                raise InvalidArgument(
                    f"{p} contains {_shown(old)} {len(starts)} times (lines {lines}); include more of the surrounding text so it is unique",
                    path=p,
                )
            at = starts[0]
            changed = text[:at] + new + text[at + len(old):]
            self._bound(p, changed)
            self._take(p)
            if model.moves_frontmatter(text, changed):
                raise InvalidArgument(
                    f"{p}: this edit would turn the frontmatter (lines 1-{model.head_lines(text)}) into body text; "
                    "keep its '---' lines at the top, or remove the whole block", path=p,
                )
            old_meta, _ = model.parse(text, path=p, strict=False)
            return self._put(p, cur, old_meta, changed)

    def append(self, path: str, line: str) -> Memory:
        """Add `- [YYYY-MM-DD HH:MM] line` (UTC) to the end of the body, creating the file if missing.

        The cheap, append-only way to capture a fact: no read, no rewrite, no
        chance of clobbering what another writer added meanwhile.
        """
        p = paths.topic_path(path)
        if not isinstance(line, str):
            raise InvalidArgument(f"{p}: line must be text, got {type_name(line)}")
        count = len(paths.lines(line.strip()))
        if count > 1:
            raise InvalidArgument(f"{p}: append takes one line, got {count}; append each line separately or use write")
        text = " ".join(line.split())
        if not text:
            raise InvalidArgument(f"{p}: the line to append is empty; give the fact to record")
        self._writable(p)
        now = dt.datetime.now(dt.UTC)
        from .. import dates

        text = dates.absolute(text, now.date())
        stamp = now.strftime("%Y-%m-%d %H:%M")
        entry = f"- [{stamp}] {text}\n"
        self._bound(p, entry)
        with self._writing():
            cur = self._store.get(p)
            self._take(p)
            text = "" if cur is None else self._memory(p, cur).text
            old_meta, _ = model.parse(text, path=p, strict=True)  # a broken block is refused, never buried
            if text and not text.endswith("\n"):
                text += "\n"
            return self._put(p, cur, old_meta, text + entry)

    def _put(self, p: str, cur: Blob | None, old_meta: dict[str, Any], text: str) -> Memory:
        """Stamp, check and commit one file (store lock held): the write path every change shares.

        `text` is the file as its writer wants it. memdir changes only its own
        lines: `created` (kept from the old file) and `updated`, so everything a
        person wrote in the frontmatter stays byte for byte.
        """
        now = model.now_stamp()
        stamped = self._stamp(p, cur, old_meta, text, now)
        if stamped is None:
            assert cur is not None
            return self._memory(p, cur, change="unchanged")
        text = stamped
        data = text.encode()
        mem = model.memory(p, text, "", self.limits.types)
        change = Change(
            op="write", path=p, data=data, expect=None if cur is None else cur.version,
            old=None if cur is None else cur.data, entry=model.entry_of(mem), actor=self.actor, time=now,
        )
        rec = self._commit([change])[0]
        if rec.new_version:
            self._state.keep(replace(mem, version=rec.new_version, meta=dict(mem.meta)))  # a read next parses nothing
        return replace(mem, version=rec.new_version or "", change="created" if cur is None else "updated")

    def _stamp(self, p: str, cur: Blob | None, old_meta: dict[str, Any], text: str, now: model.Stamp) -> str | None:
        """`text` with memdir's `created` (kept from the old file) and `updated` lines set, then checked.

        None when nothing but the `updated` line would change from `cur`.
        """
        meta, _ = model.parse(text, path=p, strict=True)
        created = old_meta.get("created") or meta.get("created") or now
        text = model.set_fields(text, {"created": created, "updated": now}, path=p)
        if cur is not None:
            old = cur.data.decode("utf-8", "replace")
            if model.unstamped(text, ("updated",)) == model.unstamped(old, ("updated",)):
                return None
        meta = {k: v for k, v in meta.items() if not (k in model.KNOWN_KEYS and v in _CLEARS)}  # empty means unset
        self._validate(p, {**meta, "created": created, "updated": now}, text)
        return text

    def apply(self, ops: Sequence[Op]) -> builtins.list[Memory]:
        """Several writes, deletes and renames committed at once: all of them land, or none.

        Each op is checked like its single-file method (paths, scope, schema,
        limits, secrets, `expect`) before anything is written; the batch is one
        store commit under the store's lock, so a concurrent batch touching the
        same files fails with `Conflict` instead of half-applying. Writes whose
        text is already there are skipped ("unchanged"). It counts as one write
        against the rate limit.
        """
        planned: builtins.list[tuple[Change | None, Memory]] = []
        with self._writing():
            seen: set[str] = set()
            now = model.now_stamp()
            for op in ops:
                planned.append(self._plan(op, now, seen))
            changes = [c for c, _ in planned if c is not None]
            if changes:
                self._take(changes[0].target)
                records = iter(self._commit(changes))
            out = []
            for change, mem in planned:
                if change is not None:
                    mem = replace(mem, version=next(records).new_version or "")
                out.append(mem)
            return out

    def _plan(self, op: Op, now: str, seen: set[str]) -> tuple[Change | None, Memory]:
        """The change one op of a batch makes (None: nothing to do), checked against what is stored now."""
        if op.kind not in ("write", "delete", "rename"):
            raise InvalidArgument(f"op kind {op.kind!r} is not write, delete or rename")
        p = paths.topic_path(op.path)
        dst = None if op.dest is None else paths.topic_path(op.dest)
        for target in (p, dst):
            if target is not None and target in seen:
                raise InvalidArgument(f"{target} appears twice in one batch; merge the changes to it into one")
            if target is not None:
                seen.add(target)
        self._writable(*[x for x in (p, dst) if x])
        cur = self._store.get(p)
        if op.kind != "write" and cur is None:
            raise NotFound(f"{p} does not exist; nothing to {op.kind}", path=p)
        self._check_expect(p, cur, op.expect)
        if op.kind == "delete":
            assert cur is not None
            return (Change(op="delete", path=p, data=None, expect=cur.version, old=cur.data, entry=None,
                           actor=self.actor, time=now), self._memory(p, cur, change="deleted"))
        target = dst or p
        if dst is not None and self.limits.secret_guard:
            from . import guard

            guard.check_path(dst)
        if dst is not None and self._store.get(dst) is not None:
            raise Conflict(f"{dst} already exists; pick another name or delete it first", path=dst)
        if op.text is None:
            assert cur is not None
            data = cur.data
        else:
            if not isinstance(op.text, str):
                raise InvalidArgument(f"{target}: text must be text, got {type_name(op.text)}")
            self._bound(target, op.text)
            old_meta: dict[str, Any] = {}
            if cur is not None:
                old_meta, _ = model.parse(cur.data.decode("utf-8", "replace"), path=p, strict=False)
            text = self._stamp(target, cur if dst is None else None, old_meta, op.text, model.Stamp(now))
            if text is None:
                assert cur is not None
                return None, self._memory(p, cur, change="unchanged")
            data = text.encode()
        mem = model.memory(target, data.decode("utf-8", "replace"), "", self.limits.types)
        if dst is not None:
            assert cur is not None
            return (Change(op="rename", path=p, dest=dst, data=data, expect=cur.version, old=cur.data,
                           entry=model.entry_of(mem), actor=self.actor, time=now), replace(mem, change="renamed"))
        return (Change(op="write", path=p, data=data, expect=None if cur is None else cur.version,
                       old=None if cur is None else cur.data, entry=model.entry_of(mem), actor=self.actor, time=now),
                replace(mem, change="created" if cur is None else "updated"))

    def delete(self, path: str, *, expect: Any = ANY) -> Memory:
        """Delete a topic file; returns what was deleted (undo brings it back)."""
        p = paths.topic_path(path)
        self._writable(p)
        with self._writing():
            cur = self._store.get(p)
            if cur is None:
                raise NotFound(f"{p} does not exist; nothing to delete", path=p)
            self._check_expect(p, cur, expect)
            self._take(p)
            self._commit([Change(op="delete", path=p, data=None, expect=cur.version, old=cur.data,
                                 entry=None, actor=self.actor, time=model.now_stamp())])
            return self._memory(p, cur, change="deleted")

    def rename(self, old: str, new: str, *, expect: Any = ANY) -> Memory:
        """Move a topic file to a new path; the target must not exist. `expect` as for `write`."""
        src, dst = paths.topic_path(old), paths.topic_path(new)
        self._writable(src, dst)
        if self.limits.secret_guard:
            from . import guard

            guard.check_path(dst)
        if src == dst:
            raise InvalidArgument(f"cannot rename {src} to itself; give a different new path")
        with self._writing():
            cur = self._store.get(src)
            if cur is None:
                raise NotFound(f"{src} does not exist; nothing to rename", path=src)
            self._check_expect(src, cur, expect)
            if self._store.get(dst) is not None:
                raise Conflict(f"{dst} already exists; pick another name or delete it first", path=dst)
            self._take(dst)
            mem = self._memory(dst, cur)
            rec = self._commit([Change(op="rename", path=src, dest=dst, data=cur.data, expect=cur.version,
                                       old=cur.data, entry=model.entry_of(mem), actor=self.actor,
                                       time=model.now_stamp())])[0]
            return self._memory(dst, Blob(cur.data, rec.new_version or ""), change="renamed")

    def undo(self, path: str) -> Memory:
        """Revert the last journaled change to `path` as a new change (so it has a new version).

        Undoing an undo redoes. Refuses (Conflict) if the file changed since that change.
        """
        p = paths.topic_path(path)
        self._writable(p)  # before the journal is read, so the refusal says nothing of what exists
        with self._writing():
            records = self._store.journal(p, limit=1)
            if not records:
                raise NotFound(f"{p} has no journaled change to undo", path=p)
            rec = records[0]
            other = rec.dest if rec.path == p else rec.path
            if other is not None and self._scope is not None and not self._scope.can_write(other):
                raise Forbidden(f"cannot undo the last change to {p}: it moved the file across the edge of what this "
                                "principal may write; ask someone who may write both places", path=p)
            now = model.now_stamp()
            if rec.dest is not None:  # a rename: move it back
                cur = self._store.get(rec.dest)
                self._check_undo(rec, rec.dest, cur)
                if self._store.get(rec.path) is not None:
                    raise Conflict(f"cannot undo the rename: {rec.path} exists again; move or delete it first", path=rec.path)
                assert cur is not None
                mem = self._memory(rec.path, cur)
                change = Change(op="undo", path=rec.dest, dest=rec.path, data=cur.data, expect=cur.version,
                                old=cur.data, entry=model.entry_of(mem), actor=self.actor, time=now, undoes=rec.seq)
                target, result = rec.path, "restored"
            else:
                cur = self._store.get(p)
                self._check_undo(rec, p, cur)
                entry = None
                if rec.old is not None:
                    entry = model.entry_of(self._memory(p, Blob(rec.old, "")))
                change = Change(op="undo", path=p, data=rec.old, expect=None if cur is None else cur.version,
                                old=None if cur is None else cur.data, entry=entry, actor=self.actor, time=now,
                                undoes=rec.seq)
                target, result = p, "restored" if rec.old is not None else "deleted"
            self._take(target)
            done = self._commit([change])[0]
            if change.data is None:
                assert cur is not None
                return self._memory(p, cur, change=result)
            return self._memory(target, Blob(change.data, done.new_version or ""), change=result)

    def _check_undo(self, rec: Record, path: str, cur: Blob | None) -> None:
        if (None if cur is None else cur.version) != rec.new_version:
            raise Conflict(
                f"{path} changed since journal change #{rec.seq} (outside memdir?); read it and write what you want instead",
                path=path,
            )

    def _check_expect(self, path: str, cur: Blob | None, expect: Any) -> None:
        if expect is ANY:
            return
        if expect is None and cur is not None:
            raise Conflict(f"{path} already exists (version {cur.version}); read it first, or write with its version", path=path)
        if expect is not None:
            if cur is None:
                raise Conflict(f"{path} does not exist (expected version {expect}); it was deleted or renamed", path=path)
            if cur.version != expect:
                raise Conflict(
                    f"{path} changed since it was read (version {expect} is now {cur.version}); read it again and retry",
                    path=path,
                )

    def _validate(self, path: str, meta: dict[str, Any], text: str) -> None:
        limits_mod.check_meta(meta, path, self.limits)
        limits_mod.check_size(text, path, self.limits)
        if self.limits.secret_guard:
            from . import guard

            _, body = model.split(text, path=path)
            guard.check(text, path, head_lines=text.count("\n", 0, len(text) - len(body)), meta=meta)

    def _bound(self, path: str, text: str) -> None:
        """Refuse text over the size limit before anything parses it (the exact check follows the merge)."""
        if len(text) > self.limits.max_bytes:
            limits_mod.check_size(text, path, self.limits)

    def _take(self, path: str) -> None:
        """One write from the tenant's rate bucket, which the store keeps for every process and host."""
        rate = self.limits.writes_per_minute
        if rate:
            wait = self._store.take(rate)
            if wait:
                wait = float(max(1, math.ceil(wait)))  # whole seconds, as Retry-After
                raise RateLimited(
                    f"{path}: more than {rate} writes per minute for this memory; wait {wait:.0f}s, "
                    "and batch related facts into one file",
                    retry_after=wait,
                    limit=rate,
                )

    # ------------------------------------------------------------ catalog and index

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the locks of a change. If the store's transaction fails after a commit
        (it is rolled back on SQL stores), forget what was cached from it."""
        with self._lock:
            commits = self._state.commits
            try:
                with self._store.lock():
                    yield
            except BaseException:
                if self._state.commits != commits:
                    self._state.forget()
                raise

    def _commit(self, changes: builtins.list[Change]) -> builtins.list[Record]:
        """Commit under the held store lock, then bring the catalog and indexes up to date.

        Past the store's commit the change has happened, so nothing after it raises:
        derived files that cannot be written are marked stale and rebuilt later.
        """
        placed = [c for c in changes if self._places(c)]
        if placed:  # an update in place needs no catalog here
            partial = self._partial()
            cat = self._sync_catalog() if partial is None else partial
            for change in placed:
                self._check_place(change, cat)
        self._state.commits += 1
        records = self._store.commit(changes)
        self._state.mine += len(records)
        self._derive()
        if records and self._searching():
            self._index_commit(changes, records)
        return records

    def _searching(self) -> bool:
        """Whether a write brings the search index along itself: where the rows are part of the store's
        transaction, or where this process has searched. Elsewhere (a CLI write, a hook) the next search
        catches up from the journal, once for all the writes since."""
        return self._state.search is not None or in_store_transaction(self._store)

    def _derive(self, full: bool = False, since: set[str] | None = None) -> None:
        """Rewrite MEMORY.md files; on failure mark them stale (the next write, open or reconcile rebuilds them).

        `since`: the paths changed since the index files were last written (a
        new process catching up); otherwise the changes of the latest sync.
        """
        try:
            if since is not None and not (full or self._state.stale):
                self._reindex(self._sync()[0], since)
            else:
                self._refresh(full=full or self._state.stale)
            self._state.stale = False
        except (OSError, MemdirError, sqlite3.Error) as e:
            self._state.written = {}
            self._state.stale = True
            log.warning("memdir: the change is committed but MEMORY.md could not be updated (%s); it is rebuilt later", e)

    @staticmethod
    def _places(change: Change) -> bool:
        """Whether a change puts a file at a path that may not exist yet (so `_check_place` has a say)."""
        return not (change.record_only or change.data is None or (change.dest is None and change.expect is not None))

    def _check_place(self, change: Change, cat: Catalog) -> None:
        """Refuse a new path that makes a file a folder (or a folder a file), or differs from a neighbour only by case."""
        target = change.target
        parts = target.split("/")
        for i, part in enumerate(parts):
            base = "".join(p + "/" for p in parts[:i])
            here = base + part
            last = i == len(parts) - 1
            if not last and cat.is_file(here):
                raise InvalidPath(f"path {target!r} puts a file under {here!r}, which is a file, not a folder; pick another path", path=target)
            if last and cat.is_folder(here + "/"):
                raise InvalidPath(f"path {target!r} is a folder of topic files; pick another name", path=target)
            if cat.is_file(here) if last else cat.is_folder(here + "/"):
                continue  # an existing name is itself
            clash = cat.clash(base, part)
            if clash is not None:
                raise InvalidPath(
                    f"path {target!r}: {base + clash!r} already exists and differs only by case; use that exact name or pick another",
                    path=target,
                )

    def _sync_catalog(self) -> Catalog:
        return self._sync()[0]

    def _view_catalog(self) -> Catalog:
        """The catalog as this view sees it: the whole one, or only what the scope can read."""
        cat = self._sync_catalog()
        if self._scope is None:
            return cat
        key = (self._state.generation, cat.seq)
        if self._scoped is None or self._scoped[0] != key:
            view = Catalog()
            for prefix in self._scope.read:
                for entry in cat.walk(prefix):
                    view.put(entry)
            view.seq = cat.seq
            self._scoped = (key, view)
        return self._scoped[1]

    def _sync(self) -> tuple[Catalog, set[str]]:
        """Load or catch up the catalog; returns it and the paths changed since the last call."""
        cat = self._state.catalog
        if cat is None:
            cat = Catalog()
            with gc_paused():
                seq, changes = self._store.changes(0)
                cat.load(entry for _, entry in changes if entry is not None)
            cat.seq = seq
            self._state.catalog = cat
            derived = self._store.derived()
            if derived < seq or self.recovered:  # the index files lag behind the catalog
                with self._store.lock():
                    self._derive(full=not derived or bool(self.recovered),
                                 since=None if not derived else {p for p, _ in self._store.changes(derived)[1]})
            return cat, set()
        seq, changes = self._store.changes(cat.seq)
        for path, entry in changes:
            if entry is None:
                cat.remove(path)
            else:
                cat.put(entry)
        cat.seq = seq
        return cat, {p for p, _ in changes}

    def _partial(self) -> Catalog | None:
        """Where this process has not loaded the catalog: the store's folder totals, read as far as a
        check or a render needs them (store lock held). None: load the catalog instead."""
        state = self._state
        totals = getattr(self._store, "totals", None)
        if state.catalog is not None or state.stale or self.recovered or totals is None or not self._store.derived():
            return None  # loaded already, a store without totals, or index files to render from scratch
        return Partial(totals, 0, self.limits.index_max_lines + 2)

    def _render(self, cat: Catalog, folder: str) -> tuple[str, builtins.list[str]]:
        """Render one folder's index."""
        text, links = index.render(cat, folder, self.limits.index_max_lines, self.limits.index_max_bytes)
        if self._scope is None:
            self._views[folder] = (self._state.generation, cat.seq, text)
        return text, links

    def _refresh(self, full: bool = False) -> None:
        """Rewrite the index files the latest changes touched (call with the store lock held).

        Only the root and the linked folders on the changed paths are rendered,
        and each render is bounded by the caps. What is on disk for the others
        is trusted (a new process learns it from the files when it needs it).
        """
        partial = None if full else self._partial()
        if partial is not None:  # a process that has not loaded the catalog: the changes since the index files
            derived = self._store.derived()
            partial.seq, since = self._store.changes(derived)
            if since:
                self._reindex(partial, {p for p, _ in since})
            return
        cat, changed = self._sync()
        if full:
            self._refresh_all(cat)
        elif changed:
            self._reindex(cat, changed)

    def _reindex(self, cat: Catalog, changed: set[str]) -> None:
        touched = {a for p in changed for a in paths.ancestors(p)}
        if cat.seq - self._state.derived != self._state.mine:
            self._state.written = {}  # another writer came in between: learn the index files from disk again
        self._state.mine = 0
        written = self._state.written
        rendered: set[str] = set()
        files: dict[str, bytes | None] = {}

        def known(f: str) -> tuple[str, builtins.list[str]] | None:
            prev = written.get(f)
            if prev is None:
                blob = self._store.get(f + INDEX_NAME)
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
            text, links = written[f] = self._render(cat, f)
            rendered.add(f)
            if old is None or old[0] != text:
                files[f + INDEX_NAME] = text.encode()
            before = set() if old is None else set(old[1])
            stack.extend(sub for sub in links if sub in touched or sub not in before)
            for sub in before.difference(links):
                drop(sub)
        self._store.derive(files, cat.seq)
        self._state.derived = cat.seq

    def _refresh_all(self, cat: Catalog) -> None:
        """Render every index file from the catalog and remove stray ones."""
        rendered: dict[str, tuple[str, builtins.list[str]]] = {}
        stack = [""]
        while stack:
            f = stack.pop()
            rendered[f] = self._render(cat, f)
            stack.extend(rendered[f][1])
        files: dict[str, bytes | None] = {f + INDEX_NAME: text.encode() for f, (text, _) in rendered.items()}
        for f in (cat.folders.keys() | self._state.written.keys()) - rendered.keys():
            if self._store.get(f + INDEX_NAME) is not None:
                files[f + INDEX_NAME] = None
        self._state.written = rendered
        self._store.derive(files, cat.seq)
        self._state.derived, self._state.mine = cat.seq, 0

    # ------------------------------------------------------------ reconcile

    def sync(self, changed: Iterable[str] | None = None) -> builtins.list[str]:
        """Catch up with edits made outside memdir (by a person, an editor, another tool).

        Files added, changed or deleted by hand are journaled as `external`
        changes (undo works on them) and the catalog, the indexes and search
        follow. Without `changed`, every file's stat is compared with the
        catalog (the check where no watcher runs); with it (a watcher's
        events), only those paths are looked at. Returns the paths found
        changed, as far as this view may read them.
        """
        with self._writing():
            cat, _ = self._sync()
            if changed is None:
                found: dict[str, str | None] = dict(self._store.list())
                found.update((p, None) for p in cat.entries.keys() - found.keys())
            else:
                found = {}
                for raw in changed:
                    try:
                        p = paths.topic_path(raw)
                    except MemdirError:
                        continue  # MEMORY.md, .memdir/, not markdown: not a topic file
                    blob = self._store.get(p)
                    found[p] = None if blob is None else blob.version
            report = self._external(cat, found, Report(fixed=True), commit=self._commit)
        return sorted(f.path for f in report.findings if f.kind in ("new", "changed", "missing") and self._readable(f.path))

    def _external(self, cat: Catalog, found: dict[str, str | None], report: Report,
                  commit: Callable[[builtins.list[Change]], object] | None) -> Report:
        """Compare stored versions with the catalog; report what differs and, given `commit`,
        journal it as `external` (the one code path for hand edits: reconcile, sync, the watcher)."""
        changes: builtins.list[Change] = []
        now = model.now_stamp()
        for path in sorted(found):
            entry, version = cat.get(path), found[path]
            if (entry.version if entry is not None else None) == version:
                continue
            if version is None:
                report.findings.append(Finding("missing", path, "in the catalog but not on disk"))
                if commit is not None:
                    last = self._store.journal(path, limit=1)
                    old = last[0].new if last and last[0].new is not None else None
                    changes.append(Change(op="external", path=path, data=None, expect=None, old=old,
                                          entry=None, actor=self.actor, time=now, record_only=True))
                continue
            blob = self._store.get(path)
            if blob is None:
                continue
            kind = "new" if entry is None else "changed"
            try:
                mem = self._memory(path, blob)
            except MemdirError as e:
                report.findings.append(Finding("invalid", path, e.message))
                continue
            report.findings.append(Finding(kind, path, "not in the catalog" if entry is None else "changed outside memdir"))
            for problem in self._problems(mem):
                report.findings.append(Finding("invalid", path, problem))
            if commit is not None:
                old = None
                if entry is not None:
                    last = self._store.journal(path, limit=1)
                    old = last[0].new if last else None
                changes.append(Change(op="external", path=path, data=blob.data, expect=blob.version, old=old,
                                      entry=model.entry_of(mem), actor=self.actor, time=now, record_only=True))
        for start in range(0, len(changes), 500):
            assert commit is not None
            commit(changes[start : start + 500])
        return report

    def reconcile(self, fix: bool = False) -> Report:
        """Compare the files with the catalog and the indexes; with fix, repair them.

        Finds files added, changed or removed outside memdir (journaled as
        'external' when fixed), a stale MEMORY.md, and files that break the
        limits or do not parse (reported only: fixing those needs a person).
        """
        if self._scope is not None:
            raise Forbidden("reconcile works on the whole memory; run it without a scope")
        report = Report(fixed=fix)
        with self._writing():
            if fix:
                report.findings += [Finding("repaired", "", n) for n in self._store.recover()]
            report.findings += [Finding("quarantined", "", n) for n in self._store.problems()]
            cat, _ = self._sync()
            found: dict[str, str | None] = dict(self._store.list())
            found.update((p, None) for p in cat.entries.keys() - found.keys())
            self._external(cat, found, report, commit=self._store.commit if fix else None)
            cat, _ = self._sync()
            if self._store.derived() < cat.seq or self._index_stale(cat):
                report.findings.append(Finding("index", INDEX_NAME, "MEMORY.md does not match the catalog"))
            if fix:
                self._refresh(full=True)
                self._state.stale = False
        from ..recall import links as links_mod

        report.findings += [Finding("link", path, detail) for path, detail in links_mod.broken(self)]  # once committed
        return report

    def _problems(self, mem: Memory) -> builtins.list[str]:
        out = []
        try:
            meta, _ = model.parse(mem.text, path=mem.path, strict=True)
            limits_mod.check_meta(meta, mem.path, self.limits)
        except MemdirError as e:
            out.append(e.message)
        try:
            limits_mod.check_size(mem.text, mem.path, self.limits)
        except MemdirError as e:
            out.append(e.message)
        return out

    def _index_stale(self, cat: Catalog) -> bool:
        blob = self._store.get(INDEX_NAME)
        if blob is None:
            return len(cat) > 0  # a memory nothing was ever written to has no index yet, and needs none
        text, _ = index.render(cat, "", self.limits.index_max_lines, self.limits.index_max_bytes)
        return blob.data != text.encode()


def type_name(value: object) -> str:
    return type(value).__name__


def _occurrences(text: str, needle: str) -> builtins.list[int]:
    """Start offsets of every (possibly overlapping) occurrence of `needle`."""
    out = []
    at = text.find(needle)
    while at >= 0:
        out.append(at)
        at = text.find(needle, at + 1)
    return out


def _shown(text: str, limit: int = 60) -> str:
    """A quoted, one-line preview of text for an error message."""
    one = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(one)


def _decoded(path: str, blob: Blob) -> str:
    try:
        return blob.data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidMemory(f"{path} is not UTF-8 text (byte {e.start}); memdir stores text only", path=path) from None
