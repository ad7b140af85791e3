"""Crash consistency on every backend: SIGKILL at random points, and disks that fill up or fail.

A child process runs writes, compare-and-swap writes, renames and deletes
(each also rewrites MEMORY.md) and is killed with SIGKILL at the k-th call
the store makes to what lies beneath it (k random), before or after that
call. After each kill the memory must open, hold for every path either what
the last acknowledged change left or what the change in flight would leave
(never a torn file, never a lost acknowledged write, never both names of a
rename), and its journal, catalog and index must agree after `reconcile`.
The same workload then runs in process with a full disk (ENOSPC) or an I/O
error (EIO) injected at random calls: every operation either succeeds or
fails with a one-line `StoreError`, and a failed one changed nothing.

Rewriting the past is killed the same way: a forget (`remember/forget.py`)
and a compaction that drops versions (`core/history.py`), each at a random
call. After the kill the memory holds what it held before, or (a forget)
that without the forgotten file; every journal record left is the one
written or its `thinned` stub, each file's newest intact; and the same
operation run again completes it. A measuring child names each call a
rewrite makes; `make test` kills it at a few of them (spread over the calls,
and the ones that found bugs, `PINNED`), `make soak` at every one.

The lease's heartbeat is not counted: the k-th call is the same one in every run.
`make test` kills each backend's writes KILLS times; `make soak` (MEMDIR_SOAK=1) 500.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from typing import Any

import pytest
import storefaults as sf
from conftest import Backend

import memdir

KILLS = 500 if sf.SOAK else 10  # seeded: the same points each run (50, then 15 before: the suite's time)
FAULTS = 100 if sf.SOAK else 6  # per kind of fault (10 before)
OPS = 6  # per child (4 on S3, where every request is a round trip)
BLOCK = 10  # runs per memory: a fresh tenant after that keeps every journal short (S3 reads it all on open)
LEASE = 0.1  # S3 lease seconds here, so a killed writer's lease is taken over quickly
ENV_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL")


def _context() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["storefaults"])  # children start with memdir, psycopg and boto3 loaded
    return ctx


def outcome(messages: list[str], ops: list[sf.Op], state: dict[str, str]) -> tuple[dict[str, str], sf.Op | None]:
    """The model after the acknowledged ops, and the op in flight when the child died (if any)."""
    pending = None
    for message in messages:
        kind, _, index = message.partition(" ")
        if kind == "s":
            pending = ops[int(index)]
        elif kind == "o":
            state = sf.apply(state, ops[int(index)])
            pending = None
        elif kind == "e":
            assert sf.apply(state, ops[int(index)]) == state, f"memdir refused {ops[int(index)]} but the model expected it"
            pending = None
    return state, pending


def verify(backend: Backend, tenant: str, candidates: list[dict[str, str]]) -> dict[str, str]:
    with backend.open(tenant) as md:  # recovery runs here: it must never raise
        files = sf.stored(md)
        got = sf.bodies(files)
        assert got in candidates, {"got": sorted(got), "expected one of": [sorted(c) for c in candidates]}
        sf.check_consistent(md, files)
        return got


@pytest.fixture(autouse=True)
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed writer's S3 lease is taken over quickly here, and only here: the rest of the suite keeps the default."""
    from memdir.stores.s3 import S3Store

    monkeypatch.setattr(S3Store, "lease_seconds", LEASE)


def test_sigkill_at_random_points_loses_nothing(backend: Backend) -> None:
    kill_at_random(backend, KILLS)


def kill_at_random(backend: Backend, wanted: int) -> None:
    ctx = _context()
    rng = random.Random(f"crash-{backend.name}")
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    kills = cycles = inflight = 0
    state: dict[str, str] = {}
    while kills < wanted:
        cycles += 1
        tenant = f"k{cycles // BLOCK}"
        if cycles % BLOCK == 0 or cycles == 1:
            state = {}
        assert cycles < wanted * 3, f"only {kills} kills in {cycles} runs: the kill points are out of reach"
        ops = sf.plan(rng, cycles * OPS, 4 if backend.name == "s3" else OPS, f"kill{cycles}")
        at = rng.randint(1, 70 if backend.name == "s3" else 160)
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=sf.child,
                           args=(backend.location, backend.tenant(tenant), env, ops, at, LEASE, send))
        proc.start()
        send.close()
        messages = []
        while True:
            try:
                messages.append(recv.recv_bytes().decode())
            except EOFError:
                break
        proc.join(120)
        assert proc.exitcode is not None, "a child hung"
        if proc.exitcode == -9:
            kills += 1
        else:
            assert proc.exitcode == 0 and messages[-1] == "done", (proc.exitcode, messages[-3:])
        state, pending = outcome([m for m in messages if m != "done"], ops, state)
        inflight += pending is not None
        if backend.name == "s3" and proc.exitcode == -9:
            time.sleep(LEASE)  # the dead writer's lease must expire before recovery may take it over
        state = verify(backend, tenant, [state] + ([sf.apply(state, pending)] if pending else []))
    print(f"\n{backend.name}: {kills} kills survived in {cycles} runs ({inflight} with a change in flight)")
    assert inflight > kills // 4  # most kills land inside a change, not between them


@pytest.mark.parametrize("action", ["enospc", "eio"])
def test_a_full_or_failing_disk_fails_cleanly_and_loses_nothing(backend: Backend, action: str) -> None:
    rng = random.Random(f"fault-{backend.name}-{action}")
    state: dict[str, str] = {}
    fired = failed = 0
    for cycle in range(FAULTS):
        tenant = f"{action}{cycle // BLOCK}"
        if cycle % BLOCK == 0:
            state = {}
        ops = sf.plan(rng, cycle * OPS, OPS, f"{action}{cycle}")
        points = sf.Points(rng.randint(1, 40), action)
        with backend.open(tenant) as md:
            with sf.boundary(md, points):
                for op in ops:
                    points.armed = True  # faults strike the operation, not the checks below
                    try:
                        sf.run(md, op)
                    except (memdir.NotFound, memdir.Conflict):
                        points.armed = False
                        assert sf.apply(state, op) == state
                        continue
                    except memdir.StoreError as e:
                        points.armed = False
                        assert "\n" not in str(e) and str(e)
                        failed += 1
                        assert sf.actual(md) == state, f"{op} failed ({e}) but changed the memory"
                        continue
                    points.armed = False
                    state = sf.apply(state, op)
                    assert sf.actual(md) == state, f"{op} succeeded but the memory does not show it"
            fired += points.fired
        if backend.name == "s3":
            time.sleep(LEASE)  # a failed lease release leaves the lease to expire
        state = verify(backend, tenant, [state])
    print(f"\n{backend.name} {action}: {fired} faults injected, {failed} operations failed cleanly")
    assert fired >= FAULTS // 2


# The kill points of a rewrite that found bugs, by what the call is: every run kills there (the first such call).
PINNED = {
    # an S3 forget killed between its commit point and deleting the file left the file, which reconcile then
    # journaled as new: the lease holder that took over skipped the half-applied commit (its records let go of)
    ("s3", "forget"): ["after put_object journal/", "before delete_object files/"],
    ("s3", "compact"): ["after put_object journal/"],  # the merged journal object written, the merged not deleted
}
SAMPLE = 3  # points besides the pinned ones `make test` kills each rewrite at, spread over its calls


def kill_points(calls: list[str], pinned: list[str]) -> list[int]:
    """Which boundary calls to kill a rewrite at: every one under MEMDIR_SOAK, else the pinned ones and a spread."""
    if sf.SOAK:
        return list(range(1, len(calls) + 1))
    for label in pinned:
        assert label in calls, f"no call {label!r} among the rewrite's: {sorted(set(calls))}"
    spread = {round(len(calls) * (i + 1) / (SAMPLE + 1)) for i in range(SAMPLE)}
    return sorted(spread | {calls.index(label) + 1 for label in pinned})


@pytest.mark.parametrize("action", ["forget", "compact"])
def test_sigkill_while_rewriting_the_past_loses_nothing_and_completes(backend: Backend, action: str) -> None:
    ctx = _context()
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    calls = _measured(ctx, backend, env, action)
    points = kill_points(calls, PINNED.get((backend.name, action), []))
    for at in points:
        tenant = f"r{at}"
        with backend.open(tenant) as md:
            sf.history_for_rewrites(md, tenant)
            before = sf.actual(md)
            journal = {r.seq: r for r in md.history()}
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=sf.rewriter, args=(backend.location, backend.tenant(tenant), env, action, at, LEASE,
                                                     send))
        proc.start()
        send.close()
        try:
            finished = recv.poll(120) and recv.recv_bytes() == b"done"
        except EOFError:  # killed
            finished = False
        proc.join(120)
        assert not finished and proc.exitcode == -9, f"not killed at {at} ({calls[at - 1]}): {proc.exitcode}"
        if backend.name == "s3":
            time.sleep(LEASE)  # the dead writer's lease must expire before recovery may take it over
        for attempt in (f"after the kill at {at} ({calls[at - 1]})", "run again"):
            with backend.open(tenant) as md:
                _check_rewritten(md, action, before, journal, attempt)
                if attempt != "run again":
                    sf.rewrite(md, action)
    print(f"\n{backend.name} {action}: killed at {len(points)} of the {len(calls)} calls a rewrite makes")


def _measured(ctx: Any, backend: Backend, env: dict[str, str], action: str) -> list[str]:
    """The boundary calls a rewrite makes in a child, as a killed one meets them (a fresh process and open)."""
    with backend.open("measure") as md:
        sf.history_for_rewrites(md, "measure")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=sf.rewriter, args=(backend.location, backend.tenant("measure"), env, action, 0, LEASE,
                                                 send))
    proc.start()
    send.close()
    assert recv.poll(120) and recv.recv_bytes() == b"done"
    calls: list[str] = recv.recv()
    proc.join(120)
    assert proc.exitcode == 0 and calls, proc.exitcode
    return calls


def _check_rewritten(md: memdir.Memdir, action: str, before: dict[str, str], journal: dict[int, Any],
                     attempt: str) -> None:
    files = sf.stored(md)
    gone = {k: v for k, v in before.items() if k != "a.md"}
    got = sf.bodies(files)
    assert got == before or (action == "forget" and got == gone), (attempt, sorted(got))
    sf.check_consistent(md, files)
    for rec in md.history():
        was = journal.get(rec.seq)
        if was is None:  # written by the rewrite: a forget's record, without content
            assert (action, rec.op, rec.old, rec.new) == ("forget", "forget", None, None), (attempt, rec)
        elif rec != was:
            assert rec.op == "thinned" and rec.old is None and rec.new is None, (attempt, rec, was)
            assert action == "compact" or (rec.path == "a.md" and rec.op == "forget"), (attempt, rec)
    if attempt == "run again" and action == "forget":
        assert got == gone and all(r.old is None and r.new is None for r in md.history("a.md")), attempt
    if attempt == "run again" and action == "compact":
        assert any(r.op == "thinned" for r in md.history()), "the compaction dropped nothing"
