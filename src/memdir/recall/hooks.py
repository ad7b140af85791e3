"""Claude Code hooks: `memdir hook claude-code` reads one event from stdin and answers on stdout.

`CLAUDE_CODE` maps a `hook_event_name` to a handler `(Memdir, payload) ->
dict | None`; a dict is printed as the hook's JSON output, None prints
nothing. Unknown events are answered with nothing and exit 0, so adding the
command to more events than it handles is harmless. A hook must never cost the
user their session: memdir errors go to stderr with exit code 1 (Claude Code
shows it and carries on), never 2 (which would block a prompt or a compaction).

- SessionStart: pinned and feedback memories and the index (`startup.py`);
  a resume adds only what its conversation (its transcript) does not hold;
  a compaction, a fork (a new session id) and /clear get the whole of it.
- UserPromptSubmit: lines of memory matching the prompt, when any match well
  (`recall.user_prompt_submit`).
- SessionEnd: capture the session from its `transcript_path`.
- PreCompact: capture the session so far, before compaction summarises it away
  (the record is replaced by the SessionEnd capture later: one per session).
- Stop: a reminder, once per turn, when the last request asked to remember
  something and nothing was saved (`remind.stop`); it needs no memory, so
  the memory is not opened.

`install` merges these hooks into a Claude Code settings file (`memdir hook
install`): the command is the installed executable's full path with the
memory's absolute path or URL, since Claude Code runs hooks with its own PATH
and in the project's folder. Every other key and hook of the file is kept as
it was; a hook of memdir's already there is updated in place, never doubled.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import InvalidArgument, MemdirError
from ..remember import gitsync
from ..remember.capture import capture
from . import recall, remind, team

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
    """The session is over (exit, /clear, logout): capture it. SessionEnd cannot block, and has no output fields.
    With `[sync] auto`, the memory is then committed and pushed in the background (`gitsync.after_session`)."""
    out = _capture(md, payload, "SessionEnd")
    gitsync.after_session(md)
    return out


def pre_compact(md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Compaction is about to summarise the conversation: capture it first, so nothing is lost."""
    return _capture(md, payload, f"PreCompact:{payload.get('trigger') or 'auto'}")


def session_start(md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """A session starts: give it the always-layer of context (pinned, feedback, the index), the project's team
    memory's beside it (`team.joined`); with `[sync] auto`, after a pull of at most a few seconds."""
    gitsync.before_session(md)
    return team.joined(recall.session_start, md, payload)


def user_prompt_submit(md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """A prompt arrives: add the lines of memory, the team's included, that match it well (most prompts get nothing)."""
    return team.joined(recall.user_prompt_submit, md, payload)


CLAUDE_CODE: dict[str, Handler] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "SessionEnd": session_end,
    "PreCompact": pre_compact,
}
WITHOUT_MEMORY: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {"Stop": remind.stop}
EVENTS = (*CLAUDE_CODE, *WITHOUT_MEMORY)  # what `install` adds the hook to


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
    alone = WITHOUT_MEMORY.get(event) if isinstance(event, str) and table.keys() == CLAUDE_CODE.keys() else None
    if alone is not None:
        try:
            out = alone(payload)
        except Exception as e:  # noqa: BLE001 - a hook must never take the user's session down
            print(f"memdir hook: {event} failed: {type(e).__name__}: {' '.join(str(e).split())[:500]}", file=stderr)
            return 1
        if out:
            stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        return 0
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


def main(open_memory: Callable[[], Memdir], table: dict[str, Handler] | None = None, *, index: bool = True) -> int:
    """`index=False`: SessionStart leaves MEMORY.md out (Claude Code shows its auto-memory folder's itself)."""
    if table is None and not index:
        table = {**CLAUDE_CODE, "SessionStart": lambda md, payload: recall.session_start(md, payload, index=False)}
    return run(open_memory, CLAUDE_CODE if table is None else table, sys.stdin, sys.stdout, sys.stderr)


# ---------------------------------------------------------------- settings


MARK = "hook claude-code"  # what a command of memdir's hook holds, whatever its path and memory


def command(executable: Sequence[str], root: str, tenant: str | None = None, *, index: bool = True) -> str:
    """The hook's command line: the executable (a full path, or the interpreter and `-m memdir`) and the memory."""
    return shlex.join([*executable, "--root", root, *(["--tenant", tenant] if tenant else []), "hook", "claude-code",
                       *([] if index else ["--no-index"])])


# Seconds Claude Code gives each hook before it stops it. The context hooks answer in well under a second, but a
# cold disk or a large memory must not cost the session its context; capture may call a model to summarise, and
# SessionEnd's own default (1.5 s) would cut it off.
TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 10, "Stop": 10, "SessionEnd": 60, "PreCompact": 60}
# What `--claude-memory` writes beside the hooks: one memory, not two (Claude Code's settings keys).
CLAUDE_MEMORY = ("off", "shared")


def install(text: str | None, cmd: str, events: Sequence[str] = EVENTS, *, claude_memory: str | None = None,
            root: str | None = None) -> str:
    """The settings file's text with memdir's hook on `events`: its other keys and hooks kept in order, a hook of
    memdir's already there given this command and timeout (never a second one). `claude_memory` "off" turns Claude
    Code's own auto memory off; "shared" makes `root` (a folder) its auto-memory folder, so both are one memory.
    `InvalidArgument` if the text is not a JSON object with a `hooks` object."""
    try:
        settings = json.loads(text) if text and text.strip() else {}
    except json.JSONDecodeError as e:
        raise InvalidArgument(f"the settings file is not valid JSON (line {e.lineno}: {e.msg}); fix it first, "
                              "nothing was written") from None
    if not isinstance(settings, dict):
        raise InvalidArgument("the settings file holds JSON that is not an object; fix it first, nothing was written")
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidArgument("the settings file's \"hooks\" is not an object; fix it first, nothing was written")
    for event in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidArgument(f"the settings file's hooks.{event} is not a list; fix it first, nothing was written")
        ours = [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                for h in g["hooks"] if isinstance(h, dict) and MARK in str(h.get("command", ""))]
        hook: dict[str, Any] = {"type": "command", "command": cmd, **({"timeout": TIMEOUTS[event]} if event in TIMEOUTS else {})}
        for h in ours:
            h.update(hook)
        if not ours:
            groups.append({"hooks": [hook]})
    if claude_memory == "off":
        settings["autoMemoryEnabled"] = False
    elif claude_memory == "shared":
        if root is None:
            raise InvalidArgument("--claude-memory shared needs a memory folder: Claude Code's auto memory is a folder")
        settings["autoMemoryDirectory"] = root
        if settings.get("autoMemoryEnabled") is False:
            del settings["autoMemoryEnabled"]
    elif claude_memory is not None:
        raise InvalidArgument(f"--claude-memory {claude_memory!r} is not one of {', '.join(CLAUDE_MEMORY)}")
    return json.dumps(settings, indent=_indent(text), ensure_ascii=False) + "\n"


def _indent(text: str | None) -> int:
    """The indent the file uses (2 for a new one)."""
    for line in (text or "").split("\n")[1:]:
        if line.strip():
            return max(1, len(line) - len(line.lstrip(" "))) if line.startswith(" ") else 2
    return 2


@dataclass(frozen=True)
class Installed:
    """What `install_file` did: the file, its text before (None if new) and after, and the backup if one was made."""

    path: Path
    before: str | None
    after: str
    backup: Path | None = None

    @property
    def change(self) -> str:
        return "created" if self.before is None else "unchanged" if self.before == self.after else "updated"

    def diff(self) -> str:
        return "".join(difflib.unified_diff((self.before or "").splitlines(keepends=True), self.after.splitlines(keepends=True),
                                            f"{self.path} (now)", f"{self.path} (with memdir's hooks)"))


def install_file(path: Path, cmd: str, *, dry_run: bool = False, events: Sequence[str] = EVENTS,
                 claude_memory: str | None = None, root: str | None = None) -> Installed:
    """Merge memdir's hooks into the Claude Code settings file at `path`; the file as it was is kept beside it as
    `<name>.bak` before it changes, and the new text replaces it in one rename. A symlinked settings file (dotfiles
    kept in a repository) is written through: the file it points to changes, the link stays. The backup replaces
    whatever `<name>.bak` was, a symlink included, and never writes where one points. `dry_run` writes nothing."""
    try:
        before: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path} cannot be read ({getattr(e, 'strerror', None) or e}); nothing was written") from None
    after = install(before, cmd, events, claude_memory=claude_memory, root=root)
    done = Installed(path, before, after)
    if dry_run or before == after:
        return done
    target = Path(os.path.realpath(path)) if path.is_symlink() else path  # a dangling link: the file it names
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if before is not None:
            backup = path.with_name(path.name + ".bak")
            _replace(backup, before, like=target)
        _replace(target, after, like=target if before is not None else None)
    except OSError as e:
        raise InvalidArgument(f"{path} cannot be written ({e.strerror or e}); it is as it was") from None
    return Installed(path, before, after, backup)


def _replace(path: Path, text: str, like: Path | None) -> None:
    """Write `text` to a new file beside `path` (with `like`'s mode) and rename it over `path`: a rename replaces
    a symlink there, never the file it points to, and a reader sees the old text or the new."""
    staged = path.with_name(f".{path.name}.memdir-{os.getpid()}")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if like is not None:
            shutil.copymode(like, staged)
        os.replace(staged, path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
