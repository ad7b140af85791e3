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
lexical index is kept by every write; with `memdir[semantic]`, semantic,
hybrid and auto embed every turn at ingest, so `build s` counts the
embedding). `created` is the session's date, so the date signal can match
dates in a question. Serve prints the search time (median, p95) and the
auto fallbacks to stderr.
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
_TIME = re.compile(r"(\d{1,2}):(\d{2}) ([ap]m)")
_MONTHS = "January February March April May June July August September October November December".split()
_DOTTED = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{4}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?$")  # REALTALK's


def session_stamp(date: str) -> str | None:
    """'1:56 pm on 8 May, 2023' (LoCoMo) or '29.12.2023, 22:42:04' (REALTALK) -> an ISO stamp (None if neither)."""
    dotted = _DOTTED.match(date.strip())
    if dotted:
        day, month, year, hour, minute, second = dotted.groups()
        return f"{year}-{int(month):02d}-{int(day):02d}T{int(hour):02d}:{minute}:{second or '00'}Z"
    m, t = _DATE.search(date), _TIME.search(date)
    if not m or m.group(2) not in _MONTHS:
        return None
    hour, minute = (int(t.group(1)) % 12 + (12 if t.group(3) == "pm" else 0), int(t.group(2))) if t else (0, 0)
    return f"{m.group(3)}-{_MONTHS.index(m.group(2)) + 1:02d}-{int(m.group(1)):02d}T{hour:02d}:{minute:02d}:00Z"


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


def title(speaker: str, date: str) -> str:
    """A turn's name: its speaker and its session's day ('Caroline, 8 May 2023'), as an agent would title it."""
    m = _DATE.search(date)
    if m:
        return f"{speaker}, {m.group(1)} {m.group(2)} {m.group(3)}"
    stamp = session_stamp(date)
    if stamp:
        year, month, day = stamp[:10].split("-")
        return f"{speaker}, {int(day)} {_MONTHS[int(month) - 1]} {year}"
    return f"{speaker}, {date}"


def write_turn(md: memdir.Memdir, conv: str, turn: dict[str, object], layout: str = "titled") -> None:
    """One dialog turn as one topic file (see the module docstring)."""
    body = f"{turn['speaker']}: {turn['text']}"
    if turn.get("image_caption"):
        body += f" [shares a photo: {turn['image_caption']}]"
    name = title(str(turn["speaker"]), str(turn.get("date", ""))) if layout == "titled" else None
    stamp = session_stamp(str(turn.get("date", "")))
    head = f"---\ncreated: {stamp}\n---\n" if stamp else ""
    # The turn's words as said: a write would add today's date to "today" and "tomorrow" (the day of the run).
    md.write(turn_path(conv, turn), head + body, name=name, absolute_dates=False)


def ingest(layout: str, shared: bool, mode: str = "auto") -> None:
    folder = Path(os.environ["LOCOMO_INGEST_DIR"])
    started = time.perf_counter()
    count = 0
    for source in sorted(folder.glob("*.jsonl")):
        conv = source.stem
        with open_for(conv, shared) as md:
            for line in source.read_text(encoding="utf-8").splitlines():
                write_turn(md, conv, json.loads(line), layout)
                count += 1
            if mode != "lexical":
                from memdir.search import semantic

                semantic.reindex(md)  # embed now, so the build time counts the embedding
                semantic.close(md)
    print(f"ingested {count} turns into {memory_root()} in {time.perf_counter() - started:.1f}s", file=sys.stderr)


def serve(layout: str, shared: bool, mode: str = "auto") -> None:
    if not memory_root().exists():
        ingest(layout, shared, mode)
    opened: dict[str, memdir.Memdir] = {}
    took: list[float] = []
    for line in sys.stdin:
        ask = json.loads(line)
        conv, k, unit = ask["conv_id"], int(ask["k"]), ask.get("unit", "turn")
        md = opened.get(conv) or opened.setdefault(conv, open_for(conv, shared))
        # At session level, rank turns and keep the first k distinct sessions.
        started = time.perf_counter()
        hits = md.search(ask["query"], k=k if unit == "turn" else k * 10, mode=mode, prefix=conv + "/")
        took.append((time.perf_counter() - started) * 1000)
        ids = [dia_id(h.path) for h in hits]
        if unit != "turn":
            ids = list(dict.fromkeys(i.split(":")[0] for i in ids))[:k]
        print(json.dumps({"ids": ids}), flush=True)
    if took:
        took.sort()
        print(f"serve --mode {mode}: {len(took)} queries, search median {took[len(took) // 2]:.1f} ms,"
              f" p95 {took[int(len(took) * 0.95)]:.1f} ms", file=sys.stderr)
    if mode != "lexical":
        from memdir.search import semantic

        counts = [semantic.stats(md) for md in opened.values()]
        print(f"serve --mode {mode}: auto fallbacks {sum(c['auto_fallbacks'] for c in counts)},"
              f" chunks embedded while serving {sum(c['embedded'] for c in counts)}", file=sys.stderr)
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
