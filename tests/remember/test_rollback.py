"""Undoing a selection of changes: every file back as before the selection's first change, in one commit, or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import memdir
from memdir.remember import rollback


def _open(tmp_path: Path, actor: str) -> memdir.Memdir:
    return memdir.open(tmp_path / "mem", actor=actor)


def _seqs(md: memdir.Memdir, actor: str) -> list[int]:
    return [r.seq for r in md.history() if r.actor == actor]


def test_undo_everything_one_agent_wrote(tmp_path: Path) -> None:
    person = _open(tmp_path, "alice")
    agent = _open(tmp_path, "agent")
    person.write("project/flock.md", "Launch on 2026-12-15.\n", type="project")
    agent.write("project/flock.md", "Launch on 2026-12-01.\n")  # two changes to one file
    agent.write("project/flock.md", "Launch on 2026-11-01.\n")
    agent.write("project/new.md", "An agent's idea.\n")  # a file the agent created
    agent.rename("project/new.md", "project/idea.md")  # and moved
    person.write("user/profile.md", "Alice.\n")  # not selected, not touched by the agent

    done = rollback.undo(person, _seqs(person, "agent"))

    assert person.read("project/flock.md").body == "Launch on 2026-12-15.\n"
    assert sorted(e.path for e in person.list()) == ["project/flock.md", "user/profile.md"]
    assert sorted((m.path, m.change) for m in done) == [("project/flock.md", "updated"), ("project/idea.md", "deleted")]
    assert person.history(limit=1)[0].actor == "alice"  # one batch, journaled as the person who undid it
    rollback.undo(person, [r.seq for r in person.history()[:2]])  # and the undo is undoable like any change
    assert person.read("project/idea.md").body == "An agent's idea.\n"


def test_a_later_change_by_someone_else_refuses_the_whole_selection(tmp_path: Path) -> None:
    person = _open(tmp_path, "alice")
    agent = _open(tmp_path, "agent")
    agent.write("a.md", "agent's a\n")
    agent.write("b.md", "agent's b\n")
    person.write("b.md", "alice fixed b\n")
    later = person.history(limit=1)[0].seq

    with pytest.raises(memdir.Conflict) as e:
        rollback.undo(person, _seqs(person, "agent"))

    assert e.value.message == (
        f"b.md was changed again by alice at {person.history(limit=1)[0].time} (change #{later}) after the changes "
        "selected; undo that change too, or leave b.md out")
    assert person.read("a.md").body == "agent's a\n"  # nothing was undone
    rollback.undo(person, _seqs(person, "agent") + [later])  # widened to include it: everything goes
    assert person.list() == []


def test_one_change_that_is_still_the_latest_is_a_plain_undo(tmp_path: Path) -> None:
    md = _open(tmp_path, "alice")
    md.write("a.md", "one\n")
    md.write("a.md", "two\n")
    latest = md.history(limit=1)[0]

    [m] = rollback.undo(md, [latest.seq])

    assert (m.path, m.change, m.body) == ("a.md", "restored", "one\n")
    assert md.history(limit=1)[0].op == "undo" and md.history(limit=1)[0].undoes == latest.seq


def test_an_older_change_alone_is_refused_with_the_change_after_it(tmp_path: Path) -> None:
    md = _open(tmp_path, "alice")
    md.write("a.md", "one\n")
    first = md.history(limit=1)[0].seq
    md.write("a.md", "two\n")

    with pytest.raises(memdir.Conflict, match=rf"\(change #{first + 1}\) after the changes selected"):
        rollback.undo(md, [first])
    assert md.read("a.md").body == "two\n"


def test_a_file_changed_by_hand_since_is_a_conflict_and_nothing_changes(tmp_path: Path) -> None:
    md = _open(tmp_path, "alice")
    md.write("a.md", "one\n")
    md.write("b.md", "one\n")
    md.write("a.md", "two\n")
    md.write("b.md", "two\n")
    (tmp_path / "mem" / "b.md").write_text("edited by hand, not synced yet\n")

    with pytest.raises(memdir.Conflict):
        rollback.undo(md, [r.seq for r in md.history(limit=2)])
    assert md.read("a.md").body == "two\n"  # all or nothing


def test_unknown_or_empty_selections_are_refused(tmp_path: Path) -> None:
    md = _open(tmp_path, "alice")
    md.write("a.md", "one\n")
    with pytest.raises(memdir.NotFound, match="change #99 is not in the journal"):
        rollback.undo(md, [99])
    with pytest.raises(memdir.InvalidArgument, match="no changes selected"):
        rollback.undo(md, [])


def test_a_scoped_view_cannot_select_what_it_cannot_see(tmp_path: Path) -> None:
    md = _open(tmp_path, "alice")
    md.write("people/bob/secret.md", "bob's\n")
    hidden = md.history(limit=1)[0].seq
    view = md.scope(read=["people/alice/"], write=["people/alice/"])
    with pytest.raises(memdir.NotFound):
        rollback.undo(view, [hidden])
    assert md.read("people/bob/secret.md").body == "bob's\n"
