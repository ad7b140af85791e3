"""The speed targets people feel, each printed beside what it was measured at (issue "A simpler house").

    python bench/targets.py                                # 1,000 and 10,000 files, flat, wide and deep
    python bench/targets.py --sizes 1000,10000,100000      # the hard shape too (several minutes to build)
    python bench/targets.py --src /path/to/other/src       # the same measurements of another memdir checkout

Targets (medians, ratios within one run):
1. Claude Code hooks (SessionStart, UserPromptSubmit) in a fresh process of an installed memdir (bytecode
   compiled), on a memory in use (its search index and link graph on disk): <= 100 ms at 10,000 files,
   <= 250 ms at 100,000.
2. A CLI write at 10,000 and 100,000 files <= 1.5x a CLI read of the same memory (whole commands).
3. A warm write flat in size and shape (<= 1.3x from 1,000 files to the largest size, flat, wide and deep);
   a warm read <= 0.1 ms; lexical search < 5 ms at 10,000 files and < 20 ms at 100,000.
4. An in-process write <= 2.5x the durable floor: a SQLite WAL commit (synchronous=FULL) of the journal
   record, a staged file and its rename, measured here on the same disk.
5. MCP through the SDK: start of `memdir serve` to the first tools/list answer <= 0.7 s (`bench/mcp.py`
   times memdir's own share of a call, <= 0.2 ms).

Only the public API and the command line are used, so `--src` can point at an older checkout. Not a test:
run it on an idle machine, read it, paste it.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # bench/mcp.py is not the MCP SDK
KINDS = ("project", "reference", "user", "feedback")
SHAPES = ("flat", "wide", "deep")
PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "bench", "cwd": "/tmp",
          "prompt": "when does the stripe webhook retry after a failed invoice export?"}
START = {"hook_event_name": "SessionStart", "session_id": "bench", "cwd": "/tmp", "source": "startup"}


def layout(i: int, shape: str) -> str:
    if shape == "flat":
        return f"notes/n{i:06d}.md"
    if shape == "wide":
        return f"w{i // 10:05d}/n{i:06d}.md"
    return f"{KINDS[i % 4]}/g{i // 400:02d}/s{i // 100 % 4}/n{i:05d}.md"


TOPICS = ("stripe webhook", "invoice export", "staging deploy", "postgres vacuum", "redis cache", "oauth login",
          "release checklist", "dark theme", "route planner", "sms reminder", "backup restore", "rate limit",
          "feature flag", "search ranking", "email digest", "audit log", "timezone bug", "pdf report",
          "load test", "csv import", "api token", "queue worker", "cron job", "image resize", "geo fence")
QUERIES = ("when does the stripe webhook retry", "invoice export format", "postgres vacuum settings",
           "how do we restore a backup", "feature flag for the route planner", "timezone bug in the pdf report")


def text_of(i: int) -> str:
    """A topic file about two of 25 topics, so a query's words match a few percent of the files, as in a memory."""
    kind = KINDS[i % 4]
    first, second = TOPICS[i % 25], TOPICS[(i * 7 + 3) % 25]
    return (f"---\nname: note {i} on the {first}\ndescription: what we decided about the {first} ({i})\n"
            f"type: {kind}\n---\n"
            + f"Note {i}: the {first} depends on the {second}; checked on day {i % 365}.\n" * 8)


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def timed(fn: Callable[[int], object], runs: int) -> list[float]:
    out = []
    for i in range(runs):
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


class Version:
    """The memdir under test: this checkout's src, or another's (`--src`)."""

    def __init__(self, src: Path) -> None:
        self.src = src
        # a fresh process each command, as target 1 says (bench/hooks.py measures the resident process beside it)
        self.env = {**os.environ, "PYTHONPATH": str(src), "MEMDIR_ACTOR": "bench", "MEMDIR_RESIDENT": "off"}
        self.env.pop("MEMDIR_ROOT", None)
        sys.path.insert(0, str(src))
        import memdir

        self.memdir = memdir
        compileall.compile_dir(str(src / "memdir"), quiet=1)  # an installed package has its bytecode

    def cli(self, *args: str, stdin: str = "") -> float:
        """Seconds a whole `memdir` command takes, as a person or a hook runs it."""
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memdir", *args], input=stdin, env=self.env, check=True,
                       capture_output=True, text=True)
        return time.perf_counter() - start


def build(v: Version, root: Path, n: int, shape: str) -> list[str]:
    """n topic files written in batches through the library (no rate limit), then a memory in use: its search
    index and link graph built by a search and a context."""
    made = [layout(i, shape) for i in range(n)]
    with v.memdir.open(root, writes_per_minute=0) as md:
        for start in range(0, n, 1000):
            md.apply([v.memdir.Op.write(made[i], text_of(i)) for i in range(start, min(n, start + 1000))])
    v.cli("--root", str(root), "search", QUERIES[0])
    v.cli("--root", str(root), "context", QUERIES[1])
    return made


def floor(folder: Path, runs: int) -> list[float]:
    """The durable floor of one journaled write on this disk: a staged file, a WAL commit, a rename."""
    db = sqlite3.connect(folder / "floor.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE journal (seq INTEGER PRIMARY KEY, path TEXT, old BLOB, new BLOB)")
    data = text_of(1).encode()
    for i in range(runs):
        (folder / f"f{i}.md").write_bytes(data)

    def one(i: int) -> None:
        staged = folder / f"staged{i}"
        staged.write_bytes(data)
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO journal (path, old, new) VALUES (?, ?, ?)", (f"f{i}.md", data, data))
        db.execute("COMMIT")
        os.replace(staged, folder / f"f{i}.md")

    out = timed(one, runs)
    db.close()
    return out


def warm(v: Version, root: Path, made: list[str], runs: int) -> dict[str, float]:
    """Median ms of a warm write (an update), read and lexical search in one process."""
    rng = random.Random(7)
    with v.memdir.open(root, writes_per_minute=0) as md:
        md.write(made[0], "Warm-up.\n")
        md.search(QUERIES[0], mode="lexical")
        md.read(made[1])
        write = timed(lambda i: md.write(rng.choice(made), f"Updated body {i}.\n" * 8, description=f"update {i}"), runs)
        read = timed(lambda i: md.read(made[i % len(made)]), runs * 4)
        search = timed(lambda i: md.search(QUERIES[i % len(QUERIES)], mode="lexical"), runs)
    return {"write": median(write), "read": median(read), "search": median(search)}


def hooks(v: Version, root: Path, runs: int) -> dict[str, float]:
    """Median ms of `memdir hook claude-code` for SessionStart and UserPromptSubmit, a fresh process each."""
    out: dict[str, list[float]] = {"SessionStart": [], "UserPromptSubmit": []}
    for payload in (START, PROMPT):  # once each, not timed: a memory in use has been read since the last write
        v.cli("--root", str(root), "hook", "claude-code", stdin=json.dumps(payload))
    for _ in range(runs):
        for payload in (START, PROMPT):
            out[str(payload["hook_event_name"])].append(
                v.cli("--root", str(root), "hook", "claude-code", stdin=json.dumps(payload)) * 1000)
    return {k: median(s) for k, s in out.items()}


def cli_pair(v: Version, root: Path, made: list[str], runs: int) -> dict[str, float]:
    """Median ms of `memdir read` and `memdir write` of the same memory, interleaved (the machine drifts)."""
    reads, writes = [], []
    for i in range(runs):
        path = made[(i * 7919) % len(made)]
        reads.append(v.cli("--root", str(root), "read", path) * 1000)
        writes.append(v.cli("--root", str(root), "write", path, "--body", f"Written by the CLI {i}.\n") * 1000)
    return {"read": median(reads), "write": median(writes)}


def mcp_start(v: Version, root: Path, runs: int) -> float | None:
    """Median seconds from starting `memdir serve` (stdio) to the first tools/list answer, the SDK's client."""
    try:
        import anyio
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
    except ImportError:
        return None
    params = StdioServerParameters(command=sys.executable, args=["-m", "memdir", "--root", str(root), "serve"],
                                   env=v.env)

    async def once() -> float:
        start = time.perf_counter()
        async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:
            await client.list_tools()
            return time.perf_counter() - start

    return median([anyio.run(once) for _ in range(runs)])


def mark(value: float, target: float, below: bool = True) -> str:
    return "met" if (value <= target if below else value < target) else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated file counts (the first is the base)")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--src", default=str(HERE.parent / "src"), help="the src folder of the memdir to measure")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary one)")
    parser.add_argument("--runs", type=int, default=15, help="runs of each whole command (more for in-process ones)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    v = Version(Path(args.src).resolve())
    work = Path(args.dir or tempfile.mkdtemp(prefix="memdir-targets-"))
    work.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    print(f"memdir at {v.src}; Python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.1f}; {work}\n")
    rows: list[tuple[str, str, str, str]] = []  # target, measured, goal, verdict
    base: dict[str, float] = {}
    writes: dict[tuple[str, int], float] = {}
    for shape in shapes:
        for n in sizes:
            root = work / f"{shape}-{n}"
            if root.exists():
                shutil.rmtree(root)
            started = time.perf_counter()
            made = build(v, root, n, shape)
            built = time.perf_counter() - started
            w = warm(v, root, made, max(30, args.runs * 4))
            writes[(shape, n)] = w["write"]
            base.setdefault(shape, w["write"])
            print(f"{shape:>4} {n:>7,} files (built in {built:.0f} s): warm write {w['write']:.2f} ms, "
                  f"read {w['read']:.3f} ms, lexical search {w['search']:.2f} ms", flush=True)
            if n != sizes[0]:
                ratio = w["write"] / base[shape]
                rows.append((f"3. warm write {shape} {n:,} / {sizes[0]:,}", f"{ratio:.2f}x", "<= 1.3x", mark(ratio, 1.3)))
            if shape == shapes[0]:
                rows.append((f"3. warm read {n:,}", f"{w['read']:.3f} ms", "<= 0.1 ms", mark(w["read"], 0.1)))
                if n >= 10_000:
                    goal = 5.0 if n <= 10_000 else 20.0
                    rows.append((f"3. lexical search {n:,}", f"{w['search']:.2f} ms", f"< {goal:g} ms",
                                 mark(w["search"], goal, below=False)))
            if shape == shapes[0] and n >= 10_000:
                h = hooks(v, root, args.runs)
                goal = 100.0 if n <= 10_000 else 250.0
                for event, ms in h.items():
                    rows.append((f"1. hook {event} {n:,}", f"{ms:.0f} ms", f"<= {goal:g} ms", mark(ms, goal)))
                c = cli_pair(v, root, made, args.runs)
                ratio = c["write"] / c["read"]
                rows.append((f"2. CLI write / read {n:,}", f"{c['write']:.0f} / {c['read']:.0f} ms = {ratio:.2f}x",
                             "<= 1.5x", mark(ratio, 1.5)))
            if shape == shapes[0] and n == sizes[0]:
                f = median(floor(work, 300))
                ratio = w["write"] / f
                rows.append((f"4. in-process write / floor ({n:,} files)", f"{w['write']:.2f} / {f:.2f} ms = {ratio:.2f}x",
                             "<= 2.5x", mark(ratio, 2.5)))
                start = mcp_start(v, root, 5)
                if start is not None:
                    rows.append(("5. MCP start to first tools/list", f"{start:.2f} s", "<= 0.7 s", mark(start, 0.7)))
            shutil.rmtree(root, ignore_errors=True)
    print("\n| target | measured | goal | |\n|---|---|---|---|")
    for row in sorted(rows, key=lambda r: r[0][:2]):
        print("| " + " | ".join(row) + " |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
