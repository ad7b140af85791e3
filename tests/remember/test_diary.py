"""The diary: a month of sessions driven by a fake clock, on every backend, with roll-up workers racing."""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from conftest import Backend

import memdir
from memdir.remember import diary
from memdir.remember.summarize import Digest, Extractive, SessionSummary
from memdir.remember.transcripts import Transcript

UTC = dt.UTC
# deleting past retention is a setting one makes (the default keeps everything); the month below sets it
KEEP_A_MONTH = diary.Retention(sessions=1, days=30, weeks=12, months=12)


def at(day: dt.date, hour: int) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


def session_text(day: dt.date, part: str) -> str:
    return (f"User: Tune the cache for report {day:%d}{part}. I prefer short TTLs.\n"
            f"Assistant: Let's go with a 60 second TTL. The warmup job failed on {day:%b %d}.\n"
            f"User: We still need to check the eviction metrics {part}.\n")


@dataclass
class Racing:
    """The extractive summariser, holding each call until the other worker reaches it too (so both really race)."""

    barrier: threading.Barrier
    name: str = "racing"
    usage: Counter[str] = field(default_factory=Counter)

    def _meet(self) -> None:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            pass

    def session(self, transcript: Transcript, *, date: str, limit: int) -> SessionSummary:
        return Extractive().session(transcript, date=date, limit=limit)

    def digest(self, period: str, label: str, items: Sequence[Digest], *, limit: int) -> Digest:
        self._meet()
        return Extractive().digest(period, label, items, limit=limit)


def race(backend: Backend, now: dt.datetime) -> list[diary.Report]:
    """Two workers, each with its own connection, run `rollup --due` at the same moment."""
    from memdir.stores.s3 import S3Store

    assert S3Store.lease_seconds == 30.0  # the default lease: no other test's short one leaks in
    # However slow the machine, each waits for the other at every summary, until the other has finished
    # (then the barrier is broken and nobody waits): never a timeout that a loaded machine could outlast.
    barrier = threading.Barrier(2, timeout=600)
    reports: list[diary.Report] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with backend.open(writes_per_minute=0) as md:
                reports.append(diary.rollup(md, due=True, now=now, summarizer=Racing(barrier), retention=KEEP_A_MONTH))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            barrier.abort()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return reports


def files(md: memdir.Memdir) -> list[str]:
    return [e.path for e in md.list()]


def s(day: int, month: int = 11) -> list[str]:
    return [f"2026-{month:02d}-{day:02d}-090000-d{month:02d}{day:02d}a.md", f"2026-{month:02d}-{day:02d}-150000-d{month:02d}{day:02d}b.md"]


def dailies(first: int, last: int, month: int = 11) -> list[str]:
    return [f"2026-{month:02d}-{d:02d}.md" for d in range(first, last + 1)]


CHECKPOINTS = {
    # the first run: yesterday's day, its ISO week (W44, Thursday in October) and October all close at once
    dt.date(2026, 11, 2): ["archive/diary/2026-11-01.md", "archive/diary/2026-W44.md",
                           *("archive/sessions/" + x for x in s(1)), "diary/2026-10.md", *("sessions/" + x for x in s(2))],
    dt.date(2026, 11, 4): [*("archive/diary/" + x for x in ["2026-11-01.md", "2026-W44.md"]),
                           *("archive/sessions/" + x for x in s(3)), "diary/2026-10.md", "diary/2026-11-02.md",
                           "diary/2026-11-03.md", *("sessions/" + x for x in s(4))],
    # Monday: Sunday's day, then week 45 folds its dailies
    dt.date(2026, 11, 9): [*("archive/diary/" + x for x in dailies(1, 8)), "archive/diary/2026-W44.md",
                           *("archive/sessions/" + x for x in s(8)), "diary/2026-10.md", "diary/2026-W45.md",
                           *("sessions/" + x for x in s(9))],
    # December 1: November (weeks 45-48, by their Thursdays) folds its weeklies; week 49 is still open
    dt.date(2026, 12, 1): [*("archive/diary/" + x for x in dailies(1, 29)),
                           *(f"archive/diary/2026-W{w}.md" for w in range(44, 49)),
                           *("archive/sessions/" + x for x in s(30)), "diary/2026-10.md", "diary/2026-11-30.md",
                           "diary/2026-11.md", *("sessions/" + x for x in s(1, 12))],
    # retention: the daily of November 1 is 30 days past its day
    dt.date(2026, 12, 2): [*("archive/diary/" + x for x in dailies(2, 29)),
                           *(f"archive/diary/2026-W{w}.md" for w in range(44, 49)),
                           *("archive/sessions/" + x for x in s(1, 12)), "diary/2026-10.md", "diary/2026-11-30.md",
                           "diary/2026-11.md", "diary/2026-12-01.md", *("sessions/" + x for x in s(2, 12))],
}
RACES = {dt.date(2026, 11, 2), dt.date(2026, 11, 9), dt.date(2026, 12, 1), dt.date(2026, 12, 2)}


def test_a_month_of_sessions_rolls_up_exactly_once(backend: Backend) -> None:
    with backend.open(writes_per_minute=0) as md:
        day = dt.date(2026, 11, 1)
        while day <= dt.date(2026, 12, 2):
            if day in RACES:
                reports = race(backend, at(day, 4))
                steps = [st for r in reports for st in r.steps]
                assert not [st for st in steps if st.status == "failed"], steps
                done = Counter(st.path for st in steps if st.status == "done")
                assert all(n == 1 for n in done.values()), done  # each roll-up by one worker only
                assert any(st.status == "raced" for st in steps), steps  # ...and the other one really tried
            else:
                report = diary.rollup(md, due=True, now=at(day, 4), retention=KEEP_A_MONTH)
                assert not report.failed and not report.needs_yes
            for hour, part in ((9, "a"), (15, "b")):
                memdir.capture(md, f"d{day:%m%d}{part}", session_text(day, part), at=at(day, hour))
            if day in CHECKPOINTS:
                assert files(md) == sorted(CHECKPOINTS[day]), day
            day += dt.timedelta(days=1)
        created = Counter(r.path for r in md.history() if r.op == "write" and r.old is None and r.path.startswith("diary/"))
        assert created and all(n == 1 for n in created.values()), created
        nov = md.read("diary/2026-11.md")
        assert nov.type == "diary" and nov.body.count("\n- ") == 3  # three bullets of themes
        assert nov.meta["folded"] == ["2026-W45", "2026-W46", "2026-W47", "2026-W48"]
        daily = md.read("diary/2026-11-30.md")
        assert daily.meta["sessions"] == ["d1130a", "d1130b"]
        assert daily.body.split("\n\n", 1)[1].startswith("Learned: The user prefers short TTLs.")  # learnings first
        week = md.read("archive/diary/2026-W45.md")
        assert week.meta["folded"] == [d[:-3] for d in dailies(2, 8)]
        assert "archive/" not in "".join(ln for ln in md.index().splitlines() if not ln.startswith("- [archive/]"))


def test_due_is_a_no_op_the_second_time_and_dry_run_changes_nothing(md: memdir.Memdir) -> None:
    day = dt.date(2026, 11, 30)
    memdir.capture(md, "a", session_text(day, "a"), at=at(day, 9))
    plan = diary.rollup(md, due=True, now=at(day + dt.timedelta(days=1), 4), dry_run=True)
    assert [(st.kind, st.path, st.status) for st in plan.steps] == [("day", "diary/2026-11-30.md", "planned")]
    assert files(md) == ["sessions/2026-11-30-090000-a.md"]
    first = diary.rollup(md, due=True, now=at(day + dt.timedelta(days=1), 4))
    assert [st.status for st in first.steps] == ["done"]
    again = diary.rollup(md, due=True, now=at(day + dt.timedelta(days=1), 5))
    assert again.steps == []


def test_a_late_session_is_folded_into_its_existing_daily(md: memdir.Memdir) -> None:
    day = dt.date(2026, 11, 30)
    memdir.capture(md, "a", session_text(day, "a"), at=at(day, 9))
    diary.rollup(md, due=True, now=at(day + dt.timedelta(days=1), 4))
    memdir.capture(md, "late", "User: One more thing: I prefer tabs in Makefiles.\n", at=at(day, 23))
    diary.rollup(md, due=True, now=at(day + dt.timedelta(days=1), 5))
    m = md.read("diary/2026-11-30.md")
    assert m.meta["sessions"] == ["a", "late"]
    assert m.meta["learned"] == ["The user prefers short TTLs (session a, line 1)",
                                 "The user prefers tabs in Makefiles (session late, line 1)"]  # where each came from
    assert files(md) == ["archive/sessions/2026-11-30-090000-a.md", "archive/sessions/2026-11-30-230000-late.md",
                         "diary/2026-11-30.md"]


def test_a_session_captured_again_after_its_roll_up_is_counted_once(md: memdir.Memdir) -> None:
    """Issue 20 item 13: PreCompact, the nightly roll-up, then SessionEnd: the daily listed sessions: [s1, s1]."""
    from memdir.remember import capture

    day = dt.date(2026, 11, 30)
    memdir.capture(md, "s1", session_text(day, "a"), at=at(day, 22), event="PreCompact:auto")
    diary.rollup(md, due=True, now=at(day + dt.timedelta(days=1), 4))
    memdir.capture(md, "s1", session_text(day, "a") + "User: And I prefer tabs in Makefiles.\n", at=at(day, 23),
                   event="SessionEnd")
    diary.rollup(md, due=True, now=at(day + dt.timedelta(days=1), 5))
    m = md.read("diary/2026-11-30.md")
    assert m.meta["sessions"] == ["s1"]
    assert m.meta["learned"] == ["The user prefers short TTLs (session s1, line 1)",
                                 "The user prefers tabs in Makefiles (session s1, line 4)"]
    assert m.meta["folded"] == ["2026-11-30-220000-s1", "2026-11-30-230000-s1"]  # both records, each once
    h = capture.health(md, now=at(day + dt.timedelta(days=1), 6))
    assert h.captured == 1 and h.last_capture is not None and h.last_capture.path.endswith("230000-s1.md")


def test_explicit_periods_and_retention_settings(md: memdir.Memdir) -> None:
    for d in (2, 3):
        memdir.capture(md, f"s{d}", session_text(dt.date(2026, 11, d), "a"), at=at(dt.date(2026, 11, d), 9))
    report = diary.rollup(md, day_label="2026-11-02", now=at(dt.date(2026, 11, 3), 4))
    assert [st.path for st in report.steps] == ["diary/2026-11-02.md"]
    keep = diary.Retention(sessions=0)
    diary.rollup(md, due=True, now=at(dt.date(2026, 12, 30), 4), retention=keep)
    assert "archive/sessions/2026-11-02-090000-s2.md" in files(md)  # 0 keeps forever
    with pytest.raises(memdir.InvalidArgument, match="give one such as 2026-W48"):
        diary.rollup(md, week="week 48")
    with pytest.raises(memdir.InvalidArgument, match="give one of"):
        diary.rollup(md, due=True, day_label="2026-11-02")
    with pytest.raises(memdir.InvalidArgument, match="whole number"):
        diary.Retention.load({"days": "soon"}, {})
    assert diary.Retention.load({"days": 7}, {"MEMDIR_DIARY_WEEKS": "4"}) == diary.Retention(days=7, weeks=4)


def test_all_tenants_of_a_folder(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path)) / "memory"
    for tenant in (None, "acme", "globex"):
        with memdir.open(root, tenant=tenant) as md:
            memdir.capture(md, "s", session_text(dt.date(2026, 11, 30), "a"), at=at(dt.date(2026, 11, 30), 9))
    assert diary.tenants(str(root)) == [None, "acme", "globex"]


def test_rollup_can_consolidate_after_but_only_proposes(md: memdir.Memdir) -> None:
    """Issue 20 item 1: a roll-up runs unattended, so its consolidation is a proposal for a person to apply."""
    md.write("user/a.md", "Oat milk flat white every single morning.\n", type="user")
    md.write("user/b.md", "Oat milk flat white every single morning!\n", type="user")
    planned = diary.rollup(md, due=True, dry_run=True, consolidate=True)
    assert [(st.kind, st.label, st.status) for st in planned.steps] == [("consolidate", "merge", "planned")]
    proposed = diary.rollup(md, due=True, consolidate=True)
    assert [(st.kind, st.path, st.folded, st.status) for st in proposed.steps] == [
        ("consolidate", "user/a.md", ("user/b.md",), "proposed")]
    assert [e.path for e in md.list("user/")] == ["user/a.md", "user/b.md"]


@pytest.mark.parametrize("name", ["sqlite", "s3"])
def test_all_tenants_of_a_database_or_bucket(name: str, request: pytest.FixtureRequest, tmp_path: object) -> None:
    from pathlib import Path

    from conftest import make_backend

    backend = make_backend(name, request, Path(str(tmp_path)))
    for tenant in ("acme", "globex"):
        with backend.open(tenant) as md:
            memdir.capture(md, "s", session_text(dt.date(2026, 11, 30), "a"), at=at(dt.date(2026, 11, 30), 9))
    assert diary.tenants(backend.location) == ["acme", "globex"]
    for tenant in diary.tenants(backend.location):
        with memdir.open(backend.location, tenant=tenant) as md:
            report = diary.rollup(md, due=True, now=at(dt.date(2026, 12, 1), 4))
            assert [st.path for st in report.steps] == ["diary/2026-11-30.md"]


def test_all_tenants_of_a_postgresql_database(request: pytest.FixtureRequest) -> None:
    """The app role lists the tenants (row-level security hides their rows, not their names), and each rolls up."""
    pg = request.getfixturevalue("postgres")
    _, app = pg.fresh_database(f"tenants{os.getpid()}")
    assert diary.tenants(app) == []
    for tenant in ("globex", "acme", "acme"):
        with memdir.open(app, tenant=tenant) as md:
            memdir.capture(md, f"s-{tenant}", session_text(dt.date(2026, 11, 30), "a"), at=at(dt.date(2026, 11, 30), 9))
    assert diary.tenants(app) == ["acme", "globex"]
    for tenant in diary.tenants(app):
        with memdir.open(app, tenant=tenant) as md:
            report = diary.rollup(md, due=True, now=at(dt.date(2026, 12, 1), 4))
            assert [st.path for st in report.steps] == ["diary/2026-11-30.md"]


@pytest.mark.parametrize("name", ["fs", "sqlite"])
def test_two_cron_processes_at_once_roll_up_once(name: str, request: pytest.FixtureRequest, tmp_path: object) -> None:
    import subprocess
    import sys
    from pathlib import Path

    from conftest import make_backend

    backend = make_backend(name, request, Path(str(tmp_path)))
    with backend.open() as md:
        for d in range(23, 31):
            for part in ("a", "b"):
                day_ = dt.date(2026, 11, d)
                memdir.capture(md, f"d{day_:%m%d}{part}", session_text(day_, part), at=at(day_, 9 if part == "a" else 15))
    command = [sys.executable, "-m", "memdir", "--root", backend.location, "rollup", "--due", "--yes", "--now",
               "2026-12-01T04:00:00Z", "--json"]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with backend.open() as md:
        assert files(md) == sorted(  # the week and November closed too; every folded file is kept
            [f"archive/diary/{x}" for x in [*dailies(23, 29), "2026-W48.md"]]
            + [f"archive/sessions/{x}" for d in range(23, 31) for x in s(d)] + ["diary/2026-11-30.md", "diary/2026-11.md"])
        created = Counter(r.path for r in md.history() if r.op == "write" and r.old is None and r.path.startswith("diary/"))
        assert sorted(created) == [f"diary/{x}" for x in [*dailies(23, 30), "2026-11.md", "2026-W48.md"]]
        assert set(created.values()) == {1}


def test_a_session_another_worker_moves_after_it_was_listed_is_a_race_not_an_error(
    root: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `make test` caught once in CI: the other cron process archived a session between this
    one's listing and its read. The step is `raced`, and the day is rolled up once."""
    from pathlib import Path

    day_ = dt.date(2026, 11, 30)
    with memdir.open(Path(str(root))) as md, memdir.open(Path(str(root))) as other:
        memdir.capture(md, "late", session_text(day_, "a"), at=at(day_, 9))
        real = md.read

        def read_after_the_other_worker(path: str, *args: object, **kwargs: object) -> memdir.Memory:
            if path.startswith("sessions/") and not other.list("diary/"):
                diary.rollup(other, due=True, now=at(dt.date(2026, 12, 1), 4))
            return real(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(md, "read", read_after_the_other_worker)
        report = diary.rollup(md, due=True, now=at(dt.date(2026, 12, 1), 4))
        assert [(st.kind, st.label, st.status) for st in report.steps] == [("day", "2026-11-30", "raced")]
        monkeypatch.undo()
        assert [e.path for e in md.list("diary/")] == ["diary/2026-11-30.md"]


def test_a_worker_whose_lease_another_writer_took_reports_raced(
    request: pytest.FixtureRequest, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The S3 worker froze past its lease (a loaded machine, a paused VM) and another writer took the lease over:
    its commit renews the lease first, finds it taken and commits nothing. The step is `raced`, not an error."""
    import json
    import time
    from pathlib import Path

    from conftest import make_backend

    backend = make_backend("s3", request, Path(str(tmp_path)))
    day_ = dt.date(2026, 11, 30)
    with backend.open() as md:
        memdir.capture(md, "s", session_text(day_, "a"), at=at(day_, 9))
        store: Any = md.store
        real, taken = store._put, []

        def taken_meanwhile(key: str, data: bytes, **kw: Any) -> str:
            if key == "lock" and "IfMatch" in kw and not taken:  # the commit's renewal, after the other writer took it
                taken.append(real("lock", json.dumps({"owner": "another", "expires": time.time() + 60}).encode()))
            return str(real(key, data, **kw))

        monkeypatch.setattr(store, "_put", taken_meanwhile)
        report = diary.rollup(md, due=True, now=at(day_ + dt.timedelta(days=1), 4))
        assert [(st.kind, st.label, st.status) for st in report.steps] == [("day", "2026-11-30", "raced")]
        assert "another writer took the write lock" in report.steps[0].detail
        monkeypatch.undo()
        store._delete("lock")  # the other writer finished
        assert files(md) == ["sessions/2026-11-30-090000-s.md"]  # nothing was committed
        again = diary.rollup(md, due=True, now=at(day_ + dt.timedelta(days=1), 5))
        assert [(st.label, st.status) for st in again.steps] == [("2026-11-30", "done")]


def test_settings_come_from_memdir_toml(root: object) -> None:
    from pathlib import Path

    folder = Path(str(root))
    with memdir.open(folder) as md:
        (folder / "memdir.toml").write_text("max_lines = 150\n\n[diary]\nsessions = 3\n\n[summarizer]\nprovider = \"extractive\"\n")
        assert diary.rollup(md, due=True).steps == []
    with memdir.open(folder) as md:  # the limits loader leaves the other tables to their modules
        assert md.limits.max_lines == 150
        from memdir.remember.capture import settings

        assert diary.Retention.load(settings(md, "diary"), {}) == diary.Retention(sessions=3)
        (folder / "memdir.toml").write_text("[diary]\nsesions = 3\n")
        with pytest.raises(memdir.InvalidArgument, match="unknown setting 'sesions'"):
            diary.rollup(md, due=True)
