"""Reconcile on folders people copy and edit: a copy is the same memory; a hand-broken file is reported where it broke."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir import model
from memdir.faces.cli import main
from memdir.remember import consolidate


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


# ---------------------------------------------------------------- long files and frontmatter broken by hand

TERN = Path(__file__).parents[1] / "data" / "real" / "claude-code" / "memory" / "tern"
BROKEN = ("feedback_sentry_scrubber.md: frontmatter is not valid YAML at line 3 (mapping values are not allowed in "
          "this context): its writer accepts it and memdir reads it as meant, but refuses to edit the file until the "
          "value is quoted")


def test_frontmatter_broken_by_hand_is_reported_with_its_line_every_time(tmp_path: Path) -> None:
    root = tmp_path / "tern"
    shutil.copytree(TERN, root)
    with memdir.open(root) as md:  # a folder memdir never saw: adopted, and journaled as the owner's edits
        invalid = [(f.path, f.detail) for f in md.reconcile().findings if f.kind == "invalid"]
        assert invalid == [("feedback_sentry_scrubber.md", BROKEN)]
        with pytest.raises(memdir.InvalidMemory) as refused:  # the same words as a write refusing it
            md.write("copy.md", (root / "feedback_sentry_scrubber.md").read_text())
        assert refused.value.message == BROKEN.replace("feedback_sentry_scrubber.md", "copy.md", 1).replace(
            ": its writer accepts it and memdir reads it as meant, but refuses to edit the file until the value is "
            "quoted", "; fix that line between the '---' lines")  # a write says what to fix
        md.reconcile(fix=True)
        assert [f.path for f in md.reconcile().findings if f.kind == "invalid"] == ["feedback_sentry_scrubber.md"]


def test_hand_edits_are_journaled_as_their_owners_not_as_the_process_that_saw_them(root: Path) -> None:
    with memdir.open(root, actor="mcp:server") as md:
        written = md.write("notes/a.md", "a\n").version
        (root / "notes" / "a.md").write_text("---\nname: a: b\n---\na, edited by hand\n")
        (root / "notes" / "b.md").write_text("# dropped in\n")
        assert md.sync() == ["notes/a.md", "notes/b.md"]
        owner = f"external:{getpass.getuser()}"
        assert [(r.op, r.actor) for r in md.history()] == [("external", owner), ("external", owner),
                                                           ("write", "mcp:server")]
        b, a = md.history()[:2]
        assert (a.path, a.old_version, a.new_version) == ("notes/a.md", written, md.read("notes/a.md").version)
        assert (b.path, b.old_version) == ("notes/b.md", None)  # `memdir log`: "- -> v", new to memdir
        (root / "notes" / "b.md").unlink()
        md.sync()
        assert (md.history(limit=1)[0].op, md.history(limit=1)[0].actor) == ("external", "external")  # no file, no owner
        found = {(f.kind, f.path) for f in md.reconcile().findings}
        assert found == {("invalid", "notes/a.md"), ("index", "MEMORY.md")}  # MEMORY.md follows the next write


def test_a_long_file_is_kept_and_flagged_not_refused(root: Path) -> None:
    long = "# Inventory\n\n" + "".join(f"## Room {r}\n" + "".join(f"- item {r}.{i}\n" for i in range(30))
                                        for r in range(8))
    root.mkdir()
    (root / "inventory.md").write_text(long)
    with memdir.open(root) as md:
        report = md.reconcile(fix=True)  # (opening adopted the file: journaled, nothing rewritten)
        assert [(f.kind, f.detail) for f in report.findings if f.path == "inventory.md"] == [
            ("long", "250 lines, over the 200 an agent may write: kept whole; `memdir consolidate` proposes a split "
                     "by its headings")]
        assert md.reconcile().clean  # a notice, nothing to repair
        assert md.read("inventory.md").text == long
        kept = md.write("inventory.md", long + "- one more\n")  # a person may go on writing it
        assert kept.lines == 255  # 251 of theirs, 4 of memdir's stamps
        with pytest.raises(memdir.LimitExceeded, match="inventory.md has 252 lines; the limit is 200"):
            md.for_agent().write("inventory.md", long + "- one more\n- and another\n")
        splits = [a for a in consolidate.plan(md).actions if a.kind == "split"]  # proposed, by its headings
        assert [(a.paths, [o.path for o in a.ops]) for a in splits] == [
            (("inventory.md",), ["inventory.md", *(f"inventory/room-{r}.md" for r in range(8))])]
        assert md.read("inventory.md").body == long + "- one more\n"  # a proposal changes nothing


def test_stats_and_doctor_flag_a_long_file(root: Path) -> None:
    root.mkdir()
    (root / "long.md").write_text("x\n" * 250)
    (root / "short.md").write_text("x\n")
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(root), "doctor"])
    assert "long\tlong.md\t250 lines, over the 200 an agent may write" in out.stdout
    assert "unindexed\tMEMORY.md\t" in out.stdout and out.exit_code == 0  # not written yet (a read changes nothing)
    runner.invoke(main, ["--root", str(root), "reconcile", "--fix"])
    out = runner.invoke(main, ["--root", str(root), "doctor", "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["notices"][0]["path"] == "long.md"
    out = runner.invoke(main, ["--root", str(root), "stats"])
    assert "files: 2 (1 longer than an agent may write, kept whole)" in out.stdout
    assert "long\tlong.md\t250 lines, over the 200 an agent may write" in out.stdout


def test_the_corpus_long_notes_are_imported_whole(tmp_path: Path) -> None:
    from memdir.remember.importer import import_dir

    vault = Path(__file__).parents[1] / "data" / "real" / "obsidian" / "en" / "Homebase"
    with memdir.open(tmp_path / "memory") as md:
        imported = import_dir(md, TERN).imported + import_dir(md, vault).imported
        for source, path in ((TERN / "release_checklist.md", "release_checklist.md"),
                             (vault / "Household" / "Home inventory.md", "Household/Home inventory.md")):
            body = source.read_text().split("---\n", 2)[2]
            assert path in imported and model.count_lines(md.read(path).body) == model.count_lines(body), path
