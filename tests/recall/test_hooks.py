"""`memdir hook claude-code` with recorded payloads of each event, in a fresh process as Claude Code runs it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakeapi import Refusing

import memdir
from memdir.recall import hooks

DATA = Path(__file__).parent.parent / "data" / "claude-code"
SESSION = "2f1c9a7e-5b1d-4c33-9d8e-0a6f3b2e8c41"


def payload(name: str, transcript: Path | str) -> str:
    return (DATA / name).read_text().replace("TRANSCRIPT", str(transcript))


def hook(root: Path | None, stdin: str, env: dict[str, str] | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    where = [] if root is None else ["--root", str(root)]
    return subprocess.run([sys.executable, "-m", "memdir", *where, "hook", "claude-code"], input=stdin,
                          capture_output=True, text=True, env={**clean, **(env or {})}, cwd=cwd, timeout=60)


def test_session_end_captures_the_transcript(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    memdir.open(root).close()
    done = hook(root, payload("session-end.json", DATA / "session.jsonl"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    with memdir.open(root) as md:
        [entry] = md.list("sessions/")
        assert entry.path == f"sessions/2026-11-30-090300-{SESSION}.md"
        m = md.read(entry.path)
        assert (m.meta["status"], m.meta["event"], m.meta["session"]) == ("captured", "SessionEnd", SESSION)
        assert md.history()[0].actor == "hook:claude-code"


def test_pre_compact_then_session_end_keep_one_record(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    transcript = tmp_path / "t.jsonl"
    lines = (DATA / "session.jsonl").read_text().splitlines()
    transcript.write_text("\n".join(lines[:5]) + "\n")  # the session so far
    assert hook(root, payload("pre-compact.json", transcript)).returncode == 0
    with memdir.open(root) as md:
        [first] = md.list("sessions/")
        assert md.read(first.path).meta["event"] == "PreCompact:auto"
    transcript.write_text("\n".join(lines) + "\n")  # the session went on after compaction
    assert hook(root, payload("session-end.json", transcript)).returncode == 0
    with memdir.open(root) as md:
        assert [e.path for e in md.list("sessions/")] == [first.path]  # replaced in place
        m = md.read(first.path)
        assert m.meta["event"] == "SessionEnd" and m.meta["open"] == ["They still need to check the CI config tomorrow (2026-12-01)."]


def test_a_missing_transcript_is_recorded_and_reported_without_blocking(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    done = hook(root, payload("session-end.json", tmp_path / "gone.jsonl"))
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"systemMessage": f"memdir: session {SESSION} not captured (missing); see `memdir stats`"}
    stats = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "stats", "--json"],
                           capture_output=True, text=True, timeout=60)
    assert stats.returncode == 1
    assert [s["reason"] for s in json.loads(stats.stdout)["capture"]["skipped"]] == ["missing"]


def test_unknown_events_and_bad_input_never_block(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    stop = hook(root, payload("stop.json", DATA / "session.jsonl"))
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, "", "")
    assert not root.exists()  # nothing to do: the memory is not even opened
    bad = hook(root, "{not json")
    assert bad.returncode == 1 and bad.stdout == "" and "not JSON" in bad.stderr
    assert hook(root, "[1, 2]").returncode == 1


def test_a_failing_handler_goes_to_stderr_with_exit_1(root: Path) -> None:
    def broken(md: memdir.Memdir, event: dict[str, Any]) -> dict[str, Any] | None:
        raise memdir.StoreError("the disk is full")

    out, err = io.StringIO(), io.StringIO()
    code = hooks.run(lambda: memdir.open(root), {"SessionEnd": broken}, io.StringIO('{"hook_event_name": "SessionEnd"}'), out, err)
    assert (code, out.getvalue(), err.getvalue()) == (1, "", "memdir hook: SessionEnd failed: the disk is full\n")


def test_the_table_is_open_for_more_events(root: Path) -> None:
    table = {**hooks.CLAUDE_CODE, "SessionStart": lambda md, e: {"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": md.index()}}}
    out = io.StringIO()
    assert hooks.run(lambda: memdir.open(root), table, io.StringIO('{"hook_event_name": "SessionStart"}'), out, io.StringIO()) == 0
    assert json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"].startswith("# Memory Index")


def test_a_2mb_transcript_becomes_a_short_record(tmp_path: Path) -> None:
    lines = (DATA / "session.jsonl").read_text().splitlines()[1:8]
    transcript = tmp_path / "big.jsonl"
    with transcript.open("w") as f:
        while f.tell() < 2_000_000:
            f.write("\n".join(lines) + "\n")
    done = hook(tmp_path / "memory", payload("session-end.json", transcript))
    assert done.returncode == 0, done.stderr  # how long it takes: bench/capture.py
    with memdir.open(tmp_path / "memory") as md:
        [entry] = md.list("sessions/")
        assert entry.size <= md.limits.max_bytes and md.read(entry.path).meta["turns"] > 1000


def test_recall_events_answer_with_context_in_a_fresh_process(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with memdir.open(root) as md:
        md.write("feedback/no-dark-themes.md", "Never propose dark themes.\n", type="feedback", description="no dark UI")
        md.write("project/flock.md", "Launch date: 2026-12-15.\n", type="project", description="Flock: route planner")
        for i in range(20):
            md.write(f"notes/n{i:02d}.md", f"Unrelated note {i} about gardening.\n")
    start = hook(root, (DATA / "session-start.json").read_text())
    assert start.returncode == 0, start.stderr
    out = json.loads(start.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "Never propose dark themes." in out["additionalContext"]
    asked = hook(root, (DATA / "user-prompt-submit.json").read_text())
    assert asked.returncode == 0, asked.stderr
    out = json.loads(asked.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit" and "Launch date: 2026-12-15." in out["additionalContext"]
    chat = hook(root, (DATA / "user-prompt-submit.json").read_text().replace(
        "When is the flock launch date?", "thanks!"))
    assert (chat.returncode, chat.stdout) == (0, "")  # small talk gets nothing


def test_the_docs_settings_snippet_parses_and_names_every_event() -> None:
    import re

    readme = (Path(__file__).resolve().parents[2] / "docs" / "remembering.md").read_text()
    [block] = [b for b in re.findall(r"```json\n(.*?)```", readme, re.S) if "SessionEnd" in b]
    hooks_ = json.loads(block)["hooks"]
    assert set(hooks_) == {"SessionStart", "UserPromptSubmit", "SessionEnd", "PreCompact", "Stop"}
    for entries in hooks_.values():
        assert entries[0]["hooks"][0] == {"type": "command", "command": "memdir --root ~/memory hook claude-code"}
    assert set(hooks_) == set(hooks.EVENTS)


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact", "fork"])
def test_session_start_gives_context_whatever_its_source(root: Path, source: str) -> None:
    """A forked session copies the conversation, not the context: it is given the always-layer like a new one."""
    with memdir.open(root) as md:
        md.write("feedback/no-dark-themes.md", "Never propose dark themes.\n", type="feedback", description="no dark UI")
    event = json.loads((DATA / "session-start.json").read_text()) | {"source": source}
    out, err = io.StringIO(), io.StringIO()
    assert hooks.run(lambda: memdir.open(root), hooks.CLAUDE_CODE, io.StringIO(json.dumps(event)), out, err) == 0
    assert "Never propose dark themes." in json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]


def test_stop_reminds_without_opening_the_memory(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "remember that the "
                                      "staging database is read-only"}}) + "\n")
    done = hook(tmp_path / "memory", payload("stop.json", transcript))
    assert done.returncode == 0 and json.loads(done.stdout)["decision"] == "block"
    assert not (tmp_path / "memory").exists()


def test_a_key_the_summariser_provider_echoes_never_reaches_the_hooks_message(tmp_path: Path) -> None:
    """Issue 20 item 2: the provider's 401 body, key and all, went into the hook's systemMessage."""
    pytest.importorskip("anthropic")
    key = "mk_live_" + "Zx81Qw27Er56Ty90Ui34Op12"
    root = tmp_path / "memory"
    memdir.open(root).close()
    with Refusing(key, "anthropic") as api:
        done = hook(root, payload("session-end.json", DATA / "session.jsonl"), env={
            "MEMDIR_SUMMARIZER": "anthropic", "MEMDIR_SUMMARIZER_MODEL": "claude-test",
            "MEMDIR_SUMMARIZER_BASE_URL": api.base, "ANTHROPIC_API_KEY": key})
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {"systemMessage": f"memdir: session {SESSION} not captured (summariser error: "
                                                        "the Anthropic API failed: HTTP 401 authentication_error); see `memdir stats`"}
    with memdir.open(root) as md:
        assert [e.path for e in md.list("sessions/")] == [f"sessions/2026-11-30-090300-{SESSION}.md",
                                                          f"sessions/raw/2026-11-30-090300-{SESSION}/part-001.md"]
    assert [p for p in root.rglob("*") if p.is_file() and key.encode() in p.read_bytes()] == []


def _no_more_than_2_gb() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "symlink", "sparse-65-mb", "over-the-configured-cap"])
def test_a_transcript_path_is_read_as_a_regular_file_only(tmp_path: Path, kind: str) -> None:
    """Issue 20 item 8: transcript_path was read whole, following symlinks, with no type or size check: a FIFO
    hung the hook, /dev/zero ate memory, a symlink to /etc/passwd was captured as a session."""
    root = tmp_path / "memory"
    memdir.open(root).close()
    path, env, reason = tmp_path / "t.jsonl", {}, "unreadable"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path = Path("/dev/zero")
    elif kind == "symlink":
        path.symlink_to("/etc/passwd")
    elif kind == "sparse-65-mb":
        with path.open("wb") as f:
            f.truncate(65 * 2**20)
        reason = "too-large"
    else:
        path.write_text((DATA / "session.jsonl").read_text() * 1000)  # about 2 MB
        env, reason = {"MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB": "1"}, "too-large"
    done = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "hook", "claude-code"],
                          input=payload("session-end.json", path), capture_output=True, text=True, timeout=60,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}, **env},
                          preexec_fn=_no_more_than_2_gb)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {"systemMessage": f"memdir: session {SESSION} not captured ({reason}); see `memdir stats`"}
    with memdir.open(root) as md:
        [entry] = md.list("sessions/")
        m = md.read(entry.path)
        assert (m.meta["status"], m.meta["reason"]) == ("skipped", reason)
        what = {"fifo": "is a FIFO, not a regular file", "dev-zero": "is a device, not a regular file",
                "symlink": "is a symbolic link", "sparse-65-mb": "is larger than the 64 MB a capture reads (68,157,440 bytes or more)",
                "over-the-configured-cap": "is larger than the 1 MB a capture reads"}[kind]
        assert what in m.body, m.body
    assert [p for p in root.rglob("*") if p.is_file() and b"root:x:0:0" in p.read_bytes()] == []


@pytest.mark.parametrize("event", ["session-start.json", "session-end.json"])
def test_a_hook_that_names_no_memory_refuses_and_writes_nothing(tmp_path: Path, event: str) -> None:
    """Issue 20 item 16: without --root, the hook silently created ./memory/ inside the project's git work tree."""
    project = tmp_path / "project"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    done = hook(None, payload(event, DATA / "session.jsonl"), cwd=project)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.count("\n") == 1 and "add --root to its command" in done.stderr and "MEMDIR_ROOT" in done.stderr
    assert sorted(p.name for p in project.iterdir()) == [".git"]  # nothing made in the work tree
    memdir.open(project / "memory").close()  # one made by hand is named in the refusal, still not used unasked
    again = hook(None, payload(event, DATA / "session.jsonl"), cwd=project)
    assert again.returncode == 1 and f"--root {project / 'memory'} uses it" in again.stderr
    named = hook(None, payload(event, DATA / "session.jsonl"), env={"MEMDIR_ROOT": str(tmp_path / "memory")}, cwd=project)
    assert named.returncode == 0, named.stderr
