"""Roll-ups a person would keep without a model: repeats merged with a count, themes from what was said.

The extractive summariser (`summarize.Extractive`) keeps sentences; these
functions make notes of them. What a person writes in a diary differs from
a transcript in four ways, each a small rule here:

- pleasantries are not work: "Thanks.", "Great, that works!" go (`pleasantry`);
- the same request over many days is one line with a count: near-duplicates
  (most of their content words shared) merge, and the count rides along in the
  text ("fix the staging webhook signature — 11 days"), so the next roll-up
  adds it up (`fold`). Days, not sessions, are counted: a session is often
  captured twice (before a compaction and at its end), a day never is;
- a learning is about the user, in the third person: "I prefer updates by
  email" becomes "The user prefers updates by email" (`third_person`);
- a month's themes are clusters of what was said, named by the content words
  its items share, not by the first word of a sentence (`themes`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

SAME = 0.6  # share of content words two items must share (of the smaller) to be one line
RELATED = 0.34  # ... to be one theme
SOURCES = 5  # sessions a merged learning names at most (then how many more)

_WORD = re.compile(r"[a-z0-9][a-z0-9'_-]*")
_COUNT = re.compile(r"\s+—\s+(\d+) (?:days?|sessions?)$")
_STOP = frozenset("""a an the and or but if then so of to in on at by for with from as is are was were be been being it its
this that these those i you he she we they me my your our their them us do does did done not no yes can could should
would will just also very more most some any all each every into out up down over about than too only own same
here there when where which who whom what why how again once let's lets use used using get got make made need needs
please thanks thank ok okay now still user asked""".split())

# A sentence that is only courtesy or acknowledgement: greetings, thanks, praise, assent, sign-offs.
_PLEASANTRY = re.compile(
    r"^(?:(?:hi|hello|hey|good (?:morning|afternoon|evening)|thanks?(?: you)?(?: so much| a lot)?|thx|ty|cheers|great|"
    r"nice|cool|perfect|awesome|excellent|brilliant|lovely|wonderful|amazing|ok(?:ay)?|sure|yes|yeah|yep|alright|right|"
    r"got it|sounds good|looks good(?: to me)?|lgtm|that works|that's it|that's great|that's perfect|well done|"
    r"good job|great job|nice work|bye|see you|have a (?:good|nice) (?:day|evening|weekend)|you're welcome|"
    r"no problem|np|much appreciated|appreciate it|all good|that helps|that helped)[\s,.!:;)(-]*)+$",
    re.IGNORECASE,
)

# First person to third, most specific first; the subject is the user whose memory this is.
_PERSON: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rx, re.IGNORECASE), to)
    for rx, to in (
        (r"^(?:no|nope|actually|wait|hmm|well|so|and|also|oh|ok(?:ay)?)[,.!]?\s+", ""),
        (r"^please\s+", ""),
        (r"^call me (\w+)", r"the user goes by \1"),
        (r"^my\b", "the user's"),
        (r"\bi'd (?:prefer|rather)\b", "the user would rather"),
        (r"\bi would (?:prefer|rather)\b", "the user would rather"),
        (r"\bi don't\b", "the user doesn't"),
        (r"\bi do not\b", "the user does not"),
        (r"\bi'm\b", "the user is"),
        (r"\bi am\b", "the user is"),
        (r"\bi've\b", "the user has"),
        (r"\bi'll\b", "the user will"),
        (r"\bi (prefer|like|love|hate|want|need|use|work|live|go|say|mean|think|find|keep|get)\b", r"the user \1s"),
        (r"\bi (always|usually|never|often|only|rarely) (\w+)\b", r"the user \1 \2s"),
        (r"\bi\b", "the user"),
        (r"\bmy\b", "their"),
        (r"\bmine\b", "theirs"),
        (r"\bmyself\b", "themselves"),
        (r"\bme\b", "them"),
        (r"\bcall them\b", "call the user"),
    )
)
_LEAD = re.compile(r"^[^:]{0,40}:\s*(?=the user\b)", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)
_PLAIN_S = re.compile(r"\b(the user (?:always |usually |never |often |only |rarely )?)(\w+?)(ss|sh|ch|x|o)s\b")


# Words that, alone, make a sentence an acknowledgement: assent, praise, thanks, "go on". A sentence made only of
# these ("Yes, please continue", "This looks great", "Fair enough", "ok do it") asks for nothing new.
_ACK_WORDS = frozenset("""yes yeah yep yup ya sure ok okay k kk alright right fine good great nice cool perfect awesome
excellent brilliant lovely wonderful amazing fantastic superb neat sweet super thanks thank thx ty cheers please pls
plz continue proceed go ahead on keep going carry do it that this that's it's looks look seems sounds is are was works
worked working fair enough makes make sense agreed agree correct exactly true indeed got understood understand see
lgtm wow love well done job work so much a lot very really much appreciated appreciate all hmm hm ah oh now then let's
lets let us the plan with me to for you go for ship approved approve confirm confirmed same here thats its there we be
like an as i yup noted great""".split())
_TOKEN = re.compile(r"[a-z']+")


# The same in Japanese, Chinese and Korean: thanks, assent, praise and "go on", one or more ("好的，谢谢！", "네 좋아요").
_CJK_ACK = re.compile(r"^(?:(?:ありがとう(?:ございます|ございました)?|どうも|了解(?:です|しました)?|(?:わ|分)かりました|いいね|"
                      r"いいです(?:ね)?|完璧(?:です)?|素晴らしい(?:です)?|助かります|はい|ええ|うん|(?:よろしく)?お願いします|"
                      r"続けて(?:ください)?|進めて(?:ください)?|大丈夫(?:です)?|"
                      r"谢谢(?:你|您)?|多谢|(?:非常)?感谢|好的|好吧|好|行|可以|没问题|很好|太好了|不错|完美|是的|对|嗯+|收到|"
                      r"明白了?|知道了|(?:请)?继续|辛苦了|감사합니다|고마워(?:요)?|고맙습니다|좋아요|좋아|좋습니다|네|예|응|"
                      r"알겠습니다|알겠어요|알았어(?:요)?|계속(?:해 ?주세요|하세요|해)?|진행해 ?주세요|완벽해요|괜찮아요|맞아요|"
                      r"수고하셨습니다|ok(?:ay)?)[\s!！。.、,，~〜…]*)+$", re.IGNORECASE)


def pleasantry(text: str) -> bool:
    """Whether a sentence is only courtesy or acknowledgement ("Thanks!", "Great, that works.", "Yes, please
    continue", "This looks great", "Fair enough", "ありがとう！") and asks for no work."""
    if _PLEASANTRY.match(text.strip()) or _CJK_ACK.match(text.strip()):
        return True
    words = _TOKEN.findall(text.lower().replace("\u2019", "'"))
    return bool(words) and len(words) <= 12 and all(w.strip("'") in _ACK_WORDS for w in words) \
        and not re.search(r"[0-9/\\_`]|\w\.\w", text)


def third_person(text: str) -> str:
    """A learning about the user in the third person: "I prefer email" -> "The user prefers email"; "please never
    use dark themes" -> "The user wants the agent to never use dark themes" (`learning`)."""
    return learning(text, "preferences") or ""


def _first_to_third(text: str) -> str:
    """A sentence the user said of themselves ("I…", "my…", "call me…") in the third person."""
    out = " ".join(text.split())
    for rx, to in _PERSON:
        out = rx.sub(to, out)
    out = _PLAIN_S.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}es", out)  # "the user wishs" -> "wishes"
    out = out.replace("the user haves", "the user has").replace("the user dos", "the user does")
    out = out.replace("the user gos", "the user goes")
    if not out:
        return out
    out = _LEAD.sub("", out)  # "One more thing: the user prefers tabs" -> "the user prefers tabs"
    return out[0].upper() + out[1:]


# How a person's own words become a note about them: their pronouns in the third person (the agent they spoke to
# named as such), the fillers a sentence opens with dropped.
_FILLER = re.compile(r"^(?:(?:no|nope|actually|wait|hmm|well|so|and|also|oh|ok(?:ay)?|yes|yeah|right|but|then|and then"
                     r"|that's wrong|that is wrong|that's not right|wrong)\b[\s,.!:;—–-]*"
                     r"|(?:不对|不是的|错了|不|好的|好|嗯|那么?|还有|另外|いいえ|いや|違います|違う|はい|じゃあ|それと|あと"
                     r"|아니요|아니오|아뇨|아니|네|음|그럼|그리고)"
                     r"[\s,.!:;—–，、。！：；]+)+", re.IGNORECASE)
_VERB = r"(?:prefer|like|love|hate|want|need|use|work|live|go|say|mean|think|find|keep|get|add|run|ask|check|test|deploy" \
        r"|commit|push|write|read|know|see|own|pay|drive|cook|eat|buy|ride|expect|care|plan|try|look|do|have)"
_REPORTED: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rx, re.IGNORECASE), to)
    for rx, to in (
        (r"\bi'm\b|\bi am\b", "the user is"), (r"\bi've\b", "the user has"), (r"\bi'll\b", "the user will"),
        (r"\bi'd\b", "the user would"), (r"\bi don't\b", "the user doesn't"), (r"\bi do not\b", "the user does not"),
        (r"\b(did|do|does|will|would|can|could|should|shall|may|might|must|to|didn't|don't|won't|can't|let) i\b",
         r"\1 the user"),  # "what did I ask" -> "what did the user ask"
        (r"\bi (always|usually|never|often|only|rarely|also) (" + _VERB + r")\b", r"the user \1 \2s"),
        (r"\bi (" + _VERB + r")\b", r"the user \1s"), (r"\bi\b", "the user"), (r"\bmy\b", "their"),
        (r"\bmine\b", "theirs"), (r"\bmyself\b", "themselves"), (r"\bme\b", "the user"),
        (r"\bwe're\b", "they're"), (r"\bwe've\b", "they've"), (r"\bwe'll\b", "they'll"), (r"\bwe\b", "they"),
        (r"\bour\b", "their"), (r"\bours\b", "theirs"), (r"\bus\b", "them"),
        (r"\byou're\b", "the agent is"), (r"\byou've\b", "the agent has"), (r"\byour\b", "the agent's"),
        (r"\byou\b", "the agent"),
    )
)
_REMEMBER = re.compile(r"^(?:please\s+)?(?:remember|keep in mind|note|for future reference)(?:\s+that|\s+this)?[:,]?\s+(.+)$",
                       re.IGNORECASE)
_FROM_NOW = re.compile(r"^(from now on|going forward|in (?:the )?future|next time|every time|each time)[,:]?\s+(.+)$",
                       re.IGNORECASE)
_ALWAYS = re.compile(r"^(?:please\s+)?(always|never)\s+(?!mind\b)(.+)$", re.IGNORECASE)
_DONT = re.compile(r"^(?:please\s+)?(?:don't|do not|dont|never)\s+(?!mind\b)(.+)$", re.IGNORECASE)
_PLEASE = re.compile(r"^(?:please|pls|kindly)\s+", re.IGNORECASE)
_SUBJECT = re.compile(r"^(?:i|we|you|they|he|she|it|this|that|these|those|the|a|an|my|our|your|there|here|what|why|how"
                      r"|when|which|who|each|every|all|some|no|not)\b", re.IGNORECASE)


_QUOTED = re.compile(r"(\"[^\"]*\"|\u201c[^\u201d]*\u201d|`[^`]*`)")


def statement(sentence: str) -> bool:
    """Whether a sentence states something (it opens with its subject: "we're still on pydantic 1.10") rather than
    asking for it ("tune the cache for report 2")."""
    return bool(_SUBJECT.match(unfilled(sentence)))


def reported(text: str) -> str:
    """A person's sentence as a note reports it: "I'll add the bill tomorrow" -> "the user will add the bill
    tomorrow"; their "we" and "our" are theirs, "you" is the agent."""
    parts = _QUOTED.split(" ".join(text.split()))  # what they quote stays as quoted
    for i in range(0, len(parts), 2):
        for rx, to in _REPORTED:
            parts[i] = rx.sub(to, parts[i])
    out = "".join(parts)
    if out[:1].islower() and text.strip()[:1].isupper():
        out = out[0].upper() + out[1:]  # "We still need…" -> "They still need…"
    return _PLAIN_S.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}es", out).replace("the user haves", "the user has") \
        .replace("the user dos", "the user does").replace("the user gos", "the user goes").replace("the user trys", "the user tries")


_OPENING = re.compile(r"[^\n]*?(?:[.!?](?=\s|$)|[。！？])")


def unacknowledged(text: str) -> str:
    """A person's turn without the acknowledgements it opens with ("Great, thanks. Now add the Dutch reply" ->
    "Now add the Dutch reply"); "" when it is only an acknowledgement."""
    text = text.strip()
    while text:
        m = _OPENING.match(text)
        first = m.group(0) if m else text.split("\n", 1)[0]
        if not pleasantry(first):
            return text
        text = text[len(first):].strip()
    return ""


def unfilled(text: str) -> str:
    """A sentence without the fillers it opens with ("ok, so", "no,", "actually,")."""
    return _FILLER.sub("", " ".join(text.split())).strip()


def learning(text: str, kind: str) -> str | None:
    """What the user stated or corrected, as a learning about them in the third person ("I prefer tabs" -> "The
    user prefers tabs"; "from now on, run ruff first" -> "The user wants the agent to run ruff first from now on";
    "remember that staging is eu-west-1" -> "The user noted that staging is eu-west-1"); None when nothing is left.
    `kind` is preferences or corrections. Never "The user asked": a request restated is not a learning."""
    said = unfilled(unacknowledged(text)).rstrip(" .!;。！；")
    said = re.sub(r"^[^:]{0,40}:\s*(?=(?:i|my|call me)\b)", "", said, flags=re.IGNORECASE)  # "One more thing: I…"
    if not said:
        return None
    if m := _REMEMBER.match(said):
        return _cap(f"the user noted that {reported(m.group(1))}")
    if m := _FROM_NOW.match(said):
        when, rest = m.group(1).lower(), _PLEASE.sub("", m.group(2))
        if _SUBJECT.match(rest):
            return _cap(f"the user said that {when} {reported(rest)}")
        return _cap(f"the user wants the agent to {reported(rest)} {when}")
    if m := _ALWAYS.match(said):
        return _cap(f"the user wants the agent to {m.group(1).lower()} {reported(m.group(2))}")
    if m := _DONT.match(said):
        return _cap(f"the user does not want the agent to {reported(m.group(1))}")
    if re.match(r"(?:i|my|call me)\b", said, re.IGNORECASE):
        return _first_to_third(said)
    if kind == "corrections":
        return _cap(f"the user corrected the agent: {reported(said)}")
    return _cap(f"the user said that {reported(said)}")


def _cap(text: str) -> str:
    return text[0].upper() + text[1:] if text else text


_LABEL = re.compile(r"^(?:still open|open|todo|to do|next steps?|follow[- ]up|note)\s*:\s*", re.IGNORECASE)
_ASK = re.compile(r"^(?:(?:please|pls|kindly|can you|could you|would you|will you|can we|could we|let's|i need you to|"
                  r"i want you to|i'd like you to|go ahead and)\s+)+", re.IGNORECASE)


def request(text: str) -> str:
    """What was asked, as a note: "please fix the webhook" -> "fix the webhook" (and "Still open: x" -> "x")."""
    return _ASK.sub("", _LABEL.sub("", " ".join(text.split()))).rstrip(" ?.!")


def first_person(text: str) -> bool:
    """Whether a line still speaks as the user ("I", "my", "me")."""
    return bool(_FIRST_PERSON.search(text))


# Where a learning came from, at the end of its line: "(session 5d0c9a7e, line 14)", and once notes have merged
# the same learning from several sessions, "(sessions 5d0c9a7e line 14; 0f6b3d85 message 3)".
_SOURCES = re.compile(r"\s+\((?:session (?P<one>[^();]+?(?:, (?:line|message) \d+)?)|sessions (?P<many>[^()]+))\)$")


AREA = re.compile(r"\s+\(in ([^()]+)\)$")  # where a session worked, after what it was about (`prose.worked_on`)


_WHERE = re.compile(r",? (?:line|message) \d+$")
_MORE = re.compile(r"^\+\d+ more$")


def sources_of(text: str) -> tuple[str, list[str]]:
    """An item without the sessions it names, and those (each "<session> line <n>", or "<session>")."""
    m = _SOURCES.search(text)
    if m is None:
        return text, []
    if m.group("one"):
        return text[: m.start()], [re.sub(r", ((?:line|message) \d+)$", r" \1", m.group("one"))]
    return text[: m.start()], [x.strip() for x in m.group("many").split(";") if x.strip()]


def sessions_of(text: str) -> list[str]:
    """The session ids an item names as where it came from."""
    return list(dict.fromkeys(_WHERE.sub("", x) for x in sources_of(count_of(text)[0])[1] if not _MORE.match(x)))


def with_sources(text: str, sources: Sequence[str]) -> str:
    """`text` naming the sessions (and lines) it came from."""
    if not sources:
        return text
    if len(sources) == 1:
        m = re.match(r"^(.*) ((?:line|message) \d+)$", sources[0])
        return f"{text} (session {m.group(1)}, {m.group(2)})" if m else f"{text} (session {sources[0]})"
    shown = list(sources[:SOURCES]) + ([f"+{len(sources) - SOURCES} more"] if len(sources) > SOURCES else [])
    return f"{text} (sessions {'; '.join(shown)})"


def content(text: str) -> set[str]:
    """Content words of an item (lower case, no function words, no count, not the sessions it names), for
    comparing items."""
    text = AREA.sub("", sources_of(_COUNT.sub("", text))[0])
    return {w.removesuffix("'s") for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2 and not w.isdigit()}


def count_of(text: str) -> tuple[str, int]:
    """An item and the days it stands for (its "— N days" suffix, else 1)."""
    m = _COUNT.search(text)
    return (text[: m.start()], int(m.group(1))) if m else (text, 1)


def overlap(a: set[str], b: set[str], strict: bool = False) -> float:
    """The share of content words two items have in common: of the smaller one, or (`strict`) of both."""
    if not a or not b:
        return 0.0
    return len(a & b) / (len(a | b) if strict else min(len(a), len(b)))


_overlap = overlap


@dataclass
class Item:
    """One line of notes, on how many days it came up, and the sessions it came from (a learning's)."""

    text: str
    count: int
    words: set[str]
    sources: list[str] = field(default_factory=list)

    def render(self) -> str:
        text = with_sources(self.text, self.sources)
        return f"{text} — {self.count} days" if self.count > 1 else text


def fold(texts: Iterable[str], *, add: bool = True, strict: bool = False) -> list[Item]:
    """Near-duplicate items as one, the first wording kept and the counts added (or, inside one
    session, the largest kept: `add=False`), in first-seen order."""
    out: list[Item] = []
    for raw in texts:
        text, n = count_of(" ".join(raw.split()).rstrip(" .;"))
        text, sources = sources_of(text)
        text = request(text.rstrip(" .;"))
        if not text or pleasantry(text):
            continue
        words = content(text)
        same = next((i for i in out if (words and overlap(words, i.words, strict) >= SAME)
                     or i.text.lower() == text.lower()), None)
        if same is None:
            out.append(Item(text, n, words, list(sources)))
        else:
            same.count = same.count + n if add else max(same.count, n)
            same.words |= words
            same.sources += [x for x in sources if x not in same.sources]
    return out


def across(lists: Iterable[Sequence[str]], *, add: bool = True, strict: bool = False) -> list[Item]:
    """Items of several periods folded: a repeat inside one counts once, across them the counts add up
    (`add=False`: the sessions of one day, which count as one)."""
    return fold((i.render() for texts in lists for i in fold(texts, add=False, strict=strict)), add=add, strict=strict)


def themes(texts: Sequence[str], n: int = 3) -> list[tuple[str, Item, int]]:
    """The `n` largest clusters of related items: (its name, its most repeated item, the days in it)."""
    items = fold(texts)
    clusters: list[list[Item]] = []
    for item in items:
        home = next((c for c in clusters if any(_overlap(item.words, o.words) >= RELATED for o in c)), None)
        if home is None:
            clusters.append([item])
        else:
            home.append(item)
    ranked = sorted(clusters, key=lambda c: (-sum(i.count for i in c), -len(c)))
    out = []
    for cluster in ranked[:n]:
        words: Counter[str] = Counter()
        for i in cluster:
            words.update({w: i.count for w in i.words})
        common = sorted(words.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))  # ties: the longer, more specific word
        shared = [w for w, k in common if k > 1][:2] or [w for w, _ in common[:2]]
        best = max(cluster, key=lambda i: (i.count, -len(i.text)))
        out.append((" ".join(shared) or "misc", best, sum(i.count for i in cluster)))
    return out
