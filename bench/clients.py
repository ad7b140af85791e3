"""memdir as a real MCP client sees it: the MCP Inspector's command line (npm), over stdio and HTTP.

    python bench/clients.py          # fetches @modelcontextprotocol/inspector with npx on first use

Each row is one request the Inspector sends to `memdir serve` (stdio: a
subprocess per request, as a client starts it; HTTP: one `memdir serve --http`
on loopback) and what came back, checked: tools listed, a memory written,
read, found and undone, the index as a resource, the prompt. A request whose
answer is wrong or missing prints the answer and the script exits non-zero,
so the table cannot hide a failure. Then the start: whole Inspector runs of
`tools/list` and of a first read over stdio (the handshake protocol: the
Inspector sends `initialize` first), against memdir and the Node reference
memory server (from bench/peers.py's cache folder, if there).
Not in `make test`: it needs the npm registry, which a test must not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
MEMDIR = Path(sys.executable).parent / "memdir"
CONTENT = "---\ndescription: What Alice drinks\ntype: user\n---\nAlice drinks green tea, no sugar.\n"

Check = Callable[[dict[str, Any]], bool]


def text(answer: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in answer.get("content", []))


REQUESTS: list[tuple[str, list[str], Check]] = [
    ("tools/list", [], lambda a: len(a["tools"]) >= 12 and all("inputSchema" in t for t in a["tools"])),
    ("tools/call write_memory_file", ["--tool-name", "write_memory_file", "--tool-arg", "path=user/tea.md",
                                      "--tool-arg", f"content={CONTENT}"],
     lambda a: not a["isError"] and a["structuredContent"]["change"] in ("created", "updated", "unchanged")),
    ("tools/call read_memory_file", ["--tool-name", "read_memory_file", "--tool-arg", "path=user/tea.md"],
     lambda a: "green tea" in text(a) and a["structuredContent"]["version"]),
    ("tools/call search_memory", ["--tool-name", "search_memory", "--tool-arg", "query=green tea"],
     lambda a: a["structuredContent"]["hits"][0]["path"] == "user/tea.md"),
    ("tools/call read_memory_file (missing)", ["--tool-name", "read_memory_file", "--tool-arg", "path=user/nope.md"],
     lambda a: a["isError"] and "nope.md" in text(a)),
    ("resources/list", [], lambda a: any(r["uri"] == "memdir://index" for r in a["resources"])),
    ("resources/read", ["--uri", "memdir://index"], lambda a: "user/tea.md" in a["contents"][0]["text"]),
    ("resources/templates/list", [], lambda a: any("{path}" in t["uriTemplate"] for t in a["resourceTemplates"])),
    ("prompts/list", [], lambda a: any(p["name"] == "memory_conventions" for p in a["prompts"])),
    ("prompts/get", ["--prompt-name", "memory_conventions"], lambda a: "MEMORY.md" in json.dumps(a["messages"])),
    ("tools/call undo_memory_change", ["--tool-name", "undo_memory_change", "--tool-arg", "path=user/tea.md"],
     lambda a: not a["isError"]),
]


def inspect(target: list[str], method: str, args: list[str],
            env: dict[str, str] | None = None) -> tuple[dict[str, Any] | None, str, float]:
    start = time.perf_counter()
    done = subprocess.run(["npx", "-y", INSPECTOR, "--cli", *target, "--method", method.split()[0], *args],
                          capture_output=True, text=True, timeout=180, env=env)
    took = (time.perf_counter() - start) * 1000
    try:
        return json.loads(done.stdout), done.stdout + done.stderr, took
    except json.JSONDecodeError:
        return None, done.stdout + done.stderr, took


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    if shutil.which("npx") is None:
        print("npx is not installed (Debian: apt-get install npm); nothing was measured", file=sys.stderr)
        return 2
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = str(Path(tmp) / "memory")
        env = {**os.environ, "MEMDIR_WRITES_PER_MINUTE": "0"}
        port = free_port()
        server = subprocess.Popen([str(MEMDIR), "--root", root, "serve", "--http", str(port)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            assert server.stderr is not None
            server.stderr.readline()  # the banner: serving
            targets = {"stdio": [str(MEMDIR), "--root", root, "serve"],
                       "http": [f"http://127.0.0.1:{port}/mcp", "--transport", "http"]}
            print(f"{'request':40} {'stdio':>14} {'http':>14}")
            for method, args, check in REQUESTS:
                cells = []
                for name, target in targets.items():
                    answer, raw, took = inspect(target, method, args)
                    try:
                        ok = answer is not None and bool(check(answer))
                    except (KeyError, IndexError, TypeError):
                        ok = False
                    if not ok:
                        failures += 1
                        print(f"FAILED {method} over {name}:\n{raw[-2000:]}", file=sys.stderr)
                    cells.append(f"{'ok' if ok else 'FAILED'} {took:6.0f} ms")
                print(f"{method:40} {cells[0]:>14} {cells[1]:>14}")
        finally:
            server.terminate()
            server.wait(10)
    print("(each time is a whole Inspector run: node start, connect, one request; stdio also starts memdir)")
    return 1 if failures or not starts() else 0


# Between the Inspector and the server: the seconds from starting the server to the answer to the request after
# `initialize` (id 1) passing on the wire, and to the server's exit once the Inspector closes stdin.
WIRE = """
import json, subprocess, sys, threading, time
log, cmd = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def up():
    for line in sys.stdin.buffer:
        server.stdin.write(line)
        server.stdin.flush()
    server.stdin.close()
threading.Thread(target=up, daemon=True).start()
answered = None
for line in server.stdout:
    if answered is None and b'"id"' in line and json.loads(line).get("id") == 1:
        answered = time.perf_counter() - start
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
server.wait()
open(log, "a").write(f"{answered} {time.perf_counter() - start}\\n")
"""

REFERENCE_BIN = (Path(os.environ.get("MEMDIR_BENCH_CACHE") or Path.home() / ".cache" / "memdir-bench")
                 / "npm" / "node_modules" / ".bin" / "mcp-server-memory")


def starts(runs: int = 7) -> bool:
    """Whole Inspector runs over stdio, each starting the server: median / max in ms. False if one failed."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = str(Path(tmp) / "memory")
        env = {**os.environ, "MEMDIR_WRITES_PER_MINUTE": "0"}
        memdir = [str(MEMDIR), "--root", root, "serve"]
        inspect(memdir, "tools/call", ["--tool-name", "write_memory_file", "--tool-arg", "path=user/tea.md",
                                       "--tool-arg", f"content={CONTENT}"], env)  # the file the first read reads
        servers: list[tuple[str, list[str], dict[str, str], list[str]]] = [("memdir", memdir, env, ["path=user/tea.md"])]
        if REFERENCE_BIN.exists():
            node_env = {**os.environ, "MEMORY_FILE_PATH": str(Path(tmp) / "memory.jsonl")}
            servers.append(("reference memory server (Node)", [str(REFERENCE_BIN)], node_env, []))
        print(f"\nstart to first answer through the MCP Inspector's CLI over stdio (handshake protocol), {runs} runs; "
              "median / max in ms. A whole run: node start, server start, initialize, the request, the server's exit. "
              "On the wire: from starting the server to its answer to the request\n")
        print("| server | tools/list, whole run | tools/list, on the wire | first read, whole run | first read, on the wire "
              "| server start to exit |")
        print("|---|---|---|---|---|---|")
        log = Path(tmp) / "wire.log"
        for label, target, environ, path in servers:
            read = (["--tool-name", "read_memory_file", "--tool-arg", *path] if path
                    else ["--tool-name", "read_graph"])
            cells, exits = [], []
            for method, args in (("tools/list", []), ("tools/call", read)):
                took, wire = [], []
                for _ in range(runs):
                    log.unlink(missing_ok=True)
                    answer, raw, ms = inspect([sys.executable, "-c", WIRE, str(log), *target], method, args, environ)
                    seen = log.read_text().split() if log.exists() else ["None", "0"]
                    if answer is None or answer.get("isError") or seen[0] == "None":
                        ok = False
                        print(f"FAILED {method} against {label}:\n{raw[-2000:]}", file=sys.stderr)
                        continue
                    took.append(ms)
                    wire.append(float(seen[0]) * 1000)
                    exits.append(float(seen[1]) * 1000)
                for ms_list in (took, wire):
                    cells.append(f"{statistics.median(ms_list):.0f} / {max(ms_list):.0f}" if ms_list else "failed")
            spread = f"{statistics.median(exits):.0f} / {max(exits):.0f}" if exits else "failed"
            print(f"| {label} | {' | '.join(cells)} | {spread} |", flush=True)
    return ok


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()  # --help: the docstring
    sys.exit(main())
