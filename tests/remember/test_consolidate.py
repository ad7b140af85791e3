"""Consolidation proposes a reviewable plan and applies it through the journaled write path."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import memdir
from memdir.remember import consolidate


def kinds(plan: consolidate.Plan) -> list[tuple[str, tuple[str, ...]]]:
    return [(a.kind, a.paths) for a in plan.actions]


def test_duplicates_merge_and_contradictions_supersede(md: memdir.Memdir) -> None:
    md.write("user/coffee.md", "The user drinks oat milk flat whites every morning.\n", description="coffee order", type="user")
    md.write("user/morning-drink.md", "The user drinks oat milk flat whites every morning. Extra hot.\n",
             description="coffee order", type="user")
    md.write("feedback/tabs.md", "Always use tabs for indentation in Python files.\n",
             description="Always use tabs for indentation in Python", type="feedback")
    md.write("feedback/no-tabs.md", "Never use tabs for indentation in Python files.\n",
             description="Never use tabs for indentation in Python", type="feedback")
    plan = consolidate.plan(md)
    assert kinds(plan) == [("supersede", ("feedback/tabs.md", "feedback/no-tabs.md")),
                           ("merge", ("user/coffee.md", "user/morning-drink.md"))]
    assert [e.path for e in md.list()] == ["feedback/no-tabs.md", "feedback/tabs.md", "user/coffee.md",
                                           "user/morning-drink.md"]  # a plan writes nothing
    consolidate.apply(md, plan)
    assert [a.status for a in plan.actions] == ["done", "done"]
    assert [e.path for e in md.list()] == ["archive/feedback/tabs.md", "archive/user/coffee.md",
                                           "feedback/no-tabs.md", "user/morning-drink.md"]
    assert md.read("archive/user/coffee.md").meta["superseded_by"] == "user/morning-drink.md"
    assert consolidate.plan(md).actions == []
    md.undo("archive/user/coffee.md")  # journaled: undoable
    assert md.read("user/coffee.md").body.startswith("The user drinks")


def test_a_stale_plan_is_not_forced(md: memdir.Memdir) -> None:
    md.write("a/x.md", "Deploys go through the blue green pipeline on Fridays.\n", type="project")
    md.write("a/y.md", "Deploys go through the blue green pipeline on Fridays!\n", type="project")
    plan = consolidate.plan(md)
    md.write("a/x.md", "changed meanwhile\n")
    consolidate.apply(md, plan)
    assert plan.actions[0].status == "conflict" and "plan again" in plan.actions[0].detail
    assert md.read("a/y.md").body.startswith("Deploys")


def test_diary_learnings_go_to_the_topic_file_they_belong_in(md: memdir.Memdir) -> None:
    md.write("project/cache.md", "Cache notes.\n", description="cache TTL settings for reports", type="project")
    md.write("diary/2026-11-30.md", "---\ntype: diary\nfirst: 2026-11-30\nlearned: [Short cache TTL settings work best for reports]\n---\nday\n")
    plan = consolidate.plan(md)
    assert kinds(plan) == [("update", ("project/cache.md",))]
    consolidate.apply(md, plan)
    assert md.read("project/cache.md").body == ("Cache notes.\n\n- Short cache TTL settings work best for reports "
                                                "(from the diary, 2026-11-30)\n")
    assert consolidate.plan(md).actions == []


def test_an_oversized_file_is_split_by_its_headings(md: memdir.Memdir) -> None:
    body = "Overview of the flock project.\n\n" + "".join(
        f"## Part {p}\n" + "".join(f"- fact {p}.{i}\n" for i in range(60)) for p in ("One", "Two", "Three"))
    md.write("project/flock.md", body, description="the flock project", type="project")
    plan = consolidate.plan(md)
    assert kinds(plan) == [("split", ("project/flock.md",))]
    consolidate.apply(md, plan)
    assert [e.path for e in md.list("project/")] == ["project/flock.md", "project/flock/part-one.md",
                                                     "project/flock/part-three.md", "project/flock/part-two.md"]
    top = md.read("project/flock.md").body
    assert top.startswith("Overview of the flock project.") and "- [Part Two](flock/part-two.md)" in top
    assert md.read("project/flock/part-two.md").body.count("- fact Two.") == 60
    assert md.reconcile().clean


def test_stale_memories_against_a_code_folder(md: memdir.Memdir, tmp_path: Path) -> None:
    code = tmp_path / "code"
    (code / "src").mkdir(parents=True)
    (code / "src" / "app.py").write_text("def load_config():\n    pass\n")
    (code / "Makefile").write_text("test:\n\tpytest\n")
    md.write("project/notes.md", "Config: `src/app.py` via `load_config()`; old: `src/legacy.py`, `parse_args()`.\n"
             "Run `make test`, not `make lint`.\n")
    md.write("project/trip.md", "---\nexpires: 2026-01-01\n---\nHotel booked.\n")
    found = consolidate.stale(md, code=code, today=dt.date(2026, 11, 30))
    assert [(f.path, f.kind, f.detail.split(":")[0] if f.kind != "expired" else f.detail) for f in found] == [
        ("project/notes.md", "missing-file", "`src/legacy.py` is not in " + str(code)),
        ("project/notes.md", "missing-symbol", "`parse_args()`"),
        ("project/notes.md", "missing-command", "`make lint`"),
        ("project/trip.md", "expired", "expired 2026-01-01"),
    ]
