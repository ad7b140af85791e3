"""How sure a hit is, and what scored it: ranking orders every candidate, confidence says which to trust.

Search a person or an agent asks for shows every candidate the index finds,
best first: a ranking that drops what it is unsure of loses answers worded
unlike the question (on LoCoMo's held-out conversations a bar inside the
ranking cost 0.09 of R@10 and fell below plain BM25). What is put in front of
a model without being asked (a prompt's recall, the query layer of
`memdir.context`) takes only the hits marked `sure`.

A hit's confidence is the larger of two witnesses, each scaled so that its
bar for "sure" is `COVER` (0.6, chosen on half of `bench/precision.py`'s memories:
`evidence`):

- the words: the share of the query's weight the file holds (`evidence`:
  each word weighs its rarity among the files, words that name no topic
  nothing; a word asking for a value, "cost" or "phone", is held where a value of
  its kind is); beside a sure hit, half of that bar (`BESIDE`: a question's
  evidence is often split over files, a prompt may ask two things);
- the meaning: its cosine over the model's floor for a sure hit (`calibration`;
  a conversation's turn needs the floor, a topic file to be closer than a near miss).

Records of past work (session records, the diary, `archive/`) are history,
not knowledge: they rank below topic files (`HISTORY_SHARE` of their score)
unless the query asks about past work (`asks_about_past`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .evidence import COVER, GENERIC  # COVER: a sure hit's confidence, the bar's share held or the sure cosine
from .text import STOPWORDS, stem, terms

HISTORY = ("sessions/", "diary/", "archive/")  # what was done and said: records, roll-ups, what they folded
BESIDE = 0.5  # beside a sure hit, another holding this share of the bar is sure too
EPSILON = 1e-9  # a share summed in floating point may fall a hair below the bar it meets
HISTORY_SHARE = 0.5  # of its score, for a record of past work when the query does not ask about the past

# "last time", "yesterday", "what did we do about ...": a question about past work, not about what is known.
_PAST = re.compile(
    r"\b(?:last\s+(?:time|session|week|month|year|night|sprint|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)|yesterday|earlier\s+today|the\s+other\s+day|(?:a\s+few\s+|two\s+|three\s+|\d+\s+)?(?:days?|weeks?|"
    r"months?)\s+ago|previous(?:ly)?|before\s+(?:that|this)|in\s+the\s+past|history|diary|journal|recap|"
    r"what\s+(?:did|have|had)\s+(?:we|i|you)|(?:did|have|had)\s+(?:we|i|you)\s+(?:ever\s+)?(?:do|did|done|try|tried|"
    r"decide|decided|discuss|discussed|talk|talked|fix|fixed|say|said|change|changed|work|worked)|"
    r"we\s+(?:did|tried|decided|discussed|talked|fixed|changed|worked)|remind\s+me\s+what|"
    r"last\s+we|when\s+did\s+(?:we|i|you))\b",
    re.IGNORECASE,
)


def asks_about_past(query: str) -> bool:
    """Whether a query asks about past work ("last time", "yesterday", "what did we do about ..."),
    so that records of it are what it wants, not history below knowledge."""
    return _PAST.search(query) is not None


def without_past(query: str) -> str:
    """The query less the words that ask about the past ("last time", "what did we"): they say when, not what,
    so they weigh nothing in the evidence (no file holds "last time", and it would weigh most)."""
    return " ".join(_PAST.sub(" ", query).split())


# Where a prompt's sentences and clauses end: a stop, a colon or semicolon, a question or exclamation mark (and the
# full-width ones of Chinese and Japanese), a comma, a dash between spaces, a line break.
_CLAUSE = re.compile(r"(?<=[.!?;:])\s+|[。！？；：，、\n]+\s*|,\s*|\s+[-–—]{1,2}\s+")
CLAUSES = 4  # at most this many clauses of a prompt are weighed apart (the last ones: the ask is often last)


def clauses(query: str) -> list[str]:
    """The parts of a query that may each be asked on their own: its sentences and clauses that name two topics
    or more or ask about one (shorter ones join the next until they do), each weighing less than the whole.

    A prompt is not a query: "Quick question before I start on the tests today: when is the flock launch?"
    holds the question in its last clause, and the words around it, which no file holds, weigh the most;
    a file that answers one part is sure of that part (`judge`'s bar on the part's own weight)."""
    whole = _topics(query)
    parts: list[str] = []
    pending = ""
    for piece in _CLAUSE.split(query):
        piece = piece.strip()
        for candidate in (piece, f"{pending} {piece}".strip()):
            named = _topics(candidate)
            if len(named) >= 2 or (named and candidate.endswith(("?", "？"))):  # "... today: where's the key?"
                if named != whole and candidate not in parts:
                    parts.append(candidate)
                pending = ""
                break
        else:
            pending = f"{pending} {piece}".strip()
    return parts[-CLAUSES:]


def _topics(text: str) -> set[str]:
    """The words of `text` that can name a topic (not function words, not `GENERIC`, not the pieces of "don't")."""
    return {w for w in terms(text) if w not in STOPWORDS and stem(w) not in GENERIC and (len(w) > 2 or not w.isalpha())}


def is_history(path: str, kind: str | None = None) -> bool:
    """Whether a file records past work (a session record, the diary, what roll-ups archived)."""
    return path.startswith(HISTORY) or kind in ("session", "diary")


@dataclass
class Signals:
    """What scored one candidate, for `--explain`: every field is its contribution or its witness."""

    bm25: float = 0.0  # the index's BM25 over the weighted fields (0: the words did not match it)
    fields: dict[str, float] | None = None  # BM25 of each field alone (name, description, tags, body), when explained
    feedback: float = 0.0  # added by the second query of the best files' words (`feedback`)
    neighbours: float = 0.0  # lent by a neighbour in a numbered run (turns, days)
    lender: str = ""  # that neighbour
    cosine: float | None = None  # the meaning's similarity (semantic and hybrid)
    people: float = 0.0  # the factor a title naming a person of the query gave (hybrid)
    history: float = 1.0  # the factor a record of past work was given (1: none)
    cover: float | None = None  # the share of the query's weight the file holds
    fused: float | None = None  # hybrid: the fused score before the signals
    why: str = ""  # why it is not sure, or why it was left out

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if out["fields"]:
            out["fields"] = {k: round(v, 4) for k, v in out["fields"].items()}
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()
                if v not in (None, "", {}) and not (k == "history" and v == 1.0) and not (k == "people" and not v)}


def from_meaning(cosine: float, sure_at: float) -> float:
    """Confidence from the meaning alone: `COVER` at the cosine of a sure hit, in proportion below and above."""
    if sure_at <= 0:
        return 0.0
    return max(0.0, min(1.0, COVER * cosine / sure_at))


def judge(covers: Mapping[str, float], bar: float, cosines: Mapping[str, float] | None = None,
          sure_at: Mapping[str, float] | None = None) -> dict[str, tuple[float, bool, str]]:
    """Each hit's confidence, whether it is sure, and why not: by path, for one search's hits.

    A hit is sure when it holds `bar` of the query's weight or its cosine reaches its `sure_at`; beside such a
    hit, one holding `BESIDE` of the bar is sure too (a prompt that asks two things finds each in its own file).
    The words' confidence is `COVER` at the share a hit needs, in proportion below and above it."""
    cosines, sure_at = cosines or {}, sure_at or {}
    close = {p for p, c in cosines.items() if p in covers and c >= sure_at.get(p, float("inf"))}
    need = bar * BESIDE if close or any(c >= bar - EPSILON for c in covers.values()) else bar
    out = {}
    for path, cover in covers.items():
        value = min(1.0, COVER * cover / need) if need > 0 else 1.0
        cosine = cosines.get(path)
        if cosine is not None and path in sure_at:
            value = max(value, from_meaning(cosine, sure_at[path]))
        sure = cover >= need - EPSILON or path in close  # three of five words alike is 0.6, not 0.59999
        out[path] = (round(value, 3), sure, "" if sure else reason(cover, cosine, sure_at.get(path), need))
    return out


def reason(cover: float | None, cosine: float | None, sure_at: float | None, bar: float) -> str:
    """Why a hit is not sure: how much of the query it holds and how close its meaning is, against the bars."""
    parts = []
    if cover is not None:
        parts.append(f"holds {cover:.0%} of the query's weight, sure at {bar:.0%}")
    if cosine is not None and sure_at:
        parts.append(f"cosine {cosine:.2f}, sure at {sure_at:.2f}")
    return "; ".join(parts) or "no evidence weighed"
