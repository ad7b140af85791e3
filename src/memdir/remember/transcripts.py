"""Session transcripts in the shapes agents leave behind, read into one list of turns.

Accepted: plain text (optionally with `User:` / `Assistant:` labels); a JSON
list of `{role, content}` messages in the Anthropic or OpenAI shape (content
as text or as blocks: text, tool_use / tool_calls, tool_result, images), and
OpenAI Responses items; Claude Code's session transcript (JSONL, one event a
line, its subagents' files too); Codex CLI's rollout JSONL and Gemini CLI's
chats (`agents.py`). What matters for memory is what the people said, what the
agent did and what broke: the harness's markup is stripped from the user's
turns (`activity.strip_markup`), tool calls shrink to one line and are counted
in `Transcript.activity` (files changed, commands run, subagent reports),
successful tool output and thinking are dropped, and a failed tool's output
keeps the line that says what failed (`activity.failing_line`).

A Claude Code `summary` record names the conversation whose last record its
`leafUuid` is: one naming a record of this file is kept as `meta["summary"]`,
one naming another conversation is not this session's. The first real request
is `meta["request"]`. A file whose every message is a sidechain is a
subagent's (`meta["subagent"]`): capture folds it into its parent session.

A transcript file is read as a regular file only (opened without following a
final symlink, and without waiting on a FIFO), line by line, up to a size cap.
One bad line never loses a session: a line that is not UTF-8 (a last line cut
inside a character) or not JSON, or one nested too deeply to parse, is skipped
and counted in `Transcript.skipped`, and the rest is kept.
"""

from __future__ import annotations

import codecs
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
from ..errors import InvalidArgument
from . import agents
from .activity import (
    CONTINUED,
    Activity,
    Log,
    bash_inputs,
    clip,
    is_command,
    redact,
    redact_value,
    slash_command,
    strip_markup,
)
from .turns import Record, Transcript, Turn, add_turn, first_request

__all__ = ["MAX_BYTES", "Transcript", "TranscriptError", "Turn", "load", "redact", "redact_value", "redacted"]

ROLES = {"user": "user", "human": "user", "you": "user", "assistant": "assistant", "ai": "assistant",
         "claude": "assistant", "model": "assistant", "bot": "assistant", "system": "system",
         "developer": "system", "tool": "tool"}
_LABEL = re.compile(r"^\s*(user|human|you|assistant|ai|claude|model|bot|system|tool)\s*:\s?(.*)$", re.IGNORECASE)
TOOL_LINE = 160
MAX_BYTES = 64 * 2**20  # what a capture reads of a transcript file at most (memdir.toml [capture] max_transcript_mb)


class TranscriptError(InvalidArgument):
    """The transcript is missing, unreadable or holds nothing to capture; `reason` is one word for the health log."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def redacted(t: Transcript) -> Transcript:
    """The transcript with every turn redacted (turn by turn: a secret never spans two turns, and a long
    transcript is not scanned again for each secret found)."""
    turns = tuple(replace(x, text=redact(x.text)) for x in t.turns)
    meta = {k: (redact(v) if k in ("request", "summary") else redact_value(v)) if isinstance(v, str) else v
            for k, v in t.meta.items()}  # what was said line by line, an outside value whole
    return replace(t, turns=turns, meta=meta, activity=redact_activity(t.activity))


def redact_activity(a: Activity) -> Activity:
    """The activity with what the secret guard would refuse replaced, item by item (a command may hold a token)."""
    return Activity(a.tools, tuple(redact_value(x) for x in a.files), tuple(redact(x) for x in a.commands),
                    tuple(redact(x) for x in a.failures), tuple(redact(x) for x in a.results))


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
    """The transcript, unless it holds no message at all (a message with only an image or a tool call is one)."""
    if not t.meta.get("messages") and not any(turn.text.strip() for turn in t.turns if turn.role in ("user", "assistant")):
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
    if head and head[-1].strip() == "{":  # one indented JSON document (a Gemini CLI chat or checkpoint)
        t = parse_text("\n".join(rest))
    elif head and head[-1].lstrip().startswith("{"):
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
        if isinstance(data, list) and data and all(isinstance(x, dict) and {"sessionId", "messageId", "message"} <= x.keys()
                                                   for x in data[:3]):
            raise TranscriptError("this is the Gemini CLI's prompt log (logs.json): it holds only the user's prompts, of "
                                  "every session; capture the session files under chats/ instead", reason="prompt log")
        if isinstance(data, list):
            return agents.from_gemini_history(data) if agents.is_gemini_history(data) else from_messages(data)
    if head.startswith("{") and not head.split("\n", 1)[0].rstrip().endswith("}"):
        try:
            doc = json.loads(head)
        except (json.JSONDecodeError, RecursionError):
            doc = None
        if isinstance(doc, dict) and agents.is_gemini_document(doc):
            return agents.from_gemini_document(doc, _lines_of_ids(head, doc.get("messages")))
        if isinstance(doc, dict) and agents.is_codex_document(doc):
            return agents.from_codex_document(doc)
    if head.startswith("{"):
        return from_jsonl(paths.lines(text))
    return from_plain(text)


def _lines_of_ids(text: str, messages: Any) -> dict[str, int] | None:
    """The line of a JSON document each message's `"id"` is on (the message's line, for learnings to name), or None
    when a message has no id to find."""
    if not isinstance(messages, list):
        return None
    found: dict[str, int] = {}
    for m in messages:
        mid = m.get("id") if isinstance(m, Mapping) else None
        if not isinstance(mid, str):
            return None
        at = text.find(json.dumps(mid, ensure_ascii=False))
        found[mid] = text.count("\n", 0, at) + 1 if at >= 0 else 0
    return found


def from_plain(text: str) -> Transcript:
    turns: list[Turn] = []
    role, lines, start = None, [], 1  # type: ignore[var-annotated]
    for number, raw in enumerate(paths.lines(text), 1):
        m = _LABEL.match(raw)
        if m:
            if role is not None or any(x.strip() for x in lines):
                turns.append(Turn(role or "user", "\n".join(lines).strip(), None, start))
            role, lines, start = ROLES[m.group(1).lower()], [m.group(2)], number
        else:
            lines.append(raw)
    if role is not None or any(x.strip() for x in lines):
        turns.append(Turn(role or "user", "\n".join(lines).strip(), None, start))
    kept = tuple(t for t in turns if t.text)
    return Transcript(kept, "text", {"messages": len(kept), **first_request(kept)})


def from_messages(items: list[Any]) -> Transcript:
    """Anthropic / OpenAI chat messages, or OpenAI Responses items."""
    turns: list[Turn] = []
    skipped = messages = 0
    log = Log()
    for number, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            skipped += 1
            continue
        messages += item.get("role") in ("user", "assistant")
        try:
            turn = _message(item, log=log, line=number)
        except RecursionError:  # content nested too deeply to read
            skipped += 1
            continue
        if turn is None:
            skipped += 1 if "role" not in item and "type" not in item else 0
            continue
        add_turn(turns, turn)
    return Transcript(tuple(turns), "messages", {"messages": messages, **first_request(turns)}, skipped, log.activity(),
                      "message")


def _message(item: Mapping[str, Any], time: str | None = None, *, log: Log, line: int | None = None) -> Turn | None:
    kind = item.get("type")
    if kind == "function_call":  # OpenAI Responses
        log.call(str(item.get("name", "tool")), _args(item.get("arguments")), _str(item.get("call_id")))
        return Turn("assistant", _tool_line(str(item.get("name", "tool")), item.get("arguments")), time, line)
    if kind == "function_call_output":
        return _result(log, _str(item.get("call_id")), _text_of(item.get("output")), False, time, line)
    role = ROLES.get(str(item.get("role", "")).lower())
    if role is None:
        return None
    if role == "tool":  # OpenAI tool output: its failure or its subagent report kept, the rest dropped
        return _result(log, _str(item.get("tool_call_id")), _text_of(item.get("content")), False, time, line)
    parts = _content(item.get("content"), log)
    for call in item.get("tool_calls") or ():  # OpenAI chat
        fn = call.get("function", {}) if isinstance(call, Mapping) else {}
        log.call(str(fn.get("name", "tool")), _args(fn.get("arguments")), _str(call.get("id")) if isinstance(call, Mapping) else None)
        parts.append(_tool_line(str(fn.get("name", "tool")), fn.get("arguments")))
    if role == "user":
        for part in parts:
            for command in bash_inputs(part):
                log.command(command)
        parts = [p if p.startswith("[tool error:") else slash_command(p) or strip_markup(p) for p in parts]
    parts = [p for p in parts if p]
    if role == "user" and parts and all(p.startswith("[tool error:") for p in parts):
        role = "tool"  # a failed tool call, reported back in a user message
    text = "\n".join(parts).strip()
    return Turn(role, text, time, line) if text else None


def _result(log: Log, call_id: str | None, output: str, error: bool, time: str | None, at: int | None) -> Turn | None:
    line = log.result(call_id, output, error=error)
    return Turn("tool", f"[tool error: {line}]", time, at) if line else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _args(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return {}
    return value


def _text_of(content: Any) -> str:
    """A tool result's content as text (a string, or blocks of which the text ones count)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) if isinstance(b, Mapping) else str(b) for b in content
                         if isinstance(b, str) or isinstance(b, Mapping) and b.get("type") in ("text", None))
    return "" if content is None else str(content)


def _content(content: Any, log: Log) -> list[str]:
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
            log.call(str(block.get("name", "tool")), block.get("input"), _str(block.get("id")))
            out.append(_tool_line(str(block.get("name", "tool")), block.get("input")))
        elif kind == "tool_result":
            call, error = _str(block.get("tool_use_id")), bool(block.get("is_error"))
            if error or log.wants(call):  # a read's or a search's output says nothing: it is not even joined
                line = log.result(call, _text_of(block.get("content")), error=error)
                if line:
                    out.append(f"[tool error: {line}]")
    return out  # an image or a file says nothing a record could hold: the words beside it are the message


def _tool_line(name: str, args: Any) -> str:
    args = _args(args)
    if isinstance(args, Mapping):
        main = next((args[k] for k in ("command", "file_path", "path", "pattern", "query", "url", "description")
                     if isinstance(args.get(k), str)), None)
        shown = main if main is not None else json.dumps(args, ensure_ascii=False, sort_keys=True)
    else:
        shown = "" if args is None else str(args)
    shown = clip(redact(" ".join(shown.split())), TOOL_LINE)  # redacted whole, then clipped
    return f"[tool {name}: {shown}]" if shown else f"[tool {name}]"


class _Lines:
    """JSONL records as dicts, each knowing its line, the lines that are not JSON objects counted."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines, self.skipped = lines, 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for number, raw in enumerate(self.lines, 1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):  # a half-written last line, a corrupt one, one too deep
                self.skipped += 1
                continue
            if isinstance(event, dict):
                record = Record(event)
                record.line = number
                yield record
            else:
                self.skipped += 1


def from_jsonl(lines: Iterable[str]) -> Transcript:
    """JSONL: Claude Code's transcript, Codex CLI's rollout, Gemini CLI's chat, or plain messages one a line;
    a bad line is skipped and counted."""
    records = _Lines(lines)
    events = iter(records)
    first = next(events, None)
    if first is None:
        return Transcript((), "messages", {}, records.skipped)
    stream = itertools.chain([first], events)
    if agents.is_codex(first):
        t = agents.from_codex(stream)
    elif agents.is_bare_codex(first):
        t = agents.from_codex(agents.enveloped(stream))
    elif agents.is_gemini_line(first):
        t = agents.from_gemini_lines(stream)
    else:
        t = _claude_code(stream)
    return replace(t, skipped=t.skipped + records.skipped)


@dataclass
class _Reading:
    """What reading a Claude Code transcript has gathered so far."""

    turns: list[Turn] = field(default_factory=list)
    side: list[Turn] = field(default_factory=list)  # sidechain (subagent) turns
    meta: dict[str, Any] = field(default_factory=dict)
    summaries: list[tuple[str, str | None]] = field(default_factory=list)  # (summary, leafUuid)
    uuids: set[str] = field(default_factory=set)
    log: Log = field(default_factory=Log)
    claude: bool = False
    main: bool = False  # a message that is not a sidechain's was seen
    messages: int = 0  # user and assistant messages of the main conversation, whatever they hold
    expansion: bool = False  # the next user message may be a slash command's expansion (older files)


def _claude_code(events: Iterable[dict[str, Any]]) -> Transcript:
    r = _Reading()
    for event in events:
        try:
            _event(event, r)
        except RecursionError:
            continue
    meta = dict(r.meta)
    own = [s for s, leaf in r.summaries if leaf in r.uuids]
    if own:
        meta["summary"] = own[-1]  # the newest summary of this conversation (one of another is not this one's)
    turns = r.turns
    if not r.main and r.side:  # every message a sidechain's: a subagent's own transcript
        turns = r.side
        meta["subagent"] = meta.pop("agent", None) or "sidechain"
    else:
        meta.pop("agent", None)
    meta.update(first_request(turns))
    meta["messages"] = r.messages
    return Transcript(tuple(turns), "claude-code" if r.claude else "messages", meta, 0, r.log.activity())


def _event(event: dict[str, Any], r: _Reading) -> None:
    """One JSONL record: its turn appended, what it says of the session into the reading's meta."""
    etype = event.get("type")
    if "message" in event or etype in ("summary", "system", "attachment", "progress", "file-history-snapshot"):
        r.claude = True
    if isinstance(event.get("uuid"), str):
        r.uuids.add(event["uuid"])
    if etype == "summary" and isinstance(event.get("summary"), str):
        r.summaries.append((event["summary"], event.get("leafUuid") if isinstance(event.get("leafUuid"), str) else None))
        return
    for key, name in (("cwd", "cwd"), ("gitBranch", "branch"), ("sessionId", "session"), ("agentId", "agent")):
        if isinstance(event.get(key), str) and event[key]:
            r.meta.setdefault(name, event[key])
    if r.log.cwd is None and isinstance(r.meta.get("cwd"), str):
        r.log.cwd = r.meta["cwd"]
    if "message" in event:
        msg_ = event["message"]
        if etype not in ("user", "assistant") or event.get("isMeta") or event.get("isCompactSummary") \
                or event.get("isApiErrorMessage") or not isinstance(msg_, Mapping) or msg_.get("model") == "<synthetic>":
            return
        msg = dict(msg_)
        msg.setdefault("role", etype)
        said = _text_of(msg.get("content"))
        if etype == "user" and CONTINUED.match(said[:200]):
            return  # a compaction summary without the flag (older files): the earlier conversation, not a request
        line = getattr(event, "line", None)
        turn = _message(msg, event.get("timestamp") if isinstance(event.get("timestamp"), str) else None, log=r.log,
                        line=line)
        if event.get("isSidechain"):  # a subagent's turn: its tool calls count, its words are its report's
            if turn is not None:
                add_turn(r.side, turn)
            return
        r.main = True
        r.messages += 1
        if etype == "assistant":
            r.expansion = False
        elif turn is not None and turn.role == "user":
            if r.expansion and not is_command(said) and isinstance(msg.get("content"), list):
                r.expansion = False
                return  # what a slash command expanded to (its prompt), written as blocks of a message of its own
            r.expansion = is_command(said)
        if turn is not None:
            add_turn(r.turns, turn)
    elif "role" in event:
        turn = _message(event, log=r.log, line=getattr(event, "line", None))
        r.messages += event.get("role") in ("user", "assistant")
        if turn is not None:
            r.main = True
            add_turn(r.turns, turn)


SUBAGENTS = 50  # subagent files folded into one session at most


def subagent_files(path: Path, session: str, fmt: str = "claude-code") -> list[Path]:
    """The subagent transcripts of the session in `path`. Claude Code: `<session>/subagents/agent-*.jsonl` beside
    it (the current layout), and the `agent-*.jsonl` beside it whose first record names the session (the older);
    Gemini CLI: `<session id>/*.jsonl` beside it."""
    if fmt == "gemini":
        folder = path.parent / session
        return sorted(p for p in folder.glob("*.jsonl") if p.is_file() and not p.is_symlink())[:SUBAGENTS] \
            if "/" not in session and session not in ("", ".", "..") else []
    found = sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl"))
    for other in sorted(path.parent.glob("agent-*.jsonl")):
        try:
            with other.open("rb") as f:
                head = json.loads(f.readline(1 << 16) or b"null")
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(head, dict) and head.get("sessionId") == session:
            found.append(other)
    return [p for p in found if p.is_file() and not p.is_symlink()][:SUBAGENTS]


def with_subagents(t: Transcript, path: Path, max_bytes: int = MAX_BYTES) -> Transcript:
    """A Claude Code session with what its subagents did folded in (files changed, commands run, what failed);
    their reports are already the session's Task results. A subagent file that cannot be read is left out."""
    session = t.meta.get("session")
    if t.format not in ("claude-code", "gemini") or not isinstance(session, str) or t.meta.get("subagent"):
        return t
    activity, folded = t.activity, 0
    for other in subagent_files(path, session, t.format):
        try:
            sub = read_file(other, max_bytes)
        except TranscriptError:
            continue
        if sub.meta.get("subagent"):
            activity, folded = activity.merged(sub.activity), folded + 1
    return replace(t, activity=activity, meta={**t.meta, "subagents": folded}) if folded else t
