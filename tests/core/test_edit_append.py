"""`Memdir.edit` (exact, unique replacement) and `Memdir.append` (timestamped capture)."""

import re
from pathlib import Path

import pytest

import memdir
from memdir import Conflict, Forbidden, InvalidArgument, InvalidMemory, LimitExceeded, NotFound

STAMPED = re.compile(r"^- \[\d{4}-\d\d-\d\d \d\d:\d\d\] (.*)$")


# ---------------------------------------------------------------- edit


def test_edit_replaces_the_one_occurrence_and_keeps_everything_else(md: memdir.Memdir) -> None:
    first = md.write("project/flock.md", "Launch: 2026-12-15.\nStack: PostgreSQL.\n",
                     description="Flock launch", type="project", tags=["launch"])
    got = md.edit("project/flock.md", "2026-12-15", "2027-01-10")
    assert got.change == "updated" and got.version != first.version
    after = md.read("project/flock.md")
    assert after.body == "Launch: 2027-01-10.\nStack: PostgreSQL.\n"
    assert (after.description, after.type, after.tags, after.created) == ("Flock launch", "project", ("launch",), first.created)
    assert after.version == got.version
    assert md.history("project/flock.md")[0].op == "write"


def test_edit_can_change_frontmatter_including_removing_a_key(md: memdir.Memdir) -> None:
    md.write("p.md", "body\n", description="old words", tags=["x"])
    md.edit("p.md", "description: old words", "description: new words")
    assert md.read("p.md").description == "new words"
    md.edit("p.md", "tags: [x]\n", "")
    got = md.read("p.md")
    assert "tags" not in got.meta and got.description == "new words"


def test_edit_never_turns_frontmatter_into_body_text(md: memdir.Memdir) -> None:
    before = md.write("p.md", "body\n", description="kept in the index")
    with pytest.raises(InvalidArgument, match=r"^p.md: this edit would turn the frontmatter \(lines 1-5\) into body text"):
        md.edit("p.md", "---\ndescription", "A title\n---\ndescription")
    assert md.read("p.md").version == before.version


def test_edit_absent_text_fails_and_changes_nothing(md: memdir.Memdir) -> None:
    before = md.write("p.md", "alpha\nbeta\n")
    with pytest.raises(InvalidArgument, match=r"^p.md does not contain 'gamma'; read the file and copy the exact text"):
        md.edit("p.md", "gamma", "delta")
    assert md.read("p.md").version == before.version
    assert len(md.history("p.md")) == 1


def test_edit_ambiguous_text_names_the_lines(md: memdir.Memdir) -> None:
    before = md.write("p.md", "todo: a\nsomething\ntodo: b\n")
    with pytest.raises(InvalidArgument) as e:
        md.edit("p.md", "todo", "done")
    body_start = md.read("p.md").text.splitlines().index("todo: a") + 1
    assert str(e.value) == (
        f"p.md contains 'todo' 2 times (lines {body_start}, {body_start + 2}); "
        "include more of the surrounding text so it is unique"
    )
    assert md.read("p.md").version == before.version
    md.edit("p.md", "todo: b", "done: b")
    assert md.read("p.md").body == "todo: a\nsomething\ndone: b\n"


def test_edit_counts_overlapping_occurrences(md: memdir.Memdir) -> None:
    md.write("p.md", "aaa\n")
    with pytest.raises(InvalidArgument, match="2 times"):
        md.edit("p.md", "aa", "b")


def test_edit_errors(md: memdir.Memdir) -> None:
    with pytest.raises(NotFound, match="nope.md does not exist; create it with a write first"):
        md.edit("nope.md", "a", "b")
    md.write("p.md", "a\n")
    with pytest.raises(InvalidArgument, match="the text to replace is empty"):
        md.edit("p.md", "", "b")
    with pytest.raises(Conflict, match="changed since it was read"):
        md.edit("p.md", "a", "b", expect="0" * 16)
    assert md.read("p.md").body == "a\n"


def test_edit_goes_through_limits_secret_guard_and_schema(root: Path) -> None:
    with memdir.open(root, max_lines=10, agent=True) as md:
        md.write("p.md", "one line\n")
        version = md.read("p.md").version
        with pytest.raises(LimitExceeded, match="the limit is 10"):
            md.edit("p.md", "one line", "x\n" * 20)
        with pytest.raises(InvalidMemory, match="looks like an AWS access key id"):
            md.edit("p.md", "one line", "key AKIAABCDEFGHIJKLMNOP")
        with pytest.raises(InvalidMemory, match="type 'bogus' is not one of"):
            md.edit("p.md", "updated:", "type: bogus\nupdated:")
        with pytest.raises(InvalidMemory, match="never closed"):
            md.edit("p.md", "---\none", "one")
        assert md.read("p.md").version == version


def test_edit_identical_text_is_unchanged(md: memdir.Memdir) -> None:
    a = md.write("p.md", "same\n")
    b = md.edit("p.md", "same", "same")
    assert (b.change, b.version) == ("unchanged", a.version)


def test_edit_and_undo(md: memdir.Memdir) -> None:
    md.write("p.md", "v1\n")
    md.edit("p.md", "v1", "v2")
    md.undo("p.md")
    assert md.read("p.md").body == "v1\n"


# ---------------------------------------------------------------- append


def test_append_creates_then_adds_timestamped_lines(md: memdir.Memdir) -> None:
    created = md.append("sessions/inbox.md", "Alice prefers tea")
    assert created.change == "created"
    got = md.append("sessions/inbox.md", "  Bob   is allergic\tto nuts ")
    assert got.change == "updated"
    body = md.read("sessions/inbox.md").body.splitlines()
    assert [STAMPED.match(line).group(1) for line in body] == ["Alice prefers tea", "Bob is allergic to nuts"]  # type: ignore[union-attr]
    assert len(md.history("sessions/inbox.md")) == 2


def test_append_stamp_is_utc_now(md: memdir.Memdir) -> None:
    import datetime as dt

    before = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    md.append("a.md", "x")
    after = dt.datetime.now(dt.UTC)
    stamp = re.match(r"- \[(.*?)\]", md.read("a.md").body)
    assert stamp is not None
    when = dt.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=dt.UTC)
    assert before <= when <= after


def test_append_keeps_metadata_and_body(md: memdir.Memdir) -> None:
    md.write("user/profile.md", "# Profile\nLikes hiking.", description="who the user is", type="user")
    md.append("user/profile.md", "Moved to Lyon")
    got = md.read("user/profile.md")
    assert (got.description, got.type) == ("who the user is", "user")
    assert got.body.startswith("# Profile\nLikes hiking.\n- [")
    assert got.body.endswith("] Moved to Lyon\n")


def test_append_refuses_bad_lines_and_changes_nothing(md: memdir.Memdir, root: Path) -> None:
    with pytest.raises(InvalidArgument, match="append takes one line, got 2"):
        md.append("a.md", "one\ntwo")
    with pytest.raises(InvalidArgument, match="the line to append is empty"):
        md.append("a.md", "   ")
    with pytest.raises(InvalidMemory, match="looks like a GitHub token"):
        md.append("a.md", "token ghp_" + "a" * 36)
    assert not (root / "a.md").exists()
    assert md.history() == []


def test_append_respects_the_line_limit(root: Path) -> None:
    with memdir.open(root, max_lines=2, agent=True) as md:  # 2 facts: memdir's 4 lines of stamps do not count
        for i in range(2):
            md.append("a.md", f"fact {i}")
        with pytest.raises(LimitExceeded, match="a.md has 3 lines; the limit is 2"):
            md.append("a.md", "one too many")
        assert md.read("a.md").body.count("\n") == 2 and md.read("a.md").lines == 6


def test_scope_applies_to_edit_and_append(md: memdir.Memdir) -> None:
    md.write("people/bob/notes.md", "bob\n")
    alice = md.scope(read=["household/"], write=["people/alice/"])
    with pytest.raises(Forbidden):
        alice.edit("people/bob/notes.md", "bob", "alice was here")
    with pytest.raises(Forbidden):
        alice.append("household/list.md", "milk")
    alice.append("people/alice/inbox.md", "milk")
    assert md.read("people/bob/notes.md").body == "bob\n"
    assert [e.path for e in md.list()] == ["people/alice/inbox.md", "people/bob/notes.md"]
