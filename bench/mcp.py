"""MCP benchmark: tool round trips through `memdir serve`, over stdio and HTTP, against the in-process cost.

    python bench/mcp.py              # 300 calls per tool and transport, 5 start-ups
    python bench/mcp.py --runs 100

Prints median and p95 in milliseconds for read_memory_file, write_memory_file
and search_memory: in process (`tools.Session.handle`, no MCP); over stdio (a
subprocess, as Claude Code runs it) with a bare JSON-RPC client (the server's
own share) and with the SDK's own client, both with memdir's fast path
(`memdir.faces.mcp_start`: memdir answers tool calls itself) and without it
(MEMDIR_MCP_FAST=0: the SDK's server answers); the SDK client against a
canned server that replays memdir's answers (`bench/mcp_canned.py`: the
client's own floor); over streamable HTTP; and the Node reference memory
server with the same client. Then where a stdio call's milliseconds go, and
the time from starting `memdir serve` to the first `list_tools` answer and to
the first read answered, with the SDK's first answers kept from an earlier
start and without them (the first start after an install); then the same
start rows for a client of the handshake protocol (`initialize` first, as the
MCP Inspector and most IDE agents), memdir beside the Node server
(`--starts-only` prints just those). The memory holds
200 topic files; the rate limit is set out of reach (MEMDIR_WRITES_PER_MINUTE=
1000000) so writes can be timed and still pay for the bucket, as a server does. Targets (issue #10): over stdio with the SDK client, reads at
least 2x faster than the Node reference server and writes no slower; start to
first `list_tools` no slower than it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# This file is named mcp.py: keep its folder off the path so `import mcp` finds the SDK, not this script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent / "src"))

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

import memdir  # noqa: E402
from memdir.faces import tools  # noqa: E402

FILES = 200


def build(root: Path) -> None:
    with memdir.open(root) as md:
        for i in range(FILES):
            md.write(f"project/p{i:03d}.md", f"Fact {i}: the launch of part {i} is on 2026-12-{1 + i % 28:02d}.\n" * 5,
                     description=f"launch plan of part {i}", type="project")


def calls(i: int) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "read_memory_file": ("read_memory_file", {"path": f"project/p{i % FILES:03d}.md"}),
        "write_memory_file": ("write_memory_file", {"path": "project/bench.md", "content": f"Round {i}.\n"}),
        "search_memory": ("search_memory", {"query": f"launch part {i % FILES}", "k": 5}),
    }


def stats(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.95))]


RATE = 1_000_000  # writes per minute: never refused here, but every write takes its token


def in_process(root: Path, runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    with memdir.open(root, agent=True, writes_per_minute=RATE) as md:  # as env() gives the servers
        md.defer_derived()  # as the servers run (auth.Memories)
        session = tools.Session(md)
        for name in calls(0):
            times = []
            for i in range(runs):
                tool, args = calls(i)[name]
                start = time.perf_counter()
                result = session.handle(tool, args)
                times.append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    out[name] = []
                    break
            else:
                out[name] = times
    return out


async def through(client: Client, runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"unknown": []}
    for _ in range(runs):  # a tool memdir refuses at once, touching no file: the wire alone, over the client's floor
        start = time.perf_counter()
        await client.call_tool("no_such_tool", {})
        out["unknown"].append((time.perf_counter() - start) * 1000)
    for name in calls(0):
        times = []
        for i in range(runs):
            tool, args = calls(i)[name]
            start = time.perf_counter()
            result = await client.call_tool(tool, args)
            times.append((time.perf_counter() - start) * 1000)
            if result.is_error:
                times = []
                break
        out[name] = times
    return out


def env(fast: bool = True) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}, "MEMDIR_WRITES_PER_MINUTE": str(RATE),
            "MEMDIR_MCP_FAST": "1" if fast else "0"}


# What the SDK client sends on every request of the stateless protocol (2026-07-28).
ENVELOPE = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}


def serve_cmd(root: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "memdir", "--root", str(root), "serve", *extra]


def over_stdio(root: Path, runs: int, fast: bool = True) -> dict[str, list[float]]:
    cmd = serve_cmd(root)

    async def main() -> dict[str, list[float]]:
        async with Client(stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env(fast)),
                                       errlog=open(os.devnull, "w"))) as client:
            await client.list_tools()
            await client.list_prompts()  # only the SDK answers it: the calls are timed once it has loaded
            return await through(client, runs)

    return anyio.run(main)


def over_stdio_sdk(root: Path, runs: int) -> dict[str, list[float]]:
    return over_stdio(root, runs, fast=False)


def canned_answers(root: Path) -> dict[str, Any]:
    """memdir's own answers to the requests the client sends (read, write and search of the first round)."""
    proc = subprocess.Popen(serve_cmd(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env(), text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    requests: list[tuple[str, str, dict[str, Any]]] = [("server/discover", "server/discover", ENVELOPE),
                                                        ("tools/list", "tools/list", ENVELOPE)]
    requests += [(tool, "tools/call", {"name": tool, "arguments": args, **ENVELOPE})
                 for tool, args in [*calls(0).values(), ("no_such_tool", {})]]
    answers = {}
    try:
        for i, (key, method, params) in enumerate(requests):
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
            proc.stdin.flush()
            answers[key] = json.loads(proc.stdout.readline())["result"]
    finally:
        proc.stdin.close()
        proc.wait(10)
    return answers


def over_canned(root: Path, runs: int) -> dict[str, list[float]]:
    """The SDK client against a server that only replays memdir's answers: the client's and the pipe's floor."""
    with tempfile.TemporaryDirectory() as tmp:
        answers = Path(tmp) / "answers.json"
        answers.write_text(json.dumps(canned_answers(root)))

        async def main() -> dict[str, list[float]]:
            params = StdioServerParameters(command=sys.executable, args=[str(HERE / "mcp_canned.py"), str(answers)])
            async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:
                await client.list_tools()
                return await through(client, runs)

        return anyio.run(main)


def over_stdio_raw_legacy(root: Path, runs: int) -> dict[str, list[float]]:
    return over_stdio_raw(root, runs, legacy=True)


def over_stdio_raw(root: Path, runs: int, legacy: bool = False) -> dict[str, list[float]]:
    """The server's own share: JSON-RPC lines (the SDK client's, stateless protocol) written and read directly.

    With `legacy`, a client of the handshake protocol (`initialize` at 2025-06-18) instead.
    """
    proc = subprocess.Popen(serve_cmd(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env(), text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def ask(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
        stdin.flush()
        reply: dict[str, Any] = json.loads(stdout.readline())
        return reply

    envelope = {} if legacy else ENVELOPE
    try:
        if legacy:  # the SDK answers the handshake: the calls are timed once it has loaded
            ask(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "1"}})
            stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        else:
            ask(0, "server/discover", ENVELOPE)
            ask(0, "prompts/list", ENVELOPE)  # only the SDK answers it: the calls are timed once it has loaded
        out: dict[str, list[float]] = {}
        for name in calls(0):
            times = []
            for i in range(runs):
                tool, args = calls(i)[name]
                start = time.perf_counter()
                reply = ask(i + 1, "tools/call", {"name": tool, "arguments": args, **envelope})
                times.append((time.perf_counter() - start) * 1000)
                if reply.get("error") or reply["result"].get("isError"):
                    times = []
                    break
            out[name] = times
        return out
    finally:
        stdin.close()
        proc.wait(10)


def sdk_import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import mcp.server.lowlevel.server, mcp.server.stdio; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def over_http(root: Path, runs: int) -> dict[str, list[float]]:
    proc = subprocess.Popen(serve_cmd(root, "--http", "127.0.0.1:0"), stdout=subprocess.PIPE, text=True, env=env())
    try:
        assert proc.stdout is not None
        found = re.search(r"MCP at (\S+/mcp)", proc.stdout.readline())
        assert found, "the HTTP server did not start"

        async def main() -> dict[str, list[float]]:
            async with Client(found.group(1)) as client:
                await client.list_tools()
                return await through(client, runs)

        return anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(10)


def start_up(root: Path, times: int, params: StdioServerParameters | None = None,
             first: tuple[str, dict[str, Any]] | None = None) -> list[float]:
    """Seconds from starting `memdir serve` (stdio), or another server, to the first list_tools answer (or tool call)."""
    cmd = serve_cmd(root)
    params = params or StdioServerParameters(command=cmd[0], args=cmd[1:], env=env())
    out = []

    async def once() -> None:
        start = time.perf_counter()
        async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:
            if first is None:
                await client.list_tools()
            elif (await client.call_tool(*first)).is_error:
                raise SystemExit(f"the first call failed: {first}")
            out.append(time.perf_counter() - start)

    for _ in range(times):
        anyio.run(once)
    return out


HANDSHAKE_HELLO = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
                   "clientInfo": {"name": "bench", "version": "1"}}


def handshake_start(cmd: list[str], environ: dict[str, str], times: int,
                    first: tuple[str, dict[str, Any]] | None = None) -> list[float]:
    """Seconds from starting a stdio server to its first `tools/list` answer (or tool call) for a handshake client.

    A raw JSON-RPC client of the 2025-06-18 protocol, as the MCP Inspector and
    most IDE agents speak it: `initialize`, wait, `notifications/initialized`,
    `tools/list`. Each line is written as the TypeScript SDK writes it.
    """
    out = []
    for _ in range(times):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=environ, text=True, bufsize=1)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps({"method": "initialize", "params": HANDSHAKE_HELLO, "jsonrpc": "2.0", "id": 0}) + "\n")
            proc.stdin.flush()
            assert "result" in json.loads(proc.stdout.readline())
            proc.stdin.write('{"method":"notifications/initialized","jsonrpc":"2.0"}\n')
            if first is None:
                proc.stdin.write('{"method":"tools/list","jsonrpc":"2.0","id":1}\n')
            else:
                body = {"name": first[0], "arguments": first[1]}
                proc.stdin.write(json.dumps({"method": "tools/call", "params": body, "jsonrpc": "2.0", "id": 1}) + "\n")
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            if "error" in reply or (first is not None and reply["result"].get("isError")):
                raise SystemExit(f"the first answer failed: {reply}")
            out.append(time.perf_counter() - start)
        finally:
            proc.stdin.close()
            proc.wait(10)
    return out


def handshake_rows(root: Path, times: int, reference: StdioServerParameters | None) -> None:
    """The start rows of a handshake-protocol client: memdir with and without kept answers, and the Node server."""
    cmd = serve_cmd(root)
    first_read = ("read_memory_file", {"path": "project/p000.md"})
    handshake_start(cmd, env(), 1)  # keeps the SDK's answers to this client's initialize and tools/list
    rows = [("memdir, answers kept from an earlier start", handshake_start(cmd, env(), times),
             handshake_start(cmd, env(), times, first_read))]
    with tempfile.TemporaryDirectory() as empty:
        blocked = Path(empty) / "a-file"
        blocked.write_text("a cache folder cannot be made under a file, so none is kept\n")
        bare = {**env(), "XDG_CACHE_HOME": str(blocked / "cache")}
        rows.append(("memdir, no answers kept (first start after an install)", handshake_start(cmd, bare, times),
                     handshake_start(cmd, bare, times, first_read)))
    rows.append(("memdir, fast path off (MEMDIR_MCP_FAST=0: the SDK answers)", handshake_start(cmd, env(False), times),
                 handshake_start(cmd, env(False), times, first_read)))
    if reference is not None:
        node = [reference.command, *reference.args]
        assert reference.env is not None
        rows.append(("reference memory server (Node)", handshake_start(node, reference.env, times),
                     handshake_start(node, reference.env, times, ("open_nodes", {"names": ["part 0"]}))))
    print(f"\nstart to first answer, handshake protocol (2025-06-18: initialize, notifications/initialized, then the "
          f"request), raw JSON-RPC client, {times} starts; median / max in s\n")
    print("| server | first tools/list | first read answered |")
    print("|---|---|---|")
    for label, lists, reads in rows:
        print(f"| {label} | {statistics.median(lists):.3f} / {max(lists):.3f} | "
              f"{statistics.median(reads):.3f} / {max(reads):.3f} |")


REFERENCE = Path(os.environ.get("MEMDIR_BENCH_CACHE") or Path.home() / ".cache" / "memdir-bench") / "npm"
REFERENCE_BIN = REFERENCE / "node_modules" / ".bin" / "mcp-server-memory"


def reference_server() -> StdioServerParameters | None:
    """The Node reference memory server (npm, into the bench cache folder), or None without node."""
    if not REFERENCE_BIN.exists():
        if shutil.which("npm") is None:
            return None
        subprocess.run(["npm", "install", "--silent", "--prefix", str(REFERENCE), "@modelcontextprotocol/server-memory"],
                       capture_output=True)
    if not REFERENCE_BIN.exists():
        return None
    store = Path(tempfile.mkdtemp()) / "memory.jsonl"
    return StdioServerParameters(command=str(REFERENCE_BIN), env={**os.environ, "MEMORY_FILE_PATH": str(store)})


def reference_calls(i: int) -> dict[str, tuple[str, dict[str, Any]]]:
    """The same three operations in the reference server's tools: read an entity, add a fact, search."""
    return {
        "read_memory_file": ("open_nodes", {"names": [f"part {i % FILES}"]}),
        "write_memory_file": ("add_observations", {"observations": [{"entityName": "bench", "contents": [f"Round {i}."]}]}),
        "search_memory": ("search_nodes", {"query": f"part {i % FILES}"}),
    }


def over_reference(params: StdioServerParameters, runs: int) -> dict[str, list[float]]:
    async def main() -> dict[str, list[float]]:
        async with Client(stdio_client(params, errlog=open(os.devnull, "w"))) as client:
            entities = [{"name": f"part {i}", "entityType": "project",
                         "observations": [f"Fact {i}: the launch of part {i} is on 2026-12-{1 + i % 28:02d}."] * 5}
                        for i in range(FILES)] + [{"name": "bench", "entityType": "project", "observations": []}]
            await client.call_tool("create_entities", {"entities": entities})
            out: dict[str, list[float]] = {}
            for name in calls(0):
                times = []
                for i in range(runs):
                    tool, args = reference_calls(i)[name]
                    start = time.perf_counter()
                    result = await client.call_tool(tool, args)
                    times.append((time.perf_counter() - start) * 1000)
                    if result.is_error:
                        raise SystemExit(f"the reference server failed {tool}: {result.content}")
                out[name] = times
            return out

    return anyio.run(main)


def row(label: str, results: dict[str, list[float]]) -> str:
    cells = []
    for name in calls(0):
        ms = results.get(name) or []
        cells.append(" / ".join(f"{v:.2f}" for v in stats(ms)) if ms else "n/a")
    return f"| {label} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="calls per tool and transport")
    parser.add_argument("--starts", type=int, default=5, help="server start-ups to time")
    parser.add_argument("--starts-only", action="store_true", help="only the start rows, no round trips")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        build(root)
        if args.starts_only:
            handshake_rows(root, args.starts, reference_server())
            return
        measured: list[tuple[str, Callable[[Path, int], dict[str, list[float]]]]] = [
            ("in process (tools.Session)", in_process),
            ("MCP over stdio, raw JSON-RPC client", over_stdio_raw),
            ("MCP over stdio, SDK client", over_stdio),
            ("MCP over stdio, SDK client, fast path off (the SDK's server answers)", over_stdio_sdk),
            ("SDK client against a canned server replaying memdir's answers (the client's floor)", over_canned),
            ("MCP over HTTP, SDK client", over_http),
            ("MCP over stdio, raw JSON-RPC client, handshake protocol (2025-06-18)", over_stdio_raw_legacy),
        ]
        print(f"memdir MCP round trips, {FILES} topic files, {args.runs} calls each; median / p95 in ms\n")
        print("| path | " + " | ".join(calls(0)) + " |")
        print("|---" * (len(calls(0)) + 1) + "|")
        results = {}
        for label, fn in measured:
            results[label] = fn(root, args.runs)
            print(row(label, results[label]), flush=True)
        reference = reference_server()
        if reference is not None:
            results["reference"] = over_reference(reference, args.runs)
            print(row("reference memory server (Node) over stdio, SDK client", results["reference"]))
        print("\nwhere a stdio call's milliseconds go (medians): memdir = in process; memdir's stdio layer (JSON, pipe, "
              "its stdin thread) = raw client - in process; the SDK client = SDK client - raw client, beside its floor "
              "(canned server - its one json.loads/dumps); the SDK's server instead of the fast path = fast path off - "
              "SDK client\n")
        print("| tool | memdir | memdir's stdio layer | SDK client | total | SDK client floor | SDK server would add |")
        print("|---|---|---|---|---|---|---|")
        labels = [label for label, _ in measured]
        for name in calls(0):
            own, raw, sdk, slow, canned = (statistics.median(results[label][name]) for label in labels[:5])
            print(f"| {name} | {own:.2f} | {raw - own:.2f} | {sdk - raw:.2f} | {sdk:.2f} | {canned:.2f} | {slow - sdk:.2f} |")
        refused, floor = (statistics.median(results[label]["unknown"]) for label in (labels[2], labels[4]))
        print(f"\na call memdir refuses at once (an unknown tool, no file touched), SDK client over stdio: {refused:.2f} ms; "
              f"the canned server's answer to it: {floor:.2f} ms (memdir's stdio wire: the difference, "
              f"{refused - floor:.2f} ms)")
        if reference is not None:
            ours, theirs = (statistics.median(results[k]["read_memory_file"]) for k in (labels[2], "reference"))
            mine_w, their_w = (statistics.median(results[k]["write_memory_file"]) for k in (labels[2], "reference"))
            print(f"\nSDK client over stdio, memdir vs the Node reference server: read {theirs / ours:.1f}x faster "
                  f"(target 2x), write {their_w / mine_w:.1f}x as fast (target 1x)")
        starts = start_up(root, args.starts)
        imports = statistics.median([sdk_import_seconds() for _ in range(args.starts)])
        first_read = ("read_memory_file", {"path": "project/p000.md"})
        reads = start_up(root, args.starts, first=first_read)
        print(f"\nstart to first list_tools over stdio: median {statistics.median(starts):.2f} s, "
              f"max {max(starts):.2f} s ({args.starts} starts); importing the mcp SDK alone: {imports:.2f} s")
        print(f"start to first read answered: median {statistics.median(reads):.2f} s, max {max(reads):.2f} s")
        with tempfile.TemporaryDirectory() as empty:  # no answers kept from an earlier start: the SDK answers
            blocked = Path(empty) / "a-file"
            blocked.write_text("a cache folder cannot be made under a file, so none is kept\n")
            cmd = serve_cmd(root)
            uncached = start_up(root, args.starts, StdioServerParameters(
                command=cmd[0], args=cmd[1:], env={**env(), "XDG_CACHE_HOME": str(blocked / "cache")}))
        print(f"the same with no answers kept from an earlier start (the first start after an install or upgrade): "
              f"first list_tools median {statistics.median(uncached):.2f} s, max {max(uncached):.2f} s")
        if reference is not None:
            theirs_start = start_up(root, args.starts, reference)
            theirs_read = start_up(root, args.starts, reference, first=("open_nodes", {"names": ["part 0"]}))
            print(f"the reference memory server (Node): first list_tools median {statistics.median(theirs_start):.2f} s, "
                  f"max {max(theirs_start):.2f} s; first read answered median {statistics.median(theirs_read):.2f} s")
        handshake_rows(root, args.starts, reference)


if __name__ == "__main__":
    main()
