"""The Store protocol: bytes, versions, a journal and a catalog; no markdown.

A store keeps one tenant's topic files as bytes with opaque versions. Every
change arrives as a `Change` (what to write, the version it expects, the
journal record and the catalog entry) and `commit` applies content, journal
and catalog together, so they cannot disagree. `Memdir` does everything else.
"""

from __future__ import annotations

import builtins
import hashlib
import re
import sqlite3
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote

from ..errors import Conflict, NotFound
from ..model import Entry

REWRITES = ("forget", "redact")  # journal ops that rewrote the past: a process holding the journal loads it again
DEFAULT_TENANT = "default"
"""The tenant of `memdir.open(url)` without `tenant=` on the SQLite, PostgreSQL and S3 backends."""


@dataclass(frozen=True)
class Blob:
    data: bytes
    version: str


@dataclass(frozen=True)
class Change:
    """One journaled change.

    `data` is the new content of `dest or path` (None deletes `path`). `expect`
    is the version `path` must have now (None: must not exist); `dest`, when
    given, must not exist. `record_only` journals a change that is already in
    place (an edit made outside memdir, found by reconcile).
    """

    op: str
    path: str
    data: bytes | None
    expect: str | None
    old: bytes | None
    entry: Entry | None
    actor: str
    time: str
    dest: str | None = None
    undoes: int | None = None
    record_only: bool = False

    @property
    def target(self) -> str:
        return self.dest or self.path


@dataclass(frozen=True)
class Record:
    """One journal record, as `history` returns it (newest first)."""

    seq: int
    time: str
    actor: str
    op: str
    path: str
    dest: str | None
    old_version: str | None
    new_version: str | None
    old: bytes | None
    new: bytes | None
    undoes: int | None = None

    def to_dict(self, content: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seq": self.seq,
            "time": self.time,
            "actor": self.actor,
            "op": self.op,
            "path": self.path,
            "dest": self.dest,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "undoes": self.undoes,
        }
        if content:
            out["old"] = None if self.old is None else self.old.decode("utf-8", "replace")
            out["new"] = None if self.new is None else self.new.decode("utf-8", "replace")
        return out


class Store(Protocol):
    """One tenant's bytes: `FileStore`, `SQLiteStore`, `PostgresStore`, `S3Store`."""

    key: str  # stable identity of this tenant's storage (rate limits, logs)

    def get(self, path: str) -> Blob | None: ...

    def list(self, prefix: str = "") -> list[tuple[str, str]]:
        """(path, version) of every topic file under `prefix`, as stored."""
        ...

    def commit(self, changes: Sequence[Change]) -> builtins.list[Record]:
        """Apply content, journal and catalog atomically; `Conflict` if an expect fails."""
        ...

    def changes(self, since: int) -> tuple[int, builtins.list[tuple[str, Entry | None]]]:
        """Catalog entries changed after journal seq `since` (None = removed)."""
        ...

    def journal(
        self, path: str | None = None, *, limit: int | None = None, prefixes: Sequence[str] | None = None
    ) -> builtins.list[Record]:
        """Records newest first: all, or those whose path or dest is `path`; with `prefixes`,
        only records whose path starts with one of them (filtered and limited in the query)."""
        ...

    def derive(self, files: Mapping[str, bytes | None], seq: int) -> None:
        """Write (or remove) derived files such as MEMORY.md; they reflect catalog `seq`."""
        ...

    def derived(self) -> int:
        """The catalog seq the derived files were last written for."""
        ...

    def lock(self) -> AbstractContextManager[None]:
        """Exclusive, re-entrant, across processes: held around read-check-commit."""
        ...

    def recover(self) -> builtins.list[str]:
        """Finish or roll back interrupted writes; one message per repair. Never raises for one bad record."""
        ...

    def problems(self) -> builtins.list[str]:
        """What the store could not repair by itself (e.g. quarantined records), one line each."""
        ...

    def take(self, rate: int) -> float:
        """Take one write from this tenant's bucket of `rate` writes a minute, shared by every
        process and host; 0.0 if taken, else the seconds until one is free."""
        ...

    def resolve(self, path: str) -> str:
        """The path `path` really names (a folder store follows symlinks inside the root)."""
        ...

    def rewrite(self, edits: Mapping[int, Record | None], changes: Sequence[Change] = ()) -> builtins.list[Record]:
        """Commit `changes`, then replace journal records (by seq: a Record, stored packed) or drop them (None),
        all at once under the lock: how memdir forgets, redacts and compacts its past (`packing`). Never drops
        the newest record, so a seq is never given twice. Returns the records of `changes`."""
        ...

    def scrub(self) -> builtins.list[str]:
        """Make what was deleted unreadable in the store's own files (SQLite: VACUUM, the WAL truncated);
        one line for each place that could not be scrubbed now."""
        ...

    def drop(self) -> None:
        """Delete every byte of this tenant: its files, rows or objects (then close the store)."""
        ...

    def close(self) -> None: ...


def in_store_transaction(store: Store) -> bool:
    """Whether the store's search index is written inside the store's own transaction (SQL stores): a
    failure there undoes the whole change, where elsewhere the index is derived after the commit."""
    return type(store).__name__ in ("SQLiteStore", "PostgresStore")


def in_prefixes(path: str, prefixes: Sequence[str] | None) -> bool:
    """True if `prefixes` is None (no filter) or `path` starts with one of them."""
    return prefixes is None or any(path.startswith(p) for p in prefixes)


def prefix_bounds(prefix: str) -> tuple[str, str]:
    """[low, high) of the paths that start with a non-empty `prefix` (code point order)."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def prefix_sql(column: str, prefixes: Sequence[str]) -> tuple[str, builtins.list[str]]:
    """A SQL condition (with its arguments) for `column` starting with one of `prefixes`, as index-friendly ranges.

    Folder prefixes end in '/', so 'a/' covers ['a/', 'a0') in code-point (binary, COLLATE "C") order.
    """
    if "" in prefixes:
        return "1=1", []
    if not prefixes:
        return "1=0", []
    parts, args = [], []
    for p in prefixes:
        if p.endswith("/"):
            parts.append(f"({column} >= ? AND {column} < ?)")
            args += [p, p[:-1] + "0"]
        else:
            parts.append(f"substr({column}, 1, {len(p)}) = ?")
            args.append(p)
    return "(" + " OR ".join(parts) + ")", args


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def version_of(seq: int) -> str:
    """The version of content written by journal change `seq`: never repeats for a tenant."""
    return f"{seq:016x}"


def check_change(change: Change, current: str | None, dest_taken: bool) -> None:
    """Raise `Conflict` (or `NotFound`) unless `change` may apply to what is stored now."""
    if change.record_only:
        return
    if current != change.expect:
        if change.expect is None:
            raise Conflict(
                f"{change.path} already exists (version {current}); read it first, or write with its version",
                path=change.path,
            )
        if current is None:
            raise NotFound(f"{change.path} does not exist any more; it was deleted or renamed", path=change.path)
        raise Conflict(
            f"{change.path} changed since it was read (version {change.expect} is now {current}); read it again and retry",
            path=change.path,
        )
    if change.dest is not None and dest_taken:
        raise Conflict(f"{change.dest} already exists; pick another name or delete it first", path=change.dest)


def take_token(state: tuple[float, float] | None, rate: int, now: float) -> tuple[tuple[float, float], float]:
    """One token-bucket step: `state` is (tokens, time); returns the new state and the wait (0.0: taken).

    The bucket holds one minute's worth (`rate`) and refills continuously. Time
    never runs backwards for the bucket, so a host whose clock lags cannot mint tokens.
    """
    tokens, stamp = state if state is not None else (float(rate), now)
    tokens = min(float(rate), tokens + max(0.0, now - stamp) * rate / 60.0)
    stamp = max(stamp, now)
    if tokens >= 1.0:
        return (tokens - 1.0, stamp), 0.0
    return (tokens, stamp), max((1.0 - tokens) * 60.0 / rate, 0.001)


_SECRET_PARAM = re.compile(r"(?i)pass|pwd|secret|token|key|sig|auth|credential")


def _secret_spans(url: str) -> list[tuple[int, int]]:
    """Where a URL holds a secret: its user's password, and the value of each query parameter that may hold
    one (`password`, `sslpassword`, a token, a key, a signature). A password holding an unescaped `@`, `?`
    or `/` is taken whole (all of what a reader could take for it)."""
    head, sep, rest = url.partition("://")
    if not sep:
        return []
    base = len(head) + len(sep)
    spans = []
    slash = rest.find("/")
    at = rest.rfind("@", 0, len(rest) if slash < 0 else slash)  # the user's part ends at the last @ before the path
    if at < 0:  # or, a / unescaped in the password, at the last @ before the query
        at = rest.rfind("@", 0, len(rest) if "?" not in rest else rest.index("?"))
    if at >= 0 and ":" in rest[:at]:
        spans.append((base + rest.index(":") + 1, base + at))
    start = rest.find("?", max(at, 0))
    if start >= 0:
        query = rest[start + 1:].partition("#")[0]
        offset = base + start + 1
        for pair in query.split("&"):
            name, eq, value = pair.partition("=")
            if eq and value and _SECRET_PARAM.search(unquote(name)):
                spans.append((offset + len(name) + 1, offset + len(pair)))
            offset += len(pair) + 1
    return spans


def redact(url: str) -> str:
    """A URL fit for an error message, a log, a metric label or a probe: every secret it holds (`_secret_spans`)
    replaced by *** (`postgresql://app:***@db/memdir?password=***`)."""
    for start, end in reversed(_secret_spans(url)):
        url = url[:start] + "***" + url[end:]
    return url


def scrub(text: str, url: str) -> str:
    """`text` (a driver's error about `url`, say) without the secrets `url` holds, as written or unescaped."""
    for start, end in _secret_spans(url):
        for secret in {url[start:end], unquote(url[start:end])}:
            if len(secret) >= 3:  # shorter ones are words of the text as often as they are the secret
                text = text.replace(secret, "***")
    return text


def use_wal(db: sqlite3.Connection) -> None:
    """Switch a connection's database to WAL, waiting for other processes doing the same.

    Several processes opening a new database at once can get "database is
    locked" here at once, without SQLite's busy handler (it cannot wait while
    that would deadlock), so the wait is ours.
    """
    deadline = time.monotonic() + 60
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def scrub_sqlite(db: sqlite3.Connection, where: str) -> builtins.list[str]:
    """VACUUM a SQLite database and empty its write-ahead log, so deleted rows leave no byte in either file;
    one line if another process's open read keeps old pages in the log."""
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    for _ in range(20):
        if not db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
            return []
        time.sleep(0.05)
    return [f"{where}: another process is reading it, so its write-ahead log still holds old pages; "
            "run `memdir forget --scrub` again when it is idle"]
