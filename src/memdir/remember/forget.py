"""Forgetting on request: erase a memory, redact a string everywhere, drop a tenant.

memdir keeps every change with its content, so deleting a file forgets
nothing. These are the ways to forget for good:

- `erase(md, path)`: the file, every journal version of it, every other name
  it had (a rename, a supersede into `archive/`, a roll-up into
  `archive/sessions/`), the diary files rolled up from it, its rows in the
  search index and its vectors. What remains is one journal record per name,
  op `forget`, saying who forgot it and when, with no content. No undo.
- `redact(md, pattern)`: every occurrence of a string (or a regular
  expression) replaced in every current file, every journal version, the
  indexes built from them; reports where it was.
- `drop_tenant(location, tenant)`: every byte of a tenant: its rows in every
  table, its objects, its folder, its local caches.

Each ends with `Memdir.scrub`, so a deleted row leaves no byte in a SQLite
file's free pages or write-ahead log. `docs/forgetting.md` lists every place a
memory's bytes live and what empties each.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import re2

from .. import model, paths
from ..core.memdir import Memdir
from ..core.scope import Scope
from ..errors import Forbidden, InvalidArgument, InvalidMemory, NotFound
from ..search import open_index, vector_files
from ..search.fts import cache_folder
from ..stores import s3shared
from ..stores.base import Change, Record
from ..stores.locations import open_store, scheme_of

FORGET, REDACT = "forget", "redact"  # the journal ops they leave (stores.base.REWRITES)
ROLLUPS = ("diary/", "archive/diary/")  # where roll-ups live: their `folded` names what they were made from
REDACTED = "[redacted]"
MAX_PATTERN = 1000


@dataclass(frozen=True)
class Erasure:
    """What `erase` removed (or, planned, would remove)."""

    path: str
    paths: tuple[str, ...]  # every name erased: the file's, its other names, roll-ups made from it
    records: int  # journal records erased
    rollups: tuple[str, ...] = ()  # of `paths`, the diary files rolled up from it
    done: bool = False
    notes: tuple[str, ...] = ()  # places that could not be scrubbed now
    elsewhere: tuple[str, ...] = ()  # other memories it was merged or superseded into: its text may live there too

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "paths": list(self.paths), "records": self.records, "rollups": list(self.rollups),
                "done": self.done, "notes": list(self.notes), "elsewhere": list(self.elsewhere)}


@dataclass(frozen=True)
class Redaction:
    """Where a redacted string was: current files and journal records (by seq), each with its count."""

    files: dict[str, int] = field(default_factory=dict)
    records: dict[int, int] = field(default_factory=dict)
    done: bool = False
    notes: tuple[str, ...] = ()

    @property
    def found(self) -> int:
        return sum(self.files.values()) + sum(self.records.values())

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "records": {str(k): v for k, v in self.records.items()}, "found": self.found,
                "done": self.done, "notes": list(self.notes)}


# ---------------------------------------------------------------- erase


def lineage(journal: Sequence[Record], start: Iterable[str]) -> set[str]:
    """`start` and every name its files had: paths joined by a rename, either way, as often as it happened."""
    names = set(start)
    moves = [(r.path, r.dest) for r in journal if r.dest is not None]
    grown = True
    while grown:
        grown = False
        for a, b in moves:
            if (a in names) != (b in names):
                names |= {a, b}
                grown = True
    return names


def _folded(md: Memdir, path: str) -> set[str]:
    """The names (file stems) a roll-up says it folded (read through the store: a scoped view must see a roll-up it
    may not read, to refuse rather than leave the text there)."""
    blob = md.store.get(path)
    if blob is None:
        return set()
    try:
        meta = model.parse(blob.data.decode("utf-8", "replace"), path=path, strict=False)[0]
    except (InvalidArgument, InvalidMemory):
        return set()
    folded = meta.get("folded")
    return {str(x) for x in folded} if isinstance(folded, list) else set()


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1][:-3]


def plan(md: Memdir, path: str) -> tuple[Erasure, list[Record]]:
    """What erasing `path` takes: the names, the roll-ups made from it, and the journal records to erase."""
    p = paths.topic_path(path)
    scope = md.principal
    if scope is not None:  # before the journal is read, so the refusal says nothing of what exists
        scope.check_write(p)
        if not scope.can_write(md.store.resolve(p)):
            raise Forbidden(f"{p} leads through a symlink outside what this principal may write; forget it with the "
                            "memory's whole scope", path=p)
    journal = md.store.journal()
    names = lineage(journal, [p])
    if md.store.get(p) is None and not any(r.path in names or r.dest in names for r in journal):
        raise NotFound(f"{p} is not in this memory, now or in its history; `memdir log` lists what was", path=p)
    rollups: set[str] = set()
    while True:  # a day rolled up from a session, its week from the day, the month from the week
        stems = {_stem(n) for n in names}
        found = {q for folder in ROLLUPS for q, _ in md.store.list(folder)
                 if q not in names and _folded(md, q) & stems}
        if not found:
            break
        rollups |= found
        names = lineage(journal, names | found)
    if scope is not None:
        _within(scope, p, names)
    erased = [r for r in journal if r.path in names or r.dest in names]
    into = {m.group(1).strip() for r in erased if r.new for m in [SUPERSEDED_BY.search(_head(r.new))] if m}
    elsewhere = tuple(sorted(t for t in into - names if (scope is None or scope.can_read(t))
                             and md.store.get(t) is not None))
    return Erasure(p, tuple(sorted(names)), len(erased), tuple(sorted(rollups)), elsewhere=elsewhere), erased


def _within(scope: Scope, path: str, names: set[str]) -> None:
    """Refuse an erasure reaching names this principal may not write, naming only those it may read: a scope does
    not reveal what exists outside it."""
    outside = sorted(n for n in names if not scope.can_write(n))
    if not outside:
        return
    seen = [n for n in outside if scope.can_read(n)]
    unseen = len(outside) - len(seen)
    what = ", ".join(seen) + (" and names outside what this principal may read" if seen and unseen else "")
    raise Forbidden(f"{path} cannot be forgotten by this principal: its history reaches "
                    f"{what or 'names outside what this principal may read'} (another name it had, or a roll-up made "
                    "from it), and a forget erases all of them or nothing; ask a principal whose scope covers them",
                    path=path)


SUPERSEDED_BY = re.compile(r"(?m)^superseded_by:[ \t]*['\"]?([^'\"\r\n]+?)['\"]?[ \t]*\r?$")


def _head(data: bytes) -> str:
    """A file's frontmatter block (where `timeline.supersede` names what replaced it), or nothing."""
    text = data[:4096].decode("utf-8", "replace")
    if not text.startswith("---"):
        return ""
    end = text.find("\n---", 3)
    return text[:end] if end > 0 else ""


def erase(md: Memdir, path: str, *, scrub: bool = True) -> Erasure:
    """Forget `path` for good (see the module docstring); the plan is made again under the lock, so what is erased
    is what the memory holds at that moment."""
    found: list[Erasure] = []

    def changes() -> tuple[list[Change], dict[int, Record | None]]:
        erasure, records = plan(md, path)
        found.append(erasure)
        now = model.now_stamp()
        out = []
        for name in erasure.paths:
            blob = md.store.get(name)
            out.append(Change(op=FORGET, path=name, data=None, expect=None if blob is None else blob.version, old=None,
                              entry=None, actor=md.actor, time=now, record_only=blob is None))
        return out, {r.seq: None for r in records}

    md.rewrite(changes)
    notes = tuple(md.scrub()) if scrub else ()
    _drop_links(md)
    return replace(found[-1], done=True, notes=notes)


def _drop_links(md: Memdir) -> None:
    """The link graph a folder keeps (`.memdir/links.json`, names and dates of files) is rebuilt on its next use."""
    internal = getattr(md.store, "internal", None)
    if isinstance(internal, Path):
        (internal / "links.json").unlink(missing_ok=True)


# ---------------------------------------------------------------- redact


def matcher(text: str | None = None, pattern: str | None = None, *, ignore_case: bool = False) -> Any:
    """A compiled RE2 expression (linear time, whatever the pattern) for a literal `text` or a `pattern`."""
    if (text is None) == (pattern is None):
        raise InvalidArgument("give the string to redact or a pattern, one of the two")
    source = re.escape(text) if text is not None else pattern
    if not isinstance(source, str) or not source or len(source) > MAX_PATTERN:
        raise InvalidArgument(f"the string or pattern to redact must be 1 to {MAX_PATTERN} characters")
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    try:
        compiled = re2.compile(source, options)
    except Exception as e:  # noqa: BLE001 - re2 raises its own error type, with the reason as bytes
        reason = e.args[0].decode() if e.args and isinstance(e.args[0], bytes) else str(e)
        raise InvalidArgument(f"pattern {pattern!r} is not a valid expression ({reason}); check it, or give the "
                              "string itself") from None
    if compiled.search("") is not None:
        raise InvalidArgument(f"pattern {pattern!r} matches an empty string, so it would redact everywhere; "
                              "make it match at least one character")
    return compiled


def _scrubbed(data: bytes | None, regex: Any, replacement: bytes) -> tuple[bytes | None, int]:
    if data is None:
        return None, 0
    text = data.decode("utf-8", "surrogateescape")
    new, n = regex.subn(replacement.decode(), text)
    return (new.encode("utf-8", "surrogateescape"), n) if n else (data, 0)


def redact(md: Memdir, text: str | None = None, *, pattern: str | None = None, ignore_case: bool = False,
           replacement: str = REDACTED, dry_run: bool = False, scrub: bool = True) -> Redaction:
    """Replace a string (or what a pattern matches) everywhere memdir keeps it (see the module docstring)."""
    regex = matcher(text, pattern, ignore_case=ignore_case)
    if regex.search(replacement):
        raise InvalidArgument(f"the replacement {replacement!r} holds what it replaces; pick another")
    rep = replacement.encode()
    found: list[Redaction] = []

    def changes() -> tuple[list[Change], dict[int, Record | None]]:
        files: dict[str, int] = {}
        out = []
        now = model.now_stamp()
        for entry in md.list():
            blob = md.store.get(entry.path)
            if blob is None:
                continue
            new, n = _scrubbed(blob.data, regex, rep)
            if n and new is not None:
                files[entry.path] = n
                mem = model.memory(entry.path, new.decode("utf-8", "replace"), "", md.limits.types)
                out.append(Change(op=REDACT, path=entry.path, data=new, expect=blob.version, old=new,
                                  entry=model.entry_of(mem), actor=md.actor, time=now))
        records: dict[int, int] = {}
        edits: dict[int, Record | None] = {}
        for rec in md.store.journal():
            old, a = _scrubbed(rec.old, regex, rep)
            new, b = _scrubbed(rec.new, regex, rep)
            if a or b:
                records[rec.seq] = a + b
                edits[rec.seq] = replace(rec, old=old, new=new)
        found.append(Redaction(files, records))
        return ([], {}) if dry_run else (out, edits)

    md.rewrite(changes)
    if dry_run or not found[-1].found:
        return found[-1]
    notes = tuple(md.scrub()) if scrub else ()
    _drop_links(md)
    return replace(found[-1], done=True, notes=notes)


# ---------------------------------------------------------------- drop a tenant


def drop_tenant(location: str, tenant: str | None, *, memories: Iterable[Callable[[str | None], object]] = ()) -> list[str]:
    """Delete every byte of `tenant` at `location`: its rows in every table, its objects, its folder, and the local
    copies memdir made of it (the S3 search index, the vectors). `memories` are callbacks of what holds tenants open
    (a server's `auth.Memories.let_go`), told first. Returns what was removed, one line each."""

    for let_go in memories:
        let_go(tenant)
    store = open_store(location, tenant, create=False)
    removed = []
    try:
        if not store.journal(limit=1) and not store.list():
            raise NotFound(f"tenant {tenant or 'default'!r} holds nothing at {store.key}; check the name "
                           "(`memdir db tenants URL` lists them)")
        index = open_index(store)
        try:
            drop_index = getattr(index, "drop", None)
            if drop_index is not None:
                drop_index()
        finally:
            index.close()
        vectors = vector_files(store)
        cache = cache_folder(store.key) if scheme_of(location) == "s3" else None
        where = store.key
    except BaseException:
        store.close()
        raise
    store.drop()
    removed.append(f"{where}: deleted")
    for extra in (*vectors, cache):
        if extra is not None and extra.exists():
            shutil.rmtree(extra) if extra.is_dir() else _unlink_db(extra)
            removed.append(f"{extra}: deleted")
    s3shared.forget_tenant(where)
    return removed


def _unlink_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)



__all__ = ["Erasure", "Redaction", "drop_tenant", "erase", "lineage", "plan", "redact"]

