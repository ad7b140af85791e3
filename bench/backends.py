"""Backend benchmark: read, write, list, index, grep and concurrent writes on every store.

    python bench/backends.py                       # fs, sqlite, postgres, s3 at 1,000 and 10,000 files
    python bench/backends.py --backends sqlite,postgres --sizes 1000

For each backend and size, one tenant holds the files and 10 other tenants
hold `--others` files each (default 1,000). PostgreSQL runs durably
(fsync on) on loopback; S3 is moto's server on loopback, one request at a
time. Prints median and p95 in milliseconds, and writes per second with 8
writer processes. Not a test: run it, read it, paste it.

Targets (issue #4): PostgreSQL and SQLite read under 1 ms median; index()
independent of the other tenants' files (compare the cold index rows, taken
before and after the other tenants were filled). Issue 23, item 1: what a
request handler pays to open a tenant's memory, read one file and close it,
with `memdir.open` (a connection or client of its own) and with
`memdir.connect(url).tenant(t)` on the process's warm pool (PostgreSQL) or
shared client (S3): the warm open at most 1 ms median on PostgreSQL and S3
(where it asks S3 nothing), and on S3 the warm open and read about the one GET
of the file (its row: `one GET of the file`).

    python bench/backends.py --open-only --backends postgres,s3   # just those rows, in seconds
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))

from tests import services  # noqa: E402
from timing import summary, timed  # noqa: E402 - bench/timing.py, beside this script

import memdir  # noqa: E402
from memdir import model  # noqa: E402
from memdir.stores.base import Change  # noqa: E402
from memdir.stores.locations import open_store  # noqa: E402

KINDS = ("project", "reference", "user", "feedback")
WRITER = textwrap.dedent("""
    import random, sys, time
    import memdir
    md = memdir.open(sys.argv[1], tenant=sys.argv[2])
    paths, stop, rng, n = sys.argv[4].split(","), time.monotonic() + float(sys.argv[3]), random.Random(), 0
    while time.monotonic() < stop:
        md.write(rng.choice(paths), f"Concurrent body {n}.\\n" * 8, description=f"concurrent {n}")
        n += 1
    print(n)
""")


def layout(i: int) -> str:
    kind = KINDS[i % 4]
    return f"{kind}/g{i // 400:02d}/s{i // 100 % 4}/n{i:05d}.md"


def text_of(i: int) -> str:
    kind = KINDS[i % 4]
    return (f"---\nname: fact {i}\ndescription: fact number {i} about the {kind} side of things\ntype: {kind}\n"
            f"created: 2026-01-01\nupdated: 2026-01-01T00:00:00Z\n---\n"
            + f"Body of fact {i}. It mentions webhook {i % 97} and other details.\n" * 8)


def seed(location: str, tenant: str, n: int) -> list[str]:
    """n topic files committed in batches straight to the store (as an import would)."""
    store = open_store(location, tenant)
    paths = [layout(i) for i in range(n)]
    stamp = model.now_stamp()
    try:
        for start in range(0, n, 500):
            changes = []
            for i in range(start, min(n, start + 500)):
                text = text_of(i)
                entry = model.entry_of(model.memory(paths[i], text, "", memdir.Limits().types))
                changes.append(Change(op="write", path=paths[i], data=text.encode(), expect=None, old=None,
                                      entry=entry, actor="bench", time=stamp))
            with store.lock():
                store.commit(changes)
    finally:
        store.close()
    with memdir.open(location, tenant=tenant) as md:  # builds the MEMORY.md files
        md.index()
    return paths


def cold_index(location: str, tenant: str) -> float:
    start = time.perf_counter()
    with memdir.open(location, tenant=tenant) as md:
        md.index()
    return (time.perf_counter() - start) * 1000


def writers(location: str, tenant: str, paths: list[str], seconds: float) -> float:
    sample = ",".join(random.Random(2).sample(paths, 200))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, location, tenant, str(seconds), sample],
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
             for _ in range(8)]
    counts = [int((p.communicate()[0] or "0").strip() or 0) for p in procs]
    return sum(counts) / seconds


Row = tuple[str, str, int, float, float, str]


def bench(backend: str, location: str, n: int, others: int, quick: bool) -> list[Row]:
    print(f"  {backend} {n:,}: seeding", file=sys.stderr, flush=True)
    paths = seed(location, "main", n)
    rows: list[Row] = []
    os.sync()
    before = [cold_index(location, "main") for _ in range(5)]
    for t in range(10):
        seed(location, f"other{t}", others)
    os.sync()  # let the writes of the other tenants' files settle before timing again
    after = [cold_index(location, "main") for _ in range(5)]
    print(f"  {backend} {n:,}: measuring", file=sys.stderr, flush=True)
    rng = random.Random(1)
    runs = 100 if quick else 1000
    with memdir.open(location, tenant="main") as md:
        rows.append((backend, "read", n, *summary(timed(lambda: md.read(rng.choice(paths)), runs)), ""))
        counter = [0]

        def write() -> None:
            counter[0] += 1
            md.write(rng.choice(paths), f"Rewritten body {counter[0]}.\n" * 8, description=f"rewritten {counter[0]}")

        rows.append((backend, "write", n, *summary(timed(write, runs // 5)), "durable, with journal and index"))
        rows.append((backend, "list", n, *summary(timed(lambda: md.list("project/g00/"), runs)), "one folder"))
        md.index()
        rows.append((backend, "index()", n, *summary(timed(md.index, runs)), "warm"))
        rows.append((backend, "index() cold", n, *summary(before), "open + index, no other tenants"))
        rows.append((backend, "index() cold", n, *summary(after), f"open + index, 10 other tenants x {others:,}"))
        grep_runs = 1 if backend == "s3" and n > 1000 else 3 if quick or n > 1000 else 5
        rows.append((backend, "grep", n, *summary(timed(lambda: md.grep("webhook 13\\b"), grep_runs)), "all files"))
    rate = writers(location, "main", paths, 3.0 if quick else 5.0)
    rows.append((backend, "writes/s, 8 writers", n, rate, rate, "value | value"))
    return rows


def opening(backend: str, location: str, quick: bool) -> list[Row]:
    """Open a tenant, read one file, close: cold (`memdir.open`) and on the shared pool (`connect().tenant`)."""
    tenants = [f"open{i}" for i in range(20)]
    for t in tenants:
        with memdir.open(location, tenant=t) as md:
            md.write("user/profile.md", f"The profile of {t}.\n", description=f"who {t} is")
    rng = random.Random(3)
    runs = 50 if quick else 200

    def cold() -> None:
        with memdir.open(location, tenant=rng.choice(tenants)) as md:
            md.read("user/profile.md")

    db = memdir.connect(location)
    db.tenant(tenants[0]).read("user/profile.md")  # the pool (or client) is made once, before timing

    def warm_open() -> None:
        db.tenant(rng.choice(tenants)).close()

    def warm() -> None:
        with db.tenant(rng.choice(tenants)) as md:
            md.read("user/profile.md")

    rows: list[Row] = [
        (backend, "open + read + close", 1, *summary(timed(cold, runs // 5 if backend == "s3" else runs)),
         "memdir.open: own connection/client"),
        (backend, "tenant() open + close", 1, *summary(timed(warm_open, runs * 5)), "connect(url).tenant(t), warm pool"),
        (backend, "tenant() + read + close", 1, *summary(timed(warm, runs * 5)), "connect(url).tenant(t), warm pool"),
    ]
    if backend == "s3":  # what the read above should cost: the one GET of the file, with the same client
        from memdir.stores.s3shared import parse_url, shared_client

        bucket, prefix = parse_url(location)
        client = shared_client()

        def one_get() -> None:
            key = f"{prefix}/tenants/{rng.choice(tenants)}/files/user/profile.md"
            client.get_object(Bucket=bucket, Key=key)["Body"].read()

        rows.append((backend, "one GET of the file", 1, *summary(timed(one_get, runs * 5)), "boto3, the shared client"))
    db.close()
    return rows


def locations(backend: str, n: int, work: Path, pg: services.Postgres | None, s3: services.S3 | None) -> str:
    if backend == "fs":
        return str(work / f"fs{n}")
    if backend == "sqlite":
        return f"sqlite://{work / f'sqlite{n}.db'}"
    if backend == "postgres":
        assert pg is not None
        return pg.fresh_database(f"bench{n}")[1]
    assert s3 is not None
    return f"s3://memdir-bench/n{n}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated file counts of the measured tenant")
    parser.add_argument("--backends", default="fs,sqlite,postgres,s3")
    parser.add_argument("--others", type=int, default=1000, help="files in each of the 10 other tenants")
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--open-only", action="store_true", help="only the open-cost rows (issue 23, item 1)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    names = args.backends.split(",")
    rows: list[Row] = []
    with services.for_bench(names, "memdir-bench") as (pg, s3):
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                if not args.open_only:
                    for n in sizes:
                        rows += bench(name, locations(name, n, Path(tmp), pg, s3), n, args.others, args.quick)
                rows += opening(name, locations(name, 1, Path(tmp), pg, s3), args.quick)
    print(f"memdir {memdir.__version__} backend benchmark, Python {sys.version.split()[0]}, {os.cpu_count()} cores; "
          f"10 other tenants x {args.others:,} files")
    print()
    print("| backend | operation | files | median ms | p95 ms | note |")
    print("|---|---|---|---|---|---|")
    for backend, op, n, med, p95, note in rows:
        if note == "value | value":
            print(f"| {backend} | {op} | {n:,} | {med:,.0f} | | writes per second |")
        else:
            print(f"| {backend} | {op} | {n:,} | {med:.3f} | {p95:.3f} | {note} |")


if __name__ == "__main__":
    main()
