"""Commands that undo and repair, and bring memories in, out or over: undo, reconcile, doctor, import, export, copy, db."""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import Any

import click

from ...core.memdir import Memdir
from ...core.reconcile import Finding, Report, unlisted
from ...recall import links
from ...remember import importer, mcp_memory
from ...remember.copy import copy_tenant
from ...remember.export import export_dir
from ...stores.locations import migrate
from .base import Context, Group, emit, fail, json_option
from .forgetting import drop_tenant

# ---------------------------------------------------------------- repair


def _checked(md: Memdir, fix: bool = False) -> Report:
    """`Memdir.reconcile`, the links that lead nowhere and the topic files MEMORY.md leaves out (reported, not
    disagreements to repair)."""
    report = md.reconcile(fix=fix)
    report.findings += [Finding("link", path, detail) for path, detail in links.broken(md)]  # once committed
    squeezed = unlisted(md.index(), [e.path for e in md.list()], md.limits.index_max_lines)
    if squeezed is not None:
        report.findings.append(squeezed)
    return report


def _theirs_line(found: list[Finding]) -> str:
    """The other tools' values doctor found, in one line: a vault's thousand tags are theirs, not problems."""
    values = Counter(v.split(": ", 1)[0] + ": " + v.split(": ", 1)[1][:40] for f in found
                     for v in f.detail.rsplit(": another tool's values", 1)[0].split("; "))
    shown = ", ".join(f"{v} ×{n}" if n > 1 else v for v, n in values.most_common(6))
    more = f" and {len(values) - 6} more" if len(values) > 6 else ""
    return (f"theirs\t-\t{len(found)} file{'' if len(found) == 1 else 's'} hold other tools' values ({shown}{more}), "
            "which memdir reads as meant; not problems (`memdir doctor --json` lists them)")


@click.command()
@click.argument("path")
@json_option
@click.pass_obj
def undo(obj: Context, path: str, as_json: bool) -> None:
    """Revert the last change to PATH, as a new change (undo again to redo)."""
    md, path, prefix = obj.at(path)
    m = md.undo(path)
    if as_json:
        emit({"path": prefix + m.path, "change": m.change, "version": m.version})
    else:
        click.echo(f"{m.change} {prefix}{m.path}" + (f" (version {m.version})" if m.change != "deleted" else ""))


@click.command()
@click.option("--fix", is_flag=True, help="Repair what was found (catalog, journal, MEMORY.md).")
@json_option
@click.pass_obj
def reconcile(obj: Context, fix: bool, as_json: bool) -> None:
    """Check the files against the catalog and the index; with --fix, repair them.

    Picks up files added, edited or removed by hand (journaled as 'external'),
    rebuilds a stale MEMORY.md, and reports files that break the limits.
    Exit code 0 when everything agrees (or --fix repaired it), 1 when something
    differs, or after --fix still needs a person (a file over the limits).
    """
    report = _checked(obj.memdir(), fix)
    if as_json:
        emit(report.to_dict())
    else:
        for f in report.findings:
            click.echo(f"{f.kind}\t{f.path or '-'}\t{f.detail}")
        if report.clean:
            click.echo("clean: files, catalog and index agree")
        elif not fix:
            click.echo("run `memdir reconcile --fix` to repair", err=True)
    if not report.clean and (not fix or any(f.kind in ("invalid", "quarantined") for f in report.findings)):
        sys.exit(1)  # like `git diff --exit-code`: 1 when something differs (or, after --fix, still needs a person)


@click.command()
@json_option
@click.pass_obj
def doctor(obj: Context, as_json: bool) -> None:
    """Check the memory and print every problem; exit 1 if there is any (0 when healthy).

    Reports what is wrong for memdir's own use: records recovery had to
    quarantine (kept in .memdir/quarantine/), files changed outside memdir,
    files a write would refuse as they are (frontmatter it cannot read, with
    its line; a credential), links that lead nowhere and a stale MEMORY.md.
    Notices, not problems: files kept whole but longer than an agent may write
    (`long`), a MEMORY.md memdir has not written yet (`unindexed`), topic files
    a long hand-kept MEMORY.md leaves its index no room for (`unlisted`), and
    other tools' values memdir reads as meant (`theirs`: Obsidian's `tags: A,
    B`, a `type: Person`). Changes nothing: `memdir reconcile --fix` repairs
    what it can.
    """
    report = _checked(obj.memdir())
    notices = [f for f in report.findings if f.kind in ("long", "unindexed", "theirs", "unlisted")]
    problems = [f for f in report.findings if f.kind != "repaired" and f not in notices]
    if as_json:
        emit({"healthy": not problems, "problems": [f.to_dict() for f in problems],
              "notices": [f.to_dict() for f in notices]})
    else:
        for f in problems + [f for f in notices if f.kind != "theirs"]:
            click.echo(f"{f.kind}\t{f.path or '-'}\t{f.detail}")
        theirs = [f for f in notices if f.kind == "theirs"]
        if theirs:
            click.echo(_theirs_line(theirs))
        click.echo(f"{len(problems)} problem{'' if len(problems) == 1 else 's'} found" if problems else "healthy: no problems found")
    if problems:
        sys.exit(1)


@click.command("import")
@click.argument("source", type=click.Path(exists=True))
@click.option(
    "--from", "kind", type=click.Choice(["claude-code", "obsidian", "mcp-memory", "basic-memory"]), default="claude-code",
    show_default=True,
    help="What SOURCE is: a memory folder or Obsidian vault, the MCP memory server's JSONL file, or basic-memory notes.",
)
@click.option("--overwrite", is_flag=True, help="Replace files that already exist in the memory.")
@json_option
@click.pass_obj
def import_(obj: Context, source: str, kind: str, overwrite: bool, as_json: bool) -> None:
    """Bring in memories from another system; reports what it imported and what it could not.

    Files land as written (frontmatter, dates, line endings, names), and the
    report lists every change it had to make (a name renamed, a line quoted
    or redacted), every file not brought in with the reason, and the lines in
    and out (those not brought in too). Exit code 1 when a note (or record)
    could not be brought in; a source that is not what --from says is refused
    before anything is created.

    \b
    claude-code   a memory folder (e.g. ~/.claude/projects/<project>/memory);
                  its MEMORY.md notes stay in the destination's MEMORY.md
    obsidian      a vault: notes as written; attachments are listed, not copied
    mcp-memory    the reference MCP memory server's memory.jsonl: one file per
                  entity; importing an updated graph again merges it
    basic-memory  a basic-memory folder of notes (observations, relations, tags)
    """
    is_file = os.path.isfile(source)
    if is_file != (kind == "mcp-memory"):
        want = "a JSONL file" if kind == "mcp-memory" else "a folder"
        raise click.BadParameter(f"--from {kind} reads {want}; {source} is not one", param_hint="SOURCE")
    run: Any = {"claude-code": importer.import_dir, "obsidian": importer.import_dir,
                "mcp-memory": mcp_memory.import_mcp_memory, "basic-memory": importer.import_basic_memory}[kind]
    given: Any = mcp_memory.read_graph(source) if kind == "mcp-memory" else source  # a file that is no graph: nothing made
    result = run(obj.memdir(create=True), given, overwrite=overwrite)
    if as_json:
        emit(result.to_dict())
    else:
        click.echo(result.summary())
    if result.skipped:
        n = len(result.skipped)
        fail(f"{n} {result.unit}{'' if n == 1 else 's'} of {source} not brought in (listed above as skipped); "
             "fix them and import again: what is in already stays unchanged")


@click.command("export")
@click.argument("destination", type=click.Path())
@click.option("--mcp-memory", "mcp", is_flag=True,
              help="Write the entities as the MCP memory server's memory.jsonl (DESTINATION is that file).")
@json_option
@click.pass_obj
def export(obj: Context, destination: str, mcp: bool, as_json: bool) -> None:
    """Write the memory out for another tool: a folder of files as stored, or a memory.jsonl.

    The way back from `memdir import`: importing and exporting gives the
    source back. Nothing in the memory changes.

    \b
    memdir export ../exported           every topic file, and the MEMORY.md notes
    memdir export --mcp-memory memory.jsonl
    """
    md = obj.memdir()
    result = mcp_memory.export_mcp_memory(md, destination) if mcp else export_dir(md, destination)
    if as_json:
        emit(result.to_dict())
        return
    click.echo(result.summary())


# ---------------------------------------------------------------- backends


@click.command("copy")
@click.argument("source")
@click.argument("destination")
@click.option("--tenant", "tenant", default=None, help="The tenant to copy (default: the global --tenant).")
@json_option
@click.pass_obj
def copy_cmd(obj: Context, source: str, destination: str, tenant: str | None, as_json: bool) -> None:
    """Copy a whole tenant (files, catalog, journal) from SOURCE to DESTINATION, any two locations.

    Resumable: run it again after an interruption. Verified: file counts and
    SHA-256 hashes of both sides are compared at the end. Progress goes to stderr.

    \b
    memdir copy memory sqlite:///memory.db --tenant acme
    """
    def progress(what: str, done: int, total: int) -> None:
        if total:
            click.echo(f"copy: {what} {done}/{total}", err=True)

    report = copy_tenant(source, destination, tenant or obj.tenant, progress=progress)
    if as_json:
        emit(report.to_dict())
    else:
        click.echo(report.summary())
    if not report.verified:
        fail(f"the copy in {destination} does not match {source}; run the copy again")


@click.group(cls=Group)
def db() -> None:
    """Schemas of sqlite:// and postgresql:// locations."""


@db.command("migrate")
@click.argument("url", required=False)
@click.option("--check", is_flag=True, help="Only report pending migrations (exit 1 if any); never writes.")
@click.option("--grant", metavar="ROLE", help="PostgreSQL: let ROLE (what memdir connects as) use the tables.")
@json_option
@click.pass_obj
def db_migrate(obj: Context, url: str | None, check: bool, grant: str | None, as_json: bool) -> None:
    """Create or upgrade memdir's tables at URL (default: --root); safe to run again.

    Run it as the database owner. On PostgreSQL, memdir itself must connect as
    another role (row-level security binds it); --grant ROLE gives that role
    what it needs.
    """
    report = migrate(url or obj.root, check=check, grant=grant)
    if as_json:
        emit(report.to_dict())
    elif check:
        click.echo(f"pending: {', '.join(report.pending)}" if report.pending else f"up to date: {report.location}")
    else:
        done = f"applied {', '.join(report.applied)}" if report.applied else "already up to date"
        click.echo(f"{report.location}: {done}" + (f"; granted to {report.granted}" if report.granted else ""))
    if check and report.pending:
        sys.exit(1)


db.add_command(drop_tenant)


def register(main: click.Group) -> None:
    for command in (undo, reconcile, doctor, import_, export, copy_cmd, db):
        main.add_command(command)
