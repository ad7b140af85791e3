"""Forgetting, proven: after `erase` or `redact`, no byte of the string is left anywhere memdir keeps one.

Every byte under the memory root and `.memdir/`, the SQLite files (their free pages and write-ahead logs
included), the local caches (vectors, S3's index copy), every visible row of every PostgreSQL table
(listed from the database's catalog) and every S3 object (gunzipped) is read, raw and with each blob and base64
value decompressed where it decompresses, and searched for the string; the SQLite FTS tables are asked
for their terms. On all four backends.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import gzip
import json
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BUCKET, Backend

import memdir
from memdir import NotFound
from memdir.remember import diary, forget, timeline
from memdir.search import VECTOR_SIDES, semantic, vector_files, vector_location
from memdir.search.fts import cache_folder
from memdir.testing import FakeEmbedder

SECRET = "Zqvervainossuary4471"  # one token: the FTS index would keep it whole
UTC = dt.UTC


def _texts(value: Any) -> Iterator[bytes]:
    """A stored value, and what it decompresses or base64-decodes to (packed journal content)."""
    if isinstance(value, memoryview):
        value = bytes(value)
    if isinstance(value, str):
        yield value.encode()
        try:
            value = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return
    if isinstance(value, bytes):
        yield value
        try:
            yield zlib.decompress(value)
        except zlib.error:
            pass


def _json_strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for v in data.values():
            yield from _json_strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from _json_strings(v)


def _sqlite_hits(path: Path, needle: bytes) -> list[str]:
    hits = []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            try:
                rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
            except sqlite3.Error:
                continue  # a virtual table whose module this connection lacks
            for row in rows:
                if any(needle in t.lower() for v in row for t in _texts(v)):
                    hits.append(f"{path}: row of {table}")
        for fts in [t for t in tables if "_fts" in t and not t.endswith(("_data", "_idx", "_config", "_docsize"))]:
            db.execute(f"CREATE VIRTUAL TABLE temp.v_{fts} USING fts5vocab(main, '{fts}', 'row')")
            if db.execute(f"SELECT term FROM temp.v_{fts} WHERE term LIKE ?", (f"%{needle.decode()}%",)).fetchall():
                hits.append(f"{path}: term in {fts}")
    finally:
        db.close()
    return hits


def leftovers(backend: Backend, md: memdir.Memdir, needle: str, pg: Any = None, s3: Any = None) -> list[str]:
    """Every place the string is found (lower-cased, raw or decompressed), one line each."""
    low = needle.lower().encode()
    hits: list[str] = []
    roots = [*(vector_location(md.store, side) for side in VECTOR_SIDES), cache_folder(md.store.key)]
    if backend.name == "fs":
        roots.append(Path(backend.location))
    if backend.name == "sqlite":
        db = Path(backend.location.split("://", 1)[1])
        roots += [db, Path(f"{db}-wal"), db.with_name(db.name + "-vectors")]
    files = []
    for root in roots:
        if root is None or not root.exists():
            continue
        files += [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
    for f in sorted(set(files)):
        data = f.read_bytes()
        if low in data.lower():
            hits.append(f"{f}: bytes")
        if data.startswith(b"SQLite format 3") and not f.name.endswith(("-wal", "-shm")):
            hits += _sqlite_hits(f, low)
    if pg is not None:
        import psycopg

        with psycopg.connect(pg.admin_url, autocommit=True) as conn:  # a superuser: every tenant's visible rows
            tables = [r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
            for table in tables:
                for row in conn.execute(f'SELECT * FROM "{table}"'):
                    if any(low in t.lower() for v in row for t in _texts(v)):
                        hits.append(f"postgres: row of {table}")
    if s3 is not None:
        import boto3

        client = boto3.client("s3")
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=backend.ns + "/"):
            for item in page.get("Contents", []):
                body = client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
                body = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body  # journal objects, snapshots
                texts = list(_texts(body))
                try:
                    texts += [t for s in _json_strings(json.loads(body)) for t in _texts(s)]
                except ValueError:
                    pass
                if any(low in t.lower() for t in texts):
                    hits.append(f"s3: {item['Key']}")
    return hits


def _clean(backend: Backend, md: memdir.Memdir, needle: str, pg: Any = None, s3: Any = None) -> None:
    found = leftovers(backend, md, needle, pg, s3)
    assert found == [], "\n".join(found)


def _services(backend: Backend, request: pytest.FixtureRequest) -> tuple[Any, Any]:
    pg = request.getfixturevalue("postgres") if backend.name == "postgres" else None
    s3 = request.getfixturevalue("s3_server") if backend.name == "s3" else None
    return pg, s3


def _session(md: memdir.Memdir, path: str, said: str) -> None:
    md.write(path, f"---\nname: session s1\ndescription: cache tuning with {said}\ntype: session\n"
             f"learnings:\n- {said} prefers short TTLs\n---\nUser: remember {said}, it is my login.\n")


def test_an_erased_memory_leaves_no_byte_anywhere(backend: Backend, request: pytest.FixtureRequest) -> None:
    pg, s3 = _services(backend, request)
    with backend.open() as md:
        md.write("people/bob.md", f"Bob's badge is {SECRET}.\n", description=f"badge {SECRET}")
        for i in range(4):
            md.edit("people/bob.md", "badge is", f"badge (v{i}) is") if i == 0 else \
                md.write("people/bob.md", f"Bob's badge (v{i}) is {SECRET}; 배지 {i}.\r\n", description=f"badge {SECRET}")
        md.write("people/bob-new.md", "Bob has a new badge.\n", description="the new badge")
        timeline.supersede(md, "people/bob.md", by="people/bob-new.md", reason=f"replaced {SECRET[:4]}")
        _session(md, "sessions/2026-05-09-094217-s1.md", SECRET)
        _session(md, "sessions/2026-05-09-101500-s2.md", "nothing secret")
        report = diary.rollup(md, day_label="2026-05-09", now=dt.datetime(2026, 5, 11, tzinfo=UTC))
        assert [s.status for s in report.steps] == ["done"]
        semantic.reindex(md, embedder=FakeEmbedder())
        assert md.search(SECRET) and md.grep(SECRET)
        assert leftovers(backend, md, SECRET, pg, s3)  # the check finds what is there

        planned, _ = forget.plan(md, "people/bob.md")
        assert planned.paths == ("archive/people/bob.md", "people/bob.md") and planned.records >= 6
        erased = forget.erase(md, "people/bob.md")
        assert erased.done and erased.notes == ()
        day = forget.erase(md, "sessions/2026-05-09-094217-s1.md")
        assert day.rollups == ("diary/2026-05-09.md",)
        assert set(day.paths) == {"sessions/2026-05-09-094217-s1.md", "archive/sessions/2026-05-09-094217-s1.md",
                                  "diary/2026-05-09.md"}
        _clean(backend, md, SECRET, pg, s3)
        assert SECRET.lower() not in repr(md.search(SECRET)).lower() and md.grep(SECRET) == []
        semantic.reindex(md, embedder=FakeEmbedder())
        assert [r.op for r in md.history("people/bob.md")] == ["forget"]
        assert md.history("people/bob.md")[0].old is None and md.history("people/bob.md")[0].new is None
        with pytest.raises(NotFound):
            md.undo("people/bob.md")
        assert md.read("people/bob-new.md").body == "Bob has a new badge.\n"
        assert md.read("archive/sessions/2026-05-09-101500-s2.md").meta["description"] == "cache tuning with nothing secret"
        assert md.reconcile().clean
    with backend.open() as md:
        _clean(backend, md, SECRET, pg, s3)
        assert md.reconcile().clean


def test_redacting_a_string_reaches_every_version_and_says_where(backend: Backend,
                                                                 request: pytest.FixtureRequest) -> None:
    pg, s3 = _services(backend, request)
    with backend.open() as md:
        md.write("notes/login.md", f"the locker code is {SECRET}\n", description="login")
        md.write("notes/login.md", "the locker code is rotated\n")
        md.write("project/deploy.md", f"the room is {SECRET} and again {SECRET}\n", description=f"room {SECRET}")
        md.write("project/other.md", "nothing here\n")
        seen = forget.redact(md, SECRET, dry_run=True)
        assert seen.files == {"project/deploy.md": 3} and not seen.done and leftovers(backend, md, SECRET, pg, s3)
        done = forget.redact(md, SECRET)
        assert done.files == {"project/deploy.md": 3} and len(done.records) == 3 and done.done
        _clean(backend, md, SECRET, pg, s3)
        assert md.read("project/deploy.md").body == "the room is [redacted] and again [redacted]\n"
        assert md.read("project/deploy.md").description == "room [redacted]"
        assert md.history("notes/login.md")[-1].new is not None
        assert b"the locker code is [redacted]" in (md.history("notes/login.md")[-1].new or b"")
        assert md.read("notes/login.md").body == "the locker code is rotated\n"
        md.undo("project/deploy.md")  # the redaction's own record holds the redacted text both sides
        assert SECRET not in md.read("project/deploy.md").text
        assert forget.redact(md, pattern=r"rotat\w+").files == {"notes/login.md": 1}
        assert forget.redact(md, "absent").found == 0
        assert md.reconcile().clean


def test_the_multilingual_models_vectors_are_erased_and_dropped_too(backend: Backend,
                                                                     request: pytest.FixtureRequest) -> None:
    pg, s3 = _services(backend, request)
    with backend.open("many") as md:
        md.write("people/bob.md", f"鲍勃的工牌号是 {SECRET}。\n", description=f"工牌 {SECRET}")
        md.write("notes/tea.md", "我们喜欢喝绿茶。\n", description="绿茶")
        semantic.reindex(md)  # a memory in Chinese: the English model's vectors and the multilingual one's
        assert len(vector_files(md.store)) == 2 and leftovers(backend, md, SECRET, pg, s3)
        forget.erase(md, "people/bob.md")
        _clean(backend, md, SECRET, pg, s3)
        store = md.store
    forget.drop_tenant(backend.location, backend.tenant("many"))
    assert vector_files(store) == []


def test_a_dropped_tenant_leaves_nothing_and_its_neighbour_whole(backend: Backend,
                                                                 request: pytest.FixtureRequest) -> None:
    pg, s3 = _services(backend, request)
    with backend.open("gone") as md:
        md.write("a.md", f"{SECRET} one\n", description=SECRET)
        md.write("a.md", f"{SECRET} two\n")
        md.search(SECRET)
        semantic.reindex(md, embedder=FakeEmbedder())
        gone_tenant = md.store
    with backend.open("kept") as md:
        md.write("a.md", "neighbour one\n", description="n")
        md.write("b/c.md", "neighbour two\n")
        md.search("neighbour")
        before = ([(r.seq, r.op, r.path, r.old, r.new) for r in md.history()],
                  {p: md.store.get(p) for p, _ in md.store.list()}, md.index())
    removed = forget.drop_tenant(backend.location, backend.tenant("gone"))
    assert removed
    with backend.open("kept") as md:
        after = ([(r.seq, r.op, r.path, r.old, r.new) for r in md.history()],
                 {p: md.store.get(p) for p, _ in md.store.list()}, md.index())
        assert after == before and md.search("neighbour")
        _clean(backend, md, SECRET, pg, s3)
    assert vector_location(gone_tenant) is None or not vector_location(gone_tenant).exists()  # type: ignore[union-attr]
    with pytest.raises((NotFound, memdir.StoreError)):
        forget.drop_tenant(backend.location, backend.tenant("gone"))
