"""Retention never deletes history by surprise (issue 21, item 6): a backfilled year of sessions, rolled up.

Before, `memdir rollup --due` over a year of session records brought in at once deleted 112 files as
"past retention": every session record, daily and weekly, and the older monthlies.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner

import memdir
from memdir.faces.cli import main
from memdir.remember import diary, timeline

UTC = dt.UTC
NOW = "2026-12-01T04:00:00Z"
FIRST = dt.date(2025, 12, 1)
MONTHS = ["2025-12", *(f"2026-{m:02d}" for m in range(1, 12))]


def backfill(md: memdir.Memdir) -> list[str]:
    """A session every third day for a year, as an import of old transcripts leaves them; their record names."""
    day, names = FIRST, []
    while day <= dt.date(2026, 11, 30):
        text = (f"User: Fix the flaky upload test for build {day:%Y%m%d}. I prefer pytest over unittest.\n"
                f"Assistant: The retry in upload_{day:%m%d} hid a timeout; I raised it to 30 seconds.\n")
        names.append(memdir.capture(md, f"s{day:%Y%m%d}", text, at=dt.datetime(day.year, day.month, day.day, 10, tzinfo=UTC)).path)
        day += dt.timedelta(days=3)
    return names


def rollup(root: Path, *args: str, now: str = NOW) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--root", str(root), "rollup", "--due", "--now", now, *args])
    return result.exit_code, result.stdout, result.stderr


def everything(md: memdir.Memdir) -> dict[str, bytes | None]:
    return {e.path: md.store.get(e.path).data for e in md.list()}  # type: ignore[union-attr]


def test_a_backfilled_year_asks_first_then_archives_everything_and_deletes_nothing(root: Path) -> None:
    with memdir.open(root) as md:
        sessions = backfill(md)
        before, seq = everything(md), md.history(limit=1)[0].seq
    assert len(sessions) == 122

    code, out, err = rollup(root)  # the cron line, the morning after the import: a plan, and nothing done
    assert code == 1
    assert err.startswith("error: nothing was done: this is a backfill, it would roll up 186 periods at once (more than 3); "
                          "check the plan above and run it again with --yes")
    lines = out.splitlines()
    assert lines[0] == "planned\tday\tdiary/2025-12-01.md (folds 1)"
    assert [ln.split("\t")[1] for ln in lines].count("week") == 52 and "planned\tmonth\tdiary/2026-11.md (folds 4)" in lines
    assert len(lines) == 186
    assert all(ln.startswith("planned\t") for ln in lines) and not any("retention" in ln for ln in lines)
    code, dry, _ = rollup(root, "--dry-run")
    assert code == 0 and dry == out
    code, as_json, _ = rollup(root, "--json")
    plan = json.loads(as_json)
    assert code == 1 and plan["needs_yes"].startswith("it would roll up 186 periods") and len(plan["steps"]) == 186
    with memdir.open(root) as md:
        assert everything(md) == before and md.history(limit=1)[0].seq == seq  # not one byte, not one record

    code, out, err = rollup(root, "--yes")
    assert code == 0, err
    assert out.count("done\tday\t") == 122 and out.count("done\tweek\t") == 52 and out.count("done\tmonth\t") == 12
    with memdir.open(root) as md:
        assert not [r for r in md.history() if r.op == "delete"]
        archived = [e.path for e in md.list("archive/sessions/")]
        assert archived == sorted("archive/sessions/" + p.rsplit("/", 1)[-1] for p in sessions)  # every record, kept
        assert "Fix the flaky upload test for build 20251201." in md.read(archived[0]).body  # readable as it was
        assert [e.path for e in md.list("diary/")] == [f"diary/{label}.md" for label in MONTHS]
        assert "archive/" not in "".join(ln for ln in md.index().splitlines() if not ln.startswith("- [archive/]"))
        hits = timeline.search_history(md, "build 20260304")  # the archive is searched with history
        assert ("archive/sessions/2026-03-04-100000-s20260304.md", "retired") in [(h.path, h.kind) for h in hits[:3]]
    assert rollup(root)[:2] == (0, "nothing to roll up\n")  # and the next night is an ordinary night


def test_deleting_past_retention_is_a_setting_and_never_takes_the_last_copy(root: Path) -> None:
    with memdir.open(root) as md:
        backfill(md)
    assert rollup(root, "--yes")[0] == 0
    with memdir.open(root) as md:
        md.delete("archive/diary/2026-W10.md")  # a weekly gone by hand: its dailies are now the week's only text
        kept = {e.path for e in md.list()}
    (root / "memdir.toml").write_text("[diary]\nsessions = 1\ndays = 30\nweeks = 12\nmonths = 12\n")

    later = "2027-01-15T04:00:00Z"  # the first monthly is past its 12 months too
    code, out, err = rollup(root, now=later)  # a year past retention at once is a backfill too
    assert code == 1 and "it would apply retention to" in err
    with memdir.open(root) as md:
        assert {e.path for e in md.list()} == kept
    code, out, err = rollup(root, "--yes", now=later)
    assert code == 0, err
    with memdir.open(root) as md:
        now = {e.path for e in md.list()}
        assert {p for p in kept - now if p.startswith("diary/")} == {"diary/2025-12.md"}  # archived, not deleted
        gone = kept - now - {"diary/2025-12.md"}
        assert gone and all(p.startswith(("archive/sessions/", "archive/diary/")) for p in gone)
        for path in gone:  # each deleted file's text lives on in the roll-up that folded it, or in the one above
            at = path
            while at not in now:
                assert at in kept, path  # each link of the chain existed when the file it folded was deleted
                d = diary.period_of_file(at) or diary.day(dt.date.fromisoformat(at.rsplit("/", 1)[-1][:10]))
                home = {"day": diary.week_of(d.first) if "/diary/" in at else d, "week": diary.month_of_week(d)}[d.kind]
                up = (f"diary/{home.label}.md", f"archive/diary/{home.label}.md")
                at = next((p for p in up if p in now), next((p for p in up if p in kept), ""))
        assert {"archive/diary/2026-03-04.md", "archive/diary/2026-03-07.md"} <= now  # no weekly: not deleted
        for label in [*MONTHS, "2026-11"]:  # a monthly is never deleted: the old ones moved under archive/
            assert f"diary/{label}.md" in now or f"archive/diary/{label}.md" in now, label
        assert "archive/diary/2025-12.md" in now and "diary/2025-12.md" not in now and "diary/2026-01.md" in now
        assert not [r for r in md.history() if r.op == "delete" and r.path.startswith("diary/")]
        deleted = {r.path for r in md.history() if r.op == "delete"}
        assert deleted == gone | {"archive/diary/2026-W10.md"}  # the one by hand, and what retention deleted
        first = sorted(deleted)[0]
        assert md.history(first)[0].old is not None and md.undo(first).path == first  # journaled: one undo away
