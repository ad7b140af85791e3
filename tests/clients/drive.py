"""Running a real client headless against the stand-in: its environment, its config, its answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEMDIR = [sys.executable, "-m", "memdir"]  # this checkout's memdir, as a client would start it


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.startswith("{")]

    def session(self) -> str:
        return next(str(e["session_id"]) for e in self.events() if e.get("session_id"))


def claude_env(home: Path, api: str) -> dict[str, str]:
    """Claude Code offline: the stand-in's URL and a key, its own config folder, no updater or telemetry, every
    tool offered up front (no ToolSearch round first), and the MCP servers connected before the first request
    (headless, Claude Code waits 5 s for them, then goes on: on a loaded machine a cold server missed the turn)."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "ANTHROPIC_", "CLAUDE"))}
    return {**keep, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "ANTHROPIC_BASE_URL": api,
            "ANTHROPIC_API_KEY": "sk-ant-stand-in", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ENABLE_TOOL_SEARCH": "false",
            "MCP_CONNECTION_NONBLOCKING": "false", "MCP_CONNECT_TIMEOUT_MS": "60000",
            "MEMDIR_CACHE": str(home / "memdir-cache")}


def claude(binary: Path, home: Path, api: str, cwd: Path, prompt: str, *args: str, timeout: float = 180,
           extra_env: dict[str, str] | None = None) -> Run:
    done = subprocess.run([str(binary), "-p", prompt, "--output-format", "stream-json", "--verbose",
                           "--allowedTools", "mcp__memdir", *args],
                          cwd=cwd, env={**claude_env(home, api), **(extra_env or {})}, capture_output=True, text=True,
                          timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return Run(done.returncode, done.stdout, done.stderr)


def stream(binary: Path, home: Path, api: str, cwd: Path, prompts: list[str], *args: str, timeout: float = 300) -> Run:
    """Several prompts in one headless process (`--input-format stream-json`), slash commands among them."""
    lines = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": p}}) + "\n" for p in prompts)
    done = subprocess.run([str(binary), "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                           "--verbose", "--allowedTools", "mcp__memdir", *args], input=lines, cwd=cwd,
                          env=claude_env(home, api), capture_output=True, text=True, timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr)


def mcp_config(path: Path, root: Path) -> Path:
    path.write_text(json.dumps({"mcpServers": {"memdir": {"command": MEMDIR[0], "args": [*MEMDIR[1:], "--root",
                                                                                       str(root), "serve"]}}}))
    return path


def codex(binary: Path, home: Path, api: str, cwd: Path, root: Path, prompt: str, timeout: float = 180) -> Run:
    """`codex exec` with the stand-in as its model provider and memdir as an MCP server (docs/clients.md's config).
    Codex starts a server with a few variables of its own only: the run's resident folder is passed on."""
    home.mkdir(parents=True, exist_ok=True)
    args = ", ".join(json.dumps(a) for a in [*MEMDIR[1:], "--root", str(root), "serve"])
    (home / "config.toml").write_text(f'''model = "stand-in"
model_provider = "standin"

[model_providers.standin]
name = "stand-in"
base_url = "{api}/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"

[mcp_servers.memdir]
command = {json.dumps(MEMDIR[0])}
args = [{args}]
required = true
default_tools_approval_mode = "approve"
env = {{ XDG_RUNTIME_DIR = {json.dumps(os.environ.get("XDG_RUNTIME_DIR", ""))} }}
''')
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "OPENAI_", "CODEX_"))}
    env = {**keep, "HOME": str(home), "CODEX_HOME": str(home), "OPENAI_API_KEY": "sk-stand-in"}
    done = subprocess.run([str(binary), "exec", "--skip-git-repo-check", "--trust", "--json", prompt], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Run(done.returncode, done.stdout, done.stderr)


def gemini(binary: Path, home: Path, api: str, cwd: Path, root: Path, prompt: str, timeout: float = 180) -> Run:
    """`gemini -p` with the stand-in as its Gemini API (GOOGLE_GEMINI_BASE_URL, an API key) and memdir as a trusted
    MCP server (docs/agents.md's settings). A model named, not "auto": its router would ask a classifier model first."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": {"memdir": {"command": MEMDIR[0], "args": [*MEMDIR[1:], "--root", str(root), "serve"],
                                  "trust": True, "env": {"XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "")}}}}))
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "GEMINI", "GOOGLE"))}
    env = {**keep, "HOME": str(home), "GEMINI_CLI_HOME": str(home), "GEMINI_API_KEY": "stand-in",
           "GOOGLE_GEMINI_BASE_URL": api}
    done = subprocess.run([str(binary), "-p", prompt, "--output-format", "stream-json", "--skip-trust",
                           "-m", "gemini-2.5-flash"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    return Run(done.returncode, done.stdout, done.stderr)
