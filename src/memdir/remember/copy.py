"""Copy one tenant between any two locations: files, catalog and journal, resumable and verified.

The copy replays the source journal into the destination, record by record
(same seq, op, actor, time, old and new content), in batches that each
commit atomically. Versions are the destination's own: a version belongs to
the store that issued it. An interrupted copy resumes after the last batch
the destination holds, once it has checked that those records are the
source's. Content the journal does not explain (a folder edited by hand and
never reconciled) is then brought in line as `external` changes. At the end
both sides are listed and every file's SHA-256 compared, and the
destination's MEMORY.md files are rebuilt.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import model
from ..core import limits as limits_mod
from ..core.memdir import Memdir
from ..errors import Conflict, InvalidMemory, NotFound
from ..model import Entry
from ..stores.base import Change, Record, Store, redact
from ..stores.locations import open_store

Progress = Callable[[str, int, int], None]
ACTOR = "memdir copy"


@dataclass(frozen=True)
class CopyReport:
    source: str
    destination: str
    tenant: str | None
    journal: int  # records in the source journal
    replayed: int  # records this run replayed
    resumed_after: int  # records the destination already had
    synced: int  # files brought in line after the replay
    files: int
    bytes: int
    digest: str  # SHA-256 over every (path, SHA-256 of content), sorted by path
    verified: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def summary(self) -> str:
        resumed = f", resumed after {self.resumed_after}" if self.resumed_after else ""
        synced = f", {self.synced} files brought in line" if self.synced else ""
        state = "verified" if self.verified else "NOT verified"
        return (f"copied {self.files} files ({self.bytes:,} bytes) and {self.replayed} journal records "
                f"of {self.journal}{resumed}{synced}; {state}: sha256 {self.digest}")


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _same(a: Record, b: Record) -> bool:
    return (a.seq, a.op, a.path, a.dest, a.actor, a.time, a.undoes, _sha(a.old), _sha(a.new)) == (
        b.seq, b.op, b.path, b.dest, b.actor, b.time, b.undoes, _sha(b.old), _sha(b.new))


def _entry(path: str, data: bytes | None, types: tuple[str, ...]) -> Entry | None:
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
        return model.entry_of(model.memory(path, text, "", types))
    except (UnicodeDecodeError, InvalidMemory):
        return None  # not a memory memdir can index; copied as bytes all the same


def _batches(records: Sequence[Record], size: int) -> list[list[Record]]:
    """Batches in which no path appears twice, so each change's expected version is known before it."""
    out: list[list[Record]] = []
    batch: list[Record] = []
    seen: set[str] = set()
    for rec in records:
        touched = {rec.path} | ({rec.dest} if rec.dest else set())
        if len(batch) >= size or touched & seen:
            out.append(batch)
            batch, seen = [], set()
        batch.append(rec)
        seen |= touched
    if batch:
        out.append(batch)
    return out


def fingerprint(store: Store, note: Progress | None = None, what: str = "verify") -> tuple[int, int, str, dict[str, str]]:
    """(files, bytes, digest, path -> SHA-256) of every topic file in a store."""
    hashes: dict[str, str] = {}
    total = 0
    listed = store.list()
    for i, (path, _) in enumerate(listed, 1):
        blob = store.get(path)
        if blob is not None:
            hashes[path] = hashlib.sha256(blob.data).hexdigest()
            total += len(blob.data)
        if note is not None and (i % 500 == 0 or i == len(listed)):
            note(what, i, len(listed))
    digest = hashlib.sha256("".join(f"{p}\0{h}\n" for p, h in sorted(hashes.items())).encode()).hexdigest()
    return len(hashes), total, digest, hashes


def copy_tenant(
    source: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    tenant: str | None = None,
    *,
    progress: Progress | None = None,
    batch: int = 200,
) -> CopyReport:
    """Copy `tenant` from `source` to `destination` (any two locations memdir.open accepts)."""
    note = progress or (lambda what, done, total: None)
    types = limits_mod.load(None, {}).types
    with Memdir(open_store(source, tenant, create=False), limits_mod.Limits(), actor=ACTOR) as src:
        dst_store = open_store(destination, tenant, create=True)
        try:
            records = list(reversed(src.store.journal()))
            if not records and not src.store.list():
                raise NotFound(
                    f"{redact(os.fspath(source))} has no memories for tenant {tenant or '(default)'} and no journal; "
                    "check the location and --tenant"
                )
            have = list(reversed(dst_store.journal()))
            for i, rec in enumerate(have[: len(records)]):
                if not _same(rec, records[i]):
                    raise Conflict(
                        f"the destination's journal differs from the source's at record #{rec.seq}; "
                        "copy into an empty tenant (or another location)"
                    )
            extra = have[len(records):]
            if any(r.actor != ACTOR or r.op != "external" for r in extra):
                n = len(extra)
                raise Conflict(
                    f"the destination has {n} journal record{'s' if n != 1 else ''} that the source lacks "
                    "(written after an earlier copy?); copy into an empty tenant"
                )
            todo = records[len(have):]
            versions = dict(dst_store.list())
            done = 0
            note("journal", 0, len(todo))
            for group in _batches(todo, batch):
                changes = []
                for rec in group:
                    target = rec.dest or rec.path
                    changes.append(Change(
                        op=rec.op, path=rec.path, dest=rec.dest, data=rec.new, expect=versions.get(rec.path),
                        old=rec.old, entry=_entry(target, rec.new, types), actor=rec.actor, time=rec.time,
                        undoes=rec.undoes,
                    ))
                with dst_store.lock():
                    written = dst_store.commit(changes)
                for rec in written:
                    if rec.dest is not None:
                        versions.pop(rec.path, None)
                    if rec.new_version is None:
                        versions.pop(rec.dest or rec.path, None)
                    else:
                        versions[rec.dest or rec.path] = rec.new_version
                done += len(group)
                note("journal", done, len(todo))
            synced = _sync_files(src.store, dst_store, types, note)
            files, size, digest, hashes = fingerprint(src.store, note, "verify source")
            d_files, d_size, d_digest, d_hashes = fingerprint(dst_store, note, "verify copy")
            dst_journal = list(reversed(dst_store.journal()))
            verified = (
                (files, size, digest) == (d_files, d_size, d_digest)
                and hashes == d_hashes
                and all(_same(a, b) for a, b in zip(dst_journal, records, strict=False))
                and len(dst_journal) >= len(records)
            )
        finally:
            dst_store.close()
    # Open the destination as a memory: it rebuilds its MEMORY.md files from the copied catalog.
    with Memdir(open_store(destination, tenant, create=False), limits_mod.Limits(), actor=ACTOR) as dst:
        dst.index()
    return CopyReport(
        source=str(source), destination=str(destination), tenant=tenant, journal=len(records),
        replayed=len(todo), resumed_after=len(have) if have else 0, synced=synced, files=files, bytes=size,
        digest=digest, verified=verified,
    )


def _sync_files(src: Store, dst: Store, types: tuple[str, ...], note: Progress) -> int:
    """Journal as `external` whatever content differs after the replay; returns how many files."""
    theirs, ours = dict(src.list()), dict(dst.list())
    changes: list[Change] = []
    stamp = model.now_stamp()
    for path in sorted(theirs.keys() | ours.keys()):
        want = src.get(path) if path in theirs else None
        have = dst.get(path) if path in ours else None
        want_data = None if want is None else want.data
        have_data = None if have is None else have.data
        if want_data == have_data:
            continue
        changes.append(Change(
            op="external", path=path, data=want_data, expect=None if have is None else have.version,
            old=have_data, entry=_entry(path, want_data, types), actor=ACTOR, time=stamp,
        ))
    for start in range(0, len(changes), 200):
        with dst.lock():
            dst.commit(changes[start : start + 200])
        note("files", min(start + 200, len(changes)), len(changes))
    return len(changes)

