"""Precision benchmark: does search, context and prompt recall return the right memories, and nothing else?

    python bench/precision.py                        # every table, memory sizes 5 to 5,000 (about a minute)
    python bench/precision.py --full                 # prompt recall at 100,000 files too (slow)
    python bench/precision.py --modes lexical,hybrid --sizes 5,500
    python bench/precision.py --json                 # the same figures as one JSON document
    python bench/precision.py --search-pad 500       # search and context on memories padded to ~500 files
    python bench/precision.py --sizes ''             # the labelled set's tables and search only (a few minutes)

The labelled data is `bench/data/precision/`: memories written for this
benchmark in the shapes people keep them (memdir's own topic files: a
developer, a support bot's notes per customer, a household, an imported vault
of 50 notes, a family's 60 files on six subjects; a Claude Code auto-memory
folder with `<type>_<topic>.md` names and `metadata:` blocks, in English, in
Korean and in Chinese; an Obsidian vault with wiki links and inline tags, mostly
without frontmatter; Japanese and Thai notes), each a folder of files, and
beside each a JSON file of labelled queries, each with its `kind` and `lang`:

- `answerable`: a query and the exact set of files that answer it; kinds:
  `words` (the memory's own words), `paraphrase` (other words for the same
  thing), `question` (a full question as a person asks it), `other-language`
  (asked in another language than the files are written in);
- `no_answer`: plausible queries the memory has nothing for: `unrelated`, or a
  `near-miss` (the memory holds the entity, not the asked fact: "android app
  release date" in a memory with a release checklist and no app);
- `small_talk`: prompts of a working session that memory should stay out of.

Each memory's files are put into a temporary folder as their writer left them
(Claude Code, Obsidian and memdir write their own files), and memdir adopts
them when it opens the folder. Tables:

0. The labelled set per kind, per language and per memory (issue 30): for
   answerable queries the share whose answering file is in the top 5, for
   no-answer queries the share with no *sure* hit (`sure`: the hit's own
   `sure`), per mode and for plain BM25 (SQLite FTS5
   `porter unicode61` over the same files, the query's words ORed, as
   `bench/corpora.py`'s baseline); and the UserPromptSubmit handler's
   injection: the answering file added (answerable) or anything added (no-answer). The same per half:
   a bar is tuned on the memories of `TUNING` and checked on the others, split by memory so that no
   memory's wording is on both sides.

1. Search, per mode (`lexical`; `auto` before any vector index exists; then,
   with the `memdir[semantic]` extra, the vectors are built and `semantic`,
   `hybrid` and `auto` run): precision@5 (relevant files in the top 5, over 5,
   and its ceiling, which is below 1 when a query has fewer than 5 relevant
   files), hit precision@5 (relevant share of what the top 5 actually holds),
   recall@5 and @10, and the false-hit rate: the share of no-answer queries
   that return a sure hit (target <= 5%, issue 22).
2. Context (`memdir.context(md, query)`, what `get_memory_context` returns): how many
   files the query layer (layer 3) adds for answerable and for no-answer
   queries, before and after the vector index exists.
3. Prompt recall (the Claude Code UserPromptSubmit handler) per memory size:
   each labelled memory is cut into pieces of that size or padded to it with
   distractor files (generated from templates and word lists with a fixed
   seed: meetings, bugs, recipes, trips, contacts, release notes, ..., sharing
   everyday vocabulary with the labelled files). Measured: the share of
   answerable prompts whose relevant file is added (target >= 90%) and of
   small talk that gets anything added (target <= 2%).

Not a test: run it, read it, paste it. `tests/test_bench_precision.py` checks
the scoring functions and that the query files are well formed.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

import memdir  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "precision"
MODES = ("lexical", "semantic", "hybrid", "auto")
SIZES = (5, 50, 500, 5000)
FULL_SIZE = 100_000
RECALL_TARGET = 0.90  # issue 22: answerable prompts that get their memory, at every size
SMALL_TALK_TARGET = 0.02  # issue 22: small talk that gets anything
FALSE_HIT_TARGET = 0.05  # issue 22: no-answer queries that return anything
SEED = 22


# ---------------------------------------------------------------- the memdir API this bench calls
# One small function per call, so that a change of the API (src/ is being restructured) is a one-line change here.


def open_memory(root: Path) -> memdir.Memdir:
    return memdir.open(root)


def search(md: memdir.Memdir, query: str, k: int, mode: str) -> list[str]:
    """The paths `md.search` returns, best first."""
    return [h.path for h in md.search(query, k=k, mode=mode)]


def sure(hit: Any) -> bool:
    """Whether search is sure of a hit (issue 30, item 1: search ranks every candidate and says which it is
    sure of). The one place that decides it for every table."""
    return bool(hit.sure)


def sure_hits(md: memdir.Memdir, query: str, k: int, mode: str) -> list[str]:
    """The paths of the hits `md.search` is sure of, best first (what a no-answer query must not get)."""
    return [h.path for h in md.search(query, k=k, mode=mode) if sure(h)]


def use_embedder(name: str) -> None:
    """Make every memory of this run embed with `name`, as `[semantic] embedder = name` in its memdir.toml would."""
    if name == "local":
        return
    import dataclasses

    from memdir.search import semantic

    load = semantic.Settings.load.__func__  # type: ignore[attr-defined]
    semantic.Settings.load = classmethod(lambda cls, cfg: dataclasses.replace(load(cls, cfg), embedder=name))  # type: ignore[method-assign,assignment]


def semantic_installed() -> bool:
    try:
        from memdir.search import semantic
    except ImportError:
        return False
    return bool(semantic.ready())


def build_vectors(md: memdir.Memdir) -> None:
    """Build the vector index now (README: a semantic or hybrid search does it too)."""
    from memdir.search import semantic

    semantic.reindex(md)


def context_files(md: memdir.Memdir, query: str) -> list[tuple[str, int]]:
    """(path, layer) of each file `memdir.context(md, query)` includes: the text `get_memory_context` returns."""
    return [(item.path, item.layer) for item in memdir.context(md, query).included]


def prompt_hook(md: memdir.Memdir, prompt: str) -> str | None:
    """The UserPromptSubmit handler of `memdir hook claude-code`, fed the JSON Claude Code sends."""
    from memdir.recall import recall

    payload = {"session_id": "bench-precision", "transcript_path": "/tmp/bench-precision.jsonl", "cwd": "/tmp",
               "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    out = recall.user_prompt_submit(md, payload)
    return None if out is None else str(out["hookSpecificOutput"]["additionalContext"])


_PATH_ATTR = re.compile(r'<memory-[0-9a-f]+ path="([^"]*)"')


def recalled_paths(text: str | None) -> list[str]:
    """The files a recalled-memory text holds (the `path` of each fenced memory), in order."""
    return [] if not text else [html.unescape(p) for p in _PATH_ATTR.findall(text)]


# ---------------------------------------------------------------- the labelled data


ANSWERABLE_KINDS = ("words", "paraphrase", "question", "other-language")
NO_ANSWER_KINDS = ("near-miss", "unrelated")
LANGUAGES = ("en", "zh", "ja", "ko", "th")


@dataclass(frozen=True)
class Answerable:
    query: str
    relevant: frozenset[str]
    kind: str
    lang: str = "en"


@dataclass(frozen=True)
class NoAnswer:
    query: str
    kind: str
    lang: str = "en"


@dataclass
class Labelled:
    name: str
    files: dict[str, str]  # path -> text (frontmatter included)
    answerable: list[Answerable]
    no_answer: list[NoAnswer]
    small_talk: list[str]


def names(data: Path = DATA) -> list[str]:
    return sorted(p.stem for p in data.glob("*.json"))


def load(name: str, data: Path = DATA) -> Labelled:
    spec = json.loads((data / f"{name}.json").read_text(encoding="utf-8"))
    folder = data / name
    files = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.md"))}
    return Labelled(
        name=name,
        files=files,
        answerable=[Answerable(q["query"], frozenset(q["relevant"]), q.get("kind", ""), q.get("lang", ""))
                    for q in spec["answerable"]],
        no_answer=[NoAnswer(q["query"], q.get("kind", ""), q.get("lang", "")) for q in spec["no_answer"]],
        small_talk=list(spec["small_talk"]),
    )


_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def problems(mem: Labelled) -> list[str]:
    """What is wrong with a labelled memory: relevant paths that do not exist, a query in two sets, an unknown
    kind or language, a frontmatter block that does not close, ..."""
    out = []
    for path, text in mem.files.items():
        if text.startswith("---\n") and not _FRONT.match(text):
            out.append(f"{mem.name}/{path}: its frontmatter block does not close")
        if not text.strip():
            out.append(f"{mem.name}/{path}: empty")
    asked: list[Answerable | NoAnswer] = [*mem.answerable, *mem.no_answer]
    for item in asked:
        kinds = ANSWERABLE_KINDS if isinstance(item, Answerable) else NO_ANSWER_KINDS
        if item.kind not in kinds:
            out.append(f"{mem.name}: {item.query!r} has kind {item.kind!r}, not one of {', '.join(kinds)}")
        if item.lang not in LANGUAGES:
            out.append(f"{mem.name}: {item.query!r} has language {item.lang!r}, not one of {', '.join(LANGUAGES)}")
    seen: dict[str, str] = {}
    for group, queries in (("answerable", [a.query for a in mem.answerable]),
                           ("no_answer", [n.query for n in mem.no_answer]), ("small_talk", mem.small_talk)):
        for q in queries:
            key = " ".join(q.casefold().split())
            if not key:
                out.append(f"{mem.name}: an empty query in {group}")
            elif key in seen:
                out.append(f"{mem.name}: {q!r} is in {seen[key]} and in {group}" if seen[key] != group
                           else f"{mem.name}: {q!r} twice in {group}")
            seen.setdefault(key, group)
    for a in mem.answerable:
        if not a.relevant:
            out.append(f"{mem.name}: {a.query!r} has no relevant file")
        for path in sorted(a.relevant - set(mem.files)):
            out.append(f"{mem.name}: {a.query!r} names {path}, which is not in the memory")
    return out


# ---------------------------------------------------------------- scoring


def precision_at(found: Sequence[str], relevant: Iterable[str], k: int = 5) -> float:
    """Relevant files among the first k, over k (the usual P@k: a query with one relevant file scores 0.2 at best)."""
    return len(set(found[:k]) & set(relevant)) / k


def precision_ceiling(relevant: Iterable[str], k: int = 5) -> float:
    """The best P@k a query can score: every relevant file first."""
    return min(len(set(relevant)), k) / k


def hit_precision(found: Sequence[str], relevant: Iterable[str], k: int = 5) -> float | None:
    """Relevant share of what the first k hits hold (None when there is no hit): what a reader wades through."""
    top = list(found[:k])
    return None if not top else len(set(top) & set(relevant)) / len(top)


def recall_at(found: Sequence[str], relevant: Iterable[str], k: int) -> float:
    wanted = set(relevant)
    return len(set(found[:k]) & wanted) / len(wanted)


def false_hit_rate(results: Iterable[Sequence[str]]) -> float:
    """Share of no-answer queries that returned any hit at all."""
    results = list(results)
    return sum(1 for r in results if r) / len(results) if results else 0.0


def mean(values: Iterable[float | None]) -> float:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else float("nan")


@dataclass
class ModeRun:
    """One mode's results on one memory: per answerable query (top 5, top 10), per no-answer query (its sure hits
    in the top 10)."""

    answerable: list[tuple[Answerable, list[str], list[str]]] = field(default_factory=list)
    no_answer: list[tuple[NoAnswer, list[str]]] = field(default_factory=list)


def score(run: ModeRun) -> dict[str, float]:
    a, n = run.answerable, run.no_answer
    return {
        "answerable": len(a),
        "no_answer": len(n),
        "p@5": mean(precision_at(top5, q.relevant) for q, top5, _ in a),
        "p@5 ceiling": mean(precision_ceiling(q.relevant) for q, _, _ in a),
        "hit precision@5": mean(hit_precision(top5, q.relevant) for q, top5, _ in a),
        "r@5": mean(recall_at(top5, q.relevant, 5) for q, top5, _ in a),
        "r@10": mean(recall_at(top10, q.relevant, 10) for q, _, top10 in a),
        "answerable without hits": sum(1 for _, _, top10 in a if not top10) / len(a) if a else 0.0,
        "false-hit rate": false_hit_rate(found for _, found in n),
        "mean hits, answerable": mean(len(top10) for _, _, top10 in a),
        "mean hits, no-answer": mean(len(found) for _, found in n),
    }


def merge(runs: Iterable[ModeRun]) -> ModeRun:
    out = ModeRun()
    for r in runs:
        out.answerable += r.answerable
        out.no_answer += r.no_answer
    return out


# ---------------------------------------------------------------- search and context on the labelled memories

BEFORE = "auto (no vectors yet)"


def build(mem: Labelled, root: Path, pad: int = 0) -> memdir.Memdir:
    """`mem`'s files and `pad` distractor files put into `root` as their writers left them, adopted when the
    memory opens (Claude Code, Obsidian and a person write their own files; memdir reads them)."""
    drop(root, distractors(pad))
    drop(root, mem.files.items())
    return open_memory(root)


def run_mode(md: memdir.Memdir, mem: Labelled, mode: str) -> ModeRun:
    run = ModeRun()
    for q in mem.answerable:
        run.answerable.append((q, search(md, q.query, 5, mode), search(md, q.query, 10, mode)))
    for n in mem.no_answer:
        run.no_answer.append((n, sure_hits(md, n.query, 10, mode)))
    return run


# ---------------------------------------------------------------- the baseline: plain BM25 over the same files

BM25 = "bm25"
# The baseline's own function words (fixed here, so that the baseline does not move when memdir's list does).
BM25_STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from about as into over after before is are was were be been
being do does did have has had i me my we our you your he she it its they them their this that these those what
which who whom when where why how can could should would will shall may might must not no so than then there
here all any some just also very too up down out off again once
""".split())
_BM25_WORD = re.compile(r"[^\W_]+")


def plain_bm25(files: dict[str, str]) -> Any:
    """A search over `files` (path -> text) as plain BM25 does it: SQLite FTS5 `porter unicode61` over each
    whole file, the query's words minus function words ORed (as `bench/corpora.py`'s baseline); every hit is sure."""
    import sqlite3

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE d USING fts5(path UNINDEXED, text, tokenize='porter unicode61')")
    db.executemany("INSERT INTO d VALUES (?, ?)", files.items())

    def find(query: str, k: int) -> list[str]:
        words = [w for w in dict.fromkeys(_BM25_WORD.findall(query.lower())) if w not in BM25_STOPWORDS]
        if not words:
            return []
        expr = " OR ".join('"' + w + '"' for w in words)
        return [str(r[0]) for r in db.execute("SELECT path FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT ?", (expr, k))]

    return find


def run_bm25(mem: Labelled, pad: int = 0) -> ModeRun:
    find = plain_bm25({**dict(distractors(pad)), **mem.files})
    run = ModeRun()
    for q in mem.answerable:
        run.answerable.append((q, find(q.query, 5), find(q.query, 10)))
    for n in mem.no_answer:
        run.no_answer.append((n, find(n.query, 10)))
    return run


@dataclass
class HookRun:
    """What the UserPromptSubmit handler added for each labelled query of one memory (its paths, in order)."""

    answerable: list[tuple[Answerable, list[str]]] = field(default_factory=list)
    no_answer: list[tuple[NoAnswer, list[str]]] = field(default_factory=list)


def run_hook(root: Path, mem: Labelled) -> HookRun:
    """Every labelled query as a prompt to the handler, on the memory opened anew (a hook is a new process)."""
    run = HookRun()
    with open_memory(root) as md:
        run.answerable = [(q, recalled_paths(prompt_hook(md, q.query))) for q in mem.answerable]
        run.no_answer = [(n, recalled_paths(prompt_hook(md, n.query))) for n in mem.no_answer]
    return run


@dataclass
class ContextRun:
    answerable: list[tuple[Answerable, list[str], set[str]]] = field(default_factory=list)  # layer-3 files, all files
    no_answer: list[tuple[NoAnswer, list[str]]] = field(default_factory=list)


def run_context(md: memdir.Memdir, mem: Labelled) -> ContextRun:
    run = ContextRun()
    for q in mem.answerable:
        got = context_files(md, q.query)
        run.answerable.append((q, [p for p, layer in got if layer == 3], {p for p, _ in got}))
    for n in mem.no_answer:
        run.no_answer.append((n, [p for p, layer in context_files(md, n.query) if layer == 3]))
    return run


def score_context(run: ContextRun) -> dict[str, float]:
    a, n = run.answerable, run.no_answer
    return {
        "answerable": len(a),
        "no_answer": len(n),
        "added, answerable": mean(len(added) for _, added, _ in a),
        "relevant added": mean(1.0 if set(added) & q.relevant else 0.0 for q, added, _ in a),
        "relevant in context": mean(1.0 if everything & q.relevant else 0.0 for q, _, everything in a),
        "added precision": mean(len(set(added) & q.relevant) / len(added) if added else None for q, added, _ in a),
        "added, no-answer": mean(len(added) for _, added in n),
        "false-hit rate": false_hit_rate(added for _, added in n),
    }


def search_tables(mems: list[Labelled], modes: Sequence[str], work: Path, semantic: bool, log: Any,
                  pad: int = 0) -> tuple[dict[str, dict[str, ModeRun]], dict[str, dict[str, ContextRun]],
                                         dict[str, HookRun], dict[str, float]]:
    """Every mode, plain BM25, the context and the prompt hook on every memory:
    {mode: {memory: run}}, {state: {memory: run}}, {memory: hook run}, seconds."""
    runs: dict[str, dict[str, ModeRun]] = {}
    contexts: dict[str, dict[str, ContextRun]] = {}
    hooks: dict[str, HookRun] = {}
    took: dict[str, float] = {}
    for mem in mems:
        started = time.perf_counter()
        runs.setdefault(BM25, {})[mem.name] = run_bm25(mem, pad)
        root = work / f"search-{mem.name}"
        with build(mem, root, pad) as md:
            if "lexical" in modes:
                runs.setdefault("lexical", {})[mem.name] = run_mode(md, mem, "lexical")
            if "auto" in modes:
                runs.setdefault(BEFORE, {})[mem.name] = run_mode(md, mem, "auto")
            contexts.setdefault("no vector index", {})[mem.name] = run_context(md, mem)
            if semantic and any(m in modes for m in ("semantic", "hybrid", "auto")):
                build_vectors(md)
                for mode in ("semantic", "hybrid", "auto"):
                    if mode in modes:
                        runs.setdefault(mode, {})[mem.name] = run_mode(md, mem, mode)
                contexts.setdefault("vector index built", {})[mem.name] = run_context(md, mem)
        hooks[mem.name] = run_hook(root, mem)
        took[mem.name] = time.perf_counter() - started
        print(f"  search, context and hook on {mem.name}: {took[mem.name]:.1f}s", file=log, flush=True)
    return runs, contexts, hooks, took


# ---------------------------------------------------------------- distractors

FIRST = ("Alba", "Bruno", "Chiara", "Desmond", "Elif", "Farid", "Greta", "Hugo", "Jamal", "Kirsten", "Luca", "Marta",
         "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Stefan", "Tanvi", "Umar", "Vera", "Wen", "Yusuf", "Zofia", "Ravi",
         "Ingrid", "Mateo", "Noor", "Oskar", "Petra")
LAST = ("Achebe", "Brandão", "Castillo", "Dahl", "Eriksen", "Fontaine", "Gallo", "Haddad", "Iqbal", "Jansen", "Kovač",
        "Lindqvist", "Moreau", "Nakamura", "Oduya", "Petrov", "Reyes", "Sato", "Thorne", "Varga")
PROJECTS = ("Falcon", "Juniper", "Quartz", "Meridian", "Sable", "Tundra", "Orchid", "Cobalt", "Nimbus", "Pioneer",
            "Willow", "Ember", "Atlas", "Beacon", "Cypress", "Lantern", "Magpie", "Solstice", "Kestrel", "Aurora")
COMPANIES = ("Greenfield Dairy", "Polar Optics", "Redwood Legal", "Summit Bikes", "Copperleaf Hotels", "Blue Anchor Pubs",
             "Marigold Florists", "Ironbridge Builders", "Silverline Taxis", "Oakmoor School", "Fernhill Vets",
             "Starling Print", "Hollow Creek Farm", "Cedar & Co Accountants", "Nova Dance Studio")
COMPONENTS = ("login page", "search bar", "export job", "sync worker", "image uploader", "notification service",
              "settings screen", "audit log", "checkout flow", "mobile app", "report builder", "API gateway",
              "scheduler", "map view", "chat widget", "invoice generator", "onboarding wizard", "file importer")
SYMPTOMS = ("times out", "shows a blank screen", "sends duplicate emails", "loses the selected filter",
            "rounds totals wrongly", "crashes on rotation", "ignores the language setting", "leaks memory",
            "returns stale data", "double-counts refunds", "hangs at 99%", "logs users out")
CONDITIONS = ("the list has more than 500 items", "the user switches accounts", "the network drops for a second",
              "two people edit at once", "the date is the last day of the month", "a file name has an accent",
              "the browser is Safari", "the tab stays open overnight", "the cache is cold", "daylight saving changes")
WORKAROUNDS = ("reload the page", "clear the local storage", "retry after a minute", "split the batch in two",
               "use the desktop app", "turn the feature flag off", "restart the worker", "re-upload the file")
VERBS = ("review", "rewrite", "test", "document", "benchmark", "simplify", "demo", "migrate", "profile", "redesign")
DECISIONS = ("move the weekly demo to Thursdays", "drop support for the old importer", "freeze the design until the survey ends",
             "hire a contractor for the accessibility audit", "split the backlog by customer segment",
             "keep the beta invite-only for another month", "pair on the hardest tickets", "archive the unused dashboards",
             "write a one-page brief before every new feature", "try async stand-ups for two weeks")
QUESTIONS = ("who owns the translations?", "do we need a second region?", "what does legal say about retention?",
             "is the vendor contract renewed?", "can the intern take the docs?", "should the API be versioned in the path?")
DISHES = ("mushroom risotto", "chickpea curry", "fish tacos", "ratatouille", "pumpkin soup", "pad thai", "gnocchi with sage",
          "vegetable paella", "falafel wraps", "apple crumble", "carrot cake", "tomato tart", "leek and potato pie",
          "spinach pancakes", "lemon drizzle cake", "black bean chilli")
INGREDIENTS = ("onions", "garlic", "butter", "rice", "chickpeas", "coconut milk", "spinach", "lemons", "flour", "eggs",
               "cheddar", "potatoes", "carrots", "fresh herbs", "tinned tomatoes", "brown sugar", "yoghurt", "peppers")
TIPS = ("Double the spices if the kids are not eating.", "Tastes better the next day.", "Freeze half for a busy week.",
        "Use a wide pan so it browns rather than steams.", "Rest it for ten minutes before serving.")
CITIES = ("Ghent", "Bergen", "Tallinn", "Bologna", "Krakow", "Seville", "Utrecht", "Graz", "Ljubljana", "Aarhus", "Nantes",
          "Bilbao", "Trieste", "Brno", "Cork", "Salzburg")
LANDMARKS = ("old town square", "cathedral", "river front", "central station", "botanical garden", "harbour market",
             "castle hill", "university quarter")
FOODS = ("fish soup", "dumplings", "pastries", "grilled sardines", "cheese plate", "waffles", "street crêpes", "stew")
TRANSPORT = ("trams run every ten minutes", "everything is walkable", "rent bikes at the station",
             "the bus pass covers the ferry", "taxis are cheap after midnight")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
          "December")
TITLES = ("The Glass Orchard", "Notes from a Lighthouse", "The Patient Engineer", "Rivers of Salt", "A Year of Small Fires",
          "The Cartography of Noise", "Quiet Machines", "The Last Ferry Home", "Thinking in Tides", "The Copper Garden")
THEMES = ("a memoir of rebuilding a family business", "essays on attention and craft", "a thriller set on a night train",
          "a history of weather forecasting", "a novel about two sisters running a bakery", "a guide to negotiating calmly")
IDEAS = ("slow down to go faster", "write the ending first", "small bets beat big plans", "measure before you argue",
         "every system drifts without upkeep", "kindness is a productivity tool")
ROLES = ("office manager", "head of operations", "finance lead", "marketing director", "owner", "IT contractor",
         "procurement officer", "store manager")
CHANNELS = ("email", "a phone call", "messages in the afternoon", "short video calls", "written agendas beforehand")
EVENTS = ("the trade fair", "a local meetup", "a training day", "the charity run", "a client dinner")
TOPICS = ("their renewal", "a new warehouse", "training for new staff", "switching suppliers", "opening hours in winter",
          "a loyalty scheme", "moving to card-only payments", "a customer survey")
FEATURES = ("bulk editing", "calendar export", "two languages on receipts", "custom fields", "a public status page",
            "scheduled exports", "printable invoices", "single sign-on", "offline mode", "tiered discounts")
TASKS = ("clean the dishwasher filter", "bleed a radiator", "set up a printer on the network", "descale the kettle",
         "change a bike inner tube", "reset the garage door opener", "back up the phone photos", "unblock a sink",
         "renew a library book online", "rotate API keys for the test account")
STEPS = ("switch it off at the wall first", "find the small valve or clip", "have a towel ready", "take a photo before",
         "loosen it a quarter turn", "wait five minutes", "check it again the next day", "write the date on the label")
ROOMS = ("bathroom", "spare room", "hallway", "shed", "loft", "garage", "balcony")
SUBJECTS = ("statistics", "woodworking", "film photography", "Portuguese", "bird identification", "sketching",
            "public speaking", "chess openings")
EXERCISES = ("squats", "push-ups", "rowing", "cycling", "lunges", "plank", "deadlifts", "swimming")
ITEMS = ("groceries", "train tickets", "phone bill", "gym membership", "books", "coffee out", "gifts", "electricity",
         "streaming", "haircut")
KINDS = ("project", "reference", "user", "feedback")


def _date(rng: random.Random) -> str:
    return f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def distractor(i: int, rng: random.Random) -> tuple[str, str, str, str]:
    """One made-up topic file: (folder, name, description, body), varied across fourteen everyday kinds of note."""
    c = rng.choice
    person, other, third = (f"{c(FIRST)} {c(LAST)}" for _ in range(3))
    project, comp, company, month = c(PROJECTS), c(COMPONENTS), c(COMPANIES), c(MONTHS)
    kind = i % 14
    if kind == 0:
        day = _date(rng)
        return ("meetings", f"{project} sync {day}", f"Notes from the {project} weekly sync",
                f"Attendees: {person}, {other}, {third}.\n- {person.split()[0]} will {c(VERBS)} the {comp} before "
                f"{c(('Monday', 'Wednesday', 'Friday'))}.\n- Decided to {c(DECISIONS)}.\n- Open question: {c(QUESTIONS)}\n")
    if kind == 1:
        return ("bugs", f"{comp.capitalize()} {c(SYMPTOMS)} ({project})", f"Bug in the {project} {comp}",
                f"In {project} {rng.randint(1, 9)}.{rng.randint(0, 20)}, the {comp} {c(SYMPTOMS)} when "
                f"{c(CONDITIONS)}.\nWorkaround: {c(WORKAROUNDS)}.\nOwner: {person}. Reported {_date(rng)}.\n")
    if kind == 2:
        dish = c(DISHES)
        ings = ", ".join(rng.sample(INGREDIENTS, 4))
        return ("recipes", dish.capitalize(), f"How I make {dish}",
                f"Serves {rng.randint(2, 6)}. Main ingredients: {ings}.\nCook for {rng.randint(2, 12) * 5} minutes at "
                f"{rng.choice((160, 180, 200, 220))} °C or on a medium hob.\n{c(TIPS)}\n")
    if kind == 3:
        city = c(CITIES)
        return ("travel", f"{city} ideas", f"Things to see and eat in {city}",
                f"Stay near the {c(LANDMARKS)}. Try the {c(FOODS)} at the market.\nGetting around: {c(TRANSPORT)}.\n"
                f"Best month to go: {month}. Budget about {rng.randint(4, 15) * 50} EUR for a long weekend.\n")
    if kind == 4:
        title = c(TITLES)
        return ("reading", f"Notes on {title}", f"Reading notes: {title}",
                f"{c(THEMES).capitalize()}. Rating {rng.randint(2, 5)}/5.\nKey idea: {c(IDEAS)}.\n"
                f"Recommended by {person.split()[0]}; finished in {month}.\n")
    if kind == 5:
        role = c(ROLES)
        return ("people", f"{person}", f"{role.capitalize()} at {company}",
                f"{person} is the {role} at {company}. Prefers {c(CHANNELS)}.\nMet at {c(EVENTS)} in {month}; "
                f"talked about {c(TOPICS)}.\n")
    if kind == 6:
        return ("calls", f"Call with {company}", f"Customer call notes: {company}",
                f"{person} from {company} asked about {c(FEATURES)}.\nThey currently use a spreadsheet for {c(TOPICS)}.\n"
                f"Follow up on {c(('Tuesday', 'Thursday'))} with pricing; next check-in in {month}.\n")
    if kind == 7:
        version = f"{rng.randint(1, 6)}.{rng.randint(0, 30)}"
        return ("releases", f"{project} {version} release notes", f"What changed in {project} {version}",
                f"- Added {c(FEATURES)}.\n- Fixed: the {comp} {c(SYMPTOMS)} when {c(CONDITIONS)}.\n"
                f"- Deprecated the old {c(COMPONENTS)}.\nShipped {_date(rng)} by {person}.\n")
    if kind == 8:
        task = c(TASKS)
        s1, s2, s3 = rng.sample(STEPS, 3)
        return ("howto", f"How to {task}", f"Steps to {task}", f"1. {s1.capitalize()}.\n2. {s2.capitalize()}.\n"
                f"3. {s3.capitalize()}.\nLast done {_date(rng)}.\n")
    if kind == 9:
        lines = "\n".join(f"- {item}: {rng.randint(5, 400)}.{rng.randint(0, 99):02d}" for item in rng.sample(ITEMS, 4))
        return ("finance", f"{month} {rng.randint(2023, 2025)} spending", f"What went out in {month}", lines + "\n")
    if kind == 10:
        ex = rng.sample(EXERCISES, 3)
        return ("training", f"Workout {_date(rng)}", "Training log entry",
                f"{ex[0].capitalize()} {rng.randint(2, 5)}x{rng.randint(5, 15)}, {ex[1]} {rng.randint(10, 40)} minutes, "
                f"{ex[2]} to finish.\nFelt {c(('strong', 'tired', 'fine', 'slow', 'great'))}.\n")
    if kind == 11:
        room = c(ROOMS)
        return ("home", f"{room.capitalize()} to-do", f"Jobs for the {room}",
                f"- Repaint the {room} ({c(('white', 'sage', 'grey', 'cream'))}).\n- Fix the {c(('shelf', 'door handle', 'light', 'window latch'))}.\n"
                f"- Ask {person.split()[0]} about a quote before {month}.\n")
    if kind == 12:
        subject = c(SUBJECTS)
        return ("learning", f"Learning {subject}", f"Progress notes on {subject}",
                f"Practising {subject} {rng.randint(2, 5)} times a week, {rng.randint(2, 6) * 10} minutes.\n"
                f"Current focus: {c(IDEAS)}. Teacher: {person}.\n")
    return ("ideas", f"Idea: {c(FEATURES)} for {project}", f"A product idea for {project}",
            f"What if {project} had {c(FEATURES)}? {person.split()[0]} thinks customers like {company} would pay for it.\n"
            f"Risk: the {comp} {c(SYMPTOMS)} under load.\n")


def distractors(n: int, seed: int = SEED) -> Iterator[tuple[str, str]]:
    """n distractor files, (path, text), the same for a given n and seed."""
    rng = random.Random(seed)
    for i in range(n):
        folder, name, description, body = distractor(i, rng)
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:48]
        text = (f"---\nname: {json.dumps(name, ensure_ascii=False)}\ndescription: {json.dumps(description, ensure_ascii=False)}"
                f"\ntype: {KINDS[i % len(KINDS)]}\n---\n# {name}\n\n{body}")
        yield f"notes/{folder}/{i // 1000:03d}/{slug}-{i:06d}.md", text


# ---------------------------------------------------------------- prompt recall per memory size


@dataclass
class Piece:
    """One memory of the size measured: some labelled files and padding, with the prompts asked of it."""

    files: dict[str, str]
    padding: int
    answerable: list[Answerable]
    no_answer: list[str]
    small_talk: list[str]


def pieces(mem: Labelled, size: int) -> list[Piece]:
    """Memories of `size` files made from `mem`: cut into pieces when it is larger, padded when smaller.

    An answerable prompt is asked of the piece holding most of its relevant
    files (and scored on those); small talk and no-answer prompts of every piece.
    """
    paths = sorted(mem.files)
    random.Random(f"{SEED}-{mem.name}-{size}").shuffle(paths)
    groups = [paths[i:i + size] for i in range(0, len(paths), size)]
    out = [Piece({p: mem.files[p] for p in g}, size - len(g), [], [n.query for n in mem.no_answer], list(mem.small_talk))
           for g in groups]
    for q in mem.answerable:
        best = max(out, key=lambda piece: len(q.relevant & set(piece.files)))
        best.answerable.append(Answerable(q.query, q.relevant & frozenset(best.files), q.kind))
    return out


@dataclass
class SizeRun:
    answerable: list[tuple[str, str, set[str], list[str]]] = field(default_factory=list)  # memory, query, relevant, added
    small_talk: list[tuple[str, str, list[str]]] = field(default_factory=list)
    no_answer: list[tuple[str, str, list[str]]] = field(default_factory=list)
    files: int = 0
    memories: int = 0
    build_s: float = 0.0
    ms: list[float] = field(default_factory=list)


def drop(root: Path, files: Iterable[tuple[str, str]]) -> None:
    """Files written straight into the folder, as a sync or an import leaves them; memdir adopts them on open."""
    for path, text in files:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def run_size(mems: list[Labelled], size: int, work: Path, log: Any) -> SizeRun:
    run = SizeRun()
    for mem in mems:
        for number, piece in enumerate(pieces(mem, size)):
            started = time.perf_counter()
            root = work / f"prompt-{size}-{mem.name}-{number}"
            drop(root, distractors(piece.padding))
            drop(root, piece.files.items())
            with open_memory(root) as md:  # adopts the files
                md.search("warm")  # what a memory in use has: its index on disk
            run.build_s += time.perf_counter() - started
            with open_memory(root) as md:  # a hook opens the memory anew for every prompt
                def ask(prompt: str, md: memdir.Memdir = md) -> list[str]:
                    t = time.perf_counter()
                    got = recalled_paths(prompt_hook(md, prompt))
                    run.ms.append((time.perf_counter() - t) * 1000)
                    return got

                for q in piece.answerable:
                    run.answerable.append((mem.name, q.query, set(q.relevant), ask(q.query)))
                run.small_talk += [(mem.name, p, ask(p)) for p in piece.small_talk]
                run.no_answer += [(mem.name, p, ask(p)) for p in piece.no_answer]
            run.files += len(piece.files) + piece.padding
            run.memories += 1
            remove(root)
    print(f"  prompt recall at {size:,} files: {run.memories} memories built in {run.build_s:.1f}s", file=log, flush=True)
    return run


def remove(root: Path) -> None:
    import shutil

    shutil.rmtree(root, ignore_errors=True)


def score_size(run: SizeRun) -> dict[str, float]:
    a, s, n = run.answerable, run.small_talk, run.no_answer
    return {
        "memories": run.memories,
        "answerable": len(a),
        "relevant added": mean(1.0 if set(added) & relevant else 0.0 for _, _, relevant, added in a),
        "anything added, answerable": mean(1.0 if added else 0.0 for *_, added in a),
        "mean files added, answerable": mean(len(added) for *_, added in a),
        "small talk": len(s),
        "small talk with anything added": mean(1.0 if added else 0.0 for *_, added in s),
        "no-answer": len(n),
        "no-answer with anything added": mean(1.0 if added else 0.0 for *_, added in n),
        "hook ms median": statistics.median(run.ms) if run.ms else float("nan"),
        "build s": run.build_s,
    }


# ---------------------------------------------------------------- printing


def pct(x: float) -> str:
    return "n/a" if x != x else f"{x:.1%}"


def num(x: float) -> str:
    return "n/a" if x != x else f"{x:.2f}"


def table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def mode_order(runs: dict[str, Any]) -> list[str]:
    order = [BM25, "lexical", BEFORE, "semantic", "hybrid", "auto"]
    return [m for m in order if m in runs]


def label(mode: str) -> str:
    return {"auto": "auto (vector index built)", BM25: "plain BM25 (FTS5)"}.get(mode, mode)


TOP5_TARGET, PARAPHRASE_TARGET, NO_SURE_HIT_TARGET = 0.90, 0.80, 0.95  # issue 30, item 1
INJECT_TARGET, INJECT_NO_ANSWER_TARGET = 0.90, 0.05

Query = Answerable | NoAnswer


# The memories a bar is tuned on; the others are the held-out half it is checked on (split by memory, so that no
# memory's wording is on both sides; each half has a Chinese-or-Japanese memory, a Korean-or-Thai one and an English
# Claude Code or Obsidian folder).
TUNING = ("chinese", "dev", "family", "obsidian", "support", "thai")
HALVES = ("tuning", "held-out")


def half(memory: str) -> str:
    return HALVES[0] if memory in TUNING else HALVES[1]


def groups(mems: list[Labelled]) -> list[tuple[str, Callable[[str, Query], bool]]]:
    """The rows of the labelled tables: all queries, then per kind, per language and per memory; then each half
    (`TUNING` and the rest), whole, per kind and per language."""
    def where(kind: str = "", lang: str = "", memory: str = "", side: str = "") -> Callable[[str, Query], bool]:
        return lambda m, q: ((not kind or q.kind == kind) and (not lang or q.lang == lang)
                             and (not memory or m == memory) and (not side or half(m) == side))

    return [("all", where()), *((f"kind {k}", where(kind=k)) for k in (*ANSWERABLE_KINDS, *NO_ANSWER_KINDS)),
            *((f"lang {lang}", where(lang=lang)) for lang in LANGUAGES),
            *((f"memory {mem.name}", where(memory=mem.name)) for mem in mems),
            *(row for side in HALVES for row in (
                (f"{side} half", where(side=side)),
                *((f"{side}: kind {k}", where(kind=k, side=side)) for k in (*ANSWERABLE_KINDS, *NO_ANSWER_KINDS)),
                *((f"{side}: lang {lang}", where(lang=lang, side=side)) for lang in LANGUAGES)))]


def labelled_scores(mems: list[Labelled], runs: dict[str, dict[str, ModeRun]],
                    hooks: dict[str, HookRun]) -> dict[str, list[dict[str, Any]]]:
    """Per group: answerable queries' top-5 rate per method and the hook's injection of the answer; no-answer
    queries' rate of no sure hit per method and the hook's injection of anything."""
    out: dict[str, list[dict[str, Any]]] = {"answerable": [], "no_answer": []}
    for name, keep in groups(mems):
        a = {mode: [(q, top5) for m, run in per.items() for q, top5, _ in run.answerable if keep(m, q)]
             for mode, per in runs.items()}
        n = {mode: [(q, found) for m, run in per.items() for q, found in run.no_answer if keep(m, q)]
             for mode, per in runs.items()}
        ha = [(q, got) for m, h in hooks.items() for q, got in h.answerable if keep(m, q)]
        hn = [(q, got) for m, h in hooks.items() for q, got in h.no_answer if keep(m, q)]
        count_a = len(next(iter(a.values()), []))
        count_n = len(next(iter(n.values()), []))
        if count_a:
            out["answerable"].append({
                "group": name, "n": count_a,
                **{mode: mean(1.0 if set(top5) & q.relevant else 0.0 for q, top5 in got) for mode, got in a.items()},
                "hook injects the answer": mean(1.0 if set(got) & q.relevant else 0.0 for q, got in ha),
                "hook files per prompt": mean(len(got) for _, got in ha)})
        if count_n:
            out["no_answer"].append({
                "group": name, "n": count_n,
                **{mode: mean(0.0 if found else 1.0 for _, found in got) for mode, got in n.items()},
                "hook injects anything": mean(1.0 if got else 0.0 for _, got in hn)})
    return out


def labelled_report(mems: list[Labelled], runs: dict[str, dict[str, ModeRun]], hooks: dict[str, HookRun]) -> str:
    scores = labelled_scores(mems, runs, hooks)
    modes = mode_order(runs)
    out = ["\n## The labelled set per kind, language and memory (issue 30)\n"]
    for title, side in (("", False), (f"the tuning half ({', '.join(TUNING)}) and the held-out half (the rest)", True)):
        mine = {g: [r for r in rows if r["group"].startswith(HALVES) == side] for g, rows in scores.items()}
        if side:
            out.append(f"\n### Per half: {title}\n")
        out.append(f"### Answerable: the answering file in the top 5 (target >= {TOP5_TARGET:.0%}, paraphrases >= "
                   f"{PARAPHRASE_TARGET:.0%}); the hook injects it (target >= {INJECT_TARGET:.0%})\n")
        out.append(table(["queries", "n", *map(label, modes), "hook injects the answer", "hook files per prompt"],
                         [[r["group"], str(r["n"]), *(pct(r[m]) for m in modes), pct(r["hook injects the answer"]),
                           f"{r['hook files per prompt']:.1f}"] for r in mine["answerable"]]))
        out.append(f"\n### No answer: no sure hit (target >= {NO_SURE_HIT_TARGET:.0%}); the hook injects anything "
                   f"(target <= {INJECT_NO_ANSWER_TARGET:.0%})\n")
        out.append(table(["queries", "n", *map(label, modes), "hook injects anything"],
                         [[r["group"], str(r["n"]), *(pct(r[m]) for m in modes), pct(r["hook injects anything"])]
                          for r in mine["no_answer"]]))
    out.append("\nA hit is sure as `sure()` at the top of this script says (the hit's own `sure`). Plain BM25 "
               "answers whatever shares a word with the query: all its hits count as sure.")
    return "\n".join(out)


def labelled_queries(runs: dict[str, dict[str, ModeRun]], hooks: dict[str, HookRun]) -> list[dict[str, Any]]:
    """Every labelled query with what each method returned (top 5; sure hits for no-answer) and what the hook added."""
    out = []
    for name, hook in hooks.items():
        for i, (q, injected) in enumerate(hook.answerable):
            out.append({"memory": name, "query": q.query, "kind": q.kind, "lang": q.lang, "relevant": sorted(q.relevant),
                        "found": {m: per[name].answerable[i][1] for m, per in runs.items() if name in per},
                        "hook": injected})
        for i, (n, injected) in enumerate(hook.no_answer):
            out.append({"memory": name, "query": n.query, "kind": n.kind, "lang": n.lang, "relevant": [],
                        "found": {m: per[name].no_answer[i][1] for m, per in runs.items() if name in per},
                        "hook": injected})
    return out


def report(mems: list[Labelled], runs: dict[str, dict[str, ModeRun]], contexts: dict[str, dict[str, ContextRun]],
           sizes: dict[int, SizeRun], semantic: bool, pad: int = 0, hooks: dict[str, HookRun] | None = None) -> str:
    out: list[str] = []
    n_a = sum(len(m.answerable) for m in mems)
    n_n = sum(len(m.no_answer) for m in mems)
    n_s = sum(len(m.small_talk) for m in mems)
    out.append(f"memdir {memdir.__version__} precision benchmark, Python {sys.version.split()[0]}, {os.cpu_count()} cores; "
               f"{len(mems)} labelled memories ({', '.join(f'{m.name} {len(m.files)} files' for m in mems)}), "
               f"{n_a} answerable, {n_n} no-answer and {n_s} small-talk queries")
    if not semantic:
        out.append("\nThe semantic extra is not installed: semantic and hybrid are skipped, auto is lexical.")
    if runs and hooks:
        out.append(labelled_report(mems, runs, hooks))
    if runs:
        padded = f", each padded with {pad:,} distractor files" if pad else ""
        out.append(f"\n## Search, per mode (all memories{padded}; k=5 for P@5 and R@5, k=10 for the rest)\n")
        rows = []
        for mode in mode_order(runs):
            s = score(merge(runs[mode].values()))
            rows.append([label(mode), num(s["p@5"]), num(s["p@5 ceiling"]), num(s["hit precision@5"]), num(s["r@5"]),
                         num(s["r@10"]), pct(s["answerable without hits"]),
                         f"{pct(s['false-hit rate'])} (target <= {FALSE_HIT_TARGET:.0%})",
                         f"{s['mean hits, answerable']:.1f} / {s['mean hits, no-answer']:.1f}"])
        out.append(table(["mode", "P@5", "P@5 ceiling", "hit precision@5", "R@5", "R@10", "answerable, no hit",
                          "no-answer false-hit rate", "mean hits (answerable / no-answer)"], rows))
        out.append("\nP@5: relevant files in the top 5, over 5; its ceiling is below 1 because most queries have one "
                   "relevant file. Hit precision@5: relevant share of the hits actually returned (top 5).")
        out.append("\n### Per memory: P@5 / hit precision@5 / R@10 / false-hit rate\n")
        rows = []
        for mem in mems:
            cells = [mem.name]
            for mode in mode_order(runs):
                s = score(runs[mode][mem.name])
                cells.append(f"{s['p@5']:.2f} / {num(s['hit precision@5'])} / {s['r@10']:.2f} / {pct(s['false-hit rate'])}")
            rows.append(cells)
        out.append(table(["memory", *map(label, mode_order(runs))], rows))
        out.append("\n### Per query kind: R@10 (answerable), false-hit rate (no-answer)\n")
        kinds = sorted({q.kind for m in mems for q in m.answerable})
        nkinds = sorted({q.kind for m in mems for q in m.no_answer})
        rows = []
        for mode in mode_order(runs):
            merged = merge(runs[mode].values())
            cells = [label(mode)]
            for kind in kinds:
                cells.append(num(mean(recall_at(t10, q.relevant, 10) for q, _, t10 in merged.answerable if q.kind == kind)))
            for kind in nkinds:
                cells.append(pct(false_hit_rate(found for q, found in merged.no_answer if q.kind == kind)))
            rows.append(cells)
        counts_a = {k: sum(1 for m in mems for q in m.answerable if q.kind == k) for k in kinds}
        counts_n = {k: sum(1 for m in mems for q in m.no_answer if q.kind == k) for k in nkinds}
        out.append(table(["mode", *(f"R@10 {k} ({counts_a[k]})" for k in kinds),
                          *(f"false hits, {k} ({counts_n[k]})" for k in nkinds)], rows))
        if "lexical" in runs:
            out.append("\n### No-answer queries that return hits (lexical): query -> top hits\n")
            rows = []
            for mem in mems:
                for q, found in runs["lexical"][mem.name].no_answer:
                    if found:
                        rows.append([mem.name, q.kind, q.query, ", ".join(found[:3]) + (f" (+{len(found) - 3})" if len(found) > 3 else "")])
            out.append(table(["memory", "kind", "query", "hits"], rows) if rows else "(none)")
    if contexts:
        out.append("\n## Context with a query (md.context, as get_memory_context): files the query layer adds\n")
        rows = []
        for state, per in contexts.items():
            s = score_context(ContextRun([x for r in per.values() for x in r.answerable],
                                         [x for r in per.values() for x in r.no_answer]))
            rows.append([state, f"{s['added, answerable']:.1f}", pct(s["relevant added"]), pct(s["relevant in context"]),
                         num(s["added precision"]), f"{s['added, no-answer']:.1f}",
                         f"{pct(s['false-hit rate'])} (target <= {FALSE_HIT_TARGET:.0%})"])
        out.append(table(["state", "files added (answerable)", "relevant added", "relevant in context (any layer)",
                          "precision of added", "files added (no-answer)", "no-answer false-hit rate"], rows))
        out.append("\nLayers 1 and 2 (pinned, feedback, the index, user memories) are there for every query; "
                   "the query layer is layer 3.")
    if sizes:
        out.append("\n## Prompt recall (UserPromptSubmit handler) per memory size\n")
        rows = []
        for size, run in sizes.items():
            s = score_size(run)
            rows.append([f"{size:,}", str(s["memories"]), str(s["answerable"]),
                         f"{pct(s['relevant added'])} (>= {RECALL_TARGET:.0%})",
                         f"{pct(s['small talk with anything added'])} (<= {SMALL_TALK_TARGET:.0%})",
                         pct(s["anything added, answerable"]), f"{s['mean files added, answerable']:.1f}",
                         pct(s["no-answer with anything added"]), f"{s['hook ms median']:.1f}"])
        out.append(table(["files", "memories", "answerable prompts", "relevant file added (target)",
                          "small talk with anything added (target)", "answerable with anything added",
                          "files added per answerable prompt", "no-answer prompts with anything added",
                          "handler ms (median)"], rows))
        out.append("\nA memory smaller than a labelled one is a piece of it; a larger one is padded with distractor files. "
                   "No-answer prompts may legitimately match a distractor at the padded sizes.")
        out.append("\n### Per memory: relevant file added / small talk with anything added\n")
        rows = []
        for mem in mems:
            cells = [mem.name]
            for run in sizes.values():
                got = [1.0 if set(added) & rel else 0.0 for m, _, rel, added in run.answerable if m == mem.name]
                talk = [1.0 if added else 0.0 for m, _, added in run.small_talk if m == mem.name]
                cells.append(f"{pct(mean(got))} / {pct(mean(talk))}")
            rows.append(cells)
        out.append(table(["memory", *(f"{size:,} files" for size in sizes)], rows))
        out.append("\n### Answerable prompts whose relevant file was not added, per size\n")
        rows = []
        for size, run in sizes.items():
            missed = [f"{m}: {q!r}" + (f" (got {', '.join(added[:2])})" if added else "")
                      for m, q, rel, added in run.answerable if not set(added) & rel]
            rows.append([f"{size:,}", str(len(missed)), "; ".join(missed[:12]) + (" ..." if len(missed) > 12 else "")])
        out.append(table(["files", "missed", "prompts"], rows))
        rows = [[f"{size:,}", f"{m}: {p!r}", ", ".join(added[:3]) + (f" (+{len(added) - 3})" if len(added) > 3 else "")]
                for size, run in sizes.items() for m, p, added in run.small_talk if added]
        if rows:
            out.append("\n### Small talk that got memory added\n")
            out.append(table(["files", "prompt", "added"], rows))
    return "\n".join(out)


def as_json(mems: list[Labelled], runs: dict[str, dict[str, ModeRun]], contexts: dict[str, dict[str, ContextRun]],
            sizes: dict[int, SizeRun], semantic: bool, took: dict[str, float], pad: int = 0,
            hooks: dict[str, HookRun] | None = None) -> dict[str, Any]:
    return {
        "labelled": {**labelled_scores(mems, runs, hooks), "queries": labelled_queries(runs, hooks)} if hooks else {},
        "memdir": memdir.__version__,
        "semantic": semantic,
        "search_pad": pad,
        "memories": {m.name: {"files": len(m.files), "answerable": len(m.answerable), "no_answer": len(m.no_answer),
                              "small_talk": len(m.small_talk)} for m in mems},
        "targets": {"false_hit_rate": FALSE_HIT_TARGET, "prompt_recall": RECALL_TARGET, "small_talk": SMALL_TALK_TARGET},
        "search": {label(mode): {"all": score(merge(runs[mode].values())),
                                 **{name: score(run) for name, run in runs[mode].items()},
                                 "no_answer_hits": [{"memory": name, "query": q.query, "kind": q.kind, "hits": found}
                                                    for name, run in runs[mode].items() for q, found in run.no_answer if found]}
                   for mode in mode_order(runs)},
        "context": {state: score_context(ContextRun([x for r in per.values() for x in r.answerable],
                                                    [x for r in per.values() for x in r.no_answer]))
                    for state, per in contexts.items()},
        "prompt_recall": {str(size): {**score_size(run),
                                      "missed": [{"memory": m, "query": q, "added": added}
                                                 for m, q, rel, added in run.answerable if not set(added) & rel],
                                      "small_talk_added": [{"memory": m, "prompt": p, "added": added}
                                                           for m, p, added in run.small_talk if added]}
                          for size, run in sizes.items()},
        "seconds": took,
    }


def plain(value: Any) -> Any:
    """`value` with NaN (a mean over nothing) as null, so that any JSON parser reads it."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="comma-separated memory sizes for prompt recall ('' to skip)")
    parser.add_argument("--full", action="store_true", help=f"also prompt recall at {FULL_SIZE:,} files (slow)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated search modes ('' to skip search)")
    parser.add_argument("--search-pad", type=int, default=0, metavar="N",
                        help="pad each labelled memory with N distractor files for the search and context tables")
    parser.add_argument("--memories", default="", help="comma-separated labelled memories (default: all)")
    parser.add_argument("--embedder", default="local", choices=("local", "multilingual"),
                        help="the model semantic and hybrid search use (as [semantic] embedder in memdir.toml)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary folder)")
    args = parser.parse_args()
    use_embedder(args.embedder)
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes {', '.join(sorted(unknown))}; pick from {', '.join(MODES)}")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.full and FULL_SIZE not in sizes:
        sizes.append(FULL_SIZE)
    mems = [load(n) for n in (args.memories.split(",") if args.memories else names())]
    bad = [p for m in mems for p in problems(m)]
    if bad:
        raise SystemExit("the labelled data is not well formed:\n  " + "\n  ".join(bad))
    semantic = semantic_installed()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        work = Path(tmp)
        os.environ.setdefault("MEMDIR_CACHE", str(work / "cache"))
        runs, contexts, hooks, took = (search_tables(mems, modes, work, semantic, sys.stderr, args.search_pad) if modes
                                       else ({}, {}, {}, {}))
        size_runs = {}
        for size in sizes:
            t = time.perf_counter()
            size_runs[size] = run_size(mems, size, work, sys.stderr)
            took[f"prompt recall {size}"] = time.perf_counter() - t
    took["total"] = time.perf_counter() - started
    if args.json:
        doc = plain(as_json(mems, runs, contexts, size_runs, semantic, took, args.search_pad, hooks))
        print(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(report(mems, runs, contexts, size_runs, semantic, args.search_pad, hooks))
        print(f"\n(total {took['total']:.0f}s)")


if __name__ == "__main__":
    main()
