"""The Claude Code plugin this repository ships: validated, added as a marketplace from a clean copy of the
checkout, installed, and run by the real Claude Code CLI with its MCP server and hooks (issue 35, item 1)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from binaries import claude_bin  # noqa: F401 (a fixture; F811 is off here for its parameters)
from drive import claude, claude_env
from standin import Call, Request, StandIn, Text

import memdir

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository as a fresh clone has it: the files git knows (committed or not), nothing ignored."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    out = tmp_path_factory.mktemp("clone") / "memdir"
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, out / name)
    return out


def cli(binary: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**claude_env(home, "http://127.0.0.1:9"), "MEMDIR_PLUGIN_PYTHON": sys.executable}
    return subprocess.run([str(binary), *args], env=env, capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)


def test_the_plugin_validates(claude_bin: Path, checkout: Path, tmp_path: Path) -> None:
    done = cli(claude_bin, tmp_path / "home", "plugin", "validate", str(checkout))
    assert done.returncode == 0 and "Validation passed" in done.stdout + done.stderr, done.stdout + done.stderr


def test_the_plugin_installs_from_the_checkout_and_runs(claude_bin: Path, checkout: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = cli(claude_bin, home, "plugin", "marketplace", "add", str(checkout))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = cli(claude_bin, home, "plugin", "install", "memdir@memdir")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    memory = home / ".claude" / "memdir"  # the plugin's default memory folder

    def script(r: Request) -> list[Text | Call]:
        if not r.tool_results():
            return [Call("remember_feedback", {"rule": "Answer in Korean when asked in Korean",
                                               "why": "한국어로 물어보면 한국어로 답해 주세요", "how_to_apply": "every reply"})]
        return [Text("saved")]

    (tmp_path / "work").mkdir()
    with StandIn(script) as api:
        env_python = {"MEMDIR_PLUGIN_PYTHON": sys.executable}
        run = claude(claude_bin, home, api.url, tmp_path / "work", "remember: answer in Korean when asked in Korean",
                     "--allowedTools", "mcp__plugin_memdir_memdir", extra_env=env_python)
        tools = api.main()[0].tools
        result = api.main()[-1].tool_results()
    assert run.code == 0, run.stderr
    assert "mcp__plugin_memdir_memdir__remember_feedback" in tools
    assert result and "undo_memory_change" in result[0]
    with memdir.open(memory) as md:
        assert [e.path for e in md.list("feedback")] and [e.path for e in md.list("sessions")]  # saved; captured
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["autoMemoryEnabled"] is False  # one memory: the plugin's default
