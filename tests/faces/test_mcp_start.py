"""`memdir serve` over stdio answers a client's first requests while the MCP SDK is still loading."""

import json
from pathlib import Path
from typing import Any

import pytest
from serving import env_without_memdir, stdio_answers

from memdir.faces import mcp_start

pytest.importorskip("mcp")

META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}


def ask(root: Path, cache: Path, requests: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Start `memdir serve`, send the requests at once, and collect one answer per request id."""
    env = {**env_without_memdir(), "XDG_CACHE_HOME": str(cache)}
    return stdio_answers(root, [json.dumps(r) for r in requests], sum("id" in r for r in requests), env)


def first_requests(start: int) -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": start, "method": "server/discover", "params": META},
        {"jsonrpc": "2.0", "id": start + 1, "method": "tools/list", "params": META},
        {"jsonrpc": "2.0", "id": start + 2, "method": "tools/call",
         "params": {"name": "write_memory_file", "arguments": {"path": "a.md", "content": "x\n"}, **META}},
    ]


def test_the_sdk_answers_are_kept_and_replayed_with_the_new_ids(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = ask(root, cache, first_requests(1))
    kept = json.loads((cache / "memdir" / "mcp-answers.json").read_text())
    assert len(kept["answers"]) == 2 and (cache / "memdir" / "mcp-answers.json").stat().st_mode & 0o777 == 0o600
    again = ask(root, cache, first_requests(7))
    assert {k: {**v, "id": 0} for k, v in again.items() if k != 9} == {k + 6: {**v, "id": 0} for k, v in first.items() if k != 3}
    tools = [t["name"] for t in again[8]["result"]["tools"]]
    assert "write_memory_file" in tools and "read_memory_index" in tools
    assert not again[9]["result"].get("isError") and (root / "a.md").exists()  # the SDK took over after the cache


def test_an_answer_from_the_cache_comes_before_the_sdk_is_ready(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ask(root, cache, first_requests(1))
    file = cache / "memdir" / "mcp-answers.json"
    kept = json.loads(file.read_text())
    key = next(k for k in kept["answers"] if k.startswith("tools/list"))
    planted = json.loads(kept["answers"][key])
    planted["result"]["tools"] = [{"name": "planted", "inputSchema": {"type": "object"}}]
    kept["answers"][key] = json.dumps(planted)
    file.write_text(json.dumps(kept))
    answers = ask(root, cache, first_requests(1))
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["planted"]  # only the cache knew that one
    kept["key"] = "code that changed since"
    file.write_text(json.dumps(kept))
    answers = ask(root, cache, first_requests(1))
    assert "write_memory_file" in [t["name"] for t in answers[2]["result"]["tools"]]  # a stale cache is not used


def test_a_client_of_the_older_protocol_waits_for_the_sdk_in_order(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ask(root, cache, first_requests(1))
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    answers = ask(root, cache, [init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}])
    assert answers[1]["result"]["protocolVersion"] == "2025-06-18"  # the SDK's session answered the handshake
    assert "write_memory_file" in [t["name"] for t in answers[2]["result"]["tools"]]


def test_only_stateless_first_requests_are_cached() -> None:
    assert mcp_start._cache_key(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": META}))
    for request in (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},  # the older protocol: a session's
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {**META, "cursor": "2"}},
        {"jsonrpc": "2.0", "method": "tools/list", "params": META},  # a notification is never answered
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tools/list", **META}},
    ):
        assert mcp_start._cache_key(json.dumps(request)) is None
    assert mcp_start._cache_key('"tools/list"' + "[" * 100_000) is None
