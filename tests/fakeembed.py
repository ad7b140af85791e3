"""An OpenAI-compatible embeddings server on loopback, answering with memdir.testing.FakeEmbedder vectors.

It speaks the wire format Ollama, vLLM and llama.cpp's server share
(`POST /v1/embeddings` with `{"model", "input": [...]}`, answer
`{"data": [{"index", "embedding"}], "model"}`) and records every request, so a
test can check what left the process. `status` makes it refuse requests.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from memdir.testing import FakeEmbedder


class EmbeddingsAPI:
    def __init__(self, dim: int = 32) -> None:
        self.fake = FakeEmbedder(dim)
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.reply: Any = None  # a fixed JSON answer instead of vectors
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"null")
                api.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                if api.status != 200:
                    status, reply = api.status, {"error": {"message": "invalid api key", "type": "invalid_request_error"}}
                elif api.reply is not None:
                    status, reply = 200, api.reply
                elif self.path != "/v1/embeddings":
                    status, reply = 404, {"error": {"message": f"no route {self.path}"}}
                else:
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    vectors = api.fake.embed(texts)
                    # Answer in reverse order: clients must sort by index.
                    data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in vectors[i]]}
                            for i in reversed(range(len(texts)))]
                    status, reply = 200, {"object": "list", "data": data, "model": body["model"],
                                          "usage": {"prompt_tokens": 0, "total_tokens": 0}}
                out = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def inputs(self) -> list[str]:
        """Every text sent to the server, in order."""
        return [t for r in self.requests for t in r["body"]["input"]]

    def __enter__(self) -> EmbeddingsAPI:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
