"""Over stdio memdir answers tool calls itself (`mcp_start.Wire`): byte for byte what the SDK answers, only sooner."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from serving import env_without_memdir

import memdir
from memdir.faces import mcp, mcp_start, tools
from memdir.faces.auth import Memories, Principal, Principals

pytest.importorskip("mcp")

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
            "io.modelcontextprotocol/clientCapabilities": {}}
META = {"_meta": ENVELOPE}
NOTE = "---\ndescription: Flock launch date\ntype: project\n---\nLaunch date: 2026-12-15.\n"
VOLATILE = [
    (re.compile(r"\b[0-9a-f]{16}\b"), "VERSION"),  # content hashes differ: the files carry their own write times
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?Z?"), "TIME"),
]


def same_second(value: Any) -> Any:
    """The answer with each run of index lines in path order.

    MEMORY.md lists a section newest first, by the second of the last change:
    two runs a moment apart can tie, or not, on the same writes.
    """
    if isinstance(value, dict):
        return {k: same_second(v) for k, v in value.items()}
    if isinstance(value, list):
        return [same_second(v) for v in value]
    if not isinstance(value, str) or "\n- [" not in value:
        return value
    out: list[str] = []
    for line in value.split("\n"):
        if line.startswith("- [") and out and out[-1].startswith("- ["):
            run = [line]
            while out and out[-1].startswith("- ["):
                run.append(out.pop())
            out += sorted(run)
        else:
            out.append(line)
    return "\n".join(out)


def call(ident: Any, name: str, arguments: Any = None, **params: Any) -> dict[str, Any]:
    body = {"name": name, **({} if arguments is None else {"arguments": arguments}), **params}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": body}


def raw(ident: int, params: str, extra: dict[str, Any]) -> str:
    """A tools/call line written by hand, for what json.dumps cannot write."""
    tail = "".join(f", {json.dumps(k)}: {json.dumps(v)}" for k, v in extra.items())
    return f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {{{params}{tail}}}}}'


def tool_calls(start: int, extra: dict[str, Any]) -> list[dict[str, Any] | str]:
    """Every tool, its refusals and its odd shapes, as requests with ids from `start`."""
    steps: list[tuple[str, Any]] = [
        ("write_memory_file", {"path": "project/flock.md", "content": NOTE}),
        ("write_memory_file", {"path": "project/flock.md", "content": "unread overwrite\n"}),
        ("read_memory_file", {"path": "project/flock.md"}),
        ("write_memory_file", {"path": "project/flock.md", "content": NOTE, "expected_version": "0" * 16}),
        ("read_memory_file", {"path": "project/missing.md"}),
        ("read_memory_index", {}),
        ("list_memory_files", {}),
        ("get_memory_context", {"query": "launch"}),
        ("search_memory", {"query": "launch", "k": 3}),
        ("edit_memory_file", {"path": "project/flock.md", "old": "2026-12-15", "new": "2027-01-10"}),
        ("edit_memory_file", {"path": "project/flock.md", "old": "no such text", "new": "x"}),
        ("append_memory", {"path": "sessions/log.md", "line": "Deployed the beta."}),
        ("remember_feedback", {"rule": "Prefer short answers.", "why": "the user said so"}),
        ("rename_memory_file", {"old_path": "project/flock.md", "new_path": "project/flock-app.md"}),
        ("delete_memory_file", {"path": "project/flock-app.md"}),
        ("undo_memory_change", {"path": "project/flock-app.md"}),
        ("read_memory_file", {"path": "project/flock-app.md", "offset": 2, "limit": 1}),
        ("no_such_tool", {}),
        ("read_memory_file", {}),
        ("read_memory_file", {"path": 3}),
        ("read_memory_file", {"path": "project/flock-app.md", "surplus": True}),
        ("write_memory_file", {"path": "../escape.md", "content": "x"}),
        ("write_memory_file", {"path": "big.md", "content": "y" * 3_000_000}),
        ("read_memory_file", {"path": "caf\u00e9 \U0001f600.md"}),
    ]
    out: list[dict[str, Any] | str] = [call(start + i, name, args, **extra) for i, (name, args) in enumerate(steps)]
    n = start + len(steps)
    out += [
        call(n, "read_memory_index", None, **extra),  # no arguments at all
        {"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": {"name": "read_memory_index", "arguments": None, **extra}},
        {"jsonrpc": "2.0", "id": n + 2, "method": "tools/call", "params": {"name": 7, **extra}},
        {"jsonrpc": "2.0", "id": n + 3, "method": "tools/call", "params": {"arguments": {}, **extra}},
        {"jsonrpc": "2.0", "id": str(n + 4), "method": "tools/call", "params": {"name": "list_memory_files", "arguments": {}, **extra}},
        {"jsonrpc": "2.0", "id": n + 5, "method": "tools/call", "params": {"name": "read_memory_index", "arguments": {}, "task": {"ttl": 1000}, **extra}},
        {"jsonrpc": "2.0", "id": n + 6, "method": "tools/call", "params": {"name": "read_memory_index", "arguments": {}, **extra}, "extra": 1},
        {"jsonrpc": "2.0", "id": 2**60, "method": "tools/call", "params": {"name": "read_memory_index", "arguments": {}, **extra}},
        {"jsonrpc": "2.0", "id": n + 7, "method": "tools/call", "params": {"name": "read_memory_index", "arguments": {}, **extra}, "id2": None},
        raw(n + 8, '"name": "write_memory_file", "arguments": {"path": "s.md", "content": "\\ud800"}', extra),
        raw(n + 9, '"name": "write_memory_file", "arguments": {"path": "e.md", "content": "\\ud83d\\ude00 ok"}', extra),
        raw(n + 10, '"name": "read_memory_index", "arguments": {"x": NaN}', extra),
        raw(n + 11, '"name": "read_memory_file", "arguments": ' + '{"a": ' * 2000 + "{}" + "}" * 2000, extra),
        raw(n + 12, '"name": "read_memory_file", "name": "read_memory_index", "arguments": {}', extra),
        "{not json at all",
        f'{{"jsonrpc": "2.0", "id": {n + 13}, "method": "tools/call", "params": ',
        "",
        {"jsonrpc": "2.0", "id": True, "method": "tools/call", "params": {"name": "read_memory_index", **extra}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}},
        {"jsonrpc": "2.0", "id": n + 14, "method": "ping", "params": extra or None},
        {"jsonrpc": "2.0", "id": n + 15, "method": "resources/read", "params": {"uri": "memdir://file/sessions/log.md", **extra}},
        call(n + 16, "write_memory_file", {"path": "sessions/log.md", "content": "after a resource read\n"}, **extra),
        {"jsonrpc": "2.0", "id": n + 17, "method": "prompts/get", "params": {"name": "memory_conventions", **extra}},
        {"jsonrpc": "2.0", "id": n + 18, "method": "tools/list", "params": extra},
        call(n + 19, "read_memory_file", {"path": "sessions/log.md"}, **extra),
    ]
    return out


def modern_session() -> list[dict[str, Any] | str]:
    odd = [
        ("2099-01-01", None, {}), (20260728, None, {}), ("2026-07-28", None, {"sampling": {}}), ("2026-07-28", None, {}),
        ("2026-07-28", {"name": "c", "version": "1", "title": "C"}, {}), ("2026-07-28", {"name": 1}, {}),
    ]
    envelopes = []
    for i, (version, client, capabilities) in enumerate(odd):
        meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": version,
                                "io.modelcontextprotocol/clientCapabilities": capabilities}
        if client is not None:
            meta["io.modelcontextprotocol/clientInfo"] = client
        envelopes.append(call(900 + i, "read_memory_index", {}, _meta=meta))
    return [
        call(1, "read_memory_file", {"path": "seed.md"}, **META),  # the first request: no SDK yet, no discover
        {"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": META},
        *tool_calls(10, META),
        *envelopes,
        call(950, "read_memory_index", {}, _meta={**ENVELOPE, "progressToken": 5}),
        call(951, "read_memory_index", {}, _meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        call(952, "read_memory_index", {}),  # no envelope on a stateless connection
        {"jsonrpc": "2.0", "id": 953, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        call(954, "read_memory_file", {"path": "seed.md"}, **META),
    ]


def legacy_session(version: str, client: str = "t", refused_first: bool = True) -> list[dict[str, Any] | str]:
    """A handshake client: (a call before `initialize`,) `initialize`, `notifications/initialized`, `tools/list`, calls."""
    opening: list[dict[str, Any] | str] = [call(1, "read_memory_file", {"path": "seed.md"})] if refused_first else []
    return [
        *opening,  # before initialize: refused
        {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": client, "version": "1"}}},
        '{"method":"notifications/initialized","jsonrpc":"2.0"}',  # as the TypeScript SDK writes it
        '{"method":"tools/list","jsonrpc":"2.0","id":3}',  # no params at all, as the TypeScript SDK writes it
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": "x"}},
        {"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {  # a second one: the SDK's to answer
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client, "version": "1"}}},
        *tool_calls(10, {}),
        call(950, "read_memory_index", {}, _meta={"progressToken": 5}),
        call(951, "read_memory_index", {}, **META),  # a stateless envelope on a handshake connection
        call(952, "read_memory_file", {"path": "seed.md"}),
    ]


def run(root: Path, cache: Path, session: list[dict[str, Any] | str], fast: bool) -> tuple[list[Any], int]:
    """Send the lines one at a time to `memdir serve`, waiting for the answer where one is due.

    The answers, parsed, and how many of them came from the fast path (as the server says at the end).
    """
    with memdir.open(root) as md:
        md.write("seed.md", "The seed.\n", description="a seed", type="project")
    env = {**env_without_memdir(), "XDG_CACHE_HOME": str(cache), "MEMDIR_MCP_FAST": "1" if fast else "0"}
    proc = subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(root), "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    answers = []
    try:
        for step in session:
            text = step if isinstance(step, str) else json.dumps(step)
            proc.stdin.write(text.encode() + b"\n")
            proc.stdin.flush()
            if isinstance(step, dict):
                due = "id" in step and not isinstance(step["id"], bool)
            else:  # a line with an id is answered, unless it is cut short: nobody can tell whom to answer
                try:
                    parsed = json.loads(step)
                    due = isinstance(parsed, dict) and "id" in parsed
                except (ValueError, RecursionError):
                    due = '"id": ' in step and not step.endswith('"params": ')
            if due:
                answer = lines.get(timeout=30).decode()
                for pattern, stand_in in VOLATILE:
                    answer = pattern.sub(stand_in, answer)
                answers.append(same_second(json.loads(answer)))
    finally:
        proc.stdin.close()
        proc.wait(30)
    assert lines.empty(), lines.get()  # nothing answered twice, nothing unasked for
    said = re.search(rb"memdir: (\d+) of (\d+) lines answered without the MCP SDK", proc.stderr.read())
    assert said is not None and int(said.group(2)) == len(session)
    return answers, int(said.group(1))


@pytest.mark.parametrize("session", ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_the_fast_path_answers_exactly_as_the_sdk_does(tmp_path: Path, session: str) -> None:
    steps = modern_session() if session == "2026-07-28" else legacy_session(session)
    fast, served = run(tmp_path / "fast", tmp_path / "cache-fast", steps, fast=True)
    sdk, none = run(tmp_path / "sdk", tmp_path / "cache-sdk", steps, fast=False)
    assert len(fast) == len(sdk) > 40 and none == 0 and served >= 25  # every plain tool call came the fast way
    for mine, theirs in zip(fast, sdk, strict=True):
        assert json.dumps(mine, sort_keys=True) == json.dumps(theirs, sort_keys=True)
    by_id = {a["id"]: a for a in fast}
    assert not by_id[12]["result"]["isError"] and by_id[13]["result"]["isError"]  # it really wrote, and refused
    assert "lone surrogate" in by_id[42]["result"]["content"][0]["text"]  # a tool error, in either generation
    if session == "2026-07-28":
        assert by_id[953]["error"]["code"] == -32022  # initialize after a stateless request: the SDK's refusal
    else:
        assert by_id[1]["error"]["code"] == -32602 and "protocolVersion" in by_id[2]["result"]
        assert len(by_id[3]["result"]["tools"]) > 5


def same(mine: list[Any], theirs: list[Any]) -> None:
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_a_handshake_is_answered_from_the_sdk_s_kept_answers_exactly_as_the_sdk_does(tmp_path: Path, version: str) -> None:
    """`initialize` and `tools/list` from the answers kept at an earlier start; a changed `initialize` is the SDK's again."""
    steps, other = legacy_session(version), legacy_session(version, client="u", refused_first=False)
    sdk, _ = run(tmp_path / "sdk", tmp_path / "cache-sdk", steps, fast=False)
    sdk_other, _ = run(tmp_path / "sdk-other", tmp_path / "cache-sdk", other, fast=False)
    cache = tmp_path / "cache"
    cold, served_cold = run(tmp_path / "cold", cache, steps, fast=True)  # keeps the SDK's answers
    warm, served_warm = run(tmp_path / "warm", cache, steps, fast=True)
    changed, served_changed = run(tmp_path / "changed", cache, other, fast=True)  # another client: no kept initialize
    again, served_again = run(tmp_path / "again", cache, other, fast=True)  # now kept, and initialize comes first
    for answers in (cold, warm):
        same(answers, sdk)
    for answers in (changed, again):
        same(answers, sdk_other)
    # warm: the first initialize and the three tools/list (kept by the cold run); the second initialize is the SDK's
    assert served_warm == served_cold + 4
    assert served_changed == served_cold + 3  # tools/list is kept by the negotiated version, not the client
    assert served_again == served_cold + 4
    kept = json.loads((cache / "memdir" / "mcp-answers.json").read_text())["answers"]
    assert kept[f"shape {version}"] == "agrees"  # calls before the SDK loads may be shaped without it from now on


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_a_handshake_result_shaped_without_the_sdk_is_the_sdk_s_shape(root: Path, version: str) -> None:
    """`mcp.legacy_shape` (used before the SDK loads) against the SDK's serializer, on every tool's answers."""
    memories = Memories(root, transport="mcp", watch=False)
    session = mcp.Sessions(Principals(Principal("default")), memories, one_connection=True).stdio(False)
    shaped = 0
    try:
        for step in tool_calls(10, {}):
            params = step.get("params") if isinstance(step, dict) else None
            if not isinstance(params, dict) or step.get("method") != "tools/call" or not isinstance(params.get("name"), str):
                continue
            result = mcp.call(session, params["name"], params.get("arguments") or {})
            mine = mcp.legacy_shape(result, version)
            if mine is not None:
                shaped += 1
                assert json.dumps(mine) == json.dumps(mcp.legacy_result(result, version))
    finally:
        memories.close()
    assert shaped >= 27  # all but the lone surrogates
    for odd in (float("inf"), float("nan"), (1, 2), b"x"):
        score = tools.Result("found", data={"hits": [{"score": odd}]})
        assert mcp.legacy_shape(score, version) is None  # the SDK's to write
    plain = tools.Result("found", data={"hits": [{"score": 0.5}]})
    assert json.dumps(mcp.legacy_shape(plain, version)) == json.dumps(mcp.legacy_result(plain, version))
    assert mcp.legacy_shape(tools.Result("\ud800"), version) is None


@pytest.fixture
def wire(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    memories = Memories(root, transport="mcp", watch=False)
    sessions = mcp.Sessions(Principals(Principal("default")), memories, one_connection=True)
    into, feed = os.pipe()
    out, answers = os.pipe()
    yield mcp_start.Wire(sessions, into, answers), feed, out
    memories.close()
    for fd in (into, feed, out, answers):
        os.close(fd)


def test_a_stateless_tool_call_is_answered_with_no_sdk_at_all(wire: Any, root: Path) -> None:
    """The wire alone (the SDK still importing) writes the file, answers, and tells the SDK the client is stateless."""
    w, feed, out = wire
    w.take(json.dumps(call(1, "write_memory_file", {"path": "a.md", "content": "x\n"}, **META)) + "\n")
    answer = json.loads(os.read(out, 1 << 16))
    assert answer["id"] == 1 and not answer["result"]["isError"] and (root / "a.md").exists()
    assert answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "memdir"
    ping = json.loads(w.for_sdk.get_nowait())
    assert ping["id"] == mcp_start.ERA and ping["method"] == "ping" and ping["params"] == META
    w.take(json.dumps(call(2, "read_memory_file", {"path": "a.md"})) + "\n")  # no envelope: the SDK's to refuse
    assert json.loads(w.for_sdk.get_nowait())["id"] == 2 and w.for_sdk.empty()


def test_while_the_sdk_owes_an_answer_tool_calls_wait_their_turn(wire: Any) -> None:
    w, feed, out = wire
    resource = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                           "params": {"uri": "memdir://index", **META}}) + "\n"
    w.take(resource)
    w.given(w.for_sdk.get_nowait())  # the SDK read it and now owes its answer
    read = json.dumps(call(2, "read_memory_index", {}, **META)) + "\n"
    w.take(read)
    assert w.for_sdk.get_nowait() == read  # not overtaking the resource read
    w.given(read)
    w.from_sdk('{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}\n')
    w.from_sdk('{"jsonrpc":"2.0","id":2,"result":{"content":[]}}\n')
    assert not w.pending and not w.backlog
    w.take(json.dumps(call(3, "read_memory_index", {}, **META)) + "\n")
    assert w.for_sdk.empty()  # answered here again
    assert [json.loads(x)["id"] for x in os.read(out, 1 << 16).decode().splitlines()] == [1, 2, 3]


def test_the_sdk_still_serves_the_envelope_the_fast_path_writes_for() -> None:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    assert mcp_start.MODERN in MODERN_PROTOCOL_VERSIONS
    assert mcp.server_info() == mcp.server(Principals(Principal("default")), None).server_info_stamp  # type: ignore[arg-type]


SLOW_SDK = """
import sys, time
from pathlib import Path
from memdir.faces import mcp, mcp_start
from memdir.faces.auth import Memories, Principal, Principals

principals, gate = Principals(Principal("default")), Path(sys.argv[2])
memories = Memories(sys.argv[1], transport="mcp", watch=False)
sessions = mcp.Sessions(principals, memories, one_connection=True)

def build():  # the SDK "loads" until the test opens the gate
    while not gate.exists():
        time.sleep(0.01)
    return mcp.server(principals, memories, sessions)

mcp_start.serve(sessions, build, mcp.run_stdio)
"""


def test_a_handshake_client_is_answered_while_the_sdk_is_still_loading(root: Path, tmp_path: Path) -> None:
    """With answers kept from an earlier start: initialize, tools/list and a call before the SDK has loaded.

    The SDK then reads the same `initialize` (its answer dropped) and holds the
    session: it serves the next request instead of refusing it as uninitialized.
    """
    with memdir.open(root) as md:
        md.write("seed.md", "The seed.\n", description="a seed", type="project")
    env = {**env_without_memdir(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "inspector", "version": "0.17"}}}
    opening = [json.dumps(hello), '{"method":"notifications/initialized","jsonrpc":"2.0"}',
               '{"method":"tools/list","jsonrpc":"2.0","id":1}']
    earlier, served = run(tmp_path / "earlier", tmp_path / "cache", list(opening), fast=True)
    assert len(earlier) == 2 and served == 0  # the SDK answered both, and they are kept
    gate = tmp_path / "sdk-loaded"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SDK, str(root), str(gate)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write("\n".join(opening).encode() + b"\n")
        proc.stdin.write((json.dumps(call(2, "read_memory_file", {"path": "seed.md"})) + "\n").encode())
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(3)]
        assert not gate.exists()  # the SDK has not loaded, and all three are answered
        assert [a["id"] for a in answers] == [0, 1, 2]
        assert answers[0]["result"] == earlier[0]["result"] and answers[1]["result"] == earlier[1]["result"]
        assert "The seed." in answers[2]["result"]["structuredContent"]["text"]
        gate.touch()
        listing = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "memdir://index"}}
        proc.stdin.write((json.dumps(listing) + "\n").encode())
        proc.stdin.flush()
        fourth = json.loads(proc.stdout.readline())
        assert fourth["id"] == 3 and "seed.md" in fourth["result"]["contents"][0]["text"]  # the SDK's, in session
    finally:
        proc.stdin.close()
        assert proc.wait(30) == 0
    assert b"3 of 5 lines answered without the MCP SDK" in proc.stderr.read()


def test_a_one_shot_client_is_answered_and_the_server_exits_without_waiting_for_the_sdk(root: Path, tmp_path: Path) -> None:
    """stdin closed with every request answered: the server exits at once, its write on disk; with one owed, it waits."""
    with memdir.open(root) as md:
        md.write("seed.md", "The seed.\n", description="a seed", type="project")
    env = {**env_without_memdir(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    gate = tmp_path / "sdk-loaded"
    write = call(1, "write_memory_file", {"path": "one-shot.md", "content": "Written before the SDK loaded.\n"}, **META)
    done = subprocess.run([sys.executable, "-c", SLOW_SDK, str(root), str(gate)], input=json.dumps(write).encode() + b"\n",
                          capture_output=True, env=env, timeout=30)  # the gate never opens: the SDK never loads
    assert done.returncode == 0 and not gate.exists()
    assert not json.loads(done.stdout)["result"]["isError"] and b"1 of 1 lines answered" in done.stderr
    with memdir.open(root) as md:
        assert md.read("one-shot.md").body == "Written before the SDK loaded.\n"
    owed = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "memdir://index", **META}}
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SDK, str(root), str(gate)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(write) + "\n" + json.dumps(owed) + "\n").encode())
    proc.stdin.close()
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(1)  # the resources/read is the SDK's to answer: the server waits for it
    gate.touch()
    assert proc.wait(30) == 0 and proc.stdout is not None
    # the SDK drops a request still running when stdin closes, with the fast path off too: only the write is answered
    assert [json.loads(x)["id"] for x in proc.stdout.read().splitlines()] == [1]


def test_a_stock_client_s_first_read_is_answered_while_the_sdk_is_still_loading(root: Path, tmp_path: Path) -> None:
    with memdir.open(root) as md:
        md.write("seed.md", "The seed.\n", description="a seed", type="project")
    gate = tmp_path / "sdk-loaded"
    env = {**env_without_memdir(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SDK, str(root), str(gate)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write((json.dumps(call(1, "read_memory_file", {"path": "seed.md"}, **META)) + "\n").encode())
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        assert not gate.exists()  # the SDK has not loaded, and the read is answered
        assert first["id"] == 1 and "The seed." in first["result"]["structuredContent"]["text"]
        gate.touch()
        listing = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "memdir://index", **META}}
        proc.stdin.write((json.dumps(listing) + "\n").encode())
        proc.stdin.flush()
        second = json.loads(proc.stdout.readline())
        assert second["id"] == 2 and "seed.md" in second["result"]["contents"][0]["text"]  # the SDK's answer
    finally:
        proc.stdin.close()
        assert proc.wait(30) == 0
    assert b"1 of 2 lines answered without the MCP SDK" in proc.stderr.read()
