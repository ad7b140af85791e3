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
For `sure` only (the ranking weighs the words as written), a word is also held
by a value of its kind (`ANSWERS`: "pressure" by "32 psi", "March" by
"2026-03-02"; a Chinese "how many" of a thing, 多少个因子, by a count of it, 20个因子,
`counted`) and a word written whole by its hyphened form ("wifi", "Wi-Fi").
Until issue 30 the bar sat inside the ranking, which then lost to plain BM25 on
data it was not tuned on (LoCoMo's held-out conversations R@10 0.584 against 0.608).

The bar (issue 30, item 1) was chosen on half of `bench/precision.py`'s labelled
questions (`TUNING`, six of the eleven memories) as the one that best separates the
prompt hook's injection of the answer from its injection of anything for a question
nothing answers (the most of the first less the second), and checked on the other
five. Answer injected / anything injected for no answer, tuning half: 0.5 83%/21%,
0.55 82%/19%, 0.6 79%/10%, 0.65 74%/10%, 0.7 69%/6%; held out 0.5 86%/10%, 0.6
81%/7%, 0.7 72%/3%. No bar reaches 90% and 5% together: a near-miss ("when is Maya's
birthday party?" over Leo's party) and a paraphrase ("which hob did we buy?") hold the
same share of their words. A month held by a date and a hyphened word took the bar's
figures from 78.7%/10.0% to 79.7%/10.0% (tuning) and 80.7%/7.2% to 81.2%/7.2% (held out).

Measured on the same halves and not kept, as each moves along the bar's own curve
(fewer answers for fewer no-answers) or not at all:
- weights: a word no file holds at 1.4 or 0.75 times, one the memory holds elsewhere
  but the file lacks at 1.5 or 2, light verbs less, every weight to a power (0.5 to 3:
  1 is best on the tuning half);
- words required: names, or those the file lacks while its title names another ("Maya's"
  over "Leo's birthday party": no change, the files holding "Maya" stay sure); a possessive's
  owner (no change); a word that titles another file (tuning 77.7%/7.5%, held out 80.1%/7.2%);
- where the words are: per paragraph or per line, title included (the same shares);
  the value asked in the line holding most of the query (held out 76.8%/5.8%: "kitchen
  renovation budget" asks for no value); a question's kind of value (when, how much, how
  many, who) anywhere in the file (no change); a hit lacking a word that another of the
  top five holds while holding one it lacks (evidence split over two files, as a
  near-miss's often is: held out 77.9%/4.3%); a logistic fit of ten such signals (the share
  with and without values, the largest word missing, the words missing, those the memory holds
  elsewhere, capitalised ones, rank, BM25 over the best, length, question form: tuning 72.3%/3.8%,
  held out 74.6%/4.3%);
- the meaning (all-MiniLM-L6-v2, as if the hook searched hybrid; it searches lexically,
  where it would gain 2 points for a second of model loading a prompt): the file's best
  cosine beside the share, or a line's, alone or after the title (at 5% on the tuning
  half 76.7%/5.0%, held out 76.8%/5.8%), or of the query less its words in the title (the fact
  asked: 77.2%/3.8%, 77.9%/5.8%), a logistic fit of share, cosine, margin and BM25
  (77% at 5%), and a word the file lacks held where a word of the file is within cosine
  0.75 of it (81.7%/10.0%, 82.3%/7.2%; at a bar of 0.7 72.3%/5.0% and 74.0%/2.9%).
- the multilingual meaning (USE v3, `bench/gate.py curve`; tuning / held out, answer / anything for no
  answer): alone, the best file's cosine, margin or z-score over the memory's files (15-45% at 5%);
  the share with USE's margins over the memory's other files (whole file, best line, title; a logistic fit
  on the tuning half) 80.2%/7.5% and 81.2%/7.2%, or 76.7%/3.8% and 79.6%/4.3% (the bar alone at 0.7:
  70.3%/5.0%, 72.4%/2.9%), ten such signals 80.2%/2.5% but 83.4%/7.2% held out: a near-miss's file is
  USE's closest by as wide a margin as an answer's ("who is our accountant for Stripe Tax?"). A word the
  file lacks held where USE puts it within 0.5 of a line (81.7%/8.8%, 81.8%/7.2%; at 0.7 72.3%/5.0%), the
  question against its entity words alone at the best line (below the bar alone), USE's closest file
  added when nothing is sure (at a margin of 0.2 over the next: 83.2%/12.5%, 86.7%/11.6%), and the same
  rules on the hits of hybrid search with USE (the same curve) do no better.
- nanoranker 1.2's learned scorer (an MLP over USE and char n-gram vectors of both texts) of the question with the
  hit's file, title, best line or 3 lines: alone 50%/20% (best line at 0.85, tuning); fitted beside the share and USE's
  margins 76.2%/3.8%, held out 80.1%/5.8%: it scores the entity ("Gareth's phone number" 0.94 on Gareth's note).
- A cross-encoder of our own (MiniLM-L6 fine-tuned 1.5 epochs on 13,087 pairs: LoCoMo dev and REALTALK evidence
  against their top FTS5 non-evidence turns, and 1,556 written topic-note answers and near misses; branch `reader`,
  bench/reader_train.py and reader_score.py, torch): AUC answers vs near-misses 0.84/0.88 alone but 0.71/0.56
  among hits holding 0.6 of the words; beside the share 80.1%/5.8% held out at best. It learned "about the subject".
Telling a near-miss from a paraphrase takes a model that reads the question beside the
answer (a cross-encoder or extractive reader with a no-answer class) trained far beyond this; of
the packages on PyPI whose names say so, none ships one in its wheel. `bench/gate.py` records every labelled question's
candidates once and replays a rule on them in seconds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from .text import Query, fold, spaceless, spaceless_weights, stem

COVER = 0.6  # the share of a query's weight a sure hit holds (search, the page, the context, the prompt hook)

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

# A question's attribute word is often answered by a value, not by the word: "gravel tyre pressure" by
# "32 psi", "vet phone number" by "01632 960 418", "backblaze b2 cost" by "£4 a month". A file that holds a
# value of the kind asked for holds that word for `sure` (`Evidence.cover(answers=True)`); a file about the
# entity without the fact ("Gareth's phone number" beside "neighbour at number 14") holds no such value.
# The ranking does not use it (`lexical.rank`): it says whether a file answers, not how well it matches.
# Written from general knowledge of the values these words ask for, not fitted to a benchmark.
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
_VALUES: dict[str, str] = {
    "money": r"[£$€¥₩]\s?\d|\d[\d,.]*\s?(?:k|m)?\s?(?:eur|usd|gbp|chf|jpy|krw|cny|dollars?|pounds?|euros?|yen|won|"
             r"pence|quid|bucks)\b|\d\s?(?:元|円|원|บาท)",
    "phone": r"\+\d[\d ().-]{6,}\d|\b0\d[\d ().-]{5,}\d|\b\d{3}[ .-]\d{3,4}[ .-]\d{3,4}\b|\b\d{7,}\b",
    "email": r"[\w.+-]+@[\w-]+\.\w",
    "address": r"https?://|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[\w-]+\.(?:local|lan|home|internal|com|io|net|org|dev|app)\b|"
               r"[\w.+-]+@[\w-]+\.\w|\b\d+\s+\w+\s+(?:street|st|road|rd|avenue|ave|lane|way|close|drive)\b",
    "date": rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})[a-z]*\b|\b(?:{_MONTHS})[a-z]*\.?\s+"
            rf"\d{{1,2}}\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b\d{{1,2}}/\d{{1,2}}\b|\d+\s?(?:月|일|日)",
    "time": r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b|\d+\s?(?:時|시|点)",
    "duration": r"\b\d+(?:\.\d+)?\s*(?:-\s*\d+\s*)?(?:s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|"
                r"months?|years?)\b|\d+\s?(?:分|分钟|小时|天|周|个月|年|시간|일|주|개월|년)",
    "measure": r"\b\d+(?:\.\d+)?\s*(?:mm|cm|m|km|in|inch|inches|ft|feet|kg|g|lb|lbs|oz|psi|bar|°c?|°f?|degrees|ml|l|"
               r"litres?|liters?|w|kw|kwh|v|mah|gb|mb|tb|kb)\b|\d+(?:\.\d+)?\s?°|\b\d+\s?[x×]\s?\d+",
    "often": r"\bevery\b|\b(?:daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually|once|twice)\b|"
             r"\btimes?\s+(?:a|per)\b|\bper\s+(?:day|week|month|year)\b|\ba\s+(?:day|week|month|year)\b",
    "percent": r"\d+(?:\.\d+)?\s?%",
    "version": r"\bv?\d+\.\d+(?:\.\d+)*\b|\b(?:version|v)\s?\d+",
}
_ASKS = {  # the words (as written, stemmed below) that ask for a value of each kind
    "money": "cost costs price prices priced pricing pay pays paid spend spent fee fees charge charged budget "
             "expensive cheap salary rent 费用 价格 价钱 비용 가격 요금 料金 値段 費用",
    "phone": "phone telephone mobile number 电话 手机 号码 전화 번호 電話 携帯 番号",
    "email": "email 邮箱 메일",
    "address": "address url website hostname ip 地址 주소 住所",
    "date": "date dates deadline birthday anniversary 日期 날짜 日付 日程",
    "time": "time times 时间 시간 時間 時刻",
    "duration": "long duration",
    "measure": "dimension dimensions size length width height weight pressure temperature distance capacity volume "
               "depth thickness",
    "often": "often frequency frequently",
    "percent": "percentage percent ratio",
    "version": "version",
}


# A month is held where a date of that month is: "why did checkout go down in March?" over a file named
# "Incident 2026-03-02" (year first, as ISO 8601 and memdir's own names write it; a name's "2026 03 14" too).
_MONTH_NAMES = "january february march april may june july august september october november december".split()


def _in_month(number: int) -> str:
    return rf"\b\d{{4}}(?:[-/.]0?{number}(?:[-/.]\d{{1,2}})?| {number:02d} \d{{2}})\b"


def _answers() -> dict[str, re.Pattern[str]]:
    out: dict[str, re.Pattern[str]] = {}
    for kind, words in _ASKS.items():
        pattern = re.compile(_VALUES[kind], re.IGNORECASE)
        for word in words.split():
            out[word if spaceless(word) else stem(word)] = pattern
    for number, month in enumerate(_MONTH_NAMES, 1):
        out[stem(month)] = re.compile(_in_month(number))
    return out


ANSWERS = _answers()  # a word's stem (a spaceless word as written) -> the values that hold it: cost, phone, March
COUNTED = "多少个"  # the evidence of a question how many of something (`Query.counts`) is a count of it: 20个因子


def counted(thing: str) -> re.Pattern[str]:
    """A number before `thing`, with or without its measure word: what answers how many of it (一个 alone is "a")."""
    return re.compile(rf"(?:\d+|一?[二两三四五六七八九十百千万][一二两三四五六七八九十百千万]*)\s*个?\s*{re.escape(thing)}")
_HYPHENED = re.compile(r"(?<![^\W_])([^\W\d_]+)-([^\W\d_]+)(?![^\W_])")


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

    def cover(self, text: str, *, answers: bool = False) -> float:
        """The share of the query's weight found in `text` (1.0 when the query weighs nothing); with `answers`,
        a word asking for a value (cost, phone, pressure, a month: `ANSWERS`) is found where a value of its kind
        is, and a hyphened word ("Wi-Fi") holds the word written as one ("wifi")."""
        total = self.total
        if total <= 0:
            return 1.0
        if answers:  # "Wi-Fi" holds "wifi", "check-up" "checkup"
            text += "\n" + " ".join(a + b for a, b in _HYPHENED.findall(text))
        held = {s for s in self.symbols if s in text}
        found = sum(self.symbols[s] for s in held)
        wanted, finder = self._finder
        seen: set[str] = set()
        if finder is not None:
            folded = fold(text)
            for m in finder.finditer(folded):
                s = stem(m.group())
                if s in wanted and s not in seen:
                    seen.add(s)
                    found += self.stems[s]
                    if len(seen) == len(wanted):
                        break
        if answers:
            missing = [(s, w) for s, w in self.stems.items() if w > 0 and s not in seen]
            missing += [(s, w) for s, w in self.symbols.items() if w > 0 and s not in held]
            found += sum(w for s, w in missing if s in ANSWERS and ANSWERS[s].search(text)
                         or s.startswith(COUNTED) and counted(s[len(COUNTED):]).search(text))
        return found / total


def idf(df: int, files: int) -> float:
    """BM25's inverse document frequency, kept positive (a word in every file still weighs a little)."""
    return math.log(1 + (files + 1) / (df + 0.5))


def weigh(query: Query, files: int, df: Mapping[str, int], symbol_df: Mapping[str, int] | None = None) -> Evidence:
    """The evidence of `query` in a memory of `files` files, where `df[word]` files hold each word."""
    by_stem: dict[str, int] = {}
    short: set[str] = set()  # stems of words under three letters only: the pieces of "don't", "I'd", "I'll"
    for word in query.words:
        if spaceless(word):
            continue  # a word of a script without spaces is found as written, as the symbols are
        s = stem(word)
        if s not in by_stem and len(word) < 3 and word.isalpha():
            short.add(s)
        elif len(word) >= 3 or not word.isalpha():
            short.discard(s)  # "iOS" stems to "io" but is a word of three letters
        by_stem[s] = max(by_stem.get(s, 0), int(df.get(word, 0)))
    topical = {s: n for s, n in by_stem.items() if s not in GENERIC and s not in short}
    chosen = topical or by_stem  # only generic words: each of them counts
    stems = {s: idf(n, files) for s, n in chosen.items()}
    symbols = {s: idf(int((symbol_df or {}).get(s, 0)), files) for s in query.symbols}
    symbols.update(spaceless_weights(query, df, lambda n: idf(n, files)))  # pairs: the seams weigh nothing
    symbols.update({COUNTED + c: idf(0, files) for c in query.counts})  # a count is held by a number only
    return Evidence(stems, symbols)


def searchable(name: str, description: str, tags: str, body: str) -> str:
    """The parts of a file the index matches, as one text to look for a query's words in."""
    return f"{name}\n{description}\n{tags}\n{body}"
