"""Hybrid search: lexical and semantic scores fused, plus cheap signals for conversational memory.

Both sides propose candidates (the lexical side its `depth` best files, the
semantic side its `semantic_depth`). Fusion is
weighted score fusion by default: BM25 divided by the query's best BM25, plus
`weight` times the cosine min-max scaled over the semantic candidates. The
reciprocal-rank alternative (`fusion = "rrf"`) is kept for comparison. On
the LoCoMo dev split (turn R@10, categories 1-4), fusing alone: weighted 0.674
(weight 0.4) against RRF 0.659 (k=10) and 0.622 (the usual k=60); with the
signals below: weighted 0.759, RRF at best 0.738. Beside the lexical side's
share of the query (`lexical.COVER_WEIGHT`, issue 30) a weight of 0.5 does
better on both corpora than 0.4 (LoCoMo 0.772 -> 0.786, REALTALK 0.599 -> 0.607).
Then (issue 30, item 2; the turns as said: 0.779 and 0.608) 200 semantic candidates
instead of 50 (the cosine scaled over a longer tail, so more turns worded unlike the
question come in: 0.785 and 0.615) and the people factor 0.8 instead of 0.6: 0.787 and
0.618, tok@10 447 and 412; 300 candidates: 0.787 and 0.623, tok@10 448 and 412. Learned by coordinate ascent on one corpus these transfer
to the other (on LoCoMo: 200, people 1.5, REALTALK 0.629; on REALTALK: weight 0.6,
200, people 2.0, LoCoMo 0.792), but a people factor over 0.8 ranks a turn of the named
person on another day above the day the question names (a test holds it), and over 1.0
takes LoCoMo's tok@10 over 450 and its adversarial questions (category 5, whose premise
names the wrong person) from 0.888 to 0.784 at 1.5; a weight of 0.55 earns 0.004 and
0.008 but loses two paraphrases of `bench/precision.py` (97.1% -> 94.3% in the top 5).
Measured and not kept: a share lent two turns away apart from one turn away, a
query moved towards the best files' vectors (pseudo-relevance feedback, 0.5 and 1.0),
and the multilingual model's cosine added to MiniLM's as a second representation
(0.3, 0.6, 1.0 times it: LoCoMo 0.785, 0.781, 0.776; REALTALK 0.619, 0.613, 0.612).

Then two signals, each a small rule any memory can use, each earning its
place on LoCoMo and REALTALK alike (`bench/corpora.py --ablate`: R@10 without
it -0.025 / -0.025 and -0.068 / -0.015):

- people: a file whose title (name) or tags name a person the query names
  (a capitalised word that is not a function word) scores `people` more;
- neighbours: a file next to a good one in the same numbered run of its
  folder (natural order of file names, so turn-2 comes before turn-10) gets
  `neighbours` times its score, up to `window` files away: evidence in a
  conversation sits in a run of turns, and a question's answer often follows
  the turn that matched. Topic files side by side in a folder lend nothing.

Every candidate of either side is ranked; a hit is sure (`confidence`) with the
lexical side's evidence (`evidence.COVER` of the query's weight) or a cosine at
the model's floor (`calibration`, stored with the vectors) for a turn of a
conversation (a file of a numbered run), its topic bar for a topic file: above the
closest near miss of its pairs (a note on the question's subject that does not
answer it). On `bench/precision.py`'s topic memories the hits between the floor and
that were wrong more often than right (MiniLM: the no-answer false-hit rate 12.2% at
the floor; USE at 1.1 times it: 11.4%, the words alone 8.1%); on LoCoMo's turns the
floor is what keeps a question that shares its meaning but few words with its turn.
A third signal, files dated like a date in the question, went: it changed
R@10 by 0.000 on LoCoMo and +0.001 on REALTALK.

`auto` runs the lexical search first and adds the semantic side only when the
lexical result is weak (fewer than `k` hits, or a best BM25 below
`auto_min_score`); each such fallback is counted. On LoCoMo the gain of the
semantic side is spread evenly over strong and weak lexical results (no
threshold on the best score or on its ratio to the tenth picks out the
questions it helps), so the default threshold (15) falls back on most
conversational questions and skips only the clearly answered ones. Without the `semantic`
extra, `auto` is the lexical search and nothing warns.

Settings come from `[semantic]` in memdir.toml:

    [semantic]
    embedder = "local"                 # or "multilingual" (USE alone), or "openai": url, model, api_key_env
    private = ["people/"]              # never embedded, never sent to an endpoint
    weight = 0.5
    threads = 0                        # bulk embedding threads; 0: $MEMDIR_EMBED_THREADS or every CPU given
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import tomllib
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .. import model, paths
from ..errors import InvalidArgument
from ..model import Entry
from ..stores.locations import config_file
from . import VECTOR_SIDES, Searcher, calibration, confidence, embed, lexical, vector_location
from .confidence import HISTORY_SHARE, Signals, asks_about_past, is_history, without_past
from .evidence import COVER, sequence
from .lexical import Doc, Filter, SearchHit
from .text import SNIPPET_CHARS, STOPWORDS, Query, clip, naming, parse, people
from .vectors import VectorIndex
from .vectors import sync as sync_index

if TYPE_CHECKING:
    from ..stores.base import Store
    from .vectors import VectorIndex


class _Limits(Protocol):
    types: tuple[str, ...]


class Memdir(Protocol):
    """What this layer uses of a `Memdir` (the search package does not import the facade)."""

    @property
    def limits(self) -> _Limits: ...

    @property
    def store(self) -> Store: ...

    def entries(self, wanted: Iterable[str]) -> dict[str, Entry]: ...

MODES = ("lexical", "semantic", "hybrid", "auto")
EMBEDDERS = ("local", "multilingual", "openai")


@dataclass(frozen=True)
class Settings:
    """How hybrid search ranks; every field can be set under `[semantic]` in memdir.toml."""

    embedder: str = "local"  # local (English MiniLM) | multilingual (USE, 16 languages) | openai
    url: str = ""
    model: str = ""
    api_key_env: str = ""
    private: tuple[str, ...] = ()
    fusion: str = "weighted"  # weighted | rrf
    weight: float = 0.5  # the semantic share of the fused score
    rrf_k: int = 10
    depth: int = 50  # candidates taken from the lexical side
    semantic_depth: int = 300  # candidates taken from the semantic side (its cosines are scaled over them)
    people: float = 0.8
    neighbours: float = 0.1
    window: int = 2
    auto_min_score: float = 15.0  # auto: a best BM25 below this (or fewer than k hits) adds the semantic side
    floor: float = 0.0  # the cosine a semantic-only hit must reach; 0: the model's own (`calibration`)
    threads: int = 0  # the local model's threads in bulk; 0: $MEMDIR_EMBED_THREADS, else every CPU given
    batch: int = 16  # texts the local model embeds at once

    @classmethod
    def load(cls, cfg: Path | None) -> Settings:
        """The `[semantic]` table of the memdir.toml at `cfg` (`stores.locations.config_file`), or the defaults."""
        if cfg is None or not cfg.is_file():
            return cls()
        try:
            table = tomllib.loads(cfg.read_text(encoding="utf-8")).get("semantic", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise InvalidArgument(f"{cfg}: not valid TOML ({e}); fix or remove the file") from None
        return cls.of(table, str(cfg))

    @classmethod
    def of(cls, table: Mapping[str, Any], source: str = "settings") -> Settings:
        kinds = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in kinds:
                raise InvalidArgument(f"{source}: unknown [semantic] setting {key!r}; known: {', '.join(kinds)}")
            kind = str(kinds[key])
            try:
                if kind == "tuple[str, ...]":
                    items = [value] if isinstance(value, str) else list(value)
                    values[key] = tuple(paths.folder(str(v)) for v in items)
                elif kind in ("float", "int"):
                    if isinstance(value, bool):
                        raise ValueError(value)
                    values[key] = float(value) if kind == "float" else int(value)
                    if values[key] < 0:
                        raise ValueError(value)
                else:
                    values[key] = str(value)
            except (TypeError, ValueError):
                raise InvalidArgument(f"{source}: [semantic] {key} = {value!r} is not valid; use a {kind}") from None
        out = replace(cls(), **values)
        if out.embedder not in EMBEDDERS:
            raise InvalidArgument(f"{source}: [semantic] embedder = {out.embedder!r}; use one of {', '.join(EMBEDDERS)}")
        if out.fusion not in ("weighted", "rrf"):
            raise InvalidArgument(f"{source}: [semantic] fusion = {out.fusion!r}; use \"weighted\" or \"rrf\"")
        if out.batch < 1:
            raise InvalidArgument(f"{source}: [semantic] batch = {out.batch}; use a positive number of texts (16)")
        return out

    def embedder_instance(self) -> embed.Embedder:
        if self.embedder == "openai":
            if not self.url or not self.model:
                raise InvalidArgument("[semantic] embedder = \"openai\" needs url and model in memdir.toml")
            key = os.environ.get(self.api_key_env) if self.api_key_env else None
            return embed.OpenAIEmbedder(self.url, self.model, api_key=key)
        if self.embedder == "multilingual":
            return _multilingual()
        return _local(self.threads, self.batch)


_LOCAL: dict[tuple[int, int, int], embed.LocalEmbedder] = {}
_LOCAL_LOCK = threading.Lock()


_MULTILINGUAL: dict[int, embed.MultilingualEmbedder] = {}


def _multilingual() -> embed.MultilingualEmbedder:
    """One multilingual model per process (its weights are 30 MB), as `_local`."""
    with _LOCAL_LOCK:
        found = _MULTILINGUAL.get(os.getpid())
        if found is None:
            found = _MULTILINGUAL[os.getpid()] = embed.MultilingualEmbedder()
        return found


def _local(threads: int, batch: int) -> embed.LocalEmbedder:
    """One local model per process and setting: a server's tenants share its session (each is ~25 MB, and
    a server may hold a thousand memories open). Keyed by pid too, as a forked worker must load its own."""
    key = (os.getpid(), threads, batch)
    with _LOCAL_LOCK:
        found = _LOCAL.get(key)
        if found is None:
            found = _LOCAL[key] = embed.LocalEmbedder(threads=threads, batch=batch)
        return found


# ---------------------------------------------------------------- fusion


def weighted(lexical: Sequence[tuple[str, float]], semantic: Mapping[str, float], weight: float) -> dict[str, float]:
    """(1 - weight) x BM25 / best BM25 + weight x cosine min-max scaled over the semantic candidates."""
    out: dict[str, float] = {}
    if lexical:
        top = max(s for _, s in lexical) or 1.0
        for path, s in lexical:
            out[path] = (1 - weight) * max(s, 0.0) / top
    if semantic:
        hi, lo = max(semantic.values()), min(semantic.values())
        span = (hi - lo) or 1.0
        for path, s in semantic.items():
            out[path] = out.get(path, 0.0) + weight * (s - lo) / span
    return out


def reciprocal_rank(lexical: Sequence[str], semantic: Sequence[str], weight: float, k: int = 10) -> dict[str, float]:
    """Reciprocal-rank fusion: (1 - weight) / (k + rank) + weight / (k + rank), scaled to a best of 1."""
    out: dict[str, float] = {}
    for share, ranked in ((1 - weight, lexical), (weight, semantic)):
        for rank, path in enumerate(ranked, 1):
            out[path] = out.get(path, 0.0) + share / (k + rank)
    top = max(out.values(), default=0.0) or 1.0
    return {p: s / top for p, s in out.items()}


# ---------------------------------------------------------------- signals

def apply_signals(scores: dict[str, float], query: str, entries: Mapping[str, Entry], settings: Settings) -> set[str]:
    """Boost, in place, files whose title or tags name a person of the query; returns those boosted."""
    names = people(query) if settings.people else set()
    if not names:
        return set()
    pattern = naming(names)
    boosted = set()
    for path in scores:
        entry = entries.get(path)
        if entry is not None and pattern.search(f"{entry.name} {' '.join(entry.tags)}"):
            scores[path] *= 1.0 + settings.people
            boosted.add(path)
    return boosted


def without_people(query: str, titles: Sequence[str]) -> str:
    """The query less the people it names who title files: the people signal finds who, the model what.

    Measured on LoCoMo: the semantic side then looks for the content of the
    question rather than for turns that mention the name (R@10 0.759 -> 0.767
    in the fusion). A capitalised word that titles nothing ("LGBTQ") stays.
    """
    named = {n for n in people(query) if any(re.search(rf"\b{re.escape(n)}\b", t, re.IGNORECASE) for t in titles)}
    if not named:
        return query
    rest = re.sub(r"\b(?:" + "|".join(map(re.escape, sorted(named))) + r")(?:'s)?\b", " ", query, flags=re.IGNORECASE)
    rest = " ".join(rest.split())
    return rest if any(w.lower() not in STOPWORDS for w in re.findall(r"\w+", rest)) else query


def natural(name: str) -> tuple[Any, ...]:
    """Sort key that puts turn-2 before turn-10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def spread(scores: dict[str, float], order: Mapping[str, tuple[Sequence[str], int]], share: float, window: int,
           prefixes: Sequence[str] = ("",)) -> dict[str, float]:
    """Each file passes `share` of its score to the files up to `window` places away in its folder.

    Only files under `prefixes` receive any (a neighbour shares the folder of a
    readable file, so this only matters for a prefix naming part of a folder).
    """
    if not share or not window:
        return scores
    out = dict(scores)
    everything = "" in prefixes
    runs: dict[str, tuple[str, str, str] | None] = {}  # a path's run, worked out once per search

    def run_of(path: str) -> tuple[str, str, str] | None:
        if path not in runs:
            runs[path] = sequence(path)
        return runs[path]

    for path, score in scores.items():
        found = order.get(path)
        if found is None or score <= 0:
            continue
        run = run_of(path)
        if run is None:
            continue
        files, at = found
        give = share * score
        for near in files[max(0, at - window) : at + window + 1]:
            if near != path and run_of(near) == run and (everything or near.startswith(tuple(prefixes))):
                out[near] = out.get(near, 0.0) + give
    return out


# ---------------------------------------------------------------- per-memory state


@dataclass
class Stats:
    """Counters since the memory was opened in this process (`memdir stats` shows them)."""

    queries: dict[str, int]
    fallbacks: int = 0  # auto queries where the lexical result was weak and the semantic side was added

    def to_dict(self) -> dict[str, Any]:
        return {"queries": dict(self.queries), "auto_fallbacks": self.fallbacks}


class Semantic:
    """The vector index of one memory and the settings and counters that go with it."""

    def __init__(self, index: VectorIndex, settings: Settings) -> None:
        self.index = index
        self.settings = settings
        self.stats = Stats({m: 0 for m in MODES})
        self.lock = threading.Lock()
        self._order: tuple[int, dict[str, tuple[list[str], int]]] | None = None
        self._queries: dict[str, Any] = {}  # query text -> vector, oldest first
        self._foreign: tuple[int, bool] | None = None

    def query_vector(self, text: str) -> Any:
        """The embedding of a query; the last few are kept (a hook and a tool often ask the same)."""
        found = self._queries.pop(text, None)
        if found is None:
            found = self.index.embedder.embed([text])[0]
        self._queries[text] = found
        while len(self._queries) > 64:
            del self._queries[next(iter(self._queries))]
        return found

    def foreign(self) -> bool:
        """Whether at least `FOREIGN` of the memory's files are written in another script than Latin (a chunk
        of each of up to 200 files read, once per state of the index)."""
        key = self.index.seq
        if self._foreign is None or self._foreign[0] != key:
            texts = self.index.sample()
            other = sum(1 for t in texts if calibration.script(t) != "latin")
            self._foreign = (key, bool(texts) and other >= FOREIGN * len(texts))
        return self._foreign[1]

    def order(self) -> dict[str, tuple[list[str], int]]:
        """path -> (the files of its folder in natural order, its place there)."""
        key = id(self.index._load())
        if self._order is None or self._order[0] != key:
            folders: dict[str, list[str]] = {}
            for path in dict.fromkeys(self.index._load().paths):
                folders.setdefault(path.rpartition("/")[0], []).append(path)
            out: dict[str, tuple[list[str], int]] = {}
            for files in folders.values():
                files.sort(key=lambda p: natural(p.rpartition("/")[2]))
                for at, path in enumerate(files):
                    out[path] = (files, at)
            self._order = (key, out)
        return self._order[1]


_OPEN: weakref.WeakKeyDictionary[Any, Semantic] = weakref.WeakKeyDictionary()
_OTHER: weakref.WeakKeyDictionary[Any, Semantic] = weakref.WeakKeyDictionary()  # the multilingual side
_OPENING = threading.Lock()
FOREIGN = 0.3  # the share of a memory's files in another script than Latin that makes it a multilingual one
# reindex embeds an English memory with the multilingual model too up to this many files: a topic memory's few MB
# (its vectors take 4.5 KB a passage, three times MiniLM's: a 100,000-turn log would add 450 MB)
BOTH_UP_TO = 5000


def attach(md: Memdir, *, embedder: embed.Embedder | None = None, settings: Settings | None = None) -> Semantic:
    """The semantic side of `md` (shared by its scoped views), opened on first use.

    Pass `embedder` (e.g. `memdir.testing.FakeEmbedder()`) or `settings` to
    use other than what memdir.toml says; the next searches use them.
    """
    with _OPENING:
        found = _OPEN.get(md.store)
        if found is not None and (embedder is None or found.index.embedder is embedder) and settings is None:
            return found
        if found is not None:
            found.index.close()
        settings = settings or Settings.load(config_file(md.store))
        index = VectorIndex(embedder or settings.embedder_instance(), vector_location(md.store), private=settings.private)
        sem = _OPEN[md.store] = Semantic(index, settings)
        return sem


def multilingual_side(md: Memdir, sem: Semantic) -> Semantic:
    """The vectors of `md` by the multilingual model (`embed.MultilingualEmbedder`), opened on first use."""
    with _OPENING:
        found = _OTHER.get(md.store)
        if found is None:
            index = VectorIndex(_multilingual(), vector_location(md.store, "multilingual"), private=sem.settings.private)
            found = _OTHER[md.store] = Semantic(index, sem.settings)
        found.settings = sem.settings
        return found


def bilingual(sem: Semantic) -> bool:
    """Whether `sem` is the English local model with the multilingual one installed beside it (a configured model,
    or one passed in, is used as it is)."""
    return (sem.settings.embedder == "local" and sem.index.embedder.model == embed.LocalEmbedder.model
            and embed.multilingual_available())


def routed(md: Memdir, sem: Semantic, query: str, *, build: bool = True) -> Semantic:
    """The side that reads `query` best: the multilingual model's when the query, or the memory, is in another
    script than Latin and that model is installed; else the English one, as configured. Without `build`, the
    multilingual side only if its vectors exist already (an auto search never embeds a whole memory).

    The English MiniLM reads English conversations better (`bench/corpora.py`: hybrid R@10 0.787 and 0.623 on
    LoCoMo and REALTALK, against 0.747 and 0.597 with the multilingual model), and sees any Chinese, Japanese or
    Korean text as close to any other; the multilingual one finds a Japanese question's English answer
    (`bench/precision.py`: other-language questions in the top 5 72.7% -> 90.9%).
    """
    if not bilingual(sem) or (calibration.script(query) == "latin" and not sem.foreign()):
        return sem
    if not build and md.store not in _OTHER:
        where = vector_location(md.store, "multilingual")
        if where is None or not where.is_file():
            return sem
    other = multilingual_side(md, sem)
    sync(md, other)
    return other


def _indexed(md: Memdir) -> bool:
    """Whether `md` has a vector index already (built by a semantic or hybrid search, or reindex)."""
    if md.store in _OPEN:
        return _OPEN[md.store].index.seq > 0
    where = vector_location(md.store)
    return where is not None and where.is_file()


def ready() -> bool:
    """Whether semantic search can run here (the `semantic` or the `multilingual` extra is installed)."""
    return embed.available()


def close(md: Memdir) -> None:
    """Close the vector indexes of `md` (the next search opens them again)."""
    with _OPENING:
        sems = (_OPEN.pop(md.store, None), _OTHER.pop(md.store, None))
    for sem in sems:
        if sem is not None:
            sem.index.close()


def stats(md: Memdir) -> dict[str, Any]:
    """Counters of `md`'s semantic side: queries per mode, auto fallbacks, embedded and reused chunks.

    `memdir stats` can show them: `semantic.stats(md)` is cheap and never opens the index.
    """
    sem = _OPEN.get(md.store)
    if sem is None:
        return {"queries": {m: 0 for m in MODES}, "auto_fallbacks": 0, "embedded": 0, "reused": 0, "rebuilds": 0}
    return {**sem.stats.to_dict(), **sem.index.counters.to_dict()}


MODELS = {"local": embed.LocalEmbedder.model, "multilingual": embed.MultilingualEmbedder.model}
INSTALL = {"local": embed.EXTRA_HINT, "multilingual": embed.MULTILINGUAL_HINT}


def describe(store: Store) -> dict[str, Any]:
    """What semantic search runs on in the memory of `store` (`memdir stats`): the embedder memdir.toml names, its
    model, whether it is installed here, the model that reads other scripts (`routed`), and what each vectors file
    holds (read from the file, not opened as an index: a read changes nothing)."""
    settings = Settings.load(config_file(store))
    name = settings.embedder
    installed = {"local": embed.local_available, "multilingual": embed.multilingual_available}.get(name, lambda: True)()
    model = settings.model if name == "openai" else MODELS[name]
    routes = name == "local" and embed.multilingual_available()
    out: dict[str, Any] = {"embedder": name, "model": model, "installed": installed,
                           "install": "" if installed else INSTALL[name],
                           "other_scripts": MODELS["multilingual"] if routes else model, "vectors": []}
    for side in VECTOR_SIDES:
        where = vector_location(store, side)
        if where is not None and where.is_file():
            out["vectors"].append(_vectors_file(where, MODELS["multilingual"] if side else model))
    return out


def _vectors_file(where: Path, model: str) -> dict[str, Any]:
    """What one vectors file holds: its model and dimension, files and chunks, the bars measured (`calibration`)."""
    try:
        db = sqlite3.connect(f"{where.as_uri()}?mode=ro", uri=True)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            files, chunks = db.execute("SELECT count(DISTINCT path), count(*) FROM chunk").fetchone()
        finally:
            db.close()
    except sqlite3.Error as e:
        return {"file": str(where), "error": str(e)}
    bars = {key[5:]: dict(zip(("floor", "topic"), map(float, value.split()), strict=True))
            for key, value in meta.items() if key.startswith("bars_") and not key.endswith("_version")
            and meta.get(f"{key}_version") == calibration.VERSION}
    return {"file": str(where), "model": meta.get("model", ""), "dim": int(meta.get("dim") or 0), "files": files,
            "chunks": chunks, "current": meta.get("model") == model, "expects": model, "bars": bars}


def sync(md: Memdir, sem: Semantic, progress: Callable[[int, int], None] | None = None) -> int:
    """Catch the vectors up with the catalog (only changed chunk texts are embedded)."""
    def read(path: str) -> model.Memory | None:
        blob = md.store.get(path)
        if blob is None:
            return None
        try:
            return model.memory(path, blob.data.decode("utf-8"), blob.version, md.limits.types)
        except (UnicodeDecodeError, InvalidArgument):
            return None

    with sem.lock:
        return sync_index(sem.index, md.store.changes, read, progress)


def reindex(md: Memdir, *, embedder: embed.Embedder | None = None,
            progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Bring the vector index up to date now (rather than on the next search); returns the counters.

    `progress(done, total)` is called as files are read (for a progress bar).
    """
    sem = attach(md, embedder=embedder)
    sync(md, sem, progress)
    counters = sem.index.counters.to_dict()
    if bilingual(sem) and (sem.foreign() or len(sem.index.files()) <= BOTH_UP_TO):
        other = multilingual_side(md, sem)  # so that an auto search of a question in another script has them
        sync(md, other)
        counters = {k: v + counters.get(k, 0) for k, v in other.index.counters.to_dict().items()}
    return counters


# ---------------------------------------------------------------- the query


def _lexical(searcher: Searcher, query: Query, n: int, where: Filter, past: bool) -> list[lexical.Ranked]:
    """The lexical side: the `n` best candidates of the memory's full-text index, inside `where`."""
    with searcher.lock:
        return lexical.rank(searcher.index(), query, n, where, past=past, people=False)  # boosted after the fusion


def _docs(searcher: Searcher, paths_: Sequence[str], where: Filter) -> dict[str, Doc]:
    with searcher.lock:
        return searcher.index().docs(list(paths_), where) if paths_ else {}


def _keep(md: Memdir, sem: Semantic, where: Filter) -> Callable[[str], bool] | None:
    """The types/since part of `where` as a test on paths, applied before the semantic top-k."""
    if not where.types and where.since is None:
        return None
    entries = md.entries(sem.index.files())
    since = where.since or ""

    def keep(path: str) -> bool:
        e = entries.get(path)
        return (e is not None and (not where.types or e.type in where.types)
                and (e.updated or e.created or "") >= since)

    return keep


def search(md: Memdir, searcher: Searcher, query: str, *, k: int, mode: str, where: Filter,
           cover: float = COVER) -> list[SearchHit]:
    """Search `md` semantically, hybrid, or auto (lexical unless weak); see the module docstring.

    `Memdir.search(mode=...)` calls this with its lexical index (`searcher`) and
    `where`, the filter (scope, prefix, types, since) every index query carries.
    Every candidate of either side is ranked; a hit is sure when it holds `cover`
    of the query's weight or its cosine reaches the sure bar (`confidence`).
    """
    if mode not in ("semantic", "hybrid", "auto"):
        raise InvalidArgument(f"the semantic layer searches in modes semantic, hybrid and auto, not {mode!r}")
    parsed = parse(query)
    past = asks_about_past(query)
    asked = (parse(without_past(query)) or parsed) if past else parsed  # what the evidence weighs

    def words_only() -> list[SearchHit]:
        with searcher.lock:
            return lexical.hits(lexical.top(searcher.index(), parsed, k, where, past=past, asked=asked), parsed,
                                cover) if parsed else []

    if mode == "auto" and not _indexed(md):  # never embed a whole memory behind an auto search's back
        return words_only()
    try:
        sem = attach(md)
    except embed.EmbeddingError:  # the configured model is not installed: auto is the words, as without the extra
        if mode == "auto":
            return words_only()
        raise
    settings = sem.settings
    sem.stats.queries[mode] += 1
    depth = max(settings.depth, k)
    lexical_side: list[lexical.Ranked] = []
    if parsed and mode != "semantic":
        lexical_side = _lexical(searcher, parsed, depth, where, past)
    if mode == "auto":
        if len(lexical_side) >= k and lexical_side[0].score >= settings.auto_min_score:  # strong: the words suffice
            return words_only()
        sem.stats.fallbacks += 1
    if not where.prefixes or not query.strip():
        return []
    sync(md, sem)
    sem = routed(md, sem, query, build=mode != "auto")
    titles = [d.name for d in _docs(searcher, [r.path for r in lexical_side[:depth]], where).values()]
    ask = query if mode == "semantic" or not settings.people else without_people(query, titles)
    vector = sem.query_vector(ask)
    meaning = max(settings.semantic_depth, k)
    found = sem.index.scores(vector, where.prefixes, limit=meaning, keep=_keep(md, sem, where))
    ranked = sorted(found, key=lambda p: -found[p][0])[:meaning]
    signals = {r.path: r.signals for r in lexical_side}
    for path in ranked:
        signals.setdefault(path, Signals()).cosine = round(found[path][0], 4)
    if mode == "semantic":
        scores = {p: found[p][0] for p in ranked}
    elif settings.fusion == "rrf":
        scores = reciprocal_rank([r.path for r in lexical_side], ranked, settings.weight, settings.rrf_k)
    else:
        scores = weighted([(r.path, r.score) for r in lexical_side], {p: found[p][0] for p in ranked}, settings.weight)
    if mode != "semantic":
        for path, value in scores.items():
            signals[path].fused = value
        for path in apply_signals(scores, query, md.entries(scores), settings):
            signals[path].people = 1.0 + settings.people
        spreaded = spread(scores, sem.order(), settings.neighbours, settings.window, where.prefixes)
        for path, value in spreaded.items():
            if value > scores.get(path, 0.0):
                signals.setdefault(path, Signals()).neighbours = value - scores.get(path, 0.0)
        scores = spreaded
    if not past:
        for path in scores:
            if is_history(path):
                scores[path] *= HISTORY_SHARE
                signals[path].history = HISTORY_SHARE
    best = [p for p in sorted(scores, key=lambda p: (-scores[p], p)) if mode == "semantic" or scores[p] > 0]
    docs = _docs(searcher, best[: k * 2], where)  # the filter again: a neighbour of another type drops here
    best = [p for p in best if p in docs][:k]
    bars = sem.index.bars(calibration.script(query))  # a model may read Korean poorly: measured per script
    with searcher.lock:
        index = searcher.index()
        held = lexical.covers(index, asked, [docs[p] for p in best], where, answers=True)
        talk = lexical.turns(index, best, where) if best else set()
    matched = {r.path for r in lexical_side}
    out: list[SearchHit] = []
    spots = {h.path: h for h in lexical.hits([(docs[p], lexical.Ranked(p, scores[p], signals[p])) for p in best
                                               if p in matched], parsed, cover)} if parsed else {}
    judged = confidence.judge({p: held.get(p, 0.0) for p in best}, cover, {p: found[p][0] for p in best if p in found},
                              {p: settings.floor or (bars.floor if p in talk else bars.topic) for p in best})
    for path in best:  # a topic file shown on its meaning needs more than a turn: to be closer than a near miss
        sig = signals[path]
        sig.cover = held.get(path, 0.0)
        value, sure, sig.why = judged[path]
        hit = spots.get(path)
        if hit is None or (path in found and not hit.line):
            doc = docs[path]
            _, start, stop = found.get(path, (0.0, 0, 0))
            text = sem.index.text(path, start) if start else ""
            snippet = clip(text.split("\n", 1)[0], 0) if text else doc.description
            hit = SearchHit(path, 0.0, doc.name, doc.description or doc.body.strip()[:SNIPPET_CHARS], snippet, start,
                            stop, doc.type, doc.updated)
        out.append(replace(hit, score=round(scores[path], 6), confidence=value, sure=sure, signals=sig))
    return out
