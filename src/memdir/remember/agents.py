"""Other coding agents' session files: Codex CLI's rollout JSONL and Gemini CLI's chats and checkpoints.

Codex (openai/codex, `codex-rs`): `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`,
one `{timestamp, type, payload}` a line. `session_meta` names the session, its
folder and git branch; `response_item` payloads are what the model saw:
`message` (user, assistant, developer), `function_call` / `function_call_output`
and `custom_tool_call` / `custom_tool_call_output` paired by `call_id`,
`reasoning` (dropped, like thinking). The `event_msg` lines repeat the same
conversation for the UI: they are read only when no `response_item` holds it
(a rollout of `user_message` / `agent_message` events alone; `exec_command_*`
events for what ran), so nothing is counted twice. Two older shapes: the
mid-2025 rollouts without the envelope (a first line `{id, timestamp,
instructions, git}`, then the items bare, with `{"record_type": "state"}`
markers), and the TypeScript CLI's one JSON document `{session, items}`. A tool
output is text, a JSON string with `metadata.exit_code`, a list of content
items, or an object `{content, success}`; `"success": false` is a failure.

Gemini CLI (google-gemini/gemini-cli, `chatRecordingService`): a
`ConversationRecord` (`sessionId`, `messages` of type user / gemini / info /
error / warning, a gemini message's `toolCalls` with `status` and `result`),
written as one JSON document or, newer, as JSONL (a metadata line, a line per
message, a message written again under its id when it changes, `{"$set": …}`
updates and `{"$rewindTo": id}`, which drops that message and what follows
it); a message's `content` is a string, one part or a list of parts, and a
user's `displayContent` is what they typed (without the files an @ mention
added); a `kind: "subagent"` file is a subagent's, under `chats/<session id>/`.
And `/chat save` checkpoints, the API's `Content` list (`role` user / model,
`parts` of text, functionCall, functionResponse), bare or under `history`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .activity import Log, bash_inputs, redact, strip_markup
from .turns import Record, Transcript, Turn, add_turn, first_request

CODEX = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
CODEX_ITEMS = {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
               "custom_tool_call_output", "local_shell_call", "web_search_call"}
GEMINI_TYPES = {"user": "user", "gemini": "assistant"}
_GEMINI_SETUP = re.compile(r"gemini cli", re.IGNORECASE)


def _texts(content: Any, *keys: str) -> list[str]:
    """The text parts of content: a string, one part, or a list of parts and strings (images and files say
    nothing a record could hold, and are left out)."""
    if isinstance(content, str):
        return [content]
    out = []
    for part in [content] if isinstance(content, Mapping) else content if isinstance(content, list) else []:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str) and not part.get("thought") \
                and (part.get("type") is None or part.get("type") in keys):
            out.append(part["text"])
    return out


def _user(texts: list[str], log: Log) -> str:
    for text in texts:
        for command in bash_inputs(text):
            log.command(command)
    return "\n".join(x for x in (strip_markup(t) for t in texts) if x).strip()


def _tool_text(name: str, what: str) -> str:
    shown = " ".join(redact(" ".join(what.split())).split())[:160]  # redacted whole, then clipped
    return f"[tool {name}: {shown}]" if shown else f"[tool {name}]"


def _line(event: Mapping[str, Any]) -> int | None:
    return getattr(event, "line", None)


# ---------------------------------------------------------------- Codex


def is_codex(first: Mapping[str, Any]) -> bool:
    return first.get("type") in CODEX and isinstance(first.get("payload"), Mapping)


def is_bare_codex(first: Mapping[str, Any]) -> bool:
    """The first line of a mid-2025 rollout: the session's header without an envelope, a state marker, or an item."""
    header = "type" not in first and isinstance(first.get("id"), str) and isinstance(first.get("timestamp"), str) \
        and ("instructions" in first or "git" in first) and "sessionId" not in first and "message" not in first
    return header or first.get("record_type") == "state" or (
        first.get("type") in CODEX_ITEMS and "payload" not in first and "message" not in first
        and ("role" in first or "call_id" in first or first.get("type") == "reasoning"))


def enveloped(records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Bare rollout lines as the enveloped ones: the header as `session_meta`, items as `response_item`."""
    for r in records:
        if r.get("record_type") == "state":
            continue
        if "type" not in r and isinstance(r.get("id"), str):
            out: dict[str, Any] = {"type": "session_meta", "timestamp": r.get("timestamp"), "payload": dict(r)}
        elif r.get("type") in CODEX_ITEMS:
            out = {"type": "response_item", "timestamp": r.get("timestamp"), "payload": dict(r)}
        else:
            continue
        yield _at(out, _line(r))


def _at(record: dict[str, Any], line: int | None) -> Mapping[str, Any]:
    """`record` knowing the line it came from."""
    out = Record(record)
    out.line = line
    return out


def is_codex_document(doc: Mapping[str, Any]) -> bool:
    """The TypeScript Codex CLI's rollout: `{session: {timestamp, id, instructions}, items: [...]}`."""
    return isinstance(doc.get("session"), Mapping) and isinstance(doc.get("items"), list)


def from_codex_document(doc: Mapping[str, Any]) -> Transcript:
    session = doc["session"]
    head = {"type": "session_meta", "timestamp": session.get("timestamp"), "payload": dict(session)}
    items = [_at({"type": "response_item", "payload": item}, i) for i, item in enumerate(doc["items"], 1)
             if isinstance(item, Mapping)]
    t = from_codex([head, *items])
    return Transcript(t.turns, t.format, t.meta, t.skipped, t.activity, "message")


def _codex_output(raw: Any) -> tuple[str, bool]:
    """A Codex tool output: (its text, whether it failed). Older outputs are JSON strings with `metadata.exit_code`,
    or objects `{content, success}`; newer ones are text starting "Exit code: N", or a list of content items."""
    if isinstance(raw, Mapping):
        content = raw.get("content")
        return (content if isinstance(content, str) else json.dumps(raw)), raw.get("success") is False
    if isinstance(raw, list):
        return "\n".join(_texts(raw, "input_text", "output_text", "text")), False
    text = raw if isinstance(raw, str) else ""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        data = None
    if isinstance(data, Mapping) and isinstance(data.get("output"), str):
        meta = data.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, Mapping) else None
        return data["output"], isinstance(code, int) and code != 0
    m = re.match(r"\s*Exit code:\s*(\d+)", text)
    return text, bool(m and m.group(1) != "0")


# what a user_message event's `kind` says when it is the harness's, not the person's (older CLIs)
_INJECTED = {"user_instructions", "environment_context"}


def from_codex(events: Iterable[Mapping[str, Any]]) -> Transcript:
    items: list[tuple[int, Turn]] = []  # (order, turn) from response_item lines
    said: list[tuple[int, Turn]] = []  # ... from event_msg lines, used when no response_item holds a message
    meta: dict[str, Any] = {}
    log, ran = Log(), Log()  # the tool calls of response_items, and those of exec_command events
    spoken = 0
    for order, event in enumerate(events):
        payload = event.get("payload")
        if not isinstance(payload, Mapping):
            continue
        time = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
        line = _line(event)
        etype = event.get("type")
        if etype == "session_meta":
            git: Mapping[str, Any] = payload["git"] if isinstance(payload.get("git"), Mapping) else {}
            for key, value in (("session", payload.get("id")), ("cwd", payload.get("cwd")), ("branch", git.get("branch"))):
                if isinstance(value, str) and value:
                    meta.setdefault(key, value)
            log.cwd = ran.cwd = meta.get("cwd")
            continue
        if etype == "event_msg":
            turn = _codex_event(payload, ran, time, line)
            if turn is not None:
                said.append((order, turn))
            continue
        if etype != "response_item":
            continue
        kind = payload.get("type")
        if kind == "message":
            role = payload.get("role")
            if role == "user":
                spoken += 1
                text = _user(_texts(payload.get("content"), "input_text"), log)
                if text:
                    items.append((order, Turn("user", text, time, line)))
            elif role == "assistant":
                spoken += 1
                text = "\n".join(_texts(payload.get("content"), "output_text")).strip()
                if text:
                    items.append((order, Turn("assistant", text, time, line)))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(payload.get("name") or "shell")
            args: Any = payload.get("arguments") if kind == "function_call" else {"input": payload.get("input")}
            if kind == "local_shell_call":
                action = payload.get("action")
                args = {"command": action.get("command")} if isinstance(action, Mapping) else {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except (json.JSONDecodeError, RecursionError):
                    args = {}
            call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
            log.call(name, args, call_id)
            what = log.calls.get(call_id or "", (name, ""))[1] if call_id else ""
            items.append((order, Turn("assistant", _tool_text(name, what if what != name else ""), time, line)))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output, failed = _codex_output(payload.get("output"))
            call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
            failure = log.result(call_id, output, error=failed)
            if failure:
                items.append((order, Turn("tool", f"[tool error: {failure}]", time, line)))
    if not spoken:  # the conversation is in the event lines alone
        items = sorted(items + [(o, t) for o, t in said if t.role != "tool" or not log.tools], key=lambda x: x[0])
        spoken = sum(t.role in ("user", "assistant") for _, t in said)
    turns: list[Turn] = []
    for _, turn in items:
        add_turn(turns, turn)
    meta.update(first_request(turns))
    meta["messages"] = spoken
    return Transcript(tuple(turns), "codex", meta, 0, (log if log.tools else ran).activity())


def _codex_event(payload: Mapping[str, Any], ran: Log, time: str | None, line: int | None) -> Turn | None:
    """An event_msg line as a turn: what the person and the agent said, and what ran (exec_command_* events)."""
    kind = payload.get("type")
    if kind == "user_message" and isinstance(payload.get("message"), str) and payload.get("kind") not in _INJECTED:
        text = _user([payload["message"]], ran)
        return Turn("user", text, time, line) if text else None
    if kind == "agent_message" and isinstance(payload.get("message"), str) and payload["message"].strip():
        return Turn("assistant", payload["message"].strip(), time, line)
    call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
    if kind == "exec_command_begin":
        ran.call("shell", {"command": payload.get("command")}, call_id)
        return Turn("assistant", _tool_text("shell", ran.commands[-1] if ran.commands else ""), time, line)
    if kind == "exec_command_end":
        output = next((payload[k] for k in ("aggregated_output", "formatted_output", "stdout")
                       if isinstance(payload.get(k), str) and payload[k]), "")
        code = payload.get("exit_code")
        failure = ran.result(call_id, output, error=isinstance(code, int) and code != 0)
        return Turn("tool", f"[tool error: {failure}]", time, line) if failure else None
    return None


# ---------------------------------------------------------------- Gemini CLI


def is_gemini_line(first: Mapping[str, Any]) -> bool:
    """The first line of a Gemini CLI JSONL chat: its metadata (session id and project hash)."""
    return isinstance(first.get("sessionId"), str) and isinstance(first.get("projectHash"), str)


def is_gemini_document(doc: Mapping[str, Any]) -> bool:
    return (is_gemini_line(doc) and isinstance(doc.get("messages"), list)) or is_gemini_history(doc.get("history"))


def is_gemini_history(items: Any) -> bool:
    """A list of the Gemini API's `Content` (role user / model, `parts`): a `/chat save` checkpoint."""
    return isinstance(items, list) and bool(items) and all(
        isinstance(x, Mapping) and x.get("role") in ("user", "model") and isinstance(x.get("parts"), list) for x in items)


def _gemini_message(m: Mapping[str, Any], turns: list[Turn], log: Log, line: int | None) -> None:
    role = GEMINI_TYPES.get(str(m.get("type")))
    if role is None:  # info, error and warning are the CLI's own notes
        return
    time = m.get("timestamp") if isinstance(m.get("timestamp"), str) else None
    shown = m.get("displayContent") if role == "user" and m.get("displayContent") else m.get("content")
    texts = _texts(shown)
    text = _user(texts, log) if role == "user" else "\n".join(texts).strip()
    if text:
        add_turn(turns, Turn(role, text, time, line))
    for call in m.get("toolCalls") or ():
        if not isinstance(call, Mapping):
            continue
        name, call_id = str(call.get("name") or "tool"), call.get("id") if isinstance(call.get("id"), str) else None
        log.call(name, call.get("args"), call_id)
        add_turn(turns, Turn("assistant", _tool_text(name, str(call.get("description") or "")), time, line))
        if call.get("status") == "cancelled":
            continue  # the person turned it down: nothing broke
        result = call.get("result")
        parts = [result] if isinstance(result, Mapping) else result if isinstance(result, list) else []
        output = "\n".join(_response_text(r) for r in parts if isinstance(r, Mapping))
        failure = log.result(call_id, output, error=call.get("status") == "error")
        if failure:
            add_turn(turns, Turn("tool", f"[tool error: {failure}]", time, line))


def _response_text(part: Mapping[str, Any]) -> str:
    response = part.get("functionResponse")
    body = response.get("response") if isinstance(response, Mapping) else None
    if isinstance(body, Mapping):
        value = body.get("output", body.get("error", body.get("content", "")))
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return part["text"] if isinstance(part.get("text"), str) else ""


def _project_root(doc: Mapping[str, Any], messages: list[Mapping[str, Any]]) -> str | None:
    """The project folder of a chat: the folder of a path its tools touched whose SHA-256 is the chat's
    `projectHash` (Gemini CLI names a project by that hash), else its first workspace directory."""
    want = doc.get("projectHash")
    dirs = doc.get("directories")
    if isinstance(want, str):
        for m in messages:
            for call in m.get("toolCalls") or ():
                args = call.get("args") if isinstance(call, Mapping) else None
                for key in ("file_path", "absolute_path", "path", "dir_path"):
                    value = args.get(key) if isinstance(args, Mapping) else None
                    if isinstance(value, str) and value.startswith("/"):
                        parts = value.rstrip("/").split("/")
                        for n in range(len(parts) - 1, 1, -1):
                            root = "/".join(parts[:n])
                            if hashlib.sha256(root.encode()).hexdigest() == want:
                                return root
    return dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None


def _meta(doc: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if isinstance(doc.get("sessionId"), str):
        meta["session"] = doc["sessionId"]
    if isinstance(doc.get("summary"), str) and doc["summary"]:
        meta["summary"] = doc["summary"]
    if doc.get("kind") == "subagent":
        meta["subagent"] = "gemini"  # a subagent's own chat: folded into its parent session's record
    return meta


def from_gemini_document(doc: Mapping[str, Any], lines: Mapping[str, int] | None = None) -> Transcript:
    """A Gemini CLI chat written as one JSON document, or a checkpoint `{history: [...]}`; `lines` gives the line
    each message was read from (JSONL), else a message's number counts."""
    if is_gemini_history(doc.get("history")):
        return from_gemini_history(doc["history"])
    turns: list[Turn] = []
    log = Log()
    messages = [m for m in doc.get("messages") or () if isinstance(m, Mapping)]
    log.cwd = _project_root(doc, messages)
    for number, m in enumerate(messages, 1):
        _gemini_message(m, turns, log, number if lines is None else lines.get(str(m.get("id"))))
    meta = _meta(doc)
    if log.cwd:
        meta["cwd"] = log.cwd
    meta.update(first_request(turns))
    meta["messages"] = sum(m.get("type") in GEMINI_TYPES for m in messages)
    return Transcript(tuple(turns), "gemini", meta, 0, log.activity(), "message" if lines is None else "line")


def from_gemini_lines(events: Iterable[Mapping[str, Any]]) -> Transcript:
    """A Gemini CLI chat as JSONL, read as the CLI reads it: the metadata line, messages (one written again under
    its id replaces the first, in its place), `$set` updates and `$rewindTo` rewinds (to an id no longer there:
    every message)."""
    header: dict[str, Any] = {}
    messages: dict[str, Mapping[str, Any]] = {}
    lines: dict[str, int] = {}
    for event in events:
        if "$set" in event and isinstance(event["$set"], Mapping):
            header.update(event["$set"])
        elif "$rewindTo" in event:
            target = str(event["$rewindTo"])
            ids = list(messages)
            for gone in ids[ids.index(target):] if target in messages else ids:
                del messages[gone]  # the rewound-to message and what came after it are gone from the chat
        elif isinstance(event.get("id"), str) and "type" in event:
            if event["id"] not in messages:
                lines[event["id"]] = _line(event) or 0
            messages[event["id"]] = event
        elif is_gemini_line(event):
            header.update(event)
    kept = header.get("messages") if isinstance(header.get("messages"), list) and header["messages"] else list(messages.values())
    return from_gemini_document({**header, "messages": kept}, lines)


def from_gemini_history(items: list[Any]) -> Transcript:
    """A `/chat save` checkpoint: API contents; the CLI's setup message and its answer are not the conversation."""
    turns: list[Turn] = []
    log = Log()
    first = True
    skip_answer = False
    for number, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            continue
        role = "user" if item.get("role") == "user" else "assistant"
        parts = [p for p in item.get("parts") or () if isinstance(p, Mapping)]
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
        if first and role == "user" and texts and _GEMINI_SETUP.search(texts[0]):
            first, skip_answer = False, True
            continue
        first = False
        if skip_answer and role == "assistant":
            skip_answer = False
            continue
        skip_answer = False
        for p in parts:
            call = p.get("functionCall")
            if isinstance(call, Mapping):
                name = str(call.get("name") or "tool")
                log.call(name, call.get("args"), call.get("id") if isinstance(call.get("id"), str) else None)
                add_turn(turns, Turn("assistant", _tool_text(name, ""), None, number))
            if isinstance(p.get("functionResponse"), Mapping):
                response = p["functionResponse"]
                body = response.get("response")
                failed = isinstance(body, Mapping) and "error" in body
                line = log.result(response.get("id") if isinstance(response.get("id"), str) else None,
                                  _response_text(p), error=failed)
                if line:
                    add_turn(turns, Turn("tool", f"[tool error: {line}]", None, number))
        text = _user(texts, log) if role == "user" else "\n".join(texts).strip()
        if text:
            add_turn(turns, Turn(role, text, None, number))
    meta = {**first_request(turns), "messages": len(items)}
    return Transcript(tuple(turns), "gemini", meta, 0, log.activity(), "message")
