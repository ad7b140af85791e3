"""Rewriting the past on every backend: `Store.rewrite` (records replaced, dropped, packed), `scrub` and `drop`.

The same behaviours on the folder, SQLite, PostgreSQL and S3 stores, real servers included,
as the conformance suite runs them (`backend`, `memory`).
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from conftest import Backend
from hypothesis import given, settings
from hypothesis import strategies as st

import memdir
from memdir import StoreError
from memdir.stores import packing
from memdir.stores.base import Change, Record

LINES = [f"- fact {i}: the {w} deploy runs at {i % 24:02d}:00 on 노드 {i} 节点\n" for i, w in
         enumerate(["staging", "prod", "canary", "nightly"] * 60)]


def _versions(md: memdir.Memdir, path: str, n: int, seed: int = 1) -> list[str]:
    """Write `n` versions of a ~16 KB file, each a few lines edited; returns the bodies written."""
    rng = random.Random(seed)
    lines = list(LINES)
    bodies = []
    for i in range(n):
        for _ in range(3):
            lines[rng.randrange(len(lines))] = f"- edit {i}: {rng.random():.12f}\r\n"
        body = "".join(lines)
        md.write(path, body, description=f"version {i}")
        bodies.append(body)
    return bodies


def _content(md: memdir.Memdir, path: str) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.seq, r.old, r.new) for r in md.history(path)]


# ---------------------------------------------------------------- the codec


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a\n", "b\r\n", "日本\n", "", "x" * 90 + "\n", "\r", "q"]), max_size=30),
                min_size=1, max_size=12))
def test_packed_chains_decode_to_every_version(versions: list[list[str]]) -> None:
    texts = ["".join(v).encode() for v in versions]
    records = [Record(seq=i + 1, time="t", actor="a", op="write", path="p.md", dest=None, old_version=None,
                      new_version=None, old=texts[i - 1] if i else None, new=texts[i]) for i in range(len(texts))]
    packed = packing.pack(records)
    rows = {r.seq: (replace(r, old=packed[r.seq].old, new=packed[r.seq].new), packed[r.seq].form, packed[r.seq].base)
            for r in records}
    got = packing.unpack(rows, lambda seqs: {})
    assert [(got[r.seq].old, got[r.seq].new) for r in records] == [(r.old, r.new) for r in records]


def test_a_delta_is_the_lines_changed() -> None:
    old = "".join(LINES).encode()
    new = old.replace(b"fact 7:", b"fact seven:")
    small = packing.delta(old, new)
    assert packing.patch(old, small) == new and len(small) < 120 < len(old) // 100
    smaller = packing.edelta(old, new)  # the inserted line's words are in the old content, the dictionary
    assert packing.epatch(old, smaller) == new and len(smaller) < len(small)
    d = packing.committed(old, new, None)  # a commit stores the smaller delta
    assert d.form == "ze0" and d.new == smaller


# ---------------------------------------------------------------- rewrite


def test_compaction_keeps_every_version_and_takes_less_room(memory: memdir.Memdir) -> None:
    _versions(memory, "topic.md", 40)
    before = _content(memory, "topic.md")
    stored = {r.seq: r for r in memory.store.journal()}
    memory.rewrite(lambda: ([], stored), same=True)
    assert _content(memory, "topic.md") == before
    assert memory.read("topic.md").body.encode() == before[0][2].split(b"---\n", 2)[2]  # type: ignore[union-attr]
    undone = memory.undo("topic.md")
    assert undone.text.encode() == before[0][1]
    assert memory.history("topic.md", limit=1)[0].new == before[0][1]


def test_compaction_survives_a_reopen(backend: Backend) -> None:
    with backend.open() as md:
        _versions(md, "a/topic.md", 12)
        md.write("b.md", "other\n")
        md.rename("b.md", "c.md")
        before = [(r.seq, r.path, r.dest, r.old, r.new) for r in md.history()]
        md.rewrite(lambda: ([], {r.seq: r for r in md.store.journal()}), same=True)
    with backend.open() as md:
        assert [(r.seq, r.path, r.dest, r.old, r.new) for r in md.history()] == before
        assert md.reconcile().clean


def test_records_are_replaced_and_dropped_and_the_newest_stays(memory: memdir.Memdir) -> None:
    for i in range(4):
        memory.write("p.md", f"v{i} secret-{i}\n")
    memory.write("q.md", "keep me\n")
    history = memory.store.journal("p.md")
    oldest, second = history[-1], history[-2]
    memory.rewrite(lambda: ([], {oldest.seq: None, second.seq: replace(second, old=b"[gone]\n", new=b"[gone]\n")}))
    got = memory.history("p.md")
    assert [r.seq for r in got] == [r.seq for r in history[:-1]]
    assert got[-1].new == b"[gone]\n" and got[-2].old == history[-3].old
    assert memory.read("q.md").body == "keep me\n"
    newest = memory.store.journal(limit=1)[0]
    with pytest.raises(StoreError, match="newest"):
        memory.rewrite(lambda: ([], {newest.seq: None}))
    assert memory.store.journal(limit=1)[0] == newest


def test_a_rewrite_commits_its_changes_with_new_seqs(memory: memdir.Memdir) -> None:
    memory.write("p.md", "one\n")
    memory.write("p.md", "two\n")
    old = memory.store.journal("p.md")
    blob = memory.store.get("p.md")
    assert blob is not None
    gone = Change(op="forget", path="p.md", data=None, expect=blob.version, old=None, entry=None,
                  actor="tester", time="2026-01-01T00:00:00Z")
    records = memory.rewrite(lambda: ([gone], {r.seq: None for r in old}))
    assert records[0].seq > old[0].seq and records[0].old is None
    assert memory.store.get("p.md") is None and memory.list() == []
    assert [(r.op, r.old, r.new) for r in memory.history("p.md")] == [("forget", None, None)]
    assert "p.md" not in memory.index()
    memory.write("p.md", "three\n")
    assert memory.store.journal(limit=1)[0].seq == records[0].seq + 1


def test_dropping_a_record_others_refer_to_keeps_them_whole(memory: memdir.Memdir) -> None:
    _versions(memory, "t.md", 10)
    memory.rewrite(lambda: ([], {r.seq: r for r in memory.store.journal()}), same=True)  # packed: chains of references
    history = memory.store.journal("t.md")
    middle = history[5]
    memory.rewrite(lambda: ([], {middle.seq: None}))
    assert [(r.seq, r.old, r.new) for r in memory.store.journal("t.md")] == \
        [(r.seq, r.old, r.new) for r in history if r.seq != middle.seq]


def test_another_open_memory_reads_the_rewritten_past(backend: Backend) -> None:
    with backend.open() as writer, backend.open() as reader:
        writer.write("p.md", "secret one\n")
        writer.write("p.md", "secret two\n")
        assert len(reader.history("p.md")) == 2
        old = writer.store.journal("p.md")
        blob = writer.store.get("p.md")
        assert blob is not None
        gone = Change(op="forget", path="p.md", data=None, expect=blob.version, old=None, entry=None,
                      actor="tester", time="2026-01-01T00:00:00Z")
        writer.rewrite(lambda: ([gone], {r.seq: None for r in old}))
        assert [(r.op, r.old, r.new) for r in reader.history("p.md")] == [("forget", None, None)]
        assert reader.list() == []


def test_scrub_answers_on_every_backend(memory: memdir.Memdir) -> None:
    memory.write("p.md", "x\n")
    assert memory.store.scrub() == []


# ---------------------------------------------------------------- drop


def test_dropping_a_tenant_leaves_its_neighbour_whole(backend: Backend) -> None:
    with backend.open("gone") as a, backend.open("kept") as b:
        _versions(a, "x.md", 3)
        _versions(b, "x.md", 3, seed=2)
        b.write("y/z.md", "neighbour\n", description="stays")
        kept = ([(r.seq, r.op, r.path, r.old, r.new) for r in b.history()],
                {p: b.store.get(p) for p, _ in b.store.list()})
    with backend.open("gone") as a:
        a.store.drop()
    with backend.open("gone") as a:
        assert a.list() == [] and a.history() == []
    with backend.open("kept") as b:
        assert ([(r.seq, r.op, r.path, r.old, r.new) for r in b.history()],
                {p: b.store.get(p) for p, _ in b.store.list()}) == kept
        assert b.reconcile().clean


# ---------------------------------------------------------------- crashes

FORGET_CRASH = {  # backend: what the child patches to die in the middle of a forget
    "fs": "from memdir.stores.fs import FileStore as S; S._apply = crash",
    "sqlite": "from memdir.stores.sqlite import SQLiteStore as S; S._rewriting = crash",
    "postgres": "from memdir.stores.postgres import PostgresStore as S; S._rewriting = crash",
    "s3": "from memdir.stores import s3rewrite; s3rewrite._edited = crash; from memdir.stores.s3 import S3Store as S; "
          "S.lease_seconds = 1",
}


def test_a_forget_killed_midway_leaves_a_consistent_memory(backend: Backend) -> None:
    import subprocess
    import sys
    import textwrap
    import time

    with backend.open() as md:
        md.write("p.md", "secret one\n", description="p")
        md.write("p.md", "secret two\n")
        md.write("q.md", "kept\n")
    code = textwrap.dedent(f"""
        import os, sys, memdir
        from memdir.remember import forget
        def crash(*a, **k):
            os._exit(9)
        {FORGET_CRASH[backend.name]}
        forget.erase(memdir.open(sys.argv[1], tenant=sys.argv[2] or None), "p.md")
    """)
    proc = subprocess.run([sys.executable, "-c", code, backend.location, backend.tenant() or ""],
                          capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    if backend.name == "s3":
        time.sleep(1.2)  # the dead writer's lease expires
    with backend.open() as md:
        assert md.read("q.md").body == "kept\n"
        ops = [r.op for r in md.history("p.md")]
        assert ops in (["write", "write"], ["forget"]), ops
        assert (md.store.get("p.md") is None) == (ops == ["forget"])
        assert md.reconcile().clean
        if backend.name == "s3" and ops == ["forget"]:  # committed: the next writer takes the dead one's lease over
            md.write("r.md", "next\n")  # and erases what the journal objects still hold of p.md
            assert [r.old or r.new for r in _stored_journal(md) if "p.md" in (r.path, r.dest)] == [None]
        from memdir.remember import forget

        forget.erase(md, "p.md")  # run again, it completes
        assert [r.op for r in md.history("p.md")][0] == "forget" and md.store.get("p.md") is None
        assert all(r.old is None and r.new is None for r in md.history("p.md"))
        assert md.read("q.md").body == "kept\n" and md.reconcile().clean


def _stored_journal(md: memdir.Memdir) -> list[Record]:
    """Every record the S3 journal objects hold, decoded, whatever a read of the journal would show."""
    from memdir.stores import s3rewrite

    store = md.store
    keys = [str(item["Key"])[len(store.base):] for item in store._keys("journal/")]  # type: ignore[attr-defined]
    return s3rewrite.decoded(s3rewrite.current(s3rewrite.fetch(store, keys)))
