"""Ingest at the machine's speed: dialog turns written and embedded, per second, and the index's size.

    python bench/ingest.py                          # batch sweep, then 10,000 files
    python bench/ingest.py --sizes 10000,100000     # the 100,000 run takes a while
    python bench/ingest.py --sweep 0 --threads 1    # one size on one thread, no sweep

A turn is one short file, as `bench/locomo.py` writes a conversation: a
speaker and a date in the name, one to three sentences in the body, drawn
from a fixed vocabulary (seeded: every run writes the same memory). First a
sweep embeds the same turns with the local model at each batch size on one
thread and on every CPU given (texts per second: how `batch` and `threads`
were chosen). Then, per size, the turns are written through `Memdir.apply`
in batches of 500 (every check a write makes, one commit each) and the vector
index is built by `semantic.reindex`, as the first hybrid search after an
import builds it, with the settings under test (with the multilingual model
installed, reindex embeds a memory of at most `semantic.BOTH_UP_TO` files with
it too: "embedded/s" is turns a second, the passages embedded by either model
in brackets, "vectors MB" both files). Prints files per second for
each stage and for both, and the size on disk of the vectors and of the
store's database (journal, catalog, lexical index). "cores busy" is the
CPU time the process used over the wall time: whether the threads found
cores to run on. The machine's load is printed with the table: on a shared
machine, read the figures beside it.
Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402
from memdir import Op  # noqa: E402
from memdir.search import semantic  # noqa: E402
from memdir.search.embed import LocalEmbedder, cpus  # noqa: E402

SPEAKERS = ("Caroline", "Melanie", "Jon", "Gina", "Tim", "John")
WORDS = """garden kite harbour violin recipe invoice migraine bicycle passport orchard tenant painting
pottery marathon glacier lantern monsoon sourdough ferry ledger allergy puppy camping museum guitar
chess vaccine budget roof tractor sailing volcano tennis adoption concert workshop interview sister
mentor parade hiking library photo festival school job support pride family friends beach""".split()
FILLER = """the a of to and in we it was for on with they this at by from our more some about really
so just i you my that is have been went last week yesterday love think felt great""".split()


def turn(rng: random.Random) -> str:
    """One to three sentences of a chat turn."""
    out = []
    for _ in range(rng.randint(1, 3)):
        words = [rng.choice(WORDS if rng.random() < 0.3 else FILLER) for _ in range(rng.randint(6, 22))]
        out.append(" ".join(words).capitalize() + rng.choice(".!?"))
    return " ".join(out)


def turns(n: int, seed: int = 1) -> list[tuple[str, str, str]]:
    """(path, name, body) of `n` turns in conversations of 20 sessions of 30 turns."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        conv, session, at = i // 600, i // 30 % 20 + 1, i % 30 + 1
        who = SPEAKERS[(conv + at) % len(SPEAKERS)]
        day = f"{session + 1} May 2023"
        out.append((f"conv-{conv:03d}/session-{session:02d}/D{session}-{at}.md", f"{who}, {day}",
                    f"{who}: {turn(rng)}\n"))
    return out


def cpu_seconds() -> float:
    """CPU time this process has used (user and system): over wall time, the cores it kept busy."""
    t = os.times()
    return t.user + t.system


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (1 min), {five:.1f} (5 min)"


def sweep(n: int, batches: list[int]) -> None:
    """Texts per second of the local model at each batch size, on one thread and on every CPU given."""
    texts = [body for _, _, body in turns(n, seed=2)]
    print(f"\nembedding {n} turns with the local model; {cpus()} CPUs given; load {load()}\n")
    print("| threads | batch | turns/s | cores busy | turns per CPU s |")
    print("|---|---|---|---|---|")
    for threads in sorted({1, cpus()}):
        for batch in batches:
            emb = LocalEmbedder(threads=threads, batch=batch)
            emb.embed(texts[: batch * threads * 2])  # load the session, start the threads
            runs = []
            for _ in range(2):
                start, used = time.perf_counter(), cpu_seconds()
                emb.embed(texts)
                runs.append((time.perf_counter() - start, cpu_seconds() - used))
            wall, cpu = sorted(runs)[0]
            print(f"| {threads} | {batch} | {n / wall:.0f} | {cpu / wall:.2f} | {n / cpu:.0f} |", flush=True)
            emb.close()


def size(path: Path) -> float:
    """MB of a SQLite database with its write-ahead log."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()) / 1e6


def ingest(n: int, settings: semantic.Settings) -> str:
    """Write `n` turns, build their vectors; the table's row."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        rows = turns(n)
        with memdir.open(root, actor="bench") as md:
            start = time.perf_counter()
            for at in range(0, n, 500):
                md.apply([Op.write(path, f"---\nname: {name}\n---\n{body}") for path, name, body in rows[at : at + 500]])
            wrote = time.perf_counter() - start
            emb = settings.embedder_instance()
            semantic.attach(md, embedder=emb, settings=settings)
            start, used = time.perf_counter(), cpu_seconds()
            counts = semantic.reindex(md)
            embedded = time.perf_counter() - start
            busy = (cpu_seconds() - used) / embedded
            semantic.close(md)
        vectors = sum(size(root / ".memdir" / name) for name in ("vectors.sqlite3", "vectors.multilingual.sqlite3"))
        store = size(root / ".memdir" / "memdir.db")
        threads = getattr(emb, "threads", "-")
        return (f"| {n:,} | {threads} | {n / wrote:.0f} | {n / embedded:.0f} ({counts['embedded']:,}) | {busy:.2f} | "
                f"{n / (wrote + embedded):.0f} | {wrote + embedded:.0f} | {vectors:.1f} | {store:.1f} | {load()} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000", help="numbers of turns, comma-separated")
    ap.add_argument("--sweep", type=int, default=1000, help="turns embedded at each batch size (0: no sweep)")
    ap.add_argument("--batches", default="8,16,32,64")
    ap.add_argument("--threads", type=int, default=0, help="bulk threads ([semantic] threads); 0: every CPU given")
    ap.add_argument("--batch", type=int, default=16, help="[semantic] batch for the ingest runs")
    a = ap.parse_args()
    if a.sweep:
        sweep(a.sweep, [int(b) for b in a.batches.split(",")])
    settings = semantic.Settings(threads=a.threads, batch=a.batch)
    print(f"\ningest: turns written through Memdir.apply (500 a batch), then embedded by semantic.reindex; "
          f"batch {a.batch}\n")
    print("| turns | threads | written/s | embedded/s (passages, both models) | cores busy | files/s both | total s | vectors MB | store db MB"
          " | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(s) for s in a.sizes.split(",")):
        print(ingest(n, settings), flush=True)


if __name__ == "__main__":
    main()
