"""Embedding in bulk: batches on every CPU given (or the threads configured), a query on its caller's thread,
the same vectors either way."""

import os
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from memdir import model
from memdir.errors import InvalidArgument
from memdir.search.embed import THREADS_ENV, EmbeddingError, LocalEmbedder, cpus
from memdir.search.semantic import Settings
from memdir.search.vectors import VectorIndex

TURNS = [f"Turn {i}: " + " ".join(["we", "planted", "basil", "and", "fixed", "the", "bike", "chain"][: 3 + i % 6]) * (1 + i % 4)
         for i in range(40)]


def workers(emb: LocalEmbedder) -> int:
    """The bulk threads the embedder has started (named after it)."""
    return sum(t.name.startswith(f"memdir-embed-{id(emb):x}") for t in threading.enumerate())


def test_a_bulk_call_runs_on_every_cpu_given_and_a_query_on_the_callers_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    emb = LocalEmbedder(threads=0, batch=4)
    assert emb.threads == cpus() == len(os.sched_getaffinity(0))
    emb.embed(["what did we plant?", "the bike chain"])
    assert workers(emb) == 0  # a query leaves the other cores alone
    assert emb.session().get_session_options().intra_op_num_threads == 1
    emb.embed(TURNS)  # ten batches
    assert workers(emb) == (cpus() if cpus() > 1 else 0)  # one CPU: the caller's thread does it all
    emb.close()
    assert workers(emb) == 0


def test_the_threads_come_from_the_setting_else_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_ENV, "2")
    from_env = Settings().embedder_instance()
    from_setting = Settings.of({"threads": 3, "batch": 8}).embedder_instance()
    assert isinstance(from_env, LocalEmbedder) and isinstance(from_setting, LocalEmbedder)
    assert (from_env.threads, from_env.batch) == (2, 16)
    assert (from_setting.threads, from_setting.batch) == (3, 8)
    from_setting.embed(TURNS)
    assert workers(from_setting) == 3
    from_setting.close()
    monkeypatch.setenv(THREADS_ENV, "all")
    with pytest.raises(EmbeddingError, match=r"MEMDIR_EMBED_THREADS='all' is not a number of threads; give a positive"):
        LocalEmbedder()
    with pytest.raises(InvalidArgument, match=r"\[semantic\] batch = 0; use a positive number"):
        Settings.of({"batch": 0})


def vectors(path: Path) -> dict[bytes, np.ndarray]:
    with sqlite3.connect(path) as db:
        return {h: np.frombuffer(d, dtype=np.float32) for h, d in db.execute("SELECT hash, data FROM vector")}


def test_a_bulk_index_holds_the_vectors_a_file_by_file_index_holds(tmp_path: Path) -> None:
    files = [model.memory(f"talk/turn-{i}.md", text + "\n\n- and a list item " * (i % 2) + "\n", "v1", ())
             for i, text in enumerate(TURNS)]
    bulk = VectorIndex(LocalEmbedder(threads=2, batch=8), tmp_path / "bulk.sqlite3")
    bulk.update([(f.path, f) for f in files], 1)
    single = VectorIndex(LocalEmbedder(threads=1, batch=8), tmp_path / "single.sqlite3")
    for f in files:
        single.update([(f.path, f)], 1)
    assert workers(bulk.embedder) == 2  # type: ignore[arg-type]
    a, b = vectors(tmp_path / "bulk.sqlite3"), vectors(tmp_path / "single.sqlite3")
    assert len(a) == len(b) >= len(TURNS) and a.keys() == b.keys()
    assert max(float(np.abs(a[h] - b[h]).max()) for h in a) < 1e-5
