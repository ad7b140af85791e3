"""The capture, diary, upkeep and time commands: exit codes a script can use, JSON where it wants it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.faces.cli import main

DATA = Path(__file__).parent.parent / "data"
TEXT = "User: Tune the cache. I prefer short TTLs.\nAssistant: The warmup failed.\nUser: We still need to check eviction.\n"

Run = Callable[..., str]


@pytest.fixture
def cli(root: Path) -> Run:
    runner = CliRunner()

    def run(*args: str, input: str | None = None, code: int = 0) -> str:
        result = runner.invoke(main, ["--root", str(root), *args], input=input)
        assert result.exit_code == code, (result.output, result.exception)
        return result.stdout

    return run


def test_capture_sessions_rollup_stats(cli: Run) -> None:
    assert cli("capture", "s-1", str(DATA / "claude-code" / "session.jsonl")) == "created sessions/2026-11-30-090300-s-1.md\n"
    got = json.loads(cli("capture", "s-2", "-", "--at", "2026-11-30T10:00:00Z", "--json", input=TEXT))
    assert got == {"session": "s-2", "status": "captured", "path": "sessions/2026-11-30-100000-s-2.md",
                   "change": "created", "reason": ""}
    listed = json.loads(cli("sessions", "--open", "--json"))
    assert [(s["session"], s["open"]) for s in listed] == [
        ("s-2", ["They still need to check eviction."]),
        ("s-1", ["They still need to check the CI config tomorrow (2026-12-01)."])]
    plan = json.loads(cli("rollup", "--due", "--dry-run", "--now", "2026-12-01T04:00:00Z", "--json"))
    assert [(s["path"], s["status"]) for s in plan["steps"]] == [("diary/2026-11-30.md", "planned")]
    out = cli("rollup", "--due", "--now", "2026-12-01T04:00:00Z")
    assert out == "done\tday\tdiary/2026-11-30.md (folds 2)\n"
    assert cli("rollup", "--due", "--now", "2026-12-01T05:00:00Z") == "nothing to roll up\n"
    stats = json.loads(cli("stats", "--json"))
    assert stats["capture"]["ok"] is True and stats["files"] == 3


def test_skipped_capture_exits_1_and_shows_in_stats(cli: Run) -> None:
    out = cli("capture", "s-3", "/nonexistent.jsonl", code=1)
    assert out.startswith("skipped: sessions/") and out.endswith("-s-3.md (missing)\n")
    text = cli("stats", code=1)
    assert "captured: 0, pending: 0, skipped: 1" in text and "\tmissing" in text


def test_rollup_usage_errors_are_one_line(cli: Run, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--root", str(tmp_path / "x"), "rollup"])
    assert result.exit_code == 1 and result.stderr.startswith("error: say what to roll up")
    assert not (tmp_path / "x").exists()  # refused before any memory is made


def test_all_tenants(cli: Run, root: Path) -> None:
    for tenant in ("acme", "globex"):
        CliRunner().invoke(main, ["--root", str(root), "--tenant", tenant, "capture", "s", "-", "--at",
                                  "2026-11-30T09:00:00Z"], input=TEXT)
    got = json.loads(cli("rollup", "--due", "--all-tenants", "--now", "2026-12-01T04:00:00Z", "--json"))
    assert [(r["tenant"], [s["path"] for s in r["steps"]]) for r in got] == [
        ("acme", ["diary/2026-11-30.md"]), ("globex", ["diary/2026-11-30.md"])]


def test_feedback_supersede_read_as_of_log_since_and_history_search(cli: Run) -> None:
    out = cli("feedback", "Never use dark themes", "--why", "unreadable", "--how", "all UI")
    assert out == "created feedback/never-use-dark-themes.md\n"
    cli("write", "project/launch.md", "--body", "Launch in March.")
    cli("write", "project/launch.md", "--body", "Launch in May.")
    assert cli("supersede", "project/launch.md", "--reason", "cancelled") == "superseded project/launch.md -> archive/project/launch.md\n"
    assert cli("read", "project/launch.md", "--as-of", "1d", code=1) == ""
    log = json.loads(cli("log", "--since", "1h", "--json"))
    assert [(r["op"], r["path"]) for r in log][:2] == [("rename", "project/launch.md"), ("write", "project/launch.md")]
    assert [r["path"] for r in json.loads(cli("log", "project/", "--json"))] == ["project/launch.md"] * 3
    hits = json.loads(cli("search", "--history", "march", "--json"))
    assert [(h["path"], h["kind"]) for h in hits] == [("project/launch.md", "earlier")]
    kept = cli("write", "a.md", "--body", "Call back tomorrow.", "--keep-dates")
    assert kept.startswith("created a.md") and cli("read", "a.md").endswith("Call back tomorrow.\n")


def test_consolidate_and_check(cli: Run, tmp_path: Path) -> None:
    cli("write", "user/a.md", "-t", "user", "-d", "coffee", "--body", "Oat milk flat white every single morning.")
    cli("write", "user/b.md", "-t", "user", "-d", "coffee", "--body", "Oat milk flat white every single morning!")
    assert cli("consolidate").startswith("proposed\tmerge\tuser/a.md, user/b.md\t")
    done = json.loads(cli("consolidate", "--apply", "--json"))
    assert [a["status"] for a in done["actions"]] == ["done"]
    assert cli("consolidate") == "nothing to consolidate\n"
    code = tmp_path / "code"
    code.mkdir()
    cli("write", "project/x.md", "--body", "See `gone.py`.")
    assert cli("check", "--code", str(code), code=1) == f"project/x.md\tmissing-file\t`gone.py` is not in {code}\n"
    (code / "gone.py").write_text("")
    assert cli("check", "--code", str(code)) == "nothing stale\n"


def test_every_new_command_explains_itself() -> None:
    for command in ("capture", "sessions", "rollup", "consolidate", "check", "stats", "feedback", "supersede"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0 and len(result.output) > 200, command
    result = CliRunner().invoke(main, ["hook", "claude-code", "--help"])
    assert '"SessionEnd"' in result.output and '"PreCompact"' in result.output
