"""Forgetting for good: `memdir forget PATH`, `memdir forget --text STRING`, `memdir db drop-tenant URL TENANT`;
and by age: `memdir compact` (the `[history]` retention)."""

from __future__ import annotations

import sys

import click

from ...core import history
from ...remember import forget as forgetting
from .base import Context, emit, fail, json_option

IRREVOCABLE = "This cannot be undone: no journal version, archive copy, roll-up or index row of it is kept."


def _confirm(plan: str, yes: bool, warning: str = IRREVOCABLE, verb: str = "forget", done: str = "forgotten") -> None:
    """Show what will go and ask, unless --yes; a script without a terminal must say --yes."""
    click.echo(plan, err=True)
    click.echo(warning, err=True)
    if yes:
        return
    if not sys.stdin.isatty():
        fail(f"nothing was {done}: pass --yes to {verb} without a question (no terminal to ask on)")
    if not click.confirm(f"{verb.capitalize()} it?", default=False, err=True):
        fail(f"nothing was {done}")


@click.command()
@click.argument("path", required=False)
@click.option("--text", help="Redact this string wherever memdir keeps it, instead of erasing a file.")
@click.option("--pattern", help="Redact what this regular expression matches (RE2: linear time).")
@click.option("--ignore-case", "-i", is_flag=True, help="With --text or --pattern: match in any case.")
@click.option("--replacement", default=forgetting.REDACTED, show_default=True, help="What a redacted match becomes.")
@click.option("--dry-run", "-n", is_flag=True, help="Only show what would be forgotten; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask (for scripts).")
@click.option("--scrub", "scrub_only", is_flag=True,
              help="Only vacuum what earlier deletions left in the store's files (after another process held them).")
@json_option
@click.pass_obj
def forget(obj: Context, path: str | None, text: str | None, pattern: str | None, ignore_case: bool,
           replacement: str, dry_run: bool, yes: bool, scrub_only: bool, as_json: bool) -> None:
    """Forget for good: erase a memory (PATH), or redact a string everywhere (--text, --pattern).

    Erasing PATH removes the file, every journal version of it, every other
    name it had (renamed, superseded into archive/, rolled up into
    archive/sessions/), the diary files rolled up from it, its search index
    rows, vectors and cached forms; the journal keeps one `forget` record per
    name saying who and when, with no content. Redacting replaces the string in
    every current file, every journal version, the archive, the diary, the
    session records and both indexes, and says where it was. Either cannot be
    undone: it asks first unless --yes. docs/forgetting.md lists every place
    memdir keeps a byte of a memory.
    """
    md = obj.memdir()
    if scrub_only:
        notes = md.scrub()
        _show({"notes": notes}, "\n".join(notes) or "scrubbed: no deleted byte is left readable", as_json)
        return
    if (path is None) == (text is None and pattern is None):
        fail("give a PATH to erase, or --text STRING / --pattern REGEX to redact (one of them)")
    if path is not None:
        erasure, _ = forgetting.plan(md, path)
        if not dry_run:
            _confirm(_erasure_plan(erasure), yes)
            erasure = forgetting.erase(md, path)
        _show(erasure.to_dict(), _erasure_plan(erasure) if dry_run else _erased(erasure), as_json)
        return
    seen = forgetting.redact(md, text, pattern=pattern, ignore_case=ignore_case, replacement=replacement, dry_run=True)
    if not seen.found:
        _show(seen.to_dict(), "not found: nothing to redact", as_json)
        return
    if not dry_run:
        _confirm(_where(seen, "would be redacted"), yes)
        seen = forgetting.redact(md, text, pattern=pattern, ignore_case=ignore_case, replacement=replacement)
    _show(seen.to_dict(), _where(seen, "redacted" if seen.done else "would be redacted"), as_json)


def _show(data: object, text: str, as_json: bool) -> None:
    if as_json:
        emit(data)
    else:
        click.echo(text)


def _erasure_plan(e: forgetting.Erasure) -> str:
    lines = [f"forget {e.path}: {len(e.paths)} name(s), {e.records} journal record(s)"]
    lines += [f"  {p}" + ("  (rolled up from it)" if p in e.rollups else "") for p in e.paths]
    return "\n".join(lines + _elsewhere(e))


def _erased(e: forgetting.Erasure) -> str:
    names = ", ".join(e.paths)
    lines = [f"forgot {e.path}: {names}; {e.records} journal record(s) erased"]
    return "\n".join(lines + [f"note: {n}" for n in e.notes] + _elsewhere(e))


def _elsewhere(e: forgetting.Erasure) -> list[str]:
    return [f"note: it was merged or superseded into {p}, which stays and may hold its text: redact that with "
            f"`memdir forget --text`" for p in e.elsewhere]


def _where(r: forgetting.Redaction, what: str) -> str:
    lines = [f"{r.found} match(es) {what}: {len(r.files)} file(s), {len(r.records)} journal record(s)"]
    lines += [f"  {p}: {n}" for p, n in sorted(r.files.items())]
    lines += [f"  journal #{s}: {n}" for s, n in sorted(r.records.items())]
    return "\n".join(lines + [f"note: {n}" for n in r.notes])


@click.command("drop-tenant")
@click.argument("url")
@click.argument("name", metavar="TENANT")
@click.option("--yes", "-y", is_flag=True, help="Do not ask (for scripts).")
@json_option
def drop_tenant(url: str, name: str, yes: bool, as_json: bool) -> None:
    """Delete every byte of TENANT at URL: its rows in every table, its S3 objects, its folder (a folder URL
    holds tenant T in tenants/T/), and the local copies memdir made (search index, vectors). Cannot be undone.

    A server holding the tenant open (in any process) sees the drop at the
    tenant's next request and lets go of it; that request finds nothing.
    """
    _confirm(f"drop tenant {name!r} at {url}: every file, journal record, index row and cached copy of it", yes)
    removed = forgetting.drop_tenant(url, name)
    _show({"tenant": name, "removed": removed}, "\n".join(removed), as_json)


@click.command()
@click.option("--dry-run", "-n", is_flag=True, help="Only show which versions would go; change nothing.")
@click.option("--days", type=click.IntRange(min=0), help="Keep every version this many days old or younger "
              "(default: [history] days in memdir.toml, else 30).")
@click.option("--versions", type=click.IntRange(min=0), help="Of the older versions, keep each file's newest this many "
              "(default: [history] versions, else 10).")
@click.option("--yes", "-y", is_flag=True, help="With --days or --versions: do not ask (for scripts).")
@json_option
@click.pass_obj
def compact(obj: Context, dry_run: bool, days: int | None, versions: int | None, yes: bool, as_json: bool) -> None:
    """Apply the history retention now: pack the journal, and drop the versions it no longer keeps.

    Every version younger than the retention's days is kept, and of the older
    ones each file's newest few; a file's newest change always stays. Where
    versions go, one record without content (op `thinned`) says so, so undo,
    `log -p`, as-of reads and rollback say the version is gone. memdir also
    does this by itself every 64 changes, over the files they touched; this
    runs it over the whole journal. The versions dropped cannot be brought
    back: --dry-run shows them first, and with --days or --versions (a
    retention other than the settings) it asks unless --yes.

    \b
    memdir compact --dry-run             # what the settings would drop
    memdir compact --days 7 --versions 3 --yes
    """
    md = obj.memdir()
    settings = history.Retention.load(md.store)
    retention = history.Retention(settings.days if days is None else days,
                                  settings.versions if versions is None else versions)
    done = history.compact(md.store, retention=retention, dry_run=True)
    if not dry_run:  # packs the journal too, whether or not a version goes
        if done.files and retention != settings:
            _confirm(_compaction(done), yes, "The versions dropped cannot be brought back.", "compact",
                     "compacted")
        done = history.compact(md.store, retention=retention)
    _show(done.to_dict(), _compaction(done), as_json)


def _compaction(c: history.Compaction) -> str:
    lines = [f"history kept {c.retention.days} days, then each file's newest {c.retention.versions}: "
             f"{sum(c.files.values())} version(s) of {len(c.files)} file(s) {'dropped' if c.done else 'would go'}; "
             f"{c.kept} journal record(s) kept"]
    return "\n".join(lines + [f"  {path}: {n}" for path, n in c.files.items()])


def register(main: click.Group) -> None:
    main.add_command(forget)
    main.add_command(compact)
