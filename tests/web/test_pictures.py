"""The numbers behind the web page's pictures."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import memdir
from memdir.web import pictures


def test_activity_counts_changes_per_day_by_actor_and_type(tmp_path: Path) -> None:
    alice = memdir.open(tmp_path, actor="alice")
    agent = memdir.open(tmp_path, actor="agent")
    alice.write("user/profile.md", "Alice.\n", type="user")
    agent.write("project/a.md", "A.\n", type="project")
    agent.write("project/a.md", "A, again.\n")
    agent.delete("project/a.md")
    a = pictures.activity(alice, days=7)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert a.by_actor.days[-1] == today and len(a.by_actor.days) == 7
    assert a.by_actor.counts == {"agent": [0] * 6 + [3], "alice": [0] * 6 + [1]}
    assert a.by_type.counts == {"project": [0] * 6 + [3], "user": [0] * 6 + [1]}
    assert a.by_actor.top == 4 and len(a.by_actor.bars) == 2
    assert sum(b.height for b in a.by_actor.bars) == a.by_actor.height - 4  # the busiest day fills the chart


def test_size_is_measured_against_the_caps(tmp_path: Path) -> None:
    md = memdir.open(tmp_path, index_max_lines=10)
    for i in range(3):
        md.write(f"project/p{i}.md", "line\n" * (i + 1), type="project")
    md.write("user/profile.md", "Alice.\n", type="user")
    s = pictures.size(md)
    assert [(g.label, g.value, g.cap) for g in s.index] == [
        ("MEMORY.md lines", len(md.index().splitlines()), 10), ("MEMORY.md bytes", len(md.index().encode()), 25 * 1024)]
    assert s.folders == [("project/", 3), ("user/", 1)]
    assert s.largest[0][0] == "project/p2.md" and s.largest[0][1].cap == 200


def test_the_diary_is_a_timeline_newest_first(tmp_path: Path) -> None:
    md = memdir.open(tmp_path)
    for name in ("2026-11-28", "2026-11-29", "2026-W48", "2026-11"):
        md.write(f"diary/{name}.md", f"About {name}.\n", type="diary", description=f"About {name}")
    assert [(d.label, d.kind) for d in pictures.diary_timeline(md)] == [
        ("2026-11", "month"), ("2026-W48", "week"), ("2026-11-29", "day"), ("2026-11-28", "day")]
