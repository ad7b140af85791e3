"""Full-text search: ranking, snippets, incremental updates, scopes filtered inside the query."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir import InvalidArgument, SearchHit
from memdir.cli import main
from memdir.search import SearchIndex, match_expression, terms


@pytest.fixture
def filled(md: memdir.Memdir) -> memdir.Memdir:
    md.write("project/flock.md", "# Flock\nRoute planner for pigeon racing.\nLaunch date: 2026-12-15.\nStack: PostgreSQL.\n",
             description="Flock: route planner and its launch", type="project")
    md.write("reference/stripe-webhooks.md", "Webhooks are signed; verify the signature header.\nRetry for 3 days.\n",
             type="reference", tags=["payments"])
    md.write("feedback/no-dark-themes.md", "Never propose dark themes.\n", description="UI colour rules", type="feedback")
    md.write("people/alice/health.md", "Alice is allergic to peanuts.\nLaunch of her new diet: May.\n")
    md.write("people/bob/gifts.md", "Bob wants a launch party for his birthday.\n")
    return md


def test_terms_drop_function_words_but_never_everything() -> None:
    assert terms("When did Caroline go to the LGBTQ support group?") == ["caroline", "go", "lgbtq", "support", "group"]
    assert terms("what is it") == ["what", "is", "it"]  # only function words: keep them
    assert terms("launch LAUNCH launch") == ["launch"]
    assert terms("?!") == []
    assert match_expression(['say"hi', "x"]) == '"say""hi" OR "x"'


def test_search_ranks_and_points_at_the_matching_line(filled: memdir.Memdir) -> None:
    hits = filled.search("when is the flock launch date?")
    assert hits[0] == SearchHit(
        path="project/flock.md", score=hits[0].score, name="flock", description="Flock: route planner and its launch",
        snippet="Launch date: 2026-12-15.", line=filled.read("project/flock.md").text.splitlines().index("Launch date: 2026-12-15.") + 1,
    )
    assert hits[0].score > 0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert {h.path for h in hits} == {"project/flock.md", "people/alice/health.md", "people/bob/gifts.md"}


def test_stemming_and_case(filled: memdir.Memdir) -> None:
    assert [h.path for h in filled.search("SIGNATURES verified")] == ["reference/stripe-webhooks.md"]
    assert filled.search("signatures")[0].snippet == "Webhooks are signed; verify the signature header."


def test_name_description_and_tags_are_searched_and_weighted(filled: memdir.Memdir) -> None:
    hit = filled.search("colour")[0]
    assert (hit.path, hit.snippet, hit.line) == ("feedback/no-dark-themes.md", "UI colour rules", 0)
    assert filled.search("payments")[0].path == "reference/stripe-webhooks.md"
    assert filled.search("webhooks")[0].path == "reference/stripe-webhooks.md"  # name from the file name



def test_a_word_in_the_description_outranks_the_same_word_in_a_body(md: memdir.Memdir) -> None:
    md.write("a.md", "Some notes on routes and maps for the team.\n", description="kite flying spots")
    md.write("b.md", "Some notes on a kite and maps for the team.\n")
    for i in range(5):  # BM25 needs the word to be rare for it to count at all
        md.write(f"other-{i}.md", f"Unrelated notes {i}.\n")
    assert [h.path for h in md.search("kite")] == ["a.md", "b.md"]  # with equal weights b.md comes first


def test_k_and_prefix(filled: memdir.Memdir) -> None:
    assert len(filled.search("launch", 1)) == 1
    assert {h.path for h in filled.search("launch", prefix="people")} == {"people/alice/health.md", "people/bob/gifts.md"}
    assert filled.search("launch", prefix="nowhere/") == []
    assert filled.search("zebra") == []
    assert filled.search("?! ...") == []
    with pytest.raises(InvalidArgument, match="k must be a positive integer, got 0"):
        filled.search("launch", 0)


def test_query_syntax_is_never_interpreted(filled: memdir.Memdir) -> None:
    for query in ['launch" OR path:*', "NEAR(launch date)", "launch AND NOT flock", "-launch", "^launch*", "'"]:
        filled.search(query)  # no FTS5 syntax error reaches the caller
    assert "project/flock.md" in {h.path for h in filled.search("launch AND NOT flock")}


def test_index_follows_writes_edits_renames_deletes_and_undo(filled: memdir.Memdir) -> None:
    assert filled.search("racing")[0].path == "project/flock.md"
    filled.edit("project/flock.md", "pigeon racing", "drone delivery")
    assert filled.search("racing") == []
    assert filled.search("drone")[0].path == "project/flock.md"
    filled.rename("project/flock.md", "project/flock-v2.md")
    assert [h.path for h in filled.search("drone")] == ["project/flock-v2.md"]
    filled.delete("project/flock-v2.md")
    assert filled.search("drone") == []
    filled.undo("project/flock-v2.md")
    assert [h.path for h in filled.search("drone")] == ["project/flock-v2.md"]
    filled.append("sessions/inbox.md", "ordered a zeppelin")
    assert filled.search("zeppelin")[0].snippet.endswith("] ordered a zeppelin")


def test_index_reads_only_changed_files(filled: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    filled.search("launch")
    read: list[str] = []
    real_get = filled.store.get
    monkeypatch.setattr(filled.store, "get", lambda path: read.append(path) or real_get(path))
    filled.search("launch")
    assert read == []
    filled.write("people/bob/gifts.md", "Bob wants a kite.\n")
    read.clear()
    assert filled.search("kite")[0].path == "people/bob/gifts.md"
    assert read == ["people/bob/gifts.md"]


def test_changes_from_another_process_are_picked_up(filled: memdir.Memdir, root: Path) -> None:
    assert filled.search("kite") == []
    with memdir.open(root) as other:
        other.write("people/bob/gifts.md", "Bob wants a kite.\n")
    assert [h.path for h in filled.search("kite")] == ["people/bob/gifts.md"]


def test_hand_edits_are_searchable_after_reconcile(filled: memdir.Memdir, root: Path) -> None:
    filled.search("launch")
    (root / "hand.md").write_text("Notes about the zeppelin.\n")
    (root / "bin.md").write_bytes(b"\xff\xfe zeppelin")
    filled.reconcile(fix=True)
    assert [h.path for h in filled.search("zeppelin")] == ["hand.md"]


def test_scope_filters_inside_the_query(filled: memdir.Memdir) -> None:
    for i in range(30):  # many better matches outside the scope must not crowd out the ones inside
        filled.write(f"people/bob/launch-{i}.md", "launch launch launch\n", description="launch")
    for i in range(40):  # keep "launch" rare enough for BM25 to rank by it
        filled.write(f"misc/note-{i}.md", f"Unrelated note {i}.\n")
    assert all(h.path.startswith("people/bob/") for h in filled.search("launch", 10))
    alice = filled.scope(read=["people/alice/", "project/"])
    assert {h.path for h in alice.search("launch", 2)} == {"project/flock.md", "people/alice/health.md"}
    assert {h.path for h in alice.search("launch", 50)} == {"project/flock.md", "people/alice/health.md"}
    assert [h.path for h in alice.search("launch", prefix="people/")] == ["people/alice/health.md"]
    assert alice.search("launch", prefix="people/bob/") == []
    deeper = alice.scope(read=["people/alice/"])
    assert [h.path for h in deeper.search("launch")] == ["people/alice/health.md"]
    assert filled.scope(read=[]).search("launch") == []


def test_the_index_is_shared_by_views_and_derived(filled: memdir.Memdir) -> None:
    alice = filled.scope(read=["people/alice/"], write=["people/alice/"])
    alice.write("people/alice/health.md", "Alice is allergic to kiwis.\n")
    assert filled.search("kiwis")[0].path == "people/alice/health.md"
    assert filled.search("peanuts") == []
    idx = SearchIndex()
    assert idx.query("anything", 5, [""]) == []
    idx.close()


def test_cli_search(filled: memdir.Memdir, root: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(root), "search", "flock launch date", "-k", "1"])
    assert out.exit_code == 0, out.output
    line = filled.search("flock launch date")[0].line
    assert out.output == f"project/flock.md:{line}: Launch date: 2026-12-15.\n"
    out = runner.invoke(main, ["--root", str(root), "search", "launch", "--prefix", "people/", "--json"])
    data = json.loads(out.output)
    assert {d["path"] for d in data} == {"people/alice/health.md", "people/bob/gifts.md"}
    assert set(data[0]) == {"path", "score", "name", "description", "snippet", "line"}
    out = runner.invoke(main, ["--root", str(root), "search", "zebra"])
    assert (out.exit_code, out.output) == (1, "no matches\n")  # nothing found: exit 1, as grep
    out = runner.invoke(main, ["--root", str(root), "search", "x", "-k", "0"])
    assert out.exit_code == 2


def test_long_lines_are_clipped_around_the_match(md: memdir.Memdir) -> None:
    md.write("long.md", "word " * 100 + "needle " + "word " * 100 + "\n")
    hit = md.search("needle")[0]
    assert "needle" in hit.snippet and len(hit.snippet) <= 202
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
