"""Helpers for testing agents and tools built on memdir.

`FakeEmbedder` stands in for a real embedding model: deterministic, instant,
no download. Texts that share words get similar vectors (each word is hashed
to a few signed dimensions), so semantic and hybrid search behave sensibly in
tests, and it records every text it embedded so a test can check what was
(re-)embedded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from .search.embed import Vectors, normalise, numpy_module

__all__ = ["FakeEmbedder"]

_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """A deterministic bag-of-words embedder: `embed(["red apple"])` always gives the same vector."""

    def __init__(self, dim: int = 64, model: str | None = None) -> None:
        self.dim = dim
        self.model = model or f"fake-{dim}"
        self.texts: list[str] = []  # every text embedded, in order

    def embed(self, texts: Sequence[str]) -> Vectors:
        np = numpy_module()
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word[:6].encode(), digest_size=8).digest()
                for i in range(0, 6, 2):
                    out[row, int.from_bytes(digest[i : i + 2], "big") % self.dim] += 1.0 if digest[6] & (1 << i) else -1.0
        return normalise(out)
