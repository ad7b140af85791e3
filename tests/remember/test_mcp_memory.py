"""The MCP memory server's memory.jsonl: import, merge on re-import, export, and the round trip."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir.faces.cli import main
from memdir.remember.mcp_memory import export_mcp_memory, graph, import_mcp_memory

REAL = Path(__file__).parents[1] / "data" / "real" / "mcp-memory"
V1, V2 = REAL / "v1" / "memory.jsonl", REAL / "v2" / "memory.jsonl"

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


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def key(record: dict) -> str:
    return json.dumps(record, sort_keys=True)


def graph_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in GRAPH) + "\n" + extra)
    return path


def test_import_mcp_memory_graph(tmp_path: Path) -> None:
    src = graph_file(tmp_path, '{"type": "entity", "entityType": "x"}\nnot json\n{"type": "note"}\n')
    with memdir.open(tmp_path / "memory") as md:
        result = import_mcp_memory(md, src)
        assert sorted(result.imported) == ["organization/anthropic.md", "person/john-smith.md", "person/leaky.md",
                                           "project/flock.md"]
        assert result.skipped == [
            ("line 8", "entity without a name"),
            ("line 9", "not valid JSON (Expecting value)"),
            ("line 10", "unknown record type 'note'; expected 'entity' or 'relation'"),
        ]
        assert (result.lines_in, result.lines_out, result.lines_skipped) == (10, 7, 3)
        # a relation naming no entity is kept (the server keeps it), a secret is redacted and its entity kept
        assert result.notes == ["kept 1 relation naming no entity at one end or both (the server keeps them too): "
                                "John Smith consults_for Acme"]
        assert [(p, kind) for p, _, kind in result.redacted] == [("person/leaky.md", "a GitHub token")] * 2
        assert md.read("person/leaky.md").body == "# Leaky\n\n- token REDACTED\n"

        john = md.read("person/john-smith.md")
        assert (john.name, john.description, john.tags, john.type) == (
            "John Smith", "person: Speaks fluent Spanish", (), None)
        assert john.meta["entityType"] == "person"
        assert john.body == (
            "# John Smith\n\n- Speaks fluent Spanish\n- Prefers morning meetings\n\n"
            "## Relations\n- works_at [Anthropic](../organization/anthropic.md)\n- leads [Flock](../project/flock.md)\n"
            "- consults_for Acme\n"
        )
        flock = md.read("project/flock.md")
        assert flock.type == "project"  # an entity type that is a memdir type becomes the type
        assert flock.body.endswith("## Referenced by\n- [John Smith](../person/john-smith.md) leads this\n")
        assert md.search("spanish")[0].path == "person/john-smith.md"

        again = import_mcp_memory(md, src)
        assert again.imported == again.merged == [] and len(again.unchanged) == 4


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
        assert result.imported == ["language/c.md", "language/c-2.md", "language/c-3.md"]  # C twice: as the server keeps it
        assert result.notes == []
        assert md.read("language/c-2.md").body == "# C\n\n- old\n"
        assert md.read("language/c-3.md").body == "# C\n\n- old\n- portable\n"
        assert import_mcp_memory(md, src).unchanged == ["language/c.md", "language/c-2.md", "language/c-3.md"]
        export_mcp_memory(md, tmp_path / "back.jsonl")
        assert (tmp_path / "back.jsonl").read_bytes() == src.read_bytes()  # each finds its own file, in its order


def test_reimporting_an_updated_graph_merges_it(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        import_mcp_memory(md, V1)
        result = import_mcp_memory(md, V2)
        assert len(result.merged) == 8 and sorted(result.imported) == ["event/pii-audit-2026-04.md",
                                                                      "person/joost-de-wit.md"]
        assert "person/dana-okafor.md: kept the relation Dana Okafor lives_in Leeds, which the new graph no longer has" \
            in result.notes
        dana = md.read("person/dana-okafor.md")
        v2 = {r["name"]: r for r in records(V2) if r["type"] == "entity"}
        bullets = [line for line in dana.body.splitlines() if line.startswith("- ") and "](" not in line]
        assert bullets == [f"- {o}" for o in v2["Dana Okafor"]["observations"]]  # added, nothing twice
        assert "- led [PII audit 2026-04](../event/pii-audit-2026-04.md)" in dana.body  # the new relation, on Dana's page
        assert (dana.meta["createdAt"], dana.meta["version"]) == ("2026-01-12T09:30:11.204Z", 2)
        assert dana.created == "2026-01-12T09:30:11.204Z"  # createdAt is the memory's date
        tern = md.read("project/tern.md")
        assert (tern.meta["importance"], tern.meta["tags"], tern.meta["version"]) == (0.9, ["work", "support-bot"], 3)
        again = import_mcp_memory(md, V2)
        assert again.merged == again.imported == [] and len(again.unchanged) == 10  # nothing duplicated


@pytest.mark.parametrize("source", [V1, V2], ids=["reference-server", "fork-with-extra-fields"])
def test_import_then_export_gives_the_same_graph_byte_for_byte(tmp_path: Path, source: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        import_mcp_memory(md, source)
        md.write("notes/other.md", "not an entity\n")
        result = export_mcp_memory(md, tmp_path / "out.jsonl")
    assert result.left_out == [("notes/other.md", "not an entity (its frontmatter has no entityType)")]
    assert (tmp_path / "out.jsonl").read_bytes() == source.read_bytes()  # its order and form, its last newline or none


LOAD_GRAPH = """
const fs = require("fs");
// the reference server's loadGraph (modelcontextprotocol/servers, src/memory/index.ts), step by step
const lines = fs.readFileSync(process.argv[1], "utf-8").split("\\n").filter(line => line.trim() !== "");
const graph = lines.reduce((graph, line) => {
  const item = JSON.parse(line);
  if (item.type === "entity") graph.entities.push({name: item.name, entityType: item.entityType, observations: item.observations});
  if (item.type === "relation") graph.relations.push({from: item.from, to: item.to, relationType: item.relationType});
  return graph;
}, {entities: [], relations: []});
console.log(JSON.stringify(graph));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to load the file as the server does")
def test_the_export_loads_in_the_reference_servers_reader(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        import_mcp_memory(md, V2)
        export_mcp_memory(md, tmp_path / "memory.jsonl")
    out = subprocess.run(["node", "-e", LOAD_GRAPH, str(tmp_path / "memory.jsonl")], capture_output=True, text=True,
                         check=True)
    loaded = json.loads(out.stdout)
    v2 = records(V2)
    assert sorted(e["name"] for e in loaded["entities"]) == sorted(r["name"] for r in v2 if r["type"] == "entity")
    assert len(loaded["relations"]) == sum(r["type"] == "relation" for r in v2)
    assert all(isinstance(e["observations"], list) and e["observations"] for e in loaded["entities"])


def test_cli_import_and_export_mcp_memory(tmp_path: Path) -> None:
    src = graph_file(tmp_path)
    runner = CliRunner()
    root = str(tmp_path / "memory")
    out = runner.invoke(main, ["--root", root, "import", "--from", "mcp-memory", str(src), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert len(data["imported"]) == 4 and data["redacted"][0]["path"] == "person/leaky.md"
    assert data["files"] == {"source": 7, "records": 7, "brought_in": 7, "skipped": 0, "left_out": 0}
    out = runner.invoke(main, ["--root", root, "import", "--from", "mcp-memory", str(tmp_path)])
    assert out.exit_code == 2 and "--from mcp-memory reads a JSONL file" in out.output
    out = runner.invoke(main, ["--root", root, "export", "--mcp-memory", str(tmp_path / "back.jsonl")])
    assert out.exit_code == 0, out.output
    assert out.stdout == "exported 4 entities and 3 relations\n"
    with memdir.open(root) as md:
        assert len(graph(md)[0]) == 7


def test_every_backend_round_trips_and_merges_the_graph(memory: memdir.Memdir, tmp_path: Path) -> None:
    import_mcp_memory(memory, V1)
    assert len(import_mcp_memory(memory, V2).merged) == 8
    export_mcp_memory(memory, tmp_path / "out.jsonl")
    got = sorted(map(key, records(tmp_path / "out.jsonl")))
    old = {r.get("name"): r for r in records(V1) if r["type"] == "entity"}
    union = []  # what a merge keeps: v2's records, with what v1 held and v2 no longer does (reported, not lost)
    for r in records(V2):
        if r["type"] == "entity" and r["name"] in old:
            kept = old[r["name"]]["observations"]
            r = {**r, "observations": kept + [o for o in r["observations"] if o not in kept]}
        union.append(r)
    union += [r for r in records(V1) if r["type"] == "relation" and r["relationType"] == "lives_in"]
    assert got == sorted(map(key, union))


def test_an_observation_of_several_lines_comes_back_whole(tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "name": "Runbook", "entityType": "doc",
              "observations": ["Steps:\n1. drain\n2. restart", "  indented on purpose", "last"]}
    src.write_text(json.dumps(entity))
    with memdir.open(tmp_path / "memory") as md:
        import_mcp_memory(md, src)
        assert md.read("doc/runbook.md").body.startswith("# Runbook\n\n- Steps:\n  1. drain\n  2. restart\n- ")
        assert graph(md)[0] == [entity]
        assert import_mcp_memory(md, src).unchanged == ["doc/runbook.md"]
