"""Rewriting an S3 tenant's past (forgetting, redaction, compaction), and deleting a tenant.

S3 has no transactions, so a rewrite is ordered like a commit, each step
leaving a tenant that opens and reads right if the writer dies after it:

1. A catalog snapshot at the newest journal seq, so no reader needs the
   catalog entries the older journal objects hold (they are left out below).
2. The newest journal object rewritten in place when an edit names one of its
   records or one of them refers to an older object's: then it refers to none.
3. Every journal object but the newest merged into the oldest one's key:
   records replaced or dropped, packed against each other (`packing`), with
   `through`, the last seq of the objects it replaces.
4. The merged objects deleted. A reader takes each seq from the first object
   that holds or covers it (`current`), so objects a rewrite stopped before
   deleting are passed over (and the next rewrite deletes them). A process
   that finds a journal object gone, or a gap between the journal it folded
   and the next object, loads the tenant again from the snapshot
   (`S3Store._pull`).

A commit packs its record as the other stores do (`packing.committed`): `old`
a reference to the record that wrote it, if this process holds it decoded and
it is newer than the catalog snapshot (so a reader that starts from the
snapshot has it, or reads the older objects once: `based`), `new` compressed
against `old`.

The store commits the rewrite's changes (a forget's records) before these
steps; a forget or redact record among them tells every process that folds it
to load the journal again (`base.REWRITES`), so none keeps content that is
gone. A writer that dies between its forget records and step 4 leaves a
forgotten file whose past is still there, and perhaps the file itself: the
next writer to take over its lease deletes the file as it completes any
commit (`S3Store._settle`, which reads the newest journal object when the
records were let go of) and erases the past (`finish`); so does the first
open after the lease expired. An interrupted redaction must be run again.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import StoreError
from . import packing
from .base import Record

S3Store = Any  # an `s3.S3Store` (which imports this module)
Raw = dict[str, Any]  # a journal record as stored in its object


class Vanished(Exception):
    """A journal object listed a moment ago is gone, or a record a reference leads to (a rewrite merged them)."""


def first_seq(key: str) -> int:
    """The seq of the first record in journal object `journal/<seq>.json`."""
    return int(key.rsplit("/", 1)[1].split(".")[0])


def dumps(obj: Mapping[str, Any]) -> bytes:
    """A journal object or catalog snapshot as stored: JSON, gzipped. Every record repeats the same keys and its
    content is base64 (a third bigger than its bytes); gzip takes both back (a 16 KB file rewritten 300 times:
    the journal 9.3x the live bytes as plain JSON, 3.5x gzipped). `gunzip | jq` reads one."""
    return gzip.compress(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode(), 9, mtime=0)


def loads(body: bytes, key: str) -> dict[str, Any]:
    """What `dumps` stored, or the plain JSON memdir stored before it (tenants written by older versions)."""
    try:
        if body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        elif body[:1] != b"{":
            raise ValueError("neither JSON nor gzip")
        obj: dict[str, Any] = json.loads(body)
        return obj
    except (ValueError, OSError, EOFError) as e:
        raise StoreError(f"{key} is not a journal object this memdir can read ({e}): written by a newer memdir "
                         "(upgrade this one) or by another tool (restore it from a backup)") from None


def b64(data: bytes | None) -> str | None:
    import base64

    return None if data is None else base64.b64encode(data).decode()


def unb64(text: str | None) -> bytes | None:
    import base64

    return None if text is None else base64.b64decode(text)


def stored(raw: dict[str, Any]) -> Record:
    """A journal object's record as stored (packed content left packed)."""
    return Record(
        seq=int(raw["seq"]), time=raw["time"], actor=raw["actor"], op=raw["op"], path=raw["path"],
        dest=raw.get("dest"), old_version=raw.get("old_version"), new_version=raw.get("new_version"),
        old=unb64(raw.get("old")), new=unb64(raw.get("new")), undoes=raw.get("undoes"),
    )


def row(raw: Raw) -> packing.Row:
    return stored(raw), raw.get("form"), raw.get("base")


def _none(seqs: set[int]) -> dict[int, packing.Row]:
    return {}


def decoded(body: list[Raw], fetch: Any = _none) -> list[Record]:
    """Journal records as stored, content decoded (`fetch(seqs)` gives the records references lead to)."""
    return packing.decoded([row(raw) for raw in body], fetch)


def fetch(store: S3Store, keys: Sequence[str]) -> list[dict[str, Any]]:
    """The journal objects at these keys, read in parallel; `Vanished` if one is gone."""
    def one(key: str) -> dict[str, Any]:
        got = store._read(key)
        if got is None:
            raise Vanished(key)  # merged into an older one by a rewrite
        return loads(got[0], store.where + key)

    if len(keys) < 2:
        return [one(k) for k in keys]
    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(one, keys))


def current(objects: Sequence[Mapping[str, Any]]) -> list[Raw]:
    """The records of journal objects read in key order, each seq from the first object that holds or covers it
    (a merged object's `through`): the objects it replaced, which a rewrite stopped before deleting, are passed over."""
    out: list[Raw] = []
    covered = 0
    for obj in objects:
        for raw in obj["records"]:
            if int(raw["seq"]) > covered:
                out.append(raw)
        covered = max(covered, int(obj.get("through", 0)), *(int(raw["seq"]) for raw in obj["records"]))
    return out


def load_all(store: S3Store) -> None:
    """Read the journal objects older than the records the store holds (history reaching back before its snapshot)."""
    if store._complete_from <= 1:
        return
    for attempt in (1, 2):
        keys = [str(item["Key"])[len(store.base):] for item in store._keys("journal/")]
        older = [k for k in keys if first_seq(k) < store._complete_from]
        try:
            body = current(fetch(store, older))
        except Vanished:  # merged by a rewrite meanwhile: list again
            if attempt == 2:
                raise StoreError(f"{store.where}: the journal keeps changing under this read; retry") from None
            continue
        held: dict[int, packing.Row] = {seq: (rec, None, None) for seq, rec in store._records.items()}
        mine = [raw for raw in body if int(raw["seq"]) not in held]
        try:
            records = decoded(mine, lambda seqs, held=held: held)
        except StoreError:  # a reference to a record the merge dropped: read again
            if attempt == 2:
                raise
            continue
        for rec, raw in zip(records, mine, strict=True):
            store._records.setdefault(rec.seq, rec)
            store._forms.setdefault(rec.seq, raw.get("form"))
        store._complete_from = 1
        return


def based(store: S3Store, seqs: set[int]) -> dict[int, packing.Row]:
    """The records references lead to, decoded: those the store holds, else its whole history read once."""
    if not seqs <= store._records.keys():
        load_all(store)
    if not seqs <= store._records.keys():
        raise Vanished(f"journal record #{min(seqs - store._records.keys())}")  # dropped by a rewrite meanwhile
    return {seq: (store._records[seq], None, None) for seq in seqs}


def writer(store: S3Store, path: str, version: str | None) -> tuple[int, str | None] | None:
    """(seq, form) of the record that wrote `path`'s content at `version`, if the store holds it decoded and it is
    newer than the snapshot (what `packing.committed` refers a new record's old content to)."""
    if version is None or len(version) != 16:
        return None
    try:
        seq = int(version, 16)
    except ValueError:
        return None
    rec = store._records.get(seq)
    if seq <= store._snapshot_seq or rec is None or rec.new_version != version or (rec.dest or rec.path) != path:
        return None
    return seq, store._forms.get(seq)


def _edited(body: list[Raw], edits: Mapping[int, Record | None], keep_entries: bool,
            records: list[Record] | None = None) -> list[Raw]:
    kept: list[tuple[Raw, Record]] = []
    for raw, rec in zip(body, records if records is not None else decoded(body), strict=True):
        new = edits[rec.seq] if rec.seq in edits else rec
        if new is not None:
            kept.append((raw, new))
    packed = packing.pack(rec for _, rec in kept)
    out = []
    for raw, rec in kept:
        p = packed[rec.seq]
        entry = raw.get("entry") if keep_entries and rec.seq not in edits else None
        out.append({"seq": rec.seq, "time": rec.time, "actor": rec.actor, "op": rec.op, "path": rec.path,
                    "dest": rec.dest, "old_version": rec.old_version, "new_version": rec.new_version,
                    "old": b64(p.old), "new": b64(p.new), "undoes": rec.undoes, "entry": entry,
                    "record_only": bool(raw.get("record_only")), "form": p.form, "base": p.base})
    return out


def rewrite(store: S3Store, edits: Mapping[int, Record | None]) -> None:
    """Steps 1 to 3 of the module docstring (the lease held, the journal pulled)."""
    keys = sorted(str(item["Key"])[len(store.base):] for item in store._keys("journal/"))
    if not keys:
        return
    store._snapshot()
    newest, older = keys[-1], keys[:-1]
    (top,) = fetch(store, [newest])
    body = top["records"]
    if any(seq >= first_seq(newest) for seq in edits) or any(
            raw.get("base") is not None and int(raw["base"]) < first_seq(newest) for raw in body):
        records = decoded(body, lambda seqs: based(store, seqs))
        store._put(newest, dumps({"records": _edited(body, edits, True, records)}))
    if older:
        body = current(fetch(store, older))
        merged = _edited(body, edits, keep_entries=False)
        through = first_seq(newest) - 1
        store._put(older[0], dumps({"records": merged, "through": through}))
        for key in older[1:]:
            store._delete(key)


def finish(store: S3Store) -> list[str]:
    """Having taken over a dead writer's lease (its newest commit settled): if that commit forgot files, erase what
    the journal still holds of them, as the writer would have next (`S3Store.rewrite` commits first)."""
    if not store._head_key:
        return []
    (newest,) = fetch(store, [store._head_key])  # read: the snapshot may be this commit's, and nothing held of it
    forgot = {str(raw["path"]): int(raw["seq"]) for raw in newest["records"] if raw["op"] == "forget"}
    if not forgot:
        return []
    load_all(store)  # every record, those a read of the journal hides as erased too
    edits: dict[int, Record | None] = {seq: None for seq, r in store._records.items()
                                       if any(p in forgot and seq < forgot[p] for p in (r.path, r.dest))}
    if not edits:
        return []
    rewrite(store, edits)
    store._snapshot()
    store._drop_history()
    return [f"completed the forgetting of {', '.join(sorted(forgot))}, which a writer died in"]


def drop(store: S3Store) -> None:
    """Delete every object under the tenant's prefix, and every older version of them in a versioned bucket."""
    s3, bucket = store.s3, store.bucket
    versioned = store._call(s3.get_bucket_versioning, Bucket=bucket).get("Status") in ("Enabled", "Suspended")
    while True:
        if versioned:
            page = store._call(s3.list_object_versions, Bucket=bucket, Prefix=store.base)
            doomed = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                      for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
        else:
            page = store._call(s3.list_objects_v2, Bucket=bucket, Prefix=store.base)
            doomed = [{"Key": item["Key"]} for item in page.get("Contents", [])]
        if not doomed:
            return
        for start in range(0, len(doomed), 1000):
            store._call(s3.delete_objects, Bucket=bucket, Delete={"Objects": doomed[start : start + 1000], "Quiet": True})
