"""Scoped history: `history(limit=1)` from a scoped view with a large journal (issue 7, finding 6).

    python bench/history.py                  # 100,000 journal records
    python bench/history.py --records 20000

Builds a folder memory whose journal holds N records of about 860 bytes of
content each (most under other/, a few under notes/), then times history()
for the whole tenant and for a view scoped to notes/, and reports the process's
peak RSS growth. Not a test: run it, read the table, paste it. The scoped
query must filter and limit inside the store (no reading every record).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from timing import summary, timed  # noqa: E402 - bench/timing.py, beside this script

import memdir  # noqa: E402
from memdir.stores.base import Change  # noqa: E402


def build(root: Path, records: int) -> memdir.Memdir:
    md = memdir.open(root)
    body = ("A line of ordinary note text. " * 28 + "\n").encode()  # about 860 bytes
    batch: list[Change] = []
    for i in range(records):
        path = f"notes/n{i % 50}.md" if i % 1000 == 0 else f"other/o{i % 5000}.md"
        batch.append(Change(op="external", path=path, data=body, expect=None, old=body, entry=None, actor="bench",
                            time="2026-11-30T00:00:00Z", record_only=True))
        if len(batch) == 500:
            md.store.commit(batch)
            batch = []
    if batch:
        md.store.commit(batch)
    md.write("notes/newest.md", "the newest note\n")
    return md


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        md = build(Path(tmp) / "m", args.records)
        scoped = md.scope(read=["notes/"])
        hidden = md.scope(read=["nowhere/"])
        rows = []
        start = rss_mb()
        for name, fn, runs in (
            ("history(limit=1), whole tenant", lambda: md.history(limit=1), 50),
            ("history(limit=1), scoped to notes/", lambda: scoped.history(limit=1), 20),
            ("history(limit=20), scoped to notes/", lambda: scoped.history(limit=20), 8),
            ("history(limit=1), scope with no records", lambda: hidden.history(limit=1), 8),
        ):
            med, p95 = summary(timed(fn, runs))
            rows.append((name, med, p95, rss_mb() - start))
        md.close()
    print(f"journal records: {args.records:,}")
    print(f"{'operation':42} {'median ms':>10} {'p95 ms':>10} {'peak RSS growth MB':>19}")
    for name, med, p95, grown in rows:
        print(f"{name:42} {med:10.2f} {p95:10.2f} {grown:19.1f}")


if __name__ == "__main__":
    main()
