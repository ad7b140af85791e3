"""Where Claude Code waits on memdir: each hook and the MCP server's connect, with and without the resident process.

    python bench/hooks.py                    # 1,000 files; 15 commands and 5 Claude Code sessions each way
    python bench/hooks.py --runs 31 --sessions 9

Issue 35's targets, in Claude Code's own debug timing on a 1,000-file memory: each hook <= 100 ms
(SessionStart, UserPromptSubmit, Stop) and MCP connect <= 0.5 s. Two tables, each way measured in turn (off,
on, off, on, ...: the machine's load drifts) and reported as medians:

1. whole commands, as Claude Code runs them: `memdir --root M hook claude-code` with each event on stdin, and
   `memdir --root M serve` to its answer to Claude Code's first request (`server/discover`), in their own process
   (MEMDIR_RESIDENT=off) and handed to a warm resident process (faces/resident.py);
2. the real Claude Code (tests/clients' pinned version, if installed) in headless sessions against the scripted
   API of tests/clients/standin.py, each with --debug-file: the durations Claude Code logs itself
   ("Hooks: SessionStart:startup [...] finished with status 0 (N ms)", "MCP server "memdir": Successfully
   connected (transport: stdio) in N ms").

The resident runs from a private folder of this run and is stopped at the end. Not a test: run it, read it, paste
it, with the load average it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # bench/mcp.py is not the MCP SDK
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests" / "clients"), str(HERE)]

import clients  # noqa: E402
from standin import StandIn, Text  # noqa: E402
from targets import layout, text_of  # noqa: E402

import memdir  # noqa: E402

MEMDIR = [sys.executable, "-m", "memdir"]
PROMPT = "when does the stripe webhook retry after a failed invoice export?"
# Claude Code 2.1.332's first request to a stdio server, as it sent it (its "version negotiation probe").
DISCOVER = {"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}}}
HOOK = re.compile(r"Hooks: (\w+)(?::\w+)? \[[^\]]*\] finished with status \d+ \((\d+)ms\)")
CONNECT = re.compile(r'MCP server "memdir": Successfully connected \(transport: stdio\) in (\d+)ms')
TARGETS = {"SessionStart": 100, "UserPromptSubmit": 100, "Stop": 100, "MCP connect": 500}
WAYS = ("own process", "resident")


def build(root: Path, n: int, env: dict[str, str]) -> None:
    """n topic files (a quarter of them feedback), then a memory in use: its search index and link graph built."""
    with memdir.open(root, create=True, writes_per_minute=0) as md:
        for start in range(0, n, 500):
            md.apply([memdir.Op.write(layout(i, "deep"), text_of(i)) for i in range(start, min(n, start + 500))])
    for payload in events(root.parent / "t.jsonl").values():
        run_hook(root, payload, env)


def events(transcript: Path) -> dict[str, str]:
    """The hook events, as Claude Code sends them; Stop reads the end of a transcript, which is written here."""
    transcript.write_text("\n".join(json.dumps(x) for x in (
        {"type": "user", "sessionId": "bench", "message": {"role": "user", "content": PROMPT}},
        {"type": "assistant", "sessionId": "bench", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "It retries three times, an hour apart."}]}})) + "\n")
    base = {"session_id": "bench", "transcript_path": str(transcript), "cwd": "/tmp"}
    return {"SessionStart": json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}),
            "UserPromptSubmit": json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}),
            "Stop": json.dumps({**base, "hook_event_name": "Stop", "stop_hook_active": False})}


def run_hook(root: Path, payload: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([*MEMDIR, "--root", str(root), "hook", "claude-code"], input=payload, env=env, check=True,
                   capture_output=True, text=True)
    return (time.perf_counter() - start) * 1000


def first_answer(root: Path, env: dict[str, str]) -> float:
    """Milliseconds from starting `memdir serve` to its answer to server/discover."""
    start = time.perf_counter()
    server = subprocess.Popen([*MEMDIR, "--root", str(root), "serve"], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(DISCOVER) + "\n").encode())
    server.stdin.flush()
    answer = server.stdout.readline()
    took = (time.perf_counter() - start) * 1000
    server.stdin.close()
    server.wait(30)
    if b'"result"' not in answer:
        raise SystemExit(f"memdir serve did not answer server/discover: {answer[:300]!r}")
    return took


def interleaved(runs: int, envs: dict[str, dict[str, str]], measure: Callable[[dict[str, str]], float]) -> dict[str, float]:
    samples: dict[str, list[float]] = {way: [] for way in envs}
    for _ in range(runs):
        for way, env in envs.items():
            samples[way].append(measure(env))
    return {way: statistics.median(s) for way, s in samples.items()}


def claude_sessions(root: Path, work: Path, sessions: int, envs: dict[str, dict[str, str]]) -> dict[str, dict[str, float]]:
    """Claude Code's own durations per way: medians over `sessions` sessions, after one session each not counted."""
    binary = clients.binary("claude")
    project = work / "project"
    project.mkdir(exist_ok=True)
    subprocess.run([*MEMDIR, "--root", str(root), "hook", "install"], cwd=project, check=True, capture_output=True)
    mcp = work / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"memdir": {"command": MEMDIR[0],
                                                         "args": [*MEMDIR[1:], "--root", str(root), "serve"]}}}))
    found: dict[str, dict[str, list[float]]] = {way: {k: [] for k in TARGETS} for way in envs}
    with StandIn(lambda r: [Text("It retries three times.")]) as api:
        for i in range(sessions + 1):
            for way, env in envs.items():
                home, log = work / f"home-{WAYS.index(way)}", work / f"debug-{WAYS.index(way)}-{i}.log"
                keep = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
                done = subprocess.run([str(binary), "-p", PROMPT, "--mcp-config", str(mcp), "--debug-file", str(log)],
                                      cwd=project, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
                                      env={**keep, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                                           "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-stand-in",
                                           "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
                                           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
                if done.returncode != 0:
                    raise SystemExit(f"claude failed ({way}): {done.stderr[-1000:]}")
                if i == 0:
                    continue  # the first session of each way: Claude Code's first contact, a cold resident
                text = log.read_text(errors="replace")
                for event, ms in HOOK.findall(text):
                    if event in found[way]:
                        found[way][event].append(float(ms))
                for ms in CONNECT.findall(text):
                    found[way]["MCP connect"].append(float(ms))
    return {way: {k: statistics.median(v) for k, v in by.items() if v} for way, by in found.items()}


def _interpreter(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return (time.perf_counter() - start) * 1000


def stop_residents(folder: Path) -> None:
    for pid_file in folder.glob("memdir/*.pid"):
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def table(title: str, rows: dict[str, dict[str, float]]) -> None:
    print(f"\n{title}\n\n| | " + " | ".join(WAYS) + " | target |\n|---|---|---|---|")
    for name, target in TARGETS.items():
        cells = [f"{rows[way][name]:.0f} ms" if name in rows[way] else "-" for way in WAYS]
        met = ["met" if name in rows[way] and rows[way][name] <= target else "MISSED" for way in WAYS]
        print(f"| {name} | " + " | ".join(f"{c} ({m})" for c, m in zip(cells, met, strict=True)) + f" | <= {target} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15, help="whole commands of each kind, each way")
    parser.add_argument("--sessions", type=int, default=5, help="Claude Code sessions each way (0: none)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-hooks-") as tmp:
        work = Path(tmp)
        runtime = work / "run"
        runtime.mkdir(mode=0o700)
        base = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
        base.update({"XDG_RUNTIME_DIR": str(runtime), "MEMDIR_CACHE": str(work / "cache")})
        envs = {WAYS[0]: {**base, "MEMDIR_RESIDENT": "off"}, WAYS[1]: base}
        root = work / "memory"
        build(root, args.files, envs[WAYS[0]])
        try:
            payloads = events(work / "t.jsonl")
            run_hook(root, payloads["SessionStart"], envs[WAYS[1]])  # starts the resident
            for _ in range(600):
                if list(runtime.glob("memdir/*.sock")):
                    break
                time.sleep(0.1)
            print(f"memdir {memdir.__version__}, {args.files:,} files, Python {sys.version.split()[0]}, "
                  f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
            rows: dict[str, dict[str, float]] = {way: {} for way in WAYS}
            for event, payload in payloads.items():
                for way, ms in interleaved(args.runs, envs, lambda env, p=payload: run_hook(root, p, env)).items():
                    rows[way][event] = ms
            for way, ms in interleaved(args.runs, envs, lambda env: first_answer(root, env)).items():
                rows[way]["MCP connect"] = ms
            table(f"1. Whole commands, median of {args.runs} (MCP connect: start to the answer to server/discover)", rows)
            floor = interleaved(args.runs, {"floor": base}, lambda env: _interpreter(env))["floor"]
            print(f"\nthe floor on this machine now: an interpreter's start alone (python -c pass) {floor:.0f} ms")
            if args.sessions and clients.binary("claude").exists():
                table(f"2. Claude Code {clients.PINNED['claude'][1]}'s own debug timing, median of {args.sessions} "
                      "sessions", claude_sessions(root, work, args.sessions, envs))
            elif args.sessions:
                print(f"\n2. Claude Code is not installed at {clients.binary('claude')}: `python tests/clients/clients.py`")
        finally:
            stop_residents(runtime)
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
