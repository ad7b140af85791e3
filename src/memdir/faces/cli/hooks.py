"""`memdir hook claude-code`: one Claude Code hook event on stdin, its answer on stdout.

A group of its own, so a hook (a fresh process per event) loads only what it needs.
"""

from __future__ import annotations

import sys

import click

from ...recall import hooks
from .base import Context


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
    with exit code 1. In ~/.claude/settings.json (or .claude/settings.json),
    the same command for each event:

    \b
    {"hooks": {
      "SessionStart": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
      "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
      "SessionEnd": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
      "PreCompact": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}]}}
    """
    code = hooks.main(lambda: obj.memdir(create=True, writes_per_minute=0, actor="hook:claude-code"))
    sys.exit(code)


def register(main: click.Group) -> None:
    main.add_command(hook)
