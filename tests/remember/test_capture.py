"""Session capture: one record per session, every attempt recorded, nothing lost when summarising fails."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import memdir
from memdir.remember import capture as cap
from memdir.remember.summarize import Digest, Extractive, SessionSummary, SummarizerError
from memdir.remember.transcripts import Transcript

DATA = Path(__file__).parent.parent / "data"
CC = DATA / "claude-code" / "session.jsonl"
TEXT = """User: Please migrate the billing tables. I prefer small migrations.
Assistant: Let's go with three steps. The first step failed with a lock timeout.
User: No, don't lock the whole table. We still need to rerun it next Thursday.
"""


@dataclass
class Flaky:
    """A summariser that fails while `broken` is set, then summarises like the extractive one."""

    broken: bool = True
    name: str = "flaky"
    usage: Counter[str] = field(default_factory=Counter)

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary:
        if self.broken:
            raise SummarizerError("the model server is down")
        return Extractive().session(transcript, date=date, limit=limit)

    def digest(self, period: str, label: str, items: list[Digest], *, limit: int) -> Digest:
        return Extractive().digest(period, label, items, limit=limit)


def test_capture_writes_a_structured_record_with_lists_in_frontmatter(md: memdir.Memdir) -> None:
    done = memdir.capture(md, "s-42", TEXT, at="2026-11-30T09:15:00Z")
    assert (done.status, done.path, done.change) == ("captured", "sessions/2026-11-30-091500-s-42.md", "created")
    m = md.read(done.path)
    assert m.type == "session" and m.meta["session"] == "s-42" and m.meta["status"] == "captured"
    assert m.meta["preferences"] == ["I prefer small migrations."]
    assert m.meta["corrections"] == ["No, don't lock the whole table."]
    assert m.meta["decisions"] == ["Let's go with three steps."]
    assert m.meta["broke"] == ["The first step failed with a lock timeout."]
    # relative dates resolved against the session's date, not today's
    assert m.meta["open"] == ["We still need to rerun it next Thursday (2026-12-03)."]
    assert "## Open threads\n- We still need to rerun it next Thursday (2026-12-03).\n" in m.body


def test_capture_is_idempotent_per_session_id(md: memdir.Memdir) -> None:
    first = memdir.capture(md, "s-1", TEXT, at="2026-11-30T09:15:00Z")
    again = memdir.capture(md, "s-1", TEXT, at="2026-11-30T09:15:00Z")
    assert again.change == "unchanged" and again.path == first.path
    longer = memdir.capture(md, "s-1", TEXT + "User: Also the TODO for the invoices.\n", at="2026-11-30T11:00:00Z")
    assert (longer.path, longer.change) == (first.path, "updated")  # replaced in place, never duplicated
    assert [e.path for e in md.list("sessions/")] == [first.path]


@pytest.mark.parametrize("fmt", ["claude-code", "anthropic", "openai", "text"])
def test_every_transcript_format_captures(md: memdir.Memdir, fmt: str) -> None:
    source: object = {"claude-code": CC, "anthropic": DATA / "transcripts" / "anthropic.json",
                      "openai": DATA / "transcripts" / "openai.json", "text": TEXT}[fmt]
    done = memdir.capture(md, f"id-{fmt}", source, at="2026-11-30T10:00:00Z")
    assert done.status == "captured", done
    meta = md.read(done.path).meta
    assert meta["source"] == ("messages" if fmt in ("anthropic", "openai") else fmt)
    assert meta.get("open") or meta.get("broke")  # every sample has something that broke or stays open


def test_claude_code_session_date_comes_from_the_transcript(md: memdir.Memdir) -> None:
    done = memdir.capture(md, "s-1", CC)
    assert done.path == "sessions/2026-11-30-090300-s-1.md"
    meta = md.read(done.path).meta
    assert (meta["cwd"], meta["branch"], meta["transcript"]) == ("/home/u/proj", "main", str(CC))


def test_secrets_never_reach_the_record(md: memdir.Memdir) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    done = memdir.capture(md, "s-1", f"User: The deploy failed, key {key} was rejected.\n", at="2026-11-30T09:00:00Z")
    text = md.read(done.path).text
    assert key not in text and "[line removed: it held what looks like an AWS access key id]" in text


@pytest.mark.parametrize(("source", "reason"), [
    (Path("/nonexistent/session.jsonl"), "missing"),
    (b"\xff\xfe", "unreadable"),
    ("", "empty"),
])
def test_a_skipped_capture_is_recorded_with_its_reason(md: memdir.Memdir, source: object, reason: str) -> None:
    done = memdir.capture(md, "s-9", source, at="2026-11-30T09:00:00Z")
    assert (done.status, done.reason) == ("skipped", reason)
    m = md.read("sessions/2026-11-30-090000-s-9.md")
    assert (m.meta["status"], m.meta["reason"]) == ("skipped", reason)
    h = cap.health(md, now=dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC))
    assert not h.ok and [s.path for s in h.skipped] == [done.path] and h.last_capture is None


def test_a_skip_after_a_capture_keeps_the_record_and_notes_the_skip(md: memdir.Memdir) -> None:
    good = memdir.capture(md, "s-1", TEXT, at="2026-11-30T09:00:00Z")
    memdir.capture(md, "s-1", Path("/gone.jsonl"))
    m = md.read(good.path)
    assert m.meta["status"] == "captured" and "missing" in m.meta["last_skip"] and m.meta["preferences"]
    h = cap.health(md, now=dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC))
    assert h.last_capture is not None and h.last_capture.path == good.path and [s.path for s in h.skipped] == [good.path]


def test_a_summariser_error_keeps_the_raw_session_and_the_next_run_retries(md: memdir.Memdir) -> None:
    flaky = Flaky()
    done = cap.capture(md, "s-7", TEXT, at="2026-11-30T09:00:00Z", summarizer=flaky)
    assert done.status == "pending" and "the model server is down" in done.reason
    assert [e.path for e in md.list("sessions/")] == ["sessions/2026-11-30-090000-s-7.md",
                                                      "sessions/raw/2026-11-30-090000-s-7/part-001.md"]
    raw = md.read("sessions/raw/2026-11-30-090000-s-7/part-001.md").body
    assert "User: Please migrate the billing tables." in raw and "next Thursday." in raw  # raw: words as said
    h = cap.health(md, now=dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC))
    assert [s.path for s in h.pending] == [done.path]
    flaky.broken = False
    cap.capture(md, "s-8", "User: another session about the invoices\n", at="2026-11-30T10:00:00Z", summarizer=flaky)
    assert [e.path for e in md.list("sessions/")] == ["sessions/2026-11-30-090000-s-7.md",
                                                      "sessions/2026-11-30-100000-s-8.md"]
    m = md.read("sessions/2026-11-30-090000-s-7.md")
    assert m.meta["status"] == "captured" and m.meta["preferences"] == ["I prefer small migrations."]
    assert m.meta["open"] == ["We still need to rerun it next Thursday (2026-12-03)."]


def test_a_long_raw_session_is_split_within_the_limits(md: memdir.Memdir) -> None:
    text = "".join(f"User: message {i} " + "x" * 300 + "\n" for i in range(400))
    cap.capture(md, "big", text, at="2026-11-30T09:00:00Z", summarizer=Flaky())
    parts = md.list("sessions/raw/")
    assert len(parts) > 4 and all(e.size <= md.limits.max_bytes and e.lines <= md.limits.max_lines for e in parts)
    joined = "".join(md.read(e.path).body for e in parts)
    assert joined == text


def test_sessions_since_and_open(md: memdir.Memdir) -> None:
    memdir.capture(md, "old", "User: the old thing\n", at="2026-11-20T09:00:00Z")
    memdir.capture(md, "new", TEXT, at="2026-11-29T09:00:00Z")
    now = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)
    assert [s.session for s in cap.sessions(md, now=now)] == ["new", "old"]
    assert [s.session for s in cap.sessions(md, since="3d", now=now)] == ["new"]
    assert [s.session for s in cap.sessions(md, open_only=True)] == ["new"]


def test_capture_as_another_actor(md: memdir.Memdir) -> None:
    memdir.capture(md, "s-1", TEXT, at="2026-11-30T09:00:00Z", actor="hook:claude-code")
    assert md.history()[0].actor == "hook:claude-code"


# ---------------------------------------------------------------- feedback


def test_feedback_is_saved_once_and_updated_in_place(md: memdir.Memdir) -> None:
    m = memdir.remember_feedback(md, "Never use dark themes in generated UI", "the user finds them unreadable",
                             "any UI, slide or chart")
    assert m.path == "feedback/never-use-dark-themes-in-generated-ui.md" and m.change == "created"
    assert m.body == ("Never use dark themes in generated UI\n\n**Why:** the user finds them unreadable\n"
                      "**How to apply:** any UI, slide or chart\n")
    again = memdir.remember_feedback(md, "never use dark themes in generated UI.", "said twice now", "all generated UI")
    assert again.path == m.path and again.change == "updated" and "**Why:** said twice now" in again.body
    assert [e.path for e in md.list("feedback/")] == [m.path]


def test_feedback_supersedes_the_rule_it_contradicts(md: memdir.Memdir) -> None:
    old = memdir.remember_feedback(md, "Always use tabs for indentation in Python", "team style", "all Python files")
    new = memdir.remember_feedback(md, "Never use tabs for indentation in Python", "the team switched to spaces", "all Python files")
    assert new.path != old.path
    assert [e.path for e in md.list("feedback/")] == [new.path]
    retired = md.read("archive/" + old.path)
    assert retired.meta["superseded_by"] == new.path and "contradicted by the feedback" in retired.meta["reason"]
    assert "archive/feedback" not in md.index()


def test_feedback_tool(md: memdir.Memdir) -> None:
    from memdir.faces import tools

    r = tools.handle(md, "remember_feedback", {"rule": "Reply in French", "why": "the user asked",
                                               "how_to_apply": "every answer"})
    assert not r.is_error and r.data is not None and r.data["path"] == "feedback/reply-in-french.md"
    bad = tools.handle(md, "remember_feedback", {"rule": "x"})
    assert bad.is_error
