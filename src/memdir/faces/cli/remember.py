"""Commands for remembering without being asked: capture, sessions, the diary, upkeep, feedback, health.

Registered by `faces/cli/__init__.py`. These run as the library, not as an agent: they open
the memory with no write rate limit (`writes_per_minute=0`), so a roll-up of a
busy month or a hook at the end of a session is never throttled.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import click

from ...core import reconcile
from ...core.memdir import Memdir
from ...core.opening import open as open_memdir
from ...dates import parse_when
from ...remember import capture as capture_mod
from ...remember import consolidate as upkeep
from ...remember import diary, gitsync, timeline
from ...remember.capture import health
from ...remember.capture import sessions as list_sessions
from ...search import semantic
from .base import Context, emit, fail, json_option


def _open(obj: Context, actor: str | None = None) -> Memdir:
    """The memory of --root/--tenant for background work: created if missing, never rate limited."""
    return obj.memdir(create=True, writes_per_minute=0, **({"actor": actor} if actor else {}))


def _now(value: str | None) -> dt.datetime | None:
    if value is None:
        return None

    return parse_when(value)


# ---------------------------------------------------------------- capture


@click.command()
@click.argument("session_id")
@click.argument("transcript", required=False, default="-", metavar="[FILE|-]")
@click.option("--at", metavar="WHEN", help="When the session happened (ISO date/time); default: its last timestamp, else now.")
@json_option
@click.pass_obj
def capture(obj: Context, session_id: str, transcript: str, at: str | None, as_json: bool) -> None:
    """Write the structured record of session SESSION_ID from a transcript FILE (or - for stdin).

    The transcript may be plain text (User:/Assistant: lines), a JSON list of
    {role, content} messages (Anthropic or OpenAI shape) or a Claude Code
    session file (JSONL). Running it again for the same id replaces the record.
    A missing, unreadable or empty transcript is recorded as skipped (exit 1),
    so `memdir stats` shows it.

    \b
    memdir capture 2f1c… ~/.claude/projects/my-project/2f1c….jsonl
    """
    source: Any
    if transcript == "-":
        if sys.stdin.isatty():
            raise click.UsageError("give a transcript FILE, or pipe it on stdin")
        stream = getattr(sys.stdin, "buffer", None)  # bytes: a line that is not UTF-8 is skipped, not the session
        source = stream.read() if stream is not None else sys.stdin.read()
    else:
        source = Path(transcript)
    done = capture_mod.capture(_open(obj), session_id, source, at=at)
    if as_json:
        emit(done.to_dict())
    elif done.status == "captured":
        click.echo(f"{done.change} {done.path}")
    elif done.reason == "subagent":
        click.echo(f"skipped: {done.session} is a subagent's transcript, which capture folds into its parent "
                   "session's record; capture the parent session's transcript instead")
    else:
        click.echo(f"{done.status}: {done.path or done.session} ({done.reason})")
    if done.status == "skipped":
        sys.exit(1)


@click.command()
@click.option("--since", metavar="WHEN", help="Only sessions since a date (2026-11-01) or an age (7d, 12h).")
@click.option("--open", "open_only", is_flag=True, help="Only sessions that left threads open.")
@json_option
@click.pass_obj
def sessions(obj: Context, since: str | None, open_only: bool, as_json: bool) -> None:
    """List captured sessions, newest first: date, status, title (and open threads with --open).

    Answers "what was I working on yesterday?" (--since 1d) and "what is still
    open?" (--open) from the records' frontmatter.
    """
    found = list_sessions(obj.memdir(), since=since, open_only=open_only)
    if as_json:
        emit([s.to_dict() for s in found])
        return
    for s in found:
        click.echo(f"{s.date[:16]}\t{s.status}\t{s.path}\t{s.title}")
        if open_only:
            for item in s.lists.get("open", []):
                click.echo(f"\topen: {item}")
    if not found:
        click.echo("no sessions" + (" with open threads" if open_only else "") + (f" since {since}" if since else ""), err=True)


# ---------------------------------------------------------------- the diary


@click.command()
@click.option("--due", is_flag=True, help="Everything whose period has closed and is not rolled up, then retention.")
@click.option("--day", "day_label", metavar="YYYY-MM-DD", help="Roll up one day's sessions.")
@click.option("--week", metavar="YYYY-Www", help="Roll up one ISO week's dailies.")
@click.option("--month", metavar="YYYY-MM", help="Roll up one month's weeklies.")
@click.option("--dry-run", is_flag=True, help="Show what would be rolled up, archived or deleted; change nothing.")
@click.option("--yes", is_flag=True, help="Go ahead with a backfill (more than 3 periods at once), which otherwise only shows its plan.")
@click.option("--all-tenants", is_flag=True, help="Every tenant of the location, one after another.")
@click.option("--consolidate", "then_consolidate", is_flag=True,
              help="Then show what `memdir consolidate` proposes (never applied unattended: review it, then --apply).")
@click.option("--now", "now_text", metavar="WHEN", hidden=True, help="Pretend it is WHEN (for tests and replays).")
@json_option
@click.pass_obj
def rollup(obj: Context, due: bool, day_label: str | None, week: str | None, month: str | None, dry_run: bool,
           yes: bool, all_tenants: bool, then_consolidate: bool, now_text: str | None, as_json: bool) -> None:
    """Roll sessions up into the diary: days, ISO weeks, months; then apply retention.

    A daily (diary/YYYY-MM-DD.md) is one paragraph, durable learnings first; a
    weekly (diary/YYYY-Www.md) two or three sentences; a monthly
    (diary/YYYY-MM.md) three bullets of recurring themes. What a roll-up folds
    in moves under archive/ and stays there: deleting past retention happens only
    when [diary] in memdir.toml sets it, and never before the file's text is
    folded into a longer period. A --due run that would touch more than 3
    periods at once (a backfill) shows its plan and does nothing without --yes.
    Safe to run twice or from several hosts at once: each roll-up happens exactly
    once. One cron line is all it needs:

    \b
    0 4 * * * memdir --root ~/memory rollup --due
    """
    diary.check_request(day_label, week, month, due)
    now = _now(now_text)
    kwargs: dict[str, Any] = dict(day_label=day_label, week=week, month=month, due=due, now=now, dry_run=dry_run,
                                  consolidate=then_consolidate, yes=yes)
    reports = []
    if all_tenants:
        if obj.tenant is not None:
            raise click.UsageError("--all-tenants walks every tenant; leave out --tenant")
        for tenant in diary.tenants(obj.root):
            with open_memdir(obj.root, tenant=tenant, writes_per_minute=0, create=False) as md:
                report = diary.rollup(md, **kwargs)
                report.tenant = tenant
                reports.append(report)
    else:
        reports.append(diary.rollup(_open(obj), **kwargs))
    if as_json:
        emit([r.to_dict() for r in reports] if all_tenants else reports[0].to_dict())
    else:
        for r in reports:
            if all_tenants:
                click.echo(f"tenant {r.tenant or '(root)'}:")
            click.echo(r.summary())
    waiting = [r for r in reports if r.needs_yes]
    if waiting:
        first = waiting[0]  # with --all-tenants, the other tenants went ahead
        where = f" (tenant {first.tenant or '(root)'})" if all_tenants else ""
        fail(f"nothing was done: this is a backfill{where}, {first.needs_yes}; "
             "check the plan above and run it again with --yes (--dry-run shows it without asking)")
    failed = [s for r in reports for s in r.failed]
    if failed:
        fail(f"{len(failed)} roll-up(s) failed and were left for the next run: " + "; ".join(f"{s.label}: {s.detail}" for s in failed))


# ---------------------------------------------------------------- upkeep


@click.command()
@click.option("--apply", "apply_plan", is_flag=True, help="Carry the plan out (journaled, undoable). Default: only show it.")
@click.option("--trust", "trusted", multiple=True, metavar="ACTOR",
              help="A journal actor (as `memdir log` names it) whose files may retire or change any file; repeatable.")
@click.option("--rests-on", "session", metavar="SESSION",
              help="Only list the learnings (in topic files and the diary) that rest on this session alone: what "
                   "forgetting it would leave without a source. Changes nothing.")
@json_option
@click.pass_obj
def consolidate(obj: Context, apply_plan: bool, trusted: tuple[str, ...], session: str | None, as_json: bool) -> None:
    """Propose merges of duplicates, supersessions of contradictions, diary learnings for topic files,
    and splits of oversized files; with --apply, carry them out through the normal write path.

    A file's text changes or retires another file only when every actor that wrote it (the journal)
    could have written the other: you, an actor given with --trust, or one that wrote that file
    itself. Any other action is held: shown, never applied. Every learning carried into a topic file
    names the sessions it came from.
    """
    md = _open(obj)
    if session is not None:
        alone = upkeep.resting_on(md, session)
        if as_json:
            emit([x.to_dict() for x in alone])
        else:
            click.echo("\n".join(f"{x.path}:{x.line}\t{x.text}" for x in alone) or f"no learning rests on {session} alone")
        return
    plan = upkeep.plan(md, trusted=trusted)
    if apply_plan:
        plan = upkeep.apply(md, plan)
    if as_json:
        emit(plan.to_dict())
        return
    click.echo(plan.summary())
    if any(a.status == "proposed" for a in plan.actions) and not apply_plan:
        click.echo("run `memdir consolidate --apply` to carry this out", err=True)


@click.command()
@click.option("--code", "code_dir", type=click.Path(exists=True, file_okay=False), help="A code folder: report memories naming files, functions or commands that no longer exist there.")
@json_option
@click.pass_obj
def check(obj: Context, code_dir: str | None, as_json: bool) -> None:
    """List stale memories: past their `expires` date, or (with --code DIR) naming what the code no longer has.

    Exit code 1 when something is stale, so a CI job can run it.
    """
    found = upkeep.stale(obj.memdir(), code=code_dir)
    if as_json:
        emit([f.to_dict() for f in found])
    else:
        for f in found:
            click.echo(f"{f.path}\t{f.kind}\t{f.detail}")
        if not found:
            click.echo("nothing stale")
    if found:
        sys.exit(1)


@click.command()
@click.option("--days", type=click.IntRange(min=1), default=7, show_default=True, help="How far back to look.")
@json_option
@click.pass_obj
def stats(obj: Context, days: int, as_json: bool) -> None:
    """Capture health: the last captured session, and every capture that was skipped or is pending.

    Also lists the files kept whole that are longer than an agent may write, and what semantic search runs on:
    the embedder memdir.toml names (`[semantic] embedder`), whether it is installed, and the model the vectors
    were built with.

    Exit code 1 when captures were skipped or are pending, so a broken hook shows up the same day.
    """
    md = obj.memdir()
    h = health(md, days=days)
    entries = md.list()
    files = len(entries)
    long = reconcile.long_files(entries, lambda path: md.read_text(path)[1], md.limits)
    synced = gitsync.status(md)
    described = semantic.describe(md.store)
    if as_json:
        emit({"files": files, "long": [f.to_dict() for f in long], "capture": h.to_dict(), "sync": synced,
              "semantic": described})
    else:
        click.echo(f"files: {files}" + (f" ({len(long)} longer than an agent may write, kept whole)" if long else ""))
        click.echo(_semantic_line(described))
        for f in long:
            click.echo(f"long\t{f.path}\t{f.detail}")
        last = h.last_capture
        click.echo(f"last capture: {last.date} {last.path}" if last else f"last capture: none in the last {days} days")
        click.echo(f"captured: {h.captured}, pending: {len(h.pending)}, skipped: {len(h.skipped)} (last {days} days)")
        for s in h.pending:
            click.echo(f"pending\t{s.path}\t{s.reason}")
        for s in h.skipped:
            click.echo(f"skipped\t{s.path}\t{s.reason}")
        if synced is not None:
            click.echo(f"last sync: {synced['synced'] or 'never'}; last push: {synced['pushed'] or 'never'}; commits "
                       f"waiting to be pushed: {synced['waiting'] if synced['waiting'] is not None else 'unknown'}")
            if synced["error"]:
                click.echo(f"sync failed\t{synced['error']}")
    if not h.ok:
        sys.exit(1)


def _semantic_line(s: dict[str, Any]) -> str:
    """The embedder memdir.toml names, whether it is installed, and what each vectors file was built with."""
    line = f"semantic search: {s['embedder']} ({s['model']}"
    line += (f"; other scripts: {s['other_scripts']})" if s["other_scripts"] != s["model"] else ")")
    line += "" if s["installed"] else f", not installed: {s['install']}"
    if not s["vectors"]:
        return line + "; vectors: none yet (the first semantic or hybrid search builds them)"
    for v in s["vectors"]:
        if "error" in v:
            line += f"; vectors {v['file']}: unreadable ({v['error']})"
            continue
        line += f"; vectors: {v['files']} files ({v['chunks']} chunks) by {v['model']}"
        line += "" if v["current"] else f", rebuilt with {v['expects']} by the next semantic search"
    return line


# ---------------------------------------------------------------- feedback and retiring


@click.command()
@click.argument("rule")
@click.option("--why", required=True, help="Why the rule holds (the correction, the reason the user gave).")
@click.option("--how", "how_to_apply", required=True, help="When and how to apply it.")
@json_option
@click.pass_obj
def feedback(obj: Context, rule: str, why: str, how_to_apply: str, as_json: bool) -> None:
    """Save a correction or preference as a feedback memory now (updates the one with the same rule).

    \b
    memdir feedback "Never use dark themes in generated UI" --why "hard to read" --how "every UI, slide and chart"
    """
    m = capture_mod.remember_feedback(obj.memdir(create=True), rule, why, how_to_apply)
    if as_json:
        emit({"path": m.path, "change": m.change, "version": m.version})
    else:
        click.echo(f"{m.change} {m.path}")


@click.command()
@click.argument("path")
@click.option("--reason", required=True, help="Why it is retired (one line).")
@click.option("--by", metavar="PATH", help="The memory that replaces it.")
@json_option
@click.pass_obj
def supersede(obj: Context, path: str, reason: str, by: str | None, as_json: bool) -> None:
    """Retire PATH without losing it: moved under archive/ with superseded_by and reason, out of the index."""
    m = timeline.supersede(obj.memdir(), path, by=by, reason=reason)
    if as_json:
        emit({"path": m.path, "change": "superseded", "version": m.version})
    else:
        click.echo(f"superseded {path} -> {m.path}")


COMMANDS = (capture, sessions, rollup, consolidate, check, stats, feedback, supersede)


def register(main: click.Group) -> None:
    for command in COMMANDS:
        main.add_command(command)
