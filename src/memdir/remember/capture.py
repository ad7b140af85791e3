"""Remembering without being asked: session records, capture health, feedback saved at once.

`capture(md, session_id, transcript)` writes `sessions/<YYYY-MM-DD-HHMMSS>-<id>.md`
(type `session`): a short record of what the user asked and did, their
corrections and preferences, decisions, what broke and what is open, as
markdown sections and as frontmatter lists. A re-run for the same session id
replaces the record in place. Every attempt leaves a trace: a skipped capture
(transcript missing, unreadable or empty) writes or annotates the record with
the reason, and a summariser error keeps the conversation itself under
`sessions/raw/` (status `pending`) until a later run summarises it. All of a
capture's files change in one `Memdir.apply` batch.

Nothing the secret guard would refuse goes into a record, or to a summariser:
the transcript's turns are redacted as soon as it is read, a summariser failure
is recorded as memdir's own line (a provider's status and error type, never
its body), and the session id, working folder, git branch and transcript path
are checked like any text (an id that holds a credential names its record
`redacted.<digest>`). A capture the guard or a limit still refuses leaves a
skipped record saying so, so `memdir stats` shows every attempt.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import os
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import dates, model, paths
from ..core import guard
from ..core.memdir import Op
from ..errors import InvalidArgument, InvalidMemory, LimitExceeded, MemdirError, NotFound
from ..stores.locations import config_file
from . import counts, rules, summarize, timeline, transcripts
from .activity import Activity
from .summarize import LISTS, SessionSummary, Summarizer, describe
from .transcripts import Transcript, TranscriptError, redact, redact_value, redacted

if TYPE_CHECKING:
    from ..core.memdir import Memdir, Op

SESSIONS = "sessions/"
RAW = "sessions/raw/"
SKIPPED = "sessions/skipped/"  # attempts that captured nothing: `memdir stats` lists them, no index or context does
ARCHIVED = "archive/sessions/"
FEEDBACK = "feedback/"
HEADINGS = {"asked": "Also asked", "corrections": "Corrections", "preferences": "Preferences and facts stated",
            "decisions": "Decisions", "broke": "What broke", "open": "Open threads"}
_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d{6})-(.+)\.md$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_ID_CHARS = 64
REFUSED = (InvalidMemory, LimitExceeded)  # what the planner refuses in a record: the guard, the schema, a limit


# ---------------------------------------------------------------- settings


def settings(md: Memdir, table: str) -> dict[str, Any]:
    """A table of memdir.toml (`[diary]`, `[summarizer]`) for folder memories; {} elsewhere (use the environment)."""
    cfg = config_file(md.store)
    if cfg is None:
        return {}
    try:
        data = tomllib.loads(cfg.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{cfg}: not valid TOML ({e}); fix or remove the file") from None
    got = data.get(table, {})
    return dict(got) if isinstance(got, dict) else {}


def summarizer_for(md: Memdir) -> Summarizer:
    """The summariser memdir.toml or the environment configure (extractive by default)."""
    return summarize.load(settings(md, "summarizer"))


def transcript_cap(md: Memdir, environ: Any = None) -> int:
    """The bytes a capture reads of a transcript file: `[capture] max_transcript_mb` in memdir.toml or
    MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB (64 MB unless set)."""
    environ = os.environ if environ is None else environ
    table = settings(md, "capture")
    for key in table:
        if key != "max_transcript_mb":
            raise InvalidArgument(f"memdir.toml [capture]: unknown setting {key!r}; known: max_transcript_mb")
    where, value = "memdir.toml [capture] max_transcript_mb", table.get("max_transcript_mb")
    if environ.get("MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB"):
        where, value = "MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB", environ["MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB"]
    if value is None:
        return transcripts.MAX_BYTES
    try:
        mb = float(value)
        if isinstance(value, bool) or not 0 < mb < 2**20:
            raise ValueError(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{where} = {value!r} is not valid; give the megabytes a transcript may have, e.g. 64") from None
    return int(mb * 2**20)


def _as(md: Memdir, actor: str | None) -> Memdir:
    """The same memory writing under another journal actor."""
    if actor is None:
        return md
    view = copy.copy(md)
    view.actor = actor
    return view


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Captured:
    """What one capture attempt did: status captured, pending (summariser error) or skipped."""

    session: str
    status: str
    path: str | None
    change: str = "none"  # created, updated, unchanged, or none
    reason: str = ""
    summary: SessionSummary | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "status": self.status, "path": self.path, "change": self.change,
                "reason": self.reason}


@dataclass(frozen=True)
class SessionInfo:
    """One session record as `sessions()` lists it, from its frontmatter."""

    path: str
    session: str
    date: str
    status: str
    title: str
    lists: dict[str, list[str]] = field(default_factory=dict)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "session": self.session, "date": self.date, "status": self.status,
                "title": self.title, "reason": self.reason, **{k: self.lists.get(k, []) for k in LISTS}}


def safe_id(session_id: object) -> str:
    """The session id as a record's file name holds it, one name per id.

    An id of letters, digits, `-` and `_` (64 at most) that holds nothing the
    secret guard refuses is its own name; any other id is named by what is left
    of it after sanitising (`redacted` if it holds a credential), a `.` (which
    no unchanged id holds) and 8 hex digits of its SHA-256, so "team a/b" and
    "team-a-b" never share a record.
    """
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidArgument(f"session id must be non-empty text, got {session_id!r}")
    sid = session_id.strip()
    safe = "redacted" if guard.find_secret(sid) else _UNSAFE.sub("-", sid).strip("-")[:_ID_CHARS] or "session"
    if safe == sid:
        return sid
    return f"{safe}.{hashlib.sha256(sid.encode()).hexdigest()[:8]}"


def _legacy_id(sid: str) -> str:
    """The name an id had before names were one per id (records captured then are still found)."""
    return _UNSAFE.sub("-", sid.strip()).strip("-")[:_ID_CHARS] or "session"


shown = redact_value  # a session id, folder, branch or path as a record may hold it


def record_path(when: dt.datetime, session_id: str) -> str:
    return f"{SESSIONS}{when.astimezone(dt.UTC):%Y-%m-%d-%H%M%S}-{safe_id(session_id)}.md"


def find(md: Memdir, session_id: str, folder: str = SESSIONS) -> str | None:
    """The record of `session_id` directly in `folder`, if there is one."""
    sid = session_id.strip()
    safe, legacy = safe_id(sid), _legacy_id(sid)
    named = []
    for e in md.list(folder):
        name = e.path[len(folder):]
        m = _NAME.match(name)
        if m and "/" not in name and m.group(3) in (safe, legacy):
            named.append((m.group(3) != safe, e.path))
    for old, path in sorted(named):  # the name of now first, then the name of before
        if not old and safe != sid:
            return path  # a name with a digest is one id's
        whose = _whose(md, path)  # a plain name may be another id's, from before names had digests
        if whose == sid or (whose is None and safe == sid):
            return path
    return None


def _whose(md: Memdir, path: str) -> str | None:
    """The session id a record's frontmatter names, if it names one."""
    try:
        got = md.read(path).meta.get("session")
    except MemdirError:
        return None
    return got if isinstance(got, str) else None


def _id_of(path: str) -> str:
    """The session id part of a record's file name (one per session)."""
    m = _NAME.match(path.rsplit("/", 1)[-1])
    return m.group(3) if m else path


def day_of(path: str) -> str | None:
    """The YYYY-MM-DD a session record's file name starts with."""
    m = _NAME.match(path.rsplit("/", 1)[-1])
    return m.group(1) if m else None


def _clean(items: Iterable[str], today: dt.date) -> list[str]:
    return [dates.absolute(" ".join(redact(x).split()), today) for x in items if x.strip()]


def render_record(session_id: str, when: dt.datetime, summary: SessionSummary, *, source: str, turns: int,
                  extra: dict[str, Any] | None = None, max_name: int = 100, activity: Activity | None = None) -> str:
    """The record's text. `activity` (what the agent did, read from its tool calls) is the "What was done" section
    and the `tools`, `files` and `commands` lists; a summariser's own lists come after it."""
    today = when.date()
    title = dates.absolute(redact(summary.title), today)
    lists = {k: _clean(getattr(summary, k), today) for k in LISTS}
    done = [] if activity is None else [" ".join(redact(x).split()) for x in activity.lines()]
    if activity is not None:
        told = [b for b in lists["broke"] if not b.startswith("[tool error:")]  # the tools' own lines stand for these
        lists["broke"] = [*(redact(x) for x in activity.failures), *told][:summarize.MAX_ITEMS]
    meta: dict[str, Any] = {
        "name": model.clip(f"session {when:%Y-%m-%d %H:%M}: {title}", max_name),
        "description": model.clip(title, 280),
        "type": "session",
        "session": shown(session_id),
        "status": "captured",
        "date": model.Stamp(dates.stamp(when)),
        "source": source,
        "turns": turns,
        **(extra or {}),
        **{k: v for k, v in lists.items() if v},
        **({} if activity is None else {k: v for k, v in (
            ("tools", [f"{name} {n}" for name, n in activity.tools]), ("files", [redact_value(f) for f in activity.files]),
            ("commands", [redact(c) for c in activity.commands])) if v}),
    }
    body = [f"# {title}", ""]
    if done:
        body += ["## What was done", *[f"- {x}" for x in done], ""]
    for k in LISTS:
        if lists[k]:
            body += [f"## {HEADINGS[k]}", *[f"- {x}" for x in lists[k]], ""]
    return model.render(meta, "\n".join(body).rstrip() + "\n")


def _limit(md: Memdir) -> int:
    """Characters a record's lists may take: they appear twice (frontmatter and body) within max_bytes."""
    return max(400, min(4000, (md.limits.max_bytes - 2000) // 3))


def raw_parts(text: str, stem: str, md: Memdir) -> list[tuple[str, str]]:
    """The conversation split into `sessions/raw/<stem>/part-NNN.md` files, each within the limits."""
    budget_bytes = max(1000, md.limits.max_bytes - 600)
    budget_lines = max(10, md.limits.max_lines - 10)
    chunks: list[list[str]] = [[]]
    size = 0
    for line in paths.lines(text):
        pieces = [line[i : i + budget_bytes // 4] for i in range(0, len(line), budget_bytes // 4)] or [""]
        for piece in pieces:
            cost = len(piece.encode()) + 1
            if chunks[-1] and (size + cost > budget_bytes or len(chunks[-1]) >= budget_lines):
                chunks.append([])
                size = 0
            chunks[-1].append(piece)
            size += cost
    out = []
    for i, lines in enumerate(chunks, 1):
        meta = {"name": f"raw session {stem} part {i}", "description": f"raw conversation kept until it is summarised ({stem}, part {i} of {len(chunks)})",
                "type": "session", "status": "raw"}
        out.append((f"{RAW}{stem}/part-{i:03d}.md", model.render(meta, "\n".join(lines) + "\n")))
    return out


# ---------------------------------------------------------------- capture


def capture(md: Memdir, session_id: str, transcript: Any, *, actor: str | None = None, at: Any = None,
            summarizer: Summarizer | None = None, event: str | None = None, max_bytes: int | None = None) -> Captured:
    """Write (or replace) the record of one session; never raises for a bad transcript (it is recorded as skipped).

    `transcript`: a path (`pathlib.Path`), text (plain, JSON messages or Claude
    Code JSONL) or a list of messages. `at`: when the session happened (default: the
    transcript's last timestamp, else now); relative dates in the record are
    resolved against it. `event` notes what triggered the capture (e.g. SessionEnd).
    `max_bytes`: what is read of a transcript file at most (default: `transcript_cap`).
    Every attempt is counted for a server's metrics (`counts`), a raised one as failed.
    """
    safe_id(session_id)  # a bad id is the caller's mistake, not a failed capture
    if os.environ.get(summarize.SUMMARIZING):  # the agent CLI summarising a session ended its own: no session
        return Captured(shown(session_id.strip()), "skipped", None, "none", "summariser")
    try:
        done = _capture(md, session_id, transcript, actor=actor, at=at, summarizer=summarizer, event=event,
                        max_bytes=max_bytes)
    except BaseException:
        counts.captured("failed")
        raise
    counts.captured(done.status)
    return done


def _capture(md: Memdir, session_id: str, transcript: Any, *, actor: str | None, at: Any,
             summarizer: Summarizer | None, event: str | None, max_bytes: int | None) -> Captured:
    safe_id(session_id)
    sid = session_id.strip()
    md = _as(md.for_agent(rate=False), actor)  # a record of a model's session keeps to the agent's sizes
    event = None if event is None else shown(event)
    summarizer = summarizer or _loaded(md)
    source = os.fspath(transcript) if isinstance(transcript, os.PathLike) else None
    cap = transcript_cap(md) if max_bytes is None else max_bytes
    try:
        t = transcripts.load(transcript, max_bytes=cap)
    except TranscriptError as e:
        when = _when(at, None)
        return _skip(md, sid, when, e.reason, e.message, event)
    if t.meta.get("subagent"):  # a subagent's own file: it is folded into its parent's record, never one of its own
        return Captured(shown(sid), "skipped", None, "none", "subagent")
    if isinstance(transcript, Path):
        t = transcripts.with_subagents(t, transcript, cap)
    t = redacted(t)
    t = replace(t, meta={**t.meta, "record": shown(sid)})  # the session a learning names as where it came from
    when = _when(at, t)
    retry_pending(md, summarizer, skip=sid)
    existing = find(md, sid)
    path = existing or record_path(when, sid)
    stem = path[len(SESSIONS):-3]
    extra: dict[str, Any] = {k: shown(v) for k, v in (("event", event), ("transcript", source),
                                                      ("cwd", t.meta.get("cwd")), ("branch", t.meta.get("branch")))
                             if isinstance(v, str) and v}
    if isinstance(t.meta.get("summary"), str) and t.meta["summary"].strip():
        extra["summary"] = model.clip(" ".join(t.meta["summary"].split()), 280)  # the agent's own title for it
    if t.meta.get("subagents"):
        extra["subagents"] = t.meta["subagents"]
    if t.skipped:
        extra["skipped_lines"] = t.skipped  # lines of the transcript that could not be read
    stale = [e.path for e in md.list(f"{RAW}{stem}/")] if existing else []
    stubs = [p for p in (find(md, sid, SKIPPED),) if p is not None]  # a skipped attempt this capture now answers
    try:
        summary = summarizer.session(t, date=when.date().isoformat(), limit=_limit(md))
    except Exception as e:  # noqa: BLE001 - any summariser failure keeps the raw session for a retry
        kept = {**extra, **_activity_meta(t.activity)}  # what the agent did, for the retry's record
        return _pending(md, sid, path, stem, when, t, f"summariser error: {describe(e)}", kept, stale, event)
    summary, refused = kept_summary(summarizer, summary, t, when.date().isoformat(), _limit(md))
    if refused:
        extra["summariser_refused"] = refused
    text = _fitted(md, sid, when, summary, t, extra)
    try:
        done = md.apply([Op.write(path, text), *[Op.delete(p) for p in [*stale, *stubs]]])[0]
    except REFUSED as e:  # what the guard or a limit refuses still leaves a trace
        return _skip(md, sid, when, "refused", e.message, event)
    return Captured(shown(sid), "captured", done.path, done.change, "", summary)


ACTIVITY = ("tools_used", "files_changed", "commands_run", "failed", "reports")  # a pending record's activity


def _activity_meta(a: Activity) -> dict[str, Any]:
    """The activity as a pending record keeps it until the retry renders the record."""
    values = ([f"{name} {n}" for name, n in a.tools], a.files, a.commands, a.failures, a.results)
    return {k: list(v) for k, v in zip(ACTIVITY, values, strict=True) if v}


def _activity_of(meta: dict[str, Any]) -> Activity | None:
    """The activity a pending record kept, if it kept one."""
    if not any(meta.get(k) for k in ACTIVITY):
        return None
    tools = []
    for item in meta.get("tools_used") or ():
        name, _, n = str(item).rpartition(" ")
        tools.append((name, int(n)) if n.isdigit() and name else (str(item), 1))
    lists = [tuple(str(x) for x in meta.get(k) or ()) for k in ACTIVITY[1:]]
    return Activity(tuple(tools), *lists)


def kept_summary(summarizer: Summarizer, summary: SessionSummary, t: Transcript, date: str,
                 limit: int) -> tuple[SessionSummary, str]:
    """A model's record held to the extractive one's rules (`rules.py`): fitted when it keeps them, else refused for
    the extractive record, with why (the second value, "" when kept)."""
    if isinstance(summarizer, summarize.Extractive):
        return summary, ""
    wrong = rules.problems(summary, t)
    if wrong:
        why = model.clip(redact(f"{summarizer.name}: {wrong[0]}"), 280)
        return summarize.Extractive().session(t, date=date, limit=limit), why
    return rules.fitted(summary, t), ""


def _fitted(md: Memdir, sid: str, when: dt.datetime, summary: SessionSummary, t: Transcript, extra: dict[str, Any]) -> str:
    """The record with as much of the activity as the memory's size and line limits leave room for."""
    a = t.activity
    for activity in (a, Activity(a.tools, a.files[:5], a.commands[-4:], a.failures[:3], a.results[:2]), None):
        text = render_record(sid, when, summary, source=t.format, turns=len(t.turns), extra=extra,
                             max_name=md.limits.max_name, activity=activity)
        if len(text.encode()) <= md.limits.max_bytes and model.count_lines(text) <= md.limits.max_lines:
            break
    return text


@dataclass
class _Unloadable:
    """The summariser memdir.toml or the environment name, when it cannot be loaded: every call fails as loading did,
    so a capture keeps the session raw for the run after the setting is fixed."""

    error: MemdirError
    name: str = "unloadable"
    usage: Counter[str] = field(default_factory=Counter)

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary:
        raise self.error

    def digest(self, period: str, label: str, items: Sequence[summarize.Digest], *, limit: int) -> summarize.Digest:
        raise self.error


def _loaded(md: Memdir) -> Summarizer:
    try:
        return summarizer_for(md)
    except MemdirError as e:  # a summariser that cannot be loaded is a summariser failure, not a lost session
        return _Unloadable(e)


def _when(at: Any, t: Transcript | None) -> dt.datetime:
    if at is not None:
        return dates.parse_when(at)
    if t is not None and t.ended is not None:
        return t.ended.astimezone(dt.UTC).replace(microsecond=0)
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _skip(md: Memdir, sid: str, when: dt.datetime, reason: str, message: str, event: str | None) -> Captured:
    """Record a capture that had nothing to capture, so a broken hook shows up in `memdir stats`."""
    message = redact(" ".join(message.split()))
    existing = find(md, sid)
    note = f"{dates.stamp(dt.datetime.now(dt.UTC))} {reason}: {message}"
    if existing is not None:
        cur = md.read(existing)
        old, body = model.parse(cur.text, path=existing, strict=False)
        old["last_skip"] = model.clip(note, 280)
        try:
            done = md.apply([Op.write(existing, model.render(old, body), expect=cur.version)])[0]
            return Captured(shown(sid), "skipped", existing, done.change, reason)
        except REFUSED:
            pass  # the record as it is cannot be written again: a stub of its own beside it
    path = find(md, sid, SKIPPED) or SKIPPED + record_path(when, sid)[len(SESSIONS):]
    meta: dict[str, Any] = {"name": model.clip(f"session {when:%Y-%m-%d %H:%M}: capture skipped ({reason})", md.limits.max_name),
                            "description": model.clip(f"capture skipped: {message}", 280), "type": "session",
                            "session": shown(sid), "status": "skipped", "reason": reason,
                            "date": model.Stamp(dates.stamp(when)), **({"event": event} if event else {})}
    text = model.render(meta, f"Capture skipped ({reason}): {message}\n")
    done = md.apply([Op.write(path, text)])[0]
    return Captured(shown(sid), "skipped", path, done.change, reason)


def _pending(md: Memdir, sid: str, path: str, stem: str, when: dt.datetime, t: Transcript, reason: str,
             extra: dict[str, Any], stale: list[str], event: str | None) -> Captured:
    """Keep the conversation itself (status pending) so the next run can summarise it.

    Should the record be refused even so, it is written again with memdir's words only: the session is kept."""
    parts = raw_parts(t.as_text(), stem, md)  # redacted as it was read
    keep = {p for p, _ in parts}
    moved = [Op.write(p, text) for p, text in parts] + [Op.delete(p) for p in stale if p not in keep]
    for why, more in ((reason, extra), ("summariser error", {})):
        meta: dict[str, Any] = {"name": model.clip(f"session {when:%Y-%m-%d %H:%M}: not summarised yet", md.limits.max_name),
                                "description": model.clip(f"pending: {why}", 280), "type": "session",
                                "session": shown(sid), "status": "pending", "reason": model.clip(why, 280),
                                "date": model.Stamp(dates.stamp(when)), "source": t.format, "turns": len(t.turns), **more}
        body = (f"Summarising this session failed ({why}). The conversation is kept in {RAW}{stem}/ "
                "and is summarised on the next capture or roll-up.\n")
        try:
            done = md.apply([Op.write(path, model.render(meta, body)), *moved])[0]
            return Captured(shown(sid), "pending", path, done.change, why)
        except REFUSED as e:
            refusal = e
    return _skip(md, sid, when, "refused", refusal.message, event)


def retry_pending(md: Memdir, summarizer: Summarizer | None = None, *, skip: str | None = None) -> list[Captured]:
    """Summarise again every session kept raw after a summariser error; returns what it tried."""
    raw = md.list(RAW)
    if not raw:
        return []
    summarizer = summarizer or summarizer_for(md)
    groups: dict[str, list[str]] = {}
    for e in raw:
        stem = e.path[len(RAW):].split("/", 1)[0]
        groups.setdefault(stem, []).append(e.path)
    out = []
    for stem, parts in sorted(groups.items()):
        path = f"{SESSIONS}{stem}.md"
        try:
            rec = md.read(path)
        except NotFound:
            rec = None
        meta = {} if rec is None else rec.meta
        named = _NAME.match(stem + ".md")
        sid = str(meta.get("session") or (named.group(3) if named else stem))
        if skip is not None and (named.group(3) if named else stem) in (safe_id(skip), _legacy_id(skip)):
            continue  # the session being captured now: its capture replaces the raw copy
        text = "".join(model.parse(md.read(p).text, path=p, strict=False)[1] for p in sorted(parts))
        t = transcripts.from_plain(text)
        t = replace(t, meta={**t.meta, "record": shown(sid)})
        when = dates.parse_when(str(meta["date"])) if meta.get("date") else _when(None, None)
        try:
            summary = summarizer.session(t, date=when.date().isoformat(), limit=_limit(md))
            summary, refused = kept_summary(summarizer, summary, t, when.date().isoformat(), _limit(md))
        except Exception as e:  # noqa: BLE001
            reason = f"summariser error: {describe(e)}"
            if rec is not None:
                m2, body = model.parse(rec.text, path=path, strict=False)
                m2["reason"], m2["attempts"] = model.clip(reason, 280), int(m2.get("attempts") or 1) + 1
                md.apply([Op.write(path, model.render(m2, body), expect=rec.version)])
            out.append(Captured(sid, "pending", path, "updated", reason))
            continue
        extra = {k: meta[k] for k in ("event", "transcript", "cwd", "branch", "skipped_lines", "summary", "subagents")
                 if meta.get(k)}
        if refused:
            extra["summariser_refused"] = refused
        text = render_record(sid, when, summary, source=str(meta.get("source") or "text"), turns=len(t.turns),
                             extra=extra, max_name=md.limits.max_name, activity=_activity_of(meta))
        try:
            # expect the record as read (or still absent): a concurrent retry makes this one a no-op
            md.apply([Op.write(path, text, expect=None if rec is None else rec.version), *[Op.delete(p) for p in parts]])
        except MemdirError:
            continue  # another process retried it meanwhile
        out.append(Captured(sid, "captured", path, "updated", "", summary))
    return out


# ---------------------------------------------------------------- reading records


def _info(m: model.Memory) -> SessionInfo:
    meta = m.meta
    return SessionInfo(
        path=m.path, session=str(meta.get("session") or ""), date=str(meta.get("date") or day_of(m.path) or ""),
        status=str(meta.get("status") or "captured"), title=m.description,
        lists={k: [str(x) for x in meta.get(k) or ()] for k in LISTS}, reason=str(meta.get("reason") or meta.get("last_skip") or ""),
    )


def sessions(md: Memdir, *, since: Any = None, open_only: bool = False, archived: bool = True,
             now: dt.datetime | None = None) -> list[SessionInfo]:
    """Session records (newest first) since a date or age such as `7d`; `open_only`: those with open threads.

    The date is in each file name, so only records in the window are read.
    """
    day = None if since is None else dates.parse_when(since, now=now).date().isoformat()
    folders = [SESSIONS] + ([ARCHIVED] if archived else [])
    picked = []
    for folder in folders:
        for e in md.list(folder):
            d = day_of(e.path)
            if d is None or e.path.startswith(RAW) or (day is not None and d < day):
                continue
            picked.append(e.path)
    out = []
    for path in sorted(picked, key=lambda p: (p.rsplit("/", 1)[-1], p), reverse=True):
        try:
            info = _info(md.read(path))
        except NotFound:
            continue
        if open_only and not info.lists.get("open"):
            continue
        out.append(info)
    return out


@dataclass(frozen=True)
class Health:
    """Capture health over the last days: the last capture, the sessions captured, and every attempt that did not
    capture."""

    last_capture: SessionInfo | None
    captured: int
    pending: list[SessionInfo]
    skipped: list[SessionInfo]
    days: int

    @property
    def ok(self) -> bool:
        return not self.pending and not self.skipped

    def to_dict(self) -> dict[str, Any]:
        return {"days": self.days, "ok": self.ok, "captured": self.captured,
                "last_capture": None if self.last_capture is None else self.last_capture.to_dict(),
                "pending": [s.to_dict() for s in self.pending], "skipped": [s.to_dict() for s in self.skipped]}


def health(md: Memdir, *, days: int = 7, now: dt.datetime | None = None) -> Health:
    """What `memdir stats` shows about capture: a silently broken hook shows up the same day."""
    infos = sessions(md, since=f"{days}d", now=now)
    captured = [s for s in infos if s.status == "captured"]
    return Health(
        last_capture=captured[0] if captured else None,
        captured=len({_id_of(s.path) for s in captured}),  # a session captured again is one session
        pending=[s for s in infos if s.status == "pending"],
        skipped=[s for s in infos if s.status == "skipped" or (s.status == "captured" and s.reason)],
        days=days,
    )


# ---------------------------------------------------------------- feedback

_POLARITY = re.compile(r"\b(?:never|don't|do not|dont|avoid|no longer|stop|not|without|disable|no)\b", re.IGNORECASE)
_POSITIVE = re.compile(r"\b(?:always|prefer|use|do|enable|must|should)\b", re.IGNORECASE)


def subject(text: str) -> set[str]:
    """The content words of a rule, without the words that only say yes or no."""
    drop = {"never", "always", "avoid", "prefer", "stop", "don't", "dont", "not", "use", "enable", "disable",
            "must", "should", "without", "longer"}
    return {w for w in summarize.words(text) if w not in drop}


def negative(text: str) -> bool:
    return bool(_POLARITY.search(text))


def similarity(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def rule_of(m: model.Memory) -> str:
    """A feedback memory's rule: its name, else its first body line."""
    first = next((ln.strip() for ln in paths.lines(m.body) if ln.strip() and not ln.startswith("**")), "")
    return str(m.meta.get("name") or first or m.name)


def contradicts(a: str, b: str, threshold: float = 0.6) -> bool:
    """Two rules about the same subject, one saying do and the other don't."""
    return similarity(subject(a), subject(b)) >= threshold and negative(a) != negative(b)


def remember_feedback(md: Memdir, rule: str, why: str, how_to_apply: str) -> model.Memory:
    """Save a correction or preference at once as a `feedback/` memory with **Why:** and **How to apply:**.

    The memory with the same rule (same words, or nearly) is updated instead of
    adding a duplicate; a feedback memory on the same subject that says the
    opposite is superseded by this one (moved to archive/ with the reason).
    """
    for what, value in (("rule", rule), ("why", why), ("how_to_apply", how_to_apply)):
        if not isinstance(value, str) or not value.strip():
            raise InvalidArgument(f"remember_feedback: {what} must be non-empty text; say the rule, why it holds and when to apply it")
    rule = " ".join(rule.split())
    if len(rule) > md.limits.max_description:
        raise InvalidArgument(f"remember_feedback: the rule is {len(rule)} characters; keep it to one line under "
                              f"{md.limits.max_description} and put detail in why")
    mine = subject(rule)
    same: model.Memory | None = None
    opposite: list[model.Memory] = []
    for e in md.list(FEEDBACK):
        try:
            m = md.read(e.path)
        except MemdirError:
            continue
        theirs = rule_of(m)
        if summarize._key(theirs) == summarize._key(rule) or (
                similarity(mine, subject(theirs)) >= 0.8 and negative(theirs) == negative(rule)):
            same = same or m
        elif contradicts(rule, theirs):
            opposite.append(m)
    path = same.path if same is not None else _free(md, FEEDBACK + _slug(rule) + ".md")
    body = (f"{rule}\n\n**Why:** {' '.join(why.split())}\n**How to apply:** {' '.join(how_to_apply.split())}\n")
    body = dates.absolute(body, dt.datetime.now(dt.UTC).date())
    meta: dict[str, Any] = dict(same.meta) if same is not None else {}
    meta.update(name=model.clip(rule, md.limits.max_name), description=model.clip(rule, md.limits.max_description),
                type="feedback")
    ops: list[Op] = [Op.write(path, model.render(meta, body), expect=same.version if same else None)]
    taken: set[str] = set()
    for old in opposite:
        op = timeline.supersede_op(md, old.path, by=path, reason=f"contradicted by the feedback: {model.clip(rule, 200)}",
                                   taken=taken)
        taken.add(op.dest or "")
        ops.append(op)
    return md.apply(ops)[0]


def _slug(text: str) -> str:
    slug = "-".join(summarize._WORD.findall(text.lower()))[:60].strip("-")
    return slug or "feedback"


def _free(md: Memdir, path: str) -> str:
    p, n = paths.topic_path(path), 1
    while md.store.get(p) is not None:
        n += 1
        p = f"{path[:-3]}-{n}.md"
    return p
