"""The diary a person would keep without a model: a month of realistic sessions rolled up by the extractive summariser."""

import datetime as dt
import re

import pytest

from memdir.remember import notes
from memdir.remember.summarize import Digest, Extractive
from memdir.remember.transcripts import Transcript, Turn

# A month of a developer's sessions with a coding agent, written for this test: the same few threads come back
# day after day in other words, with the courtesy, corrections and preferences such sessions carry.
THREADS = (
    ("please fix the staging webhook signature mismatch", "The signature check failed because staging used the old secret."),
    ("can you fix the staging webhook signature mismatch again?", "Rotated the staging secret; the webhook test failed before."),
    ("add a retry to the nightly export job", "Added two retries with backoff; the export job timed out at 02:00."),
    ("the nightly export job needs a retry", "The export job retried once and passed."),
    ("write the release notes for 2.4", "Drafted the release notes from the merged pull requests."),
    ("bump pgbouncer pool size to 40 on staging", "Raised the pool size; connections were exhausted at peak."),
)
PLEASANTRIES = ("Thanks.", "Great, that works!", "Perfect, thank you.", "ok", "Good morning!", "LGTM", "Cheers!")
PREFERENCES = ("I prefer updates by email, not chat.", "No, I don't like squash merges; keep the history.",
               "I always run the tests before pushing.", "Please never use dark themes in the dashboards.")


def session(day: int) -> Transcript:
    ask, answer = THREADS[day % len(THREADS)]
    turns = [Turn("user", PLEASANTRIES[day % len(PLEASANTRIES)]), Turn("user", ask), Turn("assistant", answer)]
    if day % 3 == 0:
        turns.append(Turn("user", PREFERENCES[day % len(PREFERENCES)]))
    if day % 5 == 0:
        turns.append(Turn("assistant", "Still open: the flaky upload test is waiting on the vendor fix."))
    turns.append(Turn("user", PLEASANTRIES[(day + 3) % len(PLEASANTRIES)]))
    return Transcript(tuple(turns), "messages")


@pytest.fixture(scope="module")
def month() -> dict[str, list[Digest]]:
    s = Extractive()
    first = dt.date(2026, 11, 2)  # a Monday
    days = []
    for d in range(28):
        date = first + dt.timedelta(days=d)
        records = [s.session(session(d * 2 + n), date=date.isoformat(), limit=2000).digest() for n in range(2)]
        days.append(s.digest("day", date.isoformat(), records, limit=1200))
    weeks = [s.digest("week", f"2026-W{45 + w}", days[w * 7:(w + 1) * 7], limit=600) for w in range(4)]
    return {"days": days, "weeks": weeks, "month": [s.digest("month", "2026-11", weeks, limit=600)]}


def lines(d: Digest) -> list[str]:
    return [x for k in ("learned", "decided", "worked_on", "broke", "open") for x in getattr(d, k)]


def test_a_month_of_sessions_reads_like_notes(month: dict[str, list[Digest]]) -> None:
    everything = [d for group in month.values() for d in group]
    for d in everything:
        items = [notes.count_of(x)[0].lower() for x in lines(d)]
        assert len(items) == len(set(items)), f"a line repeated in {d.text!r}"
        for x in lines(d):
            assert not notes.pleasantry(x) and not re.search(r"\b(thanks|thank you|lgtm|cheers)\b", x, re.I), x
        for x in d.learned:
            assert x.startswith("The user") and not notes.first_person(x), x
        assert not re.search(r"\b(thanks|thank you|lgtm|cheers)\b", d.text, re.I), d.text
        assert not notes.first_person(d.text.replace("I/O", "")), d.text


def test_repeats_merge_with_a_count_and_each_period_has_its_shape(month: dict[str, list[Digest]]) -> None:
    week = month["weeks"][0]
    assert "\n" not in month["days"][0].text  # a day is one paragraph
    assert any(re.search(r"staging webhook signature mismatch — \d+ days", x) for x in week.worked_on)
    assert 2 <= len(re.findall(r"[.!?](?:\s|$)", week.text)) <= 3  # a week is two or three sentences
    bullets = month["month"][0].text.splitlines()
    assert len(bullets) == 3 and all(b.startswith("- ") for b in bullets)
    named = " ".join(b.split(":", 1)[0] for b in bullets)
    assert "webhook" in named or "signature" in named  # a theme is named by what was said, not by a first word
    assert not re.search(r"^- (please|can|fix|add):", month["month"][0].text, re.M)


def test_third_person_pleasantries_and_folding_by_example() -> None:
    assert notes.third_person("I prefer updates by email") == "The user prefers updates by email"
    assert notes.third_person("No, I don't like squash merges") == "The user doesn't like squash merges"
    assert notes.third_person("call me Sam") == "The user goes by Sam"
    assert notes.third_person("my timezone is Europe/Berlin") == "The user's timezone is Europe/Berlin"
    assert notes.third_person("please never use dark themes") == "The user wants the agent to never use dark themes"
    assert notes.third_person("remember that staging is eu-west-1") == "The user noted that staging is eu-west-1"
    assert notes.third_person("from now on, run ruff first") == "The user wants the agent to run ruff first from now on"
    assert [notes.pleasantry(t) for t in ("Thanks.", "Great, that works!", "thanks, now fix the upload test")] == \
        [True, True, False]
    folded = notes.across([["please fix the staging webhook", "fix the staging webhook again"],
                           ["fix the staging webhook — 3 days", "Thanks."]])
    assert [i.render() for i in folded] == ["fix the staging webhook — 4 days"]
    one_day = notes.across([["fix the staging webhook"], ["fix the staging webhook"]], add=False)  # two sessions
    assert [i.render() for i in one_day] == ["fix the staging webhook"]
