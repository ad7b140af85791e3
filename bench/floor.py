"""Floor benchmark: what one write cannot go below on this disk, beside what memdir and the Anthropic SDK tool pay.

    python bench/floor.py                 # 500 rounds of each, in a temporary folder
    python bench/floor.py --dir /data     # on another file system (the floor is the disk's)

The Anthropic SDK's local memory tool creates a file and returns: no journal,
no fsync, no index. memdir keeps a journal with the old and new text (undo,
history), commits it durably (one fsync of SQLite's write-ahead log), then
puts the file in place and updates the derived index and search. This prints
the parts of that on their own, so a gap between the two tools can be read as
"the floor" (a durable commit plus a file) against "memdir's own overhead".
Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402

TEXT = "---\nname: floor\ndescription: a note of about half a kilobyte\ntype: project\n---\n" + "Body line.\n" * 40


def timed(fn: Callable[[int], object], rounds: int) -> tuple[float, float]:
    out = []
    for i in range(rounds):
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000)
    out.sort()
    return statistics.median(out), out[min(len(out) - 1, int(len(out) * 0.95))]


def journal(folder: Path, synchronous: str) -> Callable[[int], object]:
    db = sqlite3.connect(folder / f"journal-{synchronous}.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    db.execute("CREATE TABLE journal (seq INTEGER PRIMARY KEY, path TEXT, old BLOB, new BLOB)")
    data = TEXT.encode()

    def commit(i: int) -> None:
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO journal (path, old, new) VALUES (?, ?, ?)", (f"notes/n{i}.md", data, data))
        db.execute("COMMIT")

    return commit


def renames(folder: Path) -> dict[str, Callable[[int], object]]:
    """Putting a new text in place of an existing file: stage it, rename it over the old one."""
    for i in range(2000):
        (folder / f"over{i}.md").write_text(TEXT)

    def over(i: int) -> None:
        staged = folder / f"staged-over{i}"
        staged.write_text(TEXT)
        os.replace(staged, folder / f"over{i}.md")

    return {"stage + rename over the old file (ext4 flushes it)": over}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--dir", default=None, help="where to write (default: the system's temporary folder)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(dir=args.dir))
    rows: list[tuple[str, tuple[float, float]]] = []
    n = args.rounds

    plain = work / "plain"
    plain.mkdir()
    rows.append(("new file: open, write, close (no fsync)", timed(lambda i: (plain / f"n{i}.md").write_text(TEXT), n)))
    rows.append(("overwrite an existing file (no fsync)", timed(lambda i: (plain / f"n{i}.md").write_text(TEXT), n)))

    def durable(i: int) -> None:
        fd = os.open(plain / f"d{i}.md", os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, TEXT.encode())
        os.fsync(fd)
        os.close(fd)

    rows.append(("new file + fsync", timed(durable, n)))
    rows.append(("SQLite WAL commit, synchronous=FULL (memdir's journal)", timed(journal(work, "FULL"), n)))
    rows.append(("SQLite WAL commit, synchronous=NORMAL (no fsync)", timed(journal(work, "NORMAL"), n)))
    for label, fn in renames(work).items():
        rows.append((label, timed(fn, min(n, 2000))))

    try:
        from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
    except ImportError:
        sdk = None
    else:
        sdk = BetaLocalFilesystemMemoryTool(str(work / "sdk"))
    if sdk is not None:
        call = sdk.call

        def sdk_create(i: int) -> None:
            call({"command": "create", "path": f"/memories/notes/n{i}.md", "file_text": TEXT})

        rows.append(("Anthropic SDK memory tool: create", timed(sdk_create, n)))
    with memdir.open(work / "memdir", writes_per_minute=0) as md:
        rows.append(("memdir write (create)", timed(lambda i: md.write(f"notes/n{i}.md", TEXT), n)))
        rows.append(("memdir write (update)", timed(lambda i: md.write(f"notes/n{i}.md", TEXT + f"Round {i}.\n"), n)))

    print(f"What one write costs on this disk ({work}), {n} rounds; median / p95 in ms\n")
    print("| operation | median | p95 |")
    print("|---|---|---|")
    for label, (median, p95) in rows:
        print(f"| {label} | {median:.3f} | {p95:.3f} |")
    by = {label: median for label, (median, _) in rows}
    floor = by["new file: open, write, close (no fsync)"] + by["SQLite WAL commit, synchronous=FULL (memdir's journal)"]
    print(f"\nfloor of a journaled write (a durable commit + a new file): {floor:.3f} ms")
    if sdk is not None:
        print(f"that floor / the SDK tool's create: {floor / by['Anthropic SDK memory tool: create']:.2f}x")
        print(f"memdir create / the SDK tool's create: "
              f"{by['memdir write (create)'] / by['Anthropic SDK memory tool: create']:.2f}x")

if __name__ == "__main__":
    main()
