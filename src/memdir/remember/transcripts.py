"""Session transcripts in the shapes agents leave behind, read into one list of turns.

Accepted: plain text (optionally with `User:` / `Assistant:` labels); a JSON
list of `{role, content}` messages in the Anthropic or OpenAI shape (content
as text or as blocks: text, tool_use / tool_calls, tool_result, images), and
OpenAI Responses items; Claude Code's session transcript (JSONL, one event a
line). What matters for memory is what the people said and what broke, so
tool calls shrink to one line, successful tool output and thinking are
dropped, and failed tool output keeps its first line.

A transcript file is read as a regular file only (opened without following a
final symlink, and without waiting on a FIFO), line by line, up to a size cap.
One bad line never loses a session: a line that is not UTF-8 (a last line cut
inside a character) or not JSON, or one nested too deeply to parse, is skipped
and counted in `Transcript.skipped`, and the rest is kept.
"""

from __future__ import annotations

import codecs
import datetime as dt
import errno
import io
import itertools
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import paths
from ..core import guard
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
MAX_BYTES = 64 * 2**20  # what a capture reads of a transcript file at most (memdir.toml [capture] max_transcript_mb)


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


def redact(text: str) -> str:
    """Lines that hold what the secret guard would refuse, replaced by a note (memories never hold credentials)."""
    while (found := guard.find_secret(text)) is not None:
        kind, number = found
        lines = text.split("\n")
        lines[number - 1] = f"[line removed: it held what looks like {kind}]"
        text = "\n".join(lines)
    return text


def redact_value(value: str) -> str:
    """A value from outside (a session id, folder, branch, path) as a record may hold it: itself, or a note
    where it holds what the secret guard would refuse."""
    found = guard.find_secret(value)
    return value if found is None else f"[removed: it held what looks like {found[0]}]"


def redacted(t: Transcript) -> Transcript:
    """The transcript with every turn redacted (turn by turn: a secret never spans two turns, and a long
    transcript is not scanned again for each secret found)."""
    turns = tuple(Turn(x.role, redact(x.text), x.time) for x in t.turns)
    meta = {k: redact_value(v) if isinstance(v, str) else v for k, v in t.meta.items()}
    return Transcript(turns, t.format, meta, t.skipped)


def _first_time(turns: Iterable[Turn]) -> dt.datetime | None:
    for t in turns:
        if t.time:
            try:
                got = dt.datetime.fromisoformat(t.time.replace("Z", "+00:00"))
            except ValueError:
                continue
            return got if got.tzinfo else got.replace(tzinfo=dt.UTC)
    return None


def load(source: Any, *, max_bytes: int = MAX_BYTES) -> Transcript:
    """Read a transcript from a path, text, bytes or a list of messages; `TranscriptError` says why not.

    `max_bytes` bounds what is read of a file."""
    if isinstance(source, Transcript):
        return source
    if isinstance(source, (os.PathLike, Path)):
        path = Path(source)
        return _checked(read_file(path, max_bytes), str(path))
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


def read_file(path: Path, max_bytes: int = MAX_BYTES) -> Transcript:
    """A transcript file: a regular file only, opened without following a final symlink and without waiting
    on a FIFO, streamed line by line and never more than `max_bytes` of it."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TranscriptError(f"transcript {path} does not exist", reason="missing") from None
    except OSError as e:
        if e.errno == errno.ELOOP and path.is_symlink():
            raise TranscriptError(f"transcript {path} is a symbolic link; give the path of the transcript file itself",
                                  reason="unreadable") from None
        raise TranscriptError(f"transcript {path} cannot be read ({e.strerror or e})", reason="unreadable") from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            what = ("a folder" if stat.S_ISDIR(mode.st_mode) else "a FIFO" if stat.S_ISFIFO(mode.st_mode)
                    else "a device" if stat.S_ISCHR(mode.st_mode) or stat.S_ISBLK(mode.st_mode) else "not a file")
            raise TranscriptError(f"transcript {path} is {what}, not a regular file; give a transcript file",
                                  reason="unreadable")
        if mode.st_size > max_bytes:
            raise _too_large(path, mode.st_size, max_bytes)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        try:
            return parse_lines(_bounded(f, path, max_bytes), str(path))
        except OSError as e:
            raise TranscriptError(f"transcript {path} cannot be read ({e.strerror or e})", reason="unreadable") from None


def _bounded(f: io.BufferedReader, path: Path, max_bytes: int) -> Iterator[bytes]:
    """The lines of `f`, stopping with `too-large` once more than `max_bytes` were read (a file that grew after it
    was checked, or one whose size the system does not report): no line is read past the cap either."""
    read = 0
    while line := f.readline(max_bytes - read + 1):
        read += len(line)
        if read > max_bytes:
            raise _too_large(path, read, max_bytes)
        yield line


def _too_large(path: Path, size: int, max_bytes: int) -> TranscriptError:
    return TranscriptError(
        f"transcript {path} is larger than the {max_bytes / 2**20:g} MB a capture reads ({size:,} bytes or more); "
        "raise max_transcript_mb in memdir.toml [capture] (or MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB) to capture it",
        reason="too-large")


def parse_bytes(data: bytes, where: str) -> Transcript:
    return parse_lines(io.BytesIO(data), where)


def parse_lines(raw: Iterable[bytes], where: str) -> Transcript:
    """Lines of bytes (split at '\\n' only) read into a transcript; a line that is not UTF-8 is skipped and counted.

    JSONL is parsed as it is read; the other formats are parsed whole."""
    bad: list[int] = []  # line numbers that are not UTF-8
    good = 0

    def decoded() -> Iterator[str]:
        nonlocal good
        for number, line in enumerate(raw, 1):
            if number == 1 and line.startswith(codecs.BOM_UTF8):
                line = line[len(codecs.BOM_UTF8):]
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                bad.append(number)
                continue
            good += bool(text.strip())
            yield text[:-1] if text.endswith("\n") else text

    lines = decoded()
    head: list[str] = []
    for line in lines:  # up to the first line with something on it, which says the format
        head.append(line)
        if line.strip():
            break
    rest = itertools.chain(head, lines)
    if head and head[-1].lstrip().startswith("{"):
        t = from_jsonl(rest)
    else:
        t = parse_text("\n".join(rest))
    if bad and not good:
        raise TranscriptError(f"{where} is not UTF-8 text (line {bad[0]})", reason="unreadable")
    return replace(t, skipped=t.skipped + len(bad)) if bad else t


def parse_text(text: str) -> Transcript:
    """Detect the format: a JSON list of messages, JSONL (Claude Code or messages), or plain text."""
    head = text.lstrip()
    if head.startswith("["):
        try:
            data = json.loads(head)
        except (json.JSONDecodeError, RecursionError):  # not JSON, or nested too deeply to parse: read as text
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
        try:
            turn = _message(item)
        except RecursionError:  # content nested too deeply to read
            skipped += 1
            continue
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
    """Claude Code's transcript (or JSONL of plain messages): one JSON object a line; a bad line is skipped and counted."""
    turns: list[Turn] = []
    meta: dict[str, Any] = {}
    skipped = 0
    kinds: set[str] = set()
    for raw in lines:
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
            if not isinstance(event, dict):
                skipped += 1
                continue
            _event(event, turns, meta, kinds)
        except (json.JSONDecodeError, RecursionError):  # a half-written last line, a corrupt one, one nested too deeply
            skipped += 1
    return Transcript(tuple(turns), "claude-code" if kinds else "messages", meta, skipped)


def _event(event: dict[str, Any], turns: list[Turn], meta: dict[str, Any], kinds: set[str]) -> None:
    """One JSONL record: its turn appended to `turns`, what it says of the session into `meta`."""
    etype = event.get("type")
    if "message" in event or etype in ("summary", "system", "attachment", "progress", "file-history-snapshot"):
        kinds.add("claude-code")
    if etype == "summary" and isinstance(event.get("summary"), str):
        meta.setdefault("title", event["summary"])
        return
    for key, name in (("cwd", "cwd"), ("gitBranch", "branch"), ("sessionId", "session")):
        if isinstance(event.get(key), str) and event[key]:
            meta.setdefault(name, event[key])
    if "message" in event:
        if etype not in ("user", "assistant") or event.get("isMeta") or event.get("isSidechain") \
                or event.get("isCompactSummary") or not isinstance(event["message"], Mapping):
            return
        msg = dict(event["message"])
        msg.setdefault("role", etype)
        if etype == "user" and isinstance(msg.get("content"), str) and _NOISE.match(msg["content"]):
            return
        turn = _message(msg, event.get("timestamp") if isinstance(event.get("timestamp"), str) else None)
        if turn is not None and not (turn.role == "user" and _NOISE.match(turn.text)):
            _add(turns, turn)
    elif "role" in event:
        turn = _message(event)
        if turn is not None:
            _add(turns, turn)


def _add(turns: list[Turn], turn: Turn) -> None:
    """Append, merging into the previous turn of the same role (Claude Code writes one line per block)."""
    if turns and turns[-1].role == turn.role:
        last = turns[-1]
        turns[-1] = Turn(last.role, f"{last.text}\n{turn.text}", last.time or turn.time)
    else:
        turns.append(turn)
