"""The corpus of realistic inputs in tests/data/real/ is itself well formed.

These tests check the fixtures, not memdir: every JSON/JSONL file parses except the lines broken on
purpose, each fixture's README names the documentation it follows, the fixtures use the features
their READMEs promise, and the corpus stays small. What memdir does with the corpus is in
tests/data/real/FINDINGS.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

REAL = Path(__file__).parent / "data" / "real"
TRANSCRIPTS = REAL / "claude-code" / "transcripts"
TERN = TRANSCRIPTS / "-home-dana-src-tern"
TRUNCATED = TRANSCRIPTS / "-home-marta-household" / "9a0e2b57-c6d1-4f83-b0a9-7e5d24f1c608.jsonl"
DEEP = TERN / "fd1e6b22-4a90-4c3e-9b17-58e2d0c6a3f1.jsonl"
DEEP_LINE = 2  # 0-based index of the line nested past 1,000 levels
MEMORY = REAL / "claude-code" / "memory" / "tern"
NOTES = REAL / "basic-memory" / "notes"
VAULTS = [REAL / "obsidian" / "en" / "Homebase", REAL / "obsidian" / "ja" / "はるとのノート"]
FIXTURE_READMES = [
    TRANSCRIPTS / "README.md",
    REAL / "claude-code" / "memory" / "README.md",
    REAL / "codex" / "README.md",
    REAL / "gemini" / "README.md",
    REAL / "basic-memory" / "README.md",
    REAL / "obsidian" / "README.md",
    REAL / "mcp-memory" / "README.md",
]
UNQUOTED_COLON_TITLES = {
    "projects/orchard/Decision- Postgres over SQLite.md",
    "home/Sourdough- Starter Schedule.md",
    "reading/Notes on Small Databases- Reading Notes.md",
}


def files(root: Path, pattern: str = "*") -> list[Path]:
    return sorted(p for p in root.rglob(pattern) if p.is_file())


def jsonl_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def frontmatter(path: Path) -> str | None:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return None
    end = text.index("\n---\n", 4)
    return text[4:end]


def nesting_depth(text: str) -> int:
    """The deepest nesting of JSON text, counted without parsing (so without recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


# ---------------------------------------------------------------- the corpus as a whole


def test_the_corpus_stays_within_its_budget() -> None:
    everything = files(REAL)
    assert len(everything) <= 300, f"{len(everything)} files: the corpus is for a test suite"
    total = sum(p.stat().st_size for p in everything)
    assert total < 2_000_000, f"{total} bytes: keep the corpus under 2 MB"
    assert max(p.stat().st_size for p in everything) < 200_000


@pytest.mark.parametrize("readme", FIXTURE_READMES, ids=lambda p: str(p.parent.relative_to(REAL)))
def test_every_readme_names_its_source_documentation(readme: Path) -> None:
    text = readme.read_text(encoding="utf-8")
    section = re.search(r"^## Documentation followed\n(.+?)(?=^## |\Z)", text, re.S | re.M)
    assert section, f"{readme} has no 'Documentation followed' section"
    assert len(section.group(1).split()) >= 30, "say which documentation, and which parts of it"
    assert re.search(r"^## What I was not sure of\n\n\S", text, re.M), f"{readme} says nothing of what is uncertain"
    assert re.search(r"^## (What it exercises|What each file exercises|Files)\n", text, re.M)


def test_every_readme_sits_outside_the_data_it_describes() -> None:
    data_roots = [MEMORY, NOTES, *VAULTS, REAL / "codex" / "dot-codex", REAL / "gemini" / "dot-gemini"]
    for root in data_roots:
        assert not [p for p in files(root) if p.name.lower() == "readme.md"], root


def test_every_json_file_parses() -> None:
    found = files(REAL, "*.json") + files(REAL, "*.canvas")
    assert len(found) >= 20
    for path in found:
        json.loads(path.read_text(encoding="utf-8"))


def test_every_jsonl_line_parses_but_the_ones_broken_on_purpose() -> None:
    checked = 0
    for path in files(REAL, "*.jsonl"):
        raw = path.read_bytes()
        lines = raw.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        for i, line in enumerate(lines):
            if not line.strip():  # a blank line a person left (the server skips them)
                continue
            if path == TRUNCATED and i == len(lines) - 1:
                with pytest.raises(UnicodeDecodeError):
                    line.decode("utf-8")
                continue
            if path == DEEP and i == DEEP_LINE:
                with pytest.raises(RecursionError):
                    json.loads(line)
                continue
            assert isinstance(json.loads(line.decode("utf-8")), dict), f"{path}:{i + 1}"
            checked += 1
    assert checked > 300


# ---------------------------------------------------------------- Claude Code transcripts


def test_the_truncated_transcript_ends_inside_a_multibyte_character() -> None:
    raw = TRUNCATED.read_bytes()
    assert not raw.endswith(b"\n")
    last = raw.rsplit(b"\n", 1)[1]
    assert last[-1] >= 0xC0, "the file ends on the first byte of a multi-byte UTF-8 sequence"
    with pytest.raises(json.JSONDecodeError):  # without the stray byte it is valid UTF-8, but cut JSON
        json.loads(last[:-1].decode("utf-8"))
    assert all(json.loads(line) for line in raw.split(b"\n")[:-1])


def test_the_deep_transcript_is_what_its_script_writes() -> None:
    spec = importlib.util.spec_from_file_location("make_deep", TRANSCRIPTS / "make_deep.py")
    assert spec and spec.loader
    make_deep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_deep)
    assert make_deep.render() == DEEP.read_bytes()
    lines = DEEP.read_text(encoding="utf-8").splitlines()
    assert nesting_depth(lines[DEEP_LINE]) > 1000
    assert all(nesting_depth(line) < 20 for i, line in enumerate(lines) if i != DEEP_LINE)


def transcript_records() -> dict[Path, list[dict]]:
    out = {}
    for path in files(TRANSCRIPTS, "*.jsonl"):
        text = path.read_bytes().decode("utf-8", errors="ignore")
        recs = []
        for line in text.splitlines():
            try:
                recs.append(json.loads(line))
            except (ValueError, RecursionError):
                continue
        out[path] = recs
    return out


def blocks(record: dict) -> list[dict]:
    content = (record.get("message") or {}).get("content")
    return content if isinstance(content, list) else []


def test_the_transcripts_use_every_record_type_and_field() -> None:
    by_file = transcript_records()
    records = [r for recs in by_file.values() for r in recs]
    assert {r["type"] for r in records} >= {
        "user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation", "progress",
    }
    assert {b["type"] for r in records for b in blocks(r)} >= {"text", "thinking", "tool_use", "tool_result", "image"}
    assert {r.get("subtype") for r in records if r["type"] == "system"} >= {"compact_boundary", "api_error", "turn_duration", None}
    assert {r["compactMetadata"]["trigger"] for r in records if r.get("subtype") == "compact_boundary"} == {"manual", "auto"}
    assert any(r.get("isCompactSummary") for r in records)
    assert any(r.get("isApiErrorMessage") for r in records)
    assert any(isinstance(r.get("message", {}).get("content"), str) for r in records if r["type"] == "user")
    assert any(b.get("is_error") for r in records for b in blocks(r) if b["type"] == "tool_result")
    assert {b["name"] for r in records for b in blocks(r) if b["type"] == "tool_use"} >= {
        "Bash", "Read", "Edit", "Write", "Grep", "TodoWrite", "Task", "WebFetch",
    }
    for key in ("cwd", "gitBranch", "sessionId", "uuid", "parentUuid", "timestamp", "version", "userType", "isSidechain"):
        assert all(key in r for r in records if r["type"] in ("user", "assistant")), key
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
    for markup in ("<ide_selection>", "<ide_opened_file>", "<system-reminder>", "<command-name>", "<command-message>",
                   "<command-args>", "<local-command-stdout>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
                   "Caveat: The messages below were generated by the user while running local commands"):
        assert markup in text, markup
    # an assistant message streamed as several lines that share message.id
    ids = [r["message"]["id"] for r in records if r["type"] == "assistant"]
    assert len(ids) > len(set(ids))


def test_a_failing_test_run_fails_below_its_first_line() -> None:
    failures = [
        b for recs in transcript_records().values() for r in recs for b in blocks(r)
        if b["type"] == "tool_result" and b.get("is_error") and "FAILED" in str(b["content"])
    ]
    assert failures
    for b in failures:
        first, rest = str(b["content"]).split("\n", 1)
        assert "FAILED" not in first and "FAILED" in rest


def test_summaries_point_into_this_conversation_another_one_and_one_not_here() -> None:
    by_file = transcript_records()
    owner = {r["uuid"]: path for path, recs in by_file.items() for r in recs if "uuid" in r}
    kinds = set()
    for path, recs in by_file.items():
        for r in recs:
            if r["type"] == "summary":
                leaf = owner.get(r["leafUuid"])
                kinds.add("here" if leaf == path else "missing" if leaf is None else "elsewhere")
    assert kinds == {"here", "elsewhere", "missing"}


def test_every_parent_uuid_points_into_its_own_file() -> None:
    for path, recs in transcript_records().items():
        raw = path.read_bytes().decode("utf-8", errors="ignore")
        uuids = set(re.findall(r'"uuid":"([0-9a-f-]{36})"', raw))  # also those on lines too deep to parse
        for r in recs:
            assert r.get("parentUuid") is None or r["parentUuid"] in uuids, f"{path.name}: {r['uuid']}"
        stamps = [r["timestamp"] for r in recs if "timestamp" in r]
        assert stamps == sorted(stamps), f"{path.name}: timestamps go backwards"


def test_subagent_transcripts_belong_to_their_parent_sessions() -> None:
    subagents = files(TRANSCRIPTS, "agent-*.jsonl")
    assert len(subagents) == 5
    assert any(p.parent.name == "subagents" for p in subagents) and any(p.parent == TERN for p in subagents)
    sessions = {p.stem for p in files(TRANSCRIPTS, "*.jsonl") if not p.name.startswith("agent-")}
    for path in subagents:
        recs = jsonl_records(path)
        assert recs[0]["parentUuid"] is None and recs[0]["type"] == "user"
        assert all(r["isSidechain"] and r["agentId"] == path.stem.removeprefix("agent-") for r in recs)
        assert {r["sessionId"] for r in recs} <= sessions
    inline = jsonl_records(TERN / "71c2e0aa-3f58-4d9b-a6e1-c04b82d7f319.jsonl")
    assert any(r.get("isSidechain") for r in inline) and not inline[0]["isSidechain"]


# ---------------------------------------------------------------- Claude Code memory


def test_the_memory_index_is_hand_kept_notes() -> None:
    lines = (MEMORY / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert 100 < len(lines) < 200
    links = [m for line in lines for m in re.findall(r"\]\(([^)]+\.md)\)", line)]
    assert len(links) >= 18
    assert all((MEMORY / link).is_file() for link in links)
    prose = [line for line in lines if line and not line.startswith(("#", "- [", "|", "```")) and "](" not in line]
    assert len(prose) > 60, "most of MEMORY.md is notes, not links"


def test_the_memory_topic_files_use_every_frontmatter_dialect() -> None:
    topics = [p for p in files(MEMORY, "*.md") if p.name != "MEMORY.md"]
    assert len(topics) == 19
    kinds: dict[str, list[str]] = {"metadata": [], "flat": [], "none": [], "broken": []}
    for path in topics:
        block = frontmatter(path)
        if block is None:
            kinds["none"].append(path.name)
            continue
        try:
            data = yaml.safe_load(block)
        except yaml.YAMLError:
            kinds["broken"].append(path.name)
            continue
        kinds["metadata" if "metadata" in data else "flat"].append(path.name)
        if "metadata" in data:
            assert data["metadata"]["type"] in {"user", "feedback", "project", "reference"}
    assert kinds["broken"] == ["feedback_sentry_scrubber.md"]
    assert len(kinds["none"]) == 3 and len(kinds["flat"]) >= 3 and len(kinds["metadata"]) >= 10
    modified = [p for p in topics if frontmatter(p) and "  modified:" in (frontmatter(p) or "")]
    assert len(modified) >= 8
    assert any("  type: feedback" in (frontmatter(p) or "") for p in topics)
    assert len((MEMORY / "release_checklist.md").read_text(encoding="utf-8").splitlines()) == 198


# ---------------------------------------------------------------- basic-memory


def test_basic_memory_notes_are_as_its_writer_left_them() -> None:
    notes = files(NOTES, "*.md")
    assert len(notes) >= 15
    refused = set()
    for path in notes:
        block = frontmatter(path)
        if block is None:
            continue
        try:
            data = yaml.safe_load(block)
            assert data["title"] and data["permalink"]
        except yaml.YAMLError:
            refused.add(str(path.relative_to(NOTES)))
            assert re.search(r"^title: [^\"'].*: ", block, re.M)
    assert refused == UNQUOTED_COLON_TITLES
    text = "\n".join(p.read_text(encoding="utf-8") for p in notes)
    assert len(re.findall(r"^- \[[a-z]+\] .+", text, re.M)) > 80  # observations
    assert len(re.findall(r"^- [a-z_]+ \[\[[^\]]+\]\]", text, re.M)) > 40  # relations
    assert re.search(r"#\w+ \([^)]+\)$", text, re.M)  # an observation with a tag and a context
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) > 200 for p in notes) >= 2
    assert len([p for p in notes if p.parent != NOTES and p.parent.parent != NOTES]) >= 6  # nested two deep


# ---------------------------------------------------------------- Obsidian


@pytest.mark.parametrize("vault", VAULTS, ids=["en", "ja"])
def test_an_obsidian_vault_has_its_config_attachments_and_canvas(vault: Path) -> None:
    assert (vault / ".obsidian" / "app.json").is_file()
    for png in files(vault, "*.png"):
        assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    for pdf in files(vault, "*.pdf"):
        assert pdf.read_bytes().startswith(b"%PDF-") and pdf.read_bytes().rstrip().endswith(b"%%EOF")
    canvas = json.loads(next(iter(files(vault, "*.canvas"))).read_text(encoding="utf-8"))
    assert canvas["nodes"] and canvas["edges"]
    targets = {n["file"] for n in canvas["nodes"] if n["type"] == "file"}
    assert all((vault / t).is_file() for t in targets)


def test_the_obsidian_vaults_use_every_link_and_property_form() -> None:
    notes = [p for v in VAULTS for p in files(v, "*.md") if ".trash" not in p.parts]
    text = "\n".join(p.read_text(encoding="utf-8") for p in notes)
    for pattern in (r"\[\[[^\]|#^]+\]\]", r"\[\[[^\]|]+\|[^\]]+\]\]", r"\[\[[^\]#]+#[^\]^|]+\]\]", r"\[\[[^\]]+#\^[^\]]+\]\]",
                    r"\[\[[^\]#]+\^[^\]]+\]\]", r"^\|.*\[\[[^\]]+\\\|[^\]]+\]\].*\|$", r"!\[\[[^\]]+\.md?[^\]]*\]\]|!\[\[[^\].]+\]\]",
                    r"!\[\[[^\]]+\.png(\|\d+)?\]\]", r"!\[\[[^\]]+\.pdf\]\]", r"^> \[!\w+\]-? ?", r"#project/alpha", r"#仕事/物流"):
        assert re.search(pattern, text, re.M), pattern
    aliases = [yaml.safe_load(fm).get("aliases") for p in notes if (fm := frontmatter(p)) and "{{" not in fm]
    assert any(isinstance(a, list) for a in aliases) and any(isinstance(a, str) for a in aliases)
    assert any("/" in t for p in notes if (fm := frontmatter(p)) and "{{" not in fm for t in (yaml.safe_load(fm).get("tags") or []))
    assert re.search("[\u3040-\u30ff]", text) and re.search("[餐厅点菜]", text)
    others = {p.suffix for v in VAULTS for p in files(v) if ".obsidian" not in p.parts and p.suffix != ".md"}
    assert others >= {".png", ".pdf", ".canvas", ".csv", ".txt", ".base"}


# ---------------------------------------------------------------- MCP memory, Codex, Gemini


def test_mcp_memory_v1_is_the_reference_servers_and_v2_a_forks_update() -> None:
    v1_path, v2_path = REAL / "mcp-memory" / "v1" / "memory.jsonl", REAL / "mcp-memory" / "v2" / "memory.jsonl"
    assert not v1_path.read_bytes().endswith(b"\n")
    v1, v2 = jsonl_records(v1_path), jsonl_records(v2_path)
    kinds = [r["type"] for r in v1]
    assert kinds == sorted(kinds), "entities first, then relations"
    for r in v1:
        keys = {"type", "name", "entityType", "observations"} if r["type"] == "entity" else {"type", "from", "to", "relationType"}
        assert set(r) == keys
    assert all({"createdAt", "version"} <= set(r) for r in v2)
    assert any(set(r) - {"type", "name", "entityType", "observations", "createdAt", "version"} for r in v2 if r["type"] == "entity")
    rel = lambda rs: {(r["from"], r["to"], r["relationType"]) for r in rs if r["type"] == "relation"}  # noqa: E731
    assert rel(v1) - rel(v2) == {("Dana Okafor", "Leeds", "lives_in")} and len(rel(v2) - rel(v1)) == 3
    names = {r["name"] for r in v2 if r["type"] == "entity"}
    assert all(a in names and b in names for a, b, _ in rel(v2))


def test_codex_rollouts_are_timestamped_typed_payloads() -> None:
    rollouts = [p for p in files(REAL / "codex", "rollout-*.jsonl") if "payload" in jsonl_records(p)[0]]
    assert len(rollouts) == 3
    seen = set()
    for path in rollouts:
        recs = jsonl_records(path)
        assert recs[0]["type"] == "session_meta" and recs[0]["payload"]["id"] in path.name
        assert all(set(r) == {"timestamp", "type", "payload"} for r in recs)
        seen |= {r["type"] for r in recs} | {f"{r['type']}:{r['payload'].get('type')}" for r in recs}
    assert {"session_meta", "turn_context", "response_item", "event_msg", "compacted"} <= seen
    assert {"response_item:function_call", "response_item:function_call_output", "response_item:custom_tool_call",
            "response_item:reasoning", "event_msg:turn_aborted", "event_msg:token_count"} <= seen
    events = next(p for p in rollouts if "0199104e" in p.name)  # a rollout whose conversation is only in events
    assert not any(r["type"] == "response_item" for r in jsonl_records(events))


def test_older_codex_rollouts_are_as_their_clis_wrote_them() -> None:
    """The mid-2025 Rust CLI wrote items without an envelope after a header line; the TypeScript CLI one document."""
    (bare,) = files(REAL / "codex" / "dot-codex" / "sessions" / "2025" / "07", "rollout-*.jsonl")
    recs = jsonl_records(bare)
    assert set(recs[0]) == {"id", "timestamp", "instructions", "git"} and recs[0]["id"] in bare.name
    assert {"record_type": "state"} in recs and all("payload" not in r for r in recs)
    outputs = [r["output"] for r in recs if r.get("type") == "function_call_output"]
    assert {"content", "success"} == set(next(o for o in outputs if isinstance(o, dict)))
    (doc,) = files(REAL / "codex", "rollout-*.json")
    data = json.loads(doc.read_text(encoding="utf-8"))
    assert set(data) == {"session", "items"} and data["session"]["id"] in doc.name


def test_gemini_files_are_where_and_as_the_cli_writes_them() -> None:
    root = REAL / "gemini" / "dot-gemini" / "tmp"
    (project,) = root.iterdir()
    assert project.name == hashlib.sha256(b"/home/ines/src/orchard").hexdigest()
    legacy = json.loads(next(project.glob("chats/*.json")).read_text(encoding="utf-8"))
    assert {"sessionId", "projectHash", "startTime", "lastUpdated", "messages"} <= set(legacy)
    assert {m["type"] for m in legacy["messages"]} >= {"user", "gemini", "info"}
    lines = jsonl_records(next(project.glob("chats/session-2026-05-*.jsonl")))
    assert lines[0]["projectHash"] == project.name
    assert any("$rewindTo" in r for r in lines) and any("$set" in r for r in lines)
    newer = jsonl_records(next(project.glob("chats/session-2026-09-*.jsonl")))  # the schema's later drift
    ids = [r["id"] for r in newer if "id" in r]
    assert len(ids) > len(set(ids))  # a message written again under its id
    assert any(isinstance(r.get("content"), dict) for r in newer) and any("displayContent" in r for r in newer)
    (sub,) = (project / "chats" / newer[0]["sessionId"]).glob("*.jsonl")
    assert jsonl_records(sub)[0]["kind"] == "subagent"
    checkpoint = json.loads((project / "checkpoint-tool-loans.json").read_text(encoding="utf-8"))
    assert [c["role"] for c in checkpoint["history"]][:2] == ["user", "model"]
    assert isinstance(json.loads((project / "logs.json").read_text(encoding="utf-8")), list)
