"""The Memdir facade: the only writer, so every interface gets every guarantee.

A write goes: path checks, the size of what was given, the rate limit, then
frontmatter parse and merge, then the planner (`ops.Planner`: schema, limits,
secrets, the version expected, where a path may go), then one store commit
(content, journal and catalog together) under the store's lock, then what is
derived from it: MEMORY.md files (`derived.Derived`) and the search index
(`search.Searcher`). Features that build on memory (context, links, capture,
the diary, history) are functions of their own modules that call this class.
"""

from __future__ import annotations

import builtins
import copy
import datetime as dt
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from .. import dates, model, paths, search
from ..errors import Forbidden, InvalidArgument, InvalidMemory, InvalidPath, MemdirError, NotFound
from ..model import Entry, Memory
from ..search import grep as grepping
from ..search import lexical
from ..search.lexical import Explained, Filter, SearchHit
from ..stores.base import Blob, Change, Record, Store
from . import guard, history, index, ops, reconcile
from . import limits as limits_mod
from .catalog import Catalog
from .derived import Derived
from .index import render as render_index
from .limits import Limits
from .ops import ANY, Op
from .reconcile import Finding, Report
from .scope import Scope

EXPLAIN_MORE = 5  # candidates below the top k that `explain` shows, each with why it is left out


@dataclass(frozen=True)
class Hit:
    """One grep match."""

    path: str
    line: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}


class _State:
    """What every view of one memory shares: the lock, the derived files, the search index, parsed files."""

    PARSED_BYTES = 64 << 20  # parsed files kept for reads, by text size

    def __init__(self, store: Store, limits: Limits, recovered: bool) -> None:
        self.lock = threading.RLock()
        self.derived = Derived(store, limits, recovered)
        self.search = search.Searcher(store, limits.types, self.lock, lambda: self.derived.loaded().seq,
                                      lambda: self.derived.catalog is not None)
        self.parsed: dict[str, Memory] = {}  # path -> the file as last parsed; valid while its version holds
        self.parsed_bytes = 0
        self.commits = 0  # changes committed through this memory
        self.due: Sequence[Record] = ()  # records whose commit made a compaction due (`history.after`)
        self.generation = 0  # bumped when the caches above are dropped

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
        self.search.close()
        self.derived.forget()
        self.parsed, self.parsed_bytes = {}, 0
        self.generation += 1


class Memdir:
    """One tenant's memory. Use `memdir.open()` to get one."""

    def __init__(self, store: Store, limits: Limits, *, actor: str = "library", agent: bool = False) -> None:
        self._store = store
        self.limits = limits
        self.actor = actor
        self.recovered = store.recover()
        self._state = _State(store, limits, bool(self.recovered))
        self._lock = self._state.lock
        self._scope: Scope | None = None
        self._views: dict[str, tuple[int, int, str]] = {}  # folder -> (generation, seq, index text) for this view
        self._scoped: tuple[tuple[int, int], Catalog] | None = None  # the catalog filtered by the scope
        self._agent = agent  # a model writes: its size limits bind, and its rate limit was chosen (limits.check_size)
        self._owner = True  # views (scope, for_agent) share the store and never close it
        if self.recovered or self._unfinished():  # an interrupted write is completed: its index files come with it
            with self._lock, store.lock():
                self._state.derived.after()

    # ------------------------------------------------------------ views

    def close(self) -> None:
        """Close the store (a view leaves it open for the memory it came from)."""
        if self._owner:
            self._state.search.close()
            search.close_layers(self)
            self._store.close()

    def scope(self, read: Iterable[str] | str = (), write: Iterable[str] | str = ()) -> Memdir:
        """A view for one principal: it sees only `read` (and `write`) folders and writes only `write`.

        `md.scope(read=["household/"], write=["people/alice/"])`. A view of a
        view gets the intersection. Views share the store and the catalog.
        """
        wanted = Scope.of(read, write)
        view = self._view()
        view._scope = wanted if self._scope is None else self._scope.narrow(wanted)
        return view

    def for_agent(self, *, rate: bool = True) -> Memdir:
        """This memory as an interface a model drives uses it: rate limited by default, files kept small.

        Tools, the memory tool, MCP and HTTP call this, so a `Memdir` opened for
        a person gets the agent limit (60 writes a minute, shared by every process
        of the tenant) unless `writes_per_minute` was set, and its writes keep to
        `max_lines` and `max_bytes`; open with `agent=True` to choose the agent
        limit yourself (0 turns it off). `rate=False` keeps the rate limit as it
        is (what memdir writes itself from a model's words: capture).
        """
        if self._agent:
            return self
        view = self._view()
        view._agent = True
        if rate and not view.limits.writes_per_minute:
            view.limits = replace(view.limits, writes_per_minute=limits_mod.AGENT_DEFAULTS["writes_per_minute"])
        return view

    def prepaid(self, what: str) -> Memdir:
        """Take one write's token from the rate bucket now (`RateLimited`, naming `what`, when none is left) and
        return a view whose writes take no more: work that costs far more than its write (a capture over HTTP
        parses and redacts a whole transcript) pays before it starts, and all of its writes count as one."""
        if not self.limits.writes_per_minute:
            return self
        ops.take(self._store, what, self.limits)
        view = self._view()
        view.limits = replace(view.limits, writes_per_minute=0)
        return view

    def as_person(self) -> Memdir:
        """This memory as a person writes it (the web page): files are kept whole up to `max_file_bytes`
        instead of the agent's `max_lines` and `max_bytes`; the rate limit stays as it is."""
        if not self._agent:
            return self
        view = self._view()
        view._agent = False
        return view

    def acting(self, actor: str) -> Memdir:
        """This memory writing under another name in the journal (a sync landing another machine's changes)."""
        view = self._view()
        view.actor = actor
        return view

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold this memory's locks (this process's and the store's) across several calls, so no other writer
        comes between them: a sync's commit, merge and the writes it lands. The calls inside take them again."""
        with self._writing():
            yield

    def _view(self) -> Memdir:
        view = copy.copy(self)
        view._owner, view._views, view._scoped = False, {}, None
        return view

    @property
    def principal(self) -> Scope | None:
        """The scope of this view, or None for the whole tenant."""
        return self._scope

    @property
    def store(self) -> Store:
        return self._store

    def __enter__(self) -> Memdir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ reading

    def read(self, path: str) -> Memory:
        """The topic file at `path`, with its version for a later `expect=` (as it was then: `memdir.read_as_of`)."""
        p, blob = self._blob(path)
        return self._memory(p, blob)

    def read_text(self, path: str) -> tuple[str, str, str]:
        """(path, text, version) of a topic file: `read` without parsing the frontmatter, for a face that only shows it."""
        p, blob = self._blob(path)
        hit = self._state.parsed.get(p)
        if hit is not None and hit.version == blob.version and blob.version:
            return p, hit.text, hit.version
        return p, _decoded(p, blob), blob.version

    def list(self, prefix: str = "") -> list[Entry]:
        """Catalog entries under a folder (or the one file), sorted by path."""
        with self._lock:
            cat = self._catalog()
            if prefix.endswith(".md"):
                e = cat.get(paths.topic_path(prefix))
                return [e] if e else []
            return sorted(cat.walk(paths.folder(prefix)), key=lambda e: e.path)

    def count(self, prefix: str = "") -> int:
        """How many topic files this view sees under a folder, without listing them."""
        folder = paths.folder(prefix)
        with self._lock:
            totals = getattr(self._store, "totals", None)
            if self._scope is None and self._state.derived.catalog is None and totals is not None:
                row = totals.folder(folder)  # a process that has not loaded the catalog reads one row
                return 0 if row is None else row.count
            node = self._catalog().folders.get(folder)
            return 0 if node is None else node.count

    def entries(self, wanted: Iterable[str]) -> dict[str, Entry]:
        """Catalog entries of the given paths that this view can read (one catalog sync for all)."""
        with self._lock:
            cat = self._catalog()
            return {p: e for p in wanted if (e := cat.get(p)) is not None}

    def index(self, folder: str = "") -> str:
        """The MEMORY.md text of the root or of one folder (collapsed or not), as the next write leaves it.

        With the notes someone keeps in the file beside memdir's region; a scoped view gets the index of
        what it may read, and no notes.
        """
        f = paths.folder(folder)
        with self._lock:
            derived = self._state.derived
            if self._scope is None and (stored := derived.stored(f)) is not None:
                return stored
            cat = self._catalog()
            if f and f not in cat.folders:
                raise NotFound(f"no memories under {f}; `memdir ls` shows the folders that exist", path=f)
            if self._scope is None:
                return derived.render(cat, f, derived.on_disk(f))[0]
            view = self._views.get(f)
            if view is None or view[:2] != (self._state.generation, cat.seq):
                text, _ = render_index(cat, f, self.limits.index_max_lines, self.limits.index_max_bytes)
                view = self._views[f] = (self._state.generation, cat.seq, text)
            return view[2]

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

    # ------------------------------------------------------------ finding

    def grep(self, pattern: str, *, prefix: str = "", ignore_case: bool = True, fixed: bool = False) -> builtins.list[Hit]:
        """Lines matching a regular expression (or a fixed string) in every topic file under `prefix`.

        Linear time whatever the pattern (RE2); the texts come from the search
        index, filtered there by the literal strings a match needs.
        """
        pattern_ = grepping.compile(pattern, ignore_case=ignore_case, fixed=fixed)
        where = self._filter(prefix)
        searcher = self._state.search
        with searcher.lock:
            texts = builtins.list(searcher.index().texts(where, pattern_.needles, pattern_.ignore_case))
        return [Hit(path, number, line) for path, number, line in pattern_.scan(texts)]

    def search(self, query: str, *, k: int = 10, mode: str = "auto", prefix: str = "",
               types: Iterable[str] | str = (), since: Any = None, cover: float | None = None) -> builtins.list[SearchHit]:
        """The `k` topic files that best match `query`, best first, each with the lines to read first.

        Only files under `prefix` that this view may read are ranked (the
        filter is inside the index's query), of the given `types` and updated
        on or after `since`. `mode` is lexical, semantic, hybrid or auto
        (lexical unless the semantic layer is installed and says otherwise).
        Every candidate is ranked; each hit says how sure it is
        (`confidence`, and `sure` when it holds `cover` of the query's weight,
        default `search.COVER`, or its meaning is close enough: see
        `search/confidence.py`). What is shown to a model unasked takes only
        the sure hits. Records of past work rank below topic files unless the
        query asks about the past.
        """
        if not isinstance(query, str):
            raise InvalidArgument(f"query must be text, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidArgument(f"k must be a positive integer, got {k!r}")
        if mode not in search.MODES:
            raise InvalidArgument(f"mode must be one of {', '.join(search.MODES)}; got {mode!r}")
        parsed = search.parse(query)
        where = self._filter(prefix, types, since)
        searcher = self._state.search
        bar = search.COVER if cover is None else cover
        if isinstance(bar, bool) or not isinstance(bar, int | float) or not 0 <= bar <= 1:
            raise InvalidArgument(f"cover must be a share of the query between 0 and 1, got {cover!r}")
        if mode in ("semantic", "hybrid") or (mode == "auto" and search.semantic_ready(self)):
            found: builtins.list[SearchHit] = search.semantic_layer(mode).search(self, searcher, query, k=k, mode=mode,
                                                                                 where=where, cover=bar)
            return found
        if not parsed:
            return []
        past = search.asks_about_past(query)
        asked = (search.parse(search.without_past(query)) or parsed) if past else parsed
        with searcher.lock:
            top = lexical.top(searcher.index(), parsed, k, where, past=past, asked=asked)
        return lexical.hits(top, parsed, bar)

    def explain(self, query: str, *, k: int = 10, mode: str = "auto", prefix: str = "",
                types: Iterable[str] | str = (), since: Any = None, cover: float | None = None) -> Explained:
        """`search`, with the signals that scored each hit (per-field BM25, feedback, neighbours, the share
        of the query held, cosine, the history penalty), why a hit is not sure, and the next `EXPLAIN_MORE`
        candidates below the top `k` with why they are left out: the tool to tune a ranking with."""
        found = self.search(query, k=k + EXPLAIN_MORE, mode=mode, prefix=prefix, types=types, since=since,
                            cover=cover)
        parsed = search.parse(query)
        searcher = self._state.search
        with searcher.lock:
            fields = searcher.index().fields(parsed.words, [h.path for h in found], self._filter(prefix, types, since))
        for place, hit in enumerate(found, 1):
            if hit.signals is None:
                continue
            hit.signals.fields = fields.get(hit.path)
            if place > k:
                below = f"ranked {place}, below the top {k}"
                hit.signals.why = f"{below}; {hit.signals.why}" if hit.signals.why else below
        return Explained(query, mode, found[:k], found[k:])

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the search index from the files; returns how many files it holds."""
        if self._scope is not None:
            raise Forbidden("reindex works on the whole memory; run it without a scope")
        with self._lock:
            return self._state.search.rebuild(self._state.derived.loaded().seq, progress)

    def _filter(self, prefix: str = "", types: Iterable[str] | str = (), since: Any = None) -> Filter:
        """What this view may see under `prefix`: the filter every index query carries."""
        where = paths.folder(prefix)
        if self._scope is None:
            prefixes = [where]
        else:  # the readable part of `where`
            prefixes = [where if where.startswith(r) else r for r in self._scope.read
                        if where.startswith(r) or r.startswith(where)]
        kinds = (types,) if isinstance(types, str) else tuple(types)
        if not all(isinstance(t, str) and t for t in kinds):
            raise InvalidArgument(f"types must be type names such as 'feedback', got {types!r}")
        return Filter(tuple(prefixes), kinds, search.since_of(since))

    # ------------------------------------------------------------ writing

    def write(self, path: str, body: str, *, name: str | None = None, description: str | None = None,
              type: str | None = None, tags: Sequence[str] | str | None = None, expect: Any = ANY,
              absolute_dates: bool = True) -> Memory:
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
        self._planner().writable(p)
        ops.bound(p, body, self.limits, agent=self._agent)  # bounds first, then the rate, then parsing
        ops.take(self._store, p, self.limits)
        given, text_body = model.parse(body, path=p, strict=True)
        fields: dict[str, Any] = {}  # what the keywords set; None removes the key
        for key, value in (("name", name), ("description", description), ("type", type)):
            if value is not None:
                fields[key] = value if value not in ops.CLEARS else None
        if tags is not None:
            fields["tags"] = builtins.list(model.tags_of(builtins.list(tags) if not isinstance(tags, str) else tags)) or None
        with self._writing():
            cur = self._store.get(p)
            ops.check_expect(p, cur, expect)
            old = "" if cur is None else cur.data.decode("utf-8", "replace")
            old_meta, old_body = model.parse(old, path=p, strict=True)  # a broken block is refused, never dropped
            if absolute_dates:  # only the body part: the frontmatter stays as written
                body = body[: len(body) - len(text_body)] + _dated(text_body, old_body)
            if model.split(body, path=p)[0] is not None:  # the body brings its own frontmatter, as written
                kept = {k: v for k, v in old_meta.items() if k not in given and k not in model.STAMPS}
                text = model.set_fields(body, {**kept, **fields}, path=p)
            else:  # a new body under the old frontmatter lines
                text = model.set_fields(model.with_body(old, body, path=p), fields, path=p)
            return self._land([Op.write(p, text, expect=ops.version_of(cur))], take=False)[0]

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
        self._planner().writable(p)
        with self._writing():
            cur = self._store.get(p)
            if cur is None:
                raise NotFound(f"{p} does not exist; create it with a write first", path=p)
            ops.check_expect(p, cur, expect)
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
            changed = text[: starts[0]] + new + text[starts[0] + len(old):]
            ops.bound(p, changed, self.limits, agent=self._agent)
            ops.take(self._store, p, self.limits)
            if model.moves_frontmatter(text, changed):
                raise InvalidArgument(
                    f"{p}: this edit would turn the frontmatter (lines 1-{model.head_lines(text)}) into body text; "
                    "keep its '---' lines at the top, or remove the whole block", path=p,
                )
            return self._land([Op.write(p, changed, expect=cur.version)], take=False)[0]

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
        self._planner().writable(p)
        now = dt.datetime.now(dt.UTC)
        entry = f"- [{now.strftime('%Y-%m-%d %H:%M')}] {dates.absolute(text, now.date())}\n"
        ops.bound(p, entry, self.limits, agent=self._agent)
        with self._writing():
            cur = self._store.get(p)
            ops.take(self._store, p, self.limits)
            text = "" if cur is None else self._memory(p, cur).text
            model.parse(text, path=p, strict=True)  # a broken block is refused, never buried
            if text and not text.endswith("\n"):
                text += "\n"
            return self._land([Op.write(p, text + entry, expect=ops.version_of(cur))], take=False)[0]

    def keep_notes(self, notes: str, folder: str = "", *, replace: bool = False) -> bool:
        """Keep `notes` (what a person or another tool wrote in a MEMORY.md) byte for byte in the folder's
        MEMORY.md, beside memdir's marked index region: how an import brings Claude Code's hand-kept notes.

        False when they are there already; `Conflict` when the file keeps other notes, unless `replace`
        (a sync landing the notes as merged; empty notes then remove them); the secret guard holds as for
        a topic file.
        """
        f = paths.folder(folder)
        if not isinstance(notes, str):
            raise InvalidArgument(f"{f}{paths.INDEX_NAME}: notes must be text, got {type_name(notes)}")
        if self._scope is not None:
            raise Forbidden(f"{f}{paths.INDEX_NAME}: a scoped principal cannot keep notes in an index; ask the owner")
        if self.limits.secret_guard:
            guard.check(notes, f + paths.INDEX_NAME)
        with self._writing():
            return self._state.derived.keep(f, notes, replace=replace)

    def apply(self, ops_: Sequence[Op]) -> builtins.list[Memory]:
        """Several writes, deletes and renames committed at once: all of them land, or none.

        Each op is checked like its single-file method (paths, scope, schema,
        limits, secrets, `expect`) before anything is written; the batch is one
        store commit under the store's lock, so a concurrent batch touching the
        same files fails with `Conflict` instead of half-applying. Writes whose
        text is already there are skipped ("unchanged"). It counts as one write
        against the rate limit.
        """
        with self._writing():
            return self._land(ops_)

    def delete(self, path: str, *, expect: Any = ANY) -> Memory:
        """Delete a topic file; returns what was deleted (undo brings it back)."""
        return self.apply([Op.delete(path, expect=expect)])[0]

    def rename(self, old: str, new: str, *, expect: Any = ANY) -> Memory:
        """Move a topic file to a new path; the target must not exist. `expect` as for `write`."""
        return self.apply([Op.rename(old, new, expect=expect)])[0]

    def undo(self, path: str) -> Memory:
        """Revert the last journaled change to `path` as a new change (so it has a new version).

        Undoing an undo redoes. Refuses (Conflict) if the file changed since that change.
        """
        p = paths.topic_path(path)
        planner = self._planner()
        planner.writable(p)  # before the journal is read, so the refusal says nothing of what exists
        with self._writing():
            change, target, result = planner.undo(p)
            ops.take(self._store, target, self.limits)
            done = self._commit([change])[0]
            if change.data is None:
                assert change.old is not None
                return self._memory(p, Blob(change.old, change.expect or ""), change=result)
            return self._memory(target, Blob(change.data, done.new_version or ""), change=result)

    def rewrite(self, plan: Callable[[], tuple[Sequence[Change], Mapping[int, Record | None]]], *,
                same: bool = False) -> builtins.list[Record]:
        """Rewrite the past: commit the changes `plan()` returns (asked under the memory's locks) and replace or drop
        the journal records it names (`Store.rewrite`): what forgetting, redaction and compaction do. Every path
        they touch must be writable by this view. Unless `same` (the records keep their content: compaction),
        every cache of the memory is dropped after, so no copy of what was rewritten stays in this process."""
        with self._writing():
            changes, edits = plan()
            if self._scope is not None:
                dropped = [r for r in self._store.journal() if r.seq in edits] if None in edits.values() else []
                touched = {p for r in [*(r for r in edits.values() if r is not None), *dropped] for p in (r.path, r.dest)}
                for path in sorted(p for p in touched | {p for c in changes for p in (c.path, c.target)} if p):
                    if not self._scope.can_read(path):  # named only if this view may see it
                        raise Forbidden("this rewrite reaches journal records outside what this principal may read; "
                                        "ask a principal whose scope covers the whole memory")
                    self._scope.check_write(path)
            self._state.commits += 1
            records = self._store.rewrite(edits, changes)
            self._state.derived.committed(len(records))
            self._state.search.committed(changes, records)
            if not same:
                self._state.forget()
                search.close_layers(self)
            return records

    def scrub(self) -> builtins.list[str]:
        """Leave no byte of deleted content readable: the search index caught up and merged, the vectors of text
        that is gone dropped, the store's files vacuumed; one line for each place that could not be emptied now."""
        with self._lock:
            with self._store.lock():
                current = {e.path: e.version for e in self._state.derived.loaded().walk("")}
                notes = self._state.search.scrub()
            return notes + search.scrub_vectors(self._store, current) + self._store.scrub()  # VACUUM: outside a transaction

    # ------------------------------------------------------------ hand edits

    def sync(self, changed: Iterable[str] | None = None, *, with_index: bool = False) -> builtins.list[str]:
        """Catch up with edits made outside memdir (by a person, an editor, another tool).

        Files added, changed or deleted by hand are journaled as `external`
        changes under the actor `external:<the file's owner>` (undo works on
        them) and the catalog, the indexes and search follow. Without `changed`, every file's stat is compared with the
        catalog (the check where no watcher runs); with it (a watcher's
        events), only those paths are looked at. The MEMORY.md files follow the
        next write, or now `with_index` (a git sync, which commits them).
        Returns the paths found changed, as far as this view may read them.
        """
        with self._writing():
            cat = self._state.derived.loaded()
            found = reconcile.found(self._store, cat, changed)
            report, changes = reconcile.external(self._store, cat, found, self._memory)
            for start in range(0, len(changes), 500):
                self._commit(changes[start : start + 500], derive=False)  # journaled; MEMORY.md follows the next write
            if with_index:
                self._state.derived.after()
        return sorted(f.path for f in report.findings if f.kind in ("new", "changed", "missing") and self._readable(f.path))

    def reconcile(self, fix: bool = False) -> Report:
        """Compare the files with the catalog and the indexes; with fix, repair them.

        Finds files added, changed or removed outside memdir (journaled as
        'external' when fixed), a stale MEMORY.md, and files a write would
        refuse as they are: frontmatter broken by hand (with its line), the
        schema, the size ceiling (reported only: fixing those needs a person);
        files kept whole but longer than an agent may write are notices ('long').
        """
        if self._scope is not None:
            raise Forbidden("reconcile works on the whole memory; run it without a scope")
        derived = self._state.derived
        with self._writing():
            repaired = [Finding("repaired", "", n) for n in self._store.recover()] if fix else []
            quarantined = [Finding("quarantined", "", n) for n in self._store.problems()]
            cat = derived.loaded()
            versions = reconcile.found(self._store, cat)
            report, changes = reconcile.external(self._store, cat, versions, self._memory)
            known = {f.path for f in report.findings if f.kind == "invalid"}
            report = Report(repaired + quarantined + report.findings
                            + reconcile.checked(self._store, versions, self._parsed, self.limits, known), fixed=fix)
            for start in range(0, len(changes), 500) if fix else ():
                self._store.commit(changes[start : start + 500])
            if derived.is_stale(derived.loaded()):
                report.findings.append(self._index_finding(derived.on_disk("")))
            if fix:
                derived.refresh(full=True)
                derived.stale = False
        return report

    # ------------------------------------------------------------ inside

    def _index_finding(self, text: str | None) -> Finding:
        """A stale MEMORY.md, or (a notice) one memdir has never written: a folder kept by hand or by another
        tool, whose index memdir adds at its first write (a read writes nothing), the notes kept as they are."""
        if self._store.derived() == 0 and (text is None or index.BEGIN not in text):
            if text is None:
                return Finding("unindexed", paths.INDEX_NAME, "there is no MEMORY.md yet: the first write adds it, or "
                               "run `memdir reconcile --fix`")
            return Finding("unindexed", paths.INDEX_NAME, "memdir has not written its index here yet: the first "
                           "write adds it (beside the notes MEMORY.md holds), or run `memdir reconcile --fix`")
        return Finding("index", paths.INDEX_NAME, "MEMORY.md does not match the catalog")

    def _unfinished(self) -> bool:
        """Whether the last change was a write that died before its index files were written (edits made by
        hand and journaled by a read leave them to the next write: a read changes no file). A lazy store (S3
        for a server) is asked nothing at open: its recover() reports a dead writer's change, and index files
        a failed render left behind follow the next write, as the catalog's seq says they lag."""
        if getattr(self._store, "lazy", False):
            return False
        last = self._store.journal(limit=1)
        return bool(last) and last[0].seq > self._store.derived() and last[0].op != "external"

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

    def _blob(self, path: str) -> tuple[str, Blob]:
        p = paths.topic_path(path)
        blob = self._store.get(p) if self._readable(p) else None
        if blob is None and not p.isascii():  # a name typed composed for a file macOS named decomposed, or back
            for form in ("NFD", "NFC"):
                other = unicodedata.normalize(form, p)
                if other != p and self._readable(other) and (blob := self._store.get(other)) is not None:
                    p = other
                    break
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

    def _parsed(self, path: str, blob: Blob) -> Memory:
        """The file parsed and not kept (a check that reads every file once)."""
        hit = self._state.parsed.get(path)
        if hit is not None and hit.version == blob.version and blob.version:
            return hit
        return model.memory(path, _decoded(path, blob), blob.version, self.limits.types)

    def _catalog(self) -> Catalog:
        """The catalog as this view sees it: the whole one, or only what the scope can read."""
        cat = self._state.derived.loaded()
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

    def _planner(self) -> ops.Planner:
        return ops.Planner(self._store, self.limits, self.actor, self._scope, self._memory, self._agent)

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
            due, self._state.due = self._state.due, ()
            history.after(self._store, due)  # in a transaction of its own: it can never undo the write

    def _land(self, batch: Sequence[Op], *, take: bool = True) -> builtins.list[Memory]:
        """Plan and commit a batch (both locks held): one store commit, one token from the rate bucket."""
        planner = self._planner()
        planned = [planner.plan(op) for op in batch]
        changes = [c for c, _ in planned if c is not None]
        records: Iterator[Record] = iter(())
        if changes:
            if take:
                ops.take(self._store, changes[0].target, self.limits)
            records = iter(self._commit(changes))
        out = []
        for change, mem in planned:
            if change is not None:
                mem = replace(mem, version=next(records).new_version or "")
                if change.data is not None and mem.version:
                    self._state.keep(replace(mem, meta=dict(mem.meta), change=""))  # a read next parses nothing
            out.append(mem)
        return out

    def _commit(self, changes: builtins.list[Change], *, derive: bool = True) -> builtins.list[Record]:
        """Commit under the held store lock, then bring the derived files along (MEMORY.md unless `derive` is False).

        Past the store's commit the change has happened, so nothing after it raises:
        derived files that cannot be written are marked stale and rebuilt later.
        """
        placed = [c for c in changes if ops.places(c)]
        if placed:  # an update in place needs no catalog here
            cat = self._state.derived.for_checks()
            for change in placed:
                ops.check_place(change, cat)
        self._state.commits += 1
        records = self._store.commit(changes)
        self._state.derived.committed(len(records), derive=derive)
        self._state.search.committed(changes, records)
        self._state.due = records if history.due(records) else ()
        return records


def _dated(body: str, old: str) -> str:
    """`body` with relative dates resolved against today in the lines this write brings, and only those:
    a line the file already held keeps its words (an imported note's "a few weeks ago" meant its own date)."""
    resolved = dates.absolute(body, dt.datetime.now(dt.UTC).date())
    if resolved == body or not old:
        return resolved
    kept = set(old.split("\n"))
    return "\n".join(a if a in kept else b for a, b in zip(body.split("\n"), resolved.split("\n"), strict=True))


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


__all__ = ["ANY", "Finding", "Hit", "Memdir", "MemdirError", "Op", "Report"]
