"""Summarisers: a session into a structured record, records into a day, days into a week, weeks into a month.

`Summarizer` is a two-method protocol. `Extractive` (the default) needs no
model and no network: it keeps the sentences that carry corrections,
preferences, decisions, errors and open items, is deterministic, and always
stays within the length bound. `AnthropicSummarizer` and `OpenAISummarizer`
(any OpenAI-compatible server: Ollama, vLLM, llama.cpp through `base_url`)
are optional extras; their prompts live in `prompts.py`. `load(config)` picks
one from `[summarizer]` in memdir.toml or `MEMDIR_SUMMARIZER*` variables.

What leaves the machine is redacted first (the capture's secret replacement)
and fenced (`fence.py`). A provider's failure is kept as its HTTP status and
error type only, never its body (a provider may echo the key it refused), and
`describe` is the one line a failure may be recorded as.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from .. import paths
from ..errors import InvalidArgument, MemdirError
from . import fence, notes, prompts
from .transcripts import Transcript, redact, redacted

LISTS = ("asked", "corrections", "preferences", "decisions", "broke", "open")
DIGEST_LISTS = ("learned", "decided", "worked_on", "broke", "open")
ITEM_CHARS = 200
MAX_ITEMS = 6
USER_SENTENCES = 6  # sentences of a user's turn read for cues
PASTED = 12  # a user's turn of more sentences than this is read by its first paragraph: the rest is pasted
_NARRATION = re.compile(r"^(?:I'll|I will|I'm going to|Let me|Now,? |Next,? |First,? |Then,? |Starting )")
PERIOD_CHARS = {"day": 1200, "week": 600, "month": 600}


class SummarizerError(MemdirError):
    """The summariser failed (a provider error, or an answer that is not what was asked).

    Its message is memdir's own words and the provider's status and error type, never text the provider sent."""


_ERROR_TYPE = re.compile(r"[a-z]+(?:_[a-z]+){0,5}")  # authentication_error, rate_limit_error, insufficient_quota


def provider_error(provider: str, e: BaseException) -> SummarizerError:
    """A provider SDK's exception as its HTTP status (or the exception's class) and error type, without its body."""
    status = getattr(e, "status_code", None)
    body = getattr(e, "body", None)
    inner = body.get("error") if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping) else body
    kind = inner.get("type") if isinstance(inner, Mapping) else None
    words = [f"HTTP {status}" if isinstance(status, int) else type(e).__name__]
    if isinstance(kind, str) and len(kind) <= 48 and _ERROR_TYPE.fullmatch(kind):  # a word, never a key echoed
        words.append(kind)
    return SummarizerError(f"the {provider} API failed: {' '.join(words)}")


def describe(e: BaseException) -> str:
    """A summariser failure in one line that can be stored: memdir's own message, else the exception's class."""
    if isinstance(e, MemdirError):
        return redact(" ".join(str(e).split())[:200]) or type(e).__name__
    return type(e).__name__


@dataclass(frozen=True)
class SessionSummary:
    """The structured record of one session."""

    title: str
    asked: tuple[str, ...] = ()
    corrections: tuple[str, ...] = ()
    preferences: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    broke: tuple[str, ...] = ()
    open: tuple[str, ...] = ()

    def size(self) -> int:
        return len(self.title) + sum(len(x) + 4 for k in LISTS for x in getattr(self, k))

    def digest(self) -> Digest:
        """The same facts in the shape roll-ups fold together."""
        return Digest(text=self.title, learned=self.preferences + self.corrections, decided=self.decisions,
                      worked_on=(self.title, *self.asked), broke=self.broke, open=self.open)


@dataclass(frozen=True)
class Digest:
    """A roll-up: prose, plus the lists the next roll-up folds (learnings first)."""

    text: str
    learned: tuple[str, ...] = ()
    decided: tuple[str, ...] = ()
    worked_on: tuple[str, ...] = ()
    broke: tuple[str, ...] = ()
    open: tuple[str, ...] = ()

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], text: str = "") -> Digest:
        return cls(text, *(tuple(str(x) for x in meta.get(k) or () if x) for k in DIGEST_LISTS))


class Summarizer(Protocol):
    """Turns transcripts into records and records into roll-ups; `usage` counts tokens in and out."""

    name: str
    usage: Counter[str]

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary: ...

    def digest(self, period: str, label: str, items: Sequence[Digest], *, limit: int) -> Digest: ...


def estimate_tokens(text: str) -> int:
    """About four characters a token: the usual rule of thumb for English text."""
    return (len(text) + 3) // 4


# ---------------------------------------------------------------- extractive

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"[a-z0-9][a-z0-9'_-]*")
_CUES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (kind, who, re.compile(rx, re.IGNORECASE))
    for kind, who, rx in (
        ("preferences", "user", r"\b(?:i (?:prefer|like|love|hate|always|usually|never)|i'd (?:prefer|rather|like)"
                                r"|i would (?:prefer|rather)|i don't (?:like|want)|please (?:always|never|use|don't)"
                                r"|(?:always|never) (?:use|add|write|run|put|do|make|show)|my preference|call me"
                                r"|remember (?:that|this|to)?)\b"),
        ("corrections", "user", r"(?:^(?:no|nope|wrong|stop)\b|\b(?:that's not|that is not|not what i|i said|you forgot"
                                r"|should(?:n't| not) have|instead|actually,|don't|do not|undo|revert)\b)"),
        ("decisions", "any", r"\b(?:let's|let us|we'll|we will|decided|decision|go with|going with|agreed|settled on"
                             r"|we chose|the plan is|plan:)\b"),
        ("open", "any", r"\b(?:todo|to do|later|next steps?|still (?:need|open|to)|not yet|follow[- ]up|open question"
                        r"|remaining|pending|tbd|blocked|waiting (?:on|for)|unresolved|haven't|left to)\b"),
        ("broke", "any", r"(?:\[tool error:|\b(?:error|errors|failed|fails|failing|failure|exception|traceback|broke"
                         r"|broken|crash(?:ed|es)?|bug|regression|timed out|doesn't work|does not work|not working)\b)"),
    )
)
_STOP = frozenset("""a an the and or but if then so of to in on at by for with from as is are was were be been being it its
this that these those i you he she we they me my your our their them us do does did done not no yes can could should
would will just also very more most some any all each every into out up down over about than too only own same such
here there when where which who whom what why how again further once let's lets use used using get got make made
session user assistant please thanks ok okay""".split())


def sentences(text: str) -> list[str]:
    """Sentences of a turn, outside code blocks, one line each."""
    out: list[str] = []
    fenced = False
    for line in paths.lines(text):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            continue
        if line.lstrip().startswith("[tool "):  # a tool's line is one item, whatever full stops it holds
            out.append(" ".join(line.split()))
            continue
        for part in _SENTENCE.split(line.strip().lstrip("-*> ").strip()):
            part = " ".join(part.split())
            if part:
                out.append(part)
    return out


def clip(text: str, limit: int = ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _key(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def words(text: str) -> list[str]:
    """Content words: lower case, without function words and short tokens."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2 and not w.isdigit()]


def _bounded(lists: dict[str, list[str]], head: str, limit: int, newest: Sequence[str] = ("open",)) -> dict[str, list[str]]:
    """Cut every list to the same number of items until the whole fits in `limit` characters."""
    cap = MAX_ITEMS
    while True:
        cut = {k: (v[-cap:] if k in newest else v[:cap]) for k, v in lists.items()}
        if len(head) + sum(len(x) + 4 for v in cut.values() for x in v) <= limit or cap == 0:
            return cut
        cap -= 1


@dataclass
class Extractive:
    """The default summariser: keeps the sentences that carry the signal, in order; no model."""

    name: str = "extractive"
    usage: Counter[str] = field(default_factory=Counter)

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary:
        """The record as a person would write it: the first real request as the title; each turn's opening
        request; the user's corrections, preferences and decisions; what failed (the tools' failing lines, never
        the assistant's narration); and what is open at the end (the user's words, the last answer's)."""
        lists: dict[str, list[str]] = {k: [] for k in LISTS}
        seen: set[str] = set()
        last = max((i for i, t in enumerate(transcript.turns) if t.role == "assistant"), default=-1)
        first_request = True
        tools = bool(transcript.activity.tools)  # tool calls were read: their failing lines say what broke
        for i, turn in enumerate(transcript.turns):
            self.usage["input_tokens"] += estimate_tokens(turn.text)
            said = sentences(turn.text)
            if turn.role == "user":
                said = said[:USER_SENTENCES] if len(said) <= PASTED else sentences(turn.text.split("\n\n", 1)[0])
                said = said[:USER_SENTENCES]  # past these (or past the first paragraph of a long turn) is pasted text
            elif tools:
                said = [x for x in said if not _NARRATION.match(x)]  # "Let me run the tests first": not a decision
            first = True
            for sentence in said:
                if notes.pleasantry(sentence):
                    continue  # "Thanks." is no request and no work done
                kind = self._kind(sentence, turn.role, final=i == last, tools=tools)
                if turn.role == "user" and first and not sentence.startswith("[tool "):
                    if kind is None or first_request and kind != "preferences":
                        kind = "asked"  # a turn's opening sentence is its request; the first corrects nothing yet
                    first_request = False
                first = False
                if kind is None:
                    continue
                key = _key(sentence)
                if key and key not in seen:
                    seen.add(key)
                    lists[kind].append(clip(sentence))
        request = transcript.meta.get("request")
        opening = sentences(request)[0] if isinstance(request, str) and sentences(request) else None
        title = clip(transcript.meta.get("title") or opening or (lists["asked"][0] if lists["asked"] else _first_words(transcript)), 80)
        kept = _bounded(lists, title, limit)
        out = SessionSummary(title, *(tuple(kept[k]) for k in LISTS))
        self.usage["output_tokens"] += estimate_tokens(title) + sum(estimate_tokens(x) for k in LISTS for x in kept[k])
        return out

    @staticmethod
    def _kind(sentence: str, role: str, *, final: bool = True, tools: bool = False) -> str | None:
        if sentence.startswith("[tool ") and not sentence.startswith("[tool error:"):
            return None
        for kind, who, rx in _CUES:
            if kind == "broke" and role == "assistant" and tools:
                continue  # the assistant's narration of a failure is not the failure: the tool's line is
            if kind == "open" and role == "assistant" and tools and not final:
                continue  # what the assistant left open mid-session was most often done later
            if (who == "any" or who == role) and rx.search(sentence):
                return kind
        return None

    def digest(self, period: str, label: str, items: Sequence[Digest], *, limit: int) -> Digest:
        for item in items:
            self.usage["input_tokens"] += estimate_tokens(item.text) + sum(
                estimate_tokens(x) for k in DIGEST_LISTS for x in getattr(item, k))
        merged = _notes(items, add=period != "day")
        if period == "day":
            text = _paragraph(merged, limit)
        elif period == "week":
            text = _sentences(merged, limit)
        else:
            text = _themes(items, merged, limit)
        self.usage["output_tokens"] += estimate_tokens(text)
        return Digest(text, *(getattr(merged, k) for k in DIGEST_LISTS))


def _first_words(t: Transcript) -> str:
    for turn in t.turns:
        if turn.text.strip():
            return paths.lines(turn.text.strip())[0]
    return "session"


def merge(items: Sequence[Digest], cap: int = MAX_ITEMS * 2) -> Digest:
    """The union of the lists, first seen first (open items: newest kept), without repeats."""
    out: dict[str, list[str]] = {k: [] for k in DIGEST_LISTS}
    for k in DIGEST_LISTS:
        seen: set[str] = set()
        for item in items:
            for x in getattr(item, k):
                key = _key(x)
                if key and key not in seen:
                    seen.add(key)
                    out[k].append(x)
    return Digest("", *(tuple(v[-cap:] if k == "open" else v[:cap]) for k, v in out.items()))


def _notes(items: Sequence[Digest], *, add: bool, cap: int = MAX_ITEMS * 2) -> Digest:
    """The lists as notes (`notes.py`): repeats merged with the days they came up on (`add`: items are days
    or weeks; else the sessions of one day), the most repeated first, no pleasantries, learnings in the
    third person."""
    out: dict[str, list[str]] = {}
    for k in DIGEST_LISTS:
        lists = [[notes.third_person(x) for x in getattr(i, k)] if k == "learned" else list(getattr(i, k)) for i in items]
        folded = notes.across(lists, add=add)
        if k != "open":  # what is still open stays in the order it came; the rest by how often it came up
            folded = sorted(folded, key=lambda i: -i.count)
        out[k] = [i.render() for i in folded]
    return Digest("", *(tuple(v[-cap:] if k == "open" else v[:cap]) for k, v in out.items()))


_LEADS = (("learned", "Learned"), ("decided", "Decided"), ("worked_on", "Worked on"), ("broke", "Broke"), ("open", "Open"))


def _paragraph(d: Digest, limit: int) -> str:
    """One paragraph, durable learnings first, cut item by item from the end of each part to fit."""
    parts = {k: list(getattr(d, k)) for k, _ in _LEADS}
    while True:
        text = " ".join(f"{lead}: {'; '.join(_bare(x) for x in parts[k])}." for k, lead in _LEADS if parts[k])
        if len(text) <= limit:
            return text or "Nothing of note."
        longest = max(parts, key=lambda k: (len(parts[k]), k))
        parts[longest].pop()


def _bare(text: str) -> str:
    return text.rstrip(" .;")


def _sentences(d: Digest, limit: int) -> str:
    """Two or three sentences: learnings, the main work, what stays open."""
    picks = [("Learned", d.learned[:3] or d.decided[:3]), ("Worked on", d.worked_on[:3]), ("Still open", d.open[-2:])]
    n = 3
    while True:
        chosen = [(lead, items[:n]) for lead, items in picks if items]
        text = " ".join(f"{lead}: {'; '.join(_bare(x) for x in items)}." for lead, items in chosen)
        if len(text) <= limit or n == 1:
            return clip(text, limit) if text else "A quiet week."
        n -= 1


def _themes(items: Sequence[Digest], merged: Digest, limit: int) -> str:
    """Three bullets: the largest clusters of what was said this month (`notes.themes`), each with its most
    repeated item and on how many days it came up."""
    said = [x for k in ("worked_on", "decided", "learned") for x in getattr(merged, k)]
    bullets = [f"- {name}: {_bare(best.text)} ({total} days)" if total > 1 else f"- {name}: {_bare(best.text)}"
               for name, best, total in notes.themes(said)]
    per = max(20, limit // 3 - 1)
    return "\n".join(clip(b, per) for b in bullets) or "- nothing recurring"


# ---------------------------------------------------------------- model providers


def _render_items(items: Sequence[Digest]) -> str:
    out = []
    for i, item in enumerate(items, 1):
        out.append(f"[{i}] {item.text}")
        for k in DIGEST_LISTS:
            values = getattr(item, k)
            if values:
                out.append(f"  {k}: " + "; ".join(values))
    return "\n".join(out)


def parse_session(answer: str, limit: int) -> SessionSummary:
    """A model's JSON answer as a bounded record; `SummarizerError` if it is not the JSON asked for."""
    text = answer.strip()
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 < end else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("title"), str):
        raise SummarizerError(f"the summariser's answer is not the JSON record asked for ({len(text)} characters)")
    lists = {k: [clip(str(x)) for x in data.get(k) or () if isinstance(x, (str, int, float)) and str(x).strip()]
             for k in LISTS}
    title = clip(data["title"], 80)
    kept = _bounded(lists, title, limit)
    return SessionSummary(title, *(tuple(kept[k]) for k in LISTS))


@dataclass
class _Model:
    """What the two providers share: prompts, bounds and parsing; `_ask` is the one call that differs."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    max_tokens: int = 1024
    transcript_chars: int = 100_000
    name: str = "model"
    usage: Counter[str] = field(default_factory=Counter)

    def _ask(self, system: str, user: str) -> str:
        raise NotImplementedError

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary:
        text = redacted(transcript).as_text()  # nothing the secret guard knows leaves the machine
        if len(text) > self.transcript_chars:  # keep the start (the ask) and the end (the outcome)
            half = self.transcript_chars // 2
            text = text[:half] + "\n[… middle of the session left out …]\n" + text[-half:]
        tag = "transcript-" + fence.nonce(text)
        prompt = prompts.SESSION.format(items=MAX_ITEMS, date=date, transcript=text, tag=tag)
        return parse_session(self._ask(prompts.SYSTEM, prompt), limit)

    def digest(self, period: str, label: str, items: Sequence[Digest], *, limit: int) -> Digest:
        instruction = prompts.DIGEST[period].format(chars=limit)
        text = redact(_render_items(items))
        tag = "summaries-" + fence.nonce(text)
        prompt = prompts.DIGEST_INPUT.format(notes=prompts.NOTES, instruction=instruction, period=label, items=text, tag=tag)
        text = self._ask(prompts.SYSTEM, prompt).strip()
        if not text:
            raise SummarizerError(f"the summariser returned nothing for {label}")
        merged = merge(items)
        return Digest(clip(text, limit) if period != "month" else text[:limit],
                      *(getattr(merged, k) for k in DIGEST_LISTS))


@dataclass
class AnthropicSummarizer(_Model):
    """Claude through the `anthropic` SDK (extra: memdir[anthropic]); key from ANTHROPIC_API_KEY."""

    name: str = "anthropic"

    def _ask(self, system: str, user: str) -> str:
        try:
            import anthropic
        except ImportError:
            raise InvalidArgument("the anthropic summariser needs the SDK: pip install 'memdir[anthropic]'") from None
        client = anthropic.Anthropic(api_key=self.api_key, base_url=self.base_url, max_retries=1)
        try:
            reply = client.messages.create(model=self.model, max_tokens=self.max_tokens, system=system,
                                           messages=[{"role": "user", "content": user}])
        except anthropic.APIError as e:
            raise provider_error("Anthropic", e) from None
        self.usage["input_tokens"] += reply.usage.input_tokens
        self.usage["output_tokens"] += reply.usage.output_tokens
        self.usage["calls"] += 1
        return "".join(getattr(block, "text", "") for block in reply.content)


@dataclass
class OpenAISummarizer(_Model):
    """Any OpenAI-compatible chat endpoint through the `openai` SDK (extra: memdir[openai]).

    Ollama, vLLM and llama.cpp: set `base_url` (e.g. http://localhost:11434/v1); the key
    comes from OPENAI_API_KEY (a placeholder is sent when the server needs none).
    """

    name: str = "openai"

    def _ask(self, system: str, user: str) -> str:
        try:
            import openai
        except ImportError:
            raise InvalidArgument("the openai summariser needs the SDK: pip install 'memdir[openai]'") from None
        key = self.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        client = openai.OpenAI(api_key=key, base_url=self.base_url, max_retries=1)
        try:
            reply = client.chat.completions.create(model=self.model, max_tokens=self.max_tokens, messages=[
                {"role": "system", "content": system}, {"role": "user", "content": user}])
        except openai.OpenAIError as e:
            raise provider_error("OpenAI-compatible", e) from None
        if reply.usage is not None:
            self.usage["input_tokens"] += reply.usage.prompt_tokens
            self.usage["output_tokens"] += reply.usage.completion_tokens
        self.usage["calls"] += 1
        if not reply.choices:
            raise SummarizerError("the OpenAI-compatible API returned no choices")
        return reply.choices[0].message.content or ""


@dataclass(frozen=True)
class Config:
    """`[summarizer]` in memdir.toml, overridden by MEMDIR_SUMMARIZER, MEMDIR_SUMMARIZER_MODEL, _BASE_URL."""

    provider: str = "extractive"
    model: str = ""
    base_url: str | None = None
    max_tokens: int = 1024


def load(table: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Summarizer:
    """The configured summariser (the extractive one unless a provider is named)."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = dict(table or {})
    known = {f.name for f in fields(Config)}
    for key in list(values):
        if key not in known:
            raise InvalidArgument(f"memdir.toml [summarizer]: unknown setting {key!r}; known: {', '.join(sorted(known))}")
    for key in known:
        env = "MEMDIR_SUMMARIZER" if key == "provider" else f"MEMDIR_SUMMARIZER_{key.upper()}"
        if environ.get(env):
            values[key] = int(environ[env]) if key == "max_tokens" else environ[env]
    cfg = Config(**values)
    if cfg.provider == "extractive":
        return Extractive()
    if cfg.provider not in ("anthropic", "openai"):
        raise InvalidArgument(f"summarizer provider {cfg.provider!r} is not extractive, anthropic or openai")
    if not cfg.model:
        raise InvalidArgument(f"the {cfg.provider} summariser needs a model: set model in [summarizer] or MEMDIR_SUMMARIZER_MODEL")
    cls = AnthropicSummarizer if cfg.provider == "anthropic" else OpenAISummarizer
    return cls(model=cfg.model, base_url=cfg.base_url, max_tokens=cfg.max_tokens)
