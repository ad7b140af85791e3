"""`memdir sync` and `memdir conflicts`: one memory on every machine, through a git remote."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ...remember import gitsync, merging, projects
from .base import Context, emit, json_option


@click.command("sync")
@click.option("--init", "init_url", metavar="REMOTE",
              help="Make the memory's folder a git repository with REMOTE (a URL such as git@github.com:you/memory.git, "
                   "or the path of a bare repository) as its remote, then sync. The remote may be empty or hold the "
                   "memory another machine pushed.")
@click.option("--remote", default=None, help="The git remote to sync with (default: the branch's, else origin).")
@click.option("--no-push", is_flag=True, help="Commit, fetch and merge; push nothing.")
@click.option("--no-pull", is_flag=True, help="Commit and push; merge nothing (a push the remote refuses because it "
              "moved waits for a sync that merges).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds a fetch or a push may take before the sync gives up (nothing is lost).")
@json_option
@click.pass_obj
def sync(obj: Context, init_url: str | None, remote: str | None, no_push: bool, no_pull: bool, timeout: float,
         as_json: bool) -> None:
    """Commit this memory's changes, fetch, merge and push through its git remote.

    Not `memdir reconcile`, which journals edits made by hand (a sync does that first).
    Each commit is authored by whoever the journal says made the changes. Changes to
    different files merge; one file changed on both machines merges line by line
    when the changes do not overlap, and otherwise both versions are kept (the other
    one beside it as NAME.conflict-COMMIT.md: see `memdir conflicts`); a delete on
    one side and an edit on the other keeps the edit. MEMORY.md is rendered again, with
    the notes you keep in it merged. What comes in is journaled as sync:REMOTE, so
    `memdir log` and `memdir undo` work on it.

    Nothing leaves that should not: .memdir/ and raw session transcripts never enter
    git, and a push that would send a credential is refused with its file and line.

    \b
    memdir --root ~/memory sync --init git@github.com:you/memory.git   # the first machine
    memdir --root ~/memory sync --init git@github.com:you/memory.git   # the second: merges
    memdir --root ~/memory sync                                         # then, on either

    Exit code 1 when the sync was refused or its push failed (it is retried at the next sync).
    """
    md = obj.memdir(create=init_url is not None)
    if init_url is not None:
        done = gitsync.init(md, init_url, remote=remote or "origin", timeout=timeout)
    else:
        done = gitsync.git_sync(md, remote=remote, pull=not no_pull, push=not no_push, timeout=timeout)
    if as_json:
        emit(done.to_dict())
    else:
        for line in done.lines():
            click.echo(line)
    if done.error:
        sys.exit(1)


@click.group("conflicts", invoke_without_command=True)
@json_option
@click.pass_context
def conflicts(ctx: click.Context, as_json: bool) -> None:
    """List the conflicts a sync kept: each memory beside the other machine's version of it.

    Settle one with `memdir conflicts resolve PATH --keep mine|theirs`, or edit the
    memory to hold what you want and then keep mine. Exit code 1 while any are left.
    """
    if ctx.invoked_subcommand is not None:
        return
    obj = ctx.ensure_object(Context)
    found = merging.conflicts(obj.memdir())
    if as_json:
        emit([c.to_dict() for c in found])
    else:
        for c in found:
            click.echo(f"{c.path}\t{c.other}")
        if not found:
            click.echo("no conflicts")
    if found:
        sys.exit(1)


@conflicts.command("resolve")
@click.argument("path")
@click.option("--keep", type=click.Choice(["mine", "theirs"]), required=True,
              help="mine: the other version goes; theirs: it replaces this machine's.")
@click.pass_obj
def conflicts_resolve(obj: Context, path: str, keep: str) -> None:
    """Settle the conflict of PATH (the memory, or the other version); `memdir undo` brings back what went."""
    pair = merging.resolve(obj.memdir(), path, keep)
    click.echo(f"kept {'this machine' if keep == 'mine' else 'the other'}'s version of {pair.path}; {pair.other} is gone")


@click.command("project")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@json_option
@click.pass_obj
def project(obj: Context, folder: Path | None, as_json: bool) -> None:
    """Show how memdir knows the project FOLDER (default: this folder) is in: its identity and its tenant.

    A project is known by its repository, not its path: its remote's URL (spelled one
    way however it was cloned), else its first commit. So every clone, worktree and
    machine reaches the same memory with `--tenant @project`, e.g. in the hooks:

    \b
    memdir --root ~/memory --tenant @project hook install --user
    memdir --root ~/memory --tenant @project search "release day"

    The team's memory, if the project keeps one, is team-memory/ in its repository
    (`memdir --root @team init` sets it up): run in the project, `memdir write team/PATH`,
    the MCP tools and the hooks reach it as team/ beside yours.
    """
    where = folder or Path.cwd()
    ident = projects.identity(where)
    team = projects.team_folder(where)
    if as_json:
        emit({**ident.to_dict(), "team": None if team is None else str(team)})
        return
    click.echo(f"project: {ident.value} (by its {ident.kind})")
    click.echo(f"tenant: {ident.tenant} (memdir --root {obj.root} --tenant @project)")
    click.echo(f"team memory: {team if team is not None else f'none ({projects.TEAM_FOLDER}/ in the repository)'}")


def register(main: click.Group) -> None:
    main.add_command(sync)
    main.add_command(conflicts)
    main.add_command(project)
