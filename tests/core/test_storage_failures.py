"""A full disk reaches every face as one clean line, and a committed change is never reported as failed."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from serving import Running, call

import memdir
from memdir.faces.cli import main
from memdir.faces.tools import handle
from memdir.stores.fs import FileStore

FULL = "cannot write the change: No space left on device; free some disk space and retry"


def disk_full(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_before_the_commit_is_one_line_on_every_face(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "old\n")
    monkeypatch.setattr(os, "write", disk_full)  # staging the new content fails: nothing is committed
    out = CliRunner().invoke(main, ["--root", str(root), "write", "a.md", "--body", "new"])
    assert (out.exit_code, out.output) == (1, f"error: {root}: {FULL}\n")
    with memdir.open(root) as md:
        reply = handle(md, "write_memory_file", {"path": "a.md", "content": "new"})
        assert reply.is_error and reply.text == f"{root}: {FULL}" and reply.data["error"] == "StoreError"
    with Running(root) as server:
        put = call("PUT", f"{server.url}/v1/files/a.md", {"body": "new\n"})
    assert put.status == 503 and put.error == ("StoreError", f"{root}: {FULL}")
    monkeypatch.undo()
    with memdir.open(root) as md:
        assert md.read("a.md").body == "old\n" and len(md.history()) == 1


def test_a_full_disk_after_the_commit_is_success_on_every_face(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FileStore, "derive", disk_full)  # only MEMORY.md cannot be written
    out = CliRunner().invoke(main, ["--root", str(root), "write", "a.md", "--body", "one"])
    assert out.exit_code == 0 and "created a.md (5 lines" in out.stdout
    with memdir.open(root) as md:
        assert not handle(md, "write_memory_file", {"path": "b.md", "content": "two"}).is_error
    with Running(root) as server:
        assert call("PUT", f"{server.url}/v1/files/c.md", {"body": "three\n"}).status == 201
    monkeypatch.undo()
    with memdir.open(root) as md:
        assert [e.path for e in md.list()] == ["a.md", "b.md", "c.md"]
        assert (root / "MEMORY.md").read_text() == md.index() and md.reconcile().clean


def test_a_search_index_that_cannot_be_made_fails_a_sqlite_write_whole_and_not_a_folder_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by `make soak` (a full disk as the first write opened the index): on SQLite the index is
    written in the write's own transaction, so the change fails as one StoreError and nothing is kept;
    in a folder it is derived after the commit, so the write stands and a later search rebuilds it."""
    from memdir.errors import StoreError
    from memdir.search import fts

    monkeypatch.setattr(fts, "TOKENIZE", "no_such_tokenizer")  # creating the FTS5 table fails, as a full disk would
    with memdir.open(f"sqlite:///{tmp_path}/memory.db") as md:
        with pytest.raises(StoreError, match="search index: .*no_such_tokenizer.*; rebuild it with `memdir reindex`"):
            md.write("a.md", "one\n")
        assert md.history() == [] and md.list() == []
    with memdir.open(tmp_path / "folder") as md:
        assert md.write("a.md", "one\n").change == "created"
    monkeypatch.undo()
    with memdir.open(tmp_path / "folder") as md:
        assert [h.path for h in md.search("one")] == ["a.md"]
