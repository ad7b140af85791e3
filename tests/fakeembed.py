"""An OpenAI-compatible embeddings server on loopback, answering with memdir.testing.FakeEmbedder vectors.

It speaks the wire format Ollama, vLLM and llama.cpp's server share
(`POST /v1/embeddings` with `{"model", "input": [...]}`, answer
`{"data": [{"index", "embedding"}], "model"}`) and records every request, so a
test can check what left the process. `status` makes it refuse requests.
"""

from __future__ import annotations

from typing import Any

from fakeapi import LoopbackJSON

from memdir.testing import FakeEmbedder


class EmbeddingsAPI(LoopbackJSON):
    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.fake = FakeEmbedder(dim)
        self.status = 200
        self.reply: Any = None  # a fixed JSON answer instead of vectors

    @property
    def url(self) -> str:
        return self.base + "/v1"

    def answer(self, path: str, body: Any) -> tuple[int, Any]:
        if self.status != 200:
            return self.status, {"error": {"message": "invalid api key", "type": "invalid_request_error"}}
        if self.reply is not None:
            return 200, self.reply
        if path != "/v1/embeddings":
            return 404, {"error": {"message": f"no route {path}"}}
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = self.fake.embed(texts)
        # Answer in reverse order: clients must sort by index.
        data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in vectors[i]]}
                for i in reversed(range(len(texts)))]
        return 200, {"object": "list", "data": data, "model": body["model"],
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}

    def inputs(self) -> list[str]:
        """Every text sent to the server, in order."""
        return [t for r in self.requests for t in r["body"]["input"]]
