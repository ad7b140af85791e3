"""Hybrid search at scale: 1,000 and 10,000 synthetic files, all in one folder.

    python bench/hybrid_scale.py                       # 1,000 and 10,000 files, the local model
    python bench/hybrid_scale.py --sizes 10000 --embedder fake

Each file is a short note of two paragraphs drawn from a fixed vocabulary
(seeded, so every run builds the same memory). The vector index is built
once (build s: embedding every chunk; disk: the vectors file), then a fresh
process opens the memory and answers queries of two to five words: the
first query pays for loading the vectors (cold), the rest are timed. Prints
median and p95 in milliseconds per mode. Target (issue #8): hybrid under 30
ms median at 10,000 files. Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402
from memdir.search import semantic  # noqa: E402
from memdir.search.embed import Embedder, LocalEmbedder  # noqa: E402

WORDS = """garden kite harbour violin recipe invoice migraine bicycle passport orchard tenant webhook
deploy cache pottery marathon glacier lantern monsoon satellite sourdough ferry ledger allergy
puppy camping museum painting guitar chess vaccine budget roof tractor sailing volcano tennis""".split()
FILLER = """the a of to and in we it was for on with they this at by from our more some about""".split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS if rng.random() < 0.35 else FILLER) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + "."


def build(root: Path, n: int) -> None:
    rng = random.Random(n)
    with memdir.open(root, actor="bench") as md:
        for i in range(n):
            body = f"{sentence(rng)} {sentence(rng)}\n\n- {sentence(rng)}\n"
            md.write(f"notes/n{i:05d}.md", body, name=f"note {i} about {rng.choice(WORDS)}")


def embedder(kind: str) -> Embedder:
    if kind == "fake":
        from memdir.testing import FakeEmbedder

        return FakeEmbedder(384)
    return LocalEmbedder()


def serve(root: Path, kind: str, runs: int) -> dict[str, list[float]]:
    """In a fresh process: open, then time each mode over the same queries."""
    rng = random.Random(7)
    queries = [" ".join(rng.sample(WORDS, rng.randint(2, 5))) for _ in range(runs + 1)]
    emb = embedder(kind)
    out: dict[str, list[float]] = {}
    with memdir.open(root, actor="bench") as md:
        semantic.attach(md, embedder=emb)
        start = time.perf_counter()
        md.search(queries[0], k=10, mode="hybrid")
        out["cold first hybrid query"] = [(time.perf_counter() - start) * 1000]
        for mode in ("lexical", "semantic", "hybrid"):
            took = []
            for q in queries[1:]:
                start = time.perf_counter()
                md.search(q, k=10, mode=mode)
                took.append((time.perf_counter() - start) * 1000)
            out[mode] = took
        took = []
        for q in queries[1:]:
            start = time.perf_counter()
            emb.embed([q])
            took.append((time.perf_counter() - start) * 1000)
        out["(of which: embed the query)"] = took
        semantic.close(md)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--embedder", choices=["local", "fake"], default="local")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--serve", metavar="ROOT", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve:
        print(json.dumps(serve(Path(a.serve), a.embedder, a.runs)))
        return
    print(f"hybrid search at scale; embedder {a.embedder}; {a.runs} queries per mode; load {os.getloadavg()[0]:.1f}\n")
    print("| files | what | median ms | p95 ms |")
    print("|---|---|---|---|")
    for n in (int(s) for s in a.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "memory"
            build(root, n)
            with memdir.open(root, actor="bench") as md:
                start = time.perf_counter()
                counts = semantic.reindex(md, embedder=embedder(a.embedder))
                built = time.perf_counter() - start
                semantic.close(md)
            disk = (root / ".memdir" / "vectors.sqlite3").stat().st_size / 1e6
            print(f"| {n} | build: {counts['embedded']} chunks embedded in {built:.1f} s, vectors {disk:.1f} MB | | |")
            got = subprocess.run([sys.executable, __file__, "--serve", str(root), "--embedder", a.embedder,
                                  "--runs", str(a.runs)], check=True, capture_output=True, text=True)
            for what, took in json.loads(got.stdout).items():
                p95 = sorted(took)[int(len(took) * 0.95)] if len(took) > 1 else took[0]
                print(f"| {n} | {what} | {statistics.median(took):.1f} | {p95:.1f} |")


if __name__ == "__main__":
    main()
