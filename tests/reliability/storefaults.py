"""Kill and fault points at a store's I/O boundary, a model of what the memory must hold, and the checks.

Used by the crash-consistency and concurrency suites. A `Points` counts the
calls a store makes to what lies under it (the folder store's `os` calls and
SQLite connection, the SQL stores' connection, the S3 client); at the k-th it
either kills the process with SIGKILL (before or after the call) or makes the
call fail as a full or broken disk would (ENOSPC, EIO, the database's "disk
full", an S3 500), without the call having any effect.
"""

from __future__ import annotations

import errno
import gc
import os
import random
import re
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memdir
from memdir import model

SOAK = os.environ.get("MEMDIR_SOAK") == "1"


def _warm() -> None:
    """Load what every child needs once, in the fork server: the stores, psycopg, boto3 and its S3 model."""
    import memdir.stores.fs
    import memdir.stores.sqlite  # noqa: F401

    try:
        import boto3
        import psycopg  # noqa: F401

        import memdir.stores.postgres
        import memdir.stores.s3  # noqa: F401

        boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    except ImportError:  # the tests that need them say so
        pass
    gc.freeze()  # children must not copy all of that when their garbage collector walks it


_warm()
PATHS = ["a.md", "b.md", "c.md", "d/e.md", "d/f.md", "g/h/i.md"]


class Fault(Exception):
    """Raised in place of the real error when the store code under test does not catch it itself."""


class Points:
    """Counts boundary calls; at the `at`-th, `action` happens: "kill", "enospc" or "eio". With `record`, `calls`
    says what each point is ("before put_object journal/", ...): a measuring run names the points a test picks."""

    def __init__(self, at: int, action: str, *, record: bool = False) -> None:
        self.left = at
        self.action = action
        self.armed = True
        self.fired = False
        self.calls: list[str] | None = [] if record else None

    def hit(self, before: bool, fail: Callable[[str], BaseException], label: str = "") -> None:
        if not self.armed or self.left <= 0 or (self.action != "kill" and not before):
            return
        self.left -= 1
        if self.calls is not None:
            self.calls.append(f"{'before' if before else 'after'} {label}")
        if self.left:
            return
        if self.action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        self.fired = True
        raise fail(self.action)


def _os_error(action: str) -> BaseException:
    return OSError(errno.ENOSPC, "No space left on device") if action == "enospc" else OSError(errno.EIO, "Input/output error")


def _sqlite_error(action: str) -> BaseException:
    return sqlite3.OperationalError("database or disk is full" if action == "enospc" else "disk I/O error")


def _pg_error(action: str) -> BaseException:
    import psycopg

    if action == "enospc":
        return psycopg.errors.DiskFull("could not extend file: No space left on device")
    return psycopg.OperationalError("server closed the connection unexpectedly")


def _s3_error(action: str) -> BaseException:
    from botocore.exceptions import ClientError

    code = "InternalError" if action == "eio" else "ServiceUnavailable"
    return ClientError({"Error": {"Code": code, "Message": "injected"}}, "op")


class _Conn:
    """A database connection whose `execute` passes through the points."""

    def __init__(self, real: Any, points: Points, fail: Callable[[str], BaseException]) -> None:
        self._real, self._points, self._fail = real, points, fail

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        label = " ".join(str(args[0]).split()[:3]) if args else ""
        self._points.hit(True, self._fail, label)
        out = self._real.execute(*args, **kwargs)
        self._points.hit(False, self._fail, label)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _Client:
    """An S3 client whose requests pass through the points."""

    CALLS = {"put_object", "get_object", "head_object", "delete_object", "list_objects_v2"}

    def __init__(self, real: Any, points: Points) -> None:
        self._real, self._points = real, points

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if name not in self.CALLS:
            return attr

        def call(**kwargs: Any) -> Any:
            if threading.current_thread().name.startswith("memdir-lease"):
                return attr(**kwargs)  # the lease's heartbeat runs on its own clock: counting it would make the
                # k-th call a matter of timing (a kill at a renewal is a kill beside the call next to it)
            key = str(kwargs.get("Key", "")).rsplit("/tenants/", 1)[-1].split("/", 1)[-1]  # the tenant's key
            label = f"{name} {key.split('/')[0] + '/' if '/' in key else key}"
            self._points.hit(True, _s3_error, label)
            out = attr(**kwargs)
            self._points.hit(False, _s3_error, label)
            return out

        return call


_OS_CALLS = ("write", "replace", "fsync", "unlink", "utime", "rmdir", "mkdir")


@contextmanager
def boundary(md: memdir.Memdir, points: Points) -> Iterator[None]:
    """Route the store's I/O through `points` while the block runs."""
    store: Any = md.store
    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    kind = type(store).__name__
    if kind == "FileStore":
        for name in _OS_CALLS:
            real = getattr(os, name)

            def wrapped(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
                points.hit(True, _os_error, _name)
                out = _real(*a, **k)
                points.hit(False, _os_error, _name)
                return out

            patch(os, name, wrapped)
        real_write_bytes = Path.write_bytes

        def write_bytes(self: Path, data: Any) -> int:
            points.hit(True, _os_error, "write_bytes")
            out = real_write_bytes(self, data)
            points.hit(False, _os_error, "write_bytes")
            return out

        patch(Path, "write_bytes", write_bytes)
        patch(store, "db", _Conn(store.db, points, _sqlite_error))
    elif kind == "SQLiteStore":
        patch(store, "db", _Conn(store.db, points, _sqlite_error))
    elif kind == "PostgresStore":
        patch(store, "db", _Conn(store.db, points, _pg_error))
    else:
        patch(store, "s3", _Client(store.s3, points))
    try:
        yield
    finally:
        points.left = 0
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


# ---------------------------------------------------------------- the workload and its model


@dataclass(frozen=True)
class Op:
    kind: str  # write, cas, delete, rename
    path: str
    dest: str = ""
    body: str = ""


def plan(rng: random.Random, first: int, count: int, tag: str) -> list[Op]:
    ops = []
    for i in range(first, first + count):
        kind = rng.choice(["write", "write", "cas", "delete", "rename"])
        path = rng.choice(PATHS)
        if kind in ("write", "cas"):
            size = rng.choice([1, 1, 30, 150])  # some bodies are long, so a torn write would show
            body = f"{tag} op {i}\n" + "".join(f"{tag} op {i} line {n}\n" for n in range(size))
            ops.append(Op(kind, path, body=body))
        elif kind == "rename":
            ops.append(Op(kind, path, dest=rng.choice([p for p in PATHS if p != path])))
        else:
            ops.append(Op(kind, path))
    return ops


def run(md: memdir.Memdir, op: Op) -> None:
    """Apply one op; NotFound and Conflict are expected outcomes (the model predicts them)."""
    if op.kind == "write":
        md.write(op.path, op.body)
    elif op.kind == "cas":
        try:
            version = md.read(op.path).version
        except memdir.NotFound:
            version = None
        md.write(op.path, op.body, expect=version)
    elif op.kind == "delete":
        md.delete(op.path)
    else:
        md.rename(op.path, op.dest)


def apply(state: dict[str, str], op: Op) -> dict[str, str]:
    """The memory after `op`, as the model sees it (unchanged when memdir would refuse it)."""
    out = dict(state)
    if op.kind in ("write", "cas"):
        out[op.path] = op.body
    elif op.kind == "delete":
        out.pop(op.path, None)
    elif op.path in out and op.dest not in out:
        out[op.dest] = out.pop(op.path)
    return out


def stored(md: memdir.Memdir) -> dict[str, bytes]:
    """Every topic file's bytes, read through the store (not the catalog)."""
    out = {}
    for path, _ in md.store.list():
        blob = md.store.get(path)
        assert blob is not None, f"{path} is listed but cannot be read"
        out[path] = blob.data
    return out


def bodies(files: dict[str, bytes]) -> dict[str, str]:
    return {path: model.parse(data.decode(), path=path, strict=False)[1] for path, data in files.items()}


def actual(md: memdir.Memdir) -> dict[str, str]:
    """Every topic file's body."""
    return bodies(stored(md))


def check_consistent(md: memdir.Memdir, files: dict[str, bytes]) -> None:
    """After recovery: reconcile finds nothing but a stale index, and then files, journal, catalog and index agree."""
    first = md.reconcile(fix=True)
    unexpected = [f for f in first.findings if f.kind not in ("index", "repaired")]
    assert not unexpected, first.to_dict()
    assert md.reconcile().clean
    index = md.store.get("MEMORY.md")
    assert index is not None and index.data.decode() == md.index()
    versions = dict(md.store.list())
    assert [e.path for e in md.list()] == sorted(versions) == sorted(files)
    latest: dict[str, Any] = {}
    for rec in reversed(md.history()):  # oldest first: the last record naming a path wins
        latest[rec.path] = rec
        if rec.dest:
            latest[rec.dest] = rec
    for path, version in versions.items():
        last = latest.get(path)
        assert last is not None, f"{path} is stored but the journal never wrote it"
        assert (last.dest or last.path) == path and last.new_version == version, (path, last)
        assert last.new == files[path]


def child(location: str, tenant: str | None, env: dict[str, str], ops: list[Op], at: int, lease: float, conn: Any) -> None:
    """In a child process: run `ops`, reporting each start and outcome on `conn`, until the at-th boundary call
    kills it."""
    os.environ.update(env)
    from memdir.stores.s3 import S3Store

    S3Store.lease_seconds = lease
    md = memdir.open(location, tenant=tenant)
    points = Points(at, "kill")
    with boundary(md, points):
        for i, op in enumerate(ops):
            conn.send_bytes(f"s {i}".encode())
            try:
                run(md, op)
                conn.send_bytes(f"o {i}".encode())
            except (memdir.NotFound, memdir.Conflict):
                conn.send_bytes(f"e {i}".encode())
    conn.send_bytes(b"done")


# ---------------------------------------------------------------- many writers at once

SHARED = ["a.md", "b.md", "c.md", "d/e.md", "d/f.md"]
TOKEN = re.compile(r"^tok(\d+)x(\d+)\n$")


def worker(location: str, tenant: str | None, env: dict[str, str], me: int, seconds: float, conn: Any) -> None:
    """In a child process: mixed reads and changes on shared paths for `seconds`; sends what was acknowledged."""
    os.environ.update(env)
    rng = random.Random(me)
    done: list[tuple[Any, ...]] = []
    problems: list[str] = []
    conflicts = 0
    md = memdir.open(location, tenant=tenant)
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline:
        i += 1
        kind = rng.choice(["read", "read", "write", "cas", "cas", "rename", "delete", "cas-delete"])
        path = rng.choice(SHARED)
        token = f"tok{me}x{i}"
        try:
            if kind == "read":
                m = md.read(path)
                if not TOKEN.match(m.body):
                    problems.append(f"read {path}: unexpected body {m.body[:80]!r}")
                done.append(("read", path, m.body, m.version))
            elif kind == "write":
                m = md.write(path, token + "\n")
                done.append(("write", path, token, m.version, None))
            elif kind == "cas":
                try:
                    seen: str | None = md.read(path).version
                except memdir.NotFound:
                    seen = None
                m = md.write(path, token + "\n", expect=seen)
                done.append(("write", path, token, m.version, seen or "new"))
            elif kind == "rename":
                dest = rng.choice([p for p in SHARED if p != path])
                m = md.rename(path, dest)
                done.append(("rename", path, dest, m.version))
            else:
                expect: Any = md.read(path).version if kind == "cas-delete" else memdir.ANY
                md.delete(path, expect=expect)
                done.append(("delete", path))
        except (memdir.Conflict, memdir.NotFound):
            conflicts += 1
        except Exception as e:  # anything else is a failure of the suite
            problems.append(f"{kind} {path}: {type(e).__name__}: {e}")
    md.close()
    conn.send((done, conflicts, problems))


# ---------------------------------------------------------------- rewriting the past: forget and compaction

REWRITE_PATHS = ["a.md", "b.md", "d/e.md"]


def history_for_rewrites(md: memdir.Memdir, tag: str) -> None:
    """A few versions of each file, long enough to be packed, and a rename: what a forget or compaction rewrites."""
    for n in range(4):
        for path in REWRITE_PATHS[: 3 - n % 2]:
            md.write(path, "".join(f"{tag} {path} version {n} line {i}\n" for i in range(30)))
    md.rename("d/e.md", "d/f.md")
    md.write("d/f.md", f"{tag} moved\n" * 30)


def rewrite(md: memdir.Memdir, action: str) -> None:
    """Forget a.md, or compact the whole journal keeping one older version of each file (retention that drops)."""
    import datetime as dt

    from memdir.core import history
    from memdir.remember import forget

    if action == "forget":
        forget.erase(md, "a.md")
    else:
        later = dt.datetime.now(dt.UTC) + dt.timedelta(days=2)  # every record is older than the retention's days
        history.compact(md.store, retention=history.Retention(days=1, versions=1), now=later)


def rewriter(location: str, tenant: str | None, env: dict[str, str], action: str, at: int, lease: float,
             conn: Any) -> None:
    """In a child process: forget or compact (`rewrite`) until the at-th boundary call kills it; `at` 0 kills
    nowhere and sends what each point was (`Points.calls`), so the points measured are the ones a killed child
    meets (a fresh process, its memory just opened)."""
    os.environ.update(env)
    from memdir.stores.s3 import S3Store

    S3Store.lease_seconds = lease
    md = memdir.open(location, tenant=tenant)
    points = Points(at or 10**9, "kill", record=not at)
    with boundary(md, points):
        rewrite(md, action)
    conn.send_bytes(b"done")
    if points.calls is not None:
        conn.send(points.calls)
