"""The MCP server, through the official SDK's client: in process, over stdio, and over HTTP."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from serving import Running, call, env_without_memdir, stdio_answers, stdio_exchange

import memdir
from memdir.faces import auth, tools
from memdir.faces import mcp as memdir_mcp
from memdir.faces.auth import Memories, Principal, Principals

pytestmark = pytest.mark.anyio
TOKEN = "serve-token-0123456789abcdef"
NOTE = "---\ndescription: Flock launch date\ntype: project\n---\nLaunch date: 2026-12-15.\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def memories(root: Path) -> Iterator[Memories]:
    m = Memories(root, transport="mcp")
    yield m
    m.close()


@asynccontextmanager
async def connect(memories: Memories, default: Principal | None = None, mode: str = "auto") -> AsyncIterator[Client]:
    app = memdir_mcp.server(Principals(default or Principal("default")), memories)
    async with Client(app, mode=mode) as client:  # type: ignore[arg-type]
        yield client


async def tool(client: Client, name: str, **arguments: Any) -> tuple[bool, str, Any]:
    result = await client.call_tool(name, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.is_error, result.content[0].text, result.structured_content


# ---------------------------------------------------------------- tools


async def test_the_structured_content_carries_the_text_the_model_must_read(memories: Memories, root: Path) -> None:
    """Issue 35, item 3: Claude Code and Codex hand the model only structuredContent when it is there, so the text,
    the undo hint and the warnings are its `text`; the data's own copy of a file is not sent twice."""
    (root / "feedback").mkdir(parents=True)
    (root / "feedback/tabs.md").write_text("---\nname: tabs\ndescription: tabs, not spaces\ntype: feedback\n---\n"
                                           "Indent with tabs.\n")
    async with connect(memories) as client:
        failed, text, data = await tool(client, "write_memory_file", path="feedback/tabs.md", content="Spaces now.\n")
        assert not failed and data["text"] == text and "you replaced feedback/tabs.md without reading it" in text
        assert 'undo_memory_change(path="feedback/tabs.md")' in data["text"]
        failed, text, data = await tool(client, "get_memory_context")
        assert not failed and data["text"] == text and "Spaces now." in text
        failed, text, data = await tool(client, "edit_memory_file", path="feedback/tabs.md", old="Spaces", new="Tabs")
        assert not failed and 'Undo with undo_memory_change(path="feedback/tabs.md")' in data["text"]
        failed, text, data = await tool(client, "read_memory_file", path="feedback/tabs.md")
        assert data["text"] == text and text.count("Tabs now.") == 1 and json.dumps(data).count("Tabs now.") == 1
        failed, text, data = await tool(client, "read_memory_file", path="missing.md")
        assert failed and data["text"] == text and data["error"] == "NotFound"


async def test_the_tool_set_is_listed_with_schemas_and_annotations(memories: Memories) -> None:
    async with connect(memories) as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [t.name for t in tools.TOOLS]
    for served, defined in zip(listed, tools.TOOLS, strict=True):
        assert served.input_schema == defined.parameters
        assert served.description == defined.description and served.title == defined.title
        a = served.annotations
        assert a is not None
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (
            defined.annotations["readOnlyHint"], defined.annotations["destructiveHint"],
            defined.annotations["idempotentHint"], False)
    by_name = {t.name: t for t in listed}
    assert by_name["read_memory_file"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert by_name["delete_memory_file"].annotations.destructive_hint is True  # type: ignore[union-attr]


async def test_write_read_list_index_rename_delete_undo(memories: Memories, root: Path) -> None:
    async with connect(memories) as client:
        failed, text, data = await tool(client, "write_memory_file", path="project/flock.md", content=NOTE)
        assert not failed and text.startswith("created project/flock.md: 7 lines (version ")
        assert data == {"text": text, "path": "project/flock.md", "change": "created", "version": data["version"],
                        "lines": 7, "previous_lines": None}
        version = data["version"]

        failed, text, data = await tool(client, "read_memory_file", path="project/flock.md")
        assert not failed and text.startswith(f"project/flock.md (version {version}, 7 lines)\n---\n")
        assert data["version"] == version and "Launch date: 2026-12-15." in data["text"]

        failed, text, data = await tool(client, "list_memory_files")
        assert not failed and [f["path"] for f in data["files"]] == ["project/flock.md"]
        failed, text, data = await tool(client, "read_memory_index")
        assert not failed and "[flock](project/flock.md) — Flock launch date" in text
        assert text == (root / "MEMORY.md").read_text()

        failed, text, data = await tool(client, "write_memory_file", path="project/flock.md",
                                        content="Launch moved to 2027-01-10.\n", expected_version=version)
        assert not failed and data["change"] == "updated"
        failed, text, _ = await tool(client, "write_memory_file", path="project/flock.md", content="x",
                                     expected_version=version)
        assert failed and text.startswith("project/flock.md changed since it was read")

        failed, text, data = await tool(client, "rename_memory_file", old_path="project/flock.md", new_path="project/flock-app.md")
        assert not failed and data["path"] == "project/flock-app.md"
        failed, text, data = await tool(client, "delete_memory_file", path="project/flock-app.md")
        assert not failed and text.startswith("deleted project/flock-app.md") and not (root / "project/flock-app.md").exists()
        failed, text, data = await tool(client, "undo_memory_change", path="project/flock-app.md")
        assert not failed and data["change"] == "restored"
        assert "Launch moved to 2027-01-10." in (root / "project/flock-app.md").read_text()


async def test_edit_and_append(memories: Memories, root: Path) -> None:
    async with connect(memories) as client:
        await tool(client, "write_memory_file", path="project/flock.md", content=NOTE)
        failed, text, data = await tool(client, "edit_memory_file", path="project/flock.md", old="2026-12-15", new="2027-01-10")
        assert not failed and data["change"] == "updated"
        failed, text, _ = await tool(client, "edit_memory_file", path="project/flock.md", old="no such text", new="x")
        assert failed and "\n" not in text
        failed, text, data = await tool(client, "append_memory", path="sessions/log.md", line="Deployed the beta.")
        assert not failed
    assert "2027-01-10" in (root / "project/flock.md").read_text()
    assert re.search(r"- \[\d{4}-\d\d-\d\d \d\d:\d\d\] Deployed the beta\.", (root / "sessions/log.md").read_text())


async def test_search(memories: Memories) -> None:
    async with connect(memories) as client:
        await tool(client, "write_memory_file", path="project/flock.md", content=NOTE)
        await tool(client, "write_memory_file", path="user/profile.md", content="Prefers metric units.\n")
        failed, text, data = await tool(client, "search_memory", query="launch date", k=5)
        assert not failed and [h["path"] for h in data["hits"]] == ["project/flock.md"]
        hit = data["hits"][0]
        assert "project/flock.md — " in text and f"{hit['line']}" in text and hit["snippet"] in text
        assert hit["sure"] is True and 0.5 <= hit["confidence"] <= 1
        failed, text, data = await tool(client, "search_memory", query="android app launch date")
        assert not failed and [h["path"] for h in data["hits"]] == ["project/flock.md"]  # ranked, not sure
        assert data["hits"][0]["sure"] is False and data["hits"][0]["confidence"] < 0.5
        assert text.startswith("no memory answers 'android app launch date' for sure; weaker matches")
        failed, text, data = await tool(client, "search_memory", query="launch date", type="user")
        assert not failed and data["hits"] == []
        failed, text, _ = await tool(client, "search_memory", query="launch", since="later")
        assert failed and "since must be a date like 2026-03-05" in text


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read_memory_file", {"path": "nope.md"}, "nope.md does not exist; MEMORY.md lists the memories that do"),
        ("read_memory_file", {"path": "../etc/passwd.md"}, "path '../etc/passwd.md' contains '..'; paths may not leave the memory root"),
        ("read_memory_file", {}, "read_memory_file: missing argument 'path'; it takes path, offset, limit"),
        ("write_memory_file", {"path": "a.md", "content": 7}, "write_memory_file: content must be text, got 7"),
        ("forget_everything", {}, "unknown tool 'forget_everything'; the memory tools are " + ", ".join(t.name for t in tools.TOOLS)),
    ],
)
async def test_refusals_are_tool_errors_with_the_exact_message(
    memories: Memories, name: str, arguments: dict[str, Any], message: str
) -> None:
    async with connect(memories) as client:
        failed, text, _ = await tool(client, name, **arguments)
    assert failed and text == message


async def test_each_connection_is_its_own_conversation(memories: Memories) -> None:
    memories.of(Principal("default")).write("user/profile.md", "Prefers metric units.\n")
    async with connect(memories, mode="legacy") as reader, connect(memories, mode="legacy") as stranger:
        await tool(reader, "read_memory_file", path="user/profile.md")
        _, text, _ = await tool(reader, "write_memory_file", path="user/profile.md", content="Prefers metric units. Tea.\n")
        assert "without reading it" not in text
        _, text, _ = await tool(stranger, "write_memory_file", path="user/profile.md", content="Coffee.\n")
        assert "you replaced user/profile.md without reading it in this conversation" in text


async def test_reading_a_file_as_a_resource_counts_as_reading_it(memories: Memories) -> None:
    memories.of(Principal("default")).write("user/profile.md", "Prefers metric units.\n")
    async with connect(memories, mode="legacy") as client:
        await client.read_resource("memdir://file/user/profile.md")
        _, text, _ = await tool(client, "write_memory_file", path="user/profile.md", content="Metric. Tea.\n")
    assert "without reading it" not in text


async def test_the_scope_given_at_start_holds(memories: Memories) -> None:
    full = memories.of(Principal("default"))
    full.write("household/groceries.md", "Oat milk.\n")
    full.write("people/bob/gifts.md", "A bike for alice.\n")
    alice = Principal("default", read=("household/",), write=("people/alice/",))
    scoped = Memories(memories.root, transport="mcp")
    try:
        async with connect(scoped, alice) as client:
            failed, text, _ = await tool(client, "read_memory_file", path="people/bob/gifts.md")
            assert failed and text == "people/bob/gifts.md does not exist; MEMORY.md lists the memories that do"
            failed, text, _ = await tool(client, "write_memory_file", path="people/bob/gifts.md", content="x")
            assert failed and text.startswith("people/bob/gifts.md is outside what this principal may write")
            failed, text, _ = await tool(client, "write_memory_file", path="people/alice/notes.md", content="Likes tea.\n")
            assert not failed
            _, index, _ = await tool(client, "read_memory_index")
            assert "groceries" in index and "bob" not in index
            resources = [r.uri for r in (await client.list_resources()).resources]
            assert resources == ["memdir://index", "memdir://file/household/groceries.md", "memdir://file/people/alice/notes.md"]
            with pytest.raises(MCPError):
                await client.read_resource("memdir://file/people/bob/gifts.md")
    finally:
        scoped.close()


async def test_conversations_of_many_tenants_outlive_the_eviction_of_their_memories(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MEMDIR_MAX_OPEN at 1: each tenant's request evicts the other's memory (closed at once here); every
    request still reaches its own tenant's memory, and a conversation keeps what its model has read."""
    monkeypatch.setattr(auth, "RETIRE_SECONDS", 0.0)
    few = Memories(root, transport="mcp", max_open=1)
    acme, globex = Principal("a", "acme"), Principal("g", "globex")
    try:
        async with connect(few, acme) as a, connect(few, globex) as g:
            for n in range(3):
                for client, tenant in ((a, "acme"), (g, "globex")):
                    failed, text, _ = await tool(client, "append_memory", path="log.md", line=f"{tenant} {n}")
                    assert not failed, text
                    failed, text, _ = await tool(client, "read_memory_file", path="log.md")
                    assert not failed and f"{tenant} {n}" in text and ("globex" in text) == (tenant == "globex"), text
                    few.of(Principal("o", "other")).list()  # a third tenant's request: it evicts (and closes) this one
            failed, text, _ = await tool(a, "write_memory_file", path="log.md", content="acme, rewritten\n")
            assert not failed and "without reading it" not in text  # the conversation read it, before the eviction
        assert few.stats()["evicted"] >= 11
    finally:
        few.close()
    assert (root / "tenants" / "acme" / "log.md").read_text().endswith("acme, rewritten\n")
    assert "acme" not in (root / "tenants" / "globex" / "log.md").read_text()


async def test_agent_writes_are_rate_limited_by_default(memories: Memories) -> None:
    """60 writes a minute: a burst of 60 lands, then writes are refused (a token comes back each second)."""
    import time

    start = time.monotonic()
    async with connect(memories) as client:
        for i in range(200):
            failed, text, data = await tool(client, "write_memory_file", path=f"notes/n{i}.md", content="x")
            if failed:
                break
    landed, elapsed = i, time.monotonic() - start
    assert 60 <= landed <= 60 + elapsed + 1
    assert "more than 60 writes per minute" in text and data["error"] == "RateLimited"


# ---------------------------------------------------------------- resources and the prompt


async def test_resources_serve_the_index_and_the_files(memories: Memories) -> None:
    md = memories.of(Principal("default"))
    md.write("project/flock.md", NOTE)
    md.write("people/alice/my notes.md", "Likes tea.\n", description="alice's notes")
    async with connect(memories) as client:
        listed = (await client.list_resources()).resources
        assert [(r.uri, r.mime_type) for r in listed] == [
            ("memdir://index", "text/markdown"),
            ("memdir://file/people/alice/my%20notes.md", "text/markdown"),
            ("memdir://file/project/flock.md", "text/markdown"),
        ]
        assert listed[1].description == "alice's notes" and listed[1].size == len(md.read("people/alice/my notes.md").text)
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memdir://file/{path}"]

        index = (await client.read_resource("memdir://index")).contents[0]
        assert index.text == md.index() and index.mime_type == "text/markdown"  # type: ignore[union-attr]
        for uri in ("memdir://file/project/flock.md", "memdir://file/project%2Fflock.md"):
            assert (await client.read_resource(uri)).contents[0].text == md.read("project/flock.md").text  # type: ignore[union-attr]
        with pytest.raises(MCPError) as missing:
            await client.read_resource("memdir://file/nope.md")
        assert missing.value.code == -32002 and missing.value.message == "nope.md does not exist; MEMORY.md lists the memories that do"
        with pytest.raises(MCPError, match="unknown resource"):
            await client.read_resource("memdir://elsewhere")


async def test_resources_are_listed_in_pages(memories: Memories, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memdir_mcp, "PAGE", 2)
    md = memories.of(Principal("default"))
    for name in "abc":
        md.write(f"{name}.md", name)
    async with connect(memories) as client:
        seen, cursor = [], None
        while True:
            page = await client.list_resources(cursor=cursor)
            seen.append([r.uri.removeprefix("memdir://") for r in page.resources])
            cursor = page.next_cursor
            if cursor is None:
                break
        with pytest.raises(MCPError, match="cursor 'x' is not one this server gave"):
            await client.list_resources(cursor="x")
    assert seen == [["index", "file/a.md"], ["file/b.md", "file/c.md"]]


async def test_the_prompt_carries_the_conventions(memories: Memories) -> None:
    async with connect(memories) as client:
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["memory_conventions"]
        got = await client.get_prompt("memory_conventions")
        assert [(m.role, m.content.text) for m in got.messages] == [("user", memdir.prompt())]  # type: ignore[union-attr]
        with pytest.raises(MCPError, match="unknown prompt 'other'"):
            await client.get_prompt("other")


# ---------------------------------------------------------------- real transports


async def test_over_stdio_in_a_subprocess(root: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memdir", "--root", str(root), "serve"],
        env={**env_without_memdir(), "MEMDIR_ACTOR": "mcp:tester"},
    )
    async with Client(params) as client:
        assert len((await client.list_tools()).tools) == len(tools.TOOLS)
        failed, text, _ = await tool(client, "write_memory_file", path="project/flock.md", content=NOTE)
        assert not failed, text
        failed, text, data = await tool(client, "read_memory_file", path="project/flock.md")
        assert not failed and "Launch date: 2026-12-15." in data["text"]
        failed, text, _ = await tool(client, "read_memory_file", path="missing.md")
        assert failed and text == "missing.md does not exist; MEMORY.md lists the memories that do"
    with memdir.open(root) as md:
        assert [(r.op, r.actor) for r in md.history("project/flock.md")] == [("write", "mcp:tester")]


@pytest.fixture
def served(root: Path, tmp_path: Path) -> Iterator[str]:
    """`memdir serve --http 127.0.0.1:0 --token-file F` in a subprocess; yields its base URL."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "--root", str(root), "serve", "--http", "127.0.0.1:0", "--token-file", str(token_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_without_memdir(),
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        found = re.search(r"MCP at (http://127\.0\.0\.1:\d+)/mcp", banner)
        assert found, (banner, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        assert "claude mcp add --transport http memdir" in banner and TOKEN not in banner
        yield found.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err = proc.stderr.read() if proc.stderr else ""
        assert TOKEN not in err


async def test_over_http_in_a_subprocess_with_a_token(served: str) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    refused = call("POST", f"{served}/mcp", initialize, headers={"Accept": "application/json, text/event-stream"})
    assert refused.status == 401 and refused.error[0] == "Unauthorized"
    assert call("POST", f"{served}/mcp", initialize, token="wrong-token-0123456789").status == 401

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http_client:
        async with Client(streamable_http_client(f"{served}/mcp", http_client=http_client)) as client:
            assert len((await client.list_tools()).tools) == len(tools.TOOLS)
            failed, text, _ = await tool(client, "write_memory_file", path="project/flock.md", content=NOTE)
            assert not failed, text
    reply = call("GET", f"{served}/v1/files/project/flock.md", token=TOKEN)
    assert reply.status == 200 and reply.json["description"] == "Flock launch date"


async def test_over_http_each_token_sees_its_own_scope(root: Path, tmp_path: Path) -> None:
    alice, bob = "alice-token-0123456789", "bob-token-0123456789ab"
    auth = tmp_path / "auth.toml"
    auth.write_text(f'[tokens.alice]\ntoken = "{alice}"\nscope-write = ["people/alice/"]\n\n'
                    f'[tokens.bob]\ntoken = "{bob}"\nscope-write = ["people/bob/"]\n')
    principals = Principals(Principal("default"))
    principals.load(auth)
    with Running(root, principals) as server:
        for token, mine, theirs in ((alice, "people/alice/a.md", "people/bob/b.md"), (bob, "people/bob/b.md", "people/alice/a.md")):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http_client:
                async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http_client)) as client:
                    failed, text, _ = await tool(client, "write_memory_file", path=mine, content="mine\n")
                    assert not failed, text
                    failed, text, _ = await tool(client, "write_memory_file", path=theirs, content="x\n")
                    assert failed and "outside what this principal may write" in text
                    _, text, data = await tool(client, "list_memory_files")
                    assert [f["path"] for f in data["files"]] == [mine]


async def test_over_http_without_a_token_on_loopback(root: Path) -> None:
    with Running(root) as server:
        async with Client(f"{server.url}/mcp") as client:
            failed, text, _ = await tool(client, "write_memory_file", path="a.md", content="x\n")
            assert not failed, text
    assert (root / "a.md").exists()


async def test_over_http_each_legacy_session_is_its_own_conversation(root: Path) -> None:
    """The 2025 protocol over streamable HTTP keeps a session (Mcp-Session-Id): one tools.Session each."""
    with Running(root) as server:
        server.memories.of(Principal("default")).write("user/profile.md", "Prefers metric units.\n")
        async with Client(f"{server.url}/mcp", mode="legacy") as reader, Client(f"{server.url}/mcp", mode="legacy") as other:
            await tool(reader, "read_memory_file", path="user/profile.md")
            _, text, _ = await tool(reader, "write_memory_file", path="user/profile.md", content="Metric. Tea.\n")
            assert "without reading it" not in text
            _, text, _ = await tool(other, "write_memory_file", path="user/profile.md", content="Coffee.\n")
            assert "without reading it in this conversation" in text


def test_serve_refuses_token_options_without_http(root: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "serve", "--token", TOKEN],
                          capture_output=True, text=True, env=env_without_memdir(), timeout=30)
    assert proc.returncode == 2 and "--token apply to --http only" in proc.stderr


def test_help_does_not_load_the_sdk() -> None:
    """`memdir --help` stays fast: the SDK, starlette and uvicorn are imported only by `serve`."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "memdir", "--help"], capture_output=True, text=True,
                          env=env_without_memdir(), timeout=30)
    assert proc.returncode == 0
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert not {m for m in loaded if m.split(".")[0] in {"mcp", "starlette", "uvicorn", "pydantic", "anthropic", "openai"}}


def test_serve_has_help_with_the_client_snippets() -> None:
    proc = subprocess.run([sys.executable, "-m", "memdir", "serve", "--help"], capture_output=True, text=True,
                          env=env_without_memdir(), timeout=30)
    assert proc.returncode == 0
    for option in ("--http", "--tenant", "--scope-read", "--scope-write", "--token", "--token-file", "--auth"):
        assert option in proc.stdout
    assert "claude mcp add --transport stdio memdir -- memdir --root /path/to/memory serve" in proc.stdout


def test_malformed_mcp_requests_over_http_get_a_one_line_parse_error(root: Path) -> None:
    with Running(root) as s:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        session = call("POST", f"{s.url}/mcp", init, headers=headers).headers.get("mcp-session-id")
        headers = {**headers, "mcp-session-id": session or "", "mcp-protocol-version": "2025-06-18"}
        lone = (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_memory_file",'
                b'"arguments":{"path":"a.md","content":"x\\ud800"}}}')
        for body in (lone, b"[" * 100_000):
            reply = call("POST", f"{s.url}/mcp", body, headers=headers)
            assert reply.status == 400 and reply.json["error"]["code"] == -32700
            assert "\n" not in reply.json["error"]["message"]
        ping = call("POST", f"{s.url}/mcp", {"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=headers)
        assert ping.status == 200 and not (root / "a.md").exists()


def test_malformed_requests_over_stdio_are_answered_and_the_session_goes_on(root: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    lines = [
        json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_memory_file",'
        '"arguments":{"path":"a.md","content":"x\\ud800"}}}',
        "[" * 100_000,
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_memory_file","arguments":{"path":"a.md",'
        '"content":' + "[" * 5_000 + "]" * 5_000 + "}}}",
        '{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"memdir://file/\\udc00.md"}}',
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "list_memory_files", "arguments": {}}}),
    ]
    replies = stdio_answers(root, lines, 5)
    assert sorted(map(str, replies)) == ["1", "2", "3", "4", "r"]
    assert replies[2]["result"]["isError"] and replies[2]["result"]["content"][0]["text"].startswith(
        "write_memory_file: content holds a lone surrogate ('\\ud800' at character 2)")
    assert replies[3]["result"]["content"][0]["text"] == (
        "write_memory_file: arguments nest too deeply to be a tool call; send a flat JSON object")
    assert replies["r"]["error"]["code"] == -32700 and "lone surrogate" in replies["r"]["error"]["message"]  # as over HTTP
    assert replies[4]["result"]["content"][0]["text"] == "no memory files under the root"
    assert not (root / "a.md").exists()


# ---------------------------------------------------------------- stdio, line by line

STATELESS = "2026-07-28"
GENERATIONS = ["2025-06-18", STATELESS]  # the handshake protocol (initialize first) and the stateless one
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
DEEP = "[" * 5_000 + "]" * 5_000  # deeper than any JSON parser here reads


def hello(ident: Any, version: str = "2025-06-18") -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})


def opening(generation: str) -> tuple[list[str], dict[str, Any]]:
    """A client's first lines in a protocol generation, and the params each of its requests carries."""
    if generation == STATELESS:
        return [], {"_meta": ENVELOPE}
    return [hello("init", generation), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})], {}


def request(ident: Any, method: str, params: dict[str, Any], extra: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, **extra}})


def tool_call(ident: Any, name: str, extra: dict[str, Any], **arguments: Any) -> str:
    return request(ident, "tools/call", {"name": name, "arguments": arguments}, extra)


def by_id(answers: list[Any]) -> dict[Any, Any]:
    found = {a["id"]: a for a in answers}
    assert len(found) == len(answers), answers  # each request answered once
    return found


def answer_text(answer: dict[str, Any]) -> str:
    [content] = answer["result"]["content"]
    return str(content["text"])


def test_the_handshake_and_the_stateless_generation_over_stdio(root: Path) -> None:
    """Each generation as a raw client sees it; a request of the other generation is refused, with its id."""
    answers, code = stdio_exchange(root, [tool_call(1, "list_memory_files", {}), hello(2),
                                          json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                                          request(3, "tools/list", {}, {}), tool_call(4, "list_memory_files", {"_meta": ENVELOPE})])
    handshake = by_id(answers)
    assert code == 0 and sorted(handshake) == [1, 2, 3, 4]
    assert handshake[1]["error"]["code"] == -32602  # before initialize
    assert handshake[2]["result"]["protocolVersion"] == "2025-06-18" and handshake[2]["result"]["serverInfo"]["name"] == "memdir"
    assert [t["name"] for t in handshake[3]["result"]["tools"]] == [t.name for t in tools.TOOLS]
    assert handshake[4]["error"]["code"] == -32600  # the stateless envelope on a handshake connection
    meta = {"_meta": ENVELOPE}
    answers, code = stdio_exchange(root, [request(1, "server/discover", {}, meta), request(2, "tools/list", {}, meta),
                                          tool_call(3, "list_memory_files", meta), hello(4)])
    stateless = by_id(answers)
    assert code == 0 and sorted(stateless) == [1, 2, 3, 4]
    assert STATELESS in stateless[1]["result"]["supportedVersions"]
    assert [t["name"] for t in stateless[2]["result"]["tools"]] == [t.name for t in tools.TOOLS]
    assert answer_text(stateless[3]) == "no memory files under the root"
    assert stateless[4]["error"]["code"] == -32022  # initialize after a stateless request


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_client_that_closes_stdin_gets_every_answer_before_the_server_exits(root: Path, generation: str) -> None:
    """Issue 20, item 11: requests written at once, then stdin closed: every one is answered, the committed write and
    the reads after it too, before the process exits."""
    lines, extra = opening(generation)
    lines += [tool_call(1, "write_memory_file", extra, path="notes/a.md", content="Alpha.\n"),
              tool_call(2, "read_memory_file", extra, path="notes/a.md"),
              tool_call(3, "edit_memory_file", extra, path="notes/a.md", old="Alpha", new="Beta"),
              tool_call(4, "search_memory", extra, query="beta"),
              request(5, "resources/read", {"uri": "memdir://file/notes/a.md"}, extra)]
    answers, code = stdio_exchange(root, lines)
    found = by_id(answers)
    assert code == 0 and sorted(map(str, found)) == sorted(["1", "2", "3", "4", "5", *(["init"] if generation != STATELESS else [])])
    assert [found[i]["result"]["isError"] for i in (1, 2, 3, 4)] == [False] * 4
    assert "Alpha." in found[2]["result"]["structuredContent"]["text"]
    assert [h["path"] for h in found[4]["result"]["structuredContent"]["hits"]] == ["notes/a.md"]
    assert "Beta." in found[5]["result"]["contents"][0]["text"] and "Beta." in (root / "notes/a.md").read_text()


@pytest.mark.parametrize("generation", GENERATIONS)
def test_pipelined_requests_are_served_in_the_order_they_came(root: Path, generation: str) -> None:
    """Issue 20, item 12: a client that writes without waiting for answers (a write, an edit of the same file, then
    reads, many times over) is served in its order: no edit answers NotFound, every read sees the edit."""
    lines, extra = opening(generation)
    n = 80
    for i in range(n):
        lines += [tool_call(f"w{i}", "write_memory_file", extra, path=f"notes/n{i}.md", content=f"Draft {i}.\n"),
                  tool_call(f"e{i}", "edit_memory_file", extra, path=f"notes/n{i}.md", old="Draft", new="Final"),
                  tool_call(f"r{i}", "read_memory_file", extra, path=f"notes/n{i}.md"),
                  request(f"x{i}", "resources/read", {"uri": f"memdir://file/notes/n{i}.md"}, extra)]
    env = {**env_without_memdir(), "MEMDIR_WRITES_PER_MINUTE": "1000000"}
    found = stdio_answers(root, lines, 4 * n + (generation != STATELESS), env)
    assert [answer_text(found[f"e{i}"]) for i in range(n) if found[f"e{i}"]["result"]["isError"]] == []
    assert [i for i in range(n) if f"Final {i}." not in found[f"r{i}"]["result"]["structuredContent"]["text"]] == []
    assert [i for i in range(n) if f"Final {i}." not in found[f"x{i}"]["result"]["contents"][0]["text"]] == []


@pytest.mark.parametrize("generation", GENERATIONS)
def test_malformed_lines_are_answered_under_their_own_id_or_not_at_all(root: Path, generation: str) -> None:
    """Issue 20, item 10: a line too deep to parse is answered under its own id, never one inside its arguments; a
    deep notification is not answered; ids a client picks (the old wire's own among them) are answered as they are."""
    lines, extra = opening(generation)
    meta = "".join(f', "_meta": {json.dumps(v)}' for v in extra.values())
    lines += [
        '{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "read_memory_file", '
        '"arguments": {"id": 99, "path": ' + DEEP + "}" + meta + '}, "id": 7}',
        '{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "read_memory_file", '
        '"arguments": {"id": 98, "path": ' + DEEP + "}" + meta + "}}",
        '{"jsonrpc": "2.0", "id": "deep", "method": "resources/read", "params": {"uri": ' + DEEP + meta + "}}",
        '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "write_memory_file", '
        '"arguments": {"path": "a.md", "content": "x\\ud800"}' + meta + "}}",
        '{"jsonrpc": "2.0", "id": 9, "method": 7}',
        request("\x00memdir.era", "tools/list", {}, extra),
        tool_call("\x00memdir.hello", "list_memory_files", extra),
        tool_call(10, "list_memory_files", extra),
    ]
    answers, code = stdio_exchange(root, lines)
    found = by_id(answers)
    expected = [7, "deep", 8, 9, "\x00memdir.era", "\x00memdir.hello", 10, *(["init"] if generation != STATELESS else [])]
    assert code == 0 and sorted(map(repr, found)) == sorted(map(repr, expected))
    assert found[7]["result"]["isError"] and answer_text(found[7]) == (
        "read_memory_file: arguments nest too deeply to be a tool call; send a flat JSON object")
    assert found["deep"]["error"]["code"] == -32700 and "\n" not in found["deep"]["error"]["message"]
    assert found[8]["result"]["isError"] and answer_text(found[8]).startswith("write_memory_file: content holds a lone surrogate")
    assert found[9]["error"]["code"] == -32600
    assert [t["name"] for t in found["\x00memdir.era"]["result"]["tools"]] == [t.name for t in tools.TOOLS]
    assert answer_text(found["\x00memdir.hello"]) == answer_text(found[10]) == "no memory files under the root"
    assert not (root / "a.md").exists()


def test_a_stdio_server_run_by_a_client_says_nothing_on_stderr_and_stops_on_sigint(tmp_path: Path) -> None:
    """Issue 35: Claude Code logs every stderr line of a stdio server as an error, and closes it with SIGINT (then
    SIGTERM 100 ms later): the banner is for a terminal, and SIGINT ends the server."""
    root = tmp_path / "fresh"
    proc = subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(root), "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_without_memdir())
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(hello(1) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1  # serving, the memory made
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(30)
    finally:
        proc.kill()
    assert code == -signal.SIGINT and proc.stderr.read() == "" and (root / ".memdir").is_dir()


# ---------------------------------------------------------------- MCP sessions over HTTP: whose, and how many

HANDSHAKE = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ALICE_TOKEN, BOB_TOKEN = "alice-token-0123456789", "bob-token-0123456789ab"


def _two_principals() -> Principals:
    principals = Principals(Principal("default"))
    principals.add(auth.digest(ALICE_TOKEN), Principal("alice"), "test")
    principals.add(auth.digest(BOB_TOKEN), Principal("bob"), "test")
    return principals


def _open(url: str, token: str) -> str:
    reply = call("POST", f"{url}/mcp", HELLO, headers=HANDSHAKE, token=token)
    assert reply.status == 200, reply.body
    return reply.headers["mcp-session-id"]


def _in(url: str, session: str, token: str, method: str = "POST") -> int:
    headers = {**HANDSHAKE, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    body = {"jsonrpc": "2.0", "id": 2, "method": "ping"} if method == "POST" else None
    return call(method, f"{url}/mcp", body, headers=headers, token=token).status


def test_an_mcp_session_answers_only_the_principal_that_opened_it(root: Path) -> None:
    with Running(root, _two_principals()) as s:
        alices = _open(s.url, ALICE_TOKEN)
        assert _in(s.url, alices, ALICE_TOKEN) == 200
        assert _in(s.url, alices, BOB_TOKEN) == 404  # as if it did not exist: bob cannot drive it...
        assert _in(s.url, alices, BOB_TOKEN, "DELETE") == 404  # ...nor end it
        assert _in(s.url, alices, ALICE_TOKEN) == 200
        assert _in(s.url, alices, ALICE_TOKEN, "DELETE") == 200
        assert _in(s.url, alices, ALICE_TOKEN) == 404


def test_one_principal_holds_a_bounded_number_of_mcp_sessions(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memdir_mcp, "SESSIONS_PER_PRINCIPAL", 3)
    with Running(root, _two_principals()) as s:
        bobs = _open(s.url, BOB_TOKEN)
        alices = [_open(s.url, ALICE_TOKEN) for _ in range(10)]
        assert [_in(s.url, x, ALICE_TOKEN) for x in alices] == [404] * 7 + [200] * 3  # the least recently used went
        assert _in(s.url, bobs, BOB_TOKEN) == 200  # another principal's are untouched
        _in(s.url, alices[7], ALICE_TOKEN)  # used now: the next one opened closes alices[8]
        newest = _open(s.url, ALICE_TOKEN)
        assert [_in(s.url, x, ALICE_TOKEN) for x in (alices[7], alices[8], alices[9], newest)] == [200, 404, 200, 200]
