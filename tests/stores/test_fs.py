"""The filesystem store under crashes and concurrent processes."""

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import memdir

CHILD_PRELUDE = """
import os, sys
import memdir
from memdir.stores import fs
root = sys.argv[1]
def crash(*a, **k):
    os._exit(9)
def after(fn):
    def wrapped(*a, **k):
        out = fn(*a, **k)
        os._exit(9)
    return wrapped
"""


def run_child(root: Path, body: str) -> int:
    code = CHILD_PRELUDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True).returncode


def visible(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.md")) if ".memdir" not in p.parts}


@pytest.fixture
def seeded(root: Path) -> Path:
    with memdir.open(root) as md:
        md.write("p.md", "old\n", description="old description")
    return root


def test_crash_before_the_journal_commit_keeps_the_old_file(seeded: Path) -> None:
    code = run_child(seeded, """
        fs.FileStore._record = crash
        memdir.open(root).write("p.md", "new\\n", description="new description")
    """)
    assert code == 9
    assert list((seeded / ".memdir" / "tmp").iterdir())  # the staged temp file is left behind
    with memdir.open(seeded) as md:
        assert md.read("p.md").body == "old\n"
        assert md.recovered == ["rolled back an interrupted write that never reached the journal (.memdir/tmp/2.md)"]
        assert [r.op for r in md.history()] == ["write"]
        assert "old description" in md.index()
        assert md.reconcile().clean
    assert not list((seeded / ".memdir" / "tmp").iterdir())


def test_crash_after_the_journal_commit_completes_the_write(seeded: Path) -> None:
    code = run_child(seeded, """
        fs.FileStore._apply = crash
        memdir.open(root).write("p.md", "new\\n", description="new description")
    """)
    assert code == 9
    assert "old" in (seeded / "p.md").read_text()  # the rename never happened
    with memdir.open(seeded) as md:
        assert md.read("p.md").body == "new\n"
        assert md.recovered == ["completed interrupted change #2 to p.md from the journal"]
        assert "new description" in md.index()
        assert (seeded / "MEMORY.md").read_text() == md.index()
        assert md.reconcile().clean


def test_crash_before_the_index_is_written_rebuilds_it_on_open(seeded: Path) -> None:
    code = run_child(seeded, """
        fs.FileStore.derive = crash
        memdir.open(root).write("p.md", "new\\n", description="new description")
    """)
    assert code == 9
    assert "old description" in (seeded / "MEMORY.md").read_text()  # stale
    with memdir.open(seeded) as md:
        assert "new description" in md.index()
        assert "new description" in (seeded / "MEMORY.md").read_text()


def test_crash_in_the_middle_of_a_rename_finishes_it(seeded: Path) -> None:
    code = run_child(seeded, """
        real = fs.FileStore._unlink
        fs.FileStore._unlink = after(real)  # the old name is gone, the new one not there yet
        memdir.open(root).rename("p.md", "moved/q.md")
    """)
    assert code == 9
    assert visible(seeded) == {"MEMORY.md": (seeded / "MEMORY.md").read_text()}
    with memdir.open(seeded) as md:
        assert md.read("moved/q.md").body == "old\n"
        assert [e.path for e in md.list()] == ["moved/q.md"]
        assert md.reconcile().clean


def test_crash_while_deleting_finishes_the_delete(seeded: Path) -> None:
    code = run_child(seeded, """
        fs.FileStore._apply = crash
        memdir.open(root).delete("p.md")
    """)
    assert code == 9
    assert (seeded / "p.md").exists()
    with memdir.open(seeded) as md:
        assert not (seeded / "p.md").exists()
        assert md.list() == []


def test_killed_writers_leave_old_or_new_files_never_a_mix(root: Path) -> None:
    contents = {i: f"---\ndescription: generation {i}\n---\n" + f"line of generation {i}\n" * 50 for i in range(1000)}
    writer = textwrap.dedent("""
        import sys, memdir
        md = memdir.open(sys.argv[1])
        i = 0
        while True:
            body = f"line of generation {i}\\n" * 50
            md.write(f"f{i % 3}.md", body, description=f"generation {i}")
            i += 1
    """)
    for round_ in range(8):
        proc = subprocess.Popen([sys.executable, "-c", writer, str(root)])
        time.sleep(0.4 + 0.07 * round_)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with memdir.open(root) as md:
            for path in ("f0.md", "f1.md", "f2.md"):
                try:
                    m = md.read(path)
                except memdir.NotFound:
                    continue
                gen = int(m.description.split()[-1])
                assert m.body == contents[gen].split("---\n", 2)[2]
            assert md.reconcile().clean, md.reconcile().to_dict()



def test_readers_never_see_half_a_file(root: Path) -> None:
    a, b = "A" * 20_000 + "\n", "B" * 20_000 + "\n"
    with memdir.open(root) as md:
        md.write("x.md", a)
    reader = textwrap.dedent("""
        import sys, memdir
        md = memdir.open(sys.argv[1])
        bodies = set()
        for _ in range(3000):
            bodies.add(md.read("x.md").body[:1] + str(len(md.read("x.md").body)))
        print(sorted(bodies))
    """)
    proc = subprocess.Popen([sys.executable, "-c", reader, str(root)], stdout=subprocess.PIPE, text=True)
    with memdir.open(root) as md:
        while proc.poll() is None:
            md.write("x.md", b)
            md.write("x.md", a)
    out = proc.stdout.read() if proc.stdout else ""
    assert out.strip() in ("['A20001', 'B20001']", "['A20001']", "['B20001']")


def test_temp_and_lock_files_live_under_dot_memdir(md: memdir.Memdir, root: Path) -> None:
    md.write("a/b.md", "x\n")
    md.rename("a/b.md", "c/d.md")
    md.delete("c/d.md")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".memdir" not in p.parts) == ["MEMORY.md"]
    assert {p.name for p in (root / ".memdir").iterdir()} >= {".gitignore", "lock", "memdir.db", "tmp"}
    assert not list((root / ".memdir" / "tmp").iterdir())


def test_power_loss_after_reboot_is_repaired_from_the_journal(seeded: Path) -> None:
    with memdir.open(seeded) as md:
        md.write("p.md", "new\n")
        md.write("q.md", "kept\n")
    (seeded / "p.md").write_bytes(b"")  # what a lost page cache looks like
    db = sqlite3.connect(seeded / ".memdir" / "memdir.db")
    db.execute("UPDATE state SET value = 'another-boot' WHERE key = 'boot_id'")
    db.commit()
    db.close()
    with memdir.open(seeded) as md:
        assert md.read("p.md").body == "new\n"
        assert any("restored p.md" in n for n in md.recovered)
        assert md.read("q.md").body == "kept\n"


def test_a_reboot_after_a_rename_does_not_bring_the_old_name_back(seeded: Path) -> None:
    with memdir.open(seeded) as md:
        md.rename("p.md", "moved/q.md")
    db = sqlite3.connect(seeded / ".memdir" / "memdir.db")
    db.execute("UPDATE state SET value = 'another-boot' WHERE key = 'boot_id'")
    db.execute("UPDATE state SET value = '0' WHERE key = 'verified_seq'")
    db.commit()
    db.close()
    with memdir.open(seeded) as md:
        assert not (seeded / "p.md").exists()
        assert [e.path for e in md.list()] == ["moved/q.md"]
        assert md.reconcile().clean


def test_hand_edit_after_a_reboot_is_kept(seeded: Path) -> None:
    (seeded / "p.md").write_text("edited by a person\n")
    db = sqlite3.connect(seeded / ".memdir" / "memdir.db")
    db.execute("UPDATE state SET value = 'another-boot' WHERE key = 'boot_id'")
    db.commit()
    db.close()
    with memdir.open(seeded) as md:
        assert md.read("p.md").text == "edited by a person\n"


def test_an_existing_folder_is_catalogued_on_first_open(tmp_path: Path) -> None:
    root = tmp_path / "claude-memory"
    root.mkdir()
    (root / "user_role.md").write_text("---\nname: role\ndescription: data scientist\ntype: user\n---\nbody\n")
    (root / "MEMORY.md").write_text("- [role](user_role.md) — hand-written index\n")
    with memdir.open(root) as md:
        assert [e.path for e in md.list()] == ["user_role.md"]
        assert "data scientist" in md.index()
    backup = root / ".memdir" / "MEMORY.md.orig"
    assert backup.read_text() == "- [role](user_role.md) — hand-written index\n"


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o277])
def test_what_memdir_creates_is_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    """Folders 0700 and files 0600: a permissive umask (Docker's 000) must not open them to others,
    and a restrictive one must not lock the owner out."""
    import os
    import stat

    root = tmp_path / "missing-parent" / "memory"
    old = os.umask(umask)
    try:
        with memdir.open(root) as md:
            md.write("people/alice/notes.md", "a\n")
            md.write("index-me.md", "b\n")
            md.rename("index-me.md", "archive/2026/old.md")
            md.delete("people/alice/notes.md")
            md.undo("people/alice/notes.md")
            (root / "MEMORY.md").unlink()
        with memdir.open(root) as md:  # rebuilds the index on open
            md.append("people/alice/notes.md", "more")
            made = [root.parent, *sorted(root.rglob("*")), root]  # while open: the -wal and -shm files exist
            modes = {p.relative_to(tmp_path).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in made}
    finally:
        os.umask(old)
    assert {p: oct(m) for p, m in modes.items() if m != (0o700 if Path(tmp_path, p).is_dir() else 0o600)} == {}
    assert {"missing-parent/memory/.memdir/memdir.db-wal", "missing-parent/memory/MEMORY.md",
            "missing-parent/memory/archive/2026/old.md", "missing-parent/memory/.memdir/tmp"} <= modes.keys()
