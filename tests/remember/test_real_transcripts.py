"""Capture on transcripts written the way Claude Code, Codex CLI and Gemini CLI write them (tests/data/real).

Each test reads one session of the corpus as a person would summarise it: the first real request is the title,
the harness's markup is gone, the record says what the agent did and which tests failed on which line, the
subagents' reports are kept, and a subagent's own file leaves nothing of its own (issue 21, item 7).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import memdir
from memdir.recall.context import build
from memdir.remember import capture as cap
from memdir.remember.activity import failing_line, strip_markup
from memdir.remember.summarize import Digest, Extractive, SessionSummary, SummarizerError
from memdir.remember.transcripts import Transcript, load

REAL = Path(__file__).parent.parent / "data" / "real"
TERN = REAL / "claude-code" / "transcripts" / "-home-dana-src-tern"
HOUSEHOLD = REAL / "claude-code" / "transcripts" / "-home-marta-household"
REFUND = TERN / "5d0c9a7e-2b1f-4c83-9e55-0a7f3c21b8d4.jsonl"
SLACK = TERN / "b81e4f02-6a3d-4f19-8c2e-5e0d91a4c7b3.jsonl"
PYDANTIC = TERN / "0f6b3d85-91c4-4a27-b8e0-6d2f5a1c9e47.jsonl"
AUDIT = TERN / "e2a47c19-8d05-4b6e-a1f3-29c7d0e8b654.jsonl"
CI = TERN / "71c2e0aa-3f58-4d9b-a6e1-c04b82d7f319.jsonl"
HTTPX = TERN / "3a7d5e91-0c4b-4f2e-8d16-b95a27e4c083.jsonl"
BILLS = HOUSEHOLD / "c3d8f1e0-5b27-4e9a-8f46-1a0c7d3e92b5.jsonl"
CODEX = REAL / "codex" / "dot-codex" / "sessions"
OLD_CODEX = "rollout-2025-10-28T08-12-40-019a29e0-58c0-78a6-9639-f74080f56c5a.jsonl"
NEW_CODEX = "rollout-2026-02-17T09-41-07-019c6af9-9338-7de3-a53f-79a8afba7010.jsonl"
GEMINI = next((REAL / "gemini" / "dot-gemini" / "tmp").iterdir())
HARNESS = ("<ide_", "<system-reminder", "system-reminder", "<command-", "<local-command", "<bash-", "Caveat:",
           "This may or may not be related", "[Image #", "<environment_context", "<user_instructions")


def record(md: memdir.Memdir, path: Path) -> memdir.Memory:
    done = memdir.capture(md, path.stem, path)
    assert done.status == "captured", done
    return md.read(done.path or "")


def test_the_title_is_the_first_real_request_with_the_ide_markup_gone(md: memdir.Memdir) -> None:
    m = record(md, REFUND)
    assert m.body.startswith("# test_refund_intent_partial fails since I lowered INTENT_THRESHOLD")
    assert m.meta["asked"][0].startswith("second thing, here's what the chat widget says")  # the next request
    assert "corrections" not in m.meta
    assert not [h for h in HARNESS if h in m.text]  # IDE notes, the reminder, the image placeholder: all gone


def test_the_record_says_what_the_agent_did_and_the_failing_line_of_the_failed_test(md: memdir.Memdir) -> None:
    m = record(md, REFUND)
    assert m.meta["files"] == ["tern/intents/refund.py", "tern/replies/en.yaml", "tern/handlers/refund.py",
                               "tern/replies/nl.yaml", "tern/replies/de.yaml"]
    assert m.meta["tools"][:2] == ["Edit 6", "Bash 4"]
    assert m.meta["broke"] == ["python -m pytest tests/test_refund.py: tests/test_refund.py::test_refund_intent_partial"
                               " - AssertionError: assert 'order_status' == 'refund'"]
    commands = m.meta["commands"]
    assert "python -m pytest tests/test_refund.py tests/test_intents.py -q (30 passed in 0.74s)" in commands
    assert commands[-1].endswith("(commit 3c91e0a)")
    assert "## What was done\n- Tools used: Edit ×6, Bash ×4" in m.body


def test_a_summary_of_another_conversation_is_not_the_title(md: memdir.Memdir) -> None:
    """Both summary records on top of b81e4f02 name other conversations (their leafUuids are not in the file)."""
    m = record(md, SLACK)
    assert m.description.startswith("escalations to Slack get lost when Slack answers 429")
    assert "Refund intent" not in m.text and "summary" not in m.meta
    assert "curl -s localhost:8080/healthz" in m.meta["commands"]  # bash mode: a command the person ran
    assert not any("declined" in b for b in m.meta["broke"])  # a tool use the person turned down broke nothing
    assert m.meta["broke"][0].startswith("python -m pytest tests/escalate -q: tests/escalate/test_retry.py::"
                                         "test_503_backs_off_exponentially - assert [0.6401795520317318, 1.22")
    assert "jitter" not in " ".join(m.meta.get("open", ()))  # narration before /compact, decided later, is not open


def test_the_summary_of_this_conversation_is_kept_and_a_traceback_gives_its_exception_line(md: memdir.Memdir) -> None:
    m = record(md, PYDANTIC)
    assert m.meta["summary"] == "Pydantic v2 migration plan for tern"  # its leafUuid is this file's last record
    assert m.meta["broke"][0].endswith("pydantic.errors.PydanticUserError: `regex` is removed. use `pattern` instead")
    assert "- Subagent: Find pydantic v1 API uses: 25 uses of the v1 API in 6 files" in m.body
    assert m.meta["subagents"] == 1  # agent-4c1d9e7b.jsonl, the older layout beside the session, folded in


def test_task_results_are_kept_and_subagent_files_fold_into_their_parent(md: memdir.Memdir) -> None:
    m = record(md, AUDIT)
    assert m.meta["subagents"] == 3  # e2a47c19…/subagents/agent-*.jsonl
    reports = [line for line in m.body.split("\n") if line.startswith("- Subagent: ")]
    assert [r.split(":")[1].strip() for r in reports] == ["Audit tern/ for PII in logs", "Audit ops/ log shipping for PII"]
    assert "tern/handlers/fallback.py:88" in reports[0]
    assert m.meta["tools"][:3] == ["Grep 3", "Read 3", "Task 3"]  # the subagents' searches, counted with the session's calls
    assert m.description.startswith("before the audit with Copperleaf's DPO on Friday")


def test_a_test_that_failed_inside_a_subagent_is_in_the_parent_record(md: memdir.Memdir) -> None:
    """The parent only sees the subagent's prose; the failing line is in the subagent's own file, folded in."""
    m = record(md, HTTPX)
    assert m.meta["subagents"] == 1
    assert m.meta["broke"] == ["python -m pytest tests/orders -q -p no:cacheprovider: tests/orders/test_lookup.py::"
                               "test_lookup_times_out - Failed: DID NOT RAISE <class 'tern.orders.lookup.LookupTimeout'>"]
    assert m.meta["files"] == ["pyproject.toml", "tern/orders/lookup.py"] and "malicious" not in m.text


def test_an_inline_sidechain_answer_is_kept_and_a_synthetic_api_error_is_no_failure(md: memdir.Memdir) -> None:
    m = record(md, CI)
    assert "9b2e4d1" in m.body and "- Subagent: Find CI slowdown: The slowdown comes from 9b2e4d1" in m.body
    assert "broke" not in m.meta and "API Error" not in m.text


def test_a_household_traceback_and_a_remembered_preference(md: memdir.Memdir) -> None:
    m = record(md, BILLS)
    assert m.meta["broke"] == ["python3 split.py bills/2026-03.csv: KeyError: 'Category'"]
    assert m.meta["preferences"] == [
        "The user noted that the ratio changes every january when they do taxes, and that the SL card is always "
        "personal (session c3d8f1e0-5b27-4e9a-8f46-1a0c7d3e92b5, line 18)"]  # "perfect. remember that…"


@dataclass
class Down:
    """A summariser whose provider is down until `up` is set."""

    up: bool = False
    name: str = "down"
    usage: Counter[str] = field(default_factory=Counter)

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary:
        if not self.up:
            raise SummarizerError("the model server is down")
        return Extractive().session(transcript, date=date, limit=limit)

    def digest(self, period: str, label: str, items: list[Digest], *, limit: int) -> Digest:
        return Extractive().digest(period, label, items, limit=limit)


def test_what_the_agent_did_survives_a_summariser_failure(md: memdir.Memdir) -> None:
    """A pending session is summarised later from its raw words; the activity read from its tool calls is kept."""
    down = Down()
    assert memdir.capture(md, "refund", REFUND, summarizer=down).status == "pending"
    down.up = True
    [done] = cap.retry_pending(md, down)
    m = md.read(done.path or "")
    assert m.meta["status"] == "captured" and m.meta["files"][0] == "tern/intents/refund.py"
    assert m.meta["tools"][:2] == ["Edit 6", "Bash 4"] and "## What was done\n- Tools used: Edit ×6, Bash ×4" in m.body
    assert m.meta["broke"][0].endswith("AssertionError: assert 'order_status' == 'refund'")


@pytest.mark.parametrize("agent", sorted(TERN.rglob("agent-*.jsonl")), ids=lambda p: p.name)
def test_a_subagent_file_captured_alone_leaves_no_trace(md: memdir.Memdir, agent: Path) -> None:
    done = memdir.capture(md, agent.stem, agent)
    assert (done.status, done.reason, done.path) == ("skipped", "subagent", None)
    assert md.list() == [] and cap.health(md).ok


def test_a_skipped_capture_shows_in_stats_and_in_no_index_or_context(md: memdir.Memdir) -> None:
    record(md, REFUND)
    skip = memdir.capture(md, "gone-session", Path("/nonexistent/refund-threshold.jsonl"), at="2026-03-10T09:00:00Z")
    assert skip.status == "skipped" and (skip.path or "").startswith("sessions/skipped/")
    now = dt.datetime(2026, 3, 12, tzinfo=dt.UTC)
    assert [s.path for s in cap.health(md, now=now).skipped] == [skip.path]
    md.write("project/tern.md", "The refund threshold is tuned by Priya.", description="tern")
    for folder in ("", "sessions/"):
        assert "skipped" not in md.index(folder) and "gone-session" not in md.index(folder)
    assert "skipped" not in (md.store.root / "MEMORY.md").read_text()  # type: ignore[attr-defined]
    for query in (None, "refund threshold capture skipped nonexistent"):
        text = build(md, query).text
        assert "gone-session" not in text and "capture skipped" not in text
    with memdir.open(md.store.root) as fresh:  # type: ignore[attr-defined]  # a new process renders from the totals
        fresh.write("project/other.md", "another note", description="other")
        assert "skipped" not in fresh.index() and "skipped" not in fresh.index("sessions/")
    again = memdir.capture(md, "gone-session", REFUND)  # the session captured after all: the stub goes
    assert again.status == "captured" and md.list("sessions/skipped/") == []


def test_codex_rollouts_are_read(md: memdir.Memdir) -> None:
    old, new = CODEX / "2025/10/28" / OLD_CODEX, CODEX / "2026/02/17" / NEW_CODEX
    t = load(old)
    assert t.format == "codex" and t.meta["branch"] == "alpha-baseline"
    assert t.meta["request"].startswith("the alpha_baseline_stops model gives 1912 stops")  # after AGENTS.md, env
    assert t.activity.files == ("models/staging/stg_vans.sql",)
    assert t.activity.failures == ("dbt build --select stg_vans+ --target dev: 08:14:07 4 of 4 FAIL 3 "
                                   "accepted_values_alpha_baseline_stops_stop_date ........... [FAIL 3 in 0.12s]",)
    m = record(md, new)
    assert m.meta["source"] == "codex" and m.description.startswith("ルート最適化のパイロット用に")
    assert m.meta["files"] == ["models/marts/van_daily_km.sql"]
    assert not [h for h in HARNESS if h in m.text]
    assert m.text.count("AGENTS.md") == m.text.count("NOT prod. AGENTS.md says dev only")  # the user's words, not the file


def test_gemini_chats_and_checkpoints_are_read(md: memdir.Memdir) -> None:
    chats = GEMINI / "chats"
    doc = load(chats / "session-2026-01-21T14-03-9974d75b.json")
    assert doc.format == "gemini" and doc.meta["request"].startswith("the bed map view is slow on Tomás's phone")
    assert doc.activity.failures == ("python manage.py test beds: AssertionError: 3 != 97 : 3 queries executed, "
                                     "97 expected",)
    lines = load(chats / "session-2026-05-06T10-22-fd547512.jsonl")
    said = [t.text for t in lines.turns if t.role == "user"]
    assert "no cron on the VPS, we use systemd timers" not in said  # rewound away, then said again in other words
    assert lines.meta["summary"] == "Rota reminder emails with a systemd timer"
    checkpoint = load(GEMINI / "checkpoint-tool-loans.json")
    assert checkpoint.turns[0].text == "review the tool loan model before I write the views: orchard/tools/models.py"


@pytest.mark.parametrize(("output", "line"), [
    ("Exit code 1\nTraceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'Category'", "KeyError: 'Category'"),
    ("Exit code 1\n...F\nE       assert 1 == 2\n\nt.py:4: AssertionError", "assert 1 == 2"),
    ("Exit code: 2\nWall time: 1 s\nOutput:\nerror[E0308]: mismatched types", "error[E0308]: mismatched types"),
    ("Exit code 1", "Exit code 1"),
])
def test_the_failing_line_is_the_one_that_says_what_failed(output: str, line: str) -> None:
    assert failing_line(output) == line


def test_a_continued_conversation_is_titled_by_its_own_first_request() -> None:
    """A session continued after the context ran out starts with the earlier conversation's summary (older Claude
    Code versions do not flag it isCompactSummary): it is not this session's request."""
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "This session is being continued from a "
              "previous conversation that ran out of context. The conversation is summarized below:\nAnalysis: ..."}},
             {"type": "user", "uuid": "u2", "message": {"role": "user", "content": "now add the Dutch reply too"}}]
    t = load("\n".join(json.dumps(x) for x in lines) + "\n")
    assert t.meta["request"] == "now add the Dutch reply too" and len(t.turns) == 1


def test_markup_is_stripped_and_what_the_person_typed_stays() -> None:
    text = ("<ide_selection>The user selected the lines 1 to 2 from a.py:\nx = 1\n</ide_selection>fix a.py please\n"
            "<system-reminder>\nkeep a task list\n</system-reminder>")
    assert strip_markup(text) == "fix a.py please"
    assert strip_markup("<command-name>/compact</command-name>\n<command-message>compact</command-message>") == ""


def test_a_custom_slash_command_is_a_request_and_claude_codes_own_are_not() -> None:
    def said(content: str) -> list[str]:
        line = {"type": "user", "message": {"role": "user", "content": content}}
        return [t.text for t in load(json.dumps(line) + "\n" + json.dumps(line | {"message": {
            "role": "user", "content": "and then?"}}) + "\n").turns]

    assert said("<command-message>fix-issue is running…</command-message>\n<command-name>/fix-issue</command-name>\n"
                "<command-args>123 in the refund handler</command-args>") == ["/fix-issue 123 in the refund handler", "and then?"]
    assert said("<command-name>/model</command-name>\n<command-message>model</command-message>\n"
                "<command-args>opus</command-args>") == ["and then?"]
