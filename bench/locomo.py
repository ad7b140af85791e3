"""memdir's search as an external retriever for the LoCoMo retrieval benchmark.

    python /work/shared/bench/locomo_retrieval.py --baselines fts5 --name memdir \\
        --ingest-cmd '.venv/bin/python bench/locomo.py ingest' \\
        --retriever-cmd '.venv/bin/python bench/locomo.py serve'

Ingest writes every dialog turn as one topic file through `Memdir.write` (so
paths, limits, the secret guard and the journal all apply), under one folder
per conversation and one sub-folder per session:

    conv-26/session-01/D1-3.md     name: "Caroline, 8 May 2023"   body: "Caroline: text [shares a photo: …]"

One file per turn, because a turn is what the benchmark scores and what an
agent would cite; a file per session would return whole sessions (about 40x
the tokens per hit) and need a second, line-level ranking to name turns. The
speaker and the session date go in the name, the turn text in the body, as an
agent saving a conversation would title each note. Serve answers each question
with `Memdir.search(question, k, prefix="conv-26/")`: the conversation is a
folder, so the prefix filter of the query keeps each question inside its own
conversation. File paths map back to dia_ids (`D1-3.md` -> `D1:3`).

`--layout plain` leaves the name out (body only, the baseline's own text).
`--mode` (lexical, semantic, hybrid, auto) is the search mode: `serve`
passes it to `Memdir.search`; `ingest` builds what the mode needs (the
lexical index is kept by every write; a semantic index is built through
`Memdir.search` once per conversation so its cost shows in `build s`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import memdir

_DATE = re.compile(r"on (\d{1,2}) (\w+), (\d{4})")


def memory_root() -> Path:
    return Path(os.environ.get("LOCOMO_MEMDIR") or Path(os.environ["LOCOMO_INGEST_DIR"]) / "memdir")


def turn_path(conv: str, turn: dict[str, object]) -> str:
    session, number = str(turn["id"])[1:].split(":")
    return f"{conv}/session-{int(session):02d}/D{session}-{number}.md"


def dia_id(path: str) -> str:
    return path.rsplit("/", 1)[-1][:-3].replace("-", ":")


def open_for(conv: str, shared: bool) -> memdir.Memdir:
    """The memory a conversation lives in: its own tenant, or a folder of one shared memory."""
    tenant = None if shared else conv.replace("conv-", "conv")
    return memdir.open(memory_root(), tenant=tenant, actor="locomo")


def ingest(layout: str, shared: bool, mode: str = "auto") -> None:
    folder = Path(os.environ["LOCOMO_INGEST_DIR"])
    started = time.perf_counter()
    count = 0
    for source in sorted(folder.glob("*.jsonl")):
        conv = source.stem
        with open_for(conv, shared) as md:
            for line in source.read_text(encoding="utf-8").splitlines():
                turn = json.loads(line)
                body = f"{turn['speaker']}: {turn['text']}"
                if turn.get("image_caption"):
                    body += f" [shares a photo: {turn['image_caption']}]"
                name = None
                if layout == "titled":
                    m = _DATE.search(str(turn.get("date", "")))
                    when = f"{m.group(1)} {m.group(2)} {m.group(3)}" if m else str(turn.get("date", ""))
                    name = f"{turn['speaker']}, {when}"
                md.write(turn_path(conv, turn), body, name=name)
                count += 1
            if mode in ("semantic", "hybrid"):
                md.search("warm up", k=1, mode=mode, prefix=conv + "/")  # builds its index, outside the timed queries
    print(f"ingested {count} turns into {memory_root()} in {time.perf_counter() - started:.1f}s", file=sys.stderr)


def serve(layout: str, shared: bool, mode: str = "auto") -> None:
    if not memory_root().exists():
        ingest(layout, shared, mode)
    opened: dict[str, memdir.Memdir] = {}
    for line in sys.stdin:
        ask = json.loads(line)
        conv, k, unit = ask["conv_id"], int(ask["k"]), ask.get("unit", "turn")
        md = opened.get(conv) or opened.setdefault(conv, open_for(conv, shared))
        # At session level, rank turns and keep the first k distinct sessions.
        hits = md.search(ask["query"], k=k if unit == "turn" else k * 10, mode=mode, prefix=conv + "/")
        ids = [dia_id(h.path) for h in hits]
        if unit != "turn":
            ids = list(dict.fromkeys(i.split(":")[0] for i in ids))[:k]
        print(json.dumps({"ids": ids}), flush=True)
    for md in opened.values():
        md.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["ingest", "serve"])
    ap.add_argument("--layout", choices=["titled", "plain"], default="titled")
    ap.add_argument("--shared", action="store_true", help="all conversations in one memory, one folder each")
    ap.add_argument("--mode", choices=["lexical", "semantic", "hybrid", "auto"], default="auto",
                    help="the search mode (Memdir.search's mode)")
    a = ap.parse_args()
    ingest(a.layout, a.shared, a.mode) if a.command == "ingest" else serve(a.layout, a.shared, a.mode)


if __name__ == "__main__":
    main()
