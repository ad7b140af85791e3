"""Sixteen processes at once on every backend: reads, blind and compare-and-swap writes, renames and deletes.

They share five paths for a fixed time (2.5 s in `make test`, 60 s in `make
soak`). Afterwards: every acknowledged change is in the journal exactly once,
with the version it was acknowledged with; every compare-and-swap replaced
the version it had read; every read returned a committed version, never a
torn one; replaying the journal gives the stored files; and the catalog,
MEMORY.md and the search index agree with them. Every process must finish
in time: a deadlock fails the run.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

import storefaults as sf
from conftest import Backend

PROCESSES = 16
SECONDS = 60.0 if sf.SOAK else 2.5
ENV_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL")


def test_sixteen_processes_lose_nothing_and_agree_afterwards(backend: Backend) -> None:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["storefaults"])
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    with backend.open() as md:
        md.write("a.md", "tok0x0\n")
    pipes, procs = [], []
    for me in range(1, PROCESSES + 1):
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=sf.worker, args=(backend.location, backend.tenant(), env, me, SECONDS, send))
        proc.start()
        send.close()
        pipes.append(recv)
        procs.append(proc)
    results: list[Any] = []
    for recv, proc in zip(pipes, procs, strict=True):
        assert recv.poll(SECONDS + 240), "a process did not finish: deadlock or a stuck lock"
        results.append(recv.recv())
        proc.join(30)
        assert proc.exitcode == 0
    done = [item for r in results for item in r[0]]
    problems = [p for r in results for p in r[2]]
    assert problems == []

    with backend.open() as md:
        journal = list(reversed(md.history()))  # oldest first
        assert [r.seq for r in journal] == list(range(1, len(journal) + 1))
        written = {}  # token -> its journal record
        for rec in journal:
            if rec.op == "write":
                token = rec.new.decode().rsplit("\n", 2)[-2]  # type: ignore[union-attr]
                assert token not in written, f"{token} was journaled twice"
                written[token] = rec
        changes = [d for d in done if d[0] != "read"]
        assert len(journal) == 1 + len(changes), "the journal holds changes nobody acknowledged, or lacks some"
        by_version = {r.new_version: r for r in journal if r.new_version}
        for item in done:
            if item[0] == "write":
                _, path, token, version, seen = item
                rec = written[token]  # KeyError: an acknowledged write is not in the journal
                assert (rec.path, rec.new_version) == (path, version)
                if seen is not None:
                    assert rec.old_version == (None if seen == "new" else seen), (token, rec)
            elif item[0] == "rename":
                _, src, dest, version = item
                assert any(r.op == "rename" and (r.path, r.dest, r.new_version) == (src, dest, version) for r in journal)
            elif item[0] == "read":
                _, path, body, version = item
                rec = by_version[version]  # a read returned a version no change committed
                assert (rec.dest or rec.path) == path and rec.new.decode().endswith(body)  # type: ignore[union-attr]

        replayed: dict[str, bytes] = {}
        for rec in journal:
            if rec.dest:
                replayed.pop(rec.path, None)
            if rec.new is None:
                replayed.pop(rec.path, None)
            else:
                replayed[rec.dest or rec.path] = rec.new
        stored = {p: md.store.get(p).data for p, _ in md.store.list()}  # type: ignore[union-attr]
        assert stored == replayed
        assert md.reconcile().clean
        assert md.store.get("MEMORY.md").data.decode() == md.index()  # type: ignore[union-attr]
        assert [e.path for e in md.list()] == sorted(stored)
        for path, data in stored.items():
            token = data.decode().rsplit("\n", 2)[-2]
            assert [h.path for h in md.search(token, k=3)] == [path]
        gone = [t for t in written if all(not d.decode().endswith(t + "\n") for d in stored.values())]
        assert all(md.search(t) == [] for t in gone[:50])
    reads = sum(1 for d in done if d[0] == "read")
    cas = sum(1 for d in done if d[0] == "write" and d[4] is not None)
    print(f"\n{backend.name}: {PROCESSES} processes for {SECONDS:.0f} s: {reads} reads, {len(changes)} changes "
          f"({cas} compare-and-swap), {sum(r[1] for r in results)} refused by conflicts, nothing lost")
    assert len(changes) >= 5  # progress: they did change the memory (S3 writers queue on one lease, so few)
