"""A transcript as memdir reads it: turns of who said what, what the session says of itself, what the agent did."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .activity import Activity


@dataclass(frozen=True)
class Turn:
    role: str  # user, assistant, tool or system
    text: str
    time: str | None = None  # ISO 8601 when the transcript says


@dataclass(frozen=True)
class Transcript:
    turns: tuple[Turn, ...]
    format: str  # text, messages, claude-code, codex or gemini
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. cwd, branch, request, summary, subagent
    skipped: int = 0  # lines or messages that could not be read
    activity: Activity = field(default_factory=Activity)  # what the agent did: tools, files, commands, failures

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
    """Append, merging into the previous turn of the same role (Claude Code writes one line per block)."""
    if turns and turns[-1].role == turn.role:
        last = turns[-1]
        turns[-1] = Turn(last.role, f"{last.text}\n{turn.text}", last.time or turn.time)
    else:
        turns.append(turn)
