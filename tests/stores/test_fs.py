"""The filesystem store under crashes and concurrent processes."""

import errno
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir.faces.cli import main
from memdir.remember.importer import import_dir
from memdir.stores import fs
from memdir.stores.base import Change

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
    """Completing an interrupted write includes its index files (edits journaled by a read do not count)."""
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
        deadline = time.monotonic() + 60
        while not (root / "MEMORY.md").exists() and time.monotonic() < deadline:
            time.sleep(0.02)  # a loaded machine can take a second to start Python: kill it while writing
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


def test_index_files_a_power_loss_emptied_are_rewritten_after_the_reboot(seeded: Path) -> None:
    with memdir.open(seeded) as md:
        md.write("notes/p.md", "new\n", description="the new note")
        index = (seeded / "MEMORY.md").read_text()
    for index_file in seeded.rglob("MEMORY.md"):
        index_file.write_bytes(b"")  # swapped in without a flush: what a lost page cache leaves
    db = sqlite3.connect(seeded / ".memdir" / "memdir.db")
    db.execute("UPDATE state SET value = 'another-boot' WHERE key = 'boot_id'")
    db.commit()
    db.close()
    with memdir.open(seeded) as md:
        assert md.index() == index
        md.write("other.md", "x\n")
    assert "the new note" in (seeded / "MEMORY.md").read_text()


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


def test_an_existing_folder_is_catalogued_on_first_open_and_its_index_kept(tmp_path: Path) -> None:
    """A folder memdir never opened: its files are journaled, and its hand-kept MEMORY.md is not touched by
    reading; the first write adds memdir's region and keeps every byte of the rest."""
    root = tmp_path / "claude-memory"
    root.mkdir()
    (root / "user_role.md").write_text("---\nname: role\ndescription: data scientist\ntype: user\n---\nbody\n")
    hand = "- [role](user_role.md) — hand-written index\n\nNotes kept here by hand.\n"
    (root / "MEMORY.md").write_text(hand)
    with memdir.open(root) as md:
        assert [e.path for e in md.list()] == ["user_role.md"]
        assert md.index().startswith(hand) and "data scientist" in md.index()
    assert (root / "MEMORY.md").read_text() == hand  # reading changed nothing
    with memdir.open(root) as md:
        md.write("project/x.md", "A new fact.\n", description="written through memdir")
        on_disk = (root / "MEMORY.md").read_text()
        assert on_disk.startswith(hand) and "written through memdir" in on_disk and on_disk == md.index()
    assert not (root / ".memdir" / "MEMORY.md.orig").exists()


# ---------------------------------------------------------------- a record recovery cannot apply (issue 7, finding 1)


def plant_committed_change(root: Path, path: str, data: bytes) -> int:
    """The state a crash after the journal commit leaves: a journal row and its staged file, not yet in place."""
    db = sqlite3.connect(root / ".memdir" / "memdir.db")
    seq = db.execute("SELECT max(seq) FROM journal").fetchone()[0] + 1
    db.execute("INSERT INTO journal(seq, time, actor, op, path, new_version, new) VALUES (?,?,?,?,?,?,?)",
               (seq, "2026-11-30T00:00:00Z", "test", "write", path, "0123456789abcdef", data))
    db.commit()
    db.close()
    (root / ".memdir" / "tmp" / f"{seq}.md").write_bytes(data)
    return seq


def test_a_staged_file_that_is_not_the_journaled_content_is_never_put_in_place(seeded: Path) -> None:
    """A staged file a power loss emptied: the journal's copy is the durable one."""
    new = (seeded / "p.md").read_bytes().replace(b"old\n", b"new\n")
    seq = plant_committed_change(seeded, "p.md", new)
    staged = seeded / ".memdir" / "tmp" / f"{seq}.md"
    staged.write_bytes(b"")
    with memdir.open(seeded) as md:
        assert md.read("p.md").body == "new\n"
        assert md.recovered == [f"completed interrupted change #{seq} to p.md from the journal"]
    assert not staged.exists()


def test_an_update_renames_the_file_in_and_leaves_nothing_staged(seeded: Path) -> None:
    inode = (seeded / "p.md").stat().st_ino
    with memdir.open(seeded) as md:
        md.write("p.md", "new\n")
        assert md.read("p.md").body == "new\n"
    assert (seeded / "p.md").stat().st_ino != inode and (seeded / "p.md").stat().st_mode & 0o777 == 0o600
    assert not list((seeded / ".memdir" / "tmp").iterdir())


def test_a_record_that_cannot_be_applied_is_quarantined_and_the_memory_opens(seeded: Path) -> None:
    seq = plant_committed_change(seeded, "p.md/y.md", b"the content of the bad record\n")
    with memdir.open(seeded) as md:  # 1b30d36 raised NotADirectoryError here, on every open
        assert md.read("p.md").body == "old\n"
        [message] = md.recovered  # the reason in brackets is the system's: a file stands where a folder must
        assert re.fullmatch(
            rf"journal change #{seq} to p\.md/y\.md could not be applied \((File exists|Not a directory)\); its content "
            rf"is kept in \.memdir/quarantine/{seq}\.md: restore it under another name, then delete "
            rf"\.memdir/quarantine/{seq}\.\*", message), message
        found = [f for f in md.reconcile().findings if f.kind == "quarantined"]
        assert [f.detail for f in found] == md.recovered
    assert (seeded / ".memdir" / "quarantine" / f"{seq}.md").read_bytes() == b"the content of the bad record\n"
    with memdir.open(seeded) as md:  # and it stays open on the next open, with nothing left to repair
        assert md.recovered == [] and md.read("p.md").body == "old\n"
    cli = CliRunner()
    out = cli.invoke(main, ["--root", str(seeded), "doctor"])
    assert out.exit_code == 1 and f"quarantined\t-\tjournal change #{seq}" in out.output
    assert "1 problem found" in out.output
    data = json.loads(cli.invoke(main, ["--root", str(seeded), "doctor", "--json"]).output)
    assert data["healthy"] is False and [p["kind"] for p in data["problems"]] == ["quarantined"]
    for name in (f"{seq}.md", f"{seq}.json"):
        (seeded / ".memdir" / "quarantine" / name).unlink()
    out = cli.invoke(main, ["--root", str(seeded), "doctor"])
    assert out.exit_code == 0 and "healthy" in out.output


def test_a_change_that_fails_for_now_is_kept_staged_and_retried(seeded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seq = plant_committed_change(seeded, "q.md", b"later\n")
    real = os.replace

    def eio(src: object, dst: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "replace", eio)
    with memdir.open(seeded) as md:
        assert md.recovered == [f"could not complete change #{seq} to q.md yet (Input/output error); "
                                "it is retried on the next open"]
    monkeypatch.setattr(os, "replace", real)
    with memdir.open(seeded) as md:
        assert md.recovered == [f"completed interrupted change #{seq} to q.md from the journal"]
        assert (seeded / "q.md").read_bytes() == b"later\n"


# ---------------------------------------------------------------- tenants of a folder memory (finding 2)


def test_the_default_tenant_of_a_folder_sees_nothing_of_the_other_tenants(root: Path, tmp_path: Path) -> None:
    with memdir.open(root, tenant="acme") as acme:
        acme.write("notes/plan.md", "acme's secret plan\n", description="acme plan")
    with memdir.open(root) as md:
        md.write("mine.md", "the default tenant's own file\n", description="mine")
        assert [e.path for e in md.list()] == ["mine.md"]
        assert md.grep("secret") == [] and md.search("secret plan") == []
        assert "acme" not in md.index() and [p for p, _ in md.store.list()] == ["mine.md"]
        for call in (lambda: md.read("tenants/acme/notes/plan.md"),
                     lambda: md.write("tenants/acme/notes/plan.md", "overwritten\n"),
                     lambda: md.rename("mine.md", "tenants/acme/mine.md"),
                     lambda: md.list("tenants/acme"),
                     lambda: md.scope(read=["tenants/"])):
            with pytest.raises(memdir.InvalidPath, match="reserved for other tenants"):
                call()
        assert md.reconcile(fix=True).clean
        assert [r.path for r in md.history()] == ["mine.md"]
    assert (root / "tenants" / "acme" / "notes" / "plan.md").read_text().endswith("acme's secret plan\n")
    source = tmp_path / "source"
    (source / "tenants" / "x").mkdir(parents=True)
    (source / "tenants" / "x" / "a.md").write_text("into tenants?\n")
    with memdir.open(root) as md:
        result = import_dir(md, source)
        assert result.imported == ["tenants (folder)/x/a.md"] and result.renamed == [  # never into another tenant
            ("tenants/", "tenants (folder)/", "a top folder named tenants/ is where memdir keeps other tenants")]
    with memdir.open(root, tenant="acme") as acme:
        assert [e.path for e in acme.list()] == ["notes/plan.md"]


def test_a_catalog_made_before_tenants_were_reserved_forgets_them(root: Path) -> None:
    with memdir.open(root, tenant="acme") as acme:
        acme.write("plan.md", "acme\n")
    (root / "tenants" / "acme" / "MEMORY.md").unlink()
    with memdir.open(root) as md:
        stamp = "2026-11-30T00:00:00Z"
        with md.store.lock():  # what 1b30d36's reconcile journaled: another tenant's file in this catalog
            md.store.commit([Change(op="external", path="tenants/acme/plan.md", data=b"acme\n", expect=None, old=None,
                                    entry=memdir.Entry("tenants/acme/plan.md", "plan", "acme", None, (), None, None, 5, 1, ""),
                                    actor="t", time=stamp, record_only=True)])
    with memdir.open(root) as md:
        assert [f.kind for f in md.reconcile(fix=True).findings] == ["missing"]  # an empty memory needs no MEMORY.md
        assert md.list() == [] and "acme" not in md.index()
    assert (root / "tenants" / "acme" / "plan.md").exists()  # forgetting it never deletes it


# ---------------------------------------------------------------- symlinks and scopes (finding 3)


def test_a_symlink_cannot_carry_a_scope_across_its_boundary(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("secret/plan.md", "the secret plan\n")
        md.write("notes/a.md", "a note\n")
        (root / "notes" / "s").symlink_to("../secret")
        (root / "notes" / "same").symlink_to("sub")
        md.write("notes/sub/b.md", "b\n")
        notes = md.scope(write=["notes/"])
        with pytest.raises(memdir.NotFound):
            notes.read("notes/s/plan.md")
        with pytest.raises(memdir.Forbidden, match="leads through a symlink outside"):
            notes.write("notes/s/plan.md", "rewritten\n")
        with pytest.raises(memdir.Forbidden, match="leads through a symlink outside"):
            notes.write("notes/s/planted.md", "planted\n")
        with pytest.raises(memdir.Forbidden):
            notes.delete("notes/s/plan.md")
        assert notes.read("notes/same/b.md").body == "b\n"  # a link inside the scope is fine
        assert md.read("notes/s/plan.md").body == "the secret plan\n"  # the whole tenant may follow it
    assert sorted(p.name for p in (root / "secret").iterdir()) == ["plan.md"]
    assert "the secret plan" in (root / "secret" / "plan.md").read_text()


def test_symlinks_out_of_the_root_or_into_reserved_places_are_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside\n")
    with memdir.open(root) as md:
        (root / "out").symlink_to(outside)
        (root / "internal").symlink_to(".memdir")
        with pytest.raises(memdir.InvalidPath, match="outside the memory root"):
            md.read("out/x.md")
        with pytest.raises(memdir.InvalidPath, match="which memdir does not serve"):
            md.write("internal/x.md", "x\n")
    with memdir.open(root, tenant="acme") as acme:
        (root / "tenants" / "acme" / "up").symlink_to("../..")
        with pytest.raises(memdir.InvalidPath, match="outside the memory root"):
            acme.write("up/mine.md", "x\n")
    assert not (root / "mine.md").exists()


# ---------------------------------------------------------------- disk full and I/O errors (finding 7)


def test_disk_full_before_the_commit_is_a_one_line_store_error_and_changes_nothing(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    with memdir.open(seeded) as md:
        before = (md.store.list(), md.history(), md.index())
        monkeypatch.setattr(os, "write", full)
        with pytest.raises(memdir.StoreError) as err:
            md.write("p.md", "new\n")
        monkeypatch.undo()
        assert str(err.value) == (f"{seeded}: cannot write the change: No space left on device; "
                                  "free some disk space and retry")
        assert (md.store.list(), md.history(), md.index()) == before
        assert not list((seeded / ".memdir" / "tmp").iterdir())


def test_disk_full_after_the_commit_is_success_and_the_index_is_repaired(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = fs._write_private

    def full(path: Path, data: bytes) -> None:
        if "derived" in path.name:  # the staged MEMORY.md
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    with memdir.open(seeded) as md:
        monkeypatch.setattr(fs, "_write_private", full)
        assert md.write("p.md", "new\n", description="new description").change == "updated"
        assert "old description" in (seeded / "MEMORY.md").read_text()  # stale for now
        monkeypatch.undo()
    with memdir.open(seeded) as md:
        assert [e.description for e in md.list()] == ["new description"]  # loading the catalog repairs the index
        assert "new description" in (seeded / "MEMORY.md").read_text()
        assert md.read("p.md").body == "new\n" and md.reconcile().clean


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs, so the disk really fills up."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}); needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_really_full_disk_refuses_writes_in_one_line_and_loses_nothing(tiny_disk: Path) -> None:
    root = tiny_disk / "memory"
    ballast = tiny_disk / "ballast"
    ballast.write_bytes(b"\0" * 300_000)  # something else on the disk, removed later to make room
    acknowledged: dict[str, bytes] = {}
    refused = 0
    with memdir.open(root, max_bytes=100_000, max_lines=10_000) as md:
        for i in range(100):
            path = f"n{i:03d}.md"
            try:
                acknowledged[path] = md.write(path, f"note {i}\n" + "x" * 20_000).text.encode()
            except memdir.StoreError as e:
                refused += 1
                assert "\n" not in str(e) and ("No space left" in str(e) or "full" in str(e)), str(e)
        assert refused and acknowledged
        for path, data in acknowledged.items():
            assert md.store.get(path).data == data  # type: ignore[union-attr]
        out = CliRunner().invoke(main, ["--root", str(root), "write", "big.md", "--body", "z" * 24_000])
        assert out.exit_code == 1 and out.output.startswith("error: ") and out.output.count("\n") == 1
    ballast.unlink()
    with memdir.open(root) as md:
        assert {e.path for e in md.list()} == set(acknowledged)
        assert md.reconcile().clean
        md.write("after.md", "room again\n")


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
