"""Core benchmark: read, index(), write, grep on the filesystem store.

    python bench/core.py                 # 1,000 and 10,000 files
    python bench/core.py --sizes 1000    # one size

Prints a table of median and p95 in milliseconds. Not a test: run it, read it,
paste it. Targets (issue #2): read and index() under 0.2 ms median; write under
5 ms median at 10,000 files and within 2x of its cost at 1,000 files.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402
from memdir import index as index_mod  # noqa: E402

KINDS = ("project", "reference", "user", "feedback")


def layout(i: int) -> str:
    kind = KINDS[i % 4]
    return f"{kind}/g{i // 400:02d}/s{i // 100 % 4}/n{i:05d}.md"


def build(root: Path, n: int) -> list[str]:
    """n topic files written by hand, then catalogued by memdir (as adopting a folder would)."""
    made = []
    for i in range(n):
        path = layout(i)
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        kind = KINDS[i % 4]
        full.write_text(
            f"---\nname: fact {i}\ndescription: fact number {i} about the {kind} side of things\ntype: {kind}\n"
            f"created: 2026-01-01\nupdated: 2026-01-01T00:00:00Z\n---\n"
            + f"Body of fact {i}. It mentions webhook {i % 97} and other details.\n" * 8
        )
        made.append(path)
    return made


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def bench(n: int, workdir: Path) -> list[tuple[str, int, float, float, str]]:
    root = workdir / f"m{n}"
    root.mkdir()
    paths = build(root, n)
    md = memdir.open(root)
    rng = random.Random(1)
    rows = []

    rows.append(("read", n, *summary(timed(lambda: md.read(rng.choice(paths)), 2000)), ""))
    md.index()
    rows.append(("index()", n, *summary(timed(md.index, 2000)), ""))
    cat = md._sync_catalog()
    limits = md.limits
    rows.append(("index render (uncached)", n, *summary(timed(
        lambda: index_mod.render(cat, "", limits.index_max_lines, limits.index_max_bytes), 200)), ""))

    counter = [0]

    def write() -> None:
        counter[0] += 1
        path = rng.choice(paths)
        md.write(path, f"Rewritten body {counter[0]}.\n" * 8, description=f"rewritten fact {counter[0]}")

    rows.append(("write (update)", n, *summary(timed(write, 500)), ""))

    created = [0]

    def create() -> None:
        created[0] += 1
        md.write(f"project/new/c{created[0]:05d}.md", "A new fact.\n", type="project", description="new fact")

    rows.append(("write (create)", n, *summary(timed(create, 300)), ""))
    rows.append(("grep (rare word)", n, *summary(timed(lambda: md.grep("webhook 13\\b"), 10)), ""))
    lines = len(md.index().splitlines())
    rows.append(("MEMORY.md lines", n, float(lines), float(len(md.index().encode())), "value | bytes"))
    md.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated file counts")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary folder on /tmp's disk)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        rows = []
        for n in sizes:
            rows += bench(n, Path(tmp))
    print(f"memdir {memdir.__version__} core benchmark (filesystem store), Python {sys.version.split()[0]}")
    print()
    print("| operation | files | median ms | p95 ms | note |")
    print("|---|---|---|---|---|")
    for op, n, med, p95, note in rows:
        if note:
            print(f"| {op} | {n:,} | {med:.0f} | {p95:,.0f} | {note} |")
        else:
            print(f"| {op} | {n:,} | {med:.3f} | {p95:.3f} | |")
    by = {(op, n): med for op, n, med, _, _ in rows}
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        ratio = by[("write (update)", hi)] / by[("write (update)", lo)]
        print()
        print(f"write at {hi:,} / write at {lo:,}: {ratio:.2f}x (target: within 2x)")


if __name__ == "__main__":
    main()
