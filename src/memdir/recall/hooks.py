"""Claude Code hooks: `memdir hook claude-code` reads one event from stdin and answers on stdout.

`CLAUDE_CODE` maps a `hook_event_name` to a handler `(Memdir, payload) ->
dict | None`; a dict is printed as the hook's JSON output, None prints
nothing. Unknown events are answered with nothing and exit 0, so adding the
command to more events than it handles is harmless. A hook must never cost the
user their session: memdir errors go to stderr with exit code 1 (Claude Code
shows it and carries on), never 2 (which would block a prompt or a compaction).

- SessionStart: the always-layer of context (`recall.session_start`).
- UserPromptSubmit: lines of memory matching the prompt, when any match well
  (`recall.user_prompt_submit`).
- SessionEnd: capture the session from its `transcript_path`.
- PreCompact: capture the session so far, before compaction summarises it away
  (the record is replaced by the SessionEnd capture later: one per session).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import MemdirError
from ..remember.capture import capture
from . import recall

if TYPE_CHECKING:
    from ..core.memdir import Memdir

Handler = Callable[["Memdir", dict[str, Any]], "dict[str, Any] | None"]


def _capture(md: Memdir, payload: dict[str, Any], event: str) -> dict[str, Any] | None:
    session = payload.get("session_id")
    if not isinstance(session, str) or not session.strip():
        session = "unknown"
    where = payload.get("transcript_path")
    transcript = Path(where) if isinstance(where, str) and where else Path("(no transcript_path in the hook event)")
    done = capture(md, session, transcript, event=event)
    if done.status != "captured":  # memdir's words only: the session id as recorded, the reason in one word
        return {"systemMessage": f"memdir: session {done.session} not captured ({done.reason}); see `memdir stats`"}
    return None


def session_end(md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The session is over (exit, /clear, logout): capture it. SessionEnd cannot block, and has no output fields."""
    return _capture(md, payload, "SessionEnd")


def pre_compact(md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Compaction is about to summarise the conversation: capture it first, so nothing is lost."""
    return _capture(md, payload, f"PreCompact:{payload.get('trigger') or 'auto'}")


def session_start(md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """A session starts: give it the always-layer of context (pinned, feedback, the index)."""
    return recall.session_start(md, payload)


def user_prompt_submit(md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """A prompt arrives: add the lines of memory that match it well (most prompts get nothing)."""
    return recall.user_prompt_submit(md, payload)


CLAUDE_CODE: dict[str, Handler] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "SessionEnd": session_end,
    "PreCompact": pre_compact,
}


def run(open_memory: Callable[[], Memdir], table: dict[str, Handler], stdin: IO[str], stdout: IO[str],
        stderr: IO[str]) -> int:
    """Read one event, run its handler, print its JSON; the exit code never blocks Claude Code (0 or 1)."""
    try:
        raw = stdin.read()
        payload = json.loads(raw) if raw.strip() else {}
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as e:
        print(f"memdir hook: the event on stdin is not JSON ({e}); nothing was captured", file=stderr)
        return 1
    if not isinstance(payload, dict):
        print(f"memdir hook: the event on stdin is JSON {type(payload).__name__}, not an object; nothing was captured", file=stderr)
        return 1
    event = payload.get("hook_event_name")
    handler = table.get(event) if isinstance(event, str) else None
    if handler is None:
        return 0  # an event memdir does not handle: nothing to say
    md = None
    try:
        md = open_memory()
        out = handler(md, payload)
    except Exception as e:  # noqa: BLE001 - a hook must never take the user's session down

        detail = str(e) if isinstance(e, MemdirError) else f"{type(e).__name__}: {e}"
        print(f"memdir hook: {event} failed: {' '.join(detail.split())[:500]}", file=stderr)
        return 1
    finally:
        if md is not None:
            try:
                md.close()
            except Exception:  # noqa: BLE001
                pass
    if out:
        stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


def main(open_memory: Callable[[], Memdir], table: dict[str, Handler] | None = None) -> int:
    return run(open_memory, CLAUDE_CODE if table is None else table, sys.stdin, sys.stdout, sys.stderr)
