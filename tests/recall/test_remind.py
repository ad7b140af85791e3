"""Claude Code's Stop hook: one reminder when a request to remember was not saved, and nothing otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from memdir.recall import remind

DATA = Path(__file__).parent.parent / "data" / "claude-code"
SESSION = DATA / "session.jsonl"


def turn(kind: str, content: object, **more: object) -> str:
    return json.dumps({"type": kind, "sessionId": "s-1", "message": {"role": kind, "content": content}, **more})


def transcript(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text(SESSION.read_text().split("\n", 1)[0] + "\n" + "\n".join(lines) + "\n")
    return path


def stop(path: Path, active: bool = False) -> dict[str, object] | None:
    return remind.stop({"hook_event_name": "Stop", "transcript_path": str(path), "stop_hook_active": active})


ASK = "ok. from now on, run the linter before every commit"
ASKED = "from now on, run the linter before every commit"  # the sentence that asks, without the "ok."


def test_a_request_to_remember_that_was_not_saved_blocks_once(tmp_path: Path) -> None:
    path = transcript(tmp_path, turn("user", "fix the login test"), turn("assistant", [{"type": "text", "text": "done"}]),
                      turn("user", ASK), turn("assistant", [{"type": "text", "text": "Sure, I will."}]))
    out = stop(path)
    assert out is not None and out["decision"] == "block"
    assert f'"{ASKED}"' in str(out["reason"]) and "remember_feedback" in str(out["reason"])
    assert stop(path, active=True) is None  # Claude carried on once: the next stop of the turn goes through


def test_a_saved_request_and_an_ordinary_turn_get_nothing(tmp_path: Path) -> None:
    saved = transcript(tmp_path, turn("user", ASK), turn("assistant", [
        {"type": "tool_use", "id": "t1", "name": "mcp__memdir__remember_feedback", "input": {"rule": "lint first"}}]))
    assert stop(saved) is None
    assert stop(SESSION) is None  # its last request asks nothing to be remembered
    team = transcript(tmp_path, turn("user", ASK), turn("assistant", [  # its Write tool, into the team's memory
        {"type": "tool_use", "id": "t2", "name": "Write",
         "input": {"file_path": "/src/flock/team-memory/feedback/lint.md", "content": "Lint first."}}]))
    assert stop(team) is None
    recall = transcript(tmp_path, turn("user", "do you remember what we decided about the cache?"))
    assert stop(recall) is None  # asking to recall is not asking to keep
    assert stop(tmp_path / "gone.jsonl") is None


def test_only_the_end_of_a_long_transcript_is_read(tmp_path: Path) -> None:
    filler = [turn("assistant", [{"type": "text", "text": "x" * 1000}]) for _ in range(400)]
    path = transcript(tmp_path, turn("user", "remember that staging is eu-west-1"), *filler, turn("user", ASK))
    assert path.stat().st_size > remind.TAIL
    t = remind.tail(path)
    assert t is not None and t.turns[-1].text == ASK and len(t.turns) < 300
    assert remind.unsaved(t) == ASKED


def write(call: str, **args: object) -> str:
    return turn("assistant", [{"type": "tool_use", "id": call, "name": "mcp__memdir__write_memory_file",
                               "input": {"path": "project/lint.md", "content": "lint first", **args}}])


def result(call: str, text: str, error: bool) -> str:
    return turn("user", [{"type": "tool_result", "tool_use_id": call, "is_error": error,
                          "content": [{"type": "text", "text": text}]}])


REFUSED = "refused: project/lint.md: the rate limit of 30 writes a minute is reached; wait 20 s and retry"


def test_a_write_memdir_refused_is_not_a_save(tmp_path: Path) -> None:
    """Issue 31, item 8: in the real Claude Code CLI a write memdir refused counted as saved, so nothing reminded."""
    refused = transcript(tmp_path, turn("user", ASK), write("t1"), result("t1", REFUSED, True),
                         turn("assistant", [{"type": "text", "text": "I could not save that."}]))
    out = stop(refused)
    assert out is not None and out["decision"] == "block" and ASKED in str(out["reason"])
    retried = transcript(tmp_path, turn("user", ASK), write("t1"), result("t1", REFUSED, True), write("t2"),
                         result("t2", "created project/lint.md", False))
    assert stop(retried) is None  # the second write landed
    edited = transcript(tmp_path, turn("user", "remember: the VPN comes first"), turn("assistant", [
        {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": "/p/CLAUDE.md", "old_string": "a",
                                                                   "new_string": "b"}}]),
        result("e1", "String to replace not found in file.", True))
    assert stop(edited) is not None  # an edit of CLAUDE.md that failed saved nothing either
