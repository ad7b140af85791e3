"""Scripted HTTP APIs on loopback: the fake sits at the HTTP boundary, the SDKs are real.

`LoopbackJSON` records every POST (path, headers, JSON body) so a test can
check exactly what a client sent, and answers what its subclass's `answer`
says. `ScriptedAPI` gives each POST the next scripted JSON reply (a model
API: the test checks, say, the tool results of the previous turn). `Refusing`
answers every POST with a 401 that echoes the key it refused.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class LoopbackJSON:
    """A JSON-over-HTTP server on a free 127.0.0.1 port, for the length of a `with` block."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"null")
                api.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                status, reply = api.answer(self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # looks for shutdown() every 10 ms (its default, 0.5 s, was most of a test's time)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def answer(self, path: str, body: Any) -> tuple[int, Any]:
        raise NotImplementedError

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class ScriptedAPI(LoopbackJSON):
    def __init__(self, replies: list[dict[str, Any]]) -> None:
        super().__init__()
        self.replies = list(replies)

    @property
    def url(self) -> str:
        return self.base

    def answer(self, path: str, body: Any) -> tuple[int, Any]:
        if self.replies:
            return 200, self.replies.pop(0)
        return 500, {"error": {"type": "api_error", "message": "the script has no more replies"}}


class Refusing(LoopbackJSON):
    """A model API that refuses the key and echoes it in the error's message (as some gateways do),
    in the Anthropic or the OpenAI error shape."""

    def __init__(self, key: str, provider: str) -> None:
        super().__init__()
        self.key, self.provider = key, provider

    def answer(self, path: str, body: Any) -> tuple[int, Any]:
        if self.provider == "anthropic":
            return 401, {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key: {self.key}"}}
        return 401, {"error": {"message": f"Incorrect API key provided: {self.key}.", "type": "invalid_request_error",
                               "param": None, "code": "invalid_api_key"}}
