import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import memdir
from memdir import InvalidArgument
from memdir.remember.watch import Watcher


def eventually(check: Callable[[], bool], seconds: float = 120.0) -> None:
    """Wait for the watcher thread: events arrive tens of milliseconds after the edit, but a loaded machine may
    run the thread much later; the bound only keeps a broken watcher from hanging the suite."""
    stop = time.monotonic() + seconds
    while not check():
        if time.monotonic() > stop:
            raise AssertionError("the watcher did not catch up in time")
        time.sleep(0.02)


def by_hand(path: Path, text: str) -> None:
    """Saved as an editor saves: whole, in one rename (a write in two steps, truncate then write, can be seen
    between them by a watcher the machine runs first, and journaled empty: the test would then depend on speed)."""
    staged = path.with_name(path.name + ".saving")
    staged.write_text(text)
    os.replace(staged, path)


def test_edits_by_hand_show_in_the_catalog_index_and_journal(md: memdir.Memdir, root: Path) -> None:
    md.write("project/launch.md", "Friday.\n", description="launch on Friday")
    seen: list[str] = []
    with Watcher(md, on_change=seen.extend) as watcher:
        eventually(lambda: watcher.rounds > 0)
        launch = root / "project" / "launch.md"
        by_hand(launch, launch.read_text().replace("launch on Friday", "launch on Monday"))
        by_hand(root / "project" / "added.md", "# Added in an editor\n")
        eventually(lambda: "launch on Monday" in md.index() and "Added in an editor" in md.index())
        assert "launch on Friday" in (root / "MEMORY.md").read_text()  # journaled, not rewritten: a read changes no file
        (root / "project" / "added.md").unlink()
        eventually(lambda: [e.path for e in md.list()] == ["project/launch.md"])
        assert watcher.errors == 0
    assert sorted(set(seen)) == ["project/added.md", "project/launch.md"]
    assert [r.op for r in md.history("project/added.md")] == ["external", "external"]
    assert md.undo("project/launch.md").description == "launch on Friday"
    assert (root / "MEMORY.md").read_text() == md.index()  # the next write brings MEMORY.md along


def test_own_writes_and_index_files_are_not_taken_for_hand_edits(md: memdir.Memdir, root: Path) -> None:
    seen: list[str] = []
    with Watcher(md, on_change=seen.extend) as watcher:
        for i in range(5):
            md.write(f"notes/n{i}.md", f"note {i}\n", description=f"note {i}")
        rounds = watcher.rounds
        by_hand(root / "notes" / "marker.md", "# marker\n")  # one folder's events come in order: so were those
        eventually(lambda: "notes/marker.md" in seen)
        assert watcher.rounds > rounds
    assert seen == ["notes/marker.md"]
    assert all(r.op == "write" for r in md.history() if r.path.startswith("notes/n"))


def test_a_folder_moved_by_hand_is_found_by_a_full_check(md: memdir.Memdir, root: Path) -> None:
    for i in range(3):
        md.write(f"old/n{i}.md", f"note {i}\n")
    with Watcher(md) as watcher:
        eventually(lambda: watcher.rounds > 0)
        shutil.move(root / "old", root / "new")
        eventually(lambda: [e.path for e in md.list()] == [f"new/n{i}.md" for i in range(3)])


def test_a_folder_made_by_hand_at_the_top_is_watched_from_then_on(md: memdir.Memdir, root: Path) -> None:
    md.write("project/a.md", "a\n")
    with Watcher(md) as watcher:
        eventually(lambda: watcher.rounds > 0)
        (root / "ideas").mkdir()
        (root / "ideas" / "one.md").write_text("# One idea\n")
        eventually(lambda: bool(md.list("ideas/one.md")))  # the full check after a new top folder found it
        (root / "ideas" / "two.md").write_text("# Two ideas\n")  # only the renewed deep watch can see this one
        eventually(lambda: bool(md.list("ideas/two.md")))
        (root / "top.md").write_text("# At the top\n")  # the root's own level is watched too
        eventually(lambda: bool(md.list("top.md")))
        assert watcher.errors == 0


def test_a_missed_edit_is_caught_up_when_the_watch_starts(md: memdir.Memdir, root: Path) -> None:
    (root / "while-away.md").write_text("# Written while nothing watched\n")
    with Watcher(md):
        eventually(lambda: bool(md.list("while-away.md")))


def _unblock(fifos: list[Path], stuck: threading.Thread) -> None:
    """Let readers stuck opening `fifos` go (a writer that opens and closes one gives its reader an end of file)."""
    stop = time.monotonic() + 20
    while time.monotonic() < stop and (stuck.is_alive() or time.monotonic() < stop - 18):
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader is waiting on this one
                pass
        time.sleep(0.01)


def test_a_fifo_named_md_never_hangs_the_memory(md: memdir.Memdir, root: Path) -> None:
    md.write("notes/a.md", "a\n")
    fifos = [root / "notes" / "pipe.md", root / "top.md", root / "notes" / "while-watched.md"]
    for fifo in fifos[:2]:
        os.mkfifo(fifo)
    (root / "notes" / "link.md").symlink_to("pipe.md")  # a symlink to one takes the other way in
    done = threading.Event()

    with Watcher(md) as watcher:
        eventually(lambda: watcher.rounds > 0)

        def work() -> None:
            os.mkfifo(fifos[2])  # the watcher hears of this one
            (root / "notes" / "later.md").write_text("# after the FIFOs\n")
            eventually(lambda: bool(md.list("notes/later.md")))  # so the watcher got past it
            md.sync(["notes/pipe.md", "top.md", "notes/link.md"])  # what a watcher's events hand over
            md.sync()  # and the full check
            md.write("notes/b.md", "b\n")
            done.set()

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        held = done.wait(15)
        if not held:
            _unblock(fifos, worker)
        assert held, "a FIFO named *.md blocked sync while it held the memory's lock"
        assert watcher.errors == 0
    assert [e.path for e in md.list()] == ["notes/a.md", "notes/b.md", "notes/later.md"]
    assert md.store.get("notes/pipe.md") is None and md.store.get("notes/link.md") is None
    with pytest.raises(memdir.NotFound):
        md.read("top.md")

def test_only_folders_can_be_watched(tmp_path: Path) -> None:
    with memdir.open(f"sqlite:///{tmp_path / 'm.db'}") as md:
        with pytest.raises(InvalidArgument, match="only a memory folder can be watched"):
            Watcher(md)


def test_memdir_watch_prints_changes_until_interrupted(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "a\n")
    proc = subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(root), "watch", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None and proc.stdout is not None
        assert proc.stderr.readline().startswith(f"memdir: watching {root}")
        by_hand(root / "b.md", "# by hand\n")  # watched since before that line: found by the catch-up or an event
        assert json.loads(proc.stdout.readline()) == {"path": "b.md", "change": "changed"}
        (root / "a.md").unlink()
        assert json.loads(proc.stdout.readline()) == {"path": "a.md", "change": "deleted"}
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0


# ---------------------------------------------------------------- a server's root: one watch for every tenant


def _inotify_instances() -> int:
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if _link(fd) == "anon_inode:inotify")


def _link(fd: Path) -> str:
    try:
        return os.readlink(fd)
    except OSError:
        return ""


def test_a_server_watches_its_root_once_however_many_tenants_it_opens(tmp_path: Path) -> None:
    from memdir.faces.auth import Memories, Principal

    before, threads = _inotify_instances(), threading.active_count()
    memories = Memories(tmp_path / "served", transport="http")
    try:
        own = memories.of(Principal("default"))
        tenants = [memories.of(Principal(f"p{i}", f"t{i}")) for i in range(70)]
        assert _inotify_instances() - before <= 2  # before: two for each memory, 142, past the account's 128
        assert threading.active_count() - threads <= 4
        (tmp_path / "served" / "tenants" / "t42" / "notes").mkdir(parents=True)
        by_hand(tmp_path / "served" / "tenants" / "t42" / "notes" / "by-hand.md", "# Edited by hand\n")
        (tmp_path / "served" / "top.md").write_text("# The root's own, by hand\n")
        eventually(lambda: bool(tenants[42].list("notes/by-hand.md")) and bool(own.list("top.md")), seconds=120)
        assert [e.path for e in tenants[41].list()] == [] and not own.list("notes/")  # each edit to its own memory
        assert [r.op for r in tenants[42].history("notes/by-hand.md")] == ["external"]
    finally:
        memories.close()
    assert _inotify_instances() == before
