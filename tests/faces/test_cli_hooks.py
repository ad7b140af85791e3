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
    assert {k: v for k, v in after.items() if k != "hooks"} == {"permissions": THEIRS["permissions"], "model": "opus",
                                                                "autoMemoryEnabled": False}  # one memory: memdir's
    assert list(after) == [*THEIRS, "autoMemoryEnabled"] and path.read_text().startswith('{\n    "permissions"')  # order, indent kept
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


def test_a_planted_backup_symlink_is_replaced_not_followed(tmp_path: Path) -> None:
    """Issue 32, item 5: a repository can plant .claude/settings.json.bak -> ~/.claude/settings.json."""
    victim = tmp_path / "home-settings.json"
    victim.write_text('{"theirs": true}\n')
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus"}\n')
    (tmp_path / ".claude" / "settings.json.bak").symlink_to(victim)
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == '{"theirs": true}\n'  # untouched
    backup = tmp_path / ".claude" / "settings.json.bak"
    assert not backup.is_symlink() and backup.read_text() == '{"model": "opus"}\n'


def test_a_symlinked_settings_file_is_written_through(tmp_path: Path) -> None:
    """Issue 32, item 21: settings kept in a dotfiles repository stay a link; the file it points to changes."""
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    os.chmod(real, 0o640)
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.symlink_to(real)
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    assert path.is_symlink() and path.resolve() == real.resolve()
    assert "hook claude-code" in real.read_text() and json.loads(real.read_text())["model"] == "opus"
    assert (real.stat().st_mode & 0o777) == 0o640
    assert (tmp_path / ".claude" / "settings.json.bak").read_text() == '{"model": "opus"}\n'


def test_each_hook_has_a_timeout_and_capture_gets_a_minute(tmp_path: Path) -> None:
    """Claude Code's default for SessionEnd is 1.5 s: capture would be cut off."""
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    timeouts = {e: [h.get("timeout") for g in groups for h in g["hooks"]] for e, groups in settings["hooks"].items()}
    assert timeouts == {"SessionStart": [10], "UserPromptSubmit": [10], "Stop": [10], "SessionEnd": [60], "PreCompact": [60]}


def test_one_memory_shared_with_claude_codes_auto_memory(tmp_path: Path) -> None:
    done = install(tmp_path, "--claude-memory", "shared")
    assert done.returncode == 0, done.stderr
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["autoMemoryDirectory"] == str(tmp_path / "memory") and "autoMemoryEnabled" not in settings
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert start.endswith("hook claude-code --no-index")  # Claude Code shows that MEMORY.md itself
    back = install(tmp_path, "--claude-memory", "off")
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert back.returncode == 0 and settings["autoMemoryEnabled"] is False
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].endswith("hook claude-code")
    url = install(tmp_path, "--claude-memory", "shared", root="postgresql://app@db.example/memdir")
    assert url.returncode == 1 and "needs a memory folder" in url.stderr


def test_a_password_in_the_query_is_not_written_into_settings(tmp_path: Path) -> None:
    """Issue 32, item 4: PostgreSQL takes `?password=` (and `sslpassword=`) too. Refused, not written masked: a
    masked URL would install hooks that fail to log in at every event."""
    for query in ("sslmode=require&password=s3cret", "sslpassword=s3cret&sslmode=require"):
        done = install(tmp_path, root=f"postgresql://app@db.example/memdir?{query}")
        assert done.returncode == 1 and "s3cret" not in done.stderr and "password" in done.stderr
        assert "postgresql://app@db.example/memdir?" in done.stderr and "=***" in done.stderr  # which part, masked
        assert not (tmp_path / ".claude").exists()
