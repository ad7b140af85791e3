"""The numbers behind the web page's pictures: activity, size against the caps, capture health, the diary.

Each function takes a `Memdir` and reads it through public methods (the
journal, the catalog, the index), so a scoped view sees its own part only.
Geometry for the bar charts is computed here too (plain rectangles), so the
templates only draw.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import model
from ..remember import diary
from ..remember.capture import health

if TYPE_CHECKING:
    from ..core.memdir import Memdir
    from ..remember.capture import Health

JOURNAL_WINDOW = 5000  # journal records an activity picture reads at most (newest first)
SERIES = 8  # colours; past that, the rest is "others"


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: int  # colour index
    label: str  # what a screen reader and the tooltip say


@dataclass
class Chart:
    """Stacked bars, one per day, coloured by series (an actor or a type)."""

    days: list[str]
    series: list[str]
    counts: dict[str, list[int]]
    bars: list[Bar] = field(default_factory=list)
    top: int = 0  # the tallest day
    width: int = 0
    height: int = 160

    @property
    def total(self) -> int:
        return sum(sum(v) for v in self.counts.values())


def _chart(days: list[str], per_day: dict[str, Counter[str]]) -> Chart:
    totals: Counter[str] = Counter()
    for counter in per_day.values():
        totals.update(counter)
    names = [n for n, _ in totals.most_common()]
    if len(names) > SERIES:
        keep = set(names[: SERIES - 1])
        for counter in per_day.values():
            rest = sum(v for k, v in counter.items() if k not in keep)
            for k in [k for k in counter if k not in keep]:
                del counter[k]
            if rest:
                counter["others"] = rest
        names = names[: SERIES - 1] + ["others"]
    counts = {n: [per_day.get(d, Counter())[n] for d in days] for n in names}
    chart = Chart(days, names, counts)
    chart.top = max((sum(per_day.get(d, Counter()).values()) for d in days), default=0)
    step, gap = 16, 4
    chart.width = max(1, len(days)) * step
    if chart.top:
        scale = (chart.height - 4) / chart.top
        for i, day in enumerate(days):
            y = float(chart.height)
            for s, name in enumerate(names):
                n = counts[name][i]
                if n:
                    h = n * scale
                    y -= h
                    chart.bars.append(Bar(i * step + gap / 2, round(y, 2), step - gap, round(h, 2), s,
                                          f"{day}: {n} by {name}"))
    return chart


@dataclass
class Activity:
    by_actor: Chart
    by_type: Chart
    days: int
    capped: bool  # the window held more records than were read


def activity(md: Memdir, days: int = 30, now: dt.datetime | None = None) -> Activity:
    """Writes per day over the last `days` days, by actor and by type (of the file as it is now)."""
    now = now or dt.datetime.now(dt.UTC)
    first = (now - dt.timedelta(days=days - 1)).date()
    labels = [(first + dt.timedelta(days=i)).isoformat() for i in range(days)]
    records = md.history(limit=JOURNAL_WINDOW)
    recent = [r for r in records if r.time[:10] >= labels[0]]
    kinds = md.entries({r.dest or r.path for r in recent})
    actors: dict[str, Counter[str]] = defaultdict(Counter)
    types: dict[str, Counter[str]] = defaultdict(Counter)
    for r in recent:
        day = r.time[:10]
        actors[day][r.actor] += 1
        path = r.dest or r.path
        entry = kinds.get(path)  # a deleted file counts under its top folder
        kind = entry.type if entry is not None and entry.type else path.split("/")[0] if "/" in path else "other"
        types[day][kind] += 1
    capped = len(records) == JOURNAL_WINDOW and len(recent) == len(records)
    return Activity(_chart(labels, actors), _chart(labels, types), days, capped)


@dataclass(frozen=True)
class Gauge:
    """One measure against its cap."""

    label: str
    value: int
    cap: int
    unit: str

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.value / self.cap)) if self.cap else 0

    @property
    def level(self) -> str:
        return "over" if self.value > self.cap else "high" if self.percent >= 80 else "ok"


@dataclass(frozen=True)
class Size:
    index: list[Gauge]
    folders: list[tuple[str, int]]  # top folders by files, largest first
    largest: list[tuple[str, Gauge]]  # the longest files against the line cap
    files: int

    @property
    def folder_top(self) -> int:
        return max((n for _, n in self.folders), default=0)


def size(md: Memdir) -> Size:
    """How big the memory is against its caps: the index (lines, bytes), files per folder, the longest files."""
    text = md.index()
    limits = md.limits
    gauges = [Gauge("MEMORY.md lines", model.count_lines(text), limits.index_max_lines, "lines"),
              Gauge("MEMORY.md bytes", len(text.encode()), limits.index_max_bytes, "bytes")]
    entries = md.list()
    per: Counter[str] = Counter(e.path.split("/")[0] + "/" if "/" in e.path else "(top level)" for e in entries)
    longest = sorted(entries, key=lambda e: (-e.lines, e.path))[:5]
    largest = [(e.path, Gauge(e.path, e.lines, limits.max_lines, "lines")) for e in longest]
    return Size(gauges, per.most_common(12), largest, len(entries))


@dataclass(frozen=True)
class DiaryDay:
    path: str
    label: str
    kind: str
    summary: str


def diary_timeline(md: Memdir, limit: int = 60) -> list[DiaryDay]:
    """The diary's roll-ups (days, weeks, months), newest first."""
    out = []
    for e in md.list(diary.DIARY):
        period = diary.period_of_file(e.path)
        if period is not None:
            out.append((period.last, period.kind, DiaryDay(e.path, period.label, period.kind, e.description)))
    order = {"month": 0, "week": 1, "day": 2}
    out.sort(key=lambda t: (t[0], -order[t[1]]), reverse=True)
    return [d for *_, d in out[:limit]]


def capture_health(md: Memdir, days: int = 7) -> Health:
    """`memdir stats`: the last capture, and the captures skipped or pending, with why."""
    return health(md, days=days)
