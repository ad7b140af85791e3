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


def test_a_request_to_remember_that_was_not_saved_blocks_once(tmp_path: Path) -> None:
    path = transcript(tmp_path, turn("user", "fix the login test"), turn("assistant", [{"type": "text", "text": "done"}]),
                      turn("user", ASK), turn("assistant", [{"type": "text", "text": "Sure, I will."}]))
    out = stop(path)
    assert out is not None and out["decision"] == "block"
    assert f'"{ASK}"' in str(out["reason"]) and "remember_feedback" in str(out["reason"])
    assert stop(path, active=True) is None  # Claude carried on once: the next stop of the turn goes through


def test_a_saved_request_and_an_ordinary_turn_get_nothing(tmp_path: Path) -> None:
    saved = transcript(tmp_path, turn("user", ASK), turn("assistant", [
        {"type": "tool_use", "id": "t1", "name": "mcp__memdir__remember_feedback", "input": {"rule": "lint first"}}]))
    assert stop(saved) is None
    assert stop(SESSION) is None  # its last request asks nothing to be remembered
    recall = transcript(tmp_path, turn("user", "do you remember what we decided about the cache?"))
    assert stop(recall) is None  # asking to recall is not asking to keep
    assert stop(tmp_path / "gone.jsonl") is None


def test_only_the_end_of_a_long_transcript_is_read(tmp_path: Path) -> None:
    filler = [turn("assistant", [{"type": "text", "text": "x" * 1000}]) for _ in range(400)]
    path = transcript(tmp_path, turn("user", "remember that staging is eu-west-1"), *filler, turn("user", ASK))
    assert path.stat().st_size > remind.TAIL
    t = remind.tail(path)
    assert t is not None and t.turns[-1].text == ASK and len(t.turns) < 300
    assert remind.unsaved(t) == ASK
