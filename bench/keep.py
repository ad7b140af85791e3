"""Keeping what people have: reconcile of a copied folder, doctor's full read, search in Japanese (issue 21, items 8, 9, 12).

    python bench/keep.py                 # 1,000 and 10,000 files
    python bench/keep.py --files 2000

Builds a folder memory of N small topic files (a tenth of them in Japanese),
then times, each in a fresh `memdir.open`: `reconcile()` on the memory as it
is (every file read for what a write would refuse), the first `reconcile()`
after `shutil.copytree(copy_function=copy2)` (every stat moved: content
compared, the catalog's versions refreshed, nothing journaled), the second one
on the copy, and a lexical search for a Japanese word and for an English one.
Not a test: run it, read the table, paste it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from timing import summary, timed  # noqa: E402 - bench/timing.py, beside this script

import memdir  # noqa: E402
from memdir.core.ops import Op  # noqa: E402


def build(root: Path, files: int) -> None:
    with memdir.open(root) as md:
        ops = []
        for i in range(files):
            if i % 10 == 0:
                body = f"# 配送メモ {i}\n\n配送センター{i % 7}から店舗までの走行距離を記録する。\n"
            else:
                body = f"# Note {i}\n\nThe route from depot {i % 7} to shop {i} is planned every Monday.\n"
            ops.append(Op.write(f"notes/{i // 500}/n{i:05d}.md", body))
            if len(ops) == 500:
                md.apply(ops)
                ops = []
        if ops:
            md.apply(ops)


def once(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def run(files: int) -> list[tuple[str, float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root, copy = Path(tmp) / "memory", Path(tmp) / "copy"
        build(root, files)
        rows = []
        with memdir.open(root) as md:
            t = once(lambda: md.reconcile())
            rows.append(("reconcile, nothing changed", t, t))
        shutil.copytree(root, copy, copy_function=shutil.copy2)
        with memdir.open(copy) as md:
            clean = []
            t = once(lambda: clean.append(md.reconcile().clean))
            rows.append(("first reconcile of a cp -a copy", t, t))
            t = once(lambda: clean.append(md.reconcile().clean))
            rows.append(("second reconcile of the copy", t, t))
            assert clean == [True, True] and len(md.history()) == len(memdir.open(root).history())
        with memdir.open(root) as md:
            md.search("warm")  # the index is built once
            rows.append(("search 走行距離 (Japanese)", *summary(timed(lambda: md.search("走行距離"), 50))))
            rows.append(("search route planned (English)", *summary(timed(lambda: md.search("route planned"), 50))))
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, action="append", help="files in the memory (repeatable)")
    args = parser.parse_args()
    print(f"{'files':>7} {'operation':36} {'median ms':>10} {'p95 ms':>10}")
    for files in args.files or [1000, 10000]:
        for name, med, p95 in run(files):
            print(f"{files:7,} {name:36} {med:10.1f} {p95:10.1f}")


if __name__ == "__main__":
    main()
