"""Pseudo-relevance feedback: the words the best files share beside the query's, asked for in a second query.

A question is often worded unlike the turn that answers it, and the files it
does find share words with that turn ("When did Caroline go to the support
group?" finds turns about the group that also say "LGBTQ" and "meeting").
`expand` reads the best `FILES` of the first ranking, weighs each word of their
bodies (not of their names: a title says who or when) by how often it occurs there (in files weighed by their score) and how
rare it is in the memory, asks the index for the best `WORDS` of them, and adds
the second query's scores at `SHARE` of the first's best. Learning-free: one
more query, no model.

A file only the feedback words found may enter the ranking; it holds little
of the query, so it is not `sure` (`confidence`) and no recall shows it
unasked (when a bar gated the ranking, admitting such files took hit
precision@5 on `bench/precision.py` from 0.69 to 0.22). It serves the lexical mode (`lexical.top`): hybrid's lexical side goes
without it, as the semantic side bridges the words already (with it, hybrid's
R@10 was LoCoMo 0.762 -> 0.762, REALTALK 0.576 -> 0.569).

Measured with `bench/corpora.py` (turn R@10, categories 1-4, dev split; REALTALK):
with the bar LoCoMo 0.608 -> 0.613 (R@5 0.527 -> 0.540), REALTALK 0.426 -> 0.428
(R@5 0.357 -> 0.371); no bar 0.697 -> 0.710, 0.531 -> 0.535. 2 to 5 files, 5 or
10 words, shares 0.3 to 0.5 all land within 0.005 of these. Beside the share of the
query a file holds (`lexical.COVER_WEIGHT`, issue 30) a share of 0.5 does better on
both than 0.3 (LoCoMo 0.704 -> 0.709, REALTALK 0.549 -> 0.552), so it is 0.5. Two other routes of
issue 22 (item 4) were measured the same way and are not used: a reranking of the
top 50 by how close the query's words stand (neutral on both: no bar -0.005 and
+0.002; a turn is short, so BM25 already sees what proximity would) and
decomposition of a question into one sub-query per person or clause it joins
(worse on both at every share: -0.008 and -0.007 at 0.3; a name is in every turn
its speaker wrote, so a sub-query of a name and a few words brings that
speaker's other turns).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from . import text as textmod
from .evidence import GENERIC
from .text import Query, fold, stem

ON = True  # in lexical searches (bench/corpora.py's ablation turns it off)
FILES = 3  # the best files whose words are read
WORDS = 5  # words asked for in the second query
SHARE = 0.5  # the second query's best score, as a share of the first's

_WORD = re.compile(r"[^\W_]+")


class File(Protocol):
    """What feedback reads of an indexed file (`lexical.Doc`)."""

    @property
    def name(self) -> str: ...

    @property
    def body(self) -> str: ...


class Index(Protocol):
    """What feedback asks of a lexical index (`lexical.LexicalIndex`; `where` is its `Filter`)."""

    def candidates(self, words: Sequence[str], n: int, where: Any) -> list[tuple[str, float]]: ...

    def frequencies(self, words: Sequence[str], where: Any) -> dict[str, int]: ...

    def count(self) -> int: ...

    def docs(self, paths: Sequence[str], where: Any) -> Mapping[str, File]: ...


def words(index: Index, query: Query, scores: Mapping[str, float], where: Any) -> list[str]:
    """The feedback words of a ranking (as written in the files): frequent in its best files, rare elsewhere."""
    top = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:FILES]
    if not top:
        return []
    docs = index.docs([p for p, _ in top], where)
    asked = query.stems
    weight: dict[str, float] = {}
    surface: dict[str, str] = {}
    best = top[0][1] or 1.0
    for path, score in top:
        doc = docs.get(path)
        if doc is None:
            continue
        # The body's words, not the name's: a title says who or when (a turn's speaker and day), not what about.
        titled = {stem(w) for w in _WORD.findall(fold(doc.name))}
        found = [w for w in _WORD.findall(fold(doc.body)) if len(w) > 2 and not w.isdigit()
                 and w not in textmod.STOPWORDS and stem(w) not in titled]
        for w in found:
            surface.setdefault(stem(w), w)
        counts = Counter(stem(w) for w in found)
        total = sum(counts.values()) or 1
        for s, c in counts.items():
            if s not in asked and s not in GENERIC:
                weight[s] = weight.get(s, 0.0) + (score / best) * c / total
    pool = sorted(weight, key=lambda s: (-weight[s], s))[: 4 * WORDS]
    if not pool:
        return []
    df = index.frequencies([surface[s] for s in pool], where)
    files = max(index.count(), 1)
    # A word only its own file holds finds nothing new; one in half the files says nothing of them.
    rare = {s: weight[s] * math.log(1 + files / (df.get(surface[s], 0) + 0.5)) for s in pool
            if 1 < df.get(surface[s], 0) <= files / 2}
    return [surface[s] for s in sorted(rare, key=lambda s: (-rare[s], s))[:WORDS]]


def expand(index: Index, query: Query, scores: dict[str, float], n: int, where: Any) -> dict[str, float]:
    """Add, in place, the feedback query's scores at `SHARE` of the best; returns what each file gained."""
    asked = words(index, query, scores, where) if scores and query.words else []
    found = index.candidates(asked, n, where) if asked else []
    if not found:
        return {}
    top = max(scores.values())
    best = max(s for _, s in found) or 1.0
    added: dict[str, float] = {}
    for path, s in found:
        added[path] = SHARE * top * max(s, 0.0) / best
        scores[path] = scores.get(path, 0.0) + added[path]
    return added
