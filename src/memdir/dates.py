"""Relative dates made absolute at write time, keeping the words.

"next Thursday" means nothing a month later; `absolute("see you next Thursday",
date(2026, 11, 30))` gives "see you next Thursday (2026-12-03)". Only phrases
that name a day, week, month or year relative to today are touched; a phrase
already followed by its date in parentheses, and code (fenced blocks and
backtick spans), are left alone, so running it twice changes nothing.
"""

from __future__ import annotations

import datetime as dt
import re

from .errors import InvalidArgument

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3,
}
_NUM = r"(?P<n>\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?P<unit>days?|weeks?|months?|years?)"
_DAY = r"(?P<day>" + "|".join(WEEKDAYS) + r")"

_PHRASE = re.compile(
    r"\b(?:"
    r"(?P<dby>the day before yesterday)|(?P<dat>the day after tomorrow)"
    r"|(?P<today>today|tonight|this (?:morning|afternoon|evening))"
    r"|(?P<yesterday>yesterday|last night)"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<rel>this|next|last|coming|past) " + _DAY +
    r"|(?P<span>this|next|last) (?P<what>week|month|year)"
    r"|in " + _NUM + " " + _UNIT +
    r"|" + _NUM.replace("(?P<n>", "(?P<n2>") + " " + _UNIT.replace("(?P<unit>", "(?P<unit2>") + " ago"
    r")\b(?!['’]s\b)(?! \((?:\d{4}-\d{2}|\d{4}|week of))",
    re.IGNORECASE,
)
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)


def absolute(text: str, today: dt.date) -> str:
    """`text` with each relative date followed by the absolute date it means on `today`."""
    if not _PHRASE.search(text):
        return text
    out, at = [], 0
    for code in _CODE.finditer(text):
        out.append(_PHRASE.sub(lambda m: _annotate(m, today), text[at:code.start()]))
        out.append(code.group(0))
        at = code.end()
    out.append(_PHRASE.sub(lambda m: _annotate(m, today), text[at:]))
    return "".join(out)


def _annotate(m: re.Match[str], today: dt.date) -> str:
    meant = resolve(m, today)
    return m.group(0) if meant is None else f"{m.group(0)} ({meant})"


def resolve(m: re.Match[str], today: dt.date) -> str | None:
    """The absolute date (or week, month, year) one matched phrase means."""
    day = dt.timedelta(days=1)
    if m.group("dby"):
        return (today - 2 * day).isoformat()
    if m.group("dat"):
        return (today + 2 * day).isoformat()
    if m.group("today"):
        return today.isoformat()
    if m.group("yesterday"):
        return (today - day).isoformat()
    if m.group("tomorrow"):
        return (today + day).isoformat()
    if m.group("rel"):
        want = WEEKDAYS.index(m.group("day").lower())
        rel = m.group("rel").lower()
        if rel == "this":
            return (today + (want - today.weekday()) * day).isoformat()
        if rel in ("next", "coming"):
            return (today + ((want - today.weekday() - 1) % 7 + 1) * day).isoformat()
        return (today - ((today.weekday() - want - 1) % 7 + 1) * day).isoformat()
    if m.group("span"):
        step = {"this": 0, "next": 1, "last": -1}[m.group("span").lower()]
        what = m.group("what").lower()
        if what == "week":
            monday = today - today.weekday() * day + step * 7 * day
            return f"week of {monday.isoformat()}"
        if what == "month":
            y, mo = divmod(today.year * 12 + today.month - 1 + step, 12)
            return f"{y:04d}-{mo + 1:02d}"
        return f"{today.year + step:04d}"
    n_text, unit, sign = m.group("n"), m.group("unit"), 1
    if n_text is None:
        n_text, unit, sign = m.group("n2"), m.group("unit2"), -1
    n = int(n_text) if n_text.isdigit() else _NUMBERS[n_text.lower()]
    unit = unit.lower().rstrip("s")
    if unit in ("day", "week"):
        return (today + sign * n * (7 if unit == "week" else 1) * day).isoformat()
    months = sign * n * (12 if unit == "year" else 1)
    y, mo = divmod(today.year * 12 + today.month - 1 + months, 12)
    return _clamped(y, mo + 1, today.day).isoformat()


def _clamped(year: int, month: int, day: int) -> dt.date:
    """The date, or the last day of the month when it has fewer days (31 January + 1 month = 28 February)."""
    while True:
        try:
            return dt.date(year, month, day)
        except ValueError:
            day -= 1


def parse_when(value: str | dt.datetime | dt.date, *, now: dt.datetime | None = None, end: bool = False) -> dt.datetime:
    """A point in time from a datetime, a date, ISO text (`2026-03-01`, `2026-03-01T10:00Z`) or an age (`7d`, `12h`, `2w`).

    A bare date means its start (or, with `end`, the start of the next day). Times without a zone are UTC.
    """
    now = now or dt.datetime.now(dt.UTC)
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        start = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
        return start + dt.timedelta(days=1) if end else start
    text = str(value).strip()
    age = re.fullmatch(r"(\d+)\s*([mhdw])", text)
    if age:
        n, unit = int(age.group(1)), age.group(2)
        return now - {"m": dt.timedelta(minutes=n), "h": dt.timedelta(hours=n), "d": dt.timedelta(days=n),
                      "w": dt.timedelta(weeks=n)}[unit]
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return parse_when(dt.date.fromisoformat(text), end=end)
        got = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(
            f"{text!r} is not a date or an age; give 2026-03-01, 2026-03-01T10:00:00Z or an age such as 7d, 12h, 2w"
        ) from None
    return got if got.tzinfo else got.replace(tzinfo=dt.UTC)


def stamp(when: dt.datetime) -> str:
    """The journal's time format: `2026-03-01T10:00:00Z`."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
