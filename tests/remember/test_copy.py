"""`memdir copy`: a whole tenant between any two backends, resumable and verified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Backend, make_backend

import memdir
from memdir.faces.cli import main
from memdir.remember.copy import copy_tenant

PAIRS = [("fs", "sqlite"), ("sqlite", "postgres"), ("postgres", "s3"), ("s3", "fs")]


def backends(request: pytest.FixtureRequest, tmp_path: Path, src: str, dst: str) -> tuple[Backend, Backend]:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    return make_backend(src, request, tmp_path / "a"), make_backend(dst, request, tmp_path / "b")


def build(md: memdir.Memdir) -> None:
    md.write("user/profile.md", "Data scientist.\n", type="user", description="who the user is")
    md.write("project/flock.md", "Launch 2026-12-15.\n", type="project", description="flock")
    md.write("project/flock.md", "Launch moved to 2027-01-10.\n")
    md.rename("user/profile.md", "user/role.md")
    md.write("tmp.md", "scratch\n")
    md.delete("tmp.md")
    md.undo("project/flock.md")
    md.write("日本/メモ.md", "unicode ✓\n")


def snapshot(md: memdir.Memdir) -> tuple[object, ...]:
    files = {e.path: md.read(e.path).text for e in md.list()}
    history = [(r.seq, r.op, r.path, r.dest, r.actor, r.time, r.old, r.new, r.undoes) for r in md.history()]
    return files, history, md.index()


@pytest.mark.parametrize("src_name, dst_name", PAIRS)
def test_copy_carries_files_journal_and_index_across_backends(
    request: pytest.FixtureRequest, tmp_path: Path, src_name: str, dst_name: str
) -> None:
    src, dst = backends(request, tmp_path, src_name, dst_name)
    with src.open("acme") as md:
        build(md)
        before = snapshot(md)
    seen: list[tuple[str, int, int]] = []
    report = copy_tenant(src.location, dst.location, src.tenant("acme"), progress=lambda *a: seen.append(a), batch=3)
    assert dst.tenant("acme") == src.tenant("acme") or dst.name != src.name
    assert report.verified and report.journal == 8 and report.replayed == 8 and report.files == 3
    assert ("journal", 8, 8) in seen and seen[-1] == ("verify copy", 3, 3)
    with memdir.open(dst.location, tenant=src.tenant("acme")) as md:
        assert snapshot(md) == before
        assert md.store.get("MEMORY.md").data == md.index().encode()  # type: ignore[union-attr]
        assert md.undo("日本/メモ.md").change == "deleted"  # the copied journal works like the original
        assert md.reconcile().clean
    with pytest.raises(memdir.Conflict, match="has 1 journal record that the source lacks"):
        copy_tenant(src.location, dst.location, src.tenant("acme"))  # the destination moved on after the copy


def test_an_interrupted_copy_resumes_where_it_stopped(tmp_path: Path) -> None:
    src, dst = str(tmp_path / "memory"), f"sqlite://{tmp_path / 'copy.db'}"
    with memdir.open(src) as md:
        for i in range(10):
            md.write(f"n{i}.md", f"note {i}\n")

    def stop(what: str, done: int, total: int) -> None:
        if done >= 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copy_tenant(src, dst, progress=stop, batch=2)
    with memdir.open(dst) as md:
        assert len(md.history()) == 4
    report = copy_tenant(src, dst, batch=2)
    assert (report.resumed_after, report.replayed, report.verified) == (4, 6, True)
    with memdir.open(dst) as md:
        assert [r.seq for r in md.history()] == list(range(10, 0, -1))


def test_content_the_journal_does_not_explain_is_brought_in_line(tmp_path: Path) -> None:
    src, dst = tmp_path / "memory", f"sqlite://{tmp_path / 'copy.db'}"
    with memdir.open(src) as md:
        md.write("p.md", "journaled\n")
    (src / "p.md").write_text("edited by hand, never reconciled\n")
    report = copy_tenant(src, dst)
    assert (report.synced, report.verified) == (1, True)
    with memdir.open(dst) as md:
        assert md.read("p.md").text == "edited by hand, never reconciled\n"
        assert [r.op for r in md.history()] == ["external", "write"]
    assert copy_tenant(src, dst).verified  # running it again is harmless


def test_copy_refuses_a_destination_with_another_history_and_a_missing_source(tmp_path: Path) -> None:
    src, dst = tmp_path / "memory", f"sqlite://{tmp_path / 'copy.db'}"
    with memdir.open(src) as md:
        md.write("p.md", "source\n")
    with memdir.open(dst) as md:
        md.write("q.md", "something else\n")
    with pytest.raises(memdir.Conflict, match="differs from the source's at record #1; copy into an empty tenant"):
        copy_tenant(src, dst)
    with pytest.raises(memdir.NotFound, match="no memory folder"):
        copy_tenant(tmp_path / "nowhere", dst)
    with pytest.raises(memdir.NotFound, match="has no memories for tenant ghost and no journal"):
        copy_tenant(dst, f"sqlite://{tmp_path / 'other.db'}", "ghost")


def test_cli_copy_reports_progress_on_stderr_and_json_on_stdout(tmp_path: Path) -> None:
    runner = CliRunner()
    src = str(tmp_path / "memory")
    assert runner.invoke(main, ["--root", src, "--tenant", "acme", "write", "a.md", "--body", "a"]).exit_code == 0
    dst = f"sqlite://{tmp_path / 'm.db'}"
    result = runner.invoke(main, ["copy", src, dst, "--tenant", "acme", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["files"], report["journal"], report["verified"], report["tenant"]) == (1, 1, True, "acme")
    assert "copy: journal 1/1" in result.stderr
    shown = runner.invoke(main, ["--root", dst, "--tenant", "acme", "read", "a.md"])
    assert shown.exit_code == 0 and shown.stdout.endswith("a\n")
