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
import shlex
import subprocess
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from .. import paths
from ..errors import InvalidArgument, MemdirError
from . import fence, notes, prompts, prose
from .transcripts import Transcript, redact, redacted
from .turns import first_request

LISTS = ("asked", "corrections", "preferences", "decisions", "broke", "open")
DIGEST_LISTS = ("learned", "decided", "worked_on", "broke", "open")
ITEM_CHARS = 200
MAX_ITEMS = 6
USER_SENTENCES = 6  # sentences of a user's turn read for cues
PASTED = 12  # a user's turn of more sentences than this is read by its first paragraph: the rest is pasted
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

# A sentence ends at . ! ? before a space, whatever case the next one starts in (people type in lower case), but
# not after an abbreviation or a lone letter ("e.g. this", "v. 2").
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])\s*(?=\S)")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|no|approx|dr|mr|mrs|ms|st|fig|ca|al|incl|resp)\.|(?:^|\s)\w\.)$",
                           re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9][a-z0-9'_-]*")
# Corrections in Chinese, Japanese and Korean: "wrong"/"no" opening the sentence, "not X but Y", "don't",
# "that's not", "I said", "you forgot", "why did you", "undo that".
_CJK_CORRECTION = (r"^(?:请)?(?:不对|不是的|错了|搞错了|你错了|说错了|不要|别(?![的人处])|不用)|不是.{1,40}?而是|[这那]不是|我说的是|你忘了|你漏了"
                   r"|你为什么|为什么你|(?:撤销|回滚|还原)(?:一下)?[这那它]|^(?:いいえ|いや|違います|違う|ちがう|ちがいます)(?:[、。！!,\s]|$)|ではなく|じゃなく"
                   r"|間違って(?:る|いる|います)|間違いです|ないで(?:ください|下さい)?[。！!]?$|忘れて(?:る|いる|います)|なんで.{1,40}?した|元に戻して"
                   r"|^(?:아니(?!면)|아뇨|틀렸|틀려|잘못)|아니라|아니고|말고|하지 ?마|잊었|빠뜨렸|빼먹었|왜 .{1,40}?했|되돌려")
# ... their preferences, opening the sentence ("from now on", "remember", "I prefer"), and what they leave for later.
_CJK_PREFERENCE = (r"^(?:请)?(?:以后(?!再)|今后|从现在(?:开始|起)|从今以后|记住|我(?:更)?(?:喜欢|偏好|习惯))|^(?:앞으로|이제부터"
                   r"|기억해)|선호해|^(?:今後|これからは|今度から|次から|覚えておいて)")
_CJK_OPEN = r"以后再|回头再|下次再|明天|稍后|晚点|待会|나중에|내일|다음에|後で|あとで|明日|また今度"
# ... and their decisions, never in a question: "(then) just use X", "(we) decided to use" opening a Chinese sentence;
# a Korean or Japanese one says it where its verb is, at the end ("X로 하죠", "X로 가자", "X にしましょう", "X で行こう").
_CJK_DECISION = (r"^(?!.*[？?]\s*$)(?:(?:那|那么)?(?:我们|咱们)?就(?:用|选|定|按|这么|这样)|(?:我们|咱们)?(?:决定|确定|选定)了?(?:用|采用|使用|选)"
                 r"|.*(?:으?로 ?(?:하죠|합시다|하자|할게요|갑시다|가죠|가자|정했|결정)|하기로 (?:했|하죠|해요)|결정했"
                 r"|[にで] ?(?:しましょう|しよう|します|決めました|決めます)|で ?(?:行き|いき)ましょう|で ?(?:行こう|いこう)"
                 r"|ことにしま(?:す|した)|ことにした))")
# What a person's sentence is, by its cue words; only the person's own words are read for these (the
# assistant's prose is never copied as a fact), and a turn's first sentence without a cue is its request.
_CUES: tuple[tuple[str, bool, re.Pattern[str]], ...] = tuple(
    (kind, later, re.compile(rx, re.IGNORECASE))
    for kind, later, rx in (  # later: only after the first request (the first asks, it corrects nothing yet)
        ("preferences", False, r"\b(?:i (?:prefer|like|love|hate|always|usually|never)|i'd (?:prefer|rather)"
                               r"|i would (?:prefer|rather)|i don't (?:like|want)|my preference|call me"
                               r"|(?:^|please )(?:always|never)\b|(?:always|never) (?:use|add|write|run|put|do|make|show"
                               r"|test|ask|commit|push|check|keep|include|mention)|from now on|going forward"
                               r"|in (?:the )?future|keep in mind|for future reference|remember(?: that| this|:)?\s+\w)(?! mind)"),
        ("corrections", True, r"(?:^(?:no|nope|wrong|stop|not)\b|\b(?:that's not|that is not|that's wrong|not what i"
                              r"|i said|you forgot|you missed|should(?:n't| not) have|why did you)\b|^(?:please )?(?:don't"
                              r"|do not|never) (?!mind\b)\w|\b(?:undo|revert) (?:that|this|it)\b)"),
        ("open", False, r"\b(?:later|tomorrow|next (?:week|month|time)|not yet|todo|to-do|for now|follow[- ]up"
                        r"|still (?:need|have) to|after lunch|another time|some other time|leave (?:it|that|this|the \S+"
                        r"(?: \S+)?) (?:for|until))\b"),
        ("decisions", True, r"\b(?:let's go with|let us go with|we'll go with|we will go with|(?:i|we) (?:decided|agreed"
                            r"|chose|settled)|decided to|the decision is|go with|going with|agreed on|settled on"
                            r"|the plan is)\b"),
    )
)
# The same cues in Chinese, Japanese and Korean, read only in a sentence that holds those scripts.
_CJK_CUES = {k: re.compile(rx) for k, rx in (("preferences", _CJK_PREFERENCE), ("corrections", _CJK_CORRECTION),
                                             ("open", _CJK_OPEN), ("decisions", _CJK_DECISION))}
_CJK_TEXT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_RECALL = re.compile(r"\b(?:do|did|can't|don't|do not) you remember\b|\bremember when\b", re.IGNORECASE)
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
        held = ""
        for part in _SENTENCE.split(line.strip().lstrip("-*> ").strip()):
            part = " ".join(f"{held} {part}".split())
            if _ABBREVIATION.search(part):
                held = part  # not an end: the next piece belongs to this sentence
                continue
            held = ""
            if part:
                out.append(part)
        if held:
            out.append(held)
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


def shorten(text: str, limit: int = 80) -> str:
    """`text` cut at a word to fit `limit` characters (a title)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut).rstrip(" ,;:-—") + "…"


def request_of(t: Transcript) -> str | None:
    """The person's first real request: as the reader found it, else found in the turns (a transcript built by hand)."""
    got = t.meta.get("request") if "request" in t.meta else first_request(t.turns).get("request")
    return got if isinstance(got, str) else None


def title_of(t: Transcript) -> str:
    """The record's title: the person's first real request (its first sentence, with the statements of context
    before it where they fit), shortened; else what the harness titled the session; else what was done; and for a
    conversation in which the person asked nothing at all, the words it opened with, said to be no request. Never
    the assistant's words where the person asked something, never a placeholder."""
    request = request_of(t)
    text = notes.unfilled(request.split("\n\n", 1)[0]) if isinstance(request, str) else ""
    said = sentences(text)
    opener = next((n for n, x in enumerate(said) if not context(x)), 0)  # statements of context before the request
    if opener and len(" ".join(said[:opener + 1])) > 80 and not _BACK.search(said[opener]):
        return shorten(said[opener])  # they do not fit with it, and it stands alone ("fix it" needs them): the request
    if said:  # its first sentence when that asks or says enough, else as much of the request as fits
        enough = len(said[0]) >= 60 or len(said) == 1 or _ASKING.search(said[0]) or not notes.statement(said[0])
        return shorten(said[0] if enough else text)
    if isinstance(t.meta.get("summary"), str) and t.meta["summary"].strip():
        return shorten(t.meta["summary"])
    a = t.activity
    if a.files:
        return shorten("Changed " + ", ".join(a.files[:3]) + (f" and {len(a.files) - 3} more" if len(a.files) > 3 else ""))
    if a.commands:
        return shorten("Ran " + a.commands[0])
    opened = next((x.text for x in t.turns if x.role == "assistant" and not x.text.startswith("[tool ")), "")
    return shorten("A session without a request: " + " ".join(opened.split())) if opened else "A session without a request"


_ASKING = re.compile(r"^(?:please|pls|can you|could you|would you|will you|can we|could we|let's)\b|\?$", re.IGNORECASE)
_BACK = re.compile(r"^(?:(?:please|pls|can you|could you|would you|will you)\s+)?[a-z]+(?:\s+(?:out|into|at|up|on))?\s+"
                   r"(?:it|this|that|why|them|these|those)\b|^why\W*$", re.IGNORECASE)  # a request that says what of them
_QUESTION = re.compile(r"^(?:what|why|how|when|where|which|who|whose)\b|^(?:i|we) (?:want|need|wish)\b|^(?:i|we)(?:'d| would) like\b",
                       re.IGNORECASE)  # a question without its mark, or a request in the first person
# Words that say something is wrong: a statement of it asks for it put right ("n't" too, and words that start so).
_WRONG = frozenset("not no never cannot still wrong broken break breaks slow missing instead".split())
_WRONG_STEMS = ("fail", "error", "crash", "bug")
_FINITE = frozenset("""is are was were am be been has have had do does did can could will would shall should may might
must use uses run runs ran work works live lives keep keeps go goes went got gets look looks seem seems say says said
come comes came like likes prefer prefers love loves hate hates know knows think thinks mean means own owns""".split())
_TOKEN = re.compile(r"[a-z]+(?:'([a-z]+))?")
_DID = re.compile(r"^(?:i|we) (?:just |already |also )?(?:\w+ed|was|were|did|had|ran|went|got|saw|found|wrote|said|told"
                  r"|took|thought|made|built|sent|left|read|tried)\b", re.IGNORECASE)  # what they did: no lasting fact
_PRONOUNS = frozenset("i'm i've i'd i'll we're we've we'd we'll".split())
_MINE = re.compile(r"^(?:i|i'm|i am|i've|i have|we|we're|we are|we've|my|our)\b", re.IGNORECASE)


def context(sentence: str) -> bool:
    """Whether a sentence only gives context ("I'm on macOS 14.", "The build was green yesterday."): it states
    something (opens with its subject and has a verb: "the flaky upload test" answers a question), asks nothing and
    says nothing is wrong. It is no request: the user's own facts are kept as facts, the rest is left out."""
    if not notes.statement(sentence):
        return False
    said = notes.unfilled(sentence)
    if _ASKING.search(said) or _QUESTION.search(said):
        return False
    verb, before = False, ""  # a verb: a common one, a contraction ("I'm"), a past form not after an article
    for m in _TOKEN.finditer(said.lower().replace("\u2019", "'")):
        word, tail = m.group(0), m.group(1)
        if word in _WRONG or tail == "t" or word.startswith(_WRONG_STEMS):
            return False
        verb = verb or word in _FINITE or tail in ("s", "re", "m", "ve", "d", "ll") or (
            len(word) >= 5 and word.endswith("ed") and before not in ("the", "a", "an"))
        before = word
    return verb


def provenance(t: Transcript, line: int | None) -> str:
    """Where a learning came from: the session and the line (or message) of its transcript."""
    sid = t.meta.get("record") or t.meta.get("session")
    where = f"{t.where} {line}" if line else ""
    return f" (session {sid}{', ' + where if where else ''})" if sid else f" ({where})" if where else ""


def _same(a: set[str], seen: list[set[str]], strict: bool = False) -> bool:
    """Whether an item says what one already kept says: most of its content words shared (`strict`, for learnings:
    most of both items' words, so two facts about one subject stay two)."""
    return bool(a) and any(b and notes.overlap(a, b, strict) >= notes.SAME for b in seen)


def _fact(sentence: str, title: str) -> bool:
    """Whether a statement of context is a fact the user stated of themselves ("I'm on macOS 14 with zsh", "our CI
    runs on GitHub Actions"), not what they did ("I read the code"), that says enough to keep: two content words,
    not the title's."""
    said = notes.unfilled(sentence)
    if not _MINE.match(said) or _DID.match(said):
        return False
    mine, head = notes.content(said) - _PRONOUNS, notes.content(title)
    return len(mine) >= 2 and len(mine & head) < 0.8 * len(mine)


def fragment(sentence: str) -> bool:
    """A sentence too short to stand alone ("NOT prod."): under four words and twelve characters, so a Chinese or
    Japanese sentence, one "word" between spaces, is not taken for one."""
    return len(sentence.split()) < 4 and len(sentence.strip()) < 12


@dataclass
class Extractive:
    """The default summariser: the facts a person would note, in order; no model."""

    name: str = "extractive"
    usage: Counter[str] = field(default_factory=Counter)

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary:
        """The record as a person would write it, from the person's own words: the first real request as the
        title; each later turn's request (acknowledgements are not requests); what they corrected or stated as a
        preference or fact, as learnings about them in the third person naming the session and line they came
        from; their decisions; what they left for later, and a last request nothing answered. What broke and what
        was done come from the tool calls (`Transcript.activity`), never from the assistant's prose."""
        t = transcript
        lists: dict[str, list[str]] = {k: [] for k in LISTS}
        title = title_of(t)
        request = request_of(t)
        kept = [set(notes.content(title))]  # what asked, open and decisions hold (a request is said once)
        learned: list[set[str]] = []
        first = next((i for i, x in enumerate(t.turns) if x.role == "user" and not x.text.startswith("[tool ")
                      and isinstance(request, str) and notes.unacknowledged(x.text).startswith(request[:40])), -1)
        answered, openers = -1, {}  # each user turn's opening request, where it was kept as one
        for i, turn in enumerate(t.turns):
            self.usage["input_tokens"] += estimate_tokens(turn.text)
            if turn.role == "assistant":
                answered = i
            if turn.role != "user" or turn.text.startswith("[tool "):
                continue
            text = notes.unacknowledged(turn.text)
            said = sentences(text)
            said = said[:USER_SENTENCES] if len(said) <= PASTED else sentences(text.split("\n\n", 1)[0])[:USER_SENTENCES]
            opener = next((n for n, x in enumerate(said) if not context(x)), len(said))  # statements before it: context
            for n, sentence in enumerate(said):  # past these (or the first paragraph of a long turn) is pasted text
                if notes.pleasantry(sentence) or sentence.startswith("[tool "):
                    continue
                kind = _kind(sentence, later=i > first)
                fact = kind is None and n < opener and _fact(sentence, title)  # "I'm on macOS 14 with zsh"
                if fact:
                    kind = "preferences"  # a fact the user stated, not a request
                elif kind is None and n == opener:
                    kind = "asked"  # a turn's opening request (its first sentence, unless that only gave context)
                if kind is None or (i == first and n == opener and kind in ("asked", "open", "decisions")):
                    continue  # the first request is the title
                if kind in ("preferences", "corrections") and not fact and n + 1 < len(said) and fragment(sentence):
                    sentence = f"{sentence} {said[n + 1]}"  # "NOT prod." is a fragment; with its next sentence, a fact
                item = self._item(t, kind, sentence, turn.line)
                words = set(notes.content(sentence))
                seen = learned if kind in ("preferences", "corrections") else kept
                if item and not _same(words, seen, seen is learned):
                    seen.append(words)
                    lists[kind].append(item)
                    if kind == "asked":
                        openers[i] = item
        last = max((i for i, x in enumerate(t.turns) if x.role == "user" and notes.unacknowledged(x.text)
                    and not x.text.startswith("[tool ")), default=-1)
        if last > answered and last in openers:  # the last request: nothing answered it
            lists["asked"].remove(openers[last])
            lists["open"].append(clip(notes.reported(openers[last])))
        out_lists = _bounded(lists, title, limit)
        out = SessionSummary(title, *(tuple(out_lists[k]) for k in LISTS))
        self.usage["output_tokens"] += estimate_tokens(title) + sum(estimate_tokens(x) for k in LISTS for x in out_lists[k])
        return out

    @staticmethod
    def _item(t: Transcript, kind: str, sentence: str, line: int | None) -> str | None:
        """A sentence as its list holds it: a learning in the third person with where it came from, what is open
        or decided in the reporting voice, a request as the person put it."""
        if kind in ("preferences", "corrections"):
            said = notes.learning(sentence, kind)
            return clip(said, ITEM_CHARS - 60) + provenance(t, line) if said else None
        said = notes.unfilled(sentence)
        if kind == "asked" and re.fullmatch(r"/[\w:.-]+", said):
            return None  # a bare slash command stands for the request after it
        if kind == "asked":
            return clip(said) or None  # a request stays in the person's words
        return clip(notes.reported(said)) or None

    def digest(self, period: str, label: str, items: Sequence[Digest], *, limit: int) -> Digest:
        for item in items:
            self.usage["input_tokens"] += estimate_tokens(item.text) + sum(
                estimate_tokens(x) for k in DIGEST_LISTS for x in getattr(item, k))
        merged = _notes(items, add=period != "day")
        lists = {k: getattr(merged, k) for k in DIGEST_LISTS}
        text = prose.paragraph(lists, limit) if period == "day" else prose.sentences(lists, limit) \
            if period == "week" else prose.themes(lists, limit)
        self.usage["output_tokens"] += estimate_tokens(text)
        return Digest(text, *(getattr(merged, k) for k in DIGEST_LISTS))


def _kind(sentence: str, *, later: bool) -> str | None:
    """What a person's sentence is: a preference, a correction (not in the first request), what is left for later,
    a decision; None for anything else."""
    cjk = _CJK_CUES if _CJK_TEXT.search(sentence) else {}
    for kind, only_later, rx in _CUES:
        if (later or not only_later) and (rx.search(sentence) or (kind in cjk and cjk[kind].search(sentence))) \
                and not (kind == "preferences" and _RECALL.search(sentence)):
            return kind
    return None


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


def _learned(item: str) -> str | None:
    """A learning in the third person (one a model wrote in the user's voice put there), else None."""
    return item if item.startswith("The user") else notes.learning(item, "preferences")


def _notes(items: Sequence[Digest], *, add: bool, cap: int = MAX_ITEMS * 2) -> Digest:
    """The lists as notes (`notes.py`): repeats merged with the days they came up on (`add`: items are days
    or weeks; else the sessions of one day), the most repeated first, no pleasantries, learnings in the
    third person."""
    out: dict[str, list[str]] = {}
    for k in DIGEST_LISTS:
        lists = [[y for x in getattr(i, k) if (y := _learned(x))] if k == "learned" else list(getattr(i, k))
                 for i in items]
        folded = notes.across(lists, add=add, strict=k == "learned")
        if k != "open":  # what is still open stays in the order it came; the rest by how often it came up
            folded = sorted(folded, key=lambda i: -i.count)
        out[k] = [i.render() for i in folded]
    return Digest("", *(tuple(v[-cap:] if k == "open" else v[:cap]) for k, v in out.items()))


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


# The agent CLIs a person already runs, as summarisers: the prompt goes in on standard input, the answer comes out
# on standard output, and the CLI's own login is used (memdir holds no key of its own).
AGENT_CLIS = {
    "claude": ["claude", "-p"],  # Claude Code's print mode reads the prompt from stdin
    "codex": ["codex", "exec", "--skip-git-repo-check", "-"],  # "-": the prompt from stdin
    "gemini": ["gemini", "-p", "Follow the instructions above; answer with what they ask for and nothing else."],
}
MODEL_FLAG = {"claude": "--model", "codex": "--model", "gemini": "--model"}
SUMMARIZING = "MEMDIR_SUMMARIZING"  # set for the CLI a summary runs in: its own session is no session to capture


@dataclass
class AgentCLI(_Model):
    """An agent CLI the person already runs (`claude -p`, `codex exec`, `gemini -p`, or any `command`) as the
    summariser: the redacted transcript and the prompt go in on standard input, in a fresh empty folder, with
    `MEMDIR_SUMMARIZING=1` in its environment; its standard output is the answer. A CLI that is missing, fails,
    or does not answer within `timeout` seconds is a `SummarizerError` saying so in memdir's own words (never its
    output, which may hold anything)."""

    command: tuple[str, ...] = ()
    timeout: float = 300.0
    name: str = "command"

    def _ask(self, system: str, user: str) -> str:
        argv = [*self.command, *([MODEL_FLAG[self.name], self.model] if self.model and self.name in MODEL_FLAG else [])]
        prompt = f"{system}\n\n{user}\n"
        with tempfile.TemporaryDirectory(prefix="memdir-summary-") as folder:
            try:
                done = subprocess.run(argv, input=prompt, capture_output=True, text=True, timeout=self.timeout,
                                      cwd=folder, env={**os.environ, SUMMARIZING: "1"}, check=False)
            except FileNotFoundError:
                raise SummarizerError(f"the {argv[0]} command is not installed (not found on PATH); install it or "
                                      "name another in [summarizer] command") from None
            except subprocess.TimeoutExpired:
                raise SummarizerError(f"the {argv[0]} command did not answer within {self.timeout:g} s; raise "
                                      "[summarizer] timeout") from None
            except OSError as e:
                raise SummarizerError(f"the {argv[0]} command could not be run ({e.strerror or type(e).__name__})") from None
        if done.returncode != 0:
            raise SummarizerError(f"the {argv[0]} command failed: exit status {done.returncode}")
        self.usage["calls"] += 1
        self.usage["input_tokens"] += estimate_tokens(prompt)
        self.usage["output_tokens"] += estimate_tokens(done.stdout)
        return done.stdout


@dataclass(frozen=True)
class Config:
    """`[summarizer]` in memdir.toml, overridden by MEMDIR_SUMMARIZER, MEMDIR_SUMMARIZER_MODEL, _BASE_URL, _COMMAND,
    _TIMEOUT."""

    provider: str = "extractive"
    model: str = ""
    base_url: str | None = None
    max_tokens: int = 1024
    command: str | list[str] | None = None  # the agent CLI to run: `provider = "command"`, or another preset's
    timeout: float = 300.0


def _agent_cli(cfg: Config) -> AgentCLI:
    """The agent CLI `[summarizer]` names: a preset (claude, codex, gemini) or `command`."""
    argv = shlex.split(cfg.command) if isinstance(cfg.command, str) else [str(x) for x in cfg.command or ()]
    if cfg.provider == "command" and not argv:
        raise InvalidArgument("the command summariser needs a command: set command in [summarizer], e.g. "
                              "command = \"claude -p\"")
    try:
        timeout = float(cfg.timeout)
        if not 0 < timeout <= 86_400:
            raise ValueError(timeout)
    except (TypeError, ValueError):
        raise InvalidArgument(f"[summarizer] timeout = {cfg.timeout!r} is not valid; give the seconds a summary may "
                              "take, e.g. 300") from None
    return AgentCLI(model=cfg.model, command=tuple(argv or AGENT_CLIS[cfg.provider]), timeout=timeout,
                    name=cfg.provider)


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
    if cfg.provider in AGENT_CLIS or cfg.provider == "command":
        return _agent_cli(cfg)
    if cfg.provider not in ("anthropic", "openai"):
        raise InvalidArgument(f"summarizer provider {cfg.provider!r} is not extractive, anthropic, openai, "
                              f"{', '.join(AGENT_CLIS)} or command")
    if not cfg.model:
        raise InvalidArgument(f"the {cfg.provider} summariser needs a model: set model in [summarizer] or MEMDIR_SUMMARIZER_MODEL")
    cls = AnthropicSummarizer if cfg.provider == "anthropic" else OpenAISummarizer
    return cls(model=cfg.model, base_url=cfg.base_url, max_tokens=cfg.max_tokens)
