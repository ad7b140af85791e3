"""Replay the gate offline: every labelled question's candidates recorded once, then any rule for `sure` in seconds.

    python bench/gate.py dump gate.json                   # about a minute: each memory of bench/precision.py once
    python bench/gate.py replay gate.json                 # per half: what bench/precision.py prints, from the record
    python bench/gate.py replay gate.json --mode hybrid   # the same as if the hook searched hybrid (it does not)

Issue 30 item 1 measured a dozen rules for which hits are sure (`search/evidence.py`'s docstring lists them), each
by building every memory again. `dump` records, for each labelled question and for each clause the prompt hook
searches apart (`confidence.clauses`), the top 5 hits of lexical and of hybrid search (hybrid when the semantic
extra is installed) with their signals (share held, cosine, BM25, sure or not), the weight of each word of the
query (`evidence.weigh`), and the text of every hit as the evidence reads it. `replay` computes from the record
alone, per half (`precision.TUNING` and the rest), the prompt hook's figures (the answer injected, anything
injected for a question nothing answers) and search's (no sure hit for such a question), for a rule given as a
function of (row, part, hit) -> sure. Its default rule is the hit's own `sure`, so that `replay` prints what
`bench/precision.py` prints for the hook (the hook also cuts to its token budget, which none of these questions
reaches): a check that the record is faithful before a rule is tried on it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import precision  # noqa: E402

from memdir.search import evidence  # noqa: E402
from memdir.search.confidence import asks_about_past, clauses, without_past  # noqa: E402
from memdir.search.text import name_words, parse  # noqa: E402

Row = dict[str, Any]  # one question: memory, half, query, kind, lang, relevant, parts (the query, then its clauses)
Rule = Callable[[Row, dict[str, Any], dict[str, Any]], bool]  # (row, part, hit) -> sure
HITS = 5  # what the prompt hook takes of each search (recall.PROMPT_HITS)


def record(md: Any, mem: precision.Labelled, modes: Sequence[str], texts: dict[str, str]) -> list[Row]:
    """Every labelled question of `mem` asked of `md`: its parts' hits per mode, weights; the hits' texts into `texts`."""
    searcher, where = md._state.search, md._filter("", (), None)
    asked_all = [(q.query, q.kind, q.lang, sorted(q.relevant)) for q in mem.answerable]
    asked_all += [(n.query, n.kind, n.lang, []) for n in mem.no_answer]
    rows = []
    for query, kind, lang, relevant in asked_all:
        parts = []
        for asked in [query, *clauses(query)]:
            part: dict[str, Any] = {"asked": asked}
            for mode in modes:
                part[mode] = [{"path": h.path, "sure": h.sure, "score": h.score, **h.signals.to_dict()}
                              for h in md.search(asked, k=HITS, mode=mode)]
            parsed = parse(asked)
            weighed = (parse(without_past(asked)) or parsed) if asks_about_past(asked) else parsed
            paths = sorted({h["path"] for mode in modes for h in part[mode]})
            with searcher.lock:
                index = searcher.index()
                df = index.frequencies(weighed.words, where) if weighed.words else {}
                symbol_df = (dict.fromkeys(weighed.symbols, len(index.containing(weighed.symbols, where)))
                             if weighed.symbols else {})  # as `lexical.covers` weighs them
                weights = evidence.weigh(weighed, max(index.count(), 1), df, symbol_df)
                for path, d in index.docs(paths, where).items():
                    texts[f"{mem.name}/{path}"] = evidence.searchable(f"{d.name}\n{name_words(path, d.name)}",
                                                                      d.description, d.tags, d.body)
            part["stems"], part["symbols"] = dict(weights.stems), dict(weights.symbols)
            parts.append(part)
        rows.append({"memory": mem.name, "half": precision.half(mem.name), "query": query, "kind": kind,
                     "lang": lang, "relevant": relevant, "parts": parts})
    return rows


def dump(out: Path, names: Sequence[str]) -> None:
    """Record every labelled memory named (each built in a temporary folder, its vectors too when it can)."""
    semantic = precision.semantic_installed()
    modes = ["lexical", "hybrid"] if semantic else ["lexical"]
    rows: list[Row] = []
    texts: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("MEMDIR_CACHE", str(Path(tmp) / "cache"))
        for name in names:
            mem = precision.load(name)
            with precision.build(mem, Path(tmp) / name) as md:
                if semantic:
                    precision.build_vectors(md)
                rows += record(md, mem, modes, texts)
            print(f"  {name}", file=sys.stderr, flush=True)
    out.write_text(json.dumps({"modes": modes, "rows": rows, "texts": texts}, ensure_ascii=False), encoding="utf-8")


def own(row: Row, part: dict[str, Any], hit: dict[str, Any]) -> bool:
    """The rule search applies now: the hit's own `sure`."""
    return bool(hit["sure"])


def injected(row: Row, mode: str, sure: Rule = own) -> list[str]:
    """The files the prompt hook would add for `row`: the sure hits of the query and of each clause, first 5."""
    got: list[str] = []
    for part in row["parts"]:
        got += [h["path"] for h in part[mode] if sure(row, part, h) and h["path"] not in got]
    return got[:HITS]


def replay(rows: Sequence[Row], mode: str = "lexical", sure: Rule = own) -> dict[str, dict[str, float]]:
    """Per half: the share of answerable questions whose file the hook adds, of no-answer questions it adds anything
    for, and of no-answer questions whose search (the whole query) has no sure hit."""
    out = {}
    for side in precision.HALVES:
        answerable = [r for r in rows if r["half"] == side and r["relevant"]]
        none = [r for r in rows if r["half"] == side and not r["relevant"]]
        out[side] = {
            "answer injected": precision.mean(1.0 if set(injected(r, mode, sure)) & set(r["relevant"]) else 0.0
                                              for r in answerable),
            "anything injected, no answer": precision.mean(1.0 if injected(r, mode, sure) else 0.0 for r in none),
            "no sure hit, no answer": precision.mean(
                0.0 if any(sure(r, r["parts"][0], h) for h in r["parts"][0][mode]) else 1.0 for r in none)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("dump", "replay"))
    parser.add_argument("file", type=Path, help="the record (JSON) to write or to read")
    parser.add_argument("--memories", default="", help="comma-separated labelled memories (default: all)")
    parser.add_argument("--mode", default="lexical", choices=("lexical", "hybrid"), help="the search replayed")
    args = parser.parse_args()
    if args.action == "dump":
        dump(args.file, args.memories.split(",") if args.memories else precision.names())
        return
    rows = json.loads(args.file.read_text(encoding="utf-8"))["rows"]
    figures = replay(rows, args.mode)
    print(precision.table(["half", "answer injected", "anything injected, no answer", "no sure hit, no answer"],
                          [[side, *(precision.pct(v) for v in f.values())] for side, f in figures.items()]))


if __name__ == "__main__":
    main()
