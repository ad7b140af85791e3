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
    assert m.description == "Please migrate the billing tables."  # the first request
    # learnings: the user's own words in the third person, naming the session and line they came from
    assert m.meta["preferences"] == ["The user prefers small migrations (session s-42, line 1)"]
    assert m.meta["corrections"] == ["The user does not want the agent to lock the whole table (session s-42, line 3)"]
    # the assistant's prose is no fact: "Let's go with three steps" decides nothing, "failed" in it broke nothing
    assert "decisions" not in m.meta and "broke" not in m.meta
    # relative dates resolved against the session's date, not today's
    assert m.meta["open"] == ["They still need to rerun it next Thursday (2026-12-03)."]
    assert "## Open threads\n- They still need to rerun it next Thursday (2026-12-03).\n" in m.body


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
    assert key not in text and "# [line removed: it held what looks like an AWS access key id]" in text


@pytest.mark.parametrize(("source", "reason"), [
    (Path("/nonexistent/session.jsonl"), "missing"),
    (b"\xff\xfe", "unreadable"),
    ("", "empty"),
])
def test_a_skipped_capture_is_recorded_with_its_reason(md: memdir.Memdir, source: object, reason: str) -> None:
    done = memdir.capture(md, "s-9", source, at="2026-11-30T09:00:00Z")
    assert (done.status, done.reason) == ("skipped", reason)
    m = md.read("sessions/skipped/2026-11-30-090000-s-9.md")
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
    assert m.meta["status"] == "captured"
    assert m.meta["preferences"] == ["The user prefers small migrations (session s-7, line 1)"]  # of the kept copy
    assert m.meta["open"] == ["They still need to rerun it next Thursday (2026-12-03)."]


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


# ---------------------------------------------------------------- hostile and broken inputs (issue 20)

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "QWERTYUIOPASDFGH"
ANTHROPIC = "sk-ant-api03-" + "Zx81Qw27Er56Ty90Ui34Op12" * 3
REAL = DATA / "real" / "claude-code" / "transcripts"


def files_holding(root: Path, *needles: str) -> list[str]:
    """Every file under `root` (the journal and the catalog included) holding one of `needles`."""
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and any(n.encode() in p.read_bytes() for n in needles))


def test_credential_shaped_metadata_never_reaches_the_record(md: memdir.Memdir, root: Path, tmp_path: Path) -> None:
    """Item 7: the branch, folder, transcript path and session id went into the record as they were, the
    guard refused the whole write, and the capture raised with nothing written."""
    folder = tmp_path / f"keys-{AWS}"
    folder.mkdir()
    transcript = folder / "t.jsonl"
    lines = CC.read_text().replace('"gitBranch":"main"', f'"gitBranch":"{GITHUB}"').replace("/home/u/proj", f"/home/u/{AWS}")
    transcript.write_text(lines)
    done = memdir.capture(md, ANTHROPIC, transcript, event="SessionEnd")
    assert done.status == "captured" and done.path is not None
    assert done.path.startswith("sessions/2026-11-30-090300-redacted.") and ANTHROPIC not in done.session
    meta = md.read(done.path).meta
    assert meta["branch"] == "[removed: it held what looks like a GitHub token]"
    assert meta["cwd"] == meta["transcript"] == "[removed: it held what looks like an AWS access key id]"
    assert meta["session"] == "[removed: it held what looks like an Anthropic API key]"
    assert meta["preferences"] == ["The user prefers small commits (session [removed: it held what looks like an "
                                   "Anthropic API key], line 2)"]  # the session itself is all there
    assert cap.find(md, ANTHROPIC) == done.path
    again = memdir.capture(md, ANTHROPIC, transcript, event="SessionEnd")
    assert (again.path, again.change) == (done.path, "unchanged")  # one record per session still
    md.close()
    assert files_holding(root, GITHUB, AWS, ANTHROPIC) == []


def test_a_capture_the_guard_would_refuse_still_leaves_a_trace(md: memdir.Memdir) -> None:
    """Item 7: a skip whose reason names a credential-shaped path was refused too: exit 1, nothing for stats."""
    done = memdir.capture(md, "s-1", Path(f"/tmp/{AWS}/gone.jsonl"), at="2026-11-30T09:00:00Z")
    assert (done.status, done.reason, done.path) == ("skipped", "missing", "sessions/skipped/2026-11-30-090000-s-1.md")
    assert AWS not in md.read(done.path).text
    h = cap.health(md, now=dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC))
    assert [s.reason for s in h.skipped] == ["missing"]


def test_a_record_a_limit_refuses_still_leaves_a_trace(tmp_path: Path) -> None:
    """Item 7: whatever the planner refuses (the guard, a limit), the attempt is recorded, never lost silently."""
    with memdir.open(tmp_path / "small", max_lines=10) as small:  # a record holds its lists twice: never 10 lines
        done = memdir.capture(small, "s-1", TEXT, at="2026-11-30T09:00:00Z")
        assert (done.status, done.reason) == ("skipped", "refused")
        m = small.read(done.path or "")
        assert m.meta["status"] == "skipped" and "the limit is 10" in m.body


@pytest.mark.parametrize("ids", [("team a/b", "team-a-b"), ("team.a", "team-a"), ("x" * 70, "x" * 64),
                                 ("a/b", "a b")])
def test_session_ids_never_share_a_record(md: memdir.Memdir, ids: tuple[str, str]) -> None:
    """Item 15: ids that sanitise to the same name shared one record, the second capture replacing the first."""
    first = memdir.capture(md, ids[0], "User: the first session, about invoices\n", at="2026-11-30T09:00:00Z")
    second = memdir.capture(md, ids[1], "User: the second session, about refunds\n", at="2026-11-30T09:00:00Z")
    assert first.path != second.path and first.change == second.change == "created"
    assert [md.read(p).meta["session"] for p in (first.path or "", second.path or "")] == list(ids)
    assert cap.find(md, ids[0]) == first.path and cap.find(md, ids[1]) == second.path
    unchanged = [i for i in ids if cap.safe_id(i) == i]
    assert all(f"-{i}.md" in (first.path or "") + (second.path or "") for i in unchanged)  # a plain id is its own name


def test_a_record_named_the_old_way_is_still_found(md: memdir.Memdir) -> None:
    md.write("sessions/2026-11-30-090000-team-a-b.md", "---\ntype: session\nsession: team a/b\nstatus: captured\n---\nOld.\n")
    done = memdir.capture(md, "team a/b", "User: the same session, later\n", at="2026-11-30T10:00:00Z")
    assert (done.path, done.change) == ("sessions/2026-11-30-090000-team-a-b.md", "updated")
    assert cap.find(md, "team-a-b") is None  # whose it is, its frontmatter says


@pytest.mark.parametrize(("name", "turns", "skipped"), [
    ("-home-marta-household/9a0e2b57-c6d1-4f83-b0a9-7e5d24f1c608.jsonl", 3, 1),  # the last line cut inside 温
    ("-home-dana-src-tern/fd1e6b22-4a90-4c3e-9b17-58e2d0c6a3f1.jsonl", 3, 1),  # one line 2,400 levels deep
])
def test_one_bad_line_never_loses_a_session(md: memdir.Memdir, name: str, turns: int, skipped: int) -> None:
    """Item 14: a last line cut inside a UTF-8 character made the whole transcript "not UTF-8"; a line nested
    deeper than Python's recursion limit raised RecursionError and nothing was written."""
    done = memdir.capture(md, "s-1", REAL / name)
    assert done.status == "captured", done
    meta = md.read(done.path or "").meta
    assert (meta["turns"], meta["skipped_lines"]) == (turns, skipped)


def test_a_bad_line_in_the_middle_is_skipped_and_counted(md: memdir.Memdir) -> None:
    good = CC.read_bytes().split(b"\n")
    data = b"\n".join([*good[:3], b'{"type": "user", "message": "caf\xc3', b"[" * 5000 + b"]" * 5000, *good[3:]])
    done = memdir.capture(md, "s-1", data)
    assert done.status == "captured"
    meta = md.read(done.path or "").meta
    assert meta["skipped_lines"] == 3  # the cut last line too
    assert meta["preferences"] == ["The user prefers small commits (session s-1, line 2)"]


def test_the_transcript_cap_is_set_in_memdir_toml(md: memdir.Memdir, root: Path, tmp_path: Path) -> None:
    (root / "memdir.toml").write_text("[capture]\nmax_transcript_mb = 0.001\n")
    big = tmp_path / "big.txt"
    big.write_text("User: a long session about invoices.\n" * 100)
    with memdir.open(root) as fresh:  # a table the memory itself accepts
        done = memdir.capture(fresh, "s-1", big, at="2026-11-30T09:00:00Z")
    assert (done.status, done.reason) == ("skipped", "too-large")
    assert cap.transcript_cap(md, {"MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB": "2"}) == 2 * 2**20
    (root / "memdir.toml").write_text("[capture]\nmax_transcript_bytes = 10\n")
    with pytest.raises(memdir.InvalidArgument, match="unknown setting 'max_transcript_bytes'; known: max_transcript_mb"):
        cap.transcript_cap(md, {})
    (root / "memdir.toml").unlink()
    with pytest.raises(memdir.InvalidArgument, match="MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB = '-1' is not valid"):
        cap.transcript_cap(md, {"MEMDIR_CAPTURE_MAX_TRANSCRIPT_MB": "-1"})


def test_cli_capture_from_stdin_skips_a_line_that_is_not_utf8(root: Path) -> None:
    from click.testing import CliRunner

    from memdir.faces.cli import main

    data = TEXT.encode() + b"User: caf\xc3"
    run = CliRunner().invoke(main, ["--root", str(root), "capture", "s-1", "-", "--at", "2026-11-30T09:15:00Z"], input=data)
    assert (run.exit_code, run.stdout) == (0, "created sessions/2026-11-30-091500-s-1.md\n")
    with memdir.open(root) as md:
        assert md.read("sessions/2026-11-30-091500-s-1.md").meta["skipped_lines"] == 1


def test_a_summariser_that_cannot_be_loaded_keeps_the_session_raw(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 2: a summariser failure always leaves the raw session to retry, loading it included."""
    monkeypatch.setenv("MEMDIR_SUMMARIZER", "anthropic")  # and no model named
    done = memdir.capture(md, "s-1", TEXT, at="2026-11-30T09:00:00Z")
    assert (done.status, done.reason) == ("pending", "summariser error: the anthropic summariser needs a model: set "
                                                     "model in [summarizer] or MEMDIR_SUMMARIZER_MODEL")
    monkeypatch.delenv("MEMDIR_SUMMARIZER")
    later = memdir.capture(md, "s-2", "User: the next session\n", at="2026-11-30T10:00:00Z")  # retries s-1 first
    assert later.status == "captured" and md.read(done.path or "").meta["status"] == "captured"
