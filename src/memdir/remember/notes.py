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
from dataclasses import dataclass

SAME = 0.6  # share of content words two items must share (of the smaller) to be one line
RELATED = 0.34  # ... to be one theme

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


def pleasantry(text: str) -> bool:
    """Whether a sentence is only courtesy or acknowledgement ("Thanks!", "Great, that works.", "Yes, please
    continue", "This looks great", "Fair enough") and asks for no work."""
    if _PLEASANTRY.match(text.strip()):
        return True
    words = _TOKEN.findall(text.lower().replace("\u2019", "'"))
    return bool(words) and len(words) <= 12 and all(w.strip("'") in _ACK_WORDS for w in words) \
        and not re.search(r"[0-9/\\_`]|\w\.\w", text)


def third_person(text: str) -> str:
    """A learning about the user in the third person: "I prefer email" -> "The user prefers email"."""
    out = " ".join(text.split())
    for rx, to in _PERSON:
        out = rx.sub(to, out)
    out = _PLAIN_S.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}es", out)  # "the user wishs" -> "wishes"
    out = out.replace("the user haves", "the user has").replace("the user dos", "the user does")
    out = out.replace("the user gos", "the user goes")
    if not out:
        return out
    out = _LEAD.sub("", out)  # "One more thing: the user prefers tabs" -> "the user prefers tabs"
    if not out.lower().startswith("the user"):
        out = "The user asked: " + out[0].lower() + out[1:]
    return out[0].upper() + out[1:]


_LABEL = re.compile(r"^(?:still open|open|todo|to do|next steps?|follow[- ]up|note)\s*:\s*", re.IGNORECASE)
_ASK = re.compile(r"^(?:(?:please|pls|kindly|can you|could you|would you|will you|can we|could we|let's|i need you to|"
                  r"i want you to|i'd like you to|go ahead and)\s+)+", re.IGNORECASE)


def request(text: str) -> str:
    """What was asked, as a note: "please fix the webhook" -> "fix the webhook" (and "Still open: x" -> "x")."""
    return _ASK.sub("", _LABEL.sub("", " ".join(text.split()))).rstrip(" ?.!")


def first_person(text: str) -> bool:
    """Whether a line still speaks as the user ("I", "my", "me")."""
    return bool(_FIRST_PERSON.search(text))


def content(text: str) -> set[str]:
    """Content words of an item (lower case, no function words, no count), for comparing items."""
    text = _COUNT.sub("", text)
    return {w.removesuffix("'s") for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2 and not w.isdigit()}


def count_of(text: str) -> tuple[str, int]:
    """An item and the days it stands for (its "— N days" suffix, else 1)."""
    m = _COUNT.search(text)
    return (text[: m.start()], int(m.group(1))) if m else (text, 1)


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


@dataclass
class Item:
    """One line of notes and on how many days it came up."""

    text: str
    count: int
    words: set[str]

    def render(self) -> str:
        return f"{self.text} — {self.count} days" if self.count > 1 else self.text


def fold(texts: Iterable[str], *, add: bool = True) -> list[Item]:
    """Near-duplicate items as one, the first wording kept and the counts added (or, inside one
    session, the largest kept: `add=False`), in first-seen order."""
    out: list[Item] = []
    for raw in texts:
        text, n = count_of(" ".join(raw.split()).rstrip(" .;"))
        text = request(text)
        if not text or pleasantry(text):
            continue
        words = content(text)
        same = next((i for i in out if (words and _overlap(words, i.words) >= SAME) or i.text.lower() == text.lower()), None)
        if same is None:
            out.append(Item(text, n, words))
        else:
            same.count = same.count + n if add else max(same.count, n)
            same.words |= words
    return out


def across(lists: Iterable[Sequence[str]], *, add: bool = True) -> list[Item]:
    """Items of several periods folded: a repeat inside one counts once, across them the counts add up
    (`add=False`: the sessions of one day, which count as one)."""
    return fold((i.render() for texts in lists for i in fold(texts, add=False)), add=add)


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
