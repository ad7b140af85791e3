"""Embedding in bulk: every CPU given (or the configured threads), a query on one, the same vectors either way."""

import os
import sqlite3
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


def intra_op(session: object) -> int:
    return int(session.get_session_options().intra_op_num_threads)  # type: ignore[attr-defined]


def test_a_bulk_call_runs_on_every_cpu_given_and_a_query_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    emb = LocalEmbedder()
    assert emb.threads == cpus() == len(os.sched_getaffinity(0))
    emb.embed(["what did we plant?"])
    assert {t: intra_op(s) for t, s in emb.sessions().items()} == {1: 1}  # a query leaves the other cores alone
    emb.embed(TURNS)  # more than one batch: the bulk session
    assert {t: intra_op(s) for t, s in emb.sessions().items()} == {1: 1, cpus(): cpus()}


def test_the_threads_come_from_the_setting_else_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_ENV, "2")
    from_env = Settings().embedder_instance()
    from_setting = Settings.of({"threads": 3, "batch": 8}).embedder_instance()
    assert isinstance(from_env, LocalEmbedder) and isinstance(from_setting, LocalEmbedder)
    assert (from_env.threads, from_env.batch) == (2, 16)
    assert (from_setting.threads, from_setting.batch) == (3, 8)
    from_setting.embed(TURNS)
    assert intra_op(from_setting.sessions()[3]) == 3
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
    single = VectorIndex(LocalEmbedder(threads=2, batch=8), tmp_path / "single.sqlite3")
    for f in files:
        single.update([(f.path, f)], 1)
    # The bulk index ran on two threads only; file by file, the turns ran on the query session's one
    # (its calibration, measured once with the first vectors, is a bulk call).
    assert set(bulk.embedder.sessions()) == {2} and 1 in single.embedder.sessions()  # type: ignore[attr-defined]
    a, b = vectors(tmp_path / "bulk.sqlite3"), vectors(tmp_path / "single.sqlite3")
    assert len(a) == len(b) >= len(TURNS) and a.keys() == b.keys()
    assert max(float(np.abs(a[h] - b[h]).max()) for h in a) < 1e-5
