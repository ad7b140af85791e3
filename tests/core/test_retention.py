"""Bounded history: retention thins old versions, keeps every recent one and each file's newest, and says what is gone."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import Backend

import memdir
from memdir import Conflict, InvalidArgument, NotFound, model
from memdir.core import history
from memdir.remember import rollback, timeline

NOW = dt.datetime(2026, 6, 1, 12, tzinfo=dt.UTC)


def _at(monkeypatch: pytest.MonkeyPatch, when: dt.datetime) -> None:
    monkeypatch.setattr(model, "now_stamp", lambda: model.Stamp(when.strftime("%Y-%m-%dT%H:%M:%SZ")))


def test_retention_keeps_recent_versions_the_newest_older_ones_and_says_what_went(
        backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.open() as md:
        for day in range(20):  # versions 90 to 71 days ago
            _at(monkeypatch, NOW - dt.timedelta(days=90 - day))
            md.write("p.md", f"old version {day}\n")
        for day in range(5):  # and 5 in the last week
            _at(monkeypatch, NOW - dt.timedelta(days=5 - day))
            md.write("p.md", f"new version {day}\n")
        _at(monkeypatch, NOW - dt.timedelta(days=80))
        md.write("other.md", "written once, long ago\n")
        before = md.history("p.md")
        retention = history.Retention(days=30, versions=3)
        planned = history.compact(md.store, retention=retention, now=NOW, dry_run=True)
        assert md.history("p.md") == before and not planned.done
        done = history.compact(md.store, retention=retention, now=NOW)
        got = md.history("p.md")
        assert (done.dropped, done.kept, done.files) == (16, len(md.store.journal()), {"p.md": 17}) and done.done
        assert (planned.dropped, planned.kept, planned.files) == (done.dropped, done.kept, done.files)
        assert [r.new for r in got[:8]] == [r.new for r in before[:8]]  # 5 recent, 3 older
        assert got[8].op == "thinned" and got[8].old is None and got[8].new is None and len(got) == 9
        assert [r.op for r in md.history("other.md")] == ["write"]  # a file's newest change stays, however old
        assert timeline.read_as_of(md, "p.md", (NOW - dt.timedelta(days=72)).date()).body == "old version 18\n"
        with pytest.raises(NotFound, match="gone: its history before .* was thinned"):
            timeline.read_as_of(md, "p.md", (NOW - dt.timedelta(days=85)).date())
        with pytest.raises(Conflict, match="cannot be undone: its content is gone"):
            rollback.undo(md, [got[8].seq])
        assert md.undo("p.md").body == "new version 3\n"
        assert md.reconcile().clean


def test_compaction_runs_by_itself_and_keeps_undo(root, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(history, "EVERY", 8)
    with memdir.open(root) as md:
        text = "".join(f"- line {i} of a note that is rewritten again and again\n" for i in range(200))
        for i in range(20):
            md.write("note.md", text.replace(f"line {i} ", f"line {i}! "))
        forms = [f for (f,) in md.store.db.execute("SELECT form FROM journal ORDER BY seq")]  # type: ignore[attr-defined]
        assert all(f and f[0] in "-zwr" for f in forms)
        assert [r.seq for r in md.history("note.md")] == list(range(20, 0, -1))
        before = md.history("note.md")[0].old
        assert before is not None and md.undo("note.md").text == before.decode()


def test_the_history_setting_is_read_and_checked(root, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    with memdir.open(root) as md:
        (root / "memdir.toml").write_text("[history]\ndays = 7\nversions = 0\n")
        assert history.Retention.load(md.store) == history.Retention(days=7, versions=0)
        monkeypatch.setenv("MEMDIR_HISTORY_DAYS", "90")
        assert history.Retention.load(md.store).days == 90
        (root / "memdir.toml").write_text("[history]\nweeks = 2\n")
        with pytest.raises(InvalidArgument, match="unknown setting 'weeks'"):
            history.Retention.load(md.store)
