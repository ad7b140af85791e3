"""Recall without a tool call: handlers for Claude Code's `SessionStart` and `UserPromptSubmit` hooks.

`memdir hook claude-code` reads a hook event from stdin and calls the handler
for its `hook_event_name` with the memory and the event's JSON; a handler
returns the JSON to print (Claude Code's `hookSpecificOutput` with
`additionalContext`), or None to add nothing.

- `SessionStart` (sources startup, resume, clear, compact): the layer-1
  context (pinned files, feedback memories, the index).
- `UserPromptSubmit`: a few lines of the memories that match the prompt,
  within 800 tokens, and only when the best of them matches well enough:
  most prompts of a working session ("ok", "run the tests again") get
  nothing, so recall costs no tokens when it has nothing to say.

"Well enough" is what search calls sure, not a score: a hit must hold
PROMPT_COVER of the prompt's weight (`search/evidence.py`: each word weighs
its inverse document frequency, a word no file holds weighs most, words that
name no topic weigh nothing), a share that means the same in a memory of 5
files and of 100,000, where a BM25 floor does not. It is search's own bar for a
sure hit (`search/confidence.py`): a weaker hit is ranked for whoever asks, never
put in front of a model unasked. A prompt of several sentences or clauses is also
searched clause by clause (`confidence.clauses`): "Quick question before I start
on the tests today: when is the flock launch?" holds its question in its last
clause, and the words around it weigh the most, as no file holds them (with that
preamble before each labelled question the whole prompt alone injected the answer
for 1% of them at 0.6, 3% at 0.5; clause by clause 56%, and for every question
naming two topics or more as often as without it; a one-word query after a
preamble is no clause of its own). On `bench/precision.py`'s labelled memories a
quarter of the prompt (the bar until issue 30) added the answering file for 92%
of the prompts memory answers but added something to 46% of those it cannot
answer (most of them near-misses), 1.9 files a prompt; half of it added the
answer for 82%, something to 16% of the others; 0.6, with a value of the kind a
word asks for counting for it ("32 psi" for "pressure"), adds the answer for 80%
and something to 9% (chosen on half of the memories: `search/evidence.py`). Records of
past work come only for a question about past work or when no topic file is
sure, never the prompting session's own (`context`). A prompt of small talk
never searches: none of its words names a topic, or one does beside a word of
talk ("ok next ticket") in a prompt that asks nothing ("where do we keep the
plasters?" asks). The search is lexical even where the semantic layer is
installed: loading a model would take longer than the whole call may (about a
second in a new process).

A hook runs in a fresh process on every prompt, so the handlers count tokens
with the calibrated estimate: loading a real tokenizer would take longer
than the whole call may.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import tokens
from ..search.evidence import COVER, GENERIC
from ..search.text import STOPWORDS, stem
from . import startup
from .context import MIN_BUDGET, Context, build

if TYPE_CHECKING:
    from ..core.memdir import Memdir

PROMPT_BUDGET = 800
PROMPT_COVER = COVER  # the share of a prompt's weight a recalled memory holds: search's bar for a sure hit
PROMPT_HITS = 5
MAX_PROMPT_CHARS = 2000  # a pasted log is searched by its start
MAX_CHARS = 10_000  # Claude Code shows longer hook output as a preview, not in full

# Words of talk with an agent that carry no topic: function words, acknowledgements, greetings and
# steering. Written from general knowledge of such talk, not fitted to the benchmark's prompts.
SMALL_TALK = frozenset("""
a an the this that these those it its i me my mine myself we us our ours you your yours he him his she her hers
they them their theirs being doing having nor because while although though onto under after before between
through during further once whom whose each every both either neither own same
am is are was were be been do does did done have has had will would can could should shall may might must
and or but so if then than of to in on at by for with from about as into up down out off over again just
what which who when where why how there here some any all more most other such only very too also
ok okay k yes yeah yep yup no nope nah not sure fine right alright please thanks thank thx ty cheers welcome
hi hello hey morning afternoon evening night bye goodbye later
good great nice cool perfect awesome amazing excellent wonderful brilliant lovely fantastic super sweet neat wow
lol haha hah hmm hm huh oh ah oops ugh meh yay
go ahead continue keep going carry proceed start stop wait pause hold resume finish done retry try
sounds looks seems seem work works worked working didn didnt doesn doesnt don dont isn isnt won wont t s m ll ve re d
let lets take break back now soon today tonight tomorrow yesterday
think agree disagree mean means know understand understood got see get
exactly wanted want like love prefer need sorry excuse pardon mind
next else anything something everything nothing tell say said
""".split())
_WORD = re.compile(r"\w+")
# The same talk in the scripts written without spaces, whole prompts of it ("好的", "ありがとう", "고마워요", "โอเค"):
# a pair of such a word is a word of a memory too (好的 in "好的代码"), so only a prompt made of nothing else is talk.
_SPACELESS_TALK = re.compile("(?:" + "|".join(sorted("""
好的 好 谢谢 多谢 继续 可以了 可以 行 嗯 对 不对 再来一次 再来 没问题 收到 明白 知道了 辛苦了 稍等
ありがとう ありがとうございます 了解です 了解 はい いいね もう一回お願い お願い お願いします 大丈夫 なるほど ちょっと待って
고마워요 고마워 감사합니다 응 네 좋아 좋아요 잠깐만 잠깐 다시 해 줘 알겠어 알겠어요 ㅇㅋ 오케이 ㅋㅋ
ขอบคุณครับ ขอบคุณค่ะ ขอบคุณ โอเค ได้เลย ครับ ค่ะ
""".split(), key=len, reverse=True)) + ")+")
_ASKING = frozenset("what which who whom whose when where why how".split())
# The words of talk itself (acknowledgements, greetings, steering), not the function words every sentence has.
_CHAT = SMALL_TALK - STOPWORDS - frozenset("t s m ll ve re d didn didnt doesn doesnt don dont isn isnt won wont".split())


def session_start(md: Memdir, payload: dict[str, Any], *, index: bool = True) -> dict[str, Any] | None:
    """SessionStart: what the agent should know before the first prompt; on a resume only what the conversation
    lacks, read from its transcript; after a compaction all of it again."""
    session, source, where = payload.get("session_id"), payload.get("source"), payload.get("transcript_path")
    return _output("SessionStart", startup.context(md, session if isinstance(session, str) else None,
                                                   source=source if isinstance(source, str) else "startup", index=index,
                                                   transcript=Path(where) if isinstance(where, str) and where else None))


def user_prompt_submit(md: Memdir, payload: dict[str, Any], *, budget: int = PROMPT_BUDGET,
                       cover: float = PROMPT_COVER) -> dict[str, Any] | None:
    """UserPromptSubmit: the lines of memory that match the prompt, when some hold enough of it."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or prompt.lstrip().startswith("/") or small_talk(prompt):
        return None  # a slash command is for Claude Code itself
    query = prompt[:MAX_PROMPT_CHARS]
    if not indexed(md):
        return None
    session = payload.get("session_id")
    shown = _context(md, query, budget, layers=(3,), k=PROMPT_HITS, cover=cover, mode="lexical",
                     session=session if isinstance(session, str) else None)
    startup.used(md, [i.path for i in shown.included])  # what orders feedback at the next start
    return _output("UserPromptSubmit", shown.text)


def indexed(md: Memdir) -> int:
    """How many files the lexical index holds (none: nothing to recall).

    Read from the index, which a new process trusts when its seq is the
    store's; the catalog is not loaded, which would cost more than the search.
    """
    return md.count()


def small_talk(prompt: str) -> bool:
    """Whether the prompt is small talk: no word that names a topic ("ok, thanks!", "you're the best"),
    or one beside a word of talk ("ok next ticket", "nice, ship it") in a prompt that asks nothing: a question
    naming one thing ("where do we keep the plasters?", "why didn't we go for granite?") asks about a memory."""
    words = _WORD.findall(prompt.lower())
    topical = [w for w in words if w not in SMALL_TALK and stem(w) not in GENERIC]
    if not topical or _SPACELESS_TALK.fullmatch(_bare(prompt)):
        return True
    return len(topical) < 2 and any(w in _CHAT for w in words) and not asks(prompt, words)


def _bare(prompt: str) -> str:
    """The prompt without spaces, punctuation and symbols (Thai's vowel marks stay: they are no word characters)."""
    return "".join(c for c in prompt.lower() if not c.isspace() and unicodedata.category(c)[0] not in "PSZC")


def asks(prompt: str, words: list[str]) -> bool:
    """Whether a prompt is a question: it ends with a question mark or starts with a question word."""
    return prompt.rstrip().endswith(("?", "？")) or bool(words and words[0] in _ASKING)


def _context(md: Memdir, query: str | None, budget: int, **options: Any) -> Context:
    """The context, within `budget` tokens and MAX_CHARS characters (a smaller budget if need be)."""
    shown = build(md, query, budget=budget, tokenizer=tokens.ESTIMATE, **options)
    while len(shown.text) > MAX_CHARS and budget > MIN_BUDGET:
        budget = max(MIN_BUDGET, min(budget - 1, int(budget * MAX_CHARS / len(shown.text))))
        shown = build(md, query, budget=budget, tokenizer=tokens.ESTIMATE, **options)
    return shown


def _output(event: str, text: str) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
