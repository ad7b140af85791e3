"""The team's memory beside the personal one: `team/PATH` reads and writes the project's team memory, in the
MCP tools, the CLI and the hooks alike; where the project keeps none, a write there is refused in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from gitmachines import git, isolate
from mcp import Client
from serving import stdio_exchange

import memdir
from memdir.faces import mcp as memdir_mcp
from memdir.faces import tools
from memdir.faces.auth import Memories, Principal, Principals
from memdir.faces.cli import main
from memdir.recall import hooks, team
from memdir.recall.team import Team

REVIEWS = "---\nname: Reviews\ndescription: Every change needs two reviews before merging\ntype: feedback\n---\n" \
          "Two reviews before a merge; the second from another team.\n"


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(tmp_path / "home", monkeypatch.setenv)


def project(tmp_path: Path, *, shared: bool = True) -> Path:
    """A project's repository, keeping a team memory (`team-memory/`) when `shared`."""
    top = tmp_path / "flock"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    if shared:
        memdir.open(top / "team-memory").close()
    return top


@pytest.fixture
def personal(tmp_path: Path) -> Iterator[memdir.Memdir]:
    with memdir.open(tmp_path / "personal", actor="mcp:test") as md:
        md.write("feedback/tone.md", "Short answers, no preamble.\n", type="feedback", description="Answer briefly")
        yield md


def session(md: memdir.Memdir, where: Path) -> tools.Session:
    return tools.Session(md, team=Team(md, where, actor=md.actor, agent=True))


def test_the_tools_write_and_read_the_team_memory_under_team(tmp_path: Path, personal: memdir.Memdir) -> None:
    top = project(tmp_path)
    s = session(personal, top)
    wrote = s.handle("write_memory_file", {"path": "team/feedback/reviews.md", "content": REVIEWS})
    assert not wrote.is_error and wrote.text.startswith("created team/feedback/reviews.md")
    assert "two reviews" in (top / "team-memory" / "feedback" / "reviews.md").read_text()
    assert not (tmp_path / "personal" / "team").exists() and not (tmp_path / "personal" / "feedback" / "reviews.md").exists()
    with memdir.open(top / "team-memory") as shared:
        assert [e.path for e in shared.list()] == ["feedback/reviews.md"]
        assert shared.history("feedback/reviews.md")[0].actor == "mcp:test"

    read = s.handle("read_memory_file", {"path": "team/feedback/reviews.md"})
    assert read.text.startswith("team/feedback/reviews.md (version ") and read.data["path"] == "team/feedback/reviews.md"

    found = s.handle("search_memory", {"query": "how many reviews before a merge"})
    assert "- team/feedback/reviews.md (the team's) — Every change needs two reviews" in found.text
    assert [h["path"] for h in found.data["hits"] if h.get("team")] == ["team/feedback/reviews.md"]

    ctx = s.handle("get_memory_context", {"query": "reviews before a merge"})
    assert 'path="feedback/tone.md"' in ctx.text and 'path="team/feedback/reviews.md"' in ctx.text
    assert ctx.text.index("Answer briefly") < ctx.text.index(team.HEADER) < ctx.text.index("two reviews")
    assert ctx.data["tokens"] <= ctx.data["budget"] == 2000
    assert {"team/feedback/reviews.md", "feedback/tone.md"} <= {i["path"] for i in ctx.data["included"]}
    for budget in (100, 300, 420):  # a small budget goes to yours first, the team's only where a third has room
        small = s.handle("get_memory_context", {"budget": budget})
        assert not small.is_error and small.data["tokens"] <= budget, small.text

    index = s.handle("read_memory_index", {})
    assert "Answer briefly" in index.text and 'read_memory_index(folder="team/")' in index.text
    theirs = s.handle("read_memory_index", {"folder": "team/"})
    assert "Every change needs two reviews" in theirs.text and "Answer briefly" not in theirs.text
    assert s.handle("list_memory_files", {"folder": "team/"}).data["files"][0]["path"] == "team/feedback/reviews.md"


def test_edits_renames_deletes_and_undo_stay_in_the_memory_of_their_path(tmp_path: Path, personal: memdir.Memdir) -> None:
    top = project(tmp_path)
    s = session(personal, top)
    s.handle("write_memory_file", {"path": "team/feedback/reviews.md", "content": REVIEWS})
    edited = s.handle("edit_memory_file", {"path": "team/feedback/reviews.md", "old": "another team", "new": "QA"})
    assert edited.text.startswith("edited team/feedback/reviews.md")
    assert "second from QA" in (top / "team-memory" / "feedback" / "reviews.md").read_text()
    assert s.handle("append_memory", {"path": "team/notes/log.md", "line": "2026-12-06 release cut"}).text.startswith(
        "created team/notes/log.md")
    moved = s.handle("rename_memory_file", {"old_path": "team/notes/log.md", "new_path": "team/notes/releases.md"})
    assert moved.data["path"] == "team/notes/releases.md" and (top / "team-memory" / "notes" / "releases.md").is_file()
    across = s.handle("rename_memory_file", {"old_path": "team/feedback/reviews.md", "new_path": "feedback/reviews.md"})
    assert across.is_error and "\n" not in across.text and "a rename stays in one memory" in across.text
    assert (top / "team-memory" / "feedback" / "reviews.md").is_file()
    assert s.handle("delete_memory_file", {"path": "team/feedback/reviews.md"}).text.startswith(
        "deleted team/feedback/reviews.md")
    assert not (top / "team-memory" / "feedback" / "reviews.md").exists()
    assert s.handle("undo_memory_change", {"path": "team/feedback/reviews.md"}).text.startswith(
        "restored team/feedback/reviews.md")
    assert "second from QA" in (top / "team-memory" / "feedback" / "reviews.md").read_text()
    assert [e.path for e in personal.list()] == ["feedback/tone.md"]  # nothing of the team's landed in yours


def test_without_a_team_memory_a_team_write_is_refused_in_one_line(tmp_path: Path, personal: memdir.Memdir) -> None:
    top = project(tmp_path, shared=False)
    refused = session(personal, top).handle("write_memory_file", {"path": "team/feedback/reviews.md", "content": REVIEWS})
    assert refused.is_error and "\n" not in refused.text
    assert f"{top} keeps none; set one up with `memdir --root @team init`" in refused.text
    outside = tmp_path / "scratch"
    outside.mkdir()
    away = session(personal, outside).handle("append_memory", {"path": "team/x.md", "line": "x"})
    assert away.is_error and f"{outside} is in no git repository" in away.text
    assert [e.path for e in personal.list()] == ["feedback/tone.md"]
    # Claude Code keeps its shared memory as team/ inside the private one: there it stays an ordinary folder
    personal.write("team/oncall.md", "Rotation: weekly.\n", description="on-call rotation")
    assert not session(personal, top).handle("append_memory", {"path": "team/oncall.md", "line": "Mondays"}).is_error
    assert "Mondays" in personal.read("team/oncall.md").body
    (tmp_path / "again").mkdir()
    with memdir.open(project(tmp_path / "again") / "team-memory") as shared:  # a server of the team's memory itself
        assert not session(shared, tmp_path / "again" / "flock").handle("write_memory_file", {
            "path": "team/x.md", "content": "x"}).is_error
        assert (tmp_path / "again" / "flock" / "team-memory" / "team" / "x.md").is_file()


def test_the_cli_writes_team_paths_to_the_team_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = project(tmp_path)
    monkeypatch.chdir(top)
    mine = str(tmp_path / "personal")
    runner = CliRunner()
    wrote = runner.invoke(main, ["--root", mine, "write", "team/project/ci.md", "-d", "CI runs on 3.12", "--body", "3.12."])
    assert wrote.exit_code == 0 and wrote.stdout.startswith("created team/project/ci.md")
    assert (top / "team-memory" / "project" / "ci.md").is_file() and not (tmp_path / "personal").exists()
    assert runner.invoke(main, ["--root", mine, "read", "team/project/ci.md"]).stdout.endswith("3.12.\n")
    assert runner.invoke(main, ["--root", mine, "write", "user/me.md", "-d", "Prefers Python 3.12", "--body", "x"]).exit_code == 0
    found = runner.invoke(main, ["--root", mine, "search", "which python CI runs on", "--json"])
    assert {"team/project/ci.md", "user/me.md"} <= {h["path"] for h in json.loads(found.stdout)}
    ctx = json.loads(runner.invoke(main, ["--root", mine, "context", "python CI", "--json"]).stdout)
    assert 'path="team/MEMORY.md"' in ctx["text"] and "CI runs on 3.12" in ctx["text"]
    assert ctx["text"].index("user/me.md") < ctx["text"].index(team.HEADER)
    assert ctx["tokens"] <= ctx["budget"] == 2000
    moved = runner.invoke(main, ["--root", mine, "mv", "team/project/ci.md", "project/ci.md"])
    assert moved.exit_code == 1 and "mv stays in one memory" in moved.stderr
    assert runner.invoke(main, ["--root", mine, "rm", "team/project/ci.md"]).exit_code == 0
    undone = runner.invoke(main, ["--root", mine, "undo", "team/project/ci.md"])
    assert undone.exit_code == 0 and "team/project/ci.md" in undone.stdout
    assert (top / "team-memory" / "project" / "ci.md").is_file()
    (top / "team-memory").rename(top / "gone")  # the project keeps no team memory any more
    refused = runner.invoke(main, ["--root", mine, "write", "team/project/ci.md", "--body", "3.12."])
    assert refused.exit_code == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert "`memdir --root @team init`" in refused.stderr and not (tmp_path / "personal" / "team").exists()


def test_the_hooks_show_the_team_memory_under_the_paths_the_tools_take(tmp_path: Path, personal: memdir.Memdir) -> None:
    top = project(tmp_path)
    session(personal, top).handle("write_memory_file", {"path": "team/feedback/reviews.md", "content": REVIEWS})
    payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(top), "session_id": "s1"}
    text = hooks.session_start(personal, payload)["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert team.HEADER in text and 'path="team/feedback/reviews.md"' in text and 'path="feedback/tone.md"' in text
    pulled = top / "team-memory" / "project" / "deploys.md"  # a teammate's memory, brought by a git pull
    pulled.parent.mkdir()
    pulled.write_text("---\nname: Deploys\ndescription: Deploys go out on Thursdays from the release branch\n"
                      "type: project\n---\nDeploys go out on Thursdays from the release branch, never on Fridays.\n")
    asked = {"hook_event_name": "UserPromptSubmit", "prompt": "which day do deploys go out from the release branch",
             "cwd": str(top), "session_id": "s1"}
    hit = hooks.user_prompt_submit(personal, asked)["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert 'path="team/project/deploys.md"' in hit and "never on Fridays" in hit


def test_the_stdio_server_started_in_a_project_serves_its_team_memory(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    top = project(tmp_path)
    monkeypatch.chdir(top)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    calls = [("write_memory_file", {"path": "team/feedback/reviews.md", "content": REVIEWS}),
             ("search_memory", {"query": "reviews before a merge"})]
    lines = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})] + [
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}})
        for n, (name, args) in enumerate(calls, 2)] + [json.dumps({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
                                                          "params": {"uri": "memdir://file/team/feedback/reviews.md"}})]
    answers, code = stdio_exchange(tmp_path / "personal", lines)
    texts = {a["id"]: a["result"]["content"][0]["text"] for a in answers if a["id"] in (2, 3)}
    assert code == 0 and texts[2].startswith("created team/feedback/reviews.md"), texts
    assert "team/feedback/reviews.md (the team's)" in texts[3]
    resource = next(a for a in answers if a["id"] == 4)["result"]["contents"][0]["text"]
    assert "Two reviews before a merge" in resource
    assert (top / "team-memory" / "feedback" / "reviews.md").is_file()


def test_the_cli_lists_greps_and_logs_the_team_memory_beside_yours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = project(tmp_path)
    monkeypatch.chdir(top)
    mine = str(tmp_path / "personal")
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(main, ["--root", mine, *args])

    assert run("write", "team/project/ci.md", "-d", "CI runs on 3.12", "--body", "Python 3.12 in CI.").exit_code == 0
    assert run("write", "user/me.md", "-d", "Prefers Python 3.12", "--body", "Python 3.12 at home.").exit_code == 0
    assert [e["path"] for e in json.loads(run("ls", "--json").stdout)] == ["user/me.md", "team/project/ci.md"]
    assert run("ls", "team/").stdout.startswith("team/project/ci.md\tproject\t")
    assert run("ls", "team/").stdout.count("\n") == 1 and run("ls", "user/").stdout.startswith("user/me.md\t")
    assert run("grep", "python 3.12 (at|in)").stdout == "user/me.md:6:Python 3.12 at home.\nteam/project/ci.md:6:Python 3.12 in CI.\n"
    assert run("grep", "python", "--prefix", "team/project/").stdout == "team/project/ci.md:6:Python 3.12 in CI.\n"
    assert {r["path"] for r in json.loads(run("log", "--json").stdout)} == {"user/me.md", "team/project/ci.md"}
    logged = run("log", "team/project/ci.md")
    assert logged.exit_code == 0 and logged.stdout.count("\n") == 1 and " write team/project/ci.md " in logged.stdout
    assert [r["path"] for r in json.loads(run("log", "team/", "--json").stdout)] == ["team/project/ci.md"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_resources_and_list_memory_files_list_the_team_memory_after_yours(tmp_path: Path, personal: memdir.Memdir) -> None:
    top = project(tmp_path)
    with memdir.open(top / "team-memory") as shared:
        shared.write("feedback/reviews.md", REVIEWS)
    memories = Memories(tmp_path / "personal", transport="mcp")
    try:
        async with Client(memdir_mcp.server(Principals(Principal("default")), memories, team=top)) as client:  # type: ignore[arg-type]
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert listed == ["memdir://index", "memdir://file/feedback/tone.md", "memdir://file/team/feedback/reviews.md"]
            read = (await client.read_resource(listed[-1])).contents[0]
            assert "Two reviews before a merge" in read.text  # type: ignore[union-attr]
            files = (await client.call_tool("list_memory_files", {})).structured_content
            assert [f["path"] for f in files["files"]] == ["feedback/tone.md", "team/feedback/reviews.md"]  # type: ignore[index]
            team_only = (await client.call_tool("list_memory_files", {"folder": "team/"})).structured_content
            assert [f["path"] for f in team_only["files"]] == ["team/feedback/reviews.md"]  # type: ignore[index]
    finally:
        memories.close()
