"""Session transcripts in the shapes agents leave behind, read into one list of turns.

Accepted: plain text (optionally with `User:` / `Assistant:` labels); a JSON
list of `{role, content}` messages in the Anthropic or OpenAI shape (content
as text or as blocks: text, tool_use / tool_calls, tool_result, images), and
OpenAI Responses items; Claude Code's session transcript (JSONL, one event a
line). What matters for memory is what the people said and what broke, so
tool calls shrink to one line, successful tool output and thinking are
dropped, and failed tool output keeps its first line.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import InvalidArgument

ROLES = {"user": "user", "human": "user", "you": "user", "assistant": "assistant", "ai": "assistant",
         "claude": "assistant", "model": "assistant", "bot": "assistant", "system": "system",
         "developer": "system", "tool": "tool"}
_LABEL = re.compile(r"^\s*(user|human|you|assistant|ai|claude|model|bot|system|tool)\s*:\s?(.*)$", re.IGNORECASE)
_NOISE = re.compile(
    r"^\s*(?:<(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
    r"system-reminder|task-notification|user-prompt-submit-hook)>|Caveat: |\[Request interrupted by user)"
)
TOOL_LINE = 160


class TranscriptError(InvalidArgument):
    """The transcript is missing, unreadable or holds nothing to capture; `reason` is one word for the health log."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Turn:
    role: str  # user, assistant, tool or system
    text: str
    time: str | None = None  # ISO 8601 when the transcript says


@dataclass(frozen=True)
class Transcript:
    turns: tuple[Turn, ...]
    format: str  # text, messages or claude-code
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. cwd, git branch, title from the transcript
    skipped: int = 0  # lines or messages that could not be read

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


def load(source: Any) -> Transcript:
    """Read a transcript from a path, text, bytes or a list of messages; `TranscriptError` says why not."""
    if isinstance(source, Transcript):
        return source
    if isinstance(source, (os.PathLike, Path)):
        path = Path(source)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise TranscriptError(f"transcript {path} does not exist", reason="missing") from None
        except OSError as e:
            raise TranscriptError(f"transcript {path} cannot be read ({e.strerror or e})", reason="unreadable") from None
        return _checked(parse_bytes(data, str(path)), str(path))
    if isinstance(source, bytes):
        return _checked(parse_bytes(source, "the transcript"), "the transcript")
    if isinstance(source, str):
        return _checked(parse_text(source), "the transcript")
    if isinstance(source, list):
        return _checked(from_messages(source), "the transcript")
    raise TranscriptError(
        f"a transcript must be a path, text or a list of messages, got {type(source).__name__}", reason="unreadable"
    )


def _checked(t: Transcript, where: str) -> Transcript:
    if not any(turn.text.strip() for turn in t.turns if turn.role in ("user", "assistant")):
        raise TranscriptError(f"{where} holds no user or assistant messages", reason="empty")
    return t


def parse_bytes(data: bytes, where: str) -> Transcript:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TranscriptError(f"{where} is not UTF-8 text (byte {e.start})", reason="unreadable") from None
    return parse_text(text)


def parse_text(text: str) -> Transcript:
    """Detect the format: a JSON list of messages, JSONL (Claude Code or messages), or plain text."""
    head = text.lstrip()
    if head.startswith("["):
        try:
            data = json.loads(head)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, list):
            return from_messages(data)
    if head.startswith("{"):
        return from_jsonl(paths.lines(text))
    return from_plain(text)


def from_plain(text: str) -> Transcript:
    turns: list[Turn] = []
    role, lines = None, []  # type: ignore[var-annotated]
    for raw in paths.lines(text):
        m = _LABEL.match(raw)
        if m:
            if role is not None or any(x.strip() for x in lines):
                turns.append(Turn(role or "user", "\n".join(lines).strip()))
            role, lines = ROLES[m.group(1).lower()], [m.group(2)]
        else:
            lines.append(raw)
    if role is not None or any(x.strip() for x in lines):
        turns.append(Turn(role or "user", "\n".join(lines).strip()))
    return Transcript(tuple(t for t in turns if t.text), "text")


def from_messages(items: list[Any]) -> Transcript:
    """Anthropic / OpenAI chat messages, or OpenAI Responses items."""
    turns: list[Turn] = []
    skipped = 0
    for item in items:
        if not isinstance(item, Mapping):
            skipped += 1
            continue
        turn = _message(item)
        if turn is None:
            skipped += 1 if "role" not in item and "type" not in item else 0
            continue
        _add(turns, turn)
    return Transcript(tuple(turns), "messages", skipped=skipped)


def _message(item: Mapping[str, Any], time: str | None = None) -> Turn | None:
    kind = item.get("type")
    if kind == "function_call":  # OpenAI Responses
        return Turn("assistant", _tool_line(str(item.get("name", "tool")), item.get("arguments")), time)
    if kind == "function_call_output":
        return None
    role = ROLES.get(str(item.get("role", "")).lower())
    if role is None:
        return None
    parts = _content(item.get("content"))
    for call in item.get("tool_calls") or ():  # OpenAI chat
        fn = call.get("function", {}) if isinstance(call, Mapping) else {}
        parts.append(_tool_line(str(fn.get("name", "tool")), fn.get("arguments")))
    if role == "tool":  # OpenAI tool output: dropped like successful tool results
        return None
    parts = [p for p in parts if p]
    if role == "user" and parts and all(p.startswith("[tool error:") for p in parts):
        role = "tool"  # a failed tool call, reported back in a user message
    text = "\n".join(parts).strip()
    return Turn(role, text, time) if text else None


def _content(content: Any) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, Mapping):
        content = [content]
    out: list[str] = []
    if not isinstance(content, list):
        return [str(content)]
    for block in content:
        if isinstance(block, str):
            out.append(block)
            continue
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text"):
            out.append(str(block.get("text", "")))
        elif kind == "tool_use":
            out.append(_tool_line(str(block.get("name", "tool")), block.get("input")))
        elif kind == "tool_result":
            if block.get("is_error"):
                first = next((x for x in paths.lines(" ".join(_content(block.get("content")))) if x.strip()), "")
                out.append(f"[tool error: {first.strip()[:TOOL_LINE]}]")
        elif kind in ("image", "image_url", "input_image"):
            out.append("[image]")
        elif kind in ("document", "file", "input_file"):
            out.append("[file]")
    return out


def _tool_line(name: str, args: Any) -> str:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            pass
    if isinstance(args, Mapping):
        main = next((args[k] for k in ("command", "file_path", "path", "pattern", "query", "url", "description")
                     if isinstance(args.get(k), str)), None)
        shown = main if main is not None else json.dumps(args, ensure_ascii=False, sort_keys=True)
    else:
        shown = "" if args is None else str(args)
    shown = " ".join(shown.split())
    return f"[tool {name}: {shown[:TOOL_LINE]}]" if shown else f"[tool {name}]"


def from_jsonl(lines: Iterable[str]) -> Transcript:
    """Claude Code's transcript (or JSONL of plain messages): one JSON object a line."""
    turns: list[Turn] = []
    meta: dict[str, Any] = {}
    skipped = 0
    kind = "messages"
    for raw in lines:
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except json.JSONDecodeError:
            skipped += 1  # a half-written last line, or a corrupt one
            continue
        if not isinstance(event, dict):
            skipped += 1
            continue
        etype = event.get("type")
        if "message" in event or etype in ("summary", "system", "attachment", "progress", "file-history-snapshot"):
            kind = "claude-code"
        if etype == "summary" and isinstance(event.get("summary"), str):
            meta.setdefault("title", event["summary"])
            continue
        for key, name in (("cwd", "cwd"), ("gitBranch", "branch"), ("sessionId", "session")):
            if isinstance(event.get(key), str) and event[key]:
                meta.setdefault(name, event[key])
        if "message" in event:
            if etype not in ("user", "assistant") or event.get("isMeta") or event.get("isSidechain") \
                    or event.get("isCompactSummary") or not isinstance(event["message"], Mapping):
                continue
            msg = dict(event["message"])
            msg.setdefault("role", etype)
            if etype == "user" and isinstance(msg.get("content"), str) and _NOISE.match(msg["content"]):
                continue
            turn = _message(msg, event.get("timestamp") if isinstance(event.get("timestamp"), str) else None)
            if turn is not None and not (turn.role == "user" and _NOISE.match(turn.text)):
                _add(turns, turn)
        elif "role" in event:
            turn = _message(event)
            if turn is not None:
                _add(turns, turn)
    return Transcript(tuple(turns), kind, meta, skipped)


def _add(turns: list[Turn], turn: Turn) -> None:
    """Append, merging into the previous turn of the same role (Claude Code writes one line per block)."""
    if turns and turns[-1].role == turn.role:
        last = turns[-1]
        turns[-1] = Turn(last.role, f"{last.text}\n{turn.text}", last.time or turn.time)
    else:
        turns.append(turn)
