"""The diary: sessions into days, days into ISO weeks, weeks into months, and retention.

- day `diary/YYYY-MM-DD.md`: one paragraph from that day's session records,
  durable learnings first; the records move to `archive/sessions/`.
- week `diary/YYYY-Www.md`: two or three sentences from the week's dailies,
  which move to `archive/diary/`.
- month `diary/YYYY-MM.md`: three bullets of recurring themes from the
  weeklies whose Thursday falls in the month (ISO's rule), which move to
  `archive/diary/`.

Each roll-up is one `Memdir.apply` batch: the new file is created only if it
does not exist (`expect=None`) and each folded file moves only if it still has
the version read. The store commits a batch under its lock (flock, SQLite
`BEGIN IMMEDIATE`, a PostgreSQL advisory lock, an S3 lease taken with a
conditional write) and re-checks every version there, so when several
processes or hosts run the same roll-up, one commits and the others get
`Conflict` and report it as done elsewhere: each roll-up happens exactly once.

Nothing is deleted by surprise. What a roll-up folds in moves under
`archive/` (out of the index, readable, found by `search --history`) and stays
there; deleting past retention is a setting one makes (`[diary]` in
memdir.toml or `MEMDIR_DIARY_*`; 0, the default, keeps forever), counted from
the end of the period: archived sessions `sessions` days after their day,
archived dailies `days` days after, archived weeklies `weeks` weeks after. A
file is deleted only once the roll-up that folded it exists, so no roll-up ever
removes the last copy of a period's text: a monthly is never deleted, only
moved under `archive/` `months` months after its month. Deletions are
journaled, so `read(as_of=)`, history search and undo still reach them.

A `--due` run that would touch more than `BACKFILL` periods of roll-ups, or of
one kind past retention (a backfill: a year of sessions brought in at once), does
nothing unless `yes`; its report is the plan, marked `needs_yes`. A nightly run
never needs it: a day, its week and its month are the most that close at once.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from .. import dates, model
from ..core.memdir import Op
from ..errors import Conflict, InvalidArgument, MemdirError, NotFound
from ..stores.base import DEFAULT_TENANT
from ..stores.locations import folder_of, scheme_of
from ..stores.sqlite import database_path
from . import consolidate as upkeep
from . import counts, prose, rules
from .capture import ARCHIVED, RAW, SESSIONS, day_of, retry_pending, settings, summarizer_for
from .summarize import DIGEST_LISTS, LISTS, PERIOD_CHARS, Digest, Extractive, SessionSummary, Summarizer, describe

if TYPE_CHECKING:
    from ..core.memdir import Memdir, Op

DIARY = "diary/"
ARCHIVED_DIARY = "archive/diary/"
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
ONE_DAY = dt.timedelta(days=1)
BACKFILL = 3  # periods a --due run may touch without --yes


@dataclass(frozen=True)
class Retention:
    """How long folded files are kept, counted from the end of their period; 0 (the default) keeps them forever."""

    sessions: int = 0
    days: int = 0
    weeks: int = 0
    months: int = 0  # a monthly is archived after this many months, never deleted

    @classmethod
    def load(cls, table: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Retention:
        environ = os.environ if environ is None else environ
        values: dict[str, int] = {}
        known = [f.name for f in fields(cls)]
        for key, value in table.items():
            if key not in known:
                raise InvalidArgument(f"memdir.toml [diary]: unknown setting {key!r}; known: {', '.join(known)}")
            values[key] = _count(value, f"memdir.toml [diary] {key}")
        for key in known:
            env = f"MEMDIR_DIARY_{key.upper()}"
            if env in environ:
                values[key] = _count(environ[env], env)
        return cls(**values)


def _count(value: Any, where: str) -> int:
    try:
        n = int(value)
        if n < 0 or isinstance(value, bool):
            raise ValueError(value)
        return n
    except (TypeError, ValueError):
        raise InvalidArgument(f"{where} = {value!r} is not valid; use a whole number of days, weeks or months (0 keeps forever)") from None


# ---------------------------------------------------------------- periods


@dataclass(frozen=True)
class Period:
    """One day, ISO week or month: its label, first and last day."""

    kind: str  # day, week or month
    label: str
    first: dt.date
    last: dt.date

    @property
    def path(self) -> str:
        return f"{DIARY}{self.label}.md"

    def closed(self, today: dt.date) -> bool:
        return today > self.last


def day(d: dt.date) -> Period:
    return Period("day", d.isoformat(), d, d)


def week_of(d: dt.date) -> Period:
    year, number, _ = d.isocalendar()
    monday = dt.date.fromisocalendar(year, number, 1)
    return Period("week", f"{year:04d}-W{number:02d}", monday, monday + 6 * ONE_DAY)


def month_of(d: dt.date) -> Period:
    first = d.replace(day=1)
    nxt = (first + 32 * ONE_DAY).replace(day=1)
    return Period("month", f"{d.year:04d}-{d.month:02d}", first, nxt - ONE_DAY)


def month_of_week(w: Period) -> Period:
    """ISO's rule: a week belongs to the month (and year) of its Thursday."""
    return month_of(w.first + 3 * ONE_DAY)


def parse_period(kind: str, label: str) -> Period:
    """`day 2026-11-29`, `week 2026-W48`, `month 2026-11` (also accepts a date inside the week or month)."""
    text = str(label).strip()
    try:
        if kind == "day":
            return day(dt.date.fromisoformat(text))
        if kind == "week":
            m = _WEEK.match(text)
            if m:
                return week_of(dt.date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1))
            return week_of(dt.date.fromisoformat(text))
        m = _MONTH.match(text)
        if m:
            return month_of(dt.date(int(m.group(1)), int(m.group(2)), 1))
        return month_of(dt.date.fromisoformat(text))
    except ValueError:
        want = {"day": "2026-11-29", "week": "2026-W48", "month": "2026-11"}[kind]
        raise InvalidArgument(f"--{kind} {label!r} is not a {kind}; give one such as {want}") from None


def period_of_file(path: str) -> Period | None:
    """The period a diary file is about, from its name."""
    stem = path.rsplit("/", 1)[-1][:-3]
    try:
        if _DAY.match(stem):
            return day(dt.date.fromisoformat(stem))
        m = _WEEK.match(stem)
        if m:
            return week_of(dt.date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1))
        m = _MONTH.match(stem)
        if m:
            return month_of(dt.date(int(m.group(1)), int(m.group(2)), 1))
    except ValueError:
        return None
    return None


# ---------------------------------------------------------------- reports


@dataclass(frozen=True)
class Step:
    """One roll-up or retention action: done, planned (dry run), raced (done by another worker) or failed;
    a consolidation step is proposed or held (left for a person)."""

    kind: str  # day, week, month or retention
    label: str
    path: str
    status: str
    folded: tuple[str, ...] = ()
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "path": self.path, "status": self.status,
                "folded": list(self.folded), "detail": self.detail}


@dataclass
class Report:
    steps: list[Step] = field(default_factory=list)
    dry_run: bool = False
    tenant: str | None = None
    needs_yes: str = ""  # why this run is a backfill that waits for `yes` (its steps are the plan), or ""

    @property
    def failed(self) -> list[Step]:
        return [s for s in self.steps if s.status == "failed"]

    def to_dict(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "dry_run": self.dry_run, "needs_yes": self.needs_yes,
                "steps": [s.to_dict() for s in self.steps]}

    def summary(self) -> str:
        if not self.steps:
            return "nothing to roll up"
        lines = []
        for s in self.steps:
            what = f"{s.path} (folds {len(s.folded)})" if s.kind in ("day", "week", "month") else s.path
            lines.append(f"{s.status}\t{s.kind}\t{what}" + (f"\t{s.detail}" if s.detail else ""))
        return "\n".join(lines)


# ---------------------------------------------------------------- rolling up


@dataclass
class Diary:
    """Roll-ups of one memory, with a summariser and a clock (`now`, so tests can drive time)."""

    md: Memdir
    summarizer: Summarizer
    now: dt.datetime
    dry_run: bool = False
    retention: Retention = field(default_factory=Retention)
    report: Report = field(default_factory=Report)

    @property
    def today(self) -> dt.date:
        return self.now.astimezone(dt.UTC).date()

    # ------------------------------------------------------------ what is due

    def files(self) -> set[str]:
        """The paths the diary works on: sessions, diary and their archives."""
        return {e.path for folder in (SESSIONS, DIARY, ARCHIVED, ARCHIVED_DIARY) for e in self.md.list(folder)}

    def due_days(self, files: set[str] | None = None) -> list[Period]:
        days = {day_of(p) for p in (self.files() if files is None else files) if _session(p)}
        return [p for d in sorted(x for x in days if x) if (p := day(dt.date.fromisoformat(d))).closed(self.today)]

    def due_weeks(self, files: set[str] | None = None) -> list[Period]:
        weeks = {}
        for p in _in_diary(self.files() if files is None else files, "day"):
            w = week_of(p.first)
            weeks[w.label] = w
        return [w for _, w in sorted(weeks.items()) if w.closed(self.today)]

    def due_months(self, files: set[str] | None = None) -> list[Period]:
        months: dict[str, tuple[Period, dt.date]] = {}
        for p in _in_diary(self.files() if files is None else files, "week"):
            m = month_of_week(p)
            last = max(months.get(m.label, (m, m.last))[1], p.last)
            months[m.label] = (m, last)
        return [m for _, (m, last) in sorted(months.items()) if self.today > max(m.last, last)]

    def schedule(self) -> tuple[list[Step], list[Step]]:
        """What `--due` would do now, each roll-up as if the ones before it were done: (roll-ups, retention)."""
        files, rolls = self.files(), []
        for kind, due in (("day", self.due_days), ("week", self.due_weeks), ("month", self.due_months)):
            for period in due(files):
                if kind == "day":
                    folded = sorted(p for p in files if _session(p) and day_of(p) == period.label)
                    dest = ARCHIVED
                else:
                    inner = "day" if kind == "week" else "week"
                    folded = sorted(f"{DIARY}{p.label}.md" for p in _in_diary(files, inner)
                                    if (week_of(p.first) if kind == "week" else month_of_week(p)).label == period.label)
                    dest = ARCHIVED_DIARY
                archived = f"{ARCHIVED_DIARY}{period.label}.md"
                target = archived if archived in files else period.path
                files = (files - set(folded)) | {dest + p.rsplit("/", 1)[-1] for p in folded} | {target}
                rolls.append(Step(kind, period.label, target, "planned", tuple(folded)))
        return rolls, [Step("retention", label, path, "planned", (), why) for path, label, _, why in self.expired(files)]

    def backfill(self, rolls: list[Step], retention: list[Step]) -> str:
        """Why this run touches more than a handful of periods at once, or "" when it does not."""
        kinds = {k: len({s.label for s in retention if s.label.startswith(k)}) for k in ("day", "week", "month")}
        if len(rolls) > BACKFILL:
            return f"it would roll up {len(rolls)} periods at once (more than {BACKFILL})"
        if (most := max(kinds, key=lambda k: kinds[k])) and kinds[most] > BACKFILL:
            return f"it would apply retention to {kinds[most]} {most}s at once (more than {BACKFILL})"
        return ""

    # ------------------------------------------------------------ one roll-up

    def roll(self, period: Period) -> Step:
        """Fold the period's inputs into its diary file (created, or updated when inputs came late)."""
        try:
            inputs = self._inputs(period)
            target = self._existing(period)
            prior = None if target is None or self.dry_run or not inputs else self.md.read(target)
        except NotFound as e:  # listed, then moved away: another worker is rolling this period up
            return self._step(period, period.path, "raced", (), f"done by another worker ({e.message})")
        folded = tuple(m.path for m in inputs)
        if not inputs:
            return self._step(period, target or period.path, "skipped", (), "nothing to fold")
        if self.dry_run:
            return self._step(period, target or period.path, "planned", folded)
        items = [self._digest(m) for m in inputs if m.meta.get("status") not in ("skipped",)]
        if prior is not None:
            items.insert(0, Digest.from_meta(prior.meta, _paragraph_of(prior.body)))
        try:
            digest = self.summarizer.digest(period.kind, period.label, items, limit=PERIOD_CHARS[period.kind]) if items \
                else Digest("No session was captured in full; see the archived records.")
        except Exception as e:  # noqa: BLE001 - a failing summariser leaves everything in place for the next run
            return self._step(period, period.path, "failed", folded, f"summariser error: {describe(e)}")
        refused = "" if isinstance(self.summarizer, Extractive) else "; ".join(rules.digest_problems(period.kind, digest.text))
        if refused:  # a model's roll-up without its period's shape: the extractive one, held to it, instead
            digest = Extractive().digest(period.kind, period.label, items, limit=PERIOD_CHARS[period.kind])
        text = self._render(period, digest, inputs, prior)
        dest = ARCHIVED if period.kind == "day" else ARCHIVED_DIARY
        ops: list[Op] = [Op.write(target or period.path, text, expect=None if prior is None else prior.version)]
        for m in inputs:
            ops.append(Op.rename(m.path, self._free(dest + m.path.rsplit("/", 1)[-1], m.path), expect=m.version))
        try:
            self.md.apply(ops)
        except (Conflict, NotFound) as e:
            return self._step(period, target or period.path, "raced", folded, f"done by another worker ({e.message})")
        return self._step(period, target or period.path, "done", folded,
                          f"the {self.summarizer.name} roll-up was refused: {refused}" if refused else "")

    def _existing(self, period: Period) -> str | None:
        for path in (period.path, f"{ARCHIVED_DIARY}{period.label}.md"):
            if self.md.list(path):
                return path
        return None

    def _inputs(self, period: Period) -> list[model.Memory]:
        out = []
        if period.kind == "day":
            for e in self.md.list(SESSIONS):
                if e.path.startswith(RAW) or "/" in e.path[len(SESSIONS):] or day_of(e.path) != period.label:
                    continue
                m = self.md.read(e.path)
                if m.meta.get("status") != "pending":  # a pending session waits for its retry
                    out.append(m)
        else:
            for e in self.md.list(DIARY):
                p = period_of_file(e.path)
                if p is None or p.kind != ("day" if period.kind == "week" else "week"):
                    continue
                home = week_of(p.first) if period.kind == "week" else month_of_week(p)
                if home.label == period.label:
                    out.append(self.md.read(e.path))
        return sorted(out, key=lambda m: m.path)

    @staticmethod
    def _digest(m: model.Memory) -> Digest:
        if m.meta.get("type") == "session" or m.path.startswith(SESSIONS):
            title = str(m.meta.get("description") or m.description)
            lists = {k: tuple(str(x) for x in m.meta.get(k) or ()) for k in LISTS}
            d = SessionSummary(title, **lists).digest()
            main = prose.worked_on(title, [str(f) for f in m.meta.get("files") or ()])  # the request, and where
            return replace(d, worked_on=(main,) if main else ())  # one line a session: its follow-ups are the record's
        return Digest.from_meta(m.meta, _paragraph_of(m.body))

    def _render(self, period: Period, digest: Digest, inputs: list[model.Memory], prior: model.Memory | None) -> str:
        text = dates.absolute(digest.text, period.last)
        folded = list(prior.meta.get("folded") or []) if prior is not None else []
        folded += [m.path.rsplit("/", 1)[-1][:-3] for m in inputs]
        sessions = list(prior.meta.get("sessions") or []) if prior is not None else []
        if period.kind == "day":
            sessions += [str(m.meta["session"]) for m in inputs if m.meta.get("session")]
        # a session captured again after its day was rolled up (PreCompact, the roll-up, SessionEnd) is one session
        folded, sessions = list(dict.fromkeys(folded)), list(dict.fromkeys(sessions))
        title = {"day": f"{period.label} ({period.first:%A})", "week": f"week {period.label} ({period.first} to {period.last})",
                 "month": f"{period.first:%B %Y}"}[period.kind]
        meta: dict[str, Any] = {
            "name": f"diary {period.label}",
            "description": model.clip(" ".join(text.replace("- ", "").split()), 200),
            "type": "diary",
            "period": period.kind,
            "first": model.Stamp(period.first.isoformat()),
            "last": model.Stamp(period.last.isoformat()),
            **({"sessions": sessions} if sessions else {}),
            "folded": folded,
            **{k: list(getattr(digest, k)) for k in DIGEST_LISTS if getattr(digest, k)},
        }
        return model.render(meta, f"# {title}\n\n{text}\n")

    def _free(self, path: str, source: str) -> str:
        """An archive path not taken yet (a late roll-up may archive a file of the same name twice)."""
        base, n, p = path[:-3], 1, path
        while self.md.list(p):
            n += 1
            p = f"{base}-{n}.md"
        return p

    def _step(self, period: Period, path: str, status: str, folded: tuple[str, ...], detail: str = "") -> Step:
        s = Step(period.kind, period.label, path, status, folded, detail)
        self.report.steps.append(s)
        return s

    # ------------------------------------------------------------ retention

    def expired(self, files: set[str] | None = None) -> list[tuple[str, str, str | None, str]]:
        """What is past retention, as (path, what it is, where it moves or None to delete, why).

        A folded file goes only once the roll-up that folded it exists; a monthly is the last copy of its
        month's text and only moves under archive/.
        """
        r, today = self.retention, self.today
        out: list[tuple[str, str, str | None, str]] = []
        files = self.files() if files is None else files

        def kept(label: str) -> str | None:
            return next((p for p in (f"{DIARY}{label}.md", f"{ARCHIVED_DIARY}{label}.md") if p in files), None)

        for path in sorted(files):
            if path.startswith(ARCHIVED):
                d = day_of(path)
                if r.sessions and d and today >= dt.date.fromisoformat(d) + (1 + r.sessions) * ONE_DAY and (by := kept(d)):
                    out.append((path, f"day {d}", None, f"past retention (sessions = {r.sessions}): deleted, folded in {by}"))
                continue
            p = period_of_file(path)
            if p is None:
                continue
            if path.startswith(ARCHIVED_DIARY) and p.kind in ("day", "week"):
                setting, keep, home = (("days", r.days, week_of(p.first)) if p.kind == "day"
                                       else ("weeks", r.weeks * 7, month_of_week(p)))
                if keep and today >= p.last + ONE_DAY + keep * ONE_DAY and (by := kept(home.label)):
                    out.append((path, f"{p.kind} {p.label}", None,
                                f"past retention ({setting} = {getattr(r, setting)}): deleted, folded in {by}"))
            elif path.startswith(DIARY) and p.kind == "month" and r.months:
                y, m = divmod(p.first.year * 12 + p.first.month - 1 + 1 + r.months, 12)
                if today >= dt.date(y, m + 1, 1):
                    out.append((path, f"month {p.label}", _free(files, f"{ARCHIVED_DIARY}{p.label}.md"),
                                f"past retention (months = {r.months}): archived, never deleted"))
        return out

    def retain(self) -> None:
        """Apply retention: one batch, or file by file when another worker got there first."""
        expired = self.expired()
        if self.dry_run or not expired:
            for path, label, _, why in expired:
                self.report.steps.append(Step("retention", label, path, "planned", (), why))
            return

        def op(path: str, dest: str | None) -> Op:
            return Op.delete(path) if dest is None else Op.rename(path, dest)

        try:
            self.md.apply([op(path, dest) for path, _, dest, _ in expired])
            self.report.steps += [Step("retention", label, path, "done", (), why) for path, label, _, why in expired]
            return
        except (Conflict, NotFound):
            pass
        for path, label, dest, why in expired:
            try:
                self.md.apply([op(path, dest)])
            except (Conflict, NotFound):
                self.report.steps.append(Step("retention", label, path, "raced", (), "done by another worker"))
                continue
            self.report.steps.append(Step("retention", label, path, "done", (), why))


def _session(path: str) -> bool:
    """A session record (not a raw copy or anything in a subfolder)."""
    return path.startswith(SESSIONS) and "/" not in path[len(SESSIONS):]


def _in_diary(files: set[str], kind: str) -> list[Period]:
    """The periods of `kind` with a file directly in diary/ (not yet folded into a longer one)."""
    out = []
    for path in files:
        if path.startswith(DIARY) and "/" not in path[len(DIARY):]:
            p = period_of_file(path)
            if p is not None and p.kind == kind:
                out.append(p)
    return sorted(out, key=lambda p: p.first)


def _free(files: set[str], path: str) -> str:
    """`path`, or `-2`, `-3`… when that is taken."""
    base, n, p = path[:-3], 1, path
    while p in files:
        n += 1
        p = f"{base}-{n}.md"
    return p


def _paragraph_of(body: str) -> str:
    """A diary body without its heading."""
    return "\n".join(ln for ln in body.strip().splitlines() if not ln.startswith("# ")).strip()


def check_request(day_label: str | None, week: str | None, month: str | None, due: bool) -> None:
    """Refuse a roll-up request that names no period, or more than one (before anything is opened)."""
    chosen = [x for x in (day_label, week, month) if x is not None]
    if len(chosen) > 1 or (chosen and due):
        raise InvalidArgument("give one of --day, --week, --month or --due")
    if not chosen and not due:
        raise InvalidArgument("say what to roll up: --due (everything whose period has closed), or --day, --week or --month")


def _due(diary: Diary) -> None:
    """Every roll-up whose period has closed, shortest first, then retention."""
    try:
        retry_pending(diary.md, diary.summarizer)
    except MemdirError:
        pass  # a pending session stays pending; its day waits for it
    for p in diary.due_days():
        diary.roll(p)
    for p in diary.due_weeks():
        diary.roll(p)
    for p in diary.due_months():
        diary.roll(p)
    diary.retain()


def rollup(md: Memdir, *, day_label: str | None = None, week: str | None = None, month: str | None = None,
           due: bool = False, now: dt.datetime | None = None, dry_run: bool = False,
           summarizer: Summarizer | None = None, retention: Retention | None = None,
           consolidate: bool = False, yes: bool = False) -> Report:
    """Roll up one day, week or month, or (`due`) everything whose period has closed, then apply retention.

    Safe to run twice, or in several processes at once: each roll-up happens once. A `due` run that is a
    backfill (`Diary.backfill`) only plans unless `yes`: its report's `needs_yes` says why.
    `consolidate` then adds `consolidate.plan`'s actions as `proposed` (or `held`) steps: a roll-up runs
    unattended, so it never applies them; a person reviews them with `memdir consolidate --apply`.
    Every run is counted for a server's metrics (`counts`): its steps by kind and status, or failed if it raised.
    """
    check_request(day_label, week, month, due)
    try:
        report = _rollup(md, day_label, week, month, due, now, dry_run, summarizer, retention, consolidate, yes)
    except BaseException:
        counts.rolled(None)
        raise
    counts.rolled([(s.kind, s.status) for s in report.steps])
    return report


def _rollup(md: Memdir, day_label: str | None, week: str | None, month: str | None, due: bool,
            now: dt.datetime | None, dry_run: bool, summarizer: Summarizer | None, retention: Retention | None,
            consolidate: bool, yes: bool) -> Report:
    diary = Diary(md, summarizer or summarizer_for(md), now or dt.datetime.now(dt.UTC), dry_run,
                  retention or Retention.load(settings(md, "diary")))
    diary.report.dry_run = dry_run
    if day_label is not None:
        diary.roll(parse_period("day", day_label))
    elif week is not None:
        diary.roll(parse_period("week", week))
    elif month is not None:
        diary.roll(parse_period("month", month))
    else:
        rolls, retention_steps = diary.schedule()
        diary.report.needs_yes = "" if yes or dry_run else diary.backfill(rolls, retention_steps)
        if dry_run or diary.report.needs_yes:  # the plan, and nothing written
            diary.report.steps += rolls + retention_steps
        else:
            _due(diary)
    if consolidate:  # unattended: it proposes, and a person applies it with `memdir consolidate --apply`
        for a in upkeep.plan(md, today=diary.today).actions:
            status = "planned" if dry_run else a.status
            diary.report.steps.append(Step("consolidate", a.kind, a.paths[0], status, a.paths[1:], a.detail))
    return diary.report


# ---------------------------------------------------------------- tenants


def tenants(location: str) -> list[str | None]:
    """Every tenant at a location (None: the memory without a tenant), for `rollup --all-tenants`."""
    found = _tenants(location)
    return sorted({None if t == DEFAULT_TENANT else t for t in found}, key=lambda t: "" if t is None else f"~{t}")


def _tenants(location: str) -> list[str | None]:
    scheme = scheme_of(location)
    if scheme == "file":
        root = folder_of(location)
        out: list[str | None] = [None] if (root / ".memdir").is_dir() else []
        sub = root / "tenants"
        if sub.is_dir():  # tenants/default/ (from before the name was reserved) opens only once moved: not listed
            out += sorted(p.name for p in sub.iterdir() if (p / ".memdir").is_dir() and p.name != DEFAULT_TENANT)
        return out
    if scheme == "sqlite":
        import sqlite3

        db = sqlite3.connect(f"file:{database_path(location)}?mode=ro", uri=True)
        try:
            return [r[0] for r in db.execute("SELECT DISTINCT tenant_id FROM memdir_journal ORDER BY 1")]
        except sqlite3.Error:
            return []
        finally:
            db.close()
    if scheme == "s3":
        import boto3

        from ..stores.s3 import parse_url  # the optional backends' modules load with their first URL

        bucket, prefix = parse_url(location)
        base = f"{prefix}/tenants/" if prefix else "tenants/"
        found: list[str | None] = []
        for page in boto3.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=base, Delimiter="/"):
            found += [p["Prefix"][len(base):].rstrip("/") for p in page.get("CommonPrefixes", [])]
        return sorted(found, key=str)

    from ..stores.postgres import tenants

    return list(tenants(location))
