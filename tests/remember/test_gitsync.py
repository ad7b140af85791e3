"""`memdir sync`: two machines, one bare remote on the same disk, and what a sync must never lose or leak."""

from __future__ import annotations

import os
import subprocess
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from gitmachines import bare, every_object, files, git, isolate, remote_texts

import memdir
from memdir.faces.cli import main
from memdir.remember import gitsync, merging

Open = Callable[[str], memdir.Memdir]


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(tmp_path / "home", monkeypatch.setenv)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Open]:
    opened: list[memdir.Memdir] = []

    def make(name: str) -> memdir.Memdir:
        md = memdir.open(tmp_path / name, actor=f"cli:{name}")
        opened.append(md)
        return md

    yield make
    for md in opened:
        md.close()


def pair(machine: Open, remote: Path) -> tuple[memdir.Memdir, memdir.Memdir]:
    """Machine a with one memory pushed, machine b joined to it."""
    a = machine("a")
    a.write("user/profile.md", "Prefers short answers.\n", description="who the user is", type="user")
    gitsync.init(a, str(remote))
    b = machine("b")
    gitsync.init(b, str(remote))
    return a, b


# ---------------------------------------------------------------- refusals


def test_a_folder_without_git_is_refused_saying_how_to_set_it_up(machine: Open) -> None:
    md = machine("a")
    md.write("x.md", "x\n")
    before = files(Path(md.store.root))  # type: ignore[attr-defined]
    with pytest.raises(memdir.InvalidArgument, match=r"is not a git repository.*memdir sync --init REMOTE"):
        gitsync.git_sync(md)
    assert files(Path(md.store.root)) == before  # type: ignore[attr-defined]


def test_a_repository_without_a_remote_is_refused(machine: Open, tmp_path: Path) -> None:
    md = machine("a")
    git(tmp_path / "a", "init", "-q")
    with pytest.raises(memdir.InvalidArgument, match=r"has no git remote.*memdir sync --init REMOTE"):
        gitsync.git_sync(md)
    assert not _has_commits(tmp_path / "a")


def _has_commits(where: Path) -> bool:
    return subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True).returncode == 0


def test_the_cli_refuses_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(tmp_path / "m"), "write", "x.md", "--body", "x"]).exit_code == 0
    got = runner.invoke(main, ["--root", str(tmp_path / "m"), "sync"])
    assert got.exit_code == 1
    assert got.stderr.count("\n") == 1 and "memdir sync --init REMOTE" in got.stderr


def test_a_memory_inside_a_project_repository_is_not_synced_by_itself(machine: Open, tmp_path: Path, remote: Path) -> None:
    """The personal memory's sync never touches a project's repository: a memory inside one is refused."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", str(remote))
    (project / "code.py").write_text("print(1)\n")
    git(project, "add", "code.py")
    git(project, "commit", "-qm", "code")
    md = memdir.open(project / "memory")
    md.write("x.md", "x\n")
    head = git(project, "rev-parse", "HEAD")
    with pytest.raises(memdir.InvalidArgument, match="inside the git repository at"):
        gitsync.git_sync(md)
    with pytest.raises(memdir.InvalidArgument, match="inside the git repository at"):
        gitsync.init(md, str(remote))
    md.close()
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "status", "--porcelain") == "?? memory/\n"
    assert git(remote, "for-each-ref") == ""


# ---------------------------------------------------------------- clean merges


def test_two_machines_changing_different_files_end_equal(machine: Open, remote: Path) -> None:
    a, b = pair(machine, remote)
    assert b.read("user/profile.md").body == "Prefers short answers.\n"
    a.write("project/flock.md", "Flock ships on Fridays.\n", description="release day", type="project")
    b.write("feedback/tests.md", "Run the tests before a commit.\n", description="tests first", type="feedback")
    b.delete("user/profile.md")
    gitsync.git_sync(a)
    done = gitsync.git_sync(b)
    assert done.brought == ["project/flock.md"] and done.pushed and not done.conflicts
    gitsync.git_sync(a)
    assert files(Path(a.store.root)) == files(Path(b.store.root))  # type: ignore[attr-defined]
    assert sorted(e.path for e in a.list()) == ["feedback/tests.md", "project/flock.md"]
    assert "feedback/tests.md" in a.index() and "user/profile.md" not in a.index()
    assert remote_texts(remote)["MEMORY.md"] == a.index()


def test_the_journal_records_what_came_in_and_undo_works_across_machines(machine: Open, remote: Path) -> None:
    a, b = pair(machine, remote)
    a.write("user/profile.md", "Prefers long answers.\n")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    last = b.history("user/profile.md", limit=1)[0]
    assert (last.actor, last.op) == ("sync:origin", "write")
    assert "long" in b.read("user/profile.md").body
    b.undo("user/profile.md")
    gitsync.git_sync(b)
    gitsync.git_sync(a)
    assert a.read("user/profile.md").body == "Prefers short answers.\n"


def test_commits_are_authored_by_the_journal_and_say_what_changed(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, _ = pair(machine, remote)
    a.write("notes/one.md", "one\n")
    a.acting("hook:claude-code").write("sessions/2026-05-10-0900.md", "a session\n", type="session")
    a.rename("notes/one.md", "notes/uno.md")
    gitsync.git_sync(a)
    log = git(remote, "log", "--first-parent", "--no-merges", "--format=%an|%s", "-3", "main").splitlines()
    assert log == ["cli:a|cli:a: rename notes/one.md -> notes/uno.md",
                   "hook:claude-code|hook:claude-code: write sessions/2026-05-10-0900.md",
                   "cli:a|cli:a: write notes/one.md"]
    assert git(remote, "log", "--no-merges", "-1", "--format=%ae", "main") == "person@example.org\n"


def test_a_hand_edit_is_journaled_and_committed_as_its_owner(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, b = pair(machine, remote)
    (tmp_path / "a" / "user" / "profile.md").write_text("---\ntype: user\n---\nEdited in vim.\n", encoding="utf-8")
    gitsync.git_sync(a)
    assert git(remote, "log", "--first-parent", "--no-merges", "-1", "--format=%an", "main").startswith("external:")
    gitsync.git_sync(b)
    assert b.read("user/profile.md").body == "Edited in vim.\n"


# ---------------------------------------------------------------- the same file on both sides


def test_edits_that_do_not_overlap_merge_and_the_stamps_follow_the_rule(machine: Open, remote: Path) -> None:
    a, b = pair(machine, remote)
    a.write("project/plan.md", "# Plan\n\nstep one\n\nmiddle\n\nstep three\n", description="the plan")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    a.edit("project/plan.md", "step one", "step one, done")
    b.edit("project/plan.md", "step three", "step three, started")
    b.append("project/plan.md", "需要在周五之前完成。")  # Chinese: must be done before Friday
    gitsync.git_sync(a)
    done = gitsync.git_sync(b)
    assert not done.conflicts
    gitsync.git_sync(a)
    text = a.read("project/plan.md")
    assert "step one, done" in text.body and "step three, started" in text.body and "需要在周五之前完成。" in text.body
    stamps = [m.meta["updated"] for m in (a.read("project/plan.md"), b.read("project/plan.md"))]
    assert stamps[0] == stamps[1] == max(str(r.meta["updated"]) for r in (text,))
    assert files(Path(a.store.root)) == files(Path(b.store.root))  # type: ignore[attr-defined]


def test_both_sides_appending_keeps_every_line(machine: Open, remote: Path) -> None:
    a, b = pair(machine, remote)
    a.append("user/profile.md", "Works from Seoul.")
    b.append("user/profile.md", "한국어로 답하는 것을 좋아한다.")  # Korean: likes answers in Korean
    b.append("user/profile.md", "Uses Windows line endings.")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    gitsync.git_sync(a)
    body = a.read("user/profile.md").body
    assert all(s in body for s in ("Works from Seoul.", "한국어로 답하는 것을 좋아한다.", "Uses Windows line endings."))
    assert merging.conflicts(a) == []


def test_a_true_conflict_keeps_both_as_valid_memories_until_resolved(machine: Open, remote: Path) -> None:
    a, b = pair(machine, remote)
    a.write("user/profile.md", "Prefers answers in French.\r\n")
    b.write("user/profile.md", "Prefers answers in German.\r\n")
    gitsync.git_sync(a)
    done = gitsync.git_sync(b)
    assert len(done.conflicts) == 1
    path, other = done.conflicts[0]
    assert path == "user/profile.md" and other.startswith("user/profile.conflict-")
    gitsync.git_sync(a)
    for md in (a, b):
        assert md.read(path).body == "Prefers answers in German.\r\n"  # b merged: b's stays at the path
        theirs = md.read(other)
        assert theirs.body == "Prefers answers in French.\r\n" and theirs.meta["conflict"] == path
        assert theirs.type == "user"
        assert other in md.index()
        assert merging.conflicts(md) == [merging.Pair(path, other)]
    assert memdir.open(Path(a.store.root)).reconcile().clean  # type: ignore[attr-defined]
    merging.resolve(a, other, "theirs")
    assert a.read(path).body == "Prefers answers in French.\r\n" and "conflict" not in a.read(path).meta
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    assert merging.conflicts(b) == [] and b.read(path).body == "Prefers answers in French.\r\n"


def test_conflicts_on_the_command_line(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, b = pair(machine, remote)
    a.write("user/profile.md", "one\n")
    b.write("user/profile.md", "two\n")
    gitsync.git_sync(a)
    runner = CliRunner()
    got = runner.invoke(main, ["--root", str(tmp_path / "b"), "sync"])
    assert got.exit_code == 0 and "conflict: user/profile.md" in got.output
    listed = runner.invoke(main, ["--root", str(tmp_path / "b"), "conflicts"])
    assert listed.exit_code == 1 and listed.output.startswith("user/profile.md\tuser/profile.conflict-")
    done = runner.invoke(main, ["--root", str(tmp_path / "b"), "conflicts", "resolve", "user/profile.md", "--keep", "mine"])
    assert done.exit_code == 0, done.output
    assert runner.invoke(main, ["--root", str(tmp_path / "b"), "conflicts"]).output == "no conflicts\n"


@pytest.mark.parametrize("deleter", ["a", "b"])
def test_a_delete_against_an_edit_keeps_the_edit_and_says_so(machine: Open, remote: Path, deleter: str) -> None:
    a, b = pair(machine, remote)
    gone, edited = (a, b) if deleter == "a" else (b, a)
    gone.delete("user/profile.md")
    edited.append("user/profile.md", "Still wants short answers.")
    gitsync.git_sync(a)
    done = gitsync.git_sync(b)
    gitsync.git_sync(a)
    assert len(done.kept) == 1 and "the change is kept" in done.kept[0]
    for md in (a, b):
        assert "Still wants short answers." in md.read("user/profile.md").body


def test_a_rename_on_one_side_takes_the_edit_made_on_the_other(machine: Open, remote: Path) -> None:
    a, b = pair(machine, remote)
    a.rename("user/profile.md", "user/about.md")
    b.append("user/profile.md", "Lives in Lisbon.")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    gitsync.git_sync(a)
    for md in (a, b):
        assert [e.path for e in md.list()] == ["user/about.md"]
        assert "Lives in Lisbon." in md.read("user/about.md").body
    assert a.history("user/about.md", limit=5)[-1].op in ("rename", "write")


def test_memory_md_is_rendered_again_with_the_kept_notes_merged(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, b = pair(machine, remote)
    for name in ("a", "b"):
        index = tmp_path / name / "MEMORY.md"
        index.write_text(f"Notes kept by hand.\n\n{index.read_text()}", encoding="utf-8")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    notes = tmp_path / "a" / "MEMORY.md"
    notes.write_text(notes.read_text().replace("Notes kept by hand.", "Notes kept by hand, edited on a."), encoding="utf-8")
    a.write("project/a.md", "from a\n")
    b.write("project/b.md", "from b\n")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    gitsync.git_sync(a)
    for name in ("a", "b"):
        text = (tmp_path / name / "MEMORY.md").read_text()
        assert text.startswith("Notes kept by hand, edited on a.\n")
        assert "project/a.md" in text and "project/b.md" in text and "<<<<<<<" not in text
    assert (tmp_path / "a" / "MEMORY.md").read_bytes() == (tmp_path / "b" / "MEMORY.md").read_bytes()


def test_a_file_memdir_refuses_still_lands(machine: Open, remote: Path, tmp_path: Path) -> None:
    """Someone pushed with plain git a file memdir would refuse (a credential) and a picture: a sync lands both as
    git would leave them, journals the refused one as a hand edit, says so, and can push again."""
    a, b = pair(machine, remote)
    plain = tmp_path / "plain"
    git(tmp_path, "clone", "-q", str(remote), str(plain))
    leak = "# Deploy notes\n\nOld deploy key: AKIA" + "QRSTUVWXYZ234567\n"
    (plain / "notes").mkdir()
    (plain / "notes" / "leak.md").write_text(leak, encoding="utf-8")
    (plain / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    git(plain, "add", ".")
    git(plain, "commit", "-qm", "by plain git")
    git(plain, "push", "-q", "origin", "HEAD:main")
    done = gitsync.git_sync(b)
    assert (tmp_path / "b" / "notes" / "leak.md").read_text() == leak
    assert (tmp_path / "b" / "picture.png").read_bytes() == b"\x89PNG\r\n\x1a\n\x00"
    assert [h.split(":")[0] for h in done.held] == ["notes/leak.md"] and done.pushed
    assert b.history("notes/leak.md")[0].op == "external"
    b.write("notes/after.md", "after\n")
    assert gitsync.git_sync(b).pushed


def test_a_crafted_tree_cannot_write_into_git_or_out_of_the_folder(machine: Open, remote: Path, tmp_path: Path) -> None:
    """A remote holding a tree git itself would never check out (`.git/hooks/...`, `../`): the sync refuses it
    and changes nothing."""
    a, b = pair(machine, remote)
    plain = tmp_path / "plain"
    git(tmp_path, "clone", "-q", str(remote), str(plain))
    blob = subprocess.run(["git", "-C", str(plain), "hash-object", "-w", "--stdin"], input=b"#!/bin/sh\necho owned\n",
                          capture_output=True, check=True).stdout.decode().strip()
    hooks = subprocess.run(["git", "-C", str(plain), "mktree"], input=f"100755 blob {blob}\tpost-merge\n".encode(),
                           capture_output=True, check=True).stdout.decode().strip()
    dotgit = subprocess.run(["git", "-C", str(plain), "mktree"], input=f"040000 tree {hooks}\thooks\n".encode(),
                            capture_output=True, check=True).stdout.decode().strip()
    listing = git(plain, "ls-tree", "HEAD") + f"040000 tree {dotgit}\t.git\n100644 blob {blob}\tnotes-ok.md\n"
    tree = subprocess.run(["git", "-C", str(plain), "mktree"], input=listing.encode(), capture_output=True,
                          check=True).stdout.decode().strip()
    commit = git(plain, "commit-tree", tree, "-p", "HEAD", "-m", "crafted").strip()
    git(plain, "push", "-q", "origin", f"{commit}:refs/heads/main")
    head = git(tmp_path / "b", "rev-parse", "HEAD")
    with pytest.raises(memdir.StoreError, match=r"holds the path '.git/hooks/post-merge'.*nothing was merged"):
        gitsync.git_sync(b)
    assert not (tmp_path / "b" / ".git" / "hooks" / "post-merge").exists()
    assert not (tmp_path / "b" / "notes-ok.md").exists() and git(tmp_path / "b", "rev-parse", "HEAD") == head
    assert git(tmp_path / "b", "status", "--porcelain") == ""


def test_a_name_in_nfd_from_a_mac_lands_in_the_form_memdir_serves(machine: Open, remote: Path, tmp_path: Path) -> None:
    """A file committed on a macOS without precomposeUnicode has a decomposed name: memdir serves it under the
    composed one and keeps its name's bytes, so both machines end with the one file, nothing lost or doubled."""
    a, b = pair(machine, remote)
    plain = tmp_path / "plain"
    git(tmp_path, "clone", "-q", str(remote), str(plain))
    nfd = "notes/cafe\u0301 crème.md".replace("crème", "cre\u0300me")
    (plain / "notes").mkdir()
    (plain / nfd).write_bytes("Les réunions du lundi.\r\n".encode())
    git(plain, "add", ".")
    git(plain, "commit", "-qm", "from a mac")
    git(plain, "push", "-q", "origin", "HEAD:main")
    gitsync.git_sync(b)
    assert b.read("notes/café crème.md").body == "Les réunions du lundi.\r\n"
    gitsync.git_sync(b)
    gitsync.git_sync(a)
    assert a.read("notes/café crème.md").body == "Les réunions du lundi.\r\n"
    assert files(Path(a.store.root)) == files(Path(b.store.root))  # type: ignore[attr-defined]
    assert [unicodedata.normalize("NFC", n) for n in remote_texts(remote) if n.startswith("notes/")] == [
        "notes/café crème.md"]


def test_crlf_stays_crlf_whatever_git_is_told(machine: Open, remote: Path, tmp_path: Path) -> None:
    git(tmp_path, "config", "--global", "core.autocrlf", "true")
    a, b = pair(machine, remote)
    a.write("notes/win.md", "line one\r\nline two\r\n")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    assert (tmp_path / "b" / "notes" / "win.md").read_bytes() == (tmp_path / "a" / "notes" / "win.md").read_bytes()
    assert b"\r\n" in (tmp_path / "b" / "notes" / "win.md").read_bytes()


def test_a_tenant_is_synced_with_the_memory_that_holds_it(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, b = pair(machine, remote)
    with memdir.open(tmp_path / "a", tenant="proj-x", actor="cli:a") as t:
        t.write("notes/n.md", "tenant note\n")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    with memdir.open(tmp_path / "b", tenant="proj-x") as t:
        assert t.read("notes/n.md").body == "tenant note\n"
        assert t.history("notes/n.md")[0].actor == "sync:origin"
        with pytest.raises(memdir.InvalidArgument, match="tenant of the memory at"):
            gitsync.git_sync(t)
    assert "tenants/proj-x/notes/n.md" in remote_texts(remote)


# ---------------------------------------------------------------- what never leaves


def test_memdirs_own_data_and_raw_transcripts_never_enter_git(machine: Open, remote: Path) -> None:
    a = machine("a")
    a.write("sessions/raw/s1/part-001.md", "the whole raw conversation\n", type="session")
    a.write("notes/kept.md", "kept\n")
    gitsync.init(a, str(remote))
    names = set(remote_texts(remote))
    assert "notes/kept.md" in names and ".gitignore" in names
    assert not [n for n in names if n.startswith((".memdir/", "sessions/raw/")) or "/.memdir/" in n]


def test_a_forced_private_path_is_refused_on_push(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, _ = pair(machine, remote)
    a.write("sessions/raw/s1/part-001.md", "raw talk\n", type="session")
    git(tmp_path / "a", "add", "-f", "sessions/raw/s1/part-001.md")
    git(tmp_path / "a", "commit", "-qm", "oops")
    with pytest.raises(memdir.InvalidMemory, match=r"sessions/raw/s1/part-001.md is memdir's private data"):
        gitsync.git_sync(a)
    assert "raw talk" not in every_object(remote)


def test_a_secret_planted_on_one_side_never_reaches_the_remote(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, b = pair(machine, remote)
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    (tmp_path / "a" / "notes").mkdir()
    (tmp_path / "a" / "notes" / "aws.md").write_text(f"Deploy notes\r\nkey: {key}\r\n", encoding="utf-8")
    head = git(tmp_path / "a", "rev-parse", "HEAD")
    with pytest.raises(memdir.InvalidMemory, match=r"notes/aws.md: line 2 holds what looks like an AWS access key id"):
        gitsync.git_sync(a)
    assert git(tmp_path / "a", "rev-parse", "HEAD") == head  # nothing committed
    assert gitsync.status(a)["error"].startswith("notes/aws.md: line 2")  # type: ignore[index]
    (tmp_path / "a" / "notes" / "aws.md").write_text("Deploy notes\r\nThe key is in the team's vault.\r\n", encoding="utf-8")
    assert gitsync.git_sync(a).pushed
    gitsync.git_sync(b)
    assert key not in every_object(remote)
    assert b.read("notes/aws.md").body.startswith("Deploy notes")


def test_a_secret_the_journal_kept_but_the_folder_no_longer_holds_is_not_committed(machine: Open, remote: Path,
                                                                                    tmp_path: Path) -> None:
    """The journal replays each change as a commit; one that held a credential, since removed, goes as the folder
    is now instead, so the credential is in no commit."""
    a, _ = pair(machine, remote)
    token = "xoxb-" + "1234567890-abcdefghij"
    (tmp_path / "a" / "notes").mkdir()
    (tmp_path / "a" / "notes" / "slack.md").write_text(f"bot token {token}\n", encoding="utf-8")
    a.sync()  # journaled, as any read of the memory would
    a.write("notes/slack.md", "The bot token is in the vault.\n")
    assert gitsync.git_sync(a).pushed
    assert token not in every_object(remote) and token not in git(tmp_path / "a", "log", "-p", "--all")


def test_a_secret_committed_by_hand_is_refused_naming_the_commit(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, _ = pair(machine, remote)
    (tmp_path / "a" / "deploy.toml").write_text('token = "ghp_' + "a1B2" * 9 + '"\n', encoding="utf-8")
    git(tmp_path / "a", "add", "deploy.toml")
    git(tmp_path / "a", "commit", "-qm", "by hand")
    short = git(tmp_path / "a", "rev-parse", "--short", "HEAD").strip()
    with pytest.raises(memdir.InvalidMemory, match=rf"deploy.toml: line 1 holds what looks like a GitHub token \(commit {short}\)"):
        gitsync.git_sync(a)
    assert "ghp_" not in every_object(remote)


# ---------------------------------------------------------------- a push that fails


def test_a_failed_push_is_reported_and_retried(machine: Open, remote: Path, tmp_path: Path) -> None:
    a, _ = pair(machine, remote)
    a.write("notes/later.md", "written offline\n")
    moved = tmp_path / "elsewhere.git"
    os.rename(remote, moved)
    with pytest.raises(memdir.StoreError, match="could not fetch from origin"):
        gitsync.git_sync(a)
    state = gitsync.status(a)
    assert state is not None and "could not fetch" in (state["error"] or "") and state["waiting"] == 1
    runner = CliRunner()
    stats = runner.invoke(main, ["--root", str(tmp_path / "a"), "stats", "--json"])
    assert '"waiting": 1' in stats.output and "could not fetch" in stats.output
    os.rename(moved, remote)
    gitsync.git_sync(a, push=False)  # a session's pull: the push that failed is still reported
    assert "could not fetch" in (gitsync.status(a) or {}).get("error", "")
    assert gitsync.git_sync(a).pushed
    state = gitsync.status(a)
    assert state is not None and state["error"] is None and state["waiting"] == 0
    assert "notes/later.md" in remote_texts(remote)
