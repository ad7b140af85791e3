"""Query words, their bounds, and finding the lines of a file that match them.

Queries are words, not query syntax: the words minus common function words,
ORed. Dropping words like "what" or "did" matters more for recall than the
BM25 variant (they match almost every file and drown the rare words that
carry the question). Symbols such as emoji are no words to a full-text
tokenizer, so they are kept apart and matched as plain substrings.

Scripts written without spaces between words (Chinese, Japanese, Thai and
their neighbours; Korean, whose words carry their particles) have no words a
tokenizer can find, so both sides see them as overlapping pairs of characters
(`grams`): the index stores `走行 行距 距離 離` for 走行距離. A query is typed as a
sentence (因子状态机的转移规则), so a query run is cut where a function word of
its script stands (的, 什么; Korean particles and endings come off the end of a
word: 줄바꿈은 -> 줄바꿈; Thai question words) and each piece asks for its pairs
one by one: a file holding more of them ranks higher. What keeps this from
matching anything is the evidence (`spaceless_weights`): each pair weighs its
idf, but a pair no file holds is the seam between two words (机的, 测手) when a
character of it stands in a pair some file holds, or in a Japanese particle
(hiragana), and weighs nothing; only a stretch of two or more characters no
file holds is a word the memory lacks, and weighs as such.

Words are folded to lower case without diacritics and reduced by the
Snowball English stemmer (Porter2, PyStemmer's): the FTS5 index and
PostgreSQL's tsvector are given the stems (`indexed`), so both backends stem
alike. `bench/stemmer.py` measured it on a word list: FTS5's
own `porter` merged 17 of 26 pairs of different words (production/product,
university/universe, general/generous, news/new, organ/organization) and missed
deploy/deployment; Porter2 merges 8 of them and every inflection and
derivation of the list, and the few words it merges with another word keep
stems of their own (`_APART`: 20 of the bench's 40 such pairs -> 0). Lines are found the way the index matches, in one pass
over the text, so the work is linear in the size of the file; words of the
spaceless scripts are found as they are written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

from ..errors import LimitExceeded

MAX_QUERY_BYTES = 4096
MAX_QUERY_TERMS = 64
SNIPPET_CHARS = 200
RANGE_LINES = 5  # a hit's line range: its best line to the end of its paragraph, at most this many lines more

# Word characters as SQLite's unicode61 tokenizer sees them: letters and digits; `_` separates.
_WORD = re.compile(r"[^\W_]+")
# Symbols worth searching for as text: emoji, dingbats, arrows and the like (So), with their joiners.
_SYMBOL = re.compile(r"[\U0001F000-\U0001FAFF\u2190-\u21FF\u2300-\u23FF\u2460-\u27BF\u2900-\u2BFF\u3030\u303D"
                     r"\u3297\u3299\u00A9\u00AE][\uFE0F\u200D\U0001F3FB-\U0001F3FF\U0001F000-\U0001FAFF\u2600-\u27BF]*")

# Scripts written without spaces between words (whole blocks, their marks included): Thai, Lao, Myanmar, Khmer,
# Hangul, the CJK radicals, kana and ideographs (with their extensions and compatibility forms), half-width kana.
SPACELESS = ("\u0E00-\u0EFF\u1000-\u109F\u1100-\u11FF\u1780-\u17FF\u2E80-\u2FDF\u3005-\u3007\u3021-\u3029"
             "\u3031-\u3035\u303B\u3040-\u30FF\u3130-\u318F\u31A0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F"
             "\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0003FFFF")
_RUN = re.compile(f"[{SPACELESS}]+")
_TERM = re.compile(f"[{SPACELESS}]+|[^\\W_{SPACELESS}]+")

# Function words that carry no topic: articles, pronouns, auxiliaries,
# prepositions, question words and fillers. Kept small on purpose: a word
# like "first" or "never" can be the point of a query.
STOPWORDS = frozenset(
    """
    a an the this that these those
    i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs
    am is are was were be been being do does did doing done have has had having
    will would shall should can could may might must
    and or but nor so if then than because while although though
    of to in on at by for with from about as into onto over under after before between through during
    up down out off again further once
    what which who whom whose when where why how
    there here some any all each every both either neither more most other such
    no not only just also very too own same
    """.split()
)

_stemmer = Stemmer.Stemmer("english")

# Function words cut out of a spaceless query run before it is paired: Chinese question words and particles,
# Thai question words and polite endings. Written from general knowledge of the languages, kept small: a word
# that can name a topic stays.
_CUT = ("为什么", "什么", "怎么样", "怎么办", "怎么", "怎样", "哪里", "哪个", "哪些", "哪儿", "哪天", "多少", "多久",
        "如何", "是不是", "是否", "有没有", "能不能", "会不会", "要不要", "可以", "应该", "需要", "时候", "一下", "东西",
        "事情", "的话", "以后", "之后", "之前", "多少个", "几个", "的", "了", "吗", "呢", "吧", "啊", "呀", "嘛",
        "เท่าไหร่", "เท่าไร", "เมื่อไหร่", "เมื่อไร", "ที่ไหน", "อย่างไร", "ยังไง", "อะไร", "หรือเปล่า", "ไหม", "ไหน",
        "ครับ", "ค่ะ", "คะ", "นะ")
# ... of which "how many" before what it counts (多少个因子) asks for a count of it (`Query.counts`).
_COUNT = re.compile("(?:多少|几)个([\u3400-\u4DBF\u4E00-\u9FFF]{2})")
_CUTTER = re.compile("|".join(sorted(_CUT, key=len, reverse=True)))
# Korean words carry their particles and endings: the longest of these comes off the end of a word of three or
# more syllables (줄바꿈은 -> 줄바꿈, 처리해 -> 처리); question words and bare verbs are no topic.
_KO_ENDINGS = tuple(sorted("""
에서는 에서도 에게서 으로는 으로도 으로 에서 에게 한테 께서 까지 부터 보다 처럼 마다 이랑 이나 하고 이라고 라고 이란 이라
하나요 했나요 인가요 인데요 이에요 예요 입니다 합니다 습니다 했어요 해야 해요 했어 하는 하면 해서 할까 되나요 돼요 되는 될까
나요 어요 아요 까요 는데 인가 의 은 는 이 가 을 를 에 와 과 도 만 로 랑 야 요 해 돼 죠 지 냐
""".split(), key=len, reverse=True))
_KO_STOP = frozenset("뭐 뭐야 뭘 무엇 언제 어디 어디야 어떻게 왜 누구 누가 얼마 얼마나 몇 좀 다 해 줘 해줘 알려줘 있어 없어 돼".split())
_HANGUL = re.compile("[\u1100-\u11FF\u3130-\u318F\uA960-\uA97F\uAC00-\uD7FF]+")
# Characters that are grammar more often than not: hiragana (Japanese particles and endings) and Chinese function
# characters. A pair no file holds that has one of them is a seam, not a word the memory lacks; they are not cut
# out of the query, as they also stand in words (重要, 性能), which count when a file holds them.
_HIRAGANA = re.compile("[\u3040-\u309F]")
_GRAMMAR = re.compile("[\u3040-\u309F要能会才就都也还在是有和与及或把被让给很太最更得着过又再我你他她它这那谁几个们该想去来啥咋一]")
_THAI = re.compile("[\u0E00-\u0E7F]+")


# Words Porter2 reduces to the stem of another word (production -> product, accountant -> account, customer ->
# custom): each family keeps a stem of its own, as Snowball keeps "news" apart from "new". The forms of a word
# listed here (plural, -ed, -ing, -ly) find it as Porter2 finds any word's; measured by `bench/stemmer.py`.
_APART = {family: stem for stem, families in {
    "production": "production", "productive": "productive productivity", "experiment": "experiment experimental",
    "animal": "animal", "anime": "anime", "apartment": "apartment", "department": "department",
    "business": "business", "customer": "customer", "polite": "polite politeness", "quite": "quite",
    "topping": "topping", "majority": "majority", "authority": "authority", "authoriz": "authorize authorization",
    "positive": "positive positivity", "relative": "relative", "security": "security", "accountant": "accountant",
    "engineer": "engineer",
}.items() for family in families.split()}
# How a listed word's forms end: what comes off before it is looked up, and what goes back on.
_FORMS = (("ies", "y"), ("ing", "e"), ("ing", ""), ("ed", ""), ("d", ""), ("es", ""), ("s", ""), ("ly", ""))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A folded word as the index stores it: lower case, no diacritics, its Porter2 stem (words of 1-2 letters kept),
    or its family's own stem where Porter2 would merge it with a different word (`_APART`)."""
    folded = fold(word)
    if len(folded) < 3:
        return folded
    for end, back in _FORMS:
        if folded.endswith(end) and (base := folded[: len(folded) - len(end)] + back) in _APART:
            return _APART[base]
    return _APART.get(folded) or str(_stemmer.stemWord(folded))


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Claude Code names a topic file `<type>_<topic>.md`: the type is no word of the topic (it is the file's type).
_TYPE_PREFIX = re.compile(r"^(?:user|feedback|project|reference)_(?=.)", re.I)


def name_words(path: str, name: str = "") -> str:
    """The words of a file's name a tokenizer does not find in `name` already, to index beside it as a title:
    `feedback_vercel-env-newline.md` gives `vercel env newline` (Claude Code's type prefix is no topic),
    `eventLoopLag.md` `event Loop Lag` (camelCase and snake_case split); words with digits (a turn's `D1-3`, a
    day's `2026-03-14`) are numbering, not words; "" when the name says it all."""
    stem = path.rsplit("/", 1)[-1]
    stem = _TYPE_PREFIX.sub("", stem[:-3] if stem.lower().endswith(".md") else stem)
    words = [w for w in _WORD.findall(_CAMEL.sub(" ", stem)) if not any(c.isdigit() for c in w)]  # no D1-3, 2026
    known = {fold(w) for w in _WORD.findall(name)}
    return " ".join(words) if any(fold(w) not in known for w in words) else ""


def fold(text: str) -> str:
    """Lower case without diacritics (what unicode61 does to every token)."""
    text = text.lower()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def spaceless(word: str) -> bool:
    """Whether a query word is in a script written without spaces (matched by its pairs, found as written)."""
    return _RUN.fullmatch(word) is not None


def pairs(run: str) -> list[str]:
    """The overlapping character pairs of a spaceless run (one character is itself)."""
    return [run[i : i + 2] for i in range(len(run) - 1)] or [run]


def grams(text: str) -> str:
    """Text as the full-text index is given it: each spaceless run as its pairs, then its last character.

    The last character makes a one-character query (a prefix of the pairs) find
    the run's end too. Text in other scripts is left as it is.
    """
    if text.isascii():
        return text
    return _RUN.sub(lambda m: " " + " ".join(pairs(m.group()) + ([m.group()[-1]] if len(m.group()) > 1 else [])) + " ",
                    text)


_LETTERS = re.compile(f"[^\\W_{SPACELESS}]+")


def indexed(text: str) -> str:
    """A field as the FTS5 index is given it: each word as its stem, each spaceless run as its pairs (`grams`)."""
    return grams(_LETTERS.sub(lambda m: stem(m.group()), text))


_NAME = re.compile(r"\b[A-Z][\w-]*\b")  # "Caroline's" names Caroline


def people(query: str) -> set[str]:
    """Capitalised words of the query that are not function words: likely names."""
    return {w for w in _NAME.findall(query) if w.lower() not in STOPWORDS and len(w) > 1}


def naming(names: Iterable[str]) -> re.Pattern[str]:
    """A pattern finding any of `names` as a word in a title, in any case ("elise" too)."""
    return re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class Query:
    """What a query asks for: the words to match (in order, no repeats) and the symbols; `pieces`, the spaceless
    pieces the query's pairs come from (their seams are weighed by `spaceless_weights`); `people`, its
    capitalised words (`people`: the names a title may hold)."""

    words: tuple[str, ...]
    symbols: tuple[str, ...]
    pieces: tuple[str, ...] = ()
    people: tuple[str, ...] = ()
    counts: tuple[str, ...] = ()  # what the query asks how many of: 因子 of 多少个因子 (`evidence.counted`)

    def __bool__(self) -> bool:
        return bool(self.words or self.symbols)

    @property
    def stems(self) -> frozenset[str]:
        """The stems of the words a tokenizer finds (not the spaceless ones)."""
        return frozenset(stem(w) for w in self.words if not spaceless(w))

    @property
    def needles(self) -> tuple[str, ...]:
        """What is found in a line as written: the symbols, the spaceless pieces and their pairs."""
        return tuple(dict.fromkeys(self.symbols + self.pieces + tuple(w for w in self.words if spaceless(w))))


def parse(query: str) -> Query:
    """The words and symbols of a query; `LimitExceeded` past the size bounds."""
    size = len(query.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise LimitExceeded(
            f"query is {size} bytes, over the {MAX_QUERY_BYTES}-byte limit; search for the few words that matter",
            limit=MAX_QUERY_BYTES, actual=size,
        )
    words = terms(query)
    symbols = tuple(dict.fromkeys(_SYMBOL.findall(query)))
    count = len(words) + len(symbols)
    if count > MAX_QUERY_TERMS:
        raise LimitExceeded(
            f"query has {count} distinct words, over the limit of {MAX_QUERY_TERMS}; search for the few words that matter",
            limit=MAX_QUERY_TERMS, actual=count,
        )
    return Query(tuple(words), symbols, tuple(dict.fromkeys(p for m in _TERM.finditer(query.lower())
                                                            if spaceless(m.group()) for p in cut(m.group()))),
                 tuple(sorted(people(query))), tuple(dict.fromkeys(_COUNT.findall(query))))


def terms(query: str) -> list[str]:
    """The words of a query that are worth matching, in order, without repeats: a spaceless run gives the
    pairs of its pieces (`cut`) but those of Japanese particles alone (hiragana), or itself if it is one character."""
    words: list[str] = []
    for m in _TERM.finditer(query.lower()):
        word = m.group()
        if spaceless(word):
            words += [g for piece in cut(word) for g in units(piece) if not _grammar(g) or _grammar(piece)]
        else:
            words.append(word)
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(kept))


def cut(run: str) -> list[str]:
    """The pieces of a spaceless query run worth pairing: the run without its function words (Chinese, Thai),
    a Korean word without its particle or ending, nothing for a Korean question word."""
    if _HANGUL.fullmatch(run):
        if run in _KO_STOP or run in _KO_ENDINGS:  # a question word, or a particle after a word in Latin letters
            return []
        for end in _KO_ENDINGS:
            if run.endswith(end) and len(run) - len(end) >= 2:
                stem = run[: -len(end)]
                return [] if stem in _KO_STOP else [stem]
        return [run]
    pieces = [p for p in _CUTTER.split(run) if p]
    return pieces if pieces or not run else [run]


def units(piece: str) -> list[str]:
    """What a query piece asks for: its pairs; in Thai, whose characters are letters and marks, its runs of three."""
    if _THAI.fullmatch(piece) and len(piece) > 3:
        return [piece[i : i + 3] for i in range(len(piece) - 2)]
    return pairs(piece)


def _grammar(text: str) -> bool:
    """Whether a piece is Japanese grammar alone (hiragana: particles and endings)."""
    return all(_HIRAGANA.match(c) for c in text)


def spaceless_weights(query: Query, df: Mapping[str, int], weight: Callable[[int], float]) -> dict[str, float]:
    """The evidence each spaceless word of `query` (its pairs) gives, where `df[w]` files hold `w`.

    A pair some file holds weighs `weight(df)`. A pair no file holds is a seam
    between two words when one of its characters stands in a pair some file
    holds, or is hiragana: it weighs nothing. A stretch of two or more
    characters no held pair touches is a word the memory lacks: its pairs weigh
    `weight(0)`, the most, as an English word no file holds does.
    """
    asked = set(query.words)
    out: dict[str, float] = {w: weight(int(df.get(w, 0))) for w in asked if spaceless(w) and len(w) == 1}
    for piece in query.pieces:
        grams = units(piece)
        if len(piece) < 2:
            continue
        size = len(grams[0])
        held = [int(df.get(g, 0)) > 0 or g not in asked for g in grams]  # a pair not asked for is grammar
        covered = [bool(_GRAMMAR.match(c)) for c in piece]
        for j, ok in enumerate(held):
            if ok:
                covered[j : j + size] = [True] * size
        for j, g in enumerate(grams):
            if g not in asked:
                continue
            n = int(df.get(g, 0))
            w = weight(n) if n or not any(covered[j : j + size]) else 0.0
            out[g] = max(out.get(g, 0.0), w)
    return out


def match_expression(words: Iterable[str]) -> str:
    """An FTS5 MATCH expression: every word as its quoted stem (the index holds stems: `indexed`), joined with OR;
    a spaceless word as the phrase of its pairs, a single spaceless character as a prefix."""
    out = []
    for w in words:
        quoted = '"' + (" ".join(pairs(w)) if spaceless(w) else stem(w)).replace('"', '""') + '"'
        out.append(quoted + " *" if spaceless(w) and len(w) == 1 else quoted)
    return " OR ".join(out)


# ---------------------------------------------------------------- lines


@dataclass(frozen=True)
class Spot:
    """Where a file matches best: the 1-based line, the range an agent should read, the text."""

    line: int
    end_line: int
    snippet: str


def _prefix(s: str) -> str:
    # A Porter stem keeps the start of its word, but may end in a letter the word lacks ("cry" -> "cri").
    return s if len(s) < 3 else s[: min(4, len(s) - 1)]


def best_line(body: str, query: Query) -> tuple[int, int] | None:
    """(0-based line of the body with the most distinct matches, offset of its first match), or None.

    One regex pass finds the words that could match (by the start of their
    stem), then each is stemmed exactly; symbols and spaceless words are found as substrings.
    The pass stops at the first line that has every word of the query.
    """
    folded = fold(body)
    if len(folded) != len(body):  # folding moved offsets (ligatures, dotted I): go line by line
        return _best_line_slow(body, query)
    stems, needles = query.stems, query.needles
    found: dict[int, tuple[set[str], int]] = {}  # line -> (what matched, first offset)
    line, at = 0, 0

    def add(pos: int, what: str) -> bool:
        nonlocal line, at
        line += body.count("\n", at, pos)
        at = pos
        got = found.setdefault(line, (set(), pos))[0]
        got.add(what)
        return len(got) == len(stems) + len(needles)

    if stems:
        starts = sorted({_prefix(s) for s in stems}, key=len, reverse=True)
        finder = re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(p) for p in starts) + r")[^\W_]*")
        for m in finder.finditer(folded):
            s = stem(m.group())
            if s in stems and add(m.start(), s) and not needles:
                break  # no line can match more
    if needles:
        events = sorted((m.start(), sym) for sym in needles for m in re.finditer(re.escape(sym), body))
        words = sorted((pos, w) for n, (got, pos) in found.items() for w in got)  # re-add in offset order
        found.clear()
        line, at = 0, 0
        for pos, what in sorted(events + words):
            add(pos, what)
    if not found:
        return None
    best = max(found, key=lambda n: (len(found[n][0]), -n))
    return best, found[best][1]


def _best_line_slow(body: str, query: Query) -> tuple[int, int] | None:
    stems = query.stems
    best: tuple[int, int, int] | None = None  # (count, line, offset)
    offset = 0
    for number, line in enumerate(body.split("\n")):
        found = {stem(w) for w in _WORD.findall(line)} & stems if stems else set()
        found |= {s for s in query.needles if s in line}
        if found and (best is None or len(found) > best[0]):
            best = (len(found), number, offset)
        offset += len(line) + 1
    return None if best is None else (best[1], best[2])


def _line_at(text: str, pos: int) -> tuple[int, int]:
    """[start, end) of the line holding offset `pos`."""
    end = text.find("\n", pos)
    return text.rfind("\n", 0, pos) + 1, len(text) if end < 0 else end


def spot(text: str, head: int, query: Query, fallback: str) -> Spot:
    """The best matching line of a file and the paragraph after it (line numbers of the whole file).

    `head` is the number of frontmatter lines before the body. When no body
    line matches, the frontmatter line that does (name, description, tags) is
    the spot; when only the file name matched, the spot is line 1 with the name.
    Work is linear in the size of the file: no split into lines.
    """
    body_start = 0
    for _ in range(head):
        nl = text.find("\n", body_start)
        body_start = len(text) if nl < 0 else nl + 1
    found = best_line(text[body_start:], query)
    if found is not None:
        number = head + found[0]
        start, end = _line_at(text, body_start + found[1])
        last, more = number, end
        while last - number < RANGE_LINES and more < len(text):
            nxt = text.find("\n", more + 1)
            nxt = len(text) if nxt < 0 else nxt
            if not text[more + 1 : nxt].strip():
                break
            last, more = last + 1, nxt
        return Spot(number + 1, last + 1, clip(text[start:end], body_start + found[1] - start))
    if head:
        found = best_line(text[:body_start], query)
        if found is not None:
            start, end = _line_at(text, found[1])
            return Spot(found[0] + 1, found[0] + 1, clip(text[start:end], found[1] - start))
    return Spot(1, max(1, head), fallback)


def clip(line: str, at: int) -> str:
    """The line stripped, cut to SNIPPET_CHARS around offset `at` (its first match)."""
    plain = line.strip()
    at = max(0, at - (len(line) - len(line.lstrip())))
    if len(plain) <= SNIPPET_CHARS:
        return plain
    start = max(0, min(at - SNIPPET_CHARS // 4, len(plain) - SNIPPET_CHARS))
    cut = plain[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + cut + ("…" if start + SNIPPET_CHARS < len(plain) else "")
