"""The agent tool set: what a model sees for each call, and the exported schemas."""

import json
from pathlib import Path

import pytest

import memdir
from memdir.faces import tools
from memdir.faces.tools import Session, handle


@pytest.fixture
def session(md: memdir.Memdir) -> Session:
    return Session(md)


def test_read_index_then_file(session: Session) -> None:
    session.md.write("feedback/no-dark.md", "Never propose dark themes.\n", type="feedback", description="no dark UI")
    index = session.handle("read_memory_index")
    assert not index.is_error and "- [no dark](feedback/no-dark.md) — no dark UI" in index.text
    read = session.handle("read_memory_file", {"path": "feedback/no-dark.md"})
    version = session.md.read("feedback/no-dark.md").version
    assert read.text.startswith(f"feedback/no-dark.md (version {version}, 7 lines)\n---\n")
    assert read.text.endswith("Never propose dark themes.\n")
    assert read.data and read.data["version"] == version


def test_long_files_come_in_pages(session: Session, root: Path) -> None:
    (root / "long.md").write_text("".join(f"line {i}\n" for i in range(1, 451)))
    first = session.handle("read_memory_file", {"path": "long.md"})
    assert "     1\tline 1\n" in first.text and "   200\tline 200\n[lines 1-200 of 450; read on with offset=201]" in first.text
    last = session.handle("read_memory_file", {"path": "long.md", "offset": 401})
    assert last.text.endswith("   450\tline 450\n[lines 401-450 of 450]")
    small = session.handle("read_memory_file", {"path": "long.md", "offset": 10, "limit": 2})
    assert small.text.splitlines()[1:] == ["    10\tline 10", "    11\tline 11", "[lines 10-11 of 450; read on with offset=12]"]
    past = session.handle("read_memory_file", {"path": "long.md", "offset": 999})
    assert past.is_error and "past the end" in past.text


def test_write_says_what_changed_and_how_to_undo(session: Session) -> None:
    created = session.handle("write_memory_file", {"path": "project/flock.md", "content": "---\ndescription: flock\n---\nv1\n"})
    assert created.text.startswith("created project/flock.md: 6 lines (version ")
    assert created.text.endswith('Undo with undo_memory_change(path="project/flock.md").')
    updated = session.handle("write_memory_file", {"path": "project/flock.md", "content": "v2\nmore\n"})
    assert "updated project/flock.md: 6 lines → 7 lines" in updated.text
    assert "Note:" not in updated.text  # the model wrote it, so it has seen it
    same = session.handle("write_memory_file", {"path": "project/flock.md", "content": "v2\nmore\n"})
    assert same.text.startswith("unchanged: project/flock.md already has this content")
    assert same.data and same.data["change"] == "unchanged"


def test_overwriting_an_unread_file_is_allowed_but_flagged(md: memdir.Memdir) -> None:
    md.write("user/profile.md", "Alice, data engineer.\n")
    reply = Session(md).handle("write_memory_file", {"path": "user/profile.md", "content": "Bob.\n"})
    assert not reply.is_error
    assert "Note: you replaced user/profile.md without reading it in this conversation" in reply.text
    fresh = Session(md)
    fresh.handle("read_memory_file", {"path": "user/profile.md"})
    assert "Note:" not in fresh.handle("write_memory_file", {"path": "user/profile.md", "content": "Carol.\n"}).text


def test_expected_version_and_new(session: Session) -> None:
    assert not session.handle("write_memory_file", {"path": "a.md", "content": "1", "expected_version": "new"}).is_error
    again = session.handle("write_memory_file", {"path": "a.md", "content": "2", "expected_version": "new"})
    assert again.is_error and "a.md already exists" in again.text and again.data == {
        "error": "Conflict", "message": again.text}
    stale = session.handle("write_memory_file", {"path": "a.md", "content": "2", "expected_version": "0" * 16})
    assert stale.is_error and "changed since it was read" in stale.text
    assert session.md.read("a.md").body == "1"


def test_rename_delete_undo(session: Session) -> None:
    session.handle("write_memory_file", {"path": "a.md", "content": "alpha"})
    assert session.handle("rename_memory_file", {"old_path": "a.md", "new_path": "b/a.md"}).text.startswith(
        "renamed a.md to b/a.md (version ")
    deleted = session.handle("delete_memory_file", {"path": "b/a.md"})
    assert deleted.text == 'deleted b/a.md (5 lines). Undo with undo_memory_change(path="b/a.md").'
    restored = session.handle("undo_memory_change", {"path": "b/a.md"})
    assert restored.text.startswith("restored b/a.md to what it was before its last change")
    assert session.md.read("b/a.md").body == "alpha"
    listed = session.handle("list_memory_files", {"folder": "b"})
    assert listed.text.startswith("b/a.md\t-\t")


@pytest.mark.parametrize(
    "name, arguments, says",
    [
        ("forget_everything", {}, "unknown tool 'forget_everything'; the memory tools are read_memory_index"),
        ("read_memory_file", {}, "read_memory_file: missing argument 'path'; it takes path, offset, limit"),
        ("read_memory_file", {"path": 3}, "read_memory_file: path must be text, got 3"),
        ("read_memory_file", {"path": "a.md", "offset": 0}, "offset must be at least 1, got 0"),
        ("read_memory_file", {"path": "a.md", "offset": True}, "offset must be an integer, got True"),
        ("read_memory_file", {"path": "a.md", "mode": "x"}, "unknown argument 'mode'; it takes path, offset, limit"),
        ("read_memory_file", "{not json", "arguments are not valid JSON"),
        ("read_memory_file", "[1]", "arguments must be an object, got list"),
        ("read_memory_file", {"path": "../etc/passwd.md"}, "contains '..'"),
        ("read_memory_file", {"path": "nope.md"}, "nope.md does not exist"),
        ("write_memory_file", {"path": "MEMORY.md", "content": "x"}, "is a generated index"),
        ("write_memory_file", {"path": "a.md", "content": "x\n" * 300}, "has 300 lines; the limit is 200"),
        ("write_memory_file", {"path": "a.md", "content": "---\ntype: opinion\n---\n"}, "type 'opinion' is not one of"),
    ],
)
def test_every_failure_is_a_one_line_tool_error(session: Session, name: str, arguments: object, says: str) -> None:
    reply = session.handle(name, arguments)  # type: ignore[arg-type]
    assert reply.is_error
    assert says in reply.text
    assert "\n" not in reply.text


def test_json_string_arguments_and_nulls_as_openai_sends_them(session: Session) -> None:
    session.md.write("a.md", "alpha\n")
    reply = handle(session, "read_memory_file", json.dumps({"path": "a.md", "offset": None, "limit": None}))
    assert not reply.is_error and "alpha" in reply.text


def test_handle_with_a_memdir_keeps_one_session(md: memdir.Memdir) -> None:
    md.write("a.md", "alpha\n")
    handle(md, "read_memory_file", {"path": "a.md"})
    assert "Note:" not in handle(md, "write_memory_file", {"path": "a.md", "content": "beta"}).text


def test_scopes_and_rate_limits_reach_the_model_as_errors(root: Path) -> None:
    with memdir.open(root, agent=True) as md:
        assert md.limits.writes_per_minute == 60
        alice = Session(md.scope(read=["household/"], write=["people/alice/"]))
        denied = alice.handle("write_memory_file", {"path": "household/x.md", "content": "x"})
        assert denied.is_error and "outside what this principal may write" in denied.text
        assert alice.handle("read_memory_file", {"path": "people/bob/x.md"}).is_error
    with memdir.open(root, agent=True, writes_per_minute=1) as md:
        s = Session(md)
        assert not s.handle("write_memory_file", {"path": "people/alice/a.md", "content": "1"}).is_error
        limited = s.handle("write_memory_file", {"path": "people/alice/b.md", "content": "2"})
        assert limited.is_error and "more than 1 writes per minute" in limited.text


def test_anthropic_export() -> None:
    exported = tools.anthropic_tools()
    assert [t["name"] for t in exported] == [t.name for t in tools.TOOLS]
    write = next(t for t in exported if t["name"] == "write_memory_file")
    assert write["input_schema"]["required"] == ["path", "content"]
    assert "absolute dates" in write["description"]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_export_is_strict_mode_compatible(api: str) -> None:
    for t in tools.openai_tools(api):
        fn = t["function"] if api == "chat" else t
        assert t["type"] == "function" and fn["strict"] is True
        params = fn["parameters"]
        assert params["additionalProperties"] is False
        assert sorted(params["required"]) == sorted(params["properties"])
        for prop in params["properties"].values():
            assert set(prop) <= {"type", "description"}
        assert len(fn["name"]) <= 64 and fn["name"].replace("_", "").isalnum()
    read = next(t for t in tools.openai_tools(api) if (t.get("function") or t)["name"] == "read_memory_file")
    props = (read.get("function") or read)["parameters"]["properties"]
    assert props["offset"]["type"] == ["integer", "null"] and props["path"]["type"] == "string"
    with pytest.raises(ValueError):
        tools.openai_tools("completions")


def test_descriptions_teach_the_conventions() -> None:
    text = " ".join(t.description for t in tools.TOOLS) + memdir.prompt()
    for rule in ("read the index", "one topic per file", "**Why:**", "absolute dates", "Do not save what the code"):
        assert rule.lower() in text.lower(), rule
    annotations = {t.name: t.annotations for t in tools.TOOLS}
    assert annotations["read_memory_file"]["readOnlyHint"] and annotations["delete_memory_file"]["destructiveHint"]


def test_an_unexpected_failure_is_still_a_tool_error(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(md, "read_text", broken)
    reply = handle(md, "read_memory_file", {"path": "a.md"})
    assert reply.is_error
    assert reply.text == "read_memory_file failed unexpectedly (OSError: [Errno 5] Input/output error); retry once, or carry on without it"


def test_get_memory_context(session: Session) -> None:
    assert session.handle("get_memory_context").text == "memory is empty: nothing to recall yet"
    session.md.write("feedback/no-dark.md", "Never propose dark themes.\n", type="feedback")
    session.md.write("project/flock.md", "Launch date: 2026-12-15.\n", type="project")
    start = session.handle("get_memory_context")
    assert not start.is_error and start.text.startswith("Recalled memory, ")
    assert start.data and [i["path"] for i in start.data["included"]] == ["feedback/no-dark.md", "MEMORY.md"]
    assert "text" not in start.data and start.data["tokens"] <= start.data["budget"] == 2000
    asked = session.handle("get_memory_context", {"query": "flock launch", "budget": 500, "include": "project/, nope.md"})
    assert asked.data and ("project/flock.md", 2) in [(i["path"], i["layer"]) for i in asked.data["included"]]
    assert ("nope.md", "not found") in [(d["path"], d["reason"]) for d in asked.data["dropped"]]
    assert "Note:" not in session.handle("write_memory_file", {"path": "feedback/no-dark.md", "content": "Light.\n"}).text
    small = session.handle("get_memory_context", {"budget": 50})
    assert small.is_error and small.text == "get_memory_context: budget must be at least 100, got 50"


def test_read_memory_file_lists_links_and_backlinks(session: Session) -> None:
    session.md.write("project/flock.md", "Uses [[stripe]] and [[nowhere]].\n")
    session.md.write("reference/stripe.md", "Webhooks. Back to [flock](../project/flock.md).\n")
    read = session.handle("read_memory_file", {"path": "project/flock.md"})
    assert read.text.endswith("Uses [[stripe]] and [[nowhere]].\n\n[links: reference/stripe.md, [[nowhere]] (broken); "
                              "linked from: reference/stripe.md]")
    assert read.data and read.data["backlinks"] == ["reference/stripe.md"]
    assert [x["target"] for x in read.data["links"]] == ["reference/stripe.md", None]
    plain = session.handle("write_memory_file", {"path": "a.md", "content": "No links.\n"})
    assert not plain.is_error and session.handle("read_memory_file", {"path": "a.md"}).text.endswith("No links.\n")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "a.md", "content": "x\ud800"}, "write_memory_file: content holds a lone surrogate ('\\ud800' at character 2)"),
        ({"path": "\udfff.md", "content": "x"}, "write_memory_file: path holds a lone surrogate"),
        ('{"path": "a.md", "content": "x\\ud800"}', "write_memory_file: content holds a lone surrogate"),
        ("[" * 100_000, "write_memory_file: arguments nest too deeply to be a tool call"),
        ({"path": "a.md", "content": [[["x"]]]}, "write_memory_file: content must be text"),
    ],
)
def test_malformed_arguments_are_one_line_tool_errors(md: memdir.Memdir, arguments: object, message: str) -> None:
    reply = handle(md, "write_memory_file", arguments)  # type: ignore[arg-type]
    assert reply.is_error and reply.text.startswith(message) and "\n" not in reply.text
    assert "failed unexpectedly" not in reply.text and md.list() == []


def test_tools_are_rate_limited_even_on_a_memdir_opened_for_a_person(root: Path) -> None:
    with memdir.open(root) as md:  # no agent=True: the library itself is not limited
        assert md.limits.writes_per_minute == 0
        assert Session(md).md.limits.writes_per_minute == 60
        assert not handle(md, "append_memory", {"path": "log.md", "line": "first"}).is_error
        while md.store.take(60) < 0.5:  # use up the tenant's bucket (shared with every process)
            pass
        limited = handle(md, "append_memory", {"path": "log.md", "line": "one too many"})
        assert limited.is_error and "more than 60 writes per minute" in limited.text
        assert md.append("log.md", "the person's own write").change == "updated"  # people are not limited
