"""Transcripts in every shape agents leave behind read into the same turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.remember.transcripts import TranscriptError, load

DATA = Path(__file__).parent.parent / "data"


def roles_and_texts(source: object) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in load(source).turns]


def test_plain_text_with_and_without_labels() -> None:
    assert roles_and_texts("User: fix it\nplease\nAssistant: done\n") == [("user", "fix it\nplease"), ("assistant", "done")]
    assert roles_and_texts("just a note about the launch") == [("user", "just a note about the launch")]


def test_anthropic_messages_with_blocks() -> None:
    t = load(json.loads((DATA / "transcripts" / "anthropic.json").read_text()))
    assert t.format == "messages"
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", "Set up the billing webhook. I'd rather keep secrets in Vault."),
        ("assistant", "I'll register the endpoint.\n[tool http_post: https://api.example.com/webhooks]"),
        ("tool", "[tool error: http_post: 401 Unauthorized]"),
        ("assistant", "We decided to rotate the key first."),
        ("user", "Good. The webhook test is still pending."),  # the image beside it is nothing a record keeps
    ]


def test_openai_chat_messages_with_tool_calls() -> None:
    text = (DATA / "transcripts" / "openai.json").read_text()
    assert roles_and_texts(text) == [
        ("system", "You are a helpful assistant."),
        ("user", "Plan the data migration. Always use UTC in logs."),
        ("assistant", '[tool run_sql: SELECT count(*) FROM users]\nLet\'s go with batches of 10,000 rows.'),
        ("user", "No, use 5,000. The rollback script is a TODO."),
    ]


def test_openai_responses_items() -> None:
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
             {"type": "function_call", "name": "lookup", "arguments": '{"query": "x"}'},
             {"type": "function_call_output", "output": "big"},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "found it"}]}]
    assert roles_and_texts(items) == [("user", "hi"), ("assistant", "[tool lookup: x]\nfound it")]


def test_claude_code_jsonl() -> None:
    t = load(DATA / "claude-code" / "session.jsonl")
    assert t.format == "claude-code"
    # the summary record's leafUuid is no record of this file: it names another conversation, so it is not kept
    assert t.meta == {"request": "Please fix the flaky upload test. I prefer small commits.", "cwd": "/home/u/proj",
                      "branch": "main", "session": "s-1", "messages": 7}
    assert t.skipped == 1  # the half-written last line
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", "Please fix the flaky upload test. I prefer small commits."),
        ("assistant", "[tool Bash: pytest tests/test_upload.py]"),
        ("tool", "[tool error: pytest tests/test_upload.py: tests/test_upload.py::test_retry - TimeoutError]"),
        ("assistant", "The retry test times out. Let's go with a shorter backoff in tests."),
        ("user", "No, don't touch the backoff. We still need to check the CI config tomorrow."),
    ]  # thinking, the /clear command, the sidechain and the broken line are left out
    assert t.started is not None and t.started.isoformat() == "2026-11-30T09:00:00+00:00"
    assert [(x.role, x.text) for x in load(t.as_text()).turns] == [(x.role, x.text) for x in t.turns]


@pytest.mark.parametrize(("source", "reason"), [
    (Path("/nonexistent/t.jsonl"), "missing"),
    (Path("/"), "unreadable"),
    (b"\xff\xfe\x00bad", "unreadable"),
    ("", "empty"),
    ("[]", "empty"),
    ('{"type": "summary", "summary": "x"}\n', "empty"),
    (42, "unreadable"),
    ('[{"sessionId": "s", "messageId": 0, "type": "user", "message": "hi", "timestamp": "2026-01-21T14:03:17Z"}]',
     "prompt log"),  # the Gemini CLI's logs.json: its sessions are under chats/
])
def test_what_cannot_be_captured_says_why(source: object, reason: str) -> None:
    with pytest.raises(TranscriptError) as e:
        load(source)
    assert e.value.reason == reason


def test_a_line_separator_inside_a_jsonl_string_does_not_split_the_line() -> None:
    """U+2028 is a legal character in a JSON string; only '\\n' ends a JSONL record."""
    lines = [
        {"type": "user", "message": {"role": "user", "content": "first\u2028still the first turn"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok\x0cdone"}]}},
    ]
    t = load("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n")
    assert t.skipped == 0
    assert [(x.role, x.text) for x in t.turns] == [("user", "first\u2028still the first turn"), ("assistant", "ok\x0cdone")]


def test_a_file_whose_size_the_system_does_not_report_is_still_read_within_the_cap(tmp_path: Path) -> None:
    """A regular file that grew after it was checked (or says size 0, as /proc files do) stops at the cap, mid-line too."""
    path = tmp_path / "t.txt"
    path.write_text("User: " + "x" * 5000 + "\n")
    with pytest.raises(TranscriptError) as e:
        load(path, max_bytes=1000)  # its size says so at once
    assert e.value.reason == "too-large"
    from memdir.remember import transcripts

    with path.open("rb") as f, pytest.raises(TranscriptError) as e:
        list(transcripts._bounded(f, path, 1000))  # never more than the cap read, even inside one line
    assert e.value.reason == "too-large" and "1,001 bytes or more" in e.value.message
    assert load(Path("/proc/self/status"), max_bytes=100_000).turns  # size 0, content read as it comes
