from pathlib import Path

import pytest

import memdir
from memdir import (
    ANY,
    Conflict,
    InvalidArgument,
    InvalidMemory,
    InvalidPath,
    LimitExceeded,
    NotFound,
    RateLimited,
)


def files(root: Path) -> dict[str, str]:
    """Every visible file under root (what a person would see), with contents."""
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.parts
    }


# ---------------------------------------------------------------- write and read



def test_body_may_carry_frontmatter_and_keywords_win(md: memdir.Memdir) -> None:
    md.write("p.md", "---\nname: from body\ntype: project\nowner: alice\n---\nhello\n", name="from keyword")
    got = md.read("p.md")
    assert (got.name, got.type, got.meta["owner"]) == ("from keyword", "project", "alice")


def test_rewrite_keeps_omitted_metadata_and_empty_clears_it(md: memdir.Memdir) -> None:
    first = md.write("p.md", "v1\n", name="n", description="d", type="project", tags=["a"])
    md.write("p.md", "v2\n")
    got = md.read("p.md")
    assert (got.name, got.description, got.type, got.tags, got.body) == ("n", "d", "project", ("a",), "v2\n")
    assert got.created == first.created
    md.write("p.md", "v3\n", description="", tags=[])
    got = md.read("p.md")
    assert "description" not in got.meta and "tags" not in got.meta
    assert got.description == "v3"  # derived from the body again




HAND = (
    "---\n"
    "# reviewed by alice\n"
    "owner: alice\n"
    "links: {jira: X-1}\n"
    "name: flock  # the app\n"
    "type: project\n"
    "---\n"
    "Launch in December.\n"
)


def test_a_persons_frontmatter_survives_a_write_byte_for_byte(md: memdir.Memdir, root: Path) -> None:
    (root / "project").mkdir(parents=True)
    (root / "project/flock.md").write_text(HAND)
    md.reconcile(fix=True)
    md.write("project/flock.md", "Launch in January.\n", description="the Flock launch")
    text = (root / "project/flock.md").read_text()
    head, body = HAND.split("---\nLaunch")
    dates = text[len(head) + len("description: the Flock launch\n"):].split("---\n")[0]
    assert text == head + "description: the Flock launch\n" + dates + "---\nLaunch in January.\n"
    assert dates.startswith("created: ") and "\nupdated: " in dates and dates.count("\n") == 2
    md.append("project/flock.md", "Beta testers signed up")
    md.edit("project/flock.md", "January", "February")
    assert (root / "project/flock.md").read_text().startswith(head + "description: the Flock launch\ncreated: ")


def test_a_batch_write_keeps_a_persons_frontmatter_too(md: memdir.Memdir, root: Path) -> None:
    (root / "flock.md").write_text(HAND)
    md.reconcile(fix=True)
    cur = md.read("flock.md")
    md.apply([memdir.Op.write("flock.md", HAND.replace("December", "January"), expect=cur.version)])
    text = (root / "flock.md").read_text()
    assert text.startswith(HAND.split("---\nLaunch")[0] + "created: ") and text.endswith("---\nLaunch in January.\n")


def test_a_write_changes_only_the_keys_it_is_given(md: memdir.Memdir, root: Path) -> None:
    (root / "flock.md").write_text(HAND)
    md.reconcile(fix=True)
    md.write("flock.md", "Launch in December.\n", type="reference")
    assert (root / "flock.md").read_text().startswith(HAND.split("---\nLaunch")[0].replace("type: project", "type: reference"))
    md.write("flock.md", "Launch in December.\n", name="")  # "" clears: the line goes, its comment with it
    assert "name:" not in (root / "flock.md").read_text() and "owner: alice\nlinks: {jira: X-1}\n" in (root / "flock.md").read_text()


def test_a_write_over_invalid_frontmatter_is_refused_with_the_line(md: memdir.Memdir, root: Path) -> None:
    broken = "---\nname: flock\ntype: project\ndescription: launch: soon\n---\nbody\n"
    (root / "flock.md").write_text(broken)
    md.reconcile(fix=True)
    message = (
        "flock.md: frontmatter is not valid YAML at line 4 (mapping values are not allowed in this context); "
        "fix that line between the '---' lines"
    )
    for attempt in (lambda: md.write("flock.md", "new body\n"), lambda: md.append("flock.md", "a fact")):
        with pytest.raises(InvalidMemory) as err:
            attempt()
        assert str(err.value) == message
    assert (root / "flock.md").read_text() == broken
    md.edit("flock.md", "launch: soon", "'launch: soon'")  # fixing the line is how to go on
    assert md.read("flock.md").description == "launch: soon" and md.read("flock.md").type == "project"


def test_text_is_stored_as_written_without_a_newline_added(md: memdir.Memdir) -> None:
    assert md.write("a.md", "no final newline").body == "no final newline"
    assert md.write("b.md", "---\nname: b\n---\n").body == ""


def test_read_tolerates_hand_written_files(md: memdir.Memdir, root: Path) -> None:
    (root / "hand.md").write_text("---\nbroken: [\n---\n# Hand notes\n")
    got = md.read("hand.md")
    assert got.meta == {"broken": "["} and got.text.startswith("---\nbroken")  # the rest of the line, as written
    (root / "list.md").write_text("---\n- not\n- a mapping\n---\n# Hand notes\n")
    got = md.read("list.md")
    assert got.meta == {} and got.text.startswith("---\n- not")  # nothing to read: the block is text


def test_non_utf8_file_is_reported_not_crashed(md: memdir.Memdir, root: Path) -> None:
    (root / "bin.md").write_bytes(b"\xff\xfe junk")
    with pytest.raises(InvalidMemory, match="not UTF-8"):
        md.read("bin.md")


def test_read_text_is_read_without_the_parse(md: memdir.Memdir, root: Path) -> None:
    written = md.write("notes/a.md", "Body.\n", description="a note")
    assert md.read_text("./notes/a.md") == ("notes/a.md", md.read("notes/a.md").text, written.version)
    (root / "notes" / "a.md").write_text("---\nbroken: [\n---\nby hand\n")  # seen at once, parsed or not
    path, text, version = md.read_text("notes/a.md")
    assert text.endswith("by hand\n") and version == md.read("notes/a.md").version != written.version
    (root / "bin.md").write_bytes(b"\xff\xfe junk")
    with pytest.raises(InvalidMemory, match="not UTF-8"):
        md.read_text("bin.md")
    with pytest.raises(NotFound):
        md.read_text("missing.md")
    view = md.scope(read=["other/"])
    with pytest.raises(NotFound) as hidden:
        view.read_text("notes/a.md")
    with pytest.raises(NotFound) as never:
        view.read_text("notes/never.md")
    assert str(hidden.value).replace("a.md", "x") == str(never.value).replace("never.md", "x")  # nothing revealed


@pytest.mark.parametrize("path", ["../x.md", "/abs.md", "MEMORY.md", "a/MEMORY.md", ".memdir/x.md", "x.txt"])
def test_path_attacks_are_refused_and_change_nothing(md: memdir.Memdir, root: Path, path: str) -> None:
    md.write("keep.md", "keep\n")
    before = files(root)
    with pytest.raises(InvalidPath):
        md.write(path, "attack\n")
    assert files(root) == before
    assert not (root.parent / "x.md").exists() and not Path("/abs.md").exists()


def test_symlink_out_of_the_root_is_refused(md: memdir.Memdir, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    (root / "link").symlink_to(outside)
    with pytest.raises(InvalidPath, match="symlink"):
        md.read("link/secret.md")
    with pytest.raises(InvalidPath, match="symlink"):
        md.write("link/new.md", "escape\n")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


@pytest.mark.parametrize(
    "kwargs, error, says",
    [
        ({"type": "opinion"}, InvalidMemory, "type 'opinion' is not one of"),
        ({"name": "x" * 101}, InvalidMemory, "name is 101 characters; the limit is 100"),
        ({"description": "two\nlines"}, InvalidMemory, "must be one line"),
        ({"description": "d" * 301}, InvalidMemory, "the limit is 300"),
    ],
)
def test_schema_errors_say_what_to_do(md: memdir.Memdir, root: Path, kwargs: dict, error: type, says: str) -> None:
    md.write("keep.md", "keep\n")
    before = files(root)
    with pytest.raises(error, match=says):
        md.write("p.md", "body\n", **kwargs)
    assert files(root) == before
    assert len(md.history()) == 1


def test_line_limit_message_is_one_actionable_line(md: memdir.Memdir) -> None:
    agent = md.for_agent()
    with pytest.raises(LimitExceeded) as err:
        agent.write("feedback/x.md", "line\n" * 408)
    assert str(err.value) == (
        "feedback/x.md has 408 lines; the limit is 200: split it into smaller topic files or summarise it"
    )
    assert (err.value.limit, err.value.actual, err.value.path) == (200, 408, "feedback/x.md")


def test_byte_limit_counts_the_whole_file(md: memdir.Memdir) -> None:
    with pytest.raises(LimitExceeded, match="big.md is 25,601 bytes; the limit is 25,600"):
        md.for_agent().write("big.md", "x" * 25_601)
    assert md.for_agent().write("fits.md", "x" * 25_600).size > 25_600  # with memdir's stamps, which do not count


def test_a_person_keeps_a_long_file_whole_and_an_agent_keeps_to_the_limits(md: memdir.Memdir) -> None:
    long = "".join(f"- step {i}\n" for i in range(300))
    kept = md.write("release.md", long)  # the library and the command line write as a person
    assert (kept.change, kept.body, kept.lines) == ("created", long, 304)
    with pytest.raises(LimitExceeded, match="release.md has 301 lines; the limit is 200"):
        md.for_agent().write("release.md", long + "- one more\n")
    assert md.read("release.md").body == long  # refused whole
    assert md.for_agent().write("short.md", "- a\n" * 200).lines == 204  # 200 lines of its own: the stamps are memdir's
    with pytest.raises(LimitExceeded, match=r"big.md is 1,048,577 bytes; memdir keeps files up to 1,048,576: "
                                            "split it into smaller topic files, or raise max_file_bytes in memdir.toml"):
        md.write("big.md", "x" * (1024 * 1024 + 1))


def test_the_ceiling_is_set_in_memdir_toml(root: Path) -> None:
    root.mkdir()
    (root / "memdir.toml").write_text("max_file_bytes = 2000000\n")
    with memdir.open(root) as md:
        assert md.write("big.md", "x\n" * 600_000).lines == 600_004
        with pytest.raises(LimitExceeded, match="memdir keeps files up to 2,000,000"):
            md.write("bigger.md", "x" * 2_000_001)


def test_secrets_are_refused_unless_the_guard_is_off(root: Path) -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    with memdir.open(root) as md:
        with pytest.raises(InvalidMemory, match="aws.md: line 1 contains what looks like an AWS access key id"):
            md.write("aws.md", f"the key is {key}\n")
        assert not (root / "aws.md").exists()
    with memdir.open(root, secret_guard=False) as md:
        assert md.write("aws.md", f"the key is {key}\n").change == "created"


def test_rate_limit_refuses_the_write_past_the_budget(root: Path) -> None:
    with memdir.open(root, writes_per_minute=3) as md:
        for i in range(3):
            md.write(f"n{i}.md", "x\n")
        with pytest.raises(RateLimited, match="more than 3 writes per minute") as err:
            md.write("n3.md", "x\n")
        assert err.value.retry_after > 0
        assert not (root / "n3.md").exists()


def test_body_must_be_text(md: memdir.Memdir) -> None:
    with pytest.raises(InvalidArgument, match="body must be text"):
        md.write("p.md", b"bytes")  # type: ignore[arg-type]


# ---------------------------------------------------------------- grep (more in tests/stores/test_conformance.py)


def test_grep_finds_lines_case_insensitively(md: memdir.Memdir, root: Path) -> None:
    md.write("a.md", "Webhooks retry\nother\n")
    md.write("sub/b.md", "no match\nwebhook signing\n")
    (root / "hand.md").write_text("WEBHOOK by hand\n")
    md.reconcile(fix=True)  # grep reads the search index, which follows the catalog
    hits = md.grep("webhook")
    assert [(h.path, h.text) for h in hits] == [
        ("a.md", "Webhooks retry"), ("hand.md", "WEBHOOK by hand"), ("sub/b.md", "webhook signing")]
    assert [h.path for h in md.grep("webhook", ignore_case=False)] == ["sub/b.md"]
    assert [h.path for h in md.grep("webhook", prefix="sub")] == ["sub/b.md"]
    assert md.grep("(", fixed=True) == []
    with pytest.raises(InvalidArgument, match="not a valid regular expression"):
        md.grep("(")


# ---------------------------------------------------------------- journal and undo


def test_undo_refuses_when_the_file_changed_outside(md: memdir.Memdir, root: Path) -> None:
    md.write("p.md", "one\n")
    md.write("p.md", "two\n")
    (root / "p.md").write_text("edited by hand\n")
    with pytest.raises(Conflict, match="changed since journal change"):
        md.undo("p.md")
    assert (root / "p.md").read_text() == "edited by hand\n"
    with pytest.raises(NotFound, match="no journaled change"):
        md.undo("never.md")


def test_journal_is_append_only(md: memdir.Memdir) -> None:
    import sqlite3

    md.write("p.md", "x\n")
    db = sqlite3.connect(md.store.internal / "memdir.db")  # type: ignore[attr-defined]
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM journal")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE journal SET op = 'x'")


# ---------------------------------------------------------------- reconcile


def test_reconcile_picks_up_hand_edits_and_journals_them(md: memdir.Memdir, root: Path) -> None:
    md.write("kept.md", "kept\n")
    md.write("gone.md", "gone\n")
    md.write("edited.md", "before\n")
    (root / "gone.md").unlink()
    (root / "edited.md").write_text("# After\n")
    (root / "new").mkdir()
    (root / "new" / "dropped.md").write_text("# Dropped in\n")
    report = md.reconcile()
    kinds = sorted((f.kind, f.path) for f in report.findings)
    assert kinds == [("changed", "edited.md"), ("missing", "gone.md"), ("new", "new/dropped.md")]
    assert [e.path for e in md.list()] == ["edited.md", "gone.md", "kept.md"]  # a check changes nothing
    fixed = md.reconcile(fix=True)
    assert fixed.fixed
    assert [e.path for e in md.list()] == ["edited.md", "kept.md", "new/dropped.md"]
    assert "Dropped in" in md.index() and "After" in md.index()
    assert md.reconcile().clean
    assert [r.op for r in md.history("edited.md")][:1] == ["external"]
    assert md.undo("edited.md").body == "before\n"  # a hand edit can be undone too


def test_sync_catches_up_with_hand_edits_as_external_changes(md: memdir.Memdir, root: Path) -> None:
    md.write("kept.md", "kept\n", description="kept as is")
    md.write("gone.md", "gone\n", description="deleted by hand")
    md.write("edited.md", "body\n", description="old words")
    md.search("words")  # the search index exists, so it must follow too
    (root / "gone.md").unlink()
    text = (root / "edited.md").read_text()
    (root / "edited.md").write_text(text.replace("old words", "new words"))
    (root / "dropped.md").write_text("# Dropped in by hand\n")
    assert md.sync() == ["dropped.md", "edited.md", "gone.md"]
    assert [e.path for e in md.list()] == ["dropped.md", "edited.md", "kept.md"]
    assert "new words" in md.index() and "old words" not in md.index()
    assert "old words" in (root / "MEMORY.md").read_text()  # journaled by a read: MEMORY.md follows the next write
    assert [h.path for h in md.search("words")] == ["edited.md"]
    listed = md.list("edited.md")[0]
    md.write("edited.md", "again\n", expect=listed.version)  # the version shown is the one on disk
    assert (root / "MEMORY.md").read_text() == md.index() and "dropped.md" in md.index()
    assert [r.op for r in md.history("gone.md")] == ["external", "write"]
    assert md.sync() == []  # nothing changed since
    assert md.undo("gone.md").body == "gone\n"


def test_reads_are_parsed_once_per_version_and_see_hand_edits_at_once(md: memdir.Memdir, root: Path) -> None:
    md.write("a.md", "first\n", description="alpha")
    one, two = md.read("a.md"), md.read("a.md")
    assert one == two and one is not two and one.meta is not two.meta  # a copy each time: callers may change it
    one.meta["description"] = "changed by a caller"
    assert md.read("a.md").description == "alpha" and md.read("a.md").meta["description"] == "alpha"
    (root / "a.md").write_text((root / "a.md").read_text().replace("first", "edited"))
    assert md.read("a.md").body == "edited\n"


def test_sync_of_named_paths_looks_only_at_those(md: memdir.Memdir, root: Path) -> None:
    md.write("a.md", "a\n", description="alpha")
    (root / "a.md").write_text("# alpha edited\n")
    (root / "b.md").write_text("# beta\n")
    assert md.sync(["b.md", "MEMORY.md", ".memdir/tmp/1.md", "notes.txt"]) == ["b.md"]
    assert md.list("a.md")[0].description == "alpha"  # not named: not looked at
    assert md.sync(["a.md"]) == ["a.md"]
    assert md.list("a.md")[0].description == "alpha edited"


def test_a_new_process_sees_the_index_as_stored_and_renders_only_what_changed(root: Path) -> None:
    with memdir.open(root, index_max_lines=8) as md:
        for i in range(12):
            md.write(f"big/n{i:02d}.md", "x\n", description=f"item {i}")
        md.write("small/one.md", "x\n", description="the small one")
        before = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("MEMORY.md")}
    assert set(before) == {"MEMORY.md", "big/MEMORY.md"}
    with memdir.open(root, index_max_lines=8) as md:
        assert md.index() == before["MEMORY.md"] and md._state.derived.catalog is None  # read as stored
        md.write("small/two.md", "x\n", description="the second small one")
        assert (root / "big" / "MEMORY.md").read_text() == before["big/MEMORY.md"]
        for i in range(12):
            md.delete(f"big/n{i:02d}.md")  # big fits inline again: its own index goes
        assert not (root / "big" / "MEMORY.md").exists()
        assert md.reconcile().clean


def test_reconcile_rebuilds_a_damaged_index(md: memdir.Memdir, root: Path) -> None:
    md.write("a.md", "a\n", description="alpha")
    (root / "MEMORY.md").write_text("garbage\n")
    assert [f.kind for f in md.reconcile().findings] == ["index"]
    md.reconcile(fix=True)
    assert (root / "MEMORY.md").read_text() == md.index()


def test_reconcile_reports_files_that_break_limits(md: memdir.Memdir, root: Path) -> None:
    (root / "long.md").write_text("x\n" * 300)
    (root / "typed.md").write_text("---\ntype: nonsense\n---\nbody\n")
    (root / "dated.md").write_text("---\ncreated: 12\n---\nbody\n")  # an edit keeps it, and would be refused
    findings = {(f.kind, f.path, f.detail) for f in md.reconcile(fix=True).findings if f.kind not in ("new", "index", "unindexed")}
    assert findings == {
        ("long", "long.md", "300 lines, over the 200 an agent may write: kept whole; `memdir consolidate` proposes a "
                            "split by its headings"),
        ("theirs", "typed.md", "type: 'nonsense': another tool's values, which memdir reads as meant (its own writes "
                               "would not set them); not a problem"),
        ("invalid", "dated.md", "dated.md: created must be an absolute date such as 2026-03-05, got 12"),
    }
    assert [e.path for e in md.list()] == ["dated.md", "long.md", "typed.md"]  # still listed: nothing is hidden
    again = md.reconcile()  # journaled now, and still reported: a check looks at every file
    assert {(f.kind, f.path) for f in again.findings} == {("long", "long.md"), ("theirs", "typed.md"), ("invalid", "dated.md")}
    assert not again.clean


def test_opening_an_existing_folder_keeps_working_after_reopen(root: Path) -> None:
    with memdir.open(root) as a:
        a.write("p.md", "one\n", description="first")
    with memdir.open(root) as b:
        assert b.read("p.md").body == "one\n"
        assert "first" in b.index()
        b.write("p.md", "two\n", expect=b.read("p.md").version)


def test_open_without_create_refuses_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="no memory folder"):
        memdir.open(tmp_path / "missing", create=False)


def test_unknown_location_scheme(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="unknown scheme 'ftp'"):
        memdir.open("ftp://x/y")
    with memdir.open(f"file://{tmp_path / 'm'}") as md:
        assert md.write("a.md", "a\n").change == "created"


def test_expect_default_is_any(md: memdir.Memdir) -> None:
    md.write("p.md", "1\n")
    assert md.write("p.md", "2\n", expect=ANY).change == "updated"


def test_index_files_stay_right_when_two_processes_take_turns(root: Path) -> None:
    with memdir.open(root) as a, memdir.open(root) as b:
        a.write("x.md", "x\n", description="first words")
        b.write("x.md", "x\n", description="second words")
        a.write("x.md", "x\n", description="first words")  # the text a wrote before, but b's is on disk now
        assert "first words" in (root / "MEMORY.md").read_text()
        assert b.reconcile().clean


# ---------------------------------------------------------------- a write checks bounds, then the rate, then parses


def test_a_huge_frontmatter_is_refused_before_it_is_parsed(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir import model

    parsed: list[str] = []
    real = model.parse_meta
    monkeypatch.setattr(model, "parse_meta", lambda block, **kw: parsed.append(block) or real(block, **kw))
    huge = "---\n" + "k: v\n" * 2_400_000 + "---\nbody\n"  # 12 MB of flat frontmatter
    with pytest.raises(LimitExceeded, match="a.md is 12,000,013 bytes; memdir keeps files up to 1,048,576"):
        md.write("a.md", huge)
    assert parsed == [] and md.list() == []
    md.write("b.md", "small\n")
    parsed.clear()
    with pytest.raises(LimitExceeded):
        md.edit("b.md", "small", huge)
    with pytest.raises(LimitExceeded):
        md.append("b.md", "x" * 1_100_000)
    with pytest.raises(LimitExceeded, match="has 2400003 lines; the limit is 200"):
        md.for_agent().write("a.md", huge)
    assert all(len(block) < 200 for block in parsed)  # only the small file's own frontmatter was read
    assert md.read("b.md").body == "small\n"


def test_a_batch_bounds_each_text_before_parsing_it(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir import model

    parsed: list[str] = []
    real = model.parse_meta
    monkeypatch.setattr(model, "parse_meta", lambda block, **kw: parsed.append(block) or real(block, **kw))
    with pytest.raises(LimitExceeded):
        md.apply([memdir.Op.write("a.md", "---\n" + "k: v\n" * 2_400_000 + "---\nbody\n")])
    md.write("b.md", "fine\n")
    with pytest.raises(memdir.InvalidMemory, match="the path contains what looks like an AWS access key id"):
        md.apply([memdir.Op.rename("b.md", "keys/AKIA" + "IOSFODNN7EXAMPLE.md")])
    assert all(len(block) < 200 for block in parsed) and [e.path for e in md.list()] == ["b.md"]


def test_the_rate_limit_is_taken_before_parsing(root: Path) -> None:
    with memdir.open(root, writes_per_minute=1) as md:
        md.write("a.md", "first\n")
        with pytest.raises(RateLimited):  # not InvalidMemory: the bucket is checked before the YAML is read
            md.write("b.md", "---\nnot: [valid\n---\nbody\n")
        with pytest.raises(LimitExceeded):  # the size bound comes before the rate
            md.write("c.md", "x" * 1_100_000)
        assert [e.path for e in md.list()] == ["a.md"]


def test_a_hand_placed_huge_frontmatter_reads_as_text(root: Path) -> None:
    root.mkdir()
    (root / "big.md").write_text("---\n" + "k: v\n" * 200_000 + "---\nbody\n")
    with memdir.open(root) as md:
        got = md.read("big.md")
        assert got.meta == {} and got.body.startswith("---\n")
        assert [e.path for e in md.list()] == ["big.md"]


def test_only_newlines_break_lines_and_control_characters_never_reach_the_index(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "one\u2028still one\x0cand one\nline two with the key\n")
        assert [(h.line, h.text) for h in md.grep("key")] == [(6, "line two with the key")]  # after 4 lines of frontmatter
        with pytest.raises(InvalidMemory, match="description contains the control character U\\+001B"):
            md.write("b.md", "x\n", description="red \x1b[31malert\x1b[0m")
        with pytest.raises(InvalidMemory, match="name contains the control character U\\+202E"):
            md.write("b.md", "x\n", name="evil\u202etxt.md")
        (root / "hand.md").write_text("# bell\x07 and \x1b[2J escape \u2028 and nul\x00\nbody\n")
        (root / "front.md").write_text("---\ndescription: \"quiet\\e[8m hidden\\a\"\n---\nbody\n")
        md.reconcile(fix=True)
        index = (root / "MEMORY.md").read_text()
        assert "bell and [2J escape and nul" in index and "quiet [8m hidden" in index
        assert not any(c in index for c in "\x07\x1b\x00\u2028")
        assert len(index.split("\n")) == len(index.splitlines()) + 1


def test_closing_a_view_leaves_the_memory_open_and_closing_twice_harms_no_other(root: Path, tmp_path: Path) -> None:
    md = memdir.open(root)
    md.write("a.md", "a\n")
    md.for_agent().close()
    md.scope(read=["a.md"]).close()
    assert md.read("a.md").body == "a\n"  # views never close the store they share
    md.close()
    other = memdir.open(tmp_path / "other")  # may get the lock file descriptor number md just gave back
    md.close()  # a second close must not close it
    other.write("b.md", "b\n")
    assert other.read("b.md").body == "b\n"
    other.close()
