"""Relative dates get the date they mean, keeping the words; running it twice changes nothing."""

from __future__ import annotations

import datetime as dt

import pytest

import memdir
from memdir.dates import absolute, parse_when

MONDAY = dt.date(2026, 11, 30)


@pytest.mark.parametrize(("text", "want"), [
    ("see you next Thursday", "see you next Thursday (2026-12-03)"),
    ("it broke yesterday", "it broke yesterday (2026-11-29)"),
    ("ship it tomorrow", "ship it tomorrow (2026-12-01)"),
    ("Today we decided", "Today (2026-11-30) we decided"),
    ("review in two weeks", "review in two weeks (2026-12-14)"),
    ("3 days ago it worked", "3 days ago (2026-11-27) it worked"),
    ("last Friday", "last Friday (2026-11-27)"),
    ("this Wednesday", "this Wednesday (2026-12-02)"),
    ("next Monday", "next Monday (2026-12-07)"),
    ("next week", "next week (week of 2026-12-07)"),
    ("last month", "last month (2026-10)"),
    ("next year", "next year (2027)"),
    ("in a month", "in a month (2026-12-30)"),
    ("the day after tomorrow", "the day after tomorrow (2026-12-02)"),
    ("last night it crashed", "last night (2026-11-29) it crashed"),
])
def test_phrases_get_their_date(text: str, want: str) -> None:
    assert absolute(text, MONDAY) == want


def test_already_dated_code_and_plain_words_are_left_alone() -> None:
    text = "next Thursday (2026-12-03) and `run it tomorrow` and ```\ntomorrow\n``` and today's plan, in May"
    assert absolute(text, MONDAY) == text
    once = absolute("yesterday and next week", MONDAY)
    assert absolute(once, MONDAY + dt.timedelta(days=9)) == once


def test_month_arithmetic_clamps_to_the_last_day() -> None:
    assert absolute("in one month", dt.date(2026, 1, 31)) == "in one month (2026-02-28)"


def test_write_resolves_dates_unless_told_not_to(md: memdir.Memdir) -> None:
    today = dt.datetime.now(dt.UTC).date()
    m = md.write("project/a.md", "Demo tomorrow.\n")
    assert m.body == f"Demo tomorrow ({(today + dt.timedelta(days=1)).isoformat()}).\n"
    kept = md.write("project/b.md", "Demo tomorrow.\n", absolute_dates=False)
    assert kept.body == "Demo tomorrow.\n"
    appended = md.append("project/log.md", "deploy failed today")
    assert f"deploy failed today ({today.isoformat()})" in appended.body


def test_parse_when_reads_dates_times_and_ages() -> None:
    now = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)
    assert parse_when("7d", now=now) == dt.datetime(2026, 11, 23, 12, tzinfo=dt.UTC)
    assert parse_when("2026-03-01") == dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    assert parse_when("2026-03-01", end=True) == dt.datetime(2026, 3, 2, tzinfo=dt.UTC)
    assert parse_when("2026-03-01T10:00:00Z") == dt.datetime(2026, 3, 1, 10, tzinfo=dt.UTC)
    with pytest.raises(memdir.InvalidArgument, match="not a date or an age"):
        parse_when("last tuesday")
