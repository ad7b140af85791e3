"""Rewriting an S3 tenant's past (forgetting, redaction, compaction), and deleting a tenant.

S3 has no transactions, so a rewrite is ordered like a commit, each step
leaving a tenant that opens and reads right if the writer dies after it:

1. A catalog snapshot at the newest journal seq, so no reader needs the
   catalog entries the older journal objects hold (they are left out below).
2. Every journal object but the newest merged into the oldest one's key:
   records replaced or dropped, packed against each other (`packing`); the
   newest rewritten in place when an edit names one of its records.
3. The merged objects deleted. A process that finds a journal object gone, or
   a gap between the journal it folded and the next object, loads the tenant
   again from the snapshot (`S3Store._pull`).

Then the store commits the rewrite's changes as usual; a forget or redact
record among them tells every process that folds it to load the journal again
(`base.REWRITES`), so none keeps content that is gone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from . import packing
from .base import Record

S3Store = Any  # an `s3.S3Store` (which imports this module)


def first_seq(key: str) -> int:
    """The seq of the first record in journal object `journal/<seq>.json`."""
    return int(key.rsplit("/", 1)[1].split(".")[0])


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


def decoded(body: list[dict[str, Any]]) -> list[Record]:
    """The records of one journal object, content decoded (a packed record refers only to its own object)."""
    rows = [(stored(raw), raw.get("form"), raw.get("base")) for raw in body]
    return packing.decoded(rows, lambda seqs: {})


def _edited(body: list[dict[str, Any]], edits: Mapping[int, Record | None], keep_entries: bool) -> list[dict[str, Any]]:
    kept: list[tuple[dict[str, Any], Record]] = []
    for raw, rec in zip(body, decoded(body), strict=True):
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
    if older:
        body = [raw for part in store._fetch(older) for raw in part]
        merged = _edited(body, edits, keep_entries=False)
        store._put(older[0], json.dumps({"records": merged}, ensure_ascii=False).encode())
        for key in older[1:]:
            store._delete(key)
    if any(seq >= first_seq(newest) for seq in edits):
        (body,) = store._fetch([newest])
        store._put(newest, json.dumps({"records": _edited(body, edits, keep_entries=True)},
                                      ensure_ascii=False).encode())


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
