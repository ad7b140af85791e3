"""Derived work after the write: a deferring memory (as servers run) answers once committed, and its
MEMORY.md files and search rows come out exactly as if every write had brought them along itself."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import Backend

import memdir
from memdir.deferred import Flusher
from memdir.paths import INDEX_NAME

NOTE = "---\nname: {name}\ndescription: about {name}\ntype: project\n---\nThe {word} fact about {name}.\n"


def note(name: str, word: str = "plain") -> str:
    return NOTE.format(name=name, word=word)


def index_files(md: memdir.Memdir) -> dict[str, bytes]:
    """Every MEMORY.md the store holds: the root's and each folder's."""
    folders = {""} | {p[: p.rindex("/") + 1] for p, _ in md.store.list() if "/" in p}
    folders |= {f[: i + 1] for f in list(folders) for i in range(len(f)) if f[i] == "/"}
    out = {}
    for f in sorted(folders):
        blob = md.store.get(f + INDEX_NAME)
        if blob is not None:
            out[f + INDEX_NAME] = blob.data
    return out


def rebuilt(backend: Backend) -> dict[str, bytes]:
    """The index files a full rebuild from the files writes (what every write should have left)."""
    with backend.open(writes_per_minute=0) as fresh:
        fresh.reconcile(fix=True)
        return index_files(fresh)


def wait_for(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.005)
    return check()


# ---------------------------------------------------------------- the flusher's clock


def test_flusher_runs_once_the_writes_pause() -> None:
    calls: list[float] = []
    flusher = Flusher(lambda: calls.append(time.monotonic()), quiet=0.05, most=10)
    try:
        start = time.monotonic()
        for _ in range(5):
            flusher.poke()
            time.sleep(0.01)
        assert wait_for(lambda: len(calls) == 1)
        assert calls[0] - start >= 0.05 + 0.04  # after the last poke, not the first
        time.sleep(0.15)
        assert len(calls) == 1  # nothing new was poked: no second flush
    finally:
        flusher.close()


def test_flusher_runs_within_most_of_a_steady_stream() -> None:
    calls: list[float] = []
    flusher = Flusher(lambda: calls.append(time.monotonic()), quiet=0.05, most=0.1)
    try:
        start = time.monotonic()
        while time.monotonic() - start < 0.5:  # never quiet for 0.05 s
            flusher.poke()
            time.sleep(0.005)
        assert len(calls) >= 3
        assert calls[0] - start < 0.1 + 0.09
    finally:
        flusher.close()


def test_flusher_survives_a_failing_flush_and_stops_on_close() -> None:
    calls: list[int] = []

    def flush() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")

    flusher = Flusher(flush, quiet=0.01, most=1)
    flusher.poke()
    assert wait_for(lambda: len(calls) == 1)
    flusher.poke()
    assert wait_for(lambda: len(calls) == 2)  # the thread lived on
    flusher.close()
    flusher.poke()
    time.sleep(0.1)
    assert len(calls) == 2
    assert not any(t.name == "memdir-derive" and t.is_alive() for t in threading.enumerate() if t is flusher._thread)


# ---------------------------------------------------------------- a deferring memory


def test_writes_leave_the_index_to_the_thread_which_brings_it_along(backend: Backend) -> None:
    with backend.open(writes_per_minute=0) as md:
        md.defer_derived(quiet=0.02, most=1)
        for i in range(20):
            md.write(f"notes/n{i}.md", note(f"n{i}"))
        seq = md.history(limit=1)[0].seq
        assert wait_for(lambda: md.store.derived() == seq)  # without any read asking for it
        assert md.store.get(INDEX_NAME) is not None
        files = index_files(md)
    assert files == rebuilt(backend)


def test_index_and_search_in_the_same_process_are_current_at_once(backend: Backend) -> None:
    with backend.open(writes_per_minute=0) as md:
        md.defer_derived(quiet=60, most=60)  # the thread never comes: reads must bring it along
        md.write("people/ada.md", note("ada", "zebra"))
        md.write("people/bob.md", note("bob"))
        md.rename("people/bob.md", "people/robert.md")
        md.delete("people/ada.md")
        md.write("people/cy.md", note("cy", "zebra"))
        assert [h.path for h in md.search("zebra")][0] == "people/cy.md"
        text = md.index()
        assert "robert" in text or "people/" in text
        assert md.store.get(INDEX_NAME).data.decode() == text  # type: ignore[union-attr]
        assert index_files(md) == rebuilt(backend)


def test_a_process_that_dies_with_work_deferred_loses_nothing(backend: Backend) -> None:
    md = backend.open(writes_per_minute=0)
    md.defer_derived(quiet=60, most=60)
    for i in range(8):
        md.write(f"log/d{i}.md", note(f"d{i}", "quokka" if i == 5 else "plain"))
    # No flush and no close: as if the server were killed. Another process opens the memory.
    with backend.open(writes_per_minute=0) as other:
        assert [h.path for h in other.search("quokka")][0] == "log/d5.md"
        assert "log/" in other.index()
        files = index_files(other)
    assert files == rebuilt(backend)
    md.close()  # the late flush finds the work done by the other process and changes nothing
    with backend.open(writes_per_minute=0) as after:
        assert index_files(after) == files
        assert [h.path for h in after.search("quokka")][0] == "log/d5.md"


def test_a_deferring_writer_beside_a_plain_one_ends_as_a_rebuild(backend: Backend) -> None:
    rng = random.Random(7)
    deferring = backend.open(writes_per_minute=0).defer_derived(quiet=60, most=60)
    plain = backend.open(writes_per_minute=0)
    try:
        names = [f"{folder}/{n}.md" for folder in ("a", "b", "b/c") for n in ("x", "y", "z")]
        for step in range(60):
            md = deferring if rng.random() < 0.6 else plain
            path = rng.choice(names)
            exists = md.store.get(path) is not None
            kind = rng.random()
            if exists and kind < 0.2:
                md.delete(path)
            elif exists and kind < 0.35:
                dest = rng.choice(names)
                if md.store.get(dest) is None:
                    md.rename(path, dest)
            else:
                md.write(path, note(path.replace("/", "-")[:-3], f"w{step}"))
            if step % 17 == 0:
                deferring.flush()
        deferring.flush()
        assert index_files(deferring) == rebuilt(backend)
        queries = [f"w{step}" for step in range(60)] + [p.replace("/", "-")[:-3] for p in names]
        found = [[(h.path, h.line) for h in deferring.search(q)] for q in queries]
        with backend.open(writes_per_minute=0) as fresh:
            fresh.reindex()  # the search index rebuilt from the files
            assert [[(h.path, h.line) for h in fresh.search(q)] for q in queries] == found
    finally:
        deferring.close()
        plain.close()


def test_a_scoped_view_of_a_deferring_memory_flushes_the_whole_memory(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "m", writes_per_minute=0) as md:
        md.defer_derived(quiet=60, most=60)
        view = md.scope(read=["team/"], write=["team/"])
        view.write("team/plan.md", note("plan"))
        md.write("private/diary.md", note("diary"))
        assert "private/" not in view.index()
        assert "private/" in (tmp_path / "m" / INDEX_NAME).read_text()  # the file on disk is the whole memory's
        assert "team/" in (tmp_path / "m" / INDEX_NAME).read_text()


def test_servers_defer(tmp_path: Path) -> None:
    from memdir.auth import Memories, Principal

    memories = Memories(tmp_path / "m", transport="test", watch=False)
    try:
        md = memories.of(Principal("default"))
        assert md._state.flusher is not None
        md.write("a.md", note("a"))
    finally:
        memories.close()
    assert "[a](a.md)" in (tmp_path / "m" / INDEX_NAME).read_text()  # close brought it along


@pytest.mark.parametrize("count", [1, 50])
def test_close_flushes(tmp_path: Path, count: int) -> None:
    md = memdir.open(tmp_path / "m", writes_per_minute=0).defer_derived(quiet=60, most=60)
    for i in range(count):
        md.write(f"f/n{i}.md", note(f"n{i}"))
    md.close()
    shown = "".join(p.read_text() for p in (tmp_path / "m").rglob(INDEX_NAME))
    assert f"[n{count - 1}](" in shown


def test_a_reader_that_brings_the_files_along_in_between_leaves_no_gap(backend: Backend) -> None:
    """Another process derives this one's deferred change, then this one writes again: its next flush
    must not patch its own older rendering with only the newest change."""
    with backend.open(writes_per_minute=0) as md:
        md.defer_derived(quiet=60, most=60)
        for i in range(30):
            md.write(f"box/n{i:02}.md", note(f"n{i:02}"))
        md.flush()
        for round_ in range(3):
            md.write(f"box/r{round_}.md", note(f"r{round_}"))
            md.rename(f"box/n{round_:02}.md", f"box/m{round_:02}.md")
            with backend.open(writes_per_minute=0) as reader:
                reader.list()  # loads the catalog, and brings the lagging index files along
            md.write(f"box/s{round_}.md", note(f"s{round_}"))
            md.flush()
            assert index_files(md) == rebuilt(backend)


def test_two_deferring_servers_and_a_plain_writer_at_once_end_as_a_rebuild(tmp_path: Path) -> None:
    """Flusher threads running for real (a 1 ms pause), writers on their own threads: the files and
    search end as if every write had brought them along."""
    backend = Backend("fs", str(tmp_path / "memory"), "t")
    servers = [backend.open(writes_per_minute=0).defer_derived(quiet=0.001, most=0.01) for _ in range(2)]
    plain = backend.open(writes_per_minute=0)
    failures: list[BaseException] = []

    def work(md: memdir.Memdir, seed: int) -> None:
        rng = random.Random(seed)
        try:
            for step in range(40):
                path = f"{rng.choice(['a', 'b', 'b/c'])}/{rng.choice('xyz')}{seed}.md"
                if md.store.get(path) is not None and rng.random() < 0.25:
                    md.delete(path)
                else:
                    md.write(path, note(f"n{seed}-{step}", f"w{seed}x{step}"))
                if step % 13 == 0:
                    md.search(f"w{seed}x{step}")  # a search in between opens the index: rows ride along after
        except BaseException as e:  # pragma: no cover - reported below
            failures.append(e)

    threads = [threading.Thread(target=work, args=(md, i)) for i, md in enumerate([*servers, plain])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    for md in servers:
        md.close()
    plain.close()
    with backend.open(writes_per_minute=0) as check:
        files = index_files(check)
        queries = [f"w{seed}x{step}" for seed in range(3) for step in range(40)]
        found = [[h.path for h in check.search(q)] for q in queries]
        check.reindex()
        assert [[h.path for h in check.search(q)] for q in queries] == found
    assert files == rebuilt(backend)
