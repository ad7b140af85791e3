import pytest
from services import need

from memdir import InvalidMemory, model
from memdir.model import Stamp, derive_description, memory, parse, render, set_fields, split, unstamped

need("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def test_frontmatter_round_trip_keeps_extra_keys_in_order() -> None:
    text = "---\nname: n\ndescription: d\ntype: project\ntags: [a, b]\nowner: alice\nlinks:\n  jira: FL-1\n---\nbody\n"
    meta, body = parse(text)
    assert meta == {"name": "n", "description": "d", "type": "project", "tags": ["a", "b"], "owner": "alice",
                    "links": {"jira": "FL-1"}}
    assert body == "body\n"
    assert render(meta, body) == text


def test_dates_stay_plain_absolute_dates() -> None:
    meta, _ = parse("---\ncreated: 2026-03-02\nupdated: 2026-03-05T10:00:00Z\n---\n")
    assert meta == {"created": "2026-03-02", "updated": "2026-03-05T10:00:00Z"}
    assert "created: 2026-03-02\nupdated: 2026-03-05T10:00:00Z\n" in render(meta, "")


def test_files_without_frontmatter_are_valid() -> None:
    assert parse("# Title\ntext\n") == ({}, "# Title\ntext\n")
    m = memory("project/my-notes.md", "# Launch plan\nship it\n", "v1", ("project",))
    assert (m.name, m.description, m.type) == ("my notes", "Launch plan", "project")


@pytest.mark.parametrize(
    "body, description",
    [
        ("intro line\n## The heading\n", "The heading"),
        ("\n\n  first real line  \nsecond\n", "first real line"),
        ("- a bullet\n", "a bullet"),
        ("\nissue #12 fixed\n#hashtag, not a heading\n", "issue #12 fixed"),
        ("", ""),
        ("x" * 400, "x" * 149 + "…"),
    ],
)
def test_description_is_derived_from_heading_then_first_line(body: str, description: str) -> None:
    assert derive_description(body) == description


@pytest.mark.parametrize(
    "block, says",
    [
        ("a: &x [1, 2]\nb: *x\n", "anchors and aliases"),
        ("a: &a [\"lol\",\"lol\"]\nb: &b [*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b]\n", "anchors and aliases"),
        ("a: !!python/object/apply:os.system [echo hi]\n", "not allowed"),
        ("a: !!binary aGVsbG8=\n", "not allowed"),
        ("- just\n- a list\n", "must be a mapping"),
        ("a: [unclosed\n", "not valid YAML"),
        ("a: b\nc: d: e\n", "not valid YAML at line 3 (mapping values are not allowed"),
        ("a: " + "[" * 50 + "]" * 50 + "\n", "nests deeper"),
        ("a: " + "[" * 3000 + "]" * 3000 + "\n", "nest"),
        ("? [a, b]\n: c\n", "not valid YAML"),
        ("1: one\n", "not a string"),
    ],
)
def test_hostile_frontmatter_is_refused(block: str, says: str) -> None:
    with pytest.raises(InvalidMemory) as err:
        parse(f"---\n{block}---\nbody\n", path="x.md")
    assert says in str(err.value)


def test_unclosed_frontmatter_is_refused_when_strict_and_read_as_text_when_lenient() -> None:
    with pytest.raises(InvalidMemory, match="never closed"):
        split("---\nname: x\nbody\n", path="x.md")
    assert parse("---\nname: x\nbody\n", strict=False) == ({}, "---\nname: x\nbody\n")


# ---------------------------------------------------------------- frontmatter is bounded before YAML sees it


def test_the_frontmatter_has_its_own_size_limit() -> None:
    block = "---\n" + "".join(f"k{i}: value number {i}\n" for i in range(600)) + "---\nbody\n"
    with pytest.raises(InvalidMemory, match=r"the frontmatter is [\d,]+ bytes; the limit is 8,192") as e:
        parse(block, path="a.md")
    assert e.value.limit == 8192 and e.value.actual is not None and e.value.actual > 8192
    assert parse(block, path="a.md", strict=False) == ({}, block)  # a hand-placed file still reads as text


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ('a: &a ["x","x"]\nb: &b [*a,*a]\nc: &c [*b,*b]\nd: [*c,*c]\n', "anchors and aliases are not allowed"),
        ("a: " + "[" * 8000 + "]" * 100, "frontmatter"),
        ("a: " + "{b: " * 2000, "frontmatter"),
        ("".join(" " * i + f"k{i}:\n" for i in range(120)), "nests deeper than 8 levels"),
        ("a: !!python/object:os.system x\n", "is not allowed"),
    ],
)
def test_yaml_bombs_and_deep_nesting_are_refused(block: str, message: str) -> None:
    with pytest.raises(InvalidMemory, match=message):
        parse(f"---\n{block}\n---\nbody\n", path="a.md")


# ---------------------------------------------------------------- editing frontmatter in place

PERSON = (
    "---\n"
    "# Flock: owned by the platform team\n"
    "owner: alice\n"
    "links: {jira: FL-1, doc: 'https://x.example/flock'}\n"
    "name: flock   # short name\n"
    "description: >\n"
    "  launch plan for\n"
    "  the Flock app\n"
    "tags:\n"
    "- launch\n"
    "- q4\n"
    "\n"
    "# dates below\n"
    "created: '2026-01-05'\n"
    "---\n"
    "Body.\n"
)


def test_set_fields_changes_only_the_lines_of_the_keys_it_sets() -> None:
    got = set_fields(PERSON, {"description": "launch plan", "updated": Stamp("2026-11-30T10:00:00Z")})
    assert got == PERSON.replace("description: >\n  launch plan for\n  the Flock app\n", "description: launch plan\n").replace(
        "created: '2026-01-05'\n", "created: '2026-01-05'\nupdated: 2026-11-30T10:00:00Z\n"
    )


def test_set_fields_removes_a_key_with_its_continuation_lines_only() -> None:
    got = set_fields(PERSON, {"tags": None, "links": None})
    assert got == PERSON.replace("tags:\n- launch\n- q4\n", "").replace("links: {jira: FL-1, doc: 'https://x.example/flock'}\n", "")


def test_set_fields_leaves_a_value_that_is_already_right_as_written() -> None:
    assert set_fields(PERSON, {"created": "2026-01-05", "tags": ["launch", "q4"], "name": "flock"}) == PERSON


def test_set_fields_puts_a_new_key_before_the_date_lines_and_dates_last() -> None:
    got = set_fields(PERSON, {"type": "project", "updated": Stamp("2026-11-30")})
    assert got.endswith("# dates below\ntype: project\ncreated: '2026-01-05'\nupdated: 2026-11-30\n---\nBody.\n")


def test_set_fields_adds_a_block_to_a_file_without_one_and_keeps_crlf() -> None:
    assert set_fields("just text", {"created": Stamp("2026-11-30"), "name": None}) == "---\ncreated: 2026-11-30\n---\njust text"
    crlf = "---\r\nname: n\r\n---\r\nbody\r\n"
    assert set_fields(crlf, {"type": "user"}) == "---\r\nname: n\r\ntype: user\r\n---\r\nbody\r\n"


def test_set_fields_rewrites_a_block_it_cannot_edit_by_lines_and_loses_no_value() -> None:
    got = set_fields("---\n{name: n, owner: alice}\n---\nbody\n", {"type": "user"})
    assert got == "---\nname: n\nowner: alice\ntype: user\n---\nbody\n"


def test_set_fields_keeps_keys_without_a_value() -> None:
    text = "---\n# kept\ndescription: #\naliases:\n---\n"
    assert set_fields(text, {"updated": Stamp("2026-11-30")}) == "---\n# kept\ndescription: #\naliases:\nupdated: 2026-11-30\n---\n"


def test_set_fields_finds_quoted_keys_too() -> None:
    assert set_fields("---\n\"name\": old  # hi\n'type': user\n---\n", {"name": "new", "type": None}) == "---\nname: new\n---\n"


def test_set_fields_refuses_invalid_frontmatter_with_the_line() -> None:
    with pytest.raises(InvalidMemory, match=r"^x.md: frontmatter is not valid YAML at line 3 .*; fix that line"):
        set_fields("---\nname: n\nbad: a: b\n---\nbody\n", {"type": "user"}, path="x.md")


def test_unstamped_is_the_text_without_memdirs_date_lines() -> None:
    stamped = set_fields(PERSON, {"updated": Stamp("2026-11-30")})
    assert unstamped(stamped) == PERSON.replace("\ncreated: '2026-01-05'\n", "\n")
    assert unstamped(set_fields("note\n", {"created": Stamp("2026-11-30"), "updated": Stamp("2026-11-30")})) == "note\n"
    assert unstamped("---\nbroken: [\n---\ncreated: x\n") == "---\nbroken: [\n---\ncreated: x\n"
    assert unstamped("---\nname: n\n---\ncreated: body line\n") == "---\nname: n\n---\ncreated: body line\n"


# Frontmatter lines a person might write: (line, key it defines or None).
_LINES = [
    ("name: flock\n", "name"), ("description: \"a: quoted\"  # why\n", "description"), ("type: project\n", "type"),
    ("tags: [a, b]\n", "tags"), ("tags:\n  - a\n  - b\n", "tags"), ("owner: alice\n", "owner"),
    ("links: {jira: X-1}\n", "links"), ("notes: |\n  line one\n\n  line two\n", "notes"),
    ("# a comment\n", None), ("\n", None), ("created: 2026-01-05\n", "created"), ("aliases:\n", "aliases"),
    ("summary: #\n", "summary"),
]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_LINES), max_size=8, unique_by=lambda x: x[1] or x[0]),
    changes=st.dictionaries(
        st.sampled_from(["name", "description", "type", "tags", "owner", "created", "updated"]),
        st.one_of(st.none(), st.sampled_from(["x", "two words", "a: b", "#hash", "2026-11-30"]), st.just(["t1", "t2"])),
        max_size=3,
    ),
)
def test_set_fields_sets_what_it_is_asked_and_keeps_every_other_line(lines: list[tuple[str, str | None]], changes: dict) -> None:
    block = "".join(line for line, _ in lines)
    text = f"---\n{block}---\nbody\n"
    before, _ = parse(text)
    got = set_fields(text, changes)
    after, body = parse(got)
    assert body == "body\n"
    assert after == {k: v for k, v in {**before, **changes}.items() if k not in changes or v is not None}
    untouched = [line for line, key in lines if key not in changes]
    rest = iter(got.splitlines(keepends=True))
    assert all(any(line == seen for seen in rest) for part in untouched for line in part.splitlines(keepends=True))


# ---------------------------------------------------------------- a block parsed again is not parsed twice


def test_a_caller_changing_parsed_frontmatter_changes_no_later_parse() -> None:
    text = "---\nname: n\ntags: [a, b]\nlinks:\n  jira: [FL-1]\n---\nbody\n"
    first, _ = parse(text, path="a.md")
    first["name"] = "changed"
    first["tags"].append("c")
    first["links"]["jira"].append("FL-2")
    first["links"]["new"] = 1
    flat, _ = parse("---\nname: n\n---\n", path="a.md")
    flat["name"] = "changed"
    assert parse(text, path="a.md")[0] == {"name": "n", "tags": ["a", "b"], "links": {"jira": ["FL-1"]}}
    assert parse("---\nname: n\n---\n", path="a.md")[0] == {"name": "n"}
    assert memory("a.md", text, "v1", ()).meta["tags"] is not memory("a.md", text, "v1", ()).meta["tags"]


def test_the_same_bad_block_names_each_file_it_is_in() -> None:
    bad = "---\nname: [unclosed\n---\nbody\n"
    deep = "---\nx: " + "[" * 10 + "]" * 10 + "\n---\n"
    for path in ("a.md", "b.md", "a.md"):
        with pytest.raises(InvalidMemory, match=rf"^{path}: frontmatter is not valid YAML at line 3") as e:
            parse(bad, path=path)
        assert e.value.path == path
        with pytest.raises(InvalidMemory, match=rf"^{path}: frontmatter nests deeper than 8 levels"):
            parse(deep, path=path)
    assert parse("---\nname: [fine]\n---\n", path="a.md")[0] == {"name": ["fine"]}


# ---------------------------------------------------------------- other writers' frontmatter

TYPES = ("user", "feedback", "project", "reference", "session", "diary")


def test_claude_codes_metadata_block_gives_the_type_and_the_date() -> None:
    text = ("---\nname: Commit style\ndescription: imperative\nmetadata:\n  node_type: memory\n  type: feedback\n"
            "  modified: 2026-03-09T10:02:44.100Z\n  originSessionId: b81e4f02\n---\nWrite it so.\n")
    m = memory("feedback_commit_style.md", text, "v", TYPES)
    assert (m.name, m.type, m.updated, m.created) == ("Commit style", "feedback", "2026-03-09T10:02:44Z", None)
    assert m.text == text  # read, never rewritten


def test_a_type_is_read_wherever_its_writer_put_it() -> None:
    def kind(path: str, text: str) -> str | None:
        return memory(path, text, "v", TYPES).type

    assert kind("a.md", "---\ntype: Feedback\n---\nx\n") == "feedback"  # any case
    assert kind("feedback_style.md", "no frontmatter: Claude Code's file name says it\n") == "feedback"
    assert kind("project/x.md", "---\ntype: note\n---\nx\n") == "project"  # basic-memory's default says nothing
    assert kind("people/Amara.md", "---\ntype: Person\n---\nx\n") == "person"  # another tool's own type stays
    assert kind("notes_2026.md", "x\n") is None  # a prefix that is no type is no type


def test_titles_dates_aliases_and_tags_of_basic_memory_obsidian_and_mcp() -> None:
    bm = memory("people/Amara Nwosu.md", "---\ntitle: Amara Nwosu\ntype: Person\ntags: person, garden\n"
                "updated: 2025-06-30\n---\nx\n", "v", TYPES)
    assert (bm.name, bm.tags, bm.updated) == ("Amara Nwosu", ("person", "garden"), "2025-06-30")
    ob = memory("Bills split.md", "---\ncreated: 2025-11-22\ntags:\n  - household/money\n  - '#budget'\n"
                "aliases: [Split]\n---\nx\n", "v", TYPES)
    assert (ob.created, ob.tags, model.aliases_of(ob.meta)) == ("2025-11-22", ("household/money", "budget"), ("Split",))
    mcp = memory("person/dana.md", "---\nname: Dana\ncreatedAt: '2026-01-12T09:30:11.204Z'\nversion: 2\n---\nx\n", "v", TYPES)
    assert mcp.created == "2026-01-12T09:30:11.204Z"


def test_unquoted_colons_are_repaired_minimally_and_read() -> None:
    block = "title: Decision: Postgres over SQLite\ntype: note\npermalink: decision\ndate: {{date}}\nok: 'a: b'"
    fixed, lines = model.repaired(block)
    assert lines == [2, 5]
    assert fixed == ('title: "Decision: Postgres over SQLite"\ntype: note\npermalink: decision\ndate: "{{date}}"\n'
                     "ok: 'a: b'")
    text = f"---\n{block}\n---\nbody\n"
    with pytest.raises(InvalidMemory, match="not valid YAML at line 2"):
        parse(text, strict=True)  # a write is still refused: only readers and imports repair
    assert parse(text, strict=False)[0]["title"] == "Decision: Postgres over SQLite"
    assert model.repaired("key: [unclosed") == ('key: "[unclosed"', [2])  # the rest of the line, as its writer read it
    assert model.repaired("- a\n- b") == ("- a\n- b", [])  # no entry to quote (a list): the error stands


def test_a_heading_that_repeats_the_title_gives_way_to_the_first_line_of_text() -> None:
    text = "---\ntitle: Amara Nwosu\ntype: Person\n---\n\n# Amara Nwosu\n\n- [fact] Retired nurse; waters every morning\n"
    assert memory("people/Amara Nwosu.md", text, "v", TYPES).description == "Retired nurse; waters every morning"
    assert memory("a.md", "---\nname: Plan\n---\n# Launch plan\n\nSteps.\n", "v", TYPES).description == "Launch plan"
    assert memory("patterns.md", "# Patterns\n\nHow code is written.\n", "v", TYPES).description == "Patterns"
