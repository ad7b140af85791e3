"""Correcting without forgetting: supersede, read as of a time, and search the past."""

from __future__ import annotations

import pytest

import memdir
from memdir.remember.timeline import search_history


def test_supersede_retires_a_memory_out_of_the_index_but_keeps_it(md: memdir.Memdir) -> None:
    md.write("project/launch.md", "Launch on 2026-03-01.\n", description="when flock launches", type="project")
    md.write("project/launch-v2.md", "Launch on 2026-05-01.\n", description="when flock launches (moved)", type="project")
    m = memdir.supersede(md, "project/launch.md", by="project/launch-v2.md", reason="the launch moved to May")
    assert m.path == "archive/project/launch.md"
    assert (m.meta["superseded_by"], m.meta["reason"]) == ("project/launch-v2.md", "the launch moved to May")
    assert m.body == "Launch on 2026-03-01.\n"
    assert [e.path for e in md.list("project/")] == ["project/launch-v2.md"]
    index = md.index()
    assert "launch.md" not in index.replace("launch-v2.md", "") and "[archive/](archive/MEMORY.md)" in index
    assert "- [launch](project/launch.md) — when flock launches" in md.index("archive/")
    assert md.history("archive/project/launch.md")[0].op == "rename"
    back = md.undo("archive/project/launch.md")
    assert back.path == "project/launch.md"


def test_supersede_refuses_what_it_cannot_do(md: memdir.Memdir) -> None:
    md.write("a.md", "x\n")
    with pytest.raises(memdir.InvalidArgument, match="say why"):
        memdir.supersede(md, "a.md", reason=" ")
    with pytest.raises(memdir.NotFound):
        memdir.supersede(md, "a.md", by="missing.md", reason="r")
    with pytest.raises(memdir.NotFound):
        memdir.supersede(md, "missing.md", reason="r")
    memdir.supersede(md, "a.md", reason="wrong")
    md.write("a.md", "y\n")
    again = memdir.supersede(md, "a.md", reason="wrong again")
    assert again.path == "archive/a-2.md"  # the first retired copy is kept
    with pytest.raises(memdir.Conflict, match="already retired"):
        memdir.supersede(md, "archive/a.md", reason="r")


def test_search_history_finds_retired_and_earlier_versions(md: memdir.Memdir) -> None:
    md.write("project/db.md", "We decided to use MongoDB for events.\n")
    md.write("project/db.md", "We decided to use PostgreSQL for events.\n")
    md.write("project/cache.md", "Redis caches sessions.\n")
    memdir.supersede(md, "project/cache.md", reason="we dropped the cache")
    hits = search_history(md, "decided mongodb")
    assert [(h.path, h.kind) for h in hits] == [("project/db.md", "earlier")]
    assert "MongoDB" in hits[0].snippet
    assert [(h.path, h.kind) for h in search_history(md, "redis")][0] == ("archive/project/cache.md", "retired")
    assert search_history(md, "postgresql") == []  # the live version is for md.search
    with pytest.raises(memdir.InvalidArgument):
        search_history(md, "")


def test_read_as_of_a_day_means_the_end_of_that_day(md: memdir.Memdir) -> None:
    md.write("a.md", "now\n")
    today = md.history()[0].time[:10]
    assert memdir.read_as_of(md, "a.md", today).body == "now\n"
    with pytest.raises(memdir.NotFound, match="did not exist at 2020-01-01T23:59:59Z"):
        memdir.read_as_of(md, "a.md", "2020-01-01")
    with pytest.raises(memdir.InvalidArgument, match="until"):
        memdir.changes(md, since="2026-03-02", until="2026-03-01")
