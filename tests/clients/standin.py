"""Scripted stand-ins for the Anthropic Messages API, the OpenAI Responses API and the Gemini API on loopback.

Written from the APIs' own documentation: a request with `"stream": true` is
answered with server-sent events in the documented order (Anthropic:
message_start, content_block_start / _delta / _stop per block, message_delta,
message_stop; OpenAI Responses: response.created, response.output_item.added,
the text or arguments deltas, response.output_item.done, response.completed),
one without it with the whole JSON message. Gemini's `models/M:streamGenerateContent?alt=sse`
is answered with `GenerateContentResponse` chunks as server-sent events (a text in two
chunks, a `functionCall` whole, the `finishReason` and `usageMetadata` last), its
`:generateContent` with one, `:countTokens` with a count. What the model says is the test's
`Script`: a function of the request's conversation that returns the next turn's
blocks, so a test drives a real CLI through tool calls and checks what each
tool result handed the model. Every request is recorded.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

_ids = itertools.count(1)


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Call:
    """A tool call; `name` is matched against the offered tools by its end (`write_memory_file` finds
    `mcp__memdir__write_memory_file` in Claude Code and `memdir__write_memory_file` in Codex)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


Turn = list[Text | Call]
Script = Callable[["Request"], Turn]


@dataclass
class Request:
    """One model request as the stand-in read it: the API, the body, and its conversation flattened."""

    api: str  # "anthropic", "openai" or "gemini"
    path: str
    body: dict[str, Any]

    @property
    def tools(self) -> list[str]:
        out = []
        for t in self.body.get("tools") or []:
            out += [str(f.get("name")) for f in t.get("functionDeclarations") or []]  # Gemini's
            name = t.get("name") or (t.get("function") or {}).get("name")
            if t.get("type") == "namespace":  # OpenAI's tool namespaces (Codex puts an MCP server's tools in one)
                out += [f"{name}.{x.get('name')}" for x in t.get("tools") or []]
            elif isinstance(name, str):
                out.append(name)
        return out

    def tool(self, suffix: str) -> str | None:
        found = [t for t in self.tools if t == suffix or t.endswith(("__" + suffix, "." + suffix, "_" + suffix))]
        return min(found, key=len) if found else None

    @property
    def system(self) -> str:
        if self.api == "anthropic":
            s = self.body.get("system")
            return s if isinstance(s, str) else "\n".join(b.get("text", "") for b in s or [] if isinstance(b, dict))
        if self.api == "gemini":
            return "\n".join(p.get("text", "") for p in (self.body.get("systemInstruction") or {}).get("parts") or [])
        return str(self.body.get("instructions") or "")

    def texts(self) -> list[str]:
        """Every text the conversation holds (user turns, hook context, tool results), in order."""
        out: list[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, list):
                for v in value:
                    walk(v)
            elif isinstance(value, dict):
                for key in ("text", "content", "output", "parts", "functionResponse", "response"):
                    if key in value:
                        walk(value[key])

        walk(self.body.get({"anthropic": "messages", "openai": "input", "gemini": "contents"}[self.api]))
        return out

    def conversation(self) -> str:
        return "\n".join(self.texts())

    def tool_results(self) -> list[str]:
        """The tool results the model was handed, as text, in order."""
        out: list[str] = []
        if self.api == "anthropic":
            for m in self.body.get("messages") or []:
                for b in m.get("content") if isinstance(m.get("content"), list) else []:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        c = b.get("content")
                        out.append(c if isinstance(c, str) else "\n".join(
                            x.get("text", "") for x in c or [] if isinstance(x, dict)))
        elif self.api == "gemini":
            for content in self.body.get("contents") or []:
                for part in content.get("parts") or []:
                    if isinstance(part, dict) and "functionResponse" in part:
                        out.append(json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
        else:
            for item in self.body.get("input") or []:
                if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                    o = item.get("output")
                    out.append(o if isinstance(o, str) else json.dumps(o))
        return out

    @property
    def last_is_tool_result(self) -> bool:
        if self.api == "anthropic":
            msgs = self.body.get("messages") or []
            last = msgs[-1] if msgs else {}
            c = last.get("content")
            return isinstance(c, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c)
        if self.api == "gemini":
            contents = self.body.get("contents") or [{}]
            return any("functionResponse" in p for p in contents[-1].get("parts") or [] if isinstance(p, dict))
        items = self.body.get("input") or []
        return bool(items) and isinstance(items[-1], dict) and items[-1].get("type", "").endswith("_output")


class StandIn:
    """The three APIs on one free 127.0.0.1 port for the length of a `with` block: `/v1/messages` (Anthropic),
    `/v1/responses` (OpenAI) and `/v1beta/models/M:…GenerateContent` (Gemini). A request without tools (a client's side call: a title, a summary) gets
    `side`'s text; one with tools gets `script(request)`."""

    def __init__(self, script: Script, side: str = "ok") -> None:
        self.script, self.side = script, side
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                path = self.path.split("?")[0]
                if path.endswith("/messages/count_tokens"):
                    return self._json(200, {"input_tokens": 100})
                if path.endswith(":countTokens"):
                    return self._json(200, {"totalTokens": 100})
                if path.endswith(("GenerateContent", ":generateContent")):
                    request = Request("gemini", path, body)
                    with api.lock:
                        api.requests.append(request)
                    chunks = _gemini_chunks(body, api.turn(request))
                    if path.endswith(":streamGenerateContent"):
                        return self._events(chunks, named=False)
                    return self._json(200, _gemini_whole(chunks))
                if path.endswith("/messages"):
                    request = Request("anthropic", path, body)
                elif path.endswith("/responses"):
                    request = Request("openai", path, body)
                else:
                    return self._json(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})
                with api.lock:
                    api.requests.append(request)
                turn = api.turn(request)
                if request.api == "anthropic":
                    if body.get("stream"):
                        return self._events(_anthropic_events(body, turn), named=True)
                    return self._json(200, _anthropic_message(body, turn))
                if body.get("stream", False):
                    return self._events(_openai_events(body, turn), named=True)
                return self._json(200, _openai_response(body, turn))

            def _json(self, status: int, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _events(self, events: list[dict[str, Any]], named: bool) -> None:
                data = b"".join(
                    (f"event: {e['type']}\n" if named else "").encode() + b"data: " + json.dumps(e).encode() + b"\n\n"
                    for e in events)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # looks for shutdown() every 10 ms (its default, 0.5 s, was most of a test's time)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def turn(self, request: Request) -> Turn:
        if not request.tools:
            return [Text(self.side)]
        try:
            return self.script(request)
        except Exception as e:  # noqa: BLE001 - the test reads it in the transcript, the client goes on
            return [Text(f"the stand-in's script failed: {type(e).__name__}: {e}")]

    def main(self) -> list[Request]:
        """The requests that offered tools: the conversation's own turns, not the client's side calls."""
        return [r for r in self.requests if r.tools]

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def _resolve(request_tools: Callable[[str], str | None], turn: Turn) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for block in turn:
        if isinstance(block, Call):
            out.append(("call", (request_tools(block.name) or block.name, block.arguments, f"call_{next(_ids)}")))
        else:
            out.append(("text", block.text))
    return out


def _anthropic_blocks(body: dict[str, Any], turn: Turn) -> list[dict[str, Any]]:
    request = Request("anthropic", "", body)
    blocks: list[dict[str, Any]] = []
    for kind, value in _resolve(request.tool, turn):
        if kind == "text":
            blocks.append({"type": "text", "text": value})
        else:
            name, args, ident = value
            blocks.append({"type": "tool_use", "id": "toolu_" + ident, "name": name, "input": args})
    return blocks


def _usage() -> dict[str, int]:
    return {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _anthropic_message(body: dict[str, Any], turn: Turn) -> dict[str, Any]:
    blocks = _anthropic_blocks(body, turn)
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {"id": f"msg_{next(_ids)}", "type": "message", "role": "assistant", "model": body.get("model", "stand-in"),
            "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": _usage()}


def _anthropic_events(body: dict[str, Any], turn: Turn) -> list[dict[str, Any]]:
    whole = _anthropic_message(body, turn)
    start = {**whole, "content": [], "stop_reason": None, "usage": {**_usage(), "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}, {"type": "ping"}]
    for i, b in enumerate(whole["content"]):
        if b["type"] == "text":
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            text = b["text"]
            for part in (text[: len(text) // 2], text[len(text) // 2 :]):  # two deltas: the client must join them
                if part:
                    events.append({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": part}})
        else:
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
            args = json.dumps(b["input"])
            for part in (args[: len(args) // 2], args[len(args) // 2 :]):
                events.append({"type": "content_block_delta", "index": i,
                               "delta": {"type": "input_json_delta", "partial_json": part}})
        events.append({"type": "content_block_stop", "index": i})
    events.append({"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                   "usage": {"output_tokens": 20}})
    events.append({"type": "message_stop"})
    return events


def _openai_items(body: dict[str, Any], turn: Turn) -> list[dict[str, Any]]:
    request = Request("openai", "", body)
    items: list[dict[str, Any]] = []
    for kind, value in _resolve(request.tool, turn):
        if kind == "text":
            items.append({"type": "message", "id": f"msg_{next(_ids)}", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": value, "annotations": []}]})
        else:
            name, args, ident = value
            space, _, name = name.rpartition(".")
            items.append({"type": "function_call", "id": f"fc_{ident}", "call_id": ident, "name": name,
                          **({"namespace": space} if space else {}), "arguments": json.dumps(args), "status": "completed"})
    return items


def _openai_response(body: dict[str, Any], turn: Turn, status: str = "completed") -> dict[str, Any]:
    return {"id": f"resp_{next(_ids)}", "object": "response", "created_at": 1_700_000_000, "status": status,
            "model": body.get("model", "stand-in"), "output": _openai_items(body, turn) if status == "completed" else [],
            "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def _openai_events(body: dict[str, Any], turn: Turn) -> list[dict[str, Any]]:
    whole = _openai_response(body, turn)
    seq = itertools.count()
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**whole, "status": "in_progress", "output": []}},
        {"type": "response.in_progress", "response": {**whole, "status": "in_progress", "output": []}},
    ]
    for i, item in enumerate(whole["output"]):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append({"type": "response.output_item.added", "output_index": i,
                           "item": {**item, "status": "in_progress", "content": []}})
            events.append({"type": "response.content_part.added", "output_index": i, "item_id": item["id"],
                           "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})
            for part in (text[: len(text) // 2], text[len(text) // 2 :]):
                if part:
                    events.append({"type": "response.output_text.delta", "output_index": i, "item_id": item["id"],
                                   "content_index": 0, "delta": part})
            events.append({"type": "response.output_text.done", "output_index": i, "item_id": item["id"],
                           "content_index": 0, "text": text})
            events.append({"type": "response.content_part.done", "output_index": i, "item_id": item["id"],
                           "content_index": 0, "part": item["content"][0]})
        else:
            events.append({"type": "response.output_item.added", "output_index": i,
                           "item": {**item, "status": "in_progress", "arguments": ""}})
            events.append({"type": "response.function_call_arguments.delta", "output_index": i, "item_id": item["id"],
                           "delta": item["arguments"]})
            events.append({"type": "response.function_call_arguments.done", "output_index": i, "item_id": item["id"],
                           "arguments": item["arguments"]})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    events.append({"type": "response.completed", "response": whole})
    for e in events:
        e["sequence_number"] = next(seq)
    return events


def _gemini_chunks(body: dict[str, Any], turn: Turn) -> list[dict[str, Any]]:
    """The turn as the streamed GenerateContentResponse chunks: a text in two, a function call whole, the finish
    reason and the token counts on the last."""
    request = Request("gemini", "", body)
    parts: list[dict[str, Any]] = []
    for kind, value in _resolve(request.tool, turn):
        if kind == "text":
            parts += [{"text": half} for half in (value[: len(value) // 2], value[len(value) // 2 :]) if half]
        else:
            name, args, _ = value
            parts.append({"functionCall": {"name": name, "args": args}})
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}], "modelVersion": "stand-in"}
              for part in parts or [{"text": ""}]]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["usageMetadata"] = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
    return chunks


def _gemini_whole(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    return {**chunks[-1], "candidates": [{**chunks[-1]["candidates"][0], "content": {"role": "model", "parts": parts}}]}
