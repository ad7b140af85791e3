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
from .base import DEFAULT_ROOT, Context


@click.group()
def hook() -> None:
    """Hooks for coding agents (see `memdir hook claude-code --help`)."""


@hook.command("claude-code")
@click.pass_obj
def hook_claude_code(obj: Context) -> None:
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
      "PreCompact": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}]}}
    """
    code = hooks.main(lambda: _memory(obj))
    sys.exit(code)


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
