"""Search and grep benchmark: the persistent lexical index at 1,000 to 100,000 files, on every backend.

    python bench/search.py                                   # fs at 1,000, 10,000 and 100,000 files
    python bench/search.py --backends sqlite,postgres,s3 --sizes 10000
    python bench/search.py --huge                            # also: a 2 MB and a 10 MB file, a catastrophic regex

Synthetic topic files (name, description, type, tags and eight lines of
words drawn from a 5,000-word vocabulary with a Zipf-like spread) are
committed straight to the store in batches, then the index is built with
`reindex` (timed: "index build"). Queries are three words of middling
frequency. "first search" opens the memory in a fresh process and times its
first search right after the open (a search loads no catalog: the index is
trusted when its seq is the store's); the target is at most 2x a warm search.
The catalog load that other commands pay is timed apart, after it. Prints median and p95 in milliseconds. Not a test: run it, read it,
paste it.

Targets (issues 8 and 10): lexical search under 5 ms at 10,000 files and
under 20 ms at 100,000; grep at 10,000 files under 50 ms on a folder and
under 100 ms on PostgreSQL and S3 (from the local index).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
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
VOCABULARY = 5000
FIRST = textwrap.dedent("""
    import json, sys, time
    started = time.perf_counter()
    import memdir
    md = memdir.open(sys.argv[1], tenant=sys.argv[2] or None)
    opened = time.perf_counter()
    md.search(sys.argv[3])  # what a CLI command or a hook does: no catalog is loaded for a search
    first = time.perf_counter()
    md.search(sys.argv[4])
    second = time.perf_counter()
    md.list("nowhere/")  # loads the catalog, which other commands need (not the search index's cost)
    catalog = time.perf_counter()
    md.search(sys.argv[5])
    third = time.perf_counter()
    print(json.dumps({"open": opened - started, "first": first - opened, "second": second - first,
                      "catalog": catalog - second, "third": third - catalog}))
""")


def word(i: int) -> str:
    """A pronounceable made-up word for vocabulary rank i (no stemming surprises: no common suffixes)."""
    consonants, vowels = "bdfgklmnprtvz", "aeiou"
    out, n = [], i + 1
    while n:
        n, r = divmod(n, len(consonants) * len(vowels))
        out.append(consonants[r % len(consonants)] + vowels[r // len(consonants)])
    return "".join(out) + "x"


def text_of(i: int, rng: random.Random) -> str:
    kind = KINDS[i % 4]
    words = [word(min(int(rng.paretovariate(0.8)), VOCABULARY - 1)) for _ in range(80)]
    lines = [" ".join(words[j : j + 10]).capitalize() + "." for j in range(0, 80, 10)]
    return (f"---\nname: note {i} {words[0]}\ndescription: about {words[1]} and {words[2]}\ntype: {kind}\n"
            f"tags: [{word(i % 50)}]\ncreated: 2026-01-01\nupdated: 2026-01-{1 + i % 28:02d}T00:00:00Z\n---\n"
            + "\n".join(lines) + "\n")


FLAT = False  # --flat: every file in one folder, as an imported Claude Code memory folder is


def layout(i: int) -> str:
    return f"notes/n{i:06d}.md" if FLAT else f"{KINDS[i % 4]}/g{i // 1000:03d}/n{i:06d}.md"


def seed(location: str, tenant: str | None, n: int) -> list[str]:
    """n topic files committed in batches straight to the store (as an import would)."""
    store = open_store(location, tenant)
    rng = random.Random(7)
    paths = [layout(i) for i in range(n)]
    stamp = model.now_stamp()
    try:
        for start in range(0, n, 1000):
            changes = []
            for i in range(start, min(n, start + 1000)):
                text = text_of(i, rng)
                entry = model.entry_of(model.memory(paths[i], text, "", memdir.Limits().types))
                changes.append(Change(op="write", path=paths[i], data=text.encode(), expect=None, old=None,
                                      entry=entry, actor="bench", time=stamp))
            with store.lock():
                store.commit(changes)
    finally:
        store.close()
    return paths


def index_bytes(md: memdir.Memdir, backend: str) -> int:
    idx = md._state.search._open()
    if backend in ("fs", "s3"):
        db = Path(idx.db.execute("PRAGMA database_list").fetchone()[2])  # type: ignore[attr-defined]
        return sum(Path(f"{db}{s}").stat().st_size for s in ("", "-wal") if Path(f"{db}{s}").exists())
    if backend == "sqlite":
        try:
            rows = idx.db.execute(  # type: ignore[attr-defined]
                "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'memdir_search%'").fetchone()
            return int(rows[0] or 0)
        except sqlite3.Error:
            return -1
    return int(md.store._run("SELECT pg_total_relation_size('memdir_search')")[0][0])  # type: ignore[attr-defined]


def queries(count: int, seed_: int) -> list[str]:
    rng = random.Random(seed_)
    return [" ".join(word(rng.randint(20, 400)) for _ in range(3)) for _ in range(count)]


def first_search(location: str, tenant: str | None, runs: int) -> dict[str, list[float]]:
    got: dict[str, list[float]] = {}
    qs = queries(runs * 3, 99)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    for r in range(runs):
        out = subprocess.run([sys.executable, "-c", FIRST, location, tenant or "", *qs[3 * r : 3 * r + 3]],
                             capture_output=True, text=True, env=env, check=True)
        for key, seconds in json.loads(out.stdout).items():
            got.setdefault(key, []).append(seconds * 1000)
    return got


Row = tuple[str, str, int, float, float, str]


def cpu(fn: Callable[[], object], runs: int) -> str:
    """Median CPU time of fn: what a call costs when the machine is not shared (wall time waits for the CPU)."""
    samples = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        samples.append((time.process_time() - start) * 1000)
    return f"cpu {statistics.median(samples):.2f} ms"


def bench(backend: str, location: str, n: int, quick: bool) -> list[Row]:
    tenant = None if backend == "fs" else "main"
    print(f"  {backend} {n:,}: seeding", file=sys.stderr, flush=True)
    started = time.perf_counter()
    seed(location, tenant, n)
    rows: list[Row] = []
    with memdir.open(location, tenant=tenant) as md:
        md.index()
        rows.append((backend, "seed + catalog + MEMORY.md", n, (time.perf_counter() - started) * 1000, 0, "ms, once"))
        print(f"  {backend} {n:,}: building the index", file=sys.stderr, flush=True)
        started = time.perf_counter()
        md.reindex()
        build = (time.perf_counter() - started) * 1000
        rows.append((backend, "index build (reindex)", n, build, 0, f"ms, once; {index_bytes(md, backend) / 1e6:.1f} MB"))
        print(f"  {backend} {n:,}: measuring", file=sys.stderr, flush=True)
        runs = 50 if quick else 300
        qs = iter(queries(runs * 4 + 10, 1))
        for _ in range(10):
            md.search(next(qs))
        found = [len(md.search(next(qs))) for _ in range(runs)]
        warm = timed(lambda: md.search(next(qs)), runs)
        rows.append((backend, "search (warm)", n, *summary(warm),
                     f"3 words, {sum(found) / runs:.1f} hits of 10; {cpu(lambda: md.search(next(qs)), runs // 2)}"))
        rows.append((backend, "search, a scope", n, *summary(timed(
            lambda: md.scope(read=["notes/"] if FLAT else ["project/", "user/"]).search(next(qs)),
            runs // 2)), "the one folder, filtered in the query" if FLAT else "2 of 4 folders"))
        grep_runs = 5 if backend == "s3" or n > 10_000 else 20
        rare = word(1500)
        rows.append((backend, "grep (rare word)", n, *summary(timed(lambda: md.grep(rare), grep_runs)),
                     f"{rare}; {cpu(lambda: md.grep(rare), grep_runs)}"))
        regex = r"\bn\d{5}7\b"
        rows.append((backend, "grep (regex, no literal)", n, *summary(timed(lambda: md.grep(regex), grep_runs)),
                     f"every text through RE2; {cpu(lambda: md.grep(regex), grep_runs)}"))
    fresh = 3 if quick else 5
    got = first_search(location, tenant, fresh)
    ratio = summary(got["first"])[0] / summary(warm)[0]
    rows.append((backend, "open (fresh process)", n, *summary(got["open"]), "import + open"))
    rows.append((backend, "first search (fresh process)", n, *summary(got["first"]),
                 f"{ratio:.1f}x warm; right after open, no catalog loaded (a CLI command, a hook)"))
    rows.append((backend, "second search (same process)", n, *summary(got["second"]), ""))
    rows.append((backend, "catalog load (same process)", n, *summary(got["catalog"]), "first md.list(); not the index"))
    rows.append((backend, "search after the catalog load", n, *summary(got["third"]), ""))
    return rows


def huge(work: Path) -> list[Row]:
    """A 2 MB and a 10 MB file that match everywhere, and `(a+)+$` on a 41-character file."""
    rows: list[Row] = []
    root = work / "huge"
    with memdir.open(root) as md:
        line = "the needle of a haystack is here " * 3 + "\n"
        for mb in (2, 10):
            (root / f"big{mb}.md").write_text(line * (mb * 1_000_000 // len(line)))
            md.reconcile(fix=True)
            rows.append(("fs", f"search, a {mb} MB matching file", 1, *summary(timed(lambda: md.search("needle haystack"), 3)), "snippet in one pass"))
            rows.append(("fs", f"grep, a {mb} MB matching file", 1, *summary(timed(lambda: md.grep("needle"), 3)), "every line matches"))
            (root / f"big{mb}.md").unlink()
            md.reconcile(fix=True)
        md.write("a.md", "a" * 40 + "b\n")
        rows.append(("fs", "grep '(a+)+$', 41 characters", 1, *summary(timed(lambda: md.grep("(a+)+$"), 5)), "RE2"))
    return rows


def location(backend: str, n: int, work: Path, pg: services.Postgres | None) -> str:
    if backend == "fs":
        return str(work / f"fs{n}")
    if backend == "sqlite":
        return f"sqlite://{work / f'sqlite{n}.db'}"
    if backend == "postgres":
        assert pg is not None
        return pg.fresh_database(f"search{n}")[1]
    return f"s3://memdir-bench/n{n}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated file counts")
    parser.add_argument("--backends", default="fs")
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--flat", action="store_true", help="all files in one folder (notes/)")
    parser.add_argument("--huge", action="store_true", help="also the huge-file and catastrophic-regex cases")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary folder)")
    args = parser.parse_args()
    global FLAT
    FLAT = args.flat
    sizes = [int(s) for s in args.sizes.split(",")]
    names = args.backends.split(",")
    rows: list[Row] = []
    with services.for_bench(names, "memdir-bench") as (pg, s3):
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            os.environ["MEMDIR_CACHE"] = str(Path(tmp) / "cache")
            for name in names:
                for n in sizes:
                    rows += bench(name, location(name, n, Path(tmp), pg), n, args.quick)
            if args.huge:
                rows += huge(Path(tmp))
    shape = "flat (one folder)" if FLAT else "nested (4 folders of 1,000-file groups)"
    print(f"memdir {memdir.__version__} search benchmark, {shape}, Python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print()
    print("| backend | operation | files | median ms | p95 ms | note |")
    print("|---|---|---|---|---|---|")
    for backend, op, n, med, p95, note in rows:
        if note.startswith("ms, once"):
            print(f"| {backend} | {op} | {n:,} | {med:,.0f} | | {note} |")
        else:
            print(f"| {backend} | {op} | {n:,} | {med:.2f} | {p95:.2f} | {note} |")


if __name__ == "__main__":
    main()
