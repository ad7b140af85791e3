"""`memdir search --explain`: what scored each hit, why one is not sure, and what was left out below the top k."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from conftest import Backend

import memdir
from memdir.faces.cli import main


def notes(md: memdir.Memdir) -> None:
    md.write("project/flock.md", "# Flock\nRoute planner for pigeon racing.\nLaunch date: 2026-12-15.\n",
             description="Flock: route planner and its launch", type="project")
    md.write("people/bob/gifts.md", "Bob wants a launch party for his birthday.\n")
    md.write("sessions/2026-11-20-100000-s1.md", "Asked: when is the flock launch date?\n", type="session")
    for i in range(8):
        md.write(f"notes/launch-{i}.md", f"Note {i}: the launch of something else.\n")


def test_each_hit_says_what_scored_it_and_the_candidates_below_the_top_k_say_why(md: memdir.Memdir) -> None:
    notes(md)
    explained = md.explain("when is the flock launch date?", k=3, mode="lexical")
    assert [h.path for h in explained.hits] == [h.path for h in md.search("when is the flock launch date?", k=3,
                                                                         mode="lexical")]
    flock = explained.hits[0]
    assert flock.path == "project/flock.md" and flock.sure and flock.signals is not None
    fields = flock.signals.fields or {}
    assert fields["name"] > 0 and fields["description"] > 0 and fields["body"] > 0 and fields["tags"] == 0
    assert flock.signals.bm25 > 0 and flock.signals.cover == 1.0 and not flock.signals.why
    record = next(h for h in explained.hits + explained.left_out if h.path.startswith("sessions/"))
    assert record.signals is not None and record.signals.history == 0.5  # history ranks below knowledge
    assert len(explained.left_out) == 5
    for place, hit in enumerate(explained.left_out, 4):
        assert hit.signals is not None and hit.signals.why.startswith(f"ranked {place}, below the top 3")
    unsure = [h for h in explained.hits + explained.left_out if not h.sure]
    # Beside a sure hit, half the bar (30% of the query's weight) is sure too: what the others lack is said.
    assert unsure and all("of the query's weight, sure at 30%" in (h.signals.why if h.signals else "") for h in unsure)


def test_the_cli_prints_a_line_of_signals_under_each_hit_and_json_carries_them(md: memdir.Memdir, root: Path) -> None:
    notes(md)
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(root), "search", "when is the flock launch date?", "-k", "2", "--explain",
                               "--mode", "lexical"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("project/flock.md:") and lines[1].startswith("    sure 1.00 · score ")
    assert "bm25 " in lines[1] and "(name " in lines[1] and "holds 100% of the query" in lines[1]
    assert "-- left out, below the top 2:" in lines
    assert any("a record of past work ×0.5" in x for x in lines)
    out = runner.invoke(main, ["--root", str(root), "search", "when is the flock launch date?", "-k", "2", "--explain",
                               "--mode", "lexical", "--json"])
    data = json.loads(out.output)
    assert set(data) == {"query", "mode", "hits", "left_out"} and len(data["hits"]) == 2 and data["left_out"]
    first = data["hits"][0]
    assert first["path"] == "project/flock.md" and first["sure"] is True
    assert first["signals"]["cover"] == 1.0 and set(first["signals"]["fields"]) == {"name", "description", "tags", "body"}
    assert data["left_out"][0]["signals"]["why"].startswith("ranked 3, below the top 2")
    out = runner.invoke(main, ["--root", str(root), "search", "zebra", "--explain"])
    assert (out.exit_code, out.output) == (1, "no matches\n")


def test_every_backend_explains_each_fields_share(backend: Backend) -> None:
    with backend.open() as md:
        md.write("project/flock.md", "Route planner for pigeon racing.\n", description="Flock: route planner", type="project")
        [hit] = md.explain("pigeon", mode="lexical").hits
        fields = hit.signals.fields if hit.signals else None
        assert fields is not None and fields["body"] > 0  # the word is in the body alone
        assert all(v == 0 for k, v in fields.items() if k != "body")
        [hit] = md.explain("flock", mode="lexical").hits  # the name and the description
        fields = hit.signals.fields if hit.signals else None
        assert fields is not None and fields["name"] > 0 and fields["body"] == 0
