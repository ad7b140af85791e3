"""The commands of the README and the docs run as written and print what they show."""

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tomllib
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from services import need

README = Path(__file__).resolve().parent.parent / "README.md"
DOCS = README.parent / "docs"
PAGES = [README, *(DOCS / f"{name}.md" for name in ("commands", "remembering", "agents", "backends", "web", "internals",
                                                     "forgetting"))]  # as read


def pages_text() -> str:
    """The README and the docs, in the order a reader (and the tour's state) goes through them."""
    assert sorted(DOCS.glob("*.md")) == sorted(PAGES[1:]), "a docs page this test does not read"
    return "\n".join(page.read_text() for page in PAGES)
BLOCK = re.compile(r"```(console|python|sh)\n(.*?)```", re.S)
VARIABLE = [(re.compile(r"\b[0-9a-f]{16}\b"), "VERSION"), (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "TIME")]


def normal(text: str) -> str:
    for rx, name in VARIABLE:
        text = rx.sub(name, text)
    return text


def console_steps() -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for kind, body in BLOCK.findall(pages_text()):
        if kind != "console":
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def test_first_screen_gives_the_two_commands() -> None:
    head = "\n".join(README.read_text().splitlines()[:20])
    assert "make run" in head and "make test" in head
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make test" in ci


def test_tour_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "MEMDIR_ACTOR": "cli:alice",
           "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",  # `memdir sync`: no machine config
           "GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@example.org",
           "GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": "alice@example.org"}
    env.pop("MEMDIR_ROOT", None)
    steps = console_steps()
    assert len(steps) >= 8
    for command, expected in steps:
        if command.startswith(". .venv/bin/activate"):
            continue  # the test already runs with the venv on PATH
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        shown = "\n".join(expected)
        actual = proc.stdout.replace(str(tmp_path), "/home/you")  # the README shows a home folder
        failed = shown.startswith("error:") or shown == "no matches"  # exit 1, as the README's exit codes say
        assert proc.returncode == (1 if failed else 0), (command, actual)
        assert normal(actual).rstrip("\n") == normal(shown), command


def test_python_examples_run(tmp_path: Path) -> None:
    code = [body for kind, body in BLOCK.findall(README.read_text()) if kind == "python"]
    assert len(code) == 2
    setup = "import memdir\nmemdir.open('memory').write('project/flock.md', 'Launch date: 2026-12-15.')\n"
    for example in [setup + code[0], *code[1:]]:
        proc = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    assert "Beta users: 40." in (tmp_path / "memory" / "project" / "flock.md").read_text()
    assert (tmp_path / "memory" / "project" / "b.md").read_text().endswith("B.\n")


# ---------------------------------------------------------------- the `sh` blocks: servers, clients, configs
# Every line of every `sh` block is run here, or checked as far as this machine allows (the comment on each
# kind says how); a line of a kind this test does not know fails it, so a new README line cannot go untested.

TOKEN = "readme-token-0123456789abcdef"


def sh_lines() -> list[str]:
    out = []
    for kind, body in BLOCK.findall(pages_text()):
        if kind == "sh":
            out += [line for line in body.splitlines() if line.strip() and not line.startswith("#")]
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def placed(line: str, tmp: Path, port: int) -> str:
    """A README line with its placeholders made real: the memory, the port, the token."""
    return (line.replace("/path/to/memory", str(tmp / "memory")).replace("$PWD", str(tmp))
            .replace("~/memory", str(tmp / "memory")).replace(":8765", f":{port}").replace("$MEMDIR_TOKEN", TOKEN))


@contextmanager
def serving(tmp: Path, argv: list[str], env: dict[str, str]) -> Iterator[None]:
    proc = subprocess.Popen(argv, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        for _ in range(20):  # the banner, after the notes that come before it
            line = proc.stdout.readline()
            if "serving" in line or not line:
                break
        assert "serving" in line and "MCP at http://127.0.0.1:" in line, line
        yield
    finally:
        proc.terminate()
        proc.wait(10)


def mcp_initialize(url: str, headers: dict[str, str]) -> dict[str, object]:
    """What an MCP client sends first over streamable HTTP; the server's answer."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "readme-test", "version": "1"}}})
    request = urllib.request.Request(url, body.encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    with urllib.request.urlopen(request, timeout=30) as reply:
        text = reply.read().decode()
    data = text.split("data: ", 1)[1] if text.startswith("event:") else text
    answer: dict[str, object] = json.loads(data)
    return answer


def test_every_sh_line_runs_or_is_checked(tmp_path: Path) -> None:
    mcp = need("mcp")
    import anyio

    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", MEMDIR_ACTOR="cli:alice")
    subprocess.run([bin_dir / "memdir", "--root", str(tmp_path / "memory"), "write", "project/flock.md",
                    "--type", "project", "--body", "Launch date: 2026-12-15."], env=env, check=True, capture_output=True)
    extras = set(tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    port = free_port()
    server: list[str] | None = None  # the `memdir serve --http` line the next lines talk to
    for raw in sh_lines():
        line = placed(raw, tmp_path, port)
        argv = shlex.split(line.split("  #")[0])
        if argv[:2] in (["make", "run"], ["make", "test"]):
            continue  # the first screen's commands: test_first_screen_gives_the_two_commands, and CI runs make test
        if argv[:2] == ["pip", "install"]:  # installing is CI's job: check the extras it names exist
            named = argv[2].split("[", 1)[1].rstrip("]").split(",")
            assert set(named) <= extras and argv[2].startswith("/path/to/memdir"), line
            continue
        if argv[:3] == ["memdir", "serve", "--http"]:
            server = [*argv[:3], str(port) if argv[3] == "8765" else argv[3], *argv[4:]]
            continue
        if argv[:4] == ["claude", "mcp", "add", "--transport"] and argv[4] == "stdio":
            command = argv[argv.index("--") + 1:]  # what Claude Code would start: it must be an MCP server

            async def tools_over_stdio(command: list[str]) -> int:
                params = mcp.StdioServerParameters(command=str(bin_dir / command[0]), args=command[1:], env=env)
                async with mcp.Client(params) as client:
                    return len((await client.list_tools()).tools)

            assert anyio.run(tools_over_stdio, command) >= 12, line
            continue
        if argv[:4] == ["claude", "mcp", "add", "--transport"] and argv[4] == "http":
            url = argv[6]
            headers = dict([argv[argv.index("--header") + 1].split(": ", 1)]) if "--header" in argv else {}
            serve = server or ["memdir", "serve", "--http", str(port)]
            extra = ["--token", TOKEN] if headers else []
            with serving(tmp_path, [str(bin_dir / "memdir"), "--root", str(tmp_path / "memory"), *serve[1:], *extra], env):
                answer = mcp_initialize(url, headers)
            assert answer.get("result", {}).get("serverInfo", {}).get("name") == "memdir", (line, answer)  # type: ignore[union-attr]
            continue
        if argv[0] == "curl":
            assert server is not None, "a curl line needs the `memdir serve --http` line before it"
            with serving(tmp_path, [str(bin_dir / "memdir"), "--root", str(tmp_path / "memory"), *server[1:]], env):
                done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            assert done.returncode == 0 and done.stdout.startswith("# Memory Index"), (line, done.stdout, done.stderr)
            continue
        if argv[0] == "memdir":
            done = subprocess.run(line, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (line, done.stdout, done.stderr)
            continue
        raise AssertionError(f"the README's sh line {raw!r} is of a kind this test does not run; teach it")


# ---------------------------------------------------------------- the `json` and `toml` blocks: configs people paste

CONFIG = re.compile(r"```(json|toml)\n(.*?)```", re.S)


def test_every_config_block_parses_and_what_it_starts_works(tmp_path: Path) -> None:
    """Client configs start a working MCP server, hook configs a working hook; auth and settings files load."""
    mcp = need("mcp")
    import anyio

    from memdir.faces.auth import Principal, Principals
    from memdir.search.semantic import Settings

    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", MEMDIR_ACTOR="cli:alice")

    def command_of(command: str, args: list[str]) -> list[str]:
        assert Path(command).name == "memdir", command
        return [str(bin_dir / "memdir"), *[placed(a, tmp_path, 0) for a in args]]

    async def tool_count(argv: list[str]) -> int:
        params = mcp.StdioServerParameters(command=argv[0], args=argv[1:], env=env)
        async with mcp.Client(params) as client:
            return len((await client.list_tools()).tools)

    subprocess.run([bin_dir / "memdir", "--root", str(tmp_path / "memory"), "write", "project/flock.md",
                    "--type", "project", "--body", "Launch date: 2026-12-15."], env=env, check=True, capture_output=True)
    seen = set()
    for kind, body in CONFIG.findall(pages_text()):
        data = json.loads(body) if kind == "json" else tomllib.loads(body)
        servers = data.get("mcpServers") or data.get("mcp_servers") or {}
        for server in servers.values():
            assert anyio.run(tool_count, command_of(server["command"], server["args"])) >= 12, body
            seen.add("server")
        for event, entries in data.get("hooks", {}).items():
            for entry in entries:
                for hook in entry["hooks"]:
                    argv = shlex.split(placed(hook["command"], tmp_path, 0))
                    payload = json.dumps({"hook_event_name": event, "session_id": "s1", "cwd": str(tmp_path),
                                          "prompt": "when does flock launch", "transcript_path": ""})
                    done = subprocess.run(command_of(argv[0], argv[1:]), input=payload, env=env,
                                          capture_output=True, text=True, timeout=120)
                    assert done.returncode == 0, (event, done.stdout, done.stderr)
                    if event == "SessionStart":  # the index, into the session's context
                        answer = json.loads(done.stdout)["hookSpecificOutput"]
                        assert answer["hookEventName"] == event and "project/flock.md" in answer["additionalContext"]
                    seen.add("hook")
        if "tokens" in data:
            auth = tmp_path / "auth.toml"
            auth.write_text(body)
            principals = Principals(Principal("default"))
            principals.load(auth)
            assert principals.required
            seen.add("auth")
        if "semantic" in data:
            assert Settings.of(data["semantic"], "README").private == ("people/",)
            seen.add("settings")
    assert seen == {"server", "hook", "auth", "settings"}, seen
