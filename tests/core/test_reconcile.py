"""Reconcile on folders people copy and edit: a copy is the same memory; a hand-broken file is reported where it broke."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import memdir


def _memory(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("user/profile.md", "Dana prefers short answers.\n", description="who Dana is", type="user")
        md.write("feedback/tests.md", "Run the tests before a commit.\n", type="feedback")
        md.write("project/tern.md", "Tern routes support tickets.\n", type="project")
        md.write("project/tern.md", "Tern routes support tickets by intent.\n", type="project")
        md.rename("feedback/tests.md", "feedback/tests-first.md")


def _git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.mark.parametrize("how", ["copy2", "plain copy", "cp -a"])
def test_a_copied_folder_reconciles_clean_and_journals_nothing(tmp_path: Path, how: str) -> None:
    source, copy = tmp_path / "memory", tmp_path / "copy"
    _memory(source)
    with memdir.open(source) as md:
        journal = [(r.seq, r.op, r.path) for r in md.history()]
    if how == "cp -a":
        subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
    else:  # copy2 keeps the mtimes (as rsync -a does), a plain copy gives every file a new one
        shutil.copytree(source, copy, copy_function=shutil.copy2 if how == "copy2" else shutil.copyfile)
    with memdir.open(copy) as md:
        report = md.reconcile()
        assert (report.clean, report.findings) == (True, [])
        assert md.sync() == []
        assert [(r.seq, r.op, r.path) for r in md.history()] == journal  # no `external` record
        assert md.list("project/tern.md")[0].version == md.read("project/tern.md").version  # the new stat is kept
        assert md.undo("project/tern.md").body == "Tern routes support tickets.\n"  # history still works
    with memdir.open(copy) as md:  # and a new process finds nothing to compare
        assert md.reconcile().clean and md.sync() == []


def test_a_copied_folder_still_sees_the_edits_made_after_the_copy(tmp_path: Path) -> None:
    source, copy = tmp_path / "memory", tmp_path / "copy"
    _memory(source)
    shutil.copytree(source, copy, copy_function=shutil.copyfile)
    path = copy / "user" / "profile.md"
    path.write_text(path.read_text().replace("short", "long"))
    with memdir.open(copy) as md:
        assert [(f.kind, f.path) for f in md.reconcile().findings] == [("changed", "user/profile.md")]
        assert md.sync() == ["user/profile.md"]
        assert md.history(limit=1)[0].op == "external"


def test_a_git_clone_of_a_memory_folder_reconciles_clean(tmp_path: Path) -> None:
    source, clone = tmp_path / "memory", tmp_path / "clone"
    _memory(source)
    _git("init", "-q", cwd=source)
    _git("add", "-A", cwd=source)  # .memdir/ keeps itself out (its .gitignore says *)
    _git("commit", "-q", "-m", "memory", cwd=source)
    _git("clone", "-q", str(source), str(clone), cwd=tmp_path)
    assert not (clone / ".memdir").exists()
    committed = {p.relative_to(clone).as_posix(): p.read_bytes() for p in clone.rglob("*") if p.is_file()
                 and ".git" not in p.parts}
    with memdir.open(clone) as md:
        assert md.reconcile().clean
        assert {e.path for e in md.list()} == {"user/profile.md", "feedback/tests-first.md", "project/tern.md"}
    with memdir.open(clone) as md:
        assert md.reconcile().clean and md.sync() == []
    after = {p.relative_to(clone).as_posix(): p.read_bytes() for p in clone.rglob("*") if p.is_file()
             and ".git" not in p.parts and ".memdir" not in p.parts}
    assert after == committed  # opening and checking the clone changed no byte of it


def test_a_clone_with_its_journal_reconciles_clean(tmp_path: Path) -> None:
    """A repository that keeps `.memdir/` too (added by force): the clone's files have new stats, the same bytes."""
    source, clone = tmp_path / "memory", tmp_path / "clone"
    _memory(source)
    with memdir.open(source) as md:
        journal = [(r.seq, r.op, r.path) for r in md.history()]
    _git("init", "-q", cwd=source)
    _git("add", "-A", cwd=source)
    _git("add", "-f", ".memdir/memdir.db", cwd=source)
    _git("commit", "-q", "-m", "memory and journal", cwd=source)
    _git("clone", "-q", str(source), str(clone), cwd=tmp_path)
    with memdir.open(clone) as md:
        assert md.reconcile().clean
        assert [(r.seq, r.op, r.path) for r in md.history()] == journal
