import pytest

from memdir import InvalidMemory
from memdir.model import derive_description, memory, parse, render, split


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
