"""Bounded history (issue 34, item 4): what the journal keeps against the live bytes, on every backend.

    python bench/churn.py                           # the four backends (PostgreSQL and S3 started as the tests do)
    python bench/churn.py --backends fs,sqlite      # some of them
    python bench/churn.py --src /work/main/src      # the same workloads on another checkout (before/after)
    python bench/churn.py --backends s3 --objects   # and what the S3 objects hold, by key prefix

Two workloads, with the default settings:
- churn: a 16 KB topic file rewritten 300 times, a few of its lines changed each time (an agent updating a fact);
- year: a busy agent's year simulated on a clock that moves a day at a time: 40 topic files, --per-day
  writes a day (edits of a few lines, appends, now and then a new file or a delete).

For each it prints the live bytes (the current files), what the store holds besides them and the search
index (`.memdir/` without the index's tables, the SQL tables' used pages or the tenant's rows but the files',
the S3 objects but `files/`), SQLite's free pages apart (reused by the next write; a compaction VACUUMs a
small file), and two ratios: held/live, and history/live, what the workload added to an `empty` memory
(one 2-byte file: on SQLite one page per table and index, ~70 KB a database holds whatever its size,
shared by its tenants). The target, at most 10x, is for the history. The memory is closed first (SQLite
folds its write-ahead log back). Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


OBJECTS: dict[str, list[int]] = {}  # the last S3 tenant measured: its objects' sizes by the first part of their key
WORDS = "deploy cache webhook invoice staging retry token budget review timezone export report".split()


def line(i: int, rng: random.Random) -> str:
    return f"- {' '.join(rng.choice(WORDS) for _ in range(6))} {i}: {rng.randrange(10**6)}\n"


def lines(n: int, rng: random.Random) -> list[str]:
    return [line(i, rng) for i in range(n)]


def churn(md: Any, rng: random.Random, rewrites: int) -> None:
    body = lines(290, rng)  # about 16 KB
    for i in range(rewrites):
        for _ in range(3):
            body[rng.randrange(len(body))] = line(i, rng)
        md.write("project/topic.md", "".join(body), description="the churned topic")


def year(md: Any, rng: random.Random, per_day: int, clock: list[dt.datetime]) -> None:
    files = {f"project/f{i:02d}.md": lines(rng.randrange(20, 120), rng) for i in range(40)}
    for day in range(365):
        clock[0] = dt.datetime(2025, 1, 1, 9, tzinfo=dt.UTC) + dt.timedelta(days=day)
        for k in range(per_day):
            clock[0] += dt.timedelta(minutes=7)
            path = rng.choice(sorted(files))
            body = files[path]
            roll = rng.random()
            if roll < 0.02 and len(files) > 20:
                md.delete(path)
                del files[path]
                continue
            if roll < 0.04:
                path = f"project/n{day:03d}-{k}.md"
                body = files[path] = lines(rng.randrange(10, 60), rng)
            elif roll < 0.5:
                body.append(line(day, rng))
            else:
                body[rng.randrange(len(body))] = line(day, rng)
            md.write(path, "".join(body), description=f"notes {path}")


def live(md: Any) -> int:
    return sum(len(md.store.get(p).data) for p, _ in md.store.list())


def _dbstat(path: Path, index: tuple[str, ...], live: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """(bytes of the used pages of tables and indexes but the live files', of the search index's, of the free pages)
    in a SQLite file, by dbstat. Free pages are SQLite's to reuse at the next write; a compaction VACUUMs a small file."""
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        free = db.execute("PRAGMA freelist_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()
    idx = sum(int(n) for name, n in rows if name.startswith(index))
    files = sum(int(n) for name, n in rows if live and name.startswith(live))
    return sum(int(n) for _, n in rows) - idx - files, idx, int(free)


def measure(name: str, location: str, tenant: str | None, md_store: Any) -> tuple[int, int, int]:
    """(bytes held besides the search index and free pages, the index's bytes, free pages' bytes), the memory closed."""
    if name == "fs":
        internal = Path(location) / ".memdir"
        others = sum(p.stat().st_size for p in internal.rglob("*")
                     if p.is_file() and not p.name.startswith(("vectors", "memdir.db")))
        used, idx, free = _dbstat(internal / "memdir.db", ("search_", "sqlite_autoindex_search"))
        wal = internal / "memdir.db-wal"
        return used + others + (wal.stat().st_size if wal.exists() else 0), idx, free
    if name == "sqlite":
        db = Path(location.split("://", 1)[1])
        held, idx, free = _dbstat(db, ("memdir_search", "sqlite_autoindex_memdir_search"),
                                  ("memdir_files", "sqlite_autoindex_memdir_files", "memdir_derived",
                                   "sqlite_autoindex_memdir_derived"))
        return held + (Path(f"{db}-wal").stat().st_size if Path(f"{db}-wal").exists() else 0), idx, free
    if name == "postgres":
        import psycopg

        held = idx = 0
        with psycopg.connect(location, autocommit=True) as conn:  # the owner: every row, FORCE RLS aside
            conn.execute("SELECT set_config('memdir.tenant', %s, false)", (tenant,))
            for (table,) in conn.execute("SELECT DISTINCT table_name FROM information_schema.columns "
                                         "WHERE column_name = 'tenant_id' AND table_schema = 'public'").fetchall():
                n = conn.execute(f"SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t "
                                 "WHERE tenant_id = %s", (tenant,)).fetchone()[0]
                if table == "memdir_search":
                    idx += int(n)
                elif table not in ("memdir_files", "memdir_derived"):  # the live files and their MEMORY.md
                    held += int(n)
        return held, idx, 0  # rows' bytes: dead versions and free space are autovacuum's (docs/forgetting.md)
    import boto3

    client = boto3.client("s3")
    bucket, prefix = location.split("://", 1)[1].split("/", 1)
    total = 0
    OBJECTS.clear()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for o in page.get("Contents", []):
            total += 0 if "/files/" in o["Key"] else int(o["Size"])  # not the files
            top = o["Key"].split("/tenants/", 1)[1].split("/")[1]
            OBJECTS.setdefault(top, []).append(int(o["Size"]))
    from memdir.search.fts import cache_folder

    search_db = cache_folder(md_store.key).rglob("search.db")
    return total, sum(p.stat().st_size for p in search_db), 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="fs,sqlite,postgres,s3")
    parser.add_argument("--rewrites", type=int, default=300)
    parser.add_argument("--per-day", type=int, default=12)
    parser.add_argument("--workloads", default="churn,year")
    parser.add_argument("--src", help="import memdir from this src folder (another checkout)")
    parser.add_argument("--objects", action="store_true", help="under each S3 row, its objects by key prefix")
    args = parser.parse_args()
    if args.src:
        sys.path.insert(0, args.src)
    sys.path.insert(0, str(HERE.parent / "tests"))
    import services

    import memdir
    from memdir import model

    clock = [dt.datetime.now(dt.UTC)]
    model.now_stamp = lambda: model.Stamp(clock[0].strftime("%Y-%m-%dT%H:%M:%SZ"))  # type: ignore[assignment]
    backends = args.backends.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="memdir-churn-"))
    os.environ["MEMDIR_CACHE"] = str(tmp / "cache")
    pg = services.start_postgres() if "postgres" in backends else None
    s3 = services.start_s3() if "s3" in backends else None
    if s3 is not None and not isinstance(s3, str):
        os.environ.update(services.AWS_ENV)
        os.environ["AWS_ENDPOINT_URL"] = s3.endpoint
        s3.make_bucket("churn")
    print(f"memdir from {Path(memdir.__file__).parent}")
    print(f"{'backend':9} {'workload':9} {'writes':>7} {'live KB':>9} {'held KB':>9} {'free KB':>8} {'index KB':>9} "
          f"{'held/live':>10} {'history/live':>13} {'seconds':>8}")
    floor: dict[str, int] = {}
    try:
        for n, workload in enumerate(["empty", *args.workloads.split(",")]):
            for name in backends:
                rng = random.Random(34)
                tenant = f"churn{n}"
                if name == "fs":
                    location = str(tmp / f"fs-{workload}")
                elif name == "sqlite":
                    location = f"sqlite://{tmp / f'{workload}.db'}"
                elif name == "postgres":
                    if pg is None or isinstance(pg, str):
                        continue
                    admin, location = pg.fresh_database(f"churn_{workload}")
                else:
                    if s3 is None or isinstance(s3, str):
                        continue
                    location = f"s3://churn/{workload}"
                start = time.perf_counter()
                clock[0] = dt.datetime.now(dt.UTC)
                with memdir.open(location, tenant=tenant if name != "fs" else None) as md:
                    if workload == "empty":  # what a memory holds before any history: its tables' first pages
                        md.write("project/empty.md", "x\n")
                        writes = 1
                    elif workload == "churn":
                        churn(md, rng, args.rewrites)
                        writes = args.rewrites
                    else:
                        year(md, rng, args.per_day, clock)
                        writes = 365 * args.per_day
                    md.search("deploy cache")
                    size = live(md)
                    store = md.store
                seconds = time.perf_counter() - start
                held, idx, free = measure(name, admin if name == "postgres" else location, tenant, store)
                beyond = "" if workload == "empty" else f"{(held - floor[name]) / size:12.1f}x"
                floor.setdefault(name, held)
                print(f"{name:9} {workload:9} {writes:7d} {size / 1024:9.1f} {held / 1024:9.1f} {free / 1024:8.1f} "
                      f"{idx / 1024:9.1f} {held / size:9.1f}x {beyond:>13} {seconds:8.1f}", flush=True)
                if args.objects and name == "s3":
                    print("          " + ", ".join(f"{top} {len(sizes)} objects {sum(sizes) / 1024:.1f} KB"
                                                   for top, sizes in sorted(OBJECTS.items())), flush=True)
    finally:
        if pg is not None and not isinstance(pg, str):
            pg.stop()
        if s3 is not None and not isinstance(s3, str):
            s3.stop()


if __name__ == "__main__":
    main()
