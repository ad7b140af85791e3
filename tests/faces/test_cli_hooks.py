"""`memdir hook install`: Claude Code's settings get memdir's hooks with full paths; nothing else in them changes."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.recall import hooks

BIN = Path(sys.executable).parent / "memdir"
THEIRS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "ruff check --fix"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "memdir --root ~/memory hook claude-code"}]}],
    },
    "model": "opus",
}


def install(cwd: Path, *args: str, root: str = "memory") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    return subprocess.run([str(BIN), "--root", root, "hook", "install", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=60)


def commands(settings: dict[str, object]) -> dict[str, list[str]]:
    got: dict[str, list[str]] = {}
    for event, groups in settings["hooks"].items():  # type: ignore[attr-defined]
        got[event] = [h["command"] for g in groups for h in g["hooks"]]
    return got


def test_install_merges_into_the_settings_with_full_paths_and_keeps_a_backup(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    before = json.dumps(THEIRS, indent=4) + "\n"
    path.write_text(before)
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"updated .claude/settings.json (the file as it was: {Path('.claude/settings.json.bak')})\n"
    assert (tmp_path / ".claude" / "settings.json.bak").read_text() == before
    after = json.loads(path.read_text())
    ours = shlex.join([str(BIN.absolute()), "--root", str(tmp_path / "memory"), "hook", "claude-code"])
    assert commands(after) == {"PostToolUse": ["ruff check --fix"], "SessionStart": [ours],  # updated, not doubled
                               **{e: [ours] for e in ("UserPromptSubmit", "SessionEnd", "PreCompact", "Stop")}}
    assert {k: v for k, v in after.items() if k != "hooks"} == {"permissions": THEIRS["permissions"], "model": "opus"}
    assert list(after) == list(THEIRS) and path.read_text().startswith('{\n    "permissions"')  # order, indent kept
    again = install(tmp_path)
    assert (again.returncode, again.stdout) == (0, "unchanged .claude/settings.json\n")
    hook = subprocess.run(shlex.split(ours), input='{"hook_event_name": "SessionStart", "source": "startup"}',
                          capture_output=True, text=True, cwd=tmp_path / ".claude", timeout=60)
    # run in another folder, as Claude Code runs it, it names the memory by its full path
    assert (hook.returncode, hook.stderr) == (0, f"memdir: created a new memory at {tmp_path / 'memory'}\n")
    assert not (tmp_path / ".claude" / "memory").exists()


def test_a_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    done = install(tmp_path, "--dry-run", "--settings", "cfg/settings.json", root="/srv/team memory")
    assert done.returncode == 0, done.stderr
    assert "+++ cfg/settings.json (with memdir's hooks)" in done.stdout
    assert "--root '/srv/team memory' hook claude-code" in done.stdout
    assert not (tmp_path / "cfg").exists()


@pytest.mark.parametrize(("text", "words"), [("{not json", "not valid JSON (line 1"), ("[]", "not an object"),
                                             ('{"hooks": []}', '"hooks" is not an object')])
def test_a_settings_file_it_cannot_read_as_settings_is_left_as_it_was(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    done = install(tmp_path)
    assert done.returncode == 1 and words in done.stderr and "nothing was written" in done.stderr
    assert path.read_text() == text and not (tmp_path / ".claude" / "settings.json.bak").exists()


def test_a_url_with_a_password_is_not_written_into_settings(tmp_path: Path) -> None:
    done = install(tmp_path, root="postgresql://app:s3cret@db.example/memdir")
    assert done.returncode == 1 and "password" in done.stderr and "s3cret" not in done.stderr
    assert not (tmp_path / ".claude").exists()
    url = install(tmp_path, "--dry-run", root="postgresql://app@db.example/memdir")
    assert "--root postgresql://app@db.example/memdir hook claude-code" in url.stdout


def test_install_adds_every_event_the_hook_handles() -> None:
    text = hooks.install(None, "memdir --root /m hook claude-code")
    assert set(json.loads(text)["hooks"]) == set(hooks.CLAUDE_CODE) | set(hooks.WITHOUT_MEMORY)
