import json
from pathlib import Path

from click.testing import CliRunner

import memdir
from memdir.faces.cli import main
from memdir.remember.importer import import_basic_memory, import_dir, import_mcp_memory


def claude_code_folder(tmp_path: Path) -> Path:
    src = tmp_path / "claude" / "memory"
    src.mkdir(parents=True)
    (src / "user_role.md").write_text("---\nname: role\ndescription: data scientist\ntype: user\n---\nWorks on churn models.\n")
    (src / "feedback_testing.md").write_text("Always run the integration tests against a real database.\n")
    (src / "project_launch.md").write_text("Launch is 2026-12-15.\n")
    (src / "notes").mkdir()
    (src / "notes" / "pipe.md").write_text("Pipe-style entry body.\n")
    (src / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    (src / "MEMORY.md").write_text(
        "# Memory\n\n"
        "## Feedback\n"
        "- [feedback_testing.md](feedback_testing.md) -- integration tests hit a real database\n"
        "- [Launch](project_launch.md) — launch date and scope\n"
        "- notes/pipe.md | a pipe style description #reference\n"
        "- [Gone](missing.md) — this file is not there\n"
        "some prose the importer cannot map\n"
    )
    return src


def test_import_claude_code_memory_folder(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        result = import_dir(md, src)
        assert sorted(result.imported) == ["feedback_testing.md", "notes/pipe.md", "project_launch.md", "user_role.md"]
        assert [p for p, _ in result.skipped] == ["broken.md"]
        assert "not valid YAML" in result.skipped[0][1]
        assert result.dangling == ["missing.md"]
        assert result.unmapped == [(8, "some prose the importer cannot map")]

        testing = md.read("feedback_testing.md")
        assert (testing.description, testing.type) == ("integration tests hit a real database", "feedback")
        assert testing.meta.get("name") is None  # a title that is just the file name is not a name
        launch = md.read("project_launch.md")
        assert (launch.name, launch.description, launch.type) == ("Launch", "launch date and scope", "feedback")
        pipe = md.read("notes/pipe.md")
        assert (pipe.description, pipe.type) == ("a pipe style description", "reference")
        role = md.read("user_role.md")
        assert (role.name, role.description, role.type) == ("role", "data scientist", "user")  # the file wins
        assert "data scientist" in md.index()

        again = import_dir(md, src)
        assert again.imported == []
        assert all("already in the memory" in why for p, why in again.skipped if p != "broken.md")
        summary = again.summary()
        assert "skipped user_role.md: already in the memory (use --overwrite to replace it)" in summary
    assert (src / "MEMORY.md").read_text().startswith("# Memory\n")  # the source is untouched


def test_import_overwrite_reports_unchanged(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        import_dir(md, src)
        again = import_dir(md, src, overwrite=True)
        assert again.imported == [] and len(again.unchanged) == 4


# ---------------------------------------------------------------- mcp-memory

GRAPH = [
    {"type": "entity", "name": "John Smith", "entityType": "person",
     "observations": ["Speaks fluent Spanish", "Prefers morning meetings"]},
    {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": ["AI safety company"]},
    {"type": "entity", "name": "Flock", "entityType": "project", "observations": ["Launch on 2026-12-15"]},
    {"type": "relation", "from": "John Smith", "to": "Anthropic", "relationType": "works_at"},
    {"type": "relation", "from": "John Smith", "to": "Flock", "relationType": "leads"},
    {"type": "relation", "from": "John Smith", "to": "Acme", "relationType": "consults_for"},
    {"type": "entity", "name": "Leaky", "entityType": "person", "observations": ["token ghp_" + "a" * 36]},
]


def graph_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in GRAPH) + "\n" + extra)
    return path


def test_import_mcp_memory_graph(tmp_path: Path) -> None:
    src = graph_file(tmp_path, '{"type": "entity", "entityType": "x"}\nnot json\n{"type": "note"}\n')
    with memdir.open(tmp_path / "memory") as md:
        result = import_mcp_memory(md, src)
        assert sorted(result.imported) == ["organization/anthropic.md", "person/john-smith.md", "project/flock.md"]
        assert result.skipped == [
            ("line 8", "entity without a name"),
            ("line 9", "not valid JSON (Expecting value)"),
            ("line 10", "unknown record type 'note'; expected 'entity' or 'relation'"),
            ("entity 'Leaky' (line 7)",
             "person/leaky.md: frontmatter line 3 contains what looks like a GitHub token; memories must not hold credentials: "
             "remove it and note where the secret is kept instead"),
        ]
        assert result.notes == ["relation John Smith consults_for Acme not imported: no entity named 'Acme'"]

        john = md.read("person/john-smith.md")
        assert (john.name, john.description, john.tags, john.type) == (
            "John Smith", "person: Speaks fluent Spanish", ("person",), None)
        assert john.body == (
            "# John Smith\n\n- Speaks fluent Spanish\n- Prefers morning meetings\n\n"
            "## Relations\n- works_at [Anthropic](../organization/anthropic.md)\n- leads [Flock](../project/flock.md)\n"
        )
        flock = md.read("project/flock.md")
        assert flock.type == "project"  # an entity type that is a memdir type becomes the type
        assert flock.body.endswith("## Referenced by\n- [John Smith](../person/john-smith.md) leads this\n")
        assert md.search("spanish")[0].path == "person/john-smith.md"

        again = import_mcp_memory(md, src)
        assert again.imported == [] and ("entity 'Flock' (line 3)", "already in the memory (use --overwrite to replace it)") in again.skipped


def test_mcp_memory_name_collisions_and_merges(tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    lines = [
        {"type": "entity", "name": "C++", "entityType": "language", "observations": ["fast"]},
        {"type": "entity", "name": "C", "entityType": "language", "observations": ["old"]},
        {"type": "entity", "name": "C", "entityType": "language", "observations": ["old", "portable"]},
    ]
    src.write_text("\n".join(json.dumps(x) for x in lines))
    with memdir.open(tmp_path / "memory") as md:
        result = import_mcp_memory(md, src)
        assert result.imported == ["language/c.md", "language/c-2.md"]
        assert result.notes == ["line 3: entity 'C' appears again; its observations were merged"]
        assert md.read("language/c-2.md").body == "# C\n\n- old\n- portable\n"


def test_cli_import_from_mcp_memory(tmp_path: Path) -> None:
    src = graph_file(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(tmp_path / "memory"), "import", "--from", "mcp-memory", str(src), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert len(data["imported"]) == 3 and data["skipped"][0]["path"] == "entity 'Leaky' (line 7)"
    assert data["notes"] == ["relation John Smith consults_for Acme not imported: no entity named 'Acme'"]
    out = runner.invoke(main, ["--root", str(tmp_path / "memory"), "import", "--from", "mcp-memory", str(tmp_path)])
    assert out.exit_code == 2 and "--from mcp-memory reads a JSONL file" in out.output
    out = runner.invoke(main, ["--root", str(tmp_path / "m2"), "import", "--from", "basic-memory", str(src)])
    assert out.exit_code == 2 and "--from basic-memory reads a folder" in out.output


# ---------------------------------------------------------------- basic-memory

COFFEE = """---
title: Coffee Brewing Methods
type: note
tags: [coffee, brewing]
permalink: coffee-brewing-methods
source: barista course
---

# Coffee Brewing Methods

## Observations
- [method] Pour over gives more clarity than a French press
- [technique] Water at 96°C extracts best #temperature
- [preference] Ethiopian beans suit lighter roasts (tasting notes)

## Relations
- relates_to [[Coffee Bean Origins]]
- contrasts_with [[Tea Brewing Methods]]
"""

ORIGINS = """---
title: Coffee Bean Origins
type: reference
permalink: coffee-bean-origins
tags: beans, origins
---

# Coffee Bean Origins

Where the beans come from, by region.

- [region] Ethiopia: floral and light #africa
"""


def basic_memory_folder(tmp_path: Path) -> Path:
    src = tmp_path / "basic-memory"
    (src / "coffee").mkdir(parents=True)
    (src / ".basic-memory").mkdir()
    (src / ".basic-memory" / "config.json").write_text("{}")
    (src / "coffee" / "coffee-brewing-methods.md").write_text(COFFEE)
    (src / "coffee" / "Coffee Bean Origins.md").write_text(ORIGINS)
    (src / "coffee" / "cup.png").write_bytes(b"\x89PNG")
    (src / "long.md").write_text("---\ntitle: Long\n---\n" + "- [fact] line\n" * 250)
    return src


def test_import_basic_memory_notes(tmp_path: Path) -> None:
    src = basic_memory_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        result = import_basic_memory(md, src)
        assert result.imported == ["long.md", "coffee/Coffee Bean Origins.md", "coffee/coffee-brewing-methods.md"]
        assert result.skipped == [("coffee/cup.png", "not a markdown note; memdir keeps .md files only")]  # long: kept
        assert result.notes == [
            f"coffee/coffee-brewing-methods.md: [[Tea Brewing Methods]] names no note in {src}; the link is kept as text"
        ]
        coffee = md.read("coffee/coffee-brewing-methods.md")
        assert (coffee.name, coffee.type, coffee.description) == (
            "Coffee Brewing Methods", None, "Pour over gives more clarity than a French press")
        assert coffee.tags == ("coffee", "brewing", "temperature")
        assert (coffee.meta["permalink"], coffee.meta["source"]) == ("coffee-brewing-methods", "barista course")
        assert "title" not in coffee.meta and coffee.body == COFFEE.split("---\n", 2)[2]  # the text is kept
        origins = md.read("coffee/Coffee Bean Origins.md")
        assert (origins.type, origins.description, origins.tags) == (
            "reference", "Where the beans come from, by region.", ("beans", "origins", "africa"))
        assert md.index().splitlines()[2:] == [
            "## Reference",
            "- [Coffee Bean Origins](<coffee/Coffee Bean Origins.md>) — Where the beans come from, by region.",
            "",
            "## Other",
            "- [Coffee Brewing Methods](coffee/coffee-brewing-methods.md) — Pour over gives more clarity than a French press",
            "- [Long](long.md) — line",
        ]
        assert md.search("ethiopian roasts")[0].path == "coffee/coffee-brewing-methods.md"


def test_cli_import_from_basic_memory(tmp_path: Path) -> None:
    src = basic_memory_folder(tmp_path)
    out = CliRunner().invoke(main, ["--root", str(tmp_path / "memory"), "import", "--from", "basic-memory", str(src)])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == [
        "imported 3 files",
        "skipped coffee/cup.png: not a markdown note; memdir keeps .md files only",
        f"coffee/coffee-brewing-methods.md: [[Tea Brewing Methods]] names no note in {src}; the link is kept as text",
    ]


def test_import_never_follows_a_symlink_out_of_the_source(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".netrc"
    secret.parent.mkdir()
    secret.write_text("machine example.com login me password hunter2\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("outside the source\n")
    source = tmp_path / "source"
    (source / "notes").mkdir(parents=True)
    (source / "notes" / "real.md").write_text("a real note\n")
    (source / "notes" / "setup.md").symlink_to(secret)
    (source / "notes" / "alias.md").symlink_to("real.md")  # a link that stays inside is followed
    (source / "linked").symlink_to(elsewhere)
    for run in (import_dir, import_basic_memory):
        with memdir.open(tmp_path / f"memory-{run.__name__}") as md:
            result = run(md, source)
            assert sorted(result.imported) == ["notes/alias.md", "notes/real.md"]
            assert sorted(result.skipped) == [
                ("linked", "a symlinked folder; import does not follow folder links"),
                ("notes/setup.md", "a symlink leading out of the source folder; not followed"),
            ]
            assert md.grep("hunter2") == [] and md.grep("outside the source") == []
