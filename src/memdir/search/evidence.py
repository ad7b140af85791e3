"""How much of a query a file holds: the evidence that makes a hit sure.

BM25 ranks every file that shares a word with the query and says nothing
about whether the best of them answers it: "android app release date"
matches a release checklist on "release" and "date" alone. So a hit is
`sure` (`confidence`) only when it holds at least `COVER` of the query's
weight; a weaker one is still ranked for a person who asks, never shown to a
model unasked. Each word of the query weighs its inverse document frequency
among the files the caller may read, so a rare word counts most, and a word
that no file holds counts most of all: a query that is mostly about something
the memory never mentions is not answered by a file that matches its one common
word. Words that name no topic (`GENERIC`: "get", "happen", the pieces of
"doesn't") weigh nothing; a query made only of them weighs every word alike.

Until issue 30 this rule was a bar inside the ranking (the best hit must hold
`COVER`, others beside it `BESIDE` of it, a conversation's turns nothing): it
stopped the padding, but on data it was not tuned on the ranking fell below
plain BM25 (LoCoMo's held-out conversations R@10 0.584 against 0.608, REALTALK
0.413 against 0.514). The figures below are of that bar.

Measured on the labelled memories of `bench/precision.py` (158 answerable and
52 no-answer queries): without the rule lexical search returned something for
52% of the no-answer queries (R@10 0.96, 60% of the hits shown relevant); with
it 5.8% (R@10 0.87, 69% relevant). A bar of 0.4 let 15% through, 0.6 kept 4%
out but lost more answers. 22 long no-answer questions written later (five to
eight topical words, most near what the memory holds) got a hit 14% of the time
(8.1% of all 74): a bar that falls with the query's length, which LoCoMo's long
questions would like, let more of them through (9.5-10.8%), so the bar stays
flat. On LoCoMo (every question has an answer, worded unlike the turn that
holds it) lexical R@10 goes from 0.70 to 0.61, plain BM25's figure: the price
of saying nothing when nothing holds the question.

Not kept: weighing a word that no file holds at 1.4 times its weight (no file
can hold that part of the question) took three of those six no-answer hits
away, and five answers with them ("how often should I water the monstera?"
lost its only file): a word the memory never uses is as often the asker's
wording as a sign of a missing topic. A bar per paragraph instead of per file
changed nothing: those files are one paragraph.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from .text import Query, fold, spaceless, spaceless_weights, stem

COVER = 0.5  # the share of a query's weight a sure hit holds (search, the page, the context)

# Words that carry no topic of their own: the pieces tokenisers leave of contractions, light verbs,
# vague nouns and quantifiers. Written from general knowledge of English queries, not fitted to a
# benchmark; "first", "never" or "last" are not here, as they can be the point of a query.
GENERIC = frozenset(stem(w) for w in """
s t d m ll ve re aren isn wasn weren don doesn didn haven hasn hadn won wouldn shouldn couldn mustn cannot
get gets got getting gotten make makes made making go goes going went gone come comes came coming
take takes took taken give gives gave given put puts keep keeps kept try tries tried trying
happen happens happened happening thing things stuff anything something everything nothing
anyone someone everyone anybody somebody nobody
much many lot lots few little bit good bad better best well way ways kind sort type
need needs want wants like likes know knows knew think thinks thought say says said tell tells told
also still ever really actually maybe perhaps probably please thanks thank ok okay yes yeah
""".split())

_RUN = re.compile(r"^(.*?)\d+(\D*)$")


def sequence(path: str) -> tuple[str, str, str] | None:
    """The numbered run a file belongs to (folder, what comes before and after its last number), or None.

    Only files of one run (turns, days, session captures) lend to each other:
    two notes that sit side by side in a folder of topics say nothing of each other.
    """
    folder, _, name = path.rpartition("/")
    m = _RUN.match(name)
    return None if m is None else (folder, m.group(1), m.group(2))


def runs(paths: Iterable[str]) -> set[str]:
    """The paths that are turns of a numbered run: another of `paths` has its folder and its name but for
    the last number (`D1-3.md` beside `D1-7.md`; a lone `Kyoto 2025.md` is a topic, not a run)."""
    keys: dict[tuple[str, str, str], list[str]] = {}
    for path in paths:
        key = sequence(path)
        if key is not None:
            keys.setdefault(key, []).append(path)
    return {p for group in keys.values() if len(group) > 1 for p in group}


def _prefix(s: str) -> str:
    # A Porter stem keeps the start of its word but may end in a letter the word lacks ("cri" for "cry").
    return s if len(s) < 3 else s[: min(4, len(s) - 1)]


@dataclass(frozen=True)
class Evidence:
    """The weight of each stem and symbol of one query; `cover(text)` is the share a text holds."""

    stems: Mapping[str, float]
    symbols: Mapping[str, float]

    @property
    def total(self) -> float:
        return sum(self.stems.values()) + sum(self.symbols.values())

    @cached_property
    def _finder(self) -> tuple[frozenset[str], re.Pattern[str] | None]:
        """The stems that weigh, and one pattern for the words that may be them (compiled once per query)."""
        wanted = frozenset(s for s, w in self.stems.items() if w > 0)
        if not wanted:
            return wanted, None
        starts = sorted({_prefix(s) for s in wanted}, key=len, reverse=True)
        return wanted, re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(p) for p in starts) + r")[^\W_]*")

    def cover(self, text: str) -> float:
        """The share of the query's weight found in `text` (1.0 when the query weighs nothing)."""
        total = self.total
        if total <= 0:
            return 1.0
        found = sum(w for s, w in self.symbols.items() if s in text)
        wanted, finder = self._finder
        if finder is not None:
            folded = fold(text)
            seen: set[str] = set()
            for m in finder.finditer(folded):
                s = stem(m.group())
                if s in wanted and s not in seen:
                    seen.add(s)
                    found += self.stems[s]
                    if len(seen) == len(wanted):
                        break
        return found / total


def idf(df: int, files: int) -> float:
    """BM25's inverse document frequency, kept positive (a word in every file still weighs a little)."""
    return math.log(1 + (files + 1) / (df + 0.5))


def weigh(query: Query, files: int, df: Mapping[str, int], symbol_df: Mapping[str, int] | None = None) -> Evidence:
    """The evidence of `query` in a memory of `files` files, where `df[word]` files hold each word."""
    by_stem: dict[str, int] = {}
    for word in query.words:
        if spaceless(word):
            continue  # a word of a script without spaces is found as written, as the symbols are
        s = stem(word)
        by_stem[s] = max(by_stem.get(s, 0), int(df.get(word, 0)))
    topical = {s: n for s, n in by_stem.items() if s not in GENERIC and not (len(s) < 3 and s.isalpha())}
    chosen = topical or by_stem  # only generic words: each of them counts
    stems = {s: idf(n, files) for s, n in chosen.items()}
    symbols = {s: idf(int((symbol_df or {}).get(s, 0)), files) for s in query.symbols}
    symbols.update(spaceless_weights(query, df, lambda n: idf(n, files)))  # pairs: the seams weigh nothing
    return Evidence(stems, symbols)


def searchable(name: str, description: str, tags: str, body: str) -> str:
    """The parts of a file the index matches, as one text to look for a query's words in."""
    return f"{name}\n{description}\n{tags}\n{body}"
