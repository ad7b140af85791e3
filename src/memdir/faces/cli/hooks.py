"""`memdir hook claude-code`: one Claude Code hook event on stdin, its answer on stdout.

A group of its own, so a hook (a fresh process per event) loads only what it needs.

A hook names its memory (`--root`, MEMDIR_ROOT or MEMDIR_URL) or does nothing. Claude
Code runs hooks in the project's folder, so the default `./memory` would be a new
memory inside each project's git work tree, one per project, where a `git add .`
commits what the agent remembered; a hook is set up once and then runs unseen, so
it refuses in one line (exit 1, which Claude Code shows and never blocks on)
rather than guess.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ...core.memdir import Memdir
from ...errors import MemdirError
from ...recall import hooks
from ...stores.base import redact
from ...stores.locations import folder_of, scheme_of
from .base import DEFAULT_ROOT, Context


@click.group()
def hook() -> None:
    """Hooks for coding agents (see `memdir hook claude-code --help`)."""


@hook.command("claude-code")
@click.option("--no-index", "no_index", is_flag=True,
              help="Leave MEMORY.md out of SessionStart: Claude Code shows it itself when the memory is its "
                   "auto-memory folder (`hook install --claude-memory shared`).")
@click.pass_obj
def hook_claude_code(obj: Context, no_index: bool) -> None:
    """Handle one Claude Code hook event (JSON on stdin).

    SessionStart adds the index, feedback and pinned memories to the session;
    UserPromptSubmit adds the memories that match the prompt well (most prompts
    get nothing); SessionEnd and PreCompact capture the session. Other events
    are answered with nothing. Never blocks Claude Code: errors go to stderr
    with exit code 1. The memory must be named (--root, MEMDIR_ROOT or
    MEMDIR_URL): the hook never makes one in the project it runs in. In
    ~/.claude/settings.json (or .claude/settings.json), the same command for
    each event:

    \b
    {"hooks": {
      "SessionStart": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
      "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
      "SessionEnd": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
      "PreCompact": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
      "Stop": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}]}}

    `memdir --root ~/memory hook install` writes this for you, with full paths.
    Stop reminds Claude, once in a turn, to save what you asked it to remember.
    """
    code = hooks.main(lambda: _memory(obj), index=not no_index)
    sys.exit(code)


@hook.command("install")
@click.option("--settings", "settings", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The Claude Code settings file to change (default: .claude/settings.json in this folder).")
@click.option("--user", is_flag=True, help="Change ~/.claude/settings.json, for every project.")
@click.option("--dry-run", is_flag=True, help="Print the change as a diff and write nothing.")
@click.option("--claude-memory", type=click.Choice(hooks.CLAUDE_MEMORY), default="off", show_default=True,
              help="One memory, not two: 'off' turns Claude Code's own auto memory off (autoMemoryEnabled), so "
                   "memdir is the memory; 'shared' makes this memory folder Claude Code's auto-memory folder "
                   "(autoMemoryDirectory), so both write the same files.")
@click.pass_obj
def hook_install(obj: Context, settings: Path | None, user: bool, dry_run: bool, claude_memory: str) -> None:
    """Add memdir's hooks to Claude Code's settings, for the memory named by --root.

    Each hook's command is this memdir's full path (Claude Code does not run
    hooks with your shell's PATH) and the memory's absolute path or URL (hooks
    run in the project's folder). The settings file keeps every other key and
    hook; memdir's own hook, if there, is updated rather than added twice; the
    file as it was is kept as settings.json.bak. Each hook gets a timeout
    (capture at SessionEnd and PreCompact 60 s, the others 10 s). Claude Code's
    own auto memory is turned off, or shares this folder (--claude-memory),
    so the model keeps one memory. With --dry-run, the diff is printed and
    nothing is written.
    """
    if user and settings is not None:
        raise click.UsageError("give --settings or --user, not both")
    path = Path.home() / ".claude" / "settings.json" if user else settings or Path(".claude") / "settings.json"
    served = _served(obj)
    if claude_memory == "shared" and (scheme_of(obj.root) != "file" or obj.tenant):
        raise MemdirError(f"--claude-memory shared needs a memory folder without a tenant: Claude Code's auto memory "
                          f"is a folder of files, and {obj.root} is not one; use --claude-memory off")
    cmd = hooks.command(_executable(), served, obj.tenant, index=claude_memory != "shared")
    done = hooks.install_file(path, cmd, dry_run=dry_run, claude_memory=claude_memory,
                              root=served if claude_memory == "shared" else None)
    if dry_run:
        click.echo(done.diff() or f"unchanged {path}", nl=not done.diff())
        return
    backup = f" (the file as it was: {done.backup})" if done.backup else ""
    click.echo(f"{done.change} {path}{backup}")


def _executable() -> list[str]:
    """This memdir as Claude Code can run it: the installed script's full path, else this Python with -m memdir."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "memdir" and script.is_file():
        return [str(script.absolute())]
    return [sys.executable, "-m", "memdir"]


def _served(obj: Context) -> str:
    """The memory --root names, as a hook running in another folder must name it: absolute, with no secret.

    A URL holding a password (or a token, a key: what `stores.base.redact` masks) is refused, not written masked:
    a masked URL in the hooks would fail to log in at every event while install said it worked."""
    if scheme_of(obj.root) != "file":
        if redact(obj.root) != obj.root:
            raise MemdirError(f"--root {redact(obj.root)} holds a secret (the *** parts), which a settings file must not: "
                              "use the URL without them and give the password the store's own way (PGPASSWORD or "
                              "~/.pgpass, AWS credentials); nothing was written")
        return obj.root
    return str(folder_of(obj.root).absolute())


def _memory(obj: Context) -> Memdir:
    """The memory the hook's command names; never one guessed in the folder Claude Code runs the hook in."""
    if not obj.root_given:
        here = Path.cwd() / DEFAULT_ROOT
        found = f" ({here} is a memory: --root {here} uses it)" if (here / ".memdir").is_dir() else ""
        raise MemdirError("no memory named, and the hook does not make one in the project's folder: add --root to "
                          "its command (`memdir --root ~/memory hook claude-code`) or set MEMDIR_ROOT; nothing was "
                          f"read or written{found}")
    return obj.memdir(create=True, writes_per_minute=0, actor="hook:claude-code")


def register(main: click.Group) -> None:
    main.add_command(hook)
