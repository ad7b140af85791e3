"""The real Claude Code CLI (tests/clients/clients.py's pinned version) with memdir's MCP server and hooks,
headless against the scripted Anthropic API of standin.py (issue 35, items 3, 4 and 6)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from binaries import claude_bin  # noqa: F401 (a fixture; F811 is off here for its parameters)
from drive import MEMDIR, claude, mcp_config, stream
from standin import Call, Request, StandIn, Text

import memdir

FEEDBACK = "Never propose dark themes."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    with memdir.open(tmp_path / "memory", create=True) as md:
        md.write("feedback/no-dark-themes.md", FEEDBACK + "\n", type="feedback", description="no dark UI")
        md.write("project/flock.md", "# Flock\nRoute planner.\nLaunch date: 2026-12-15.\n", type="project",
                 description="Flock: the route planner and its launch date")
    return tmp_path / "memory"


def read(result: str) -> str:
    """A tool result as the model reads it: Claude Code passes structuredContent on as JSON text."""
    data = json.loads(result) if result.startswith("{") else None
    return str(data["text"]) if isinstance(data, dict) else result


def hooks_installed(project: Path, root: Path) -> None:
    done = subprocess.run([*MEMDIR, "--root", str(root), "hook", "install"], cwd=project, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_every_tool_result_reaches_the_model_with_its_text(claude_bin: Path, tmp_path: Path, project: Path,
                                                           root: Path) -> None:
    """Claude Code hands the model only structuredContent when a result has it: the undo hint, the warning and
    the memory text must be in it."""
    def script(r: Request) -> list[Text | Call]:
        done = len(r.tool_results())
        if done == 0:
            return [Call("write_memory_file", {"path": "project/flock.md", "content": "Launch moved to 2027-01-10.\n"})]
        if done == 1:
            return [Call("get_memory_context", {})]
        return [Text("done")]

    with StandIn(script) as api:
        run = claude(claude_bin, tmp_path / "home", api.url, project, "update the flock launch",
                     "--mcp-config", str(mcp_config(tmp_path / "mcp.json", root)))
        results = api.main()[-1].tool_results()
    assert run.code == 0, run.stderr
    wrote, context = (read(x) for x in results)
    assert 'undo_memory_change(path="project/flock.md")' in wrote
    assert "you replaced project/flock.md without reading it" in wrote
    assert FEEDBACK in context and "[flock](project/flock.md)" in context  # the memory text, not its account
    assert "mcp__memdir__write_memory_file" in api.main()[0].tools


def test_the_hooks_give_context_capture_the_session_and_a_resume_adds_nothing_twice(
        claude_bin: Path, tmp_path: Path, project: Path, root: Path) -> None:
    hooks_installed(project, root)
    with StandIn(lambda r: [Text("The launch is on 2026-12-15.")]) as api:
        home = tmp_path / "home"
        first = claude(claude_bin, home, api.url, project, "When is the flock launch date?")
        assert first.code == 0, first.stderr
        opening = api.main()[0].conversation()
        assert opening.count(FEEDBACK) == 1  # SessionStart
        assert "Launch date: 2026-12-15." in opening  # UserPromptSubmit recalled the file the prompt is about
        session = first.session()
        again = claude(claude_bin, home, api.url, project, "And the freeze?", "--resume", session)
        assert again.code == 0, again.stderr
        resumed = api.main()[-1].conversation()
    assert resumed.count(FEEDBACK) == 1  # the first start's copy, not a second one
    with memdir.open(root) as md:
        records = [e.path for e in md.list("sessions")]
    assert len(records) == 1  # SessionEnd captured the session (the resume is the same session: one record)
    with memdir.open(root) as md:
        text = md.read(records[0]).text
    assert "flock launch date" in text.lower()


def test_stop_reminds_once_when_a_request_to_remember_saved_nothing(claude_bin: Path, tmp_path: Path, project: Path,
                                                                   root: Path) -> None:
    hooks_installed(project, root)
    with StandIn(lambda r: [Text("Noted.")]) as api:
        run = claude(claude_bin, tmp_path / "home", api.url, project, "Remember that I use tabs, not spaces.")
        turns = api.main()
    assert run.code == 0, run.stderr
    assert len(turns) == 2 and "remember" in turns[1].conversation().lower()  # the reminder, then the turn ends
    assert "memdir" in turns[1].conversation()


def test_compaction_captures_the_session_first_and_the_memory_outlives_it(claude_bin: Path, tmp_path: Path,
                                                                          project: Path, root: Path) -> None:
    """A prompt, `/compact`, a prompt, in one process (stream-json input, as an SDK or a person at the terminal
    sends them): PreCompact captures the session before the summary replaces it, and the memory's context
    reaches the model after compaction once, with the summary."""
    hooks_installed(project, root)

    def script(r: Request) -> list[Text | Call]:
        asked = r.conversation()[-6000:]
        return [Text("<summary>We settled the flock launch date.</summary>" if "<summary>" in asked
                     else "The launch is on 2026-12-15.")]

    prompts = ["When is the flock launch date?", "/compact", "And the freeze before it?"]
    with StandIn(script) as api:
        run = stream(claude_bin, tmp_path / "home", api.url, project, prompts)
        turns = api.main()
    assert run.code == 0, run.stderr[-2000:]
    compacting = [t for t in turns if "<summary>" in t.conversation()[-6000:]]
    after = turns[-1].conversation()
    assert compacting and "We settled the flock launch date." in after and "And the freeze before it?" in after
    assert after.count(FEEDBACK) == 1  # SessionStart's compact source gives it again: the summary replaced it
    with memdir.open(root) as md:
        [record] = md.list("sessions")
        versions = [(r.new or b"").decode() for r in md.history(record.path)]
    assert any("event: PreCompact:manual" in v and "flock launch date" in v.lower() for v in versions)
    assert "event: SessionEnd" in versions[0]  # the session's one record, replaced by the capture at its end


def test_the_team_memory_reaches_the_model_and_a_team_write_lands_in_the_repository(
        claude_bin: Path, tmp_path: Path, project: Path, root: Path) -> None:
    """In a project whose repository keeps team-memory/, the model searches the team's files beside the user's, a
    write under team/ lands in the repository, list_memory_files lists the team's files after the user's, and the
    prompt hook recalls the team's file (issue 36, item 5)."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for args in (["--root", "@team", "init"],
                 ["--root", str(root), "write", "team/project/deploys.md", "-t", "project", "-d",
                  "How deploys go out", "--body", "Deploys go out through the blue-green script, never by hand."]):
        done = subprocess.run([*MEMDIR, *args], cwd=project, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    hooks_installed(project, root)

    def script(r: Request) -> list[Text | Call]:
        done = len(r.tool_results())
        if done == 0:
            return [Call("search_memory", {"query": "blue-green deploys"})]
        if done == 1:
            return [Call("write_memory_file", {"path": "team/feedback/reviews.md", "content": "Two reviews a merge.\n"})]
        if done == 2:
            return [Call("list_memory_files", {})]
        return [Text("done")]

    with StandIn(script) as api:
        run = claude(claude_bin, tmp_path / "home", api.url, project, "How do deploys go out?",
                     "--mcp-config", str(mcp_config(tmp_path / "mcp.json", root)))
        found, wrote, listed = (read(x) for x in api.main()[-1].tool_results())
        opening = api.main()[0].conversation()
    assert run.code == 0, run.stderr
    assert "team/project/deploys.md" in found
    assert "blue-green script" in opening  # UserPromptSubmit recalled the team's file
    assert (project / "team-memory" / "feedback" / "reviews.md").exists() and "team/feedback/reviews.md" in wrote
    assert not (root / "team").exists()  # nothing of the team's in the user's own memory
    assert "team/project/deploys.md" in listed and "team/feedback/reviews.md" in listed  # the team's files, listed


def test_a_question_in_chinese_finds_the_english_file_through_search_memory(claude_bin: Path, tmp_path: Path,
                                                                            project: Path, root: Path) -> None:
    """A memory whose vectors `memdir reindex --semantic` built: the model searches in Chinese with the tool's
    default mode, and the English file that answers comes back through the real CLI (the multilingual model)."""
    with memdir.open(root) as md:
        md.write("home/kitchen.md", "We picked white quartz countertops in March.\n", description="kitchen renovation")
    done = subprocess.run([*MEMDIR, "--root", str(root), "reindex", "--semantic"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr

    def script(r: Request) -> list[Text | Call]:
        if not r.tool_results():
            return [Call("search_memory", {"query": "我们厨房选了什么台面？"})]
        return [Text("done")]

    with StandIn(script) as api:
        run = claude(claude_bin, tmp_path / "home", api.url, project, "我们厨房选了什么台面？",
                     "--mcp-config", str(mcp_config(tmp_path / "mcp.json", root)))
        found = read(api.main()[-1].tool_results()[0])
    assert run.code == 0, run.stderr
    assert "home/kitchen.md" in found
    assert "project/flock.md" not in found or found.index("home/kitchen.md") < found.index("project/flock.md")
