"""Other coding agents' session files: Codex CLI's rollout JSONL and Gemini CLI's chats and checkpoints.

Codex (openai/codex, `codex-rs`): `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`,
one `{timestamp, type, payload}` a line. `session_meta` names the session, its
folder and git branch; `response_item` payloads are what the model saw:
`message` (user, assistant, developer), `function_call` / `function_call_output`
and `custom_tool_call` / `custom_tool_call_output` paired by `call_id`,
`reasoning` (dropped, like thinking). The `event_msg` lines repeat the same
conversation for the UI and are skipped, so nothing is counted twice.

Gemini CLI (google-gemini/gemini-cli, `chatRecordingService`): a
`ConversationRecord` (`sessionId`, `messages` of type user / gemini / info /
error / warning, a gemini message's `toolCalls` with `status` and `result`),
written as one JSON document or, newer, as JSONL (a metadata line, a line per
message, `{"$set": …}` updates and `{"$rewindTo": id}`, which drops that
message and what follows it); and `/chat save` checkpoints, the API's
`Content` list (`role` user / model, `parts` of text, functionCall,
functionResponse), bare or under `history`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .activity import Log, bash_inputs, strip_markup
from .turns import Transcript, Turn, add_turn

CODEX = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
GEMINI_TYPES = {"user": "user", "gemini": "assistant"}
_GEMINI_SETUP = re.compile(r"gemini cli", re.IGNORECASE)


def _request(turns: Iterable[Turn]) -> dict[str, Any]:
    for t in turns:
        if t.role == "user" and t.text.strip() and not t.text.startswith("[tool "):
            return {"request": t.text.strip()}
    return {}


def _texts(content: Any, *keys: str) -> list[str]:
    """The text parts of a content list (or the string itself)."""
    if isinstance(content, str):
        return [content]
    out = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, Mapping):
            kind = part.get("type")
            if isinstance(part.get("text"), str) and (kind is None or kind in keys):
                out.append(part["text"])
            elif kind in ("input_image", "image") or "inlineData" in part:
                out.append("[image]")
    return out


def _user(texts: list[str], log: Log) -> str:
    for text in texts:
        for command in bash_inputs(text):
            log.command(command)
    return "\n".join(x for x in (strip_markup(t) for t in texts) if x).strip()


def _tool_text(name: str, what: str) -> str:
    shown = " ".join(what.split())[:160]
    return f"[tool {name}: {shown}]" if shown else f"[tool {name}]"


# ---------------------------------------------------------------- Codex


def is_codex(first: Mapping[str, Any]) -> bool:
    return first.get("type") in CODEX and isinstance(first.get("payload"), Mapping)


def _codex_output(raw: Any) -> tuple[str, bool]:
    """A Codex tool output: (its text, whether it failed). Older outputs are JSON strings with `metadata.exit_code`;
    newer ones are text starting "Exit code: N"."""
    if isinstance(raw, Mapping):
        raw = raw.get("content") if isinstance(raw.get("content"), str) else json.dumps(raw)
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


def from_codex(events: Iterable[Mapping[str, Any]]) -> Transcript:
    turns: list[Turn] = []
    meta: dict[str, Any] = {}
    log = Log()
    for event in events:
        payload = event.get("payload")
        if not isinstance(payload, Mapping):
            continue
        time = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
        etype = event.get("type")
        if etype == "session_meta":
            git: Mapping[str, Any] = payload["git"] if isinstance(payload.get("git"), Mapping) else {}
            for key, value in (("session", payload.get("id")), ("cwd", payload.get("cwd")), ("branch", git.get("branch"))):
                if isinstance(value, str) and value:
                    meta.setdefault(key, value)
            log.cwd = meta.get("cwd")
            continue
        if etype != "response_item":
            continue
        kind = payload.get("type")
        if kind == "message":
            role = payload.get("role")
            if role == "user":
                text = _user(_texts(payload.get("content"), "input_text"), log)
                if text:
                    add_turn(turns, Turn("user", text, time))
            elif role == "assistant":
                text = "\n".join(_texts(payload.get("content"), "output_text")).strip()
                if text:
                    add_turn(turns, Turn("assistant", text, time))
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
            add_turn(turns, Turn("assistant", _tool_text(name, what if what != name else ""), time))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output, failed = _codex_output(payload.get("output"))
            call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
            line = log.result(call_id, output, error=failed)
            if line:
                add_turn(turns, Turn("tool", f"[tool error: {line}]", time))
    meta.update(_request(turns))
    return Transcript(tuple(turns), "codex", meta, 0, log.activity())


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


def _gemini_message(m: Mapping[str, Any], turns: list[Turn], log: Log) -> None:
    role = GEMINI_TYPES.get(str(m.get("type")))
    if role is None:  # info, error and warning are the CLI's own notes
        return
    time = m.get("timestamp") if isinstance(m.get("timestamp"), str) else None
    texts = _texts(m.get("content"))
    text = _user(texts, log) if role == "user" else "\n".join(texts).strip()
    if text:
        add_turn(turns, Turn(role, text, time))
    for call in m.get("toolCalls") or ():
        if not isinstance(call, Mapping):
            continue
        name, call_id = str(call.get("name") or "tool"), call.get("id") if isinstance(call.get("id"), str) else None
        log.call(name, call.get("args"), call_id)
        add_turn(turns, Turn("assistant", _tool_text(name, str(call.get("description") or "")), time))
        output = "\n".join(_response_text(r) for r in call.get("result") or () if isinstance(r, Mapping))
        line = log.result(call_id, output, error=call.get("status") == "error")
        if line:
            add_turn(turns, Turn("tool", f"[tool error: {line}]", time))


def _response_text(part: Mapping[str, Any]) -> str:
    response = part.get("functionResponse")
    body = response.get("response") if isinstance(response, Mapping) else None
    if isinstance(body, Mapping):
        value = body.get("output", body.get("error", ""))
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def _meta(doc: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if isinstance(doc.get("sessionId"), str):
        meta["session"] = doc["sessionId"]
    if isinstance(doc.get("summary"), str) and doc["summary"]:
        meta["summary"] = doc["summary"]
    return meta


def from_gemini_document(doc: Mapping[str, Any]) -> Transcript:
    """A Gemini CLI chat written as one JSON document, or a checkpoint `{history: [...]}`."""
    if is_gemini_history(doc.get("history")):
        return from_gemini_history(doc["history"])
    turns: list[Turn] = []
    log = Log()
    for m in doc.get("messages") or ():
        if isinstance(m, Mapping):
            _gemini_message(m, turns, log)
    meta = _meta(doc)
    meta.update(_request(turns))
    return Transcript(tuple(turns), "gemini", meta, 0, log.activity())


def from_gemini_lines(events: Iterable[Mapping[str, Any]]) -> Transcript:
    """A Gemini CLI chat as JSONL: the metadata line, messages, `$set` updates and `$rewindTo` rewinds."""
    header: dict[str, Any] = {}
    messages: list[Mapping[str, Any]] = []
    for event in events:
        if "$set" in event and isinstance(event["$set"], Mapping):
            header.update(event["$set"])
        elif "$rewindTo" in event:
            target = event["$rewindTo"]
            at = next((i for i, m in enumerate(messages) if m.get("id") == target), None)
            if at is not None:
                del messages[at:]  # the rewound-to message and what came after it are gone from the chat
        elif "type" in event and "id" in event:
            messages.append(event)
        elif is_gemini_line(event):
            header.update(event)
    return from_gemini_document({**header, "messages": messages})


def from_gemini_history(items: list[Any]) -> Transcript:
    """A `/chat save` checkpoint: API contents; the CLI's setup message and its answer are not the conversation."""
    turns: list[Turn] = []
    log = Log()
    first = True
    skip_answer = False
    for item in items:
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
                add_turn(turns, Turn("assistant", _tool_text(name, ""), None))
            if isinstance(p.get("functionResponse"), Mapping):
                response = p["functionResponse"]
                body = response.get("response")
                failed = isinstance(body, Mapping) and "error" in body
                line = log.result(response.get("id") if isinstance(response.get("id"), str) else None,
                                  _response_text(p), error=failed)
                if line:
                    add_turn(turns, Turn("tool", f"[tool error: {line}]", None))
        text = _user(texts, log) if role == "user" else "\n".join(texts).strip()
        if text:
            add_turn(turns, Turn(role, text, None))
    return Transcript(tuple(turns), "gemini", _request(turns), 0, log.activity())
