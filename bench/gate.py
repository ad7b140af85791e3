"""Replay the gate offline: every labelled question's candidates recorded once, then any rule for `sure` in seconds.

    python bench/gate.py dump gate.json                   # about a minute: each memory of bench/precision.py once
    python bench/gate.py replay gate.json                 # per half: what bench/precision.py prints, from the record
    python bench/gate.py replay gate.json --mode hybrid   # the same as if the hook searched hybrid (it does not)
    python bench/gate.py curve gate.json                  # the words' bar alone against the bar with USE's margins

Issue 30 item 1 measured a dozen rules for which hits are sure (`search/evidence.py`'s docstring lists them), each
by building every memory again. `dump` records, for each labelled question and for each clause the prompt hook
searches apart (`confidence.clauses`), the top 5 hits of lexical and of hybrid search (hybrid when the semantic
extra is installed) with their signals (share held, cosine, BM25, sure or not), the weight of each word of the
query (`evidence.weigh`), the text of every hit as the evidence reads it, and, when the multilingual model is
installed, USE's cosines of each part with every file of the memory (the whole file, its best line, its title:
`meanings`; `--embedder multilingual` makes hybrid search use it too). `replay` computes from the record
alone, per half (`precision.TUNING` and the rest), the prompt hook's figures (the answer injected, anything
injected for a question nothing answers) and search's (no sure hit for such a question), for a rule given as a
function of (row, part, hit) -> sure. Its default rule is the hit's own `sure`, so that `replay` prints what
`bench/precision.py` prints for the hook (the hook also cuts to its token budget, which none of these questions
reaches): a check that the record is faithful before a rule is tried on it. A rule of which hits are sure on their
own goes through `beside`, as search's does. `curve` prints the trade-off of the bar on the share held, and of a
logistic fit (tuning half) of the share with USE's `margins` (`search/evidence.py` gives the figures).
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
from memdir.search.confidence import BESIDE, EPSILON, asks_about_past, clauses, without_past  # noqa: E402
from memdir.search.text import name_words, parse  # noqa: E402

Row = dict[str, Any]  # one question: memory, half, query, kind, lang, relevant, parts (the query, then its clauses)
Rule = Callable[[Row, dict[str, Any], dict[str, Any]], bool]  # (row, part, hit) -> sure
HITS = 5  # what the prompt hook takes of each search (recall.PROMPT_HITS)


def pieces(text: str) -> list[str]:
    """The lines of a file's searchable text a reader would quote (list marks and headings' hashes dropped)."""
    out = []
    for line in text.splitlines():
        line = line.strip().lstrip("#>*-+ ").strip()
        if len(line) > 2 and line not in out:
            out.append(line)
    return out or [text[:200] or "."]


def meanings(use: Any, mem: precision.Labelled, docs: dict[str, str], rows: list[Row]) -> None:
    """USE's cosines of each part asked against every file of the memory: the whole file, its best line, its title
    (name and description), into each part's `use` as path -> [file, line, title, the best line's index]."""
    import numpy as np

    paths = sorted(docs)
    lines = {p: pieces(docs[p]) for p in paths}
    flat = [line for p in paths for line in lines[p]]
    where = np.cumsum([0, *(len(lines[p]) for p in paths)])
    whole = use.embed([docs[p][:4000] for p in paths])
    titles = use.embed([" ".join(docs[p].split("\n")[:3]) for p in paths])
    vectors = use.embed(flat)
    parts = [part for row in rows for part in row["parts"]]
    asked = use.embed([part["asked"] for part in parts])
    for part, q in zip(parts, asked, strict=True):
        line_cos = vectors @ q
        part["use"] = {}
        for i, p in enumerate(paths):
            span = line_cos[where[i]:where[i + 1]]
            best = int(np.argmax(span))
            part["use"][p] = [round(float(whole[i] @ q), 4), round(float(span[best]), 4), round(float(titles[i] @ q), 4),
                              best]


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


def dump(out: Path, names: Sequence[str], embedder: str = "local") -> None:
    """Record every labelled memory named (each built in a temporary folder, its vectors too when it can)."""
    precision.use_embedder(embedder)
    semantic = precision.semantic_installed()
    use = None
    from memdir.search import embed

    if embed.multilingual_available():
        use = embed.MultilingualEmbedder()
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
                mine = record(md, mem, modes, texts)
                if use is not None:
                    searcher = md._state.search
                    with searcher.lock:
                        docs = {p: evidence.searchable(f"{d.name}\n{name_words(p, d.name)}", d.description, d.tags,
                                                       d.body)
                                for p, d in searcher.index().docs(sorted(mem.files), md._filter("", (), None)).items()}
                    meanings(use, mem, docs, mine)
                rows += mine
            print(f"  {name}", file=sys.stderr, flush=True)
    out.write_text(json.dumps({"modes": modes, "rows": rows, "texts": texts}, ensure_ascii=False), encoding="utf-8")


def own(row: Row, part: dict[str, Any], hit: dict[str, Any]) -> bool:
    """The rule search applies now: the hit's own `sure`."""
    return bool(hit["sure"])


def beside(primary: Rule, mode: str = "lexical", low: float = evidence.COVER * BESIDE) -> Rule:
    """A rule of which hits are sure on their own, with search's `BESIDE`: beside such a hit, one holding `low` of
    the query's weight is sure too. A per-hit rule without it loses about 5 points of answers injected (a prompt's
    answer split over two files) at no gain for questions nothing answers (nothing is sure there to lean on)."""
    leans: dict[int, bool] = {}

    def sure(row: Row, part: dict[str, Any], hit: dict[str, Any]) -> bool:
        if id(part) not in leans:
            leans[id(part)] = any(primary(row, part, h) for h in part[mode])
        return primary(row, part, hit) or (leans[id(part)] and hit.get("cover", 0.0) >= low - EPSILON)
    return sure


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


def margins(part: dict[str, Any], path: str) -> list[float]:
    """USE's cosine of the part asked with the file, its best line and its title, each less the best of any other
    file of the memory: how far the hit stands out in meaning (negative: another file is closer)."""
    use = part["use"]
    out = []
    for i in range(3):
        mine = use[path][i] if path in use else 0.0
        out.append(mine - max((v[i] for p, v in use.items() if p != path), default=0.0))
    return out


def fitted(rows: Sequence[Row], mode: str) -> Callable[[dict[str, Any], dict[str, Any]], float]:
    """A logistic fit, on the tuning half, of whether a hit answers: from its share held and its USE `margins`
    (the answering hits of answerable questions against every hit of the questions nothing answers)."""
    import numpy as np

    xs, ys = [], []
    for row in rows:
        if row["half"] != precision.HALVES[0]:
            continue
        for part in row["parts"]:
            for hit in part[mode]:
                if hit["path"] in row["relevant"] or not row["relevant"]:
                    xs.append([hit.get("cover", 0.0), *margins(part, hit["path"])])
                    ys.append(1.0 if row["relevant"] else 0.0)
    x, y = np.array(xs), np.array(ys)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    b = np.zeros(z.shape[1])
    for _ in range(3000):
        b -= 0.5 * (z.T @ (1 / (1 + np.exp(-z @ b)) - y) / len(y) + 0.01 * np.r_[b[:-1], 0])
    return lambda part, hit: float(1 / (1 + np.exp(-np.r_[(np.array([hit.get("cover", 0.0), *margins(part, hit["path"])])
                                                          - mu) / sd, 1] @ b)))


def curve(rows: Sequence[Row], mode: str) -> list[list[str]]:
    """The trade-off of the words' bar alone against the bar with USE's margins (`fitted`), both halves."""
    out = []
    for bar in (0.5, 0.6, 0.65, 0.7, 0.8):
        rule = beside(lambda row, part, hit, bar=bar: hit.get("cover", 0.0) >= bar - EPSILON, mode)
        out.append([f"share held >= {bar}", *figures(replay(rows, mode, rule))])
    if all("use" in part for row in rows for part in row["parts"]):
        model = fitted(rows, mode)
        for at in (0.6, 0.7, 0.75, 0.8, 0.85):
            rule = beside(lambda row, part, hit, at=at: model(part, hit) >= at, mode)
            out.append([f"share + USE margins >= {at}", *figures(replay(rows, mode, rule))])
    return out


def figures(by_half: dict[str, dict[str, float]]) -> list[str]:
    return [" / ".join(precision.pct(v) for v in f.values()) for f in by_half.values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("dump", "replay", "curve"))
    parser.add_argument("file", type=Path, help="the record (JSON) to write or to read")
    parser.add_argument("--memories", default="", help="comma-separated labelled memories (default: all)")
    parser.add_argument("--embedder", default="local", choices=("local", "multilingual"),
                        help="the model of hybrid search in the record (USE's cosines are recorded when it is installed)")
    parser.add_argument("--mode", default="lexical", choices=("lexical", "hybrid"), help="the search replayed")
    args = parser.parse_args()
    if args.action == "dump":
        dump(args.file, args.memories.split(",") if args.memories else precision.names(), args.embedder)
        return
    rows = json.loads(args.file.read_text(encoding="utf-8"))["rows"]
    if args.action == "curve":
        print(precision.table(["rule", *(f"{side}: answer / anything, no answer / no sure hit" for side in precision.HALVES)],
                              curve(rows, args.mode)))
        return
    figures = replay(rows, args.mode)
    print(precision.table(["half", "answer injected", "anything injected, no answer", "no sure hit, no answer"],
                          [[side, *(precision.pct(v) for v in f.values())] for side, f in figures.items()]))


if __name__ == "__main__":
    main()
