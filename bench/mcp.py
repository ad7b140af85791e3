"""MCP benchmark: memdir served through the official SDK, over stdio as a client starts it.

    python bench/mcp.py                        # 3 starts, 100 calls per tool: about ten seconds
    python bench/mcp.py --runs 500 --starts 10

Prints the two targets of issue 19, then the round trip they sit in:

(a) start: seconds from starting `memdir serve` to the answer to the first
    `tools/list` (the SDK's client over stdio, as Claude Code starts a
    server); target <= 0.7 s.
(b) memdir's own share of a tool call: the time inside `mcp.call` (which runs
    `tools.Session.handle`) while the SDK's server serves the call in process,
    measured apart from the SDK's work around it; target <= 0.2 ms for a read
    (a write also waits for fsync, shown beside it).

then the whole call over stdio with the SDK's client (median / p95, ms). The
memory holds 200 topic files; the rate limit is set out of reach
(MEMDIR_WRITES_PER_MINUTE=1000000) so writes can be timed and still pay for
the bucket, as a server does.
"""

from __future__ import annotations

import argparse
import os
import resource
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
from memdir.faces import mcp as memdir_mcp  # noqa: E402
from memdir.faces import tools  # noqa: E402
from memdir.faces.auth import Memories, Principal, Principals  # noqa: E402

FILES = 200
RATE = "1000000"  # writes per minute: never refused here, but every write takes its token
START_TARGET = 0.7  # s
SHARE_TARGET = 0.2  # ms


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


def stats(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"{statistics.median(ms):.3f} / {ms[min(len(ms) - 1, int(len(ms) * 0.95))]:.3f}"


def env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}, "MEMDIR_WRITES_PER_MINUTE": RATE,
            "MEMDIR_RESIDENT": "off"}  # the server's own start; bench/hooks.py times it handed to the resident process


def stdio_params(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "memdir", "--root", str(root), "serve"], env=env())


async def timed_calls(client: Client, runs: int) -> dict[str, list[float]]:
    """Milliseconds of each call as the client sees it, per tool."""
    out: dict[str, list[float]] = {}
    for name in calls(0):
        out[name] = []
        for i in range(runs):
            tool, args = calls(i)[name]
            start = time.perf_counter()
            result = await client.call_tool(tool, args)
            out[name].append((time.perf_counter() - start) * 1000)
            if result.is_error:
                raise SystemExit(f"{tool} failed: {result.content}")
    return out


def starts(root: Path, times: int) -> tuple[list[float], list[float]]:
    """(a) Seconds from starting `memdir serve` to the first tools/list answer, SDK client over stdio; and the CPU
    seconds each server process used in all (start, answer, exit), which a busy machine does not stretch."""
    out, cpu = [], []

    def children() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    async def once() -> None:
        before = children()
        start = time.perf_counter()
        async with Client(stdio_client(stdio_params(root), errlog=open(os.devnull, "w"))) as client:
            listed = await client.list_tools()
            out.append(time.perf_counter() - start)
        cpu.append(children() - before)
        assert len(listed.tools) == len(tools.TOOLS)

    for _ in range(times):
        anyio.run(once)
    return out, cpu


def sdk_import_seconds() -> float:
    """What importing the SDK alone takes in a fresh process (most of a start)."""
    code = "import time; t = time.perf_counter(); import mcp.server.lowlevel.server, mcp.server.stdio; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def memdir_share(root: Path, runs: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(b) Milliseconds inside `mcp.call` per tool while the SDK's server serves it in process, and the in-process calls."""
    inside: dict[str, list[float]] = {name: [] for name in calls(0)}
    plain = memdir_mcp.call

    def call(session: tools.Session, name: str, arguments: dict[str, Any]) -> tools.Result:
        start = time.perf_counter()
        try:
            return plain(session, name, arguments)
        finally:
            inside[name].append((time.perf_counter() - start) * 1000)

    memories = Memories(root, transport="mcp", watch=False)
    memdir_mcp.call = call  # the server's handlers look `call` up when they run
    try:
        async def main() -> dict[str, list[float]]:
            async with Client(memdir_mcp.server(Principals(Principal("default")), memories)) as client:  # type: ignore[arg-type]
                return await timed_calls(client, runs)

        whole = anyio.run(main)
    finally:
        memdir_mcp.call = plain
        memories.close()
    return inside, whole


def over_stdio(root: Path, runs: int) -> dict[str, list[float]]:
    """Whole calls through `memdir serve` over stdio, with the SDK's client."""
    async def main() -> dict[str, list[float]]:
        async with Client(stdio_client(stdio_params(root), errlog=open(os.devnull, "w"))) as client:
            await client.list_tools()
            return await timed_calls(client, runs)

    return anyio.run(main)


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="calls per tool")
    parser.add_argument("--starts", type=int, default=3, help="server starts to time")
    args = parser.parse_args()
    os.environ["MEMDIR_WRITES_PER_MINUTE"] = RATE
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        build(root)
        started, cpu = starts(root, args.starts)
        sdk = sdk_import_seconds()
        inside, in_process = memdir_share(root, args.runs)
        stdio = over_stdio(root, args.runs)
    start = statistics.median(started)
    share = statistics.median(inside["read_memory_file"])
    print(f"memdir MCP through the SDK: {FILES} topic files, {args.starts} starts, {args.runs} calls per tool\n")
    print(f"(a) start of `memdir serve` to the first tools/list answer (SDK client, stdio): median {start:.3f} s, "
          f"max {max(started):.3f} s; target <= {START_TARGET} s: {verdict(start, START_TARGET)}\n"
          f"    importing the SDK alone: {sdk:.3f} s; CPU time of a whole server run (start, answer, exit): "
          f"median {statistics.median(cpu):.3f} s; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"(b) memdir's own share of a read_memory_file call (inside mcp.call, the SDK apart): median {share:.3f} ms; "
          f"target <= {SHARE_TARGET} ms: {verdict(share, SHARE_TARGET)}\n")
    rows: list[tuple[str, Callable[[str], list[float]]]] = [
        ("memdir's share (inside mcp.call)", lambda name: inside[name]),
        ("in process: SDK client and server, no transport", lambda name: in_process[name]),
        ("whole call over stdio, SDK client", lambda name: stdio[name]),
    ]
    print("median / p95 in ms\n")
    print("| | " + " | ".join(calls(0)) + " |")
    print("|---" * (len(calls(0)) + 1) + "|")
    for label, of in rows:
        print(f"| {label} | " + " | ".join(stats(of(name)) for name in calls(0)) + " |")


if __name__ == "__main__":
    main()
