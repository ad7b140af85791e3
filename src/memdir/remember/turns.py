"""A transcript as memdir reads it: turns of who said what, what the session says of itself, what the agent did."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .activity import Activity
from .notes import unacknowledged


@dataclass(frozen=True)
class Turn:
    role: str  # user, assistant, tool or system
    text: str
    time: str | None = None  # ISO 8601 when the transcript says
    line: int | None = None  # where in the transcript it starts: a line of the file, or a message's number


@dataclass(frozen=True)
class Transcript:
    turns: tuple[Turn, ...]
    format: str  # text, messages, claude-code, codex or gemini
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. cwd, branch, request, summary, subagent, messages
    skipped: int = 0  # lines or messages that could not be read
    activity: Activity = field(default_factory=Activity)  # what the agent did: tools, files, commands, failures
    where: str = "line"  # what `Turn.line` counts: lines of a file, or messages of a JSON document

    @property
    def started(self) -> dt.datetime | None:
        return _first_time(self.turns)

    @property
    def ended(self) -> dt.datetime | None:
        return _first_time(reversed(self.turns))

    def as_text(self) -> str:
        """Plain text with role labels, which `load` reads back into the same turns."""
        return "".join(f"{t.role.title()}: {t.text}\n" for t in self.turns)


def _first_time(turns: Iterable[Turn]) -> dt.datetime | None:
    for t in turns:
        if t.time:
            try:
                got = dt.datetime.fromisoformat(t.time.replace("Z", "+00:00"))
            except ValueError:
                continue
            return got if got.tzinfo else got.replace(tzinfo=dt.UTC)
    return None


def add_turn(turns: list[Turn], turn: Turn) -> None:
    """Append, merging into the previous turn of the same role (Claude Code writes one line per block); a person's
    messages stay apart, so each keeps the line it came from."""
    if turns and turns[-1].role == turn.role and not (
            turn.role == "user" and None not in (turns[-1].line, turn.line) and turns[-1].line != turn.line):
        last = turns[-1]
        turns[-1] = Turn(last.role, f"{last.text}\n{turn.text}", last.time or turn.time, last.line or turn.line)
    else:
        turns.append(turn)


class Record(dict[str, Any]):
    """A JSONL record and the line of the file it was read from."""

    line: int | None = None


_COMMAND = re.compile(r"^/[\w:.-]+")
request_of = unacknowledged  # a user's turn without the acknowledgements it opens with


def first_request(turns: Iterable[Turn]) -> dict[str, Any]:
    """The first real request: the first user turn with words in it once the harness's markup and any
    acknowledgement are gone. A slash command without arguments (`/init`) stands for the request after it,
    and is the request itself when none follows."""
    command = None
    for t in turns:
        if t.role != "user" or t.text.startswith("[tool "):
            continue
        text = request_of(t.text)
        if not text:
            continue
        if _COMMAND.fullmatch(text):
            command = command or text
            continue
        return {"request": text}
    return {"request": command} if command else {}
