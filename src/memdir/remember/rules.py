"""What a session record may say, held against a model's answer before it is kept (issue 31, item 6).

The extractive summariser keeps these rules by construction; a model (an API, or the agent CLI the person already
runs) is asked to, and its answer is checked: the title is the user's request in their words (never the
assistant's, never a placeholder), requests, decisions and what is open come from what the user said, learnings
are the user's and say something beyond a request, "What broke" names only the failures the tool calls show, no
item is an acknowledgement or the assistant's markdown. An answer that breaks one is refused (`problems` says
why) and the extractive record is kept; one that keeps them is `fitted`: its learnings in the third person naming
the session and line they came from, and what broke the tool calls' own failing lines.

Roll-ups a model writes are held to the seeds' shapes the same way (`digest_problems`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from . import notes
from .summarize import SessionSummary, clip, context, provenance
from .transcripts import Transcript

FROM_USER = 0.5  # share of an item's content words that must be the user's (in one of their turns)
RESTATED = 0.8  # ... that make a learning the title said again
_MARKDOWN = re.compile(r"^\s*(?:#{1,6}\s|\||\*\*|>)|\|\s*$|^[-=]{3,}$")
_PLACEHOLDER = re.compile(r"^\s*\[(?:image|file|tool\b|Image #)", re.IGNORECASE)
_NARRATION = re.compile(r"^(?:I'll|I will|I've|I have|I'm going to|Let me|Sure\b|Here's|Here is|Now I|Now let me|Great!|"
                        r"Perfect!|Done\b|Certainly)", re.IGNORECASE)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


def _terms(text: str) -> set[str]:
    """An item's content words, and in Chinese, Japanese and Korean its pairs of characters (words are not spaced
    apart there), so a record in those scripts is compared with what the user said too."""
    return notes.content(text) | {run[i:i + 2] for run in _CJK.findall(text) for i in range(max(1, len(run) - 1))}


def _users(t: Transcript) -> list[tuple[set[str], int | None]]:
    return [(_terms(x.text), x.line) for x in t.turns if x.role == "user" and not x.text.startswith("[tool ")]


def _best(words: set[str], said: list[tuple[set[str], int | None]]) -> tuple[float, int | None]:
    """How much of an item the user said in one turn, and that turn's line."""
    if not words:
        return 0.0, None
    share, line = max(((len(words & w) / len(words), at) for w, at in said), default=(0.0, None), key=lambda x: x[0])
    return share, line


# The words a learning's frame adds around what the user said ("The user wants the agent to …").
_FRAME = frozenset("user user's agent agent's wants want noted said corrected does they their them that".split())


def _plain(item: str) -> str:
    return notes.sources_of(item)[0]


def problems(s: SessionSummary, t: Transcript) -> list[str]:
    """Why a model's record may not be kept (empty: it may)."""
    said = _users(t)
    wrong = []
    title = s.title.strip()
    if not title or _PLACEHOLDER.match(title) or _NARRATION.match(title) or notes.pleasantry(title):
        wrong.append(f"the title is not a request: {clip(title, 60)!r}")
    elif not title.startswith("/") and _best(_terms(title), said)[0] < FROM_USER:
        wrong.append(f"the title is not the user's words: {clip(title, 60)!r}")
    for key in ("asked", "decisions", "open", "corrections", "preferences"):
        for item in getattr(s, key):
            plain = _plain(item)
            if _MARKDOWN.search(plain) or _PLACEHOLDER.match(plain):
                wrong.append(f"{key} holds markup: {clip(plain, 60)!r}")
            elif notes.pleasantry(notes.unfilled(plain)) or not notes.unacknowledged(plain):
                wrong.append(f"{key} holds an acknowledgement: {clip(plain, 60)!r}")
            elif _best(_terms(plain) - _FRAME, said)[0] < FROM_USER:
                wrong.append(f"{key} holds what the user did not say: {clip(plain, 60)!r}")
    for item in (*s.corrections, *s.preferences):
        words, head = _terms(_plain(item)), _terms(title)
        if item.startswith("The user asked") or (words and len(words & head) >= RESTATED * len(words)):
            wrong.append(f"a learning restates a request: {clip(item, 60)!r}")
    failures = [notes.content(f) for f in t.activity.failures]
    for item in s.broke:
        words = notes.content(item)
        if _MARKDOWN.search(item) or not any(words and len(words & f) >= FROM_USER * len(words) for f in failures):
            wrong.append(f"what broke names no failed tool call: {clip(item, 60)!r}")
    return wrong


def fitted(s: SessionSummary, t: Transcript) -> SessionSummary:
    """A model's record that keeps the rules, as the record holds it: each learning in the third person naming the
    session and line it came from; what broke left to the tool calls' failing lines (`Transcript.activity`); no
    statement of context ("The build was green yesterday.") among what was asked (`summarize.context`)."""
    said = _users(t)

    def learned(item: str, kind: str) -> str | None:
        plain = _plain(item).rstrip(" .")
        text = plain if plain.startswith("The user") else notes.learning(plain, kind)
        return clip(text, 140) + provenance(t, _best(_terms(plain) - _FRAME, said)[1]) if text else None

    corrections = tuple(x for item in s.corrections if (x := learned(item, "corrections")))
    preferences = tuple(x for item in s.preferences if (x := learned(item, "preferences")))
    asked = tuple(x for x in s.asked if not context(_plain(x)))
    return replace(s, asked=asked, broke=(), corrections=corrections, preferences=preferences)


_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


def digest_problems(period: str, text: str) -> list[str]:
    """Why a model's roll-up does not have its period's shape: a day one paragraph, a week two or three sentences,
    a month three bullets; none holds a placeholder or a heading."""
    text = text.strip()
    wrong = []
    if not text or _PLACEHOLDER.search(text) or re.search(r"\[(?:image|tool )", text) or re.search(r"^#", text, re.M):
        wrong.append("it is empty, or holds a placeholder or a heading")
    elif period == "day" and "\n" in text:
        wrong.append("a day is one paragraph")
    elif period == "week" and not 1 <= len(_SENTENCE_END.findall(text)) <= 3:
        wrong.append("a week is two or three sentences")
    elif period == "month" and not (len(text.splitlines()) == 3 and all(x.startswith("- ") for x in text.splitlines())):
        wrong.append("a month is three bullets")
    return wrong
