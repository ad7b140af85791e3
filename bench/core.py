"""Core benchmark: read, index(), write, grep and hand-edit detection on the filesystem store, by shape and size.

    python bench/core.py                                  # flat, wide, deep at 1,000 and 10,000 files
    python bench/core.py --sizes 1000,10000,100000        # the large shape too (a few minutes)
    python bench/core.py --shapes flat --sizes 10000

Shapes: flat (every file in one folder, as an imported Claude Code folder),
wide (folders of 10 files each), deep (type/group/sub-group/file, at most 100
per folder). For each shape and size it prints median and p95 in
milliseconds: warm reads and writes in one process; the first `index()` and
the first write in a fresh process (after `open`, timed inside that process);
warm writes in a long-lived process from its start (a server: from the
outline, or the catalog it loads at its second write where the memory is
small) and with the catalog loaded;
`memdir read` against `memdir write` as whole CLI commands; a read with the
memory's pages dropped from the page cache (cold); `sync()`, the stat check
that finds edits made by hand where no watcher runs; and the MEMORY.md size.
Not a test: run it, read it, paste it.

Targets (issue 10): warm write at 10,000 and 100,000 files within 1.3x of its
cost at 1,000 for each shape; first write and first index() in a fresh process
at most 2x a warm one; CLI write within 1.3x of CLI read; warm read at most
0.1 ms median at 10,000 files.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402
from memdir import model  # noqa: E402
from memdir.core import index as index_mod  # noqa: E402
from memdir.stores.base import Change  # noqa: E402
from memdir.stores.fs import FileStore  # noqa: E402

KINDS = ("project", "reference", "user", "feedback")
SHAPES = ("flat", "wide", "deep")


def layout(i: int, shape: str = "deep") -> str:
    kind = KINDS[i % 4]
    if shape == "flat":
        return f"notes/n{i:06d}.md"
    if shape == "wide":
        return f"w{i // 10:05d}/n{i:06d}.md"
    return f"{kind}/g{i // 400:02d}/s{i // 100 % 4}/n{i:05d}.md"


def text_of(i: int) -> str:
    kind = KINDS[i % 4]
    return (f"---\nname: fact {i}\ndescription: fact number {i} about the {kind} side of things\ntype: {kind}\n"
            f"created: 2026-01-01\nupdated: 2026-01-01T00:00:00Z\n---\n"
            + f"Body of fact {i}. It mentions webhook {i % 97} and other details.\n" * 8)


def build(root: Path, n: int, shape: str = "deep") -> list[str]:
    """n topic files committed in batches straight to the store (as an import would), then indexed."""
    store = FileStore(root)
    made = [layout(i, shape) for i in range(n)]
    types = memdir.Limits().types
    for start in range(0, n, 1000):
        changes = []
        for i in range(start, min(n, start + 1000)):
            text = text_of(i)
            entry = model.entry_of(model.memory(made[i], text, "", types))
            changes.append(Change(op="write", path=made[i], data=text.encode(), expect=None, old=None,
                                  entry=entry, actor="bench", time="2026-01-01T00:00:00Z"))
        with store.lock():
            store.commit(changes)
    store.close()
    with memdir.open(root) as md:
        md.reconcile(fix=True)  # writes every MEMORY.md
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


FRESH = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import memdir
    if sys.argv[4:]:  # the modules a write loads where used, loaded now: the first write without them
        import yaml, memdir.core.guard, memdir.dates
        memdir.model._yaml()
    t1 = time.perf_counter()
    md = memdir.open(sys.argv[1])
    t2 = time.perf_counter()
    if sys.argv[2] == "index":
        md.index()
    else:
        md.write(sys.argv[3], "Fresh body.\\n" * 8, description="written by a fresh process")
    t3 = time.perf_counter()
    md.close()  # as a CLI command does: the next fresh process finds what this one left
    print(json.dumps({"import": t1 - t0, "open": t2 - t1, "first": t3 - t2}))
""")


def fresh(root: Path, what: str, path: str = "", preload: bool = False) -> dict[str, float]:
    argv = [sys.executable, "-c", FRESH, str(root), what, path] + (["preload"] if preload else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    return {k: v * 1000 for k, v in json.loads(out.stdout).items()}


def cli(root: Path, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), *args], capture_output=True, check=True)
    return (time.perf_counter() - start) * 1000


def drop_cache(root: Path, path: str) -> None:
    """Evict one file's pages from the page cache (only this memory's, not the machine's)."""
    fd = os.open(root / path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


Row = tuple[str, str, int, float, float, str]


def bench(shape: str, n: int, workdir: Path, quick: bool) -> list[Row]:
    root = workdir / f"{shape}-{n}"
    start = time.perf_counter()
    paths = build(root, n, shape)
    built = time.perf_counter() - start
    rng = random.Random(1)
    rows: list[Row] = []

    def add(op: str, samples: list[float], note: str = "") -> None:
        rows.append((op, shape, n, *summary(samples), note))

    scale = 1 if not quick else 4
    # A fresh process first: the memory as the last writer left it.
    for what in ("index", "write"):
        runs = [fresh(root, what, rng.choice(paths)) for _ in range(5 // scale + 1)]
        add(f"fresh process: open ({what})", [r["open"] for r in runs])
        add(f"fresh process: first {what}", [r["first"] for r in runs])
        add(f"fresh process: import + open + first {what}", [r["import"] + r["open"] + r["first"] for r in runs],
            "modules load where used, so imports move between these")
    runs = [fresh(root, "write", rng.choice(paths), preload=True) for _ in range(5 // scale + 1)]
    add("fresh process: first write, its modules loaded before", [r["first"] for r in runs],
        "PyYAML, the guard, dates: loaded with the import, not timed")
    calls: dict[str, list[float]] = {"read": [], "read --json": [], "write": []}
    for _ in range(7):  # interleaved, so the machine's drift over a run weighs on each the same
        calls["read"].append(cli(root, "read", rng.choice(paths)))
        calls["read --json"].append(cli(root, "read", rng.choice(paths), "--json"))
        calls["write"].append(cli(root, "write", rng.choice(paths), "-d", "from the CLI", "-b", "CLI body."))
    add("CLI read", calls["read"], "prints the file; parses nothing")
    add("CLI read --json", calls["read --json"], "parses the frontmatter, as a write must")
    add("CLI write", calls["write"])

    md = memdir.open(root)
    add("read", timed(lambda: md.read(rng.choice(paths)), 2000 // scale))

    def cold() -> None:
        path = rng.choice(paths)
        drop_cache(root, path)
        start = time.perf_counter()
        md.read(path)
        samples.append((time.perf_counter() - start) * 1000)

    samples: list[float] = []
    for _ in range(200 // scale):
        cold()
    add("read (file not in page cache)", samples)
    md.index()
    add("index()", timed(md.index, 2000 // scale))
    counter = [0]

    def write() -> None:
        counter[0] += 1
        md.write(rng.choice(paths), f"Rewritten body {counter[0]}.\n" * 8, description=f"rewritten fact {counter[0]}")

    # A long-lived process (a server) from its start, the catalog not loaded: it works from the outline,
    # and loads the catalog at its second write where the memory is small (LOAD_AT_MOST in memdir.py).
    add("write (update, a server from its start)", timed(write, 500 // scale))
    cat = md._state.derived.loaded()
    limits = md.limits
    add("index render (uncached)", timed(
        lambda: index_mod.render(cat, "", limits.index_max_lines, limits.index_max_bytes), 200 // scale))

    add("write (update)", timed(write, 500 // scale))
    folder = paths[0].rsplit("/", 1)[0]

    def create() -> None:
        counter[0] += 1
        md.write(f"{folder}/c{counter[0]:06d}.md", "A new fact.\n", type="project", description="new fact")

    add("write (create)", timed(create, 300 // scale))
    add("sync() (stat check, nothing changed)", timed(md.sync, 20 // scale + 1))

    def hand_edit() -> None:
        path = rng.choice(paths)
        full = root / path
        full.write_text(full.read_text().replace("description: ", "description: edited by hand, ", 1))
        start = time.perf_counter()
        found = md.sync()
        samples.append((time.perf_counter() - start) * 1000)
        assert path in found, f"sync missed the hand edit of {path}"

    samples = []
    for _ in range(10 // scale + 1):
        hand_edit()
    add("sync() after one hand edit", samples)
    if not quick:
        add("grep (rare word)", timed(lambda: md.grep("webhook 13\\b"), 5))
    text = md.index()
    rows.append(("MEMORY.md lines | bytes", shape, n, float(len(text.splitlines())), float(len(text.encode())),
                 f"caps {limits.index_max_lines} | {limits.index_max_bytes:,}"))
    rows.append(("build (not timed above)", shape, n, built * 1000, 0.0, "committed in batches + reconcile"))
    md.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated file counts")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes: flat, wide, deep")
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary folder on /tmp's disk)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = [s for s in args.shapes.split(",") if s]
    rows: list[Row] = []
    tmp = tempfile.mkdtemp(dir=args.dir)
    try:
        for shape in shapes:
            for n in sizes:
                rows += bench(shape, n, Path(tmp), args.quick)
                print(f"  done: {shape} at {n:,} files", file=sys.stderr, flush=True)
                shutil.rmtree(Path(tmp) / f"{shape}-{n}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"memdir {memdir.__version__} core benchmark (filesystem store), Python {sys.version.split()[0]}")
    print()
    print("| operation | shape | files | median ms | p95 ms | note |")
    print("|---|---|---|---|---|---|")
    def num(x: float) -> str:
        return f"{x:,.0f}" if x >= 100 or x.is_integer() else f"{x:.3f}"

    for op, shape, n, med, p95, note in rows:
        print(f"| {op} | {shape} | {n:,} | {num(med)} | {num(p95)} | {note} |")
    by = {(op, shape, n): med for op, shape, n, med, _, _ in rows}
    lo = min(sizes)
    print()
    print("| ratio | shape | files | value | target |")
    print("|---|---|---|---|---|")
    for shape in shapes:
        for n in sizes:
            if n != lo:
                ratio = by[("write (update)", shape, n)] / by[("write (update)", shape, lo)]
                print(f"| warm write / warm write at {lo:,} | {shape} | {n:,} | {ratio:.2f}x | ≤ 1.3x |")
        for n in sizes:
            for what, warm in (("index", "index()"), ("write", "write (update)")):
                ratio = by[(f"fresh process: first {what}", shape, n)] / by[(warm, shape, n)]
                print(f"| fresh first {what} / warm | {shape} | {n:,} | {ratio:.2f}x | ≤ 2x |")
            ratio = by[("fresh process: first write, its modules loaded before", shape, n)] / by[("write (update)", shape, n)]
            print(f"| fresh first write, modules loaded / warm | {shape} | {n:,} | {ratio:.2f}x | ≤ 2x |")
            for read in ("CLI read", "CLI read --json"):
                ratio = by[("CLI write", shape, n)] / by[(read, shape, n)]
                print(f"| CLI write / {read} | {shape} | {n:,} | {ratio:.2f}x | ≤ 1.3x |")


if __name__ == "__main__":
    main()
