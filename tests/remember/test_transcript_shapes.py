"""Every shape the agents write, read as a person would (issue 31, item 2): the fixtures of tests/data/real were
written from each format's documentation and source (Claude Code, Codex CLI's rollouts old and new, Gemini CLI's
chat recordings in JSON and JSONL with their schema drift); a session is empty only when it holds no message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memdir
from memdir.remember.activity import Log, exit_status, failing_line
from memdir.remember.transcripts import TranscriptError, load, with_subagents

REAL = Path(__file__).parent.parent / "data" / "real"
TERN = REAL / "claude-code" / "transcripts" / "-home-dana-src-tern"
HOUSEHOLD = REAL / "claude-code" / "transcripts" / "-home-marta-household"
CODEX = REAL / "codex" / "dot-codex" / "sessions"
GEMINI = REAL / "gemini" / "dot-gemini" / "tmp" / "f7668200e2e6ceb60e8ff7aaa6a223da3d70c753a1c0dd905dc7d6e1d2e57866"
INIT = TERN / "8c4f2a10-7d3e-4b91-a5c6-e1f0d9b27a44.jsonl"
OLD_INIT = HOUSEHOLD / "4e7b9c21-08fa-4d3b-9e61-b2c5a7d0f318.jsonl"
PICTURES = HOUSEHOLD / "d2a61f0e-93c4-4b7a-8d15-6e0b4c9f2a77.jsonl"
ERRORS = TERN / "6f1d0b83-2c5e-47a9-b3d0-9a8e7c6f5b12.jsonl"
BARE = CODEX / "2025/07/14/rollout-2025-07-14T16-02-11-5b0c7e2a-41d9-4f7e-9a3c-8e2d16f0b4a1.jsonl"
EVENTS = CODEX / "2025/09/03/rollout-2025-09-03T09-40-05-0199104e-8a2b-7c41-b3f5-2d6e9a0c7b18.jsonl"
TYPESCRIPT = CODEX / "rollout-2025-04-22-7d3a9e11-6c2f-4b80-a5d4-0e9f8b2c1a63.json"
CALENDAR = GEMINI / "chats" / "session-2026-09-16T09-40-3c9e51a7.jsonl"
SUBAGENT = next((GEMINI / "chats" / "3c9e51a7-2f04-4d8b-b6e1-70a5c8d2f913").glob("*.jsonl"))


def users(path: Path) -> list[tuple[int | None, str]]:
    return [(t.line, t.text) for t in load(path).turns if t.role == "user"]


def test_init_without_a_request_after_it_is_titled_by_the_command_and_never_by_the_assistant() -> None:
    t = load(INIT)
    assert t.meta["request"] == "/init"  # the expansion is isMeta; "This looks great" asks nothing
    assert t.activity.files == ("CLAUDE.md",)


def test_an_older_init_expansion_written_as_a_message_is_not_the_request() -> None:
    said = users(OLD_INIT)
    assert [s for _, s in said] == ["/init", "ok. also mention that bills/ holds the bank exports as ; separated csv "
                                              "with decimal commas"]
    assert load(OLD_INIT).meta["request"].startswith("also mention that bills/")  # the request after the command


def test_images_beside_words_leave_the_words_and_no_placeholder() -> None:
    said = users(PICTURES)
    assert said[0] == (1, "the electricity bill went up 40% in February, can you check what changed against January? "
                          "both bills are in bills/")
    assert not any("[image" in s.lower() for _, s in said)
    assert (14, "and this is the spot price chart from the supplier. always show amounts in kronor with a space "
                "before kr, like in the bank export") in said  # the image-only message before it is not a turn


def test_a_rollout_without_the_envelope_is_read_with_its_failures() -> None:
    t = load(BARE)
    assert t.format == "codex" and t.meta["branch"] == "weekend-routes"
    assert t.meta["request"].startswith("the saturday routes in route_plan_daily have no driver_id")
    assert t.activity.files == ("models/marts/route_plan_daily.sql",)  # apply_patch run as a shell command
    assert t.activity.failures == (
        "dbt build --select route_plan_daily --target dev: 16:05:04 1 of 2 ERROR creating sql view model "
        "dbt_haruto.route_plan_daily [ERROR in 0.21s]",
        "tms__describe_table: err: the TMS read replica refused the connection (too many clients)")  # success: false


def test_a_rollout_of_event_messages_alone_is_a_conversation() -> None:
    t = load(EVENTS)
    assert [x.role for x in t.turns] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert t.meta["request"] == "which dbt models read from raw.tms_stops directly instead of through stg_tms_stops?"
    assert "environment_context" not in t.as_text() and "<cwd>" not in t.as_text()


def test_the_typescript_clis_rollout_document_is_read() -> None:
    t = load(TYPESCRIPT)
    assert t.format == "codex" and t.where == "message"
    assert t.meta["session"] == "7d3a9e11-6c2f-4b80-a5d4-0e9f8b2c1a63"
    assert t.activity.files == ("models/staging/schema.yml",)
    assert t.activity.failures == ("dbt test --select stg_vans: 12:32:40 1 of 1 FAIL 6 not_null_stg_vans_van_id "
                                   ".......... [FAIL 6 in 0.08s]",)


def test_a_newer_gemini_chat_reads_one_part_display_content_rewritten_messages_and_stated_exit_codes() -> None:
    t = load(CALENDAR)
    assert t.meta["request"] == ("the booking calendar shows beds as free when they're booked from next week on. fix "
                                 "it in @web/src/calendar/booking.ts")  # displayContent: not the files @ added
    assert t.meta["cwd"] == "/home/ines/src/orchard"  # the folder whose SHA-256 is the projectHash
    assert dict(t.activity.tools)["run_shell_command"] == 2  # a message written again under its id counts once
    assert t.activity.files == ("web/src/calendar/booking.ts",)
    assert t.activity.failures == (
        "npm test -- --run src/calendar: shows a booked bed as taken - expected 'free' to be 'taken' // Object.is "
        "equality",  # status "success", but the output says Exit Code: 1
        "web/src/calendar/booking.ts: Failed to edit, 0 occurrences found for old_string in "
        "/home/ines/src/orchard/web/src/calendar/booking.ts. No edits made.")
    assert t.activity.commands == ("npm test -- --run src/calendar (failed)", "npm test -- --run src/calendar")


def test_a_gemini_subagents_chat_folds_into_its_parent_and_leaves_nothing_of_its_own(md: memdir.Memdir) -> None:
    assert load(SUBAGENT).meta["subagent"] == "gemini"
    done = memdir.capture(md, "sub", SUBAGENT)
    assert (done.status, done.reason, md.list()) == ("skipped", "subagent", [])
    folded = with_subagents(load(CALENDAR), CALENDAR)
    assert folded.meta["subagents"] == 1 and dict(folded.activity.tools)["search_file_content"] == 1


def test_a_tool_result_saying_success_false_is_a_failure_with_its_error() -> None:
    assert "mcp__sentry__update_issue: issue TERN-412 is locked by a release hold" in load(ERRORS).activity.failures


def test_a_rewind_to_a_message_no_longer_there_clears_the_chat_as_the_cli_does() -> None:
    head = {"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "lastUpdated": "x"}
    lines = [head, {"id": "a", "type": "user", "content": "first", "timestamp": "2026-01-01T00:00:01Z"},
             {"$rewindTo": "gone"}, {"id": "b", "type": "user", "content": {"text": "second"}}]
    t = load("\n".join(json.dumps(x) for x in lines) + "\n")
    assert [x.text for x in t.turns] == ["second"] and t.meta["request"] == "second"


@pytest.mark.parametrize(("output", "status"), [
    ("Exit code 1\nboom", 1), ("Exit code: 0\nWall time: 1 s\nOutput:\nok", 0), ("x\nExit Code: 2\nSignal: (none)", 2),
    ("no status here", None), ("Process exited with code 137", 137),
])
def test_the_exit_status_an_output_states(output: str, status: int | None) -> None:
    assert exit_status(output) == status


def test_a_gemini_shell_output_gives_its_failing_test_not_its_banner() -> None:
    out = ("Command: npm test\nDirectory: (root)\nOutput: \n ❯ a.test.ts (1 test | 1 failed)\n   × adds 3ms\n"
           "     → expected 2 to be 3\nError: (none)\nExit Code: 1\nSignal: (none)\nProcess Group PGID: 7")
    assert failing_line(out) == "adds - expected 2 to be 3"


def test_what_a_tool_was_given_is_redacted_whole_before_it_is_clipped() -> None:
    """Item 5: a command was clipped to 100 characters before the guard saw it, so a token cut short (no longer
    a token's shape) reached the record."""
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXJuLWJvdCIsImV4cCI6MTc3NDAwMDAwMH0.c2lnbmF0dXJlLWJ5dGVzLWhlcmU"
    log = Log()
    log.call("Bash", {"command": f"curl -H 'Authorization: Bearer {token}' https://api.example.com/v1/things"}, "c1")
    assert log.result("c1", f"Exit code 7\ncurl: (7) failed to connect, sent {token}", error=True) is not None
    a = log.activity()
    assert not [x for x in (*a.commands, *a.failures) if "eyJ" in x]
    assert a.commands == ("curl … [removed: it held what looks like a JSON Web Token] (failed)",)  # its program kept
    assert a.failures == ("curl … [removed: it held what looks like a JSON Web Token]: [line removed: it held what "
                          "looks like a JSON Web Token]",)


@pytest.mark.parametrize("content", [
    [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}],
    [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "a.py"}}],
])
def test_a_session_is_empty_only_when_it_holds_no_message(md: memdir.Memdir, content: object) -> None:
    line = {"type": "user" if content[0]["type"] == "image" else "assistant", "sessionId": "s",  # type: ignore[index]
            "message": {"role": "user" if content[0]["type"] == "image" else "assistant", "content": content}}  # type: ignore[index]
    t = load(json.dumps(line) + "\n")
    assert t.meta["messages"] == 1
    with pytest.raises(TranscriptError, match="no user or assistant"):
        load(json.dumps({"type": "summary", "summary": "x", "leafUuid": "y"}) + "\n")
    assert memdir.capture(md, "s", json.dumps(line) + "\n").status == "captured"


@pytest.mark.parametrize("path", [INIT, OLD_INIT, PICTURES, ERRORS, BARE, EVENTS, TYPESCRIPT, CALENDAR],
                         ids=lambda p: p.name[:24])
def test_every_new_fixture_captures_with_its_users_words_as_the_title(md: memdir.Memdir, path: Path) -> None:
    done = memdir.capture(md, path.stem[-36:], path)
    assert done.status == "captured", done
    m = md.read(done.path or "")
    assert not m.description.startswith(("[", "I'll", "Let me")), m.description
