"""Bounded history: the journal packed (a version as the lines it changed, or compressed) and thinned by age.

Every change keeps the content before and after it, so undo, `log -p`,
as-of reads and rollback can reach any version. Left alone that grows with
every write (a 16 KB file rewritten 300 times held 13.8 MB). Compaction packs
the journal (`stores.packing`) and applies the retention setting,
`[history]` in memdir.toml (or MEMDIR_HISTORY_DAYS, MEMDIR_HISTORY_VERSIONS):

    [history]
    days = 30      # every version of the last 30 days is kept
    versions = 10  # of the older ones, each file keeps its newest 10

A file's newest change is always kept (undo needs it). Where versions were
dropped, the newest dropped change stays as a record without content, op
`thinned`, so undo, `log -p`, as-of reads and rollback say the version is
gone rather than that it never was.

Compaction runs by itself after the commit that crosses a multiple of
`EVERY` journal records, over the files the last `EVERY` changes touched, in
a transaction of its own after the write's (so it can never undo a write);
`compact(store)` runs it over the whole journal (`memdir compact`, which
`--dry-run` shows first).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import model
from ..errors import InvalidArgument, MemdirError
from ..stores.base import Record, Store
from ..stores.locations import config_file

log = logging.getLogger(__name__)
EVERY = 64  # journal records between compactions
VACUUM_BELOW = 16 << 20  # a SQLite file this small is vacuumed after a compaction
THINNED = "thinned"  # the op of a change whose content (and the older versions') retention dropped


@dataclass(frozen=True)
class Retention:
    """How long past versions are kept: every one younger than `days`, and each file's newest `versions` of the older."""

    days: int = 30
    versions: int = 10

    @classmethod
    def load(cls, store: Store, environ: Mapping[str, str] | None = None) -> Retention:
        environ = os.environ if environ is None else environ
        values: dict[str, int] = {}
        cfg = config_file(store)
        if cfg is not None:
            import tomllib

            try:
                table = tomllib.loads(cfg.read_text(encoding="utf-8")).get("history", {})
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
                raise InvalidArgument(f"{cfg}: not valid TOML ({e}); fix or remove the file") from None
            for key, value in (table if isinstance(table, dict) else {}).items():
                if key not in ("days", "versions"):
                    raise InvalidArgument(f"{cfg} [history]: unknown setting {key!r}; known: days, versions")
                values[key] = _count(value, f"{cfg} [history] {key}")
        for key in ("days", "versions"):
            env = f"MEMDIR_HISTORY_{key.upper()}"
            if environ.get(env):
                values[key] = _count(environ[env], env)
        return cls(**values)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise InvalidArgument(f"{where} = {value!r} is not valid; use a whole number (0 keeps none)")
    return int(value)


def due(records: Sequence[Record]) -> bool:
    """Whether these just-committed records crossed a multiple of `EVERY` (one process of many compacts)."""
    return bool(records) and (records[0].seq - 1) // EVERY != records[-1].seq // EVERY


def thin(journal: Iterable[Record], retention: Retention, now: dt.datetime) -> dict[int, Record | None]:
    """The rewrite that applies `retention` to these records (all of each file's): every record kept, repacked;
    the dropped ones None, the newest dropped of each file a `thinned` record without content."""
    cutoff = (now - dt.timedelta(days=retention.days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    by_path: dict[str, list[Record]] = {}
    records = {r.seq: r for r in journal}
    for rec in records.values():
        for p in {rec.path, rec.dest or rec.path}:
            by_path.setdefault(p, []).append(rec)
    keep: set[int] = set()
    stub: dict[int, str] = {}
    for p, recs in by_path.items():
        recs.sort(key=lambda r: r.seq, reverse=True)
        old = [r for r in recs[1:] if r.time < cutoff]  # the newest change of a file is never old
        kept = {r.seq for r in [r for r in old if r.op != THINNED][: retention.versions]}
        keep.update(r.seq for r in recs if r.time >= cutoff or r is recs[0])
        keep.update(kept)
        dropped = [r for r in old if r.seq not in kept]
        if dropped:
            stub[dropped[0].seq] = p
    out: dict[int, Record | None] = {}
    for seq, rec in records.items():
        if seq in keep:
            out[seq] = rec
        elif seq in stub:
            out[seq] = replace(rec, op=THINNED, path=stub[seq], dest=None, old=None, new=None, undoes=None)
        else:
            out[seq] = None
    return out


@dataclass(frozen=True)
class Compaction:
    """What a compaction kept and dropped: journal records, and per file the versions whose content went."""

    kept: int
    dropped: int
    files: dict[str, int]  # path -> versions dropped or left as a `thinned` record without content
    retention: Retention
    done: bool

    def to_dict(self) -> dict[str, Any]:
        return {"kept": self.kept, "dropped": self.dropped, "files": self.files, "days": self.retention.days,
                "versions": self.retention.versions, "done": self.done}


def compact(store: Store, paths: Iterable[str] | None = None, *, retention: Retention | None = None,
            now: dt.datetime | None = None, dry_run: bool = False) -> Compaction:
    """Pack and thin the history of `paths` (every file's without them); `dry_run` only says what would go."""
    retention = retention or Retention.load(store)
    when = now or dt.datetime.strptime(model.now_stamp(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    with store.lock():
        if paths is None:
            journal = store.journal()
        else:
            found: dict[int, Record] = {}
            for p in set(paths):
                found.update((r.seq, r) for r in store.journal(p))
            journal = list(found.values())
        edits = thin(journal, retention, when)
        if edits and not dry_run:
            store.rewrite(edits)
    if edits and not dry_run and _small(store):
        store.scrub()  # a small database is vacuumed: the rows packed smaller leave no half-empty pages behind
    files: dict[str, int] = {}
    for rec in journal:
        if rec.op != THINNED and (edits.get(rec.seq, rec) is None or getattr(edits.get(rec.seq), "op", "") == THINNED):
            files[rec.dest or rec.path] = files.get(rec.dest or rec.path, 0) + 1
    dropped = sum(1 for r in edits.values() if r is None)
    return Compaction(len(journal) - dropped, dropped, dict(sorted(files.items())), retention, not dry_run)


def _small(store: Store) -> bool:
    """Whether the store's SQLite file is small enough to vacuum after each compaction (a large one waits for
    `memdir forget --scrub`)."""
    internal, path = getattr(store, "internal", None), getattr(store, "path", None)
    db = internal / "memdir.db" if internal is not None else path
    try:
        return db is not None and os.stat(db).st_size <= VACUUM_BELOW
    except OSError:
        return False


def after(store: Store, records: Sequence[Record]) -> None:
    """After a commit: when due, compact the files the last `EVERY` changes touched; a failure is logged, never raised
    (the write it follows has happened)."""
    if not due(records):
        return
    try:
        recent = store.journal(limit=EVERY + len(records))
        compact(store, {p for r in recent for p in (r.path, r.dest) if p})
    except (MemdirError, OSError) as e:
        log.warning("memdir: could not compact the history (%s); the next compaction tries again", e)
