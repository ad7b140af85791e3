"""The S3 store: one tenant under `<prefix>/tenants/<tenant>/` in a bucket.

Layout (keys relative to the tenant's folder):

    files/<path>            topic files, readable as they are; user metadata memdir-version
    files/<dir>/MEMORY.md   derived indexes (never listed as topic files)
    journal/<seq>.json      one object per commit: its records, with old and new content and catalog entries
    catalog.json            a snapshot of the catalog as of one journal object (a cache, rebuilt from the journal);
                            both gzipped JSON (older tenants' plain JSON is read as well: `s3rewrite.loads`)
    head.json               the newest applied commit: a hint that spares readers a LIST
    state.json              the journal seq the MEMORY.md files reflect
    rate.json               the tenant's write-rate bucket (replaced with If-Match, so every process shares it)
    lock                    the writers' lease

S3 has no transactions, so a change is ordered by conditional writes:

1. **Lease.** `lock()` creates `lock` with If-None-Match: * (a lease of
   `lease_seconds`). While it is held, a heartbeat thread renews it every third
   of that (If-Match on its ETag), so a holder keeps it however long its work
   takes on a loaded machine, and only a holder that stopped (killed, frozen)
   loses it. A lease whose holder died is taken over once expired, with
   If-Match on its ETag so only one taker wins. A commit renews the lease
   (If-Match) right before its commit point, so a holder whose lease was taken
   (it froze, or the taker's clock runs ahead) commits nothing and gets
   `Conflict`, as when another writer got there first.
2. **Journal first: the commit point.** Under the lease, a commit checks
   the expected versions (HEAD), then creates `journal/<next seq>.json` with
   If-None-Match: *. Once that object exists the change has happened; if it
   already exists, another writer committed first and the commit is refused
   (Conflict), so even a writer whose lease lapsed cannot fork the journal.
3. **Apply.** The content objects are then written (If-Match on the ETag
   checked in step 2, or If-None-Match for new files) and deleted.
4. **Roll forward.** The lease is deleted only once the files match the
   journal. A writer that takes over an expired lease, and `recover()`, verify
   the newest journal object and finish it: a crash between 2 and 3 leaves
   the journal ahead of the files for at most one commit, which the next
   writer completes.
5. **Head.** After applying, the writer puts `head.json` (the newest seq).
   Readers read it (one GET) and list the journal only when it moved;
   writers always list it. A reader's catalog thus shows a commit once its
   writer has applied it.

On the process's shared client (`memdir.connect(url).tenant(t)`, `lazy`) an
open asks nothing: the journal loads on first use, and `recover()` reads the
lease only when `s3shared` cannot say that none has expired since it last did.

Versions are the journal seq that wrote the content (kept in the object's
metadata), never an ETag: an ETag is a hash of the bytes and would repeat
when undo restores old content. Objects put there by other tools get a
version derived from their ETag and modification time. Credentials, region
and endpoint come from the standard AWS settings (`AWS_ENDPOINT_URL` for
S3-compatible servers); memdir has no S3 options of its own.
"""

from __future__ import annotations

import bisect
import builtins
import hashlib
import json
import logging
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from .. import paths
from ..errors import Conflict, InvalidPath, NotFound, StoreError
from ..model import Entry
from ..paths import INDEX_NAME
from . import packing, s3rewrite, s3shared
from .base import REWRITES, Blob, Change, Record, check_change, in_prefixes, take_token, version_of
from .s3rewrite import Vanished as _Vanished
from .s3shared import parse_url as parse_url  # re-exported: `remember.diary`
from .s3shared import ping as ping  # re-exported: `locations.ping_location`
from .s3shared import shared_client

log = logging.getLogger(__name__)
VERSION_KEY = "memdir-version"
SNAPSHOT_EVERY = 500  # journal records between catalog snapshots
_PRECONDITION = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}
_MISSING = {"NoSuchKey", "404", "NotFound"}


def _md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def _foreign_version(etag: str, modified: Any) -> str:
    """A version for an object memdir did not write: its ETag and time, hashed."""
    return "x" + hashlib.blake2b(f"{etag}:{modified}".encode(), digest_size=8).hexdigest()[1:]


def _is_index(path: str) -> bool:
    return path == INDEX_NAME or path.endswith("/" + INDEX_NAME)


def _servable(path: str) -> bool:
    """An object put there by another tool is a memory only if its key is a path memdir accepts."""
    try:
        return paths.topic_path(path) == path
    except InvalidPath:
        return False


class S3Store:
    """One tenant in an S3 bucket (or any S3-compatible server with conditional writes)."""

    lease_seconds = 30.0
    wait_seconds = 120.0  # how long lock() waits for another writer before giving up

    def __init__(self, url: str, tenant: str, *, create: bool = True, shared: bool = False) -> None:
        try:
            import botocore.exceptions
        except ImportError:  # pragma: no cover - depends on the installed extras
            raise StoreError("s3:// locations need boto3; install it with: pip install 'memdir[s3]'") from None
        self._botocore = botocore.exceptions
        self.bucket, prefix = parse_url(url)
        self.tenant = tenant
        self.base = f"{prefix}/tenants/{tenant}/" if prefix else f"tenants/{tenant}/"
        self.where = f"s3://{self.bucket}/{self.base}"
        self.key = self.where
        self._shared = shared  # the process's client for this endpoint (`shared_client`), never closed here
        self.s3 = shared_client(self.where) if shared else s3shared.new_client(self.where)
        self.endpoint = str(self.s3.meta.endpoint_url)
        self._mutex = threading.RLock()
        self._depth = 0
        self._lease: str | None = None  # ETag of the lease we hold
        self._lease_mutex = threading.Lock()  # the lease's ETag, between the holder and its heartbeat
        self._lost = False  # our lease expired and another writer took it
        self._heartbeat: tuple[threading.Event, threading.Thread] | None = None
        self._owner = uuid.uuid4().hex
        self._loaded = False
        self._head = 0  # newest journal seq folded in
        self._head_key = ""  # its journal object's key
        self._settled = ""  # newest journal key known to be applied
        self._known: dict[str, tuple[str, str]] = {}  # path -> (ETag, version) of what the journal wrote
        self._log: list[tuple[int, str, Entry | None]] = []  # catalog changes in seq order
        self._records: dict[int, Record] = {}
        self._forms: dict[int, str | None] = {}  # how each record in _records is stored (`packing`)
        self._record_only: set[int] = set()  # seqs that journaled a change made outside memdir
        self._complete_from = 1  # every journal record with seq >= this is in _records
        self._snapshot_seq = 0
        self._fresh = False  # pulled since the lease was taken
        self._seen: dict[str, tuple[str, str] | None] = {}  # (version, ETag) read under the lease
        self._dirty = False  # a commit of ours is journaled but not fully applied
        self._looked = 0.0  # when we last read another writer's lease
        self._stale = False  # a journal record folded says another process rewrote the past we hold
        self._rewriting = False  # committing a rewrite's changes: a record refers to no other (its old may differ)
        self._memo = f"{self.endpoint} {self.where}"  # what the process knows of this tenant (`s3shared`)
        self.lazy = shared  # an open asks S3 nothing: recover() and the journal wait for their first use
        if shared and s3shared.bucket_known(self.endpoint, self.bucket):
            return  # a shared client checks each bucket once
        try:
            self._call(self.s3.head_bucket, Bucket=self.bucket)
        except _Missing:
            raise NotFound(f"bucket {self.bucket!r} does not exist at {self.endpoint}; create it first") from None
        if shared:
            s3shared.bucket_found(self.endpoint, self.bucket)

    # ------------------------------------------------------------ S3 calls

    def _call(self, fn: Callable[..., Any], **kw: Any) -> Any:
        """One S3 request; failures become StoreError (callers catch `_Condition` and `_Missing`)."""
        try:
            return fn(**kw)
        except self._botocore.ClientError as e:
            code = str(e.response.get("Error", {}).get("Code", ""))
            if code in _PRECONDITION:
                raise _Condition(code) from None
            if code in _MISSING:
                raise _Missing(code) from None
            if code == "NoSuchBucket":
                raise NotFound(f"bucket {self.bucket!r} does not exist at {self.endpoint}; create it first") from None
            raise StoreError(f"{self.where}: {code}: {e}") from None
        except self._botocore.NoCredentialsError:
            raise StoreError(
                f"{self.where}: no AWS credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or a profile"
            ) from None
        except (self._botocore.EndpointConnectionError, self._botocore.ConnectionError) as e:
            raise StoreError(
                f"cannot connect to S3 at {self.endpoint}: {e}; is the server running? check AWS_ENDPOINT_URL"
            ) from None
        except self._botocore.BotoCoreError as e:
            raise StoreError(f"{self.where}: {e}") from None

    def _head_object(self, key: str) -> tuple[str, str] | None:
        """(version, ETag) of an object, None if absent."""
        try:
            head = self._call(self.s3.head_object, Bucket=self.bucket, Key=self.base + key)
        except _Missing:
            return None
        etag = str(head["ETag"]).strip('"')
        version = head.get("Metadata", {}).get(VERSION_KEY) or _foreign_version(etag, head.get("LastModified"))
        return str(version), etag

    def _put(self, key: str, data: bytes, **kw: Any) -> str:
        out = self._call(self.s3.put_object, Bucket=self.bucket, Key=self.base + key, Body=data, **kw)
        return str(out.get("ETag", "")).strip('"')

    def _delete(self, key: str, **kw: Any) -> None:
        try:
            self._call(self.s3.delete_object, Bucket=self.bucket, Key=self.base + key, **kw)
        except _Missing:
            pass

    def _read(self, key: str) -> tuple[bytes, dict[str, Any]] | None:
        try:
            out = self._call(self.s3.get_object, Bucket=self.bucket, Key=self.base + key)
            return bytes(out["Body"].read()), out
        except _Missing:
            return None

    def _keys(self, prefix: str, after: str = "") -> Iterator[dict[str, Any]]:
        kw: dict[str, Any] = {"Bucket": self.bucket, "Prefix": self.base + prefix}
        if after:
            kw["StartAfter"] = self.base + after
        while True:
            page = self._call(self.s3.list_objects_v2, **kw)
            yield from page.get("Contents", [])
            if not page.get("IsTruncated"):
                return
            kw["ContinuationToken"] = page["NextContinuationToken"]

    # ------------------------------------------------------------ reading

    def get(self, path: str) -> Blob | None:
        got = self._read("files/" + path)
        if got is None:
            blob, seen = None, None
        else:
            data, meta = got
            etag = str(meta["ETag"]).strip('"')
            version = str(meta.get("Metadata", {}).get(VERSION_KEY) or _foreign_version(etag, meta.get("LastModified")))
            blob, seen = Blob(data, version), (version, etag)
        with self._mutex:
            if self._depth and not _is_index(path):
                self._seen[path] = seen  # under the lease nobody else writes: commit need not ask again
        return blob

    def list(self, prefix: str = "") -> builtins.list[tuple[str, str]]:
        with self._mutex:
            self._pull()
            known = dict(self._known)
        out: builtins.list[tuple[str, str]] = []
        unknown: builtins.list[str] = []
        start = len(self.base) + len("files/")
        for item in self._keys("files/" + prefix):
            path = str(item["Key"])[start:]
            if not _servable(path):
                continue
            etag = str(item["ETag"]).strip('"')
            mine = known.get(path)
            if mine is not None and mine[0] == etag:
                out.append((path, mine[1]))
            else:
                unknown.append(path)
        if unknown:  # written by another tool (or with an ETag that is not an MD5): ask for the version
            with ThreadPoolExecutor(16) as pool:
                for path, head in zip(unknown, pool.map(lambda p: self._head_object("files/" + p), unknown), strict=True):
                    if head is not None:
                        out.append((path, head[0]))
        out.sort()
        return out

    # ------------------------------------------------------------ journal and catalog state

    def _load(self) -> None:
        """First use: the catalog snapshot, then the journal after it."""
        if self._loaded:
            return
        got = self._read("catalog.json")
        if got is not None:
            snap = s3rewrite.loads(got[0], self.where + "catalog.json")
            self._head = self._snapshot_seq = int(snap["seq"])
            self._head_key = self._settled = str(snap["key"])
            self._complete_from = self._head + 1
            rows = sorted((int(seq), path, entry, etag, version)
                          for path, (seq, entry, etag, version) in snap["entries"].items())
            for seq, path, entry, etag, version in rows:
                self._log.append((seq, path, None if entry is None else Entry.from_dict(entry)))
                if etag is not None:
                    self._known[path] = (etag, version)
        self._loaded = True
        self._pull()

    def _pull(self) -> None:
        """Fold in journal objects written since we last looked (by any process)."""
        if not self._loaded:
            self._load()  # which pulls once it has the catalog
            return
        if self._depth and self._fresh:
            return  # we hold the lease and have looked since taking it: nothing new can be there
        if not self._depth and self._head_key:
            hint = self._read("head.json")  # one small GET instead of a LIST for readers
            if hint is not None and int(json.loads(hint[0])["seq"]) <= self._head:
                return
            if hint is None and next(self._keys("journal/"), None) is None:  # the tenant was dropped: hold nothing
                self._reset()
                self._loaded = True
                return
        keys = [str(item["Key"])[len(self.base):] for item in self._keys("journal/", self._head_key)]
        try:
            if keys and self._head and s3rewrite.first_seq(keys[0]) > self._head + 1:
                raise _Vanished(keys[0])  # the objects after ours were merged by a rewrite: load from its snapshot
            objects = s3rewrite.fetch(self, keys)
            raws = [raw for raw in s3rewrite.current(objects) if int(raw["seq"]) > self._head]
            records = s3rewrite.decoded(raws, self._based)
        except _Vanished:
            self._reset()
            self._load()
            return
        self._fold(raws, records)
        if keys:
            self._head_key = keys[-1]
        self._fresh = bool(self._depth)
        if self._stale:  # another process rewrote the past this process holds: read it again when asked
            self._drop_history()

    def _drop_history(self) -> None:
        self._records, self._forms, self._complete_from, self._stale = {}, {}, self._head + 1, False

    def _reset(self) -> None:
        """Forget what was loaded of the journal and the catalog (the next use loads them again)."""
        self._loaded, self._head, self._head_key, self._settled, self._stale = False, 0, "", "", False
        self._known, self._log, self._records, self._record_only, self._forms = {}, [], {}, set(), {}
        self._complete_from, self._snapshot_seq, self._fresh = 1, 0, False

    def _based(self, seqs: set[int]) -> dict[int, Any]:
        return s3rewrite.based(self, seqs)

    def _fold(self, raws: Sequence[dict[str, Any]], records: Sequence[Record]) -> None:
        for raw, rec in zip(raws, records, strict=True):
            seq = rec.seq
            if seq <= self._head:
                continue
            self._stale |= rec.op in REWRITES
            self._records[seq] = rec
            self._forms[seq] = raw.get("form")
            if raw.get("record_only"):
                self._record_only.add(seq)
            if rec.dest is not None:
                self._log.append((seq, rec.path, None))
                self._known.pop(rec.path, None)
            entry = raw.get("entry")
            target = rec.dest or rec.path
            self._log.append((seq, target, None if entry is None else Entry.from_dict(entry)))
            if rec.new is None:
                self._known.pop(target, None)
            elif rec.new_version is not None:
                self._known[target] = (_md5(rec.new), rec.new_version)
            self._head = seq
        if self._head:
            s3shared.saw_journal(self._memo)

    def journaled(self) -> bool:
        """Whether memdir ever journaled this tenant; on a shared client known without a request once the
        process saw its journal (journal objects are never deleted)."""
        if self.lazy and s3shared.journaled(self._memo):
            return True
        with self._mutex:
            found = bool(self.journal(limit=1))
        if found:
            s3shared.saw_journal(self._memo)
        return found

    def changes(self, since: int) -> tuple[int, builtins.list[tuple[str, Entry | None]]]:
        with self._mutex:
            self._pull()
            start = bisect.bisect_right(self._log, since, key=lambda row: row[0])
            rows = self._log[start:]
        if not rows:
            return since, []
        latest = {path: (seq, entry) for seq, path, entry in rows}  # as a catalog table would: one row per path
        ordered = sorted(latest.items(), key=lambda item: item[1][0])
        return rows[-1][0], [(path, entry) for path, (_, entry) in ordered]

    def journal(
        self, path: str | None = None, *, limit: int | None = None, prefixes: Sequence[str] | None = None
    ) -> builtins.list[Record]:
        with self._mutex:
            self._pull()
            out = self._matching(path, limit, prefixes)
            if out is None:
                self._load_all()
                out = self._matching(path, limit, prefixes) or []
            return out

    def _matching(self, path: str | None, limit: int | None, prefixes: Sequence[str] | None) -> builtins.list[Record] | None:
        """Newest-first records from what is loaded, or None if older records are needed."""
        out = []
        forgot: set[str] = set()
        for seq in range(self._head, self._complete_from - 1, -1):
            rec = self._records.get(seq)
            if rec is not None and rec.op == "forget":
                forgot.add(rec.path)
            elif rec is not None and (rec.path in forgot or rec.dest in forgot):
                continue  # erased, but its writer died before it dropped them: the next lease holder does
            if rec is not None and (path is None or path in (rec.path, rec.dest)) and in_prefixes(rec.path, prefixes):
                out.append(rec)
                if limit is not None and len(out) >= limit:
                    return out
        return out if self._complete_from <= 1 else None

    def _load_all(self) -> None:
        s3rewrite.load_all(self)

    # ------------------------------------------------------------ locking

    @contextmanager
    def lock(self) -> Iterator[None]:
        with self._mutex:
            if self._depth == 0:
                took_over = self._acquire(wait=True)
                self._beat()
                self._depth += 1
                try:
                    if took_over:
                        self._pull()
                        self._settled = ""  # the holder died: its newest commit may be half applied
                        self._settle()
                        s3rewrite.finish(self)
                except BaseException:
                    self._depth -= 1
                    self._release()
                    raise
            else:
                self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _lease_body(self) -> bytes:
        return json.dumps({"owner": self._owner, "expires": time.time() + self.lease_seconds}).encode()

    def _acquire(self, wait: bool) -> bool | None:
        """Take the lease: False if it was free, True if taken over from a dead holder, None if busy (no wait)."""
        deadline = time.monotonic() + self.wait_seconds
        pause = 0.004
        while True:
            try:
                self._lease = self._put("lock", self._lease_body(), IfNoneMatch="*")
                return False
            except _Condition:
                pass
            if not wait or time.monotonic() - self._looked > self.lease_seconds / 10:
                self._looked = time.monotonic()
                if self._take_over():
                    return True
            if not wait:
                return None
            if time.monotonic() > deadline:
                if self._take_over():
                    return True
                raise StoreError(
                    f"{self.where}: another writer has held the lock for over {self.wait_seconds:.0f} s; "
                    f"if no memdir process is writing, it expires by itself within {self.lease_seconds:.0f} s"
                )
            time.sleep(random.uniform(pause / 2, pause))
            pause = min(pause * 1.5, 0.15)

    def _take_over(self) -> bool:
        """Take the lease if its holder let it expire (If-Match: only one taker wins)."""
        asked = time.time()
        got = self._read("lock")
        expires = asked + self.lease_seconds if got is None else float(json.loads(got[0]).get("expires", 0))
        if got is None or expires >= time.time():
            if self.lazy:  # no lease of this tenant can expire before then: recover() need not ask again
                s3shared.clear_until(self._memo, expires)
            return False
        try:
            self._lease = self._put("lock", self._lease_body(), IfMatch=str(got[1]["ETag"]).strip('"'))
            return True
        except (_Condition, _Missing):
            return False

    def _beat(self) -> None:
        """Start renewing the lease just taken, every third of its length, until `_release`."""
        self._lost = False
        stop = threading.Event()
        thread = threading.Thread(target=self._beating, args=(stop,), daemon=True, name=f"memdir-lease {self.where}")
        self._heartbeat = (stop, thread)
        thread.start()

    def _beating(self, stop: threading.Event) -> None:
        while not stop.wait(self.lease_seconds / 3):
            try:
                self._renew()
            except Conflict:
                return  # taken: the holder finds out at its next commit
            except StoreError as e:  # S3 unreachable for now: the next beat (or the commit's own renewal) tries again
                log.warning("memdir: could not renew the S3 write lease (%s); retrying", e)

    def _renew(self) -> None:
        """Extend the lease (If-Match on its ETag); Conflict if another writer took it meanwhile."""
        with self._lease_mutex:
            if not self._lost and self._lease is not None:
                try:
                    self._lease = self._put("lock", self._lease_body(), IfMatch=self._lease)
                except (_Condition, _Missing):
                    self._lost = True
            if self._lost:
                raise Conflict(f"another writer took the write lock of {self.where} while this one worked "
                               "(its lease lapsed); nothing was committed: read again and retry")

    def _unbeat(self) -> None:
        if self._heartbeat is not None:
            stop, thread = self._heartbeat
            self._heartbeat = None
            stop.set()
            if thread is not threading.current_thread():
                thread.join()

    def _release(self) -> None:
        """Give the lease back, but only once our journal is applied: a lease left to expire means repair."""
        self._unbeat()
        self._fresh = False
        self._seen.clear()
        if self._dirty:
            try:
                self._settled = ""
                self._settle()
                self._dirty = False
            except Exception:
                self._lease = None  # let it expire: the writer that takes it over completes the commit
                return
        etag, self._lease = self._lease, None
        if etag is None:
            return
        try:
            given = time.time()
            self._delete("lock", IfMatch=etag)
            if self.lazy:
                s3shared.clear_until(self._memo, given + self.lease_seconds)
        except _Condition:
            pass  # our lease expired and another writer holds it now
        except StoreError as e:  # the work is done; the lease expires by itself
            log.warning("memdir: could not give back the S3 write lease (%s); it expires in %.0f s", e, self.lease_seconds)

    # ------------------------------------------------------------ writing

    def commit(self, changes: Sequence[Change]) -> builtins.list[Record]:
        if not changes:
            return []
        with self.lock():
            current: dict[str, tuple[str, str] | None] = {}

            def now(path: str) -> tuple[str, str] | None:
                if path not in current:
                    current[path] = self._seen[path] if path in self._seen else self._head_object("files/" + path)
                return current[path]

            for change in changes:
                here = now(change.path)
                check_change(change, None if here is None else here[0],
                             change.dest is not None and now(change.dest) is not None)
            self._pull()
            first = self._head + 1
            raws: builtins.list[dict[str, Any]] = []
            for i, change in enumerate(changes):
                seq = first + i
                if change.record_only:
                    got = now(change.target) if change.data is not None else None
                    version = None if got is None else got[0]
                else:
                    version = None if change.data is None else version_of(seq)
                entry = None if change.entry is None else replace(change.entry, version=version or "").to_dict()
                prev = None if self._rewriting else s3rewrite.writer(self, change.path, change.expect)
                packed = packing.committed(change.old, change.data, prev)
                raws.append({
                    "seq": seq, "time": change.time, "actor": change.actor, "op": change.op, "path": change.path,
                    "dest": change.dest, "old_version": change.expect, "new_version": version,
                    "old": s3rewrite.b64(packed.old), "new": s3rewrite.b64(packed.new), "undoes": change.undoes,
                    "entry": entry, "record_only": change.record_only, "form": packed.form, "base": packed.base,
                })
            key = f"journal/{first:012d}.json"
            self._renew()  # still ours (If-Match), right before the commit point, whatever the clocks say
            try:
                self._put(key, s3rewrite.dumps({"records": raws}), IfNoneMatch="*")
            except _Condition:
                raise Conflict(
                    f"another writer committed to {self.where} at the same time; read again and retry"
                ) from None
            self._fold(raws, s3rewrite.decoded(raws, self._based))
            self._head_key = key
            self._dirty = True
            try:
                for raw in raws:
                    if not raw["record_only"]:
                        self._apply(raw, current)
                self._dirty = False
                self._settled = key
                self._seen.update(current)
                self._put_head()
            except StoreError as e:  # committed: releasing the lease retries, or the next writer completes it
                log.warning("memdir: change %s is journaled but its files are not written yet: %s", key, e)
                self._seen.clear()
            return [self._records[raw["seq"]] for raw in raws]

    def _apply(self, raw: dict[str, Any], current: dict[str, tuple[str, str] | None]) -> None:
        """Make the content objects what journal record `raw` says (conditional on what was checked)."""
        path, dest, data = raw["path"], raw["dest"], self._records[raw["seq"]].new
        target = dest or path
        if data is not None:
            was = current.get(target)
            cond = {"IfNoneMatch": "*"} if was is None else {"IfMatch": was[1]}
            etag = self._put_file(target, data, raw["new_version"], cond)
            current[target] = (raw["new_version"], etag)
        if dest is not None or data is None:
            was = current.get(path)
            if was is not None:
                self._delete("files/" + path, IfMatch=was[1])
            current[path] = None

    def _put_file(self, path: str, data: bytes, version: str, cond: Mapping[str, str]) -> str:
        try:
            return self._put("files/" + path, data, Metadata={VERSION_KEY: version},
                             ContentType="text/markdown; charset=utf-8", **cond)
        except _Condition:
            raise StoreError(
                f"{self.where}: {path} changed while a journaled change was being applied; "
                "the next writer completes the change from the journal"
            ) from None

    def _settle(self) -> builtins.list[str]:
        """Finish the newest commit if its writer stopped between the journal and the files."""
        if not self._head_key or self._head_key == self._settled:
            return []
        notes = []
        want: dict[str, tuple[bytes | None, str | None, int]] = {}
        first = s3rewrite.first_seq(self._head_key)
        held, record_only = self._records, self._record_only
        if any(seq not in held for seq in range(first, self._head + 1)):  # let go of: it forgot or redacted (REWRITES)
            (obj,) = s3rewrite.fetch(self, [self._head_key])
            held = {rec.seq: rec for rec in s3rewrite.decoded(obj["records"], self._based)}
            record_only = {int(raw["seq"]) for raw in obj["records"] if raw.get("record_only")}
        for seq in range(first, self._head + 1):
            rec = held.get(seq)
            if rec is None or seq in record_only:
                continue
            if rec.dest is not None:
                want[rec.path] = (None, None, seq)
                want[rec.dest] = (rec.new, rec.new_version, seq)
            else:
                want[rec.path] = (rec.new, rec.new_version, seq)
        for path, (data, version, seq) in want.items():
            here = self._head_object("files/" + path)
            if (None if here is None else here[0]) == version:
                continue
            if data is None:
                self._delete("files/" + path)
            else:
                assert version is not None
                self._put_file(path, data, version, {})
            notes.append(f"completed interrupted change #{seq} to {path} from the journal")
        self._settled = self._head_key
        self._put_head()
        return notes

    def _put_head(self) -> None:
        """Tell readers the newest applied commit, so they need not list the journal to know."""
        self._put("head.json", json.dumps({"seq": self._head, "key": self._head_key}).encode())

    # ------------------------------------------------------------ derived files

    def derive(self, files: Mapping[str, bytes | None], seq: int) -> None:
        with self.lock():
            for path, data in files.items():
                if data is None:
                    self._delete("files/" + path)
                else:  # the root index carries the seq it reflects, which saves writing state.json
                    meta = {"Metadata": {"memdir-derived": str(seq)}} if path == INDEX_NAME else {}
                    self._put("files/" + path, data, ContentType="text/markdown; charset=utf-8", **meta)
            if INDEX_NAME not in files:
                self._put("state.json", json.dumps({"derived_seq": seq}).encode())
            if self._head - self._snapshot_seq >= SNAPSHOT_EVERY:
                self._snapshot()

    def _snapshot(self) -> None:
        """Save the catalog so a new process reads one object instead of the whole journal."""
        entries: dict[str, Any] = {}
        latest: dict[str, tuple[int, str, Entry | None]] = {}
        for seq, path, entry in self._log:
            latest[path] = (seq, path, entry)
            if entry is None:  # kept: a process loading this snapshot must still tell a catalog behind it what went
                entries[path] = [seq, None, None, None]
            else:
                known = self._known.get(path)
                entries[path] = [seq, entry.to_dict(), *(known if known else (None, None))]
        self._log = sorted(latest.values(), key=lambda row: row[0])  # the latest row per path is all changes() needs
        body = {"seq": self._head, "key": self._head_key, "entries": entries}
        self._put("catalog.json", s3rewrite.dumps(body))
        self._snapshot_seq = self._head

    def derived(self) -> int:
        got = self._read("state.json")
        state = 0 if got is None else int(json.loads(got[0])["derived_seq"])
        try:
            head = self._call(self.s3.head_object, Bucket=self.bucket, Key=self.base + "files/" + INDEX_NAME)
        except _Missing:
            return state
        return max(state, int(head.get("Metadata", {}).get("memdir-derived", 0)))

    def problems(self) -> builtins.list[str]:
        return []

    def resolve(self, path: str) -> str:
        return path  # keys have no links

    def take(self, rate: int) -> float:
        """Read rate.json, take a token, write it back with If-Match (If-None-Match when new); retry on a race."""
        for _ in range(50):
            got = self._read("rate.json")
            state = None
            if got is not None:
                raw = json.loads(got[0])
                state = (float(raw["tokens"]), float(raw["stamp"]))
            new, wait = take_token(state, rate, time.time())
            cond = {"IfNoneMatch": "*"} if got is None else {"IfMatch": str(got[1]["ETag"]).strip('"')}
            try:
                self._put("rate.json", json.dumps({"tokens": new[0], "stamp": new[1]}).encode(), **cond)
                return wait
            except (_Condition, _Missing):
                time.sleep(random.uniform(0.001, 0.02))
        raise StoreError(f"{self.where}: the rate-limit object keeps changing under us; retry")

    def recover(self) -> builtins.list[str]:
        """Finish the newest commit if its writer died holding the lease: one GET when there is none, and on
        a shared client none while the process knows no lease can have expired (`s3shared.clear`)."""
        with self._mutex:
            if self._depth or (self.lazy and s3shared.clear(self._memo)) or not self._take_over():
                return []  # no lease left behind (the last writer finished), or a live writer holds it
            self._beat()
            self._depth += 1
            try:
                self._pull()
                self._settled = ""  # the holder died: its newest commit may be half applied
                notes = self._settle() + s3rewrite.finish(self)
                last = self._records.get(self._head)
                if self.lazy and not notes and last is not None and last.op != "external" and self._head > self.derived():
                    notes = [f"change #{self._head} to {last.path} was committed, its MEMORY.md files were not: rendering them"]
                return notes  # (a lazy open asks nothing else: Memdir renders the index files on these notes)
            finally:
                self._depth -= 1
                self._release()

    def rewrite(self, edits: Mapping[int, Record | None], changes: Sequence[Change] = ()) -> builtins.list[Record]:
        """`changes` committed first (a forget's records: a writer that dies after them leaves a forgotten file,
        which the next lease holder finishes erasing: `s3rewrite.finish`), then the journal objects rewritten."""
        with self.lock():
            self._pull()
            if not changes and edits.get(self._head, True) is None:
                raise StoreError(f"cannot drop journal record #{self._head}: it is the newest, and a seq must never "
                                 "be given twice")
            self._rewriting = True
            try:
                records = self.commit(changes)
            finally:
                self._rewriting = False
            if edits:
                s3rewrite.rewrite(self, edits)
            self._snapshot()
            self._drop_history()
            return records

    def scrub(self) -> builtins.list[str]:
        return []  # a rewritten or deleted object is gone from the bucket (older versions: `drop`, docs/forgetting.md)

    def drop(self) -> None:
        with self._mutex:
            self._release()
            s3rewrite.drop(self)
            self._reset()
        self.close()

    def close(self) -> None:
        with self._mutex:
            self._release()
            if not self._shared:
                self.s3.close()


class _Condition(Exception):
    """A conditional request failed (412, or 409 for a concurrent one)."""


class _Missing(Exception):
    """The object does not exist."""
