"""The lexical index: what it holds, how it is kept current, how its candidates are ranked.

Each backend has a persistent full-text index beside its data (`FtsIndex`:
SQLite FTS5 in `.memdir/memdir.db`, in the SQLite database, or in a local
cache folder for S3; `PgIndex`: PostgreSQL full-text search). An index holds
one `Doc` per topic file and the catalog seq it reflects: it is trusted when
that seq is the catalog's, caught up from `Store.changes(seq)` when behind
(only files whose version changed are read), and rebuilt when ahead (the
store was replaced under it). Writes keep it current in the write path.

Ranking orders every candidate, holding none back (how sure each hit is, is
`confidence`'s): BM25 over name, description (only a written one), tags and
body, weighted 3, 2, 2, 1, on the index's top candidates; a second query for the
words the best of them share (`feedback`); the share of the query's weight each
of the best 50 holds (`evidence`), at `COVER_WEIGHT` of the best BM25, since BM25
rewards a short text that repeats one word of the question over one that holds
all of it; then files in a sequence (same folder, names that differ only in
their last number, like turns, session captures or days) lend `NEIGHBOUR_SHARE`
of their score to their neighbours, which are added when they did not match
(what a person said next to a match is often the answer to a question about
it); a file whose title or tags name a person of the query (a capitalised word,
`text.people`) scores `PEOPLE` more, as hybrid's fusion does (`semantic`); records
of past work rank at half their score (`confidence.HISTORY`).

Measured with `bench/corpora.py` (turn R@10, categories 1-4; BM25 0.604 and
0.514), the ranking without the old evidence bar was LoCoMo dev 0.705, REALTALK
0.536, below BM25 on two REALTALK chats; with the share of the query weighed at
1.0, neighbours at 0.4 (0.5 before) and the feedback query at 0.5 of the first
(0.3): 0.700 and 0.556, below BM25 on none. Weighed alone the share helps
REALTALK (+0.013) and is neutral on LoCoMo (-0.001), from 0.7 to 2.0 alike; a
second neighbour lending 0.1 to 0.25 helps LoCoMo (+0.016 to +0.031) and costs
REALTALK (-0.004 to -0.011) and its chat-1 falls below BM25: not kept.
"""

from __future__ import annotations

import builtins
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, Protocol

from .. import model
from ..model import Entry
from ..stores.base import Change, Record, Store
from . import confidence, evidence, feedback
from . import text as textmod
from .confidence import Signals
from .text import Query

WEIGHTS = (3.0, 2.0, 2.0, 1.0)  # name, description, tags, body
CANDIDATES = 200  # how many index matches the ranking looks at
NEIGHBOUR_SHARE = 0.4  # of a file's score lent to its neighbours in a sequence
SECOND_SHARE = 0.0  # of a file's score lent to the files two places away (measured, not kept: see the docstring)
SCAN = 50  # candidates whose share of the query is weighed (k when k is larger)
COVER_WEIGHT = 1.0  # a file holding all of the query's weight gains this share of the best BM25 (`evidence`)
PEOPLE = 0.5  # a file whose title or tags name a person of the query scores this much more (hybrid: after the fusion)
BATCH = 500


@dataclass(frozen=True)
class Doc:
    """One topic file as the index holds it."""

    path: str
    version: str
    name: str
    description: str  # the written description only ("" when derived from the body)
    tags: str
    type: str | None
    updated: str | None
    head: int  # lines before the body (the frontmatter block)
    body_at: int  # offset of the body in text
    text: str

    @property
    def body(self) -> str:
        return self.text[self.body_at :]


def doc_of(path: str, text: str, version: str, types: tuple[str, ...], entry: Entry | None = None) -> Doc:
    """The index's view of a file; with its catalog entry the frontmatter is not parsed again."""
    if entry is None:
        m = model.memory(path, text, version, types)
        written = m.meta.get("description")
        entry = model.entry_of(m)
        description = str(written) if written not in (None, "") else ""
        body = m.body
    else:
        try:
            _, body = model.split(text)
        except Exception:  # an unclosed block: the whole text is body, as when reading
            body = text
        # A description equal to the derived one repeats the body: indexing it would count it twice.
        description = "" if entry.description == model.derive_description(body) else entry.description
    body_at = len(text) - len(body)
    return Doc(path, version, entry.name, description, " ".join(entry.tags), entry.type,
               entry.updated or entry.created, text.count("\n", 0, body_at), body_at, text)


@dataclass(frozen=True)
class Filter:
    """What a principal may see and asked for: folder prefixes ("" = all), types, updated since."""

    prefixes: tuple[str, ...] = ("",)
    types: tuple[str, ...] = ()
    since: str | None = None

    @property
    def everything(self) -> bool:
        return self.prefixes == ("",) and not self.types and self.since is None


class LexicalIndex(Protocol):
    """A persistent full-text index of one tenant (`FtsIndex`, `PgIndex`)."""

    shared_transaction: bool  # written inside the store's own transaction (SQL stores)

    def seq(self) -> int:
        """The catalog seq this index reflects (0: empty or never built)."""
        ...

    def versions(self, paths: Sequence[str]) -> dict[str, str]: ...

    def apply(self, since: int, seq: int, removed: Iterable[str], docs: Iterable[Doc]) -> bool:
        """Atomically remove and (re)index files and move from `since` to `seq`; False if not at `since`."""
        ...

    def clear(self) -> None: ...

    def candidates(self, words: Sequence[str], n: int, where: Filter) -> builtins.list[tuple[str, float]]:
        """The `n` best (path, score) for any of `words` (higher is better), inside `where`."""
        ...

    def frequencies(self, words: Sequence[str], where: Filter) -> dict[str, int]:
        """How many files inside `where` match each word (its document frequency, for the word's weight)."""
        ...

    def fields(self, words: Sequence[str], paths: Sequence[str], where: Filter) -> dict[str, dict[str, float]]:
        """For `paths`, the score of each field alone (for `--explain`: field -> score)."""
        ...

    def containing(self, needles: Sequence[str], where: Filter) -> builtins.list[tuple[str, int]]:
        """(path, how many of `needles` its text contains) for texts with at least one, and the total count."""
        ...

    def count(self) -> int: ...

    def docs(self, paths: Sequence[str], where: Filter) -> dict[str, Doc]: ...

    def exists(self, paths: Sequence[str], where: Filter) -> set[str]: ...

    def texts(self, where: Filter, needles: Sequence[Sequence[str]], ignore_case: bool) -> Iterator[tuple[str, str]]:
        """(path, text) in path order; each group of `needles` must have one substring in the text."""
        ...

    def optimize(self) -> None:
        """Compact the index after many changes (queries get faster)."""
        ...

    def close(self) -> None: ...


# ---------------------------------------------------------------- upkeep


def catch_up(index: LexicalIndex, store: Store, target: int, types: tuple[str, ...],
             progress: Callable[[int, int], None] | None = None) -> int:
    """Bring `index` to catalog seq `target` (rebuild if it is ahead); returns files read."""
    since = index.seq()
    if since == target:
        return 0
    if since > target:
        latest, _ = store.changes(target)
        if latest >= since:
            return 0  # it has seen commits the caller's catalog has not caught up with yet
        index.clear()  # ahead of the store: the store was replaced under it
        since = 0
    seq, changes = store.changes(since)
    entries = dict(changes)
    paths = sorted(entries)
    read = 0
    for start in range(0, max(len(paths), 1), BATCH):
        batch = paths[start : start + BATCH]
        have = index.versions(batch)
        removed, docs = [], []
        for path in batch:
            entry = entries[path]
            if entry is None:
                removed.append(path)
                continue
            if have.get(path) == entry.version:
                continue
            blob = store.get(path)
            read += 1
            try:
                text = None if blob is None else blob.data.decode("utf-8")
            except UnicodeDecodeError:
                text = None  # not text: reconcile reports it; search skips it
            if text is None:
                removed.append(path)
            else:
                docs.append(doc_of(path, text, blob.version if blob else "", types))
        last = start + BATCH >= len(paths)
        if not index.apply(since, seq if last else since, removed, docs):
            return read  # another process moved it meanwhile: it is at least as current
        if progress is not None:
            progress(min(start + BATCH, len(paths)), len(paths))
    if read >= BATCH:
        index.optimize()
    return read


def commit_docs(changes: Sequence[Change], records: Sequence[Record],
                types: tuple[str, ...]) -> tuple[builtins.list[str], builtins.list[Doc]]:
    """What a commit removes from and adds to the index, from the changes themselves (no read)."""
    removed: builtins.list[str] = []
    docs: builtins.list[Doc] = []
    for change, rec in zip(changes, records, strict=True):
        if change.dest is not None or change.data is None:
            removed.append(change.path)
        if change.data is None:
            continue
        try:
            text = change.data.decode("utf-8")
        except UnicodeDecodeError:
            removed.append(change.target)
            continue
        docs.append(doc_of(change.target, text, rec.new_version or "", types, change.entry))
    return removed, docs


# ---------------------------------------------------------------- ranking


@dataclass(frozen=True)
class SearchHit:
    """One search result: a topic file, its relevance and the lines to read first.

    `score` is higher for better matches; it ranks the hits of one query and
    means nothing across queries. `confidence` (0 to 1) says how sure search
    is that the file answers the query, and `sure` whether that is enough to
    put it in front of a model unasked (`confidence`). `line` is the 1-based line of `snippet` in
    the file (frontmatter included) and `end_line` the end of its paragraph:
    `read_memory_file(path, offset=line, limit=end_line - line + 1)`.
    """

    path: str
    score: float
    name: str
    description: str
    snippet: str
    line: int
    end_line: int = 0
    type: str | None = None
    updated: str | None = None
    confidence: float = 0.0
    sure: bool = False
    signals: Signals | None = field(default=None, compare=False, repr=False)

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        """The hit as JSON; with `explain`, the signals that scored it."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "signals"}
        if explain and self.signals is not None:
            out["signals"] = self.signals.to_dict()
        return out


@dataclass(frozen=True)
class Explained:
    """A search with what scored each hit (`SearchHit.signals`) and the candidates ranked just below the top
    `k`, each with why it is not among them: what `memdir search --explain` shows."""

    query: str
    mode: str
    hits: builtins.list[SearchHit]
    left_out: builtins.list[SearchHit]

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "mode": self.mode, "hits": [h.to_dict(explain=True) for h in self.hits],
                "left_out": [h.to_dict(explain=True) for h in self.left_out]}


_SEQUENCE = re.compile(r"^(.*?)(\d+)(\D*)$")


@lru_cache(maxsize=1 << 16)
def neighbours(path: str, distance: int = 1) -> tuple[str, ...]:
    """The paths `distance` before and after `path` in its sequence (its last number minus and plus it)."""
    folder, _, name = path.rpartition("/")
    m = _SEQUENCE.match(name)
    if m is None:
        return ()
    head, digits, tail = m.groups()
    out = []
    for n in (int(digits) - distance, int(digits) + distance):
        if n < 0:
            continue
        for form in dict.fromkeys((str(n).zfill(len(digits)), str(n))):
            out.append(f"{folder}/{head}{form}{tail}" if folder else f"{head}{form}{tail}")
    return tuple(out)


@dataclass
class Ranked:
    """A candidate's place in a ranking: its score and what made it (`confidence.Signals`)."""

    path: str
    score: float
    signals: Signals


def rank(index: LexicalIndex, query: Query, k: int, where: Filter, *, expand: bool = False,
         past: bool = True, people: bool = True) -> builtins.list[Ranked]:
    """The top `k` candidates of a parsed query, best first: every file the index matches, none held back.

    `expand` adds the feedback query (`feedback`): the lexical mode's, not hybrid's lexical side, where the
    semantic side bridges the words already (there feedback cost REALTALK 0.007 of R@10 and gave LoCoMo nothing).
    `past`: the query asks about past work, so records of it are not ranked below topic files (`confidence`).
    `people`: a file whose title or tags name a person of the query scores `PEOPLE` more (hybrid boosts after
    its fusion instead: `semantic.apply_signals`)."""
    scores: dict[str, float] = {}
    if query.words:
        scores.update(index.candidates(query.words, max(CANDIDATES, k), where))
    if query.symbols:
        found = index.containing(query.symbols, where)
        if found:
            total = max(index.count(), 1)
            weight = math.log(1 + total / len(found))
            for path, n in found:
                scores[path] = scores.get(path, 0.0) + weight * n
    if not scores:
        return []
    signals = {p: Signals(bm25=s) for p, s in scores.items()}
    if expand and query.words:  # a second query from the best files' words
        for path, added in feedback.expand(index, query, scores, max(CANDIDATES, k), where).items():
            signals.setdefault(path, Signals()).feedback = added
    if COVER_WEIGHT and query:  # how much of the query a file holds, beside how often it says it
        strongest = max(scores.values())
        read = sorted(scores, key=lambda p: (-scores[p], p))[: max(SCAN, k)]  # further down: out of reach
        for path, held in covers(index, query, index.docs(read, where).values(), where).items():
            signals[path].cover = held
            scores[path] += COVER_WEIGHT * strongest * held
    shares: builtins.list[tuple[int, float]] = [(d, x) for d, x in ((1, NEIGHBOUR_SHARE), (2, SECOND_SHARE)) if x]
    near = {p: [(share, neighbours(p, d)) for d, share in shares] for p in scores}
    # A file that did not match gets at most a share of its neighbour's score: only neighbours of
    # files scoring above the k-th score / share can reach the top k, so only theirs are looked up.
    kth = sorted(scores.values(), reverse=True)[min(k, len(scores)) - 1] if len(scores) >= k else 0.0
    boost = 1.0 + PEOPLE if people and query.people else 1.0  # the most a file's score can still grow
    top_share = max((share for _, share in shares), default=0.0)
    lenders = [p for p, s in scores.items() if top_share * s * boost >= kth]
    missing = sorted({q for p in lenders for share, qs in near[p] for q in qs
                      if q not in scores and share * scores[p] * boost >= kth})
    known = index.exists(missing, where) if missing else set()
    lent: dict[str, tuple[float, str]] = {}
    for path in builtins.list(scores) + sorted(known):
        qs = near.get(path) or [(share, neighbours(path, d)) for d, share in shares]
        summed, lender, most = 0.0, "", 0.0
        for share, around in qs:
            got = max(((share * scores.get(q, 0.0), q) for q in around), default=(0.0, ""))
            summed += got[0]
            if got[0] > most:
                most, lender = got[0], got[1]
        if summed:
            lent[path] = (summed, lender)
    ranked: dict[str, float] = {}
    for path in builtins.list(scores) + sorted(known):
        given, lender = lent.get(path, (0.0, ""))
        ranked[path] = scores.get(path, 0.0) + given
        if given:
            signals.setdefault(path, Signals()).neighbours, signals[path].lender = given, lender
    if not past:
        for path in ranked:
            if confidence.is_history(path):
                ranked[path] *= confidence.HISTORY_SHARE
                signals[path].history = confidence.HISTORY_SHARE
    if boost > 1.0:  # only a file that the boost could lift into the top k is read
        kth = sorted(ranked.values(), reverse=True)[min(k, len(ranked)) - 1]
        pattern = textmod.naming(query.people)
        for doc in index.docs([p for p, s in ranked.items() if s * boost >= kth], where).values():
            if pattern.search(f"{doc.name} {doc.tags}"):
                ranked[doc.path] *= boost
                signals.setdefault(doc.path, Signals()).people = boost
    best = sorted(ranked.items(), key=lambda x: (-x[1], x[0]))[:k]
    return [Ranked(p, s, signals[p]) for p, s in best]


def covers(index: LexicalIndex, query: Query, docs: Iterable[Doc], where: Filter, *,
           answers: bool = False) -> dict[str, float]:
    """The share of the query's weight each of `docs` holds (`evidence`), by path; with `answers`, for
    confidence: a word asking for a value is held where a value of its kind is (`evidence.ANSWERS`)."""
    docs = builtins.list(docs)
    if not docs or not query:
        return {d.path: 0.0 for d in docs}
    files = max(index.count(), 1)
    df = index.frequencies(query.words, where) if query.words else {}
    symbol_df: dict[str, int] = {}
    if query.symbols:  # at most as many files hold each symbol as hold any of them
        symbol_df = dict.fromkeys(query.symbols, len(index.containing(query.symbols, where)))
    weights = evidence.weigh(query, files, df, symbol_df)
    return {d.path: weights.cover(evidence.searchable(f"{d.name}\n{textmod.name_words(d.path, d.name)}",
                                                      d.description, d.tags, d.body), answers=answers)
            for d in docs}


def turns(index: LexicalIndex, paths: Sequence[str], where: Filter) -> set[str]:
    """Those of `paths` that are turns of a numbered run: another file of the run is among them or in the index."""
    found = evidence.runs(paths)
    lone = {p: neighbours(p) for p in paths if p not in found}
    wanted = sorted({q for near in lone.values() for q in near})
    known = index.exists(wanted, where) if wanted else set()
    return found | {p for p, near in lone.items() if any(q in known for q in near)}


def top(index: LexicalIndex, query: Query, k: int, where: Filter, *, past: bool = True,
        expand: bool | None = None, asked: Query | None = None) -> builtins.list[tuple[Doc, Ranked]]:
    """The top `k` files of a parsed query with their ranking and the share of the query each holds
    (of `asked`, when what the query asks about is less than its words: `confidence.without_past`)."""
    ranked = rank(index, query, k, where, expand=feedback.ON if expand is None else expand, past=past)
    docs = index.docs([r.path for r in ranked], where)
    held = covers(index, query if asked is None else asked, docs.values(), where, answers=True)
    for r in ranked:
        r.signals.cover = held.get(r.path)
    return [(docs[r.path], r) for r in ranked if r.path in docs]


def hits(found: Sequence[tuple[Doc, Ranked]], query: Query, bar: float = evidence.COVER) -> builtins.list[SearchHit]:
    """Hits with the lines that match best (linear in the size of each file) and how sure each is.

    A hit is sure when it holds `bar` of the query's weight (`confidence.judge`)."""
    judged = confidence.judge({r.path: r.signals.cover or 0.0 for _, r in found}, bar)
    out = []
    for doc, r in found:
        spot = textmod.spot(doc.text, doc.head, query, doc.name)
        value, sure, r.signals.why = judged[r.path]
        out.append(SearchHit(doc.path, round(r.score, 6), doc.name, doc.description or _description(doc),
                             spot.snippet, spot.line, spot.end_line, doc.type, doc.updated, value, sure, r.signals))
    return out


def _description(doc: Doc) -> str:
    return model.derive_description(doc.body)
