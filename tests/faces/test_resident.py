"""The resident process (faces/resident.py): a hook or a stdio server handed to it answers as in its own process."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import memdir
from memdir.faces import resident

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the resident process needs fork (POSIX)")
SRC = Path(memdir.__file__).parent
START = {"hook_event_name": "SessionStart", "session_id": "s-1", "source": "startup", "cwd": "/tmp"}
PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "prompt": "잠금 순서 lock order of the flock"}


def command(env: dict[str, str], *args: str, stdin: str = "", importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run([sys.executable, *flags, "-m", "memdir", *args], input=stdin, env=env, capture_output=True,
                          text=True, timeout=120)


def wait_for(check: object, what: str) -> None:
    for _ in range(1200):  # the resident imports the command line and the MCP SDK: on a loaded machine, seconds
        if callable(check) and check():
            return
        time.sleep(0.1)
    raise AssertionError(f"waited 120 s for {what}")


def same(text: str) -> str:
    """A context with its fence's random nonce as one word."""
    return re.sub(r"memory-\d+", "memory-N", text)


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    with memdir.open(tmp_path / "memory", create=True) as md:
        md.write("feedback/flock.md", "Take the flock before the journal: 잠금 순서.\n", type="feedback",
                 description="lock order of the flock")
        md.write("project/flock.md", "# Flock\nThe lock order of the flock: the file lock, then SQLite.\n",
                 type="project", description="the flock and its lock order")
    return tmp_path / "memory"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A resident of this test's own (a private runtime folder), stopped at the end."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    values = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "MEMDIR_RESIDENT": "600"}
    yield values
    for pid_file in runtime.glob("memdir/*.pid"):
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def started(env: dict[str, str], memory: Path) -> Path:
    """Start the resident (a command that finds none starts one) and wait until it listens."""
    command(env, "--root", str(memory), "hook", "claude-code", stdin=json.dumps(PROMPT))
    folder = Path(env["XDG_RUNTIME_DIR"]) / "memdir"
    wait_for(lambda: list(folder.glob("*.sock")), "the resident's socket")
    return next(folder.glob("*.sock"))


def test_hooks_in_the_resident_answer_as_in_their_own_process(env: dict[str, str], memory: Path) -> None:
    started(env, memory)
    alone = {**env, "MEMDIR_RESIDENT": "off"}
    for event in (START, PROMPT, {**START, "session_id": "s-2"}):
        served = command(env, "--root", str(memory), "hook", "claude-code", stdin=json.dumps(event), importtime=True)
        own = command(alone, "--root", str(memory), "hook", "claude-code",
                      stdin=json.dumps({**event, "session_id": event["session_id"] + "-own"}))
        assert served.returncode == own.returncode == 0, served.stderr[-2000:]
        assert same(served.stdout) == same(own.stdout) and "잠금 순서" in served.stdout
        imported = re.findall(r"\| +(memdir\S*)", served.stderr)  # what the command's own process imported
        assert "memdir.faces.resident" in imported and "memdir.core.memdir" not in imported, imported


def test_a_resumed_session_in_the_resident_adds_nothing_twice(env: dict[str, str], memory: Path) -> None:
    """What a session was shown is kept in the cache folder the command's own environment names."""
    started(env, memory)
    cache = memory.parent / "cache"
    first = command({**env, "MEMDIR_CACHE": str(cache)}, "--root", str(memory), "hook", "claude-code",
                    stdin=json.dumps(START))
    resumed = command({**env, "MEMDIR_CACHE": str(cache)}, "--root", str(memory), "hook", "claude-code",
                      stdin=json.dumps({**START, "source": "resume"}))
    assert "Take the flock" in first.stdout and resumed.stdout == ""
    assert list(cache.rglob("*.json"))


def test_a_refusal_keeps_its_exit_code_and_its_line_on_stderr(env: dict[str, str], memory: Path, tmp_path: Path) -> None:
    started(env, memory)
    done = command({k: v for k, v in env.items() if k not in ("MEMDIR_ROOT", "MEMDIR_URL")}, "hook", "claude-code",
                   stdin=json.dumps(START))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("memdir hook: SessionStart failed: no memory named")


def test_serve_over_the_resident_answers_and_stops_on_sigint(env: dict[str, str], memory: Path) -> None:
    """Claude Code's first request, a tool call, then SIGINT (how it stops a server): the server's end is seen."""
    started(env, memory)
    server = subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(memory), "serve"], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    for i, (method, params) in enumerate((("server/discover", {}), ("tools/call", {
            "name": "read_memory_file", "arguments": {"path": "project/flock.md"}}))):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                        "params": {**params, "_meta": meta}}) + "\n").encode())
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        assert answer["id"] == i and "result" in answer, answer
    assert "the file lock, then SQLite" in json.dumps(answer)
    server.send_signal(signal.SIGINT)
    assert server.wait(60) != 0
    assert server.stdout.read() == b""  # every writer of the pipe is gone: the child stopped too


def test_a_resident_whose_memdir_changed_refuses_and_exits(env: dict[str, str], memory: Path, tmp_path: Path) -> None:
    """An upgrade (here a copy of the package, then one of its files edited) is never served by the old code."""
    copy = tmp_path / "src"
    shutil.copytree(SRC, copy / "memdir", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**env, "PYTHONPATH": str(copy)}
    socket_path = started(env, memory)
    pid = int(socket_path.with_suffix(".pid").read_text())
    (copy / "memdir" / "version.py").write_text((copy / "memdir" / "version.py").read_text() + "\n# edited\n")
    done = command(env, "--root", str(memory), "hook", "claude-code", stdin=json.dumps(START))
    assert done.returncode == 0 and "Take the flock" in done.stdout  # run in its own process
    wait_for(lambda: not _alive(pid), "the old resident's exit")


def test_a_resident_exits_when_idle(env: dict[str, str], memory: Path) -> None:
    socket_path = started({**env, "MEMDIR_RESIDENT": "1"}, memory)
    wait_for(lambda: not socket_path.exists(), "the idle resident's exit")


def test_the_resident_is_keyed_by_what_its_modules_read_at_import() -> None:
    """A variable read when a module is imported stays as the resident's first command had it: so it names the
    resident (`IMPORTED`), and a command with another value gets a resident of its own."""
    loaded = subprocess.run([sys.executable, "-c", "import sys, memdir.faces.cli.resident, memdir.faces.mcp; "
                             "print(' '.join(m for m in sys.modules if m.startswith('memdir')))"],
                            capture_output=True, text=True, check=True).stdout.split()
    read = set()
    for name in loaded:
        path = SRC.joinpath(*name.split(".")[1:])
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.parse(path.read_text()).body:  # module level only: a function reads its caller's value
            for sub in ast.walk(node):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.startswith("MEMDIR_") \
                        and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and "environ" in ast.unparse(node):
                    read.add(sub.value)
    assert read <= set(resident.IMPORTED), read - set(resident.IMPORTED)


def test_only_hooks_and_a_plain_stdio_server_are_served() -> None:
    assert resident.served(["--root", "/m", "hook", "claude-code"])
    assert resident.served(["hook", "claude-code", "--no-index", "--root=/m"])
    assert resident.served(["--root=/m", "--tenant", "t", "serve"])
    assert not resident.served(["--root", "/m", "serve", "--http", "8765"])
    assert not resident.served(["hook", "install"])
    assert not resident.served(["--root", "/m", "search", "flock"])


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode(errors="replace")
    except OSError:  # a process that ended meanwhile
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads the processes from /proc (Linux)")
def test_a_server_uses_a_resident_but_never_starts_one(env: dict[str, str], memory: Path) -> None:
    """An MCP client's server (an SDK script, a test) leaves no process behind; a hook starts the resident."""
    done = subprocess.run([sys.executable, "-m", "memdir", "--root", str(memory), "serve"], env=env, timeout=120,
                          input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n", capture_output=True,
                          text=True)
    assert '"id":1' in done.stdout.replace(" ", "")
    where = str(Path(env["XDG_RUNTIME_DIR"]) / "memdir")
    assert [p for p in Path("/proc").glob("[0-9]*/cmdline") if where in _read(p)] == []
    assert not list(Path(where).glob("*.sock"))
