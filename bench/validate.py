"""Validate benchmark: the CPU one write spends checking and parsing its text, part by part.

    python bench/validate.py              # per-function medians, then 500 in-process writes
    python bench/validate.py --rounds 2000

The secret guard and the frontmatter parser run several times on every write;
this prints what each call costs on a ~500-byte topic file, and what a whole
`Memdir.write` costs around them, so a change to either can be read at a glance.
Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402
from memdir import model  # noqa: E402
from memdir.core import guard  # noqa: E402

STAMPED = "created: 2026-11-30T20:00:00Z\nupdated: 2026-11-30T20:00:00Z\n"
HEAD = "---\nname: floor\ndescription: a note of about half a kilobyte\ntype: project\n"
TEXT = HEAD + "---\n" + "Body line.\n" * 40
FILE = HEAD + STAMPED + "---\n" + "Body line.\n" * 40
DASHED = FILE.replace("Body line.", "Body line — with a dash.", 1)  # one character outside ASCII
META = {"name": "floor", "description": "a note of about half a kilobyte", "type": "project",
        "created": model.Stamp("2026-11-30T20:00:00Z"), "updated": model.Stamp("2026-11-30T20:00:00Z")}


def timed(fn: Callable[[int], object], rounds: int) -> tuple[float, float, float]:
    """(median, p95, median CPU time) in milliseconds: CPU time is what other processes on the machine do not add."""
    wall, cpu = [], []
    for i in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn(i)
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    wall.sort()
    return statistics.median(wall), wall[min(len(wall) - 1, int(len(wall) * 0.95))], statistics.median(cpu)


def stamp(i: int) -> model.Stamp:
    """A different time for each round, as each write brings one."""
    return model.Stamp(f"2026-11-30T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=500)
    args = ap.parse_args()
    later = model.Stamp("2026-11-30T21:00:00Z")
    parts: dict[str, Callable[[int], object]] = {
        "guard.find_secret(file)": lambda i: guard.find_secret(FILE),
        "guard.find_secret(file with a —)": lambda i: guard.find_secret(DASHED),
        "guard.check(file, meta)": lambda i: guard.check(FILE, "notes/n.md", head_lines=7, meta=META),
        "model.parse(file)": lambda i: model.parse(FILE, path="notes/n.md"),
        "model.parse(new file)": lambda i: model.parse(FILE.replace("floor", f"floor {i}"), path="notes/n.md"),
        "model.set_fields(stamps)": lambda i: model.set_fields(FILE, {"created": META["created"], "updated": later}),
        "model.set_fields(new stamps)": lambda i: model.set_fields(TEXT, {"created": later, "updated": later}),
        "model.set_fields(new updated)": lambda i: model.set_fields(FILE, {"created": META["created"], "updated": stamp(i)}),
        "model.memory(file)": lambda i: model.memory("notes/n.md", FILE, "", ("project",)),
    }
    print(f"{'part':<32} {'median ms':>10} {'p95 ms':>10} {'CPU ms':>10}")
    for name, fn in parts.items():
        fn(0)
        print(f"{name:<32}", *(f"{x:>10.4f}" for x in timed(fn, args.rounds)))
    with tempfile.TemporaryDirectory() as tmp:
        md = memdir.open(tmp, writes_per_minute=0)
        for name, fn in {
            "Memdir.write (new file)": lambda i: md.write(f"notes/n{i}.md", TEXT),
            "Memdir.write (replace)": lambda i: md.write(f"notes/n{i}.md", TEXT + f"one more line {i}\n"),
            "Memdir.write (own frontmatter)": lambda i: md.write(f"own/n{i}.md", TEXT.replace("floor", f"floor {i}")),
        }.items():
            print(f"{name:<32}", *(f"{x:>10.4f}" for x in timed(fn, args.rounds)))
        md.close()


if __name__ == "__main__":
    main()
