"""LoCoMo dev and REALTALK side by side: plain BM25 and memdir's search, per corpus, category and conversation.

A ranking tuned on one benchmark may only have learnt that benchmark. REALTALK
(Lee et al., 2025, from LoCoMo's authors) is 10 real messaging-app chats between
people over 21 days, with memory-probing questions whose evidence names turns,
the shape LoCoMo has; its text is people typing (many short turns, slang, names in
lower case), where LoCoMo's was written by a model. Both run here through the
same protocol as /work/shared/bench/locomo_retrieval.py (its loader, its fts5
baseline, its metrics: the script is imported from `--protocol`), in one run:

    git clone https://github.com/danny911kr/REALTALK /tmp/REALTALK      # once; nothing is downloaded here
    .venv/bin/python bench/corpora.py --realtalk /tmp/REALTALK [--hybrid] [--ablate] [--work /tmp/corpora]

`--realtalk` takes a checkout, its `data/` folder (the `Chat_*.json` files) or a
bare mirror of the repository. Its data has no stated license: it is read
where it is, converted to LoCoMo's shape in a temporary folder outside this
repository (text = `clean_text`, `blip_caption` as the photo's caption, session
dates as written, which `bench/locomo.py`'s `session_stamp` reads) and never
copied into it. Only the top-level `Chat_*.json` are read (`data/locomo/` is
LoCoMo itself).

Each conversation is one tenant of a memory under `--work` (a temporary folder
unless given; given, a second run reuses what was ingested, vectors included),
one topic file per turn written by `bench/locomo.py`'s `write_turn`. Rows:

- `bm25`: the protocol's fts5 baseline (SQLite FTS5 porter, its stopword list).
- `lexical` / `hybrid`: `Memdir.search(question, k=10, mode=...)`, every hit as
  ranked (a hit's confidence gates nothing here: `search/confidence.py`).
  `--hybrid` needs `memdir[semantic]` and embeds every turn once (minutes).
- `--strangers`: each conversation is asked the other conversations' questions, their
  speakers renamed to its own (the first to speak for the first), and the share that
  gets a *sure* hit is printed per method, beside the share of its own questions that
  does: a rough no-answer rate for conversation memories (rough: "what does X like
  to do?" may be answered anywhere).
- `--ablate`: every ranking signal turned off alone (`ABLATIONS`, `HYBRID_ABLATIONS`),
  on both corpora, against the full ranking (hybrid has no feedback: `search/feedback.py`).

The main table is categories 1-4 (LoCoMo's category 5, adversarial, is a row of
its own; REALTALK has categories 1-3: multi-hop, temporal, open-domain as in
LoCoMo's numbering). ms/query is the time of the search call in this process.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import memdir
from memdir.search import feedback, fts, lexical, text

PROTOCOL = Path(os.environ.get("LOCOMO_PROTOCOL", "/work/shared/bench/locomo_retrieval.py"))
LOCOMO_DEV = Path(os.environ.get("LOCOMO_DEV", "/work/shared/bench/locomo-dev.json"))
K = 10
STRANGERS = 6  # questions taken from each other conversation (`--strangers`)


def use_embedder(name: str) -> None:
    """Make every memory of this run embed with `name`, as `[semantic] embedder = name` in its memdir.toml would."""
    if name == "local":
        return
    import dataclasses

    from memdir.search import semantic

    load = semantic.Settings.load.__func__  # type: ignore[attr-defined]
    semantic.Settings.load = classmethod(lambda cls, cfg: dataclasses.replace(load(cls, cfg), embedder=name))  # type: ignore[method-assign,assignment]


def _script(name: str, path: Path) -> ModuleType:
    """A script loaded from its file (the bench folder is not put on sys.path: its mcp.py would hide the SDK)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise SystemExit(f"no script at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


locomo_bench = _script("bench_locomo", Path(__file__).resolve().parent / "locomo.py")  # the turn files


def protocol(path: Path = PROTOCOL) -> ModuleType:
    """The LoCoMo retrieval protocol's script, imported from where it lives (it is not ours to copy)."""
    spec = importlib.util.spec_from_file_location("locomo_retrieval", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise SystemExit(f"the LoCoMo protocol script is not at {path}; pass --protocol PATH")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- REALTALK in LoCoMo's shape


def realtalk_chats(source: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file stem, chat) for each top-level `Chat_*.json` of a checkout, its data folder or a bare mirror."""
    for folder in (source, source / "data"):
        files = sorted(folder.glob("Chat_*.json"), key=lambda p: _number(p.stem))
        if files:
            return [(f.stem, json.loads(f.read_text(encoding="utf-8"))) for f in files]
    if (source / "HEAD").is_file() and (source / "objects").is_dir():  # a bare git repository
        git = ["git", "-C", str(source)]
        names = subprocess.run([*git, "ls-tree", "--name-only", "HEAD", "data/"], check=True, capture_output=True,
                               text=True).stdout.split()
        chats = sorted((n for n in names if re.fullmatch(r"data/Chat_[^/]*\.json", n)), key=lambda n: _number(n))
        return [(Path(n).stem, json.loads(subprocess.run([*git, "show", f"HEAD:{n}"], check=True,
                                                         capture_output=True).stdout)) for n in chats]
    raise SystemExit(f"no Chat_*.json in {source} (nor in its data/ folder, nor a git repository there); "
                     "git clone https://github.com/danny911kr/REALTALK and pass its folder")


def _number(name: str) -> int:
    m = re.search(r"Chat_(\d+)", name)
    return int(m.group(1)) if m else 0


def to_locomo(stem: str, chat: dict[str, Any]) -> dict[str, Any]:
    """One REALTALK chat as a LoCoMo sample: sessions of {speaker, dia_id, text, blip_caption}, its QA as is."""
    numbers = sorted(int(m.group(1)) for k in chat if (m := re.fullmatch(r"session_(\d+)", k)))
    names = chat.get("name", {})
    conversation: dict[str, Any] = {"speaker_a": names.get("speaker_1", ""), "speaker_b": names.get("speaker_2", "")}
    for n in numbers:
        turns = chat[f"session_{n}"]
        conversation[f"session_{n}_date_time"] = chat.get(f"session_{n}_date_time") or \
            (turns[0].get("date_time", "") if turns else "")
        conversation[f"session_{n}"] = [
            {"speaker": t["speaker"], "dia_id": t["dia_id"], "text": t.get("clean_text") or t.get("text", ""),
             **({"blip_caption": t["blip_caption"]} if t.get("blip_caption") else {})}
            for t in turns
        ]
    return {"sample_id": f"chat-{_number(stem)}", "conversation": conversation,
            "qa": [{k: q[k] for k in ("question", "answer", "evidence", "category") if k in q} for q in chat["qa"]]}


def convert(source: Path, out: Path) -> Path:
    """Write REALTALK as one LoCoMo-shaped JSON file in `out` (outside the repository) and return its path."""
    path = out / "realtalk-locomo.json"
    path.write_text(json.dumps([to_locomo(stem, chat) for stem, chat in realtalk_chats(source)], ensure_ascii=False),
                    encoding="utf-8")
    return path


# ---------------------------------------------------------------- memories


def tenant(conv: str) -> str:
    return re.sub(r"[^a-z0-9]", "", conv.lower())


def ingest(root: Path, convs: list[dict[str, Any]], hybrid: bool) -> float:
    """Each conversation as a tenant of the memory at `root` (skipped when a marker says it is there); seconds."""
    started = time.perf_counter()
    for c in convs:
        marker = root / f".ingested-{tenant(c['conv_id'])}{'-hybrid' if hybrid else ''}"
        if marker.exists():
            continue
        with memdir.open(root, tenant=tenant(c["conv_id"]), actor="corpora") as md:
            if not (root / f".ingested-{tenant(c['conv_id'])}").exists():
                for turn in c["turns"]:
                    locomo_bench.write_turn(md, c["conv_id"], turn)
                (root / f".ingested-{tenant(c['conv_id'])}").touch()
            if hybrid:
                from memdir.search import semantic

                semantic.reindex(md)
                semantic.close(md)
        marker.touch()
    return time.perf_counter() - started


# ---------------------------------------------------------------- what is measured


@dataclass(frozen=True)
class Variant:
    """One way of ranking: a search mode, the evidence bar, and the signals changed from memdir's defaults."""

    label: str
    mode: str = "lexical"  # lexical | hybrid | bm25 (the protocol's baseline)
    cover: float | None = None  # the share of the query a sure hit holds (None: memdir's)
    weights: tuple[float, float, float, float] | None = None  # name, description, tags, body
    neighbour_share: float | None = None
    stopwords: bool = False  # the protocol's stopword list instead of memdir's
    settings: dict[str, Any] = field(default_factory=dict)  # the hybrid's Settings changed
    feedback: bool = True  # pseudo-relevance feedback (search/feedback.py)
    cover_weight: float | None = None  # the share of the query a file holds, as a signal (search/lexical.py)
    second_share: float | None = None  # the share lent two turns away
    people: float | None = None  # the lexical people factor (search/lexical.py)


# Each ranking signal turned off alone.
ABLATIONS = [
    Variant("lexical: name weight 0 (speaker, date)", weights=(0.0, 2.0, 2.0, 1.0)),
    Variant("lexical: fields weighed alike", weights=(1.0, 1.0, 1.0, 1.0)),
    Variant("lexical: no neighbours", neighbour_share=0.0),
    Variant("lexical: protocol's stopwords", stopwords=True),
    Variant("lexical: no feedback", feedback=False),
    Variant("lexical: no cover", cover_weight=0.0),
    Variant("lexical: neighbours 0.5", neighbour_share=0.5),
    Variant("lexical: no people", people=0.0),
]
HYBRID_ABLATIONS = [
    Variant("hybrid: no people", "hybrid", settings={"people": 0.0}),
    Variant("hybrid: no neighbours (both sides)", "hybrid", neighbour_share=0.0, settings={"neighbours": 0.0}),
    Variant("hybrid: name weight 0", "hybrid", weights=(0.0, 2.0, 2.0, 1.0)),
    Variant("hybrid: weight 0.2", "hybrid", settings={"weight": 0.2}),
    Variant("hybrid: weight 0.6", "hybrid", settings={"weight": 0.6}),
    Variant("hybrid: rrf", "hybrid", settings={"fusion": "rrf"}),
    Variant("hybrid: no cover", "hybrid", cover_weight=0.0),
    Variant("hybrid: weight 0.4", "hybrid", settings={"weight": 0.4}),
    Variant("hybrid: 50 semantic candidates", "hybrid", settings={"semantic_depth": 50}),
    Variant("hybrid: 200 semantic candidates", "hybrid", settings={"semantic_depth": 200}),
    Variant("hybrid: people 0.6", "hybrid", settings={"people": 0.6}),
]


@contextlib.contextmanager
def signals(v: Variant, proto: ModuleType) -> Iterator[None]:
    """memdir's lexical constants as the variant sets them, for the length of a run (a bench-only switch)."""
    saved = (fts.WEIGHTS, lexical.NEIGHBOUR_SHARE, text.STOPWORDS, feedback.ON, lexical.COVER_WEIGHT,
             lexical.SECOND_SHARE, lexical.PEOPLE)
    try:
        feedback.ON = v.feedback
        if v.people is not None:
            lexical.PEOPLE = v.people
        if v.cover_weight is not None:
            lexical.COVER_WEIGHT = v.cover_weight
        if v.second_share is not None:
            lexical.SECOND_SHARE = v.second_share
        if v.weights is not None:
            fts.WEIGHTS = v.weights
        if v.neighbour_share is not None:
            lexical.NEIGHBOUR_SHARE = v.neighbour_share
        if v.stopwords:  # the protocol's list, so only the ranking differs from the baseline
            text.STOPWORDS = frozenset(proto.STOP)
        yield
    finally:
        (fts.WEIGHTS, lexical.NEIGHBOUR_SHARE, text.STOPWORDS, feedback.ON, lexical.COVER_WEIGHT,
         lexical.SECOND_SHARE, lexical.PEOPLE) = saved


def searcher(v: Variant, root: Path, conv: str) -> tuple[Callable[[str], list[str]], Callable[[], None]]:
    """search(question) -> dia_ids for one conversation, and how to close it (`sure_ids` for the sure hits)."""
    md = memdir.open(root, tenant=tenant(conv), actor="corpora")
    if v.mode == "hybrid":
        from memdir.search import semantic

        sem = semantic.attach(md)
        sem.settings = dataclasses.replace(semantic.Settings.load(None), **v.settings)

    def search(question: str) -> list[str]:
        hits = md.search(question, k=K, mode=v.mode, prefix=conv + "/", cover=v.cover)
        SURE.update({question: any(h.sure for h in hits)})
        return [locomo_bench.dia_id(h.path) for h in hits]

    return search, md.close


SURE: dict[str, bool] = {}  # question -> whether its last search had a sure hit (`--strangers`)


def run(proto: ModuleType, convs: list[dict[str, Any]], v: Variant, root: Path) -> list[dict[str, Any]]:
    """One row per question with evidence: its conversation, category, R@5, R@10, NDCG@10, tok@5/10, ms."""
    rows = []
    with signals(v, proto):
        for c in convs:
            docs = proto.docs_for(c["turns"], "turn")
            texts = dict(docs)
            if v.mode == "bm25":
                search, close = (lambda s: lambda q: s(q, K))(proto.make_fts5(docs)), (lambda: None)
            else:
                search, close = searcher(v, root, c["conv_id"])
            try:
                for qa in c["qas"]:
                    gold = qa["gold"]
                    if not gold:
                        continue
                    started = time.perf_counter()
                    ranked = search(qa["question"])
                    ms = (time.perf_counter() - started) * 1000
                    rows.append({"conv": c["conv_id"], "cat": qa["category"], "r5": proto.score(ranked, gold, 5),
                                 "r10": proto.score(ranked, gold, 10), "ndcg": proto.ndcg(ranked, gold),
                                 "tok5": sum(proto.ntok(texts.get(i, "")) for i in ranked[:5]),
                                 "tok10": sum(proto.ntok(texts.get(i, "")) for i in ranked[:10]), "ms": ms})
            finally:
                close()
    return rows


def speakers(conv: dict[str, Any]) -> list[str]:
    """The conversation's speakers, the first to speak first."""
    return list(dict.fromkeys(str(t["speaker"]) for t in conv["turns"]))


def strangers(convs: list[dict[str, Any]], per: int = STRANGERS, seed: int = 7) -> dict[str, list[str]]:
    """For each conversation, questions of the others with their speakers renamed to its own: questions it
    most likely cannot answer (some are general enough that it can: "what does X like to do?")."""
    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    for c in convs:
        mine = speakers(c)
        asked = []
        for o in convs:
            if o is c:
                continue
            pool = [q["question"] for q in o["qas"] if q["gold"] and q["category"] in (1, 2, 3, 4)]
            for question in rng.sample(pool, min(per, len(pool))):
                for theirs, ours in zip(speakers(o), mine, strict=False):
                    question = re.sub(rf"\b{re.escape(theirs)}\b", ours, question, flags=re.IGNORECASE)
                asked.append(question)
        out[c["conv_id"]] = asked
    return out


def answered(convs: list[dict[str, Any]], v: Variant, root: Path) -> tuple[int, int, int, int]:
    """(questions of other conversations that got a sure hit, asked; of its own, the same) for one way of searching."""
    hit = total = own = mine = 0
    for c in convs:
        questions = strangers(convs)[c["conv_id"]]
        search, close = searcher(v, root, c["conv_id"])
        try:
            for question in questions:
                total += 1
                search(question)
                hit += SURE[question]
            for qa in c["qas"]:
                if qa["gold"] and qa["category"] in (1, 2, 3, 4):
                    mine += 1
                    search(qa["question"])
                    own += SURE[qa["question"]]
        finally:
            close()
    return hit, total, own, mine


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def fmt(x: float | None, places: int = 3) -> str:
    return "-" if x is None else f"{x:.{places}f}"


def signed(x: float | None) -> str:
    return "-" if x is None else f"{x:+.3f}"


def main_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["cat"] != 5]


def summary(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    return {k: mean([r[k] for r in rows]) for k in ("r5", "r10", "ndcg", "tok5", "tok10", "ms")}


# ---------------------------------------------------------------- tables


def tables(results: dict[str, dict[str, list[dict[str, Any]]]], cats: dict[int, str]) -> str:
    """The tables: main per corpus, R@10 per category, the lead over BM25 per corpus and per conversation."""
    out = ["| corpus | method | n | R@5 | R@10 | NDCG@10 | tok@5 | tok@10 | ms/query | R@10 vs bm25 |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for corpus, methods in results.items():
        base = summary(main_rows(methods["bm25"]))["r10"]
        for name, rows in methods.items():
            for label, chosen in (("", main_rows(rows)), (" [cat5]", [r for r in rows if r["cat"] == 5])):
                if not chosen:
                    continue
                s = summary(chosen)
                lead = signed(s["r10"] - base) if not label and base is not None and s["r10"] is not None else ""
                out.append(f"| {corpus} | {name}{label} | {len(chosen)} | {fmt(s['r5'])} | {fmt(s['r10'])} | "
                           f"{fmt(s['ndcg'])} | {fmt(s['tok5'], 0)} | {fmt(s['tok10'], 0)} | {fmt(s['ms'], 2)} | "
                           f"{lead} |")
    out += ["", "R@10 by category", "", "| corpus | method | " + " | ".join(f"{c} {n}" for c, n in cats.items()) + " |",
            "|---|---|" + "---|" * len(cats)]
    for corpus, methods in results.items():
        for name, rows in methods.items():
            cells = []
            for c in cats:
                rs = [r["r10"] for r in rows if r["cat"] == c]
                cells.append(f"{fmt(mean(rs))} (n={len(rs)})" if rs else "-")
            out.append(f"| {corpus} | {name} | " + " | ".join(cells) + " |")
    leaders = [m for m in next(iter(results.values())) if m != "bm25" and ":" not in m and "+" not in m]
    out += ["", "Lead over bm25 per conversation (R@10, categories 1-4)", "",
            "| corpus | conversation | n | bm25 | " + " | ".join(f"{m} | lead" for m in leaders) + " |",
            "|---|---|---|---|" + "---|---|" * len(leaders)]
    trailing = {m: {} for m in leaders}  # type: dict[str, dict[str, int]]
    for corpus, methods in results.items():
        base_rows = main_rows(methods["bm25"])
        for conv in dict.fromkeys(r["conv"] for r in base_rows):
            b = mean([r["r10"] for r in base_rows if r["conv"] == conv]) or 0.0
            cells = []
            for m in leaders:
                got = mean([r["r10"] for r in main_rows(methods.get(m, [])) if r["conv"] == conv])
                cells.append(f"{fmt(got)} | {signed(None if got is None else got - b)}")
                if got is not None and got < b:
                    trailing[m][corpus] = trailing[m].get(corpus, 0) + 1
            n = sum(1 for r in base_rows if r["conv"] == conv)
            out.append(f"| {corpus} | {conv} | {n} | {fmt(b)} | " + " | ".join(cells) + " |")
    for m in leaders:
        counts = ", ".join(f"{corpus} {trailing[m].get(corpus, 0)} of {len({r['conv'] for r in results[corpus]['bm25']})}"
                           for corpus in results)
        out.append(f"\n{m} trails bm25 on: {counts} conversations")
    return "\n".join(out)


def reference(v: Variant) -> str:
    """The row a variant is compared with: its mode's full ranking, with the bar or without as it has."""
    return v.label.split(": ", 1)[0].split(" + ", 1)[0]


def ablation_table(results: dict[str, dict[str, list[dict[str, Any]]]], variants: list[Variant],
                   head: str = "signal off") -> str:
    """Each variant against the full ranking it belongs to (R@10 and its change, per corpus)."""
    corpora = list(results)
    out = [f"| {head} | " + " | ".join(f"{c} R@10 | {c} change" for c in corpora) + " | verdict |",
           "|---|" + "---|---|" * len(corpora) + "---|"]
    for v in variants:
        full = reference(v)
        cells, changes = [], []
        for c in corpora:
            got = summary(main_rows(results[c][v.label]))["r10"] or 0.0
            ref = summary(main_rows(results[c][full]))["r10"] or 0.0
            cells.append(f"{fmt(got)} | {signed(got - ref)}")
            changes.append(got - ref)
        # A signal helps a corpus when turning it off costs R@10 there (more than noise: 0.005); a route when adding it
        # gains.
        sign = -1 if head == "signal off" else 1
        helps = [sign * d > 0.005 for d in changes]
        hurts = [sign * d < -0.005 for d in changes]
        verdict = ("helps both" if all(helps) else "hurts both" if all(hurts) else "helps one, hurts the other"
                   if any(helps) and any(hurts) else "hurts one, neutral on the other" if any(hurts)
                   else "helps one, neutral on the other" if any(helps) else "neutral")
        what = v.label.split(": ", 1)[1] if ": " in v.label else v.label
        out.append(f"| {what} ({full}) | " + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realtalk", type=Path, required=True, help="a REALTALK checkout, its data/ folder or a mirror")
    ap.add_argument("--locomo", type=Path, default=LOCOMO_DEV, help="LoCoMo in its own shape (the dev split)")
    ap.add_argument("--protocol", type=Path, default=PROTOCOL, help="locomo_retrieval.py (its loader and metrics)")
    ap.add_argument("--work", type=Path, help="where the memories go (kept and reused; default: a temp folder)")
    ap.add_argument("--hybrid", action="store_true", help="also hybrid (memdir[semantic]; embeds every turn once)")
    ap.add_argument("--ablate", action="store_true", help="also every ranking signal turned off alone")
    ap.add_argument("--only", help="of the ablations, run only those whose label contains this text")
    ap.add_argument("--embedder", default="local", choices=("local", "multilingual"),
                        help="the model semantic and hybrid search use (as [semantic] embedder in memdir.toml)")
    ap.add_argument("--strangers", action="store_true",
                    help="also ask each conversation the others' questions (speakers renamed): how often it answers")
    a = ap.parse_args()
    use_embedder(a.embedder)
    proto = protocol(a.protocol)
    with tempfile.TemporaryDirectory(prefix="memdir-corpora-") as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        corpora = {"locomo": proto.load(str(a.locomo)), "realtalk": proto.load(str(convert(a.realtalk, work)))}
        variants = [Variant("bm25", "bm25"), Variant("lexical")]
        if a.hybrid:
            variants += [Variant("hybrid", "hybrid")]
        base = list(variants)  # what the others are compared with: always run
        if a.ablate:
            variants += ABLATIONS + (HYBRID_ABLATIONS if a.hybrid else [])
        if a.only:
            variants = [v for v in variants if v in base or a.only in v.label]
        results: dict[str, dict[str, list[dict[str, Any]]]] = {}
        strange: list[tuple[str, str, int, int, int, int]] = []
        for corpus, convs in corpora.items():
            took = ingest(work / corpus, convs, a.hybrid)
            print(f"{corpus}: {len(convs)} conversations, {sum(len(c['turns']) for c in convs)} turns, "
                  f"ingest {took:.1f}s", file=sys.stderr)
            results[corpus] = {v.label: run(proto, convs, v, work / corpus) for v in variants}
            if a.strangers:
                for v in [v for v in base if v.mode != "bm25"]:
                    strange.append((corpus, v.label, *answered(convs, v, work / corpus)))
    nq = {c: len(main_rows(rows["bm25"])) for c, rows in results.items()}
    print(f"LoCoMo protocol, unit=turn, k={K}; questions with evidence, categories 1-4: "
          + ", ".join(f"{c} {n}" for c, n in nq.items()) + "; tokens = chars/4\n")
    print(tables({c: {m: r for m, r in rows.items() if ": " not in m} for c, rows in results.items()}, proto.CATS))
    if strange:
        print("\nAnother conversation's questions, speakers renamed, asked of each conversation: share with a sure hit,"
              " beside its own questions' share\n")
        print("| corpus | method | strangers asked | sure | share | own asked | sure | share |\n"
              "|---|---|---|---|---|---|---|---|")
        for corpus, label, hit, total, own, mine in strange:
            print(f"| {corpus} | {label} | {total} | {hit} | {hit / total:.1%} | {mine} | {own} | {own / mine:.1%} |")
    if a.ablate:
        print("\nAblation: each signal off alone, R@10 (categories 1-4) against the full ranking it belongs to\n")
        print(ablation_table(results, [v for v in variants if v in ABLATIONS + HYBRID_ABLATIONS]))


if __name__ == "__main__":
    main()
