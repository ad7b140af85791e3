"""Full-text search: ranking, snippets, incremental updates, scopes filtered inside the query."""

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir import InvalidArgument, LimitExceeded, SearchHit
from memdir.faces.cli import main
from memdir.search import MAX_QUERY_BYTES, MAX_QUERY_TERMS, Query, embed, evidence, match_expression, terms
from memdir.search.lexical import neighbours


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
    flock = filled.read("project/flock.md")
    line = flock.text.splitlines().index("Launch date: 2026-12-15.") + 1
    assert hits[0] == SearchHit(
        path="project/flock.md", score=hits[0].score, name="flock", description="Flock: route planner and its launch",
        snippet="Launch date: 2026-12-15.", line=line, end_line=line + 1, type="project", updated=flock.updated,
        confidence=1.0, sure=True,
    )
    assert hits[0].score > 0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # A launch party or a diet's launch is no launch date: ranked below it, and not sure.
    assert [h.path for h in hits if h.sure] == ["project/flock.md"]
    assert {h.path for h in hits[1:]} == {"people/alice/health.md", "people/bob/gifts.md"}
    assert all(h.confidence < 0.5 for h in hits[1:])


def test_every_match_is_ranked_and_only_what_holds_enough_of_the_query_is_sure(filled: memdir.Memdir) -> None:
    assert {h.path for h in filled.search("launch") if h.sure} == {"project/flock.md", "people/alice/health.md",
                                                                    "people/bob/gifts.md"}
    found = filled.search("android app launch date")  # shares "launch date" with flock; the rest is unknown
    assert found[0].path == "project/flock.md" and not any(h.sure for h in found)  # ranked, but it answers nothing
    assert filled.search("zebra") == []  # nothing matches at all
    assert [h.path for h in filled.search("android app launch date", cover=0.3) if h.sure] == ["project/flock.md"]
    with pytest.raises(InvalidArgument, match="cover must be a share of the query between 0 and 1, got 2"):
        filled.search("launch", cover=2)


def test_stemming_and_case(filled: memdir.Memdir) -> None:
    assert [h.path for h in filled.search("SIGNATURES verified")] == ["reference/stripe-webhooks.md"]
    assert filled.search("signatures")[0].snippet == "Webhooks are signed; verify the signature header."


def test_name_description_and_tags_are_searched_and_weighted(filled: memdir.Memdir) -> None:
    hit = filled.search("colour")[0]  # the description matched: its frontmatter line is the spot
    text = filled.read("feedback/no-dark-themes.md").text.splitlines()
    assert (hit.path, hit.snippet) == ("feedback/no-dark-themes.md", "description: UI colour rules")
    assert text[hit.line - 1] == "description: UI colour rules" and hit.end_line == hit.line
    assert filled.search("payments")[0].path == "reference/stripe-webhooks.md"
    assert filled.search("webhooks")[0].path == "reference/stripe-webhooks.md"  # name from the file name
    hit = filled.search("stripe")[0]  # only the file name matches: line 1 and the name, never line 0
    assert (hit.path, hit.line, hit.snippet) == ("reference/stripe-webhooks.md", 1, "stripe webhooks")



def test_a_word_in_the_description_outranks_the_same_word_in_a_body(md: memdir.Memdir) -> None:
    md.write("a.md", "Some notes on routes and maps for the team.\n", description="kite flying spots")
    md.write("b.md", "Some notes on a kite and maps for the team.\n")
    for i in range(5):  # BM25 needs the word to be rare for it to count at all
        md.write(f"other-{i}.md", f"Unrelated notes {i}.\n")
    assert [h.path for h in md.search("kite")] == ["a.md", "b.md"]  # with equal weights b.md comes first


def test_k_and_prefix(filled: memdir.Memdir) -> None:
    assert len(filled.search("launch", k=1)) == 1
    assert {h.path for h in filled.search("launch", prefix="people")} == {"people/alice/health.md", "people/bob/gifts.md"}
    assert filled.search("launch", prefix="nowhere/") == []
    assert filled.search("zebra") == []
    assert filled.search("?! ...") == []
    with pytest.raises(InvalidArgument, match="k must be a positive integer, got 0"):
        filled.search("launch", k=0)


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


def test_index_reads_only_changed_files(filled: memdir.Memdir, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    filled.search("launch")  # the first search catches up with the writes that filled the memory
    read: list[str] = []
    real_get = filled.store.get
    monkeypatch.setattr(filled.store, "get", lambda path: read.append(path) or real_get(path))
    filled.search("launch")
    assert read == []  # nothing changed since
    filled.write("people/bob/gifts.md", "Bob wants a kite.\n")
    read.clear()
    assert filled.search("kite")[0].path == "people/bob/gifts.md"
    assert read == []  # a process that searches indexes its writes in the write path, from the bytes it wrote
    with memdir.open(root) as other:  # one that never searched (a CLI write, a hook) leaves it to the journal
        other.write("people/bob/gifts.md", "Bob wants a zeppelin.\n")
    read.clear()
    assert filled.search("zeppelin")[0].path == "people/bob/gifts.md"
    assert read == ["people/bob/gifts.md"]  # only the file changed since


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
    assert all(h.path.startswith("people/bob/") for h in filled.search("launch", k=10))
    alice = filled.scope(read=["people/alice/", "project/"])
    assert {h.path for h in alice.search("launch", k=2)} == {"project/flock.md", "people/alice/health.md"}
    assert {h.path for h in alice.search("launch", k=50)} == {"project/flock.md", "people/alice/health.md"}
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


def test_cli_search(filled: memdir.Memdir, root: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(root), "search", "flock launch date", "-k", "1"])
    assert out.exit_code == 0, out.output
    line = filled.search("flock launch date")[0].line
    assert out.output == f"project/flock.md:{line}:Launch date: 2026-12-15.\n"  # grep's shape: path:line:text
    out = runner.invoke(main, ["--root", str(root), "search", "launch", "--prefix", "people/", "--json"])
    data = json.loads(out.output)
    assert {d["path"] for d in data} == {"people/alice/health.md", "people/bob/gifts.md"}
    assert set(data[0]) == {"path", "score", "name", "description", "snippet", "line", "end_line", "type", "updated",
                            "confidence", "sure"}
    out = runner.invoke(main, ["--root", str(root), "search", "when is the flock launch date?"])
    lines = out.output.splitlines()
    assert out.exit_code == 0 and lines[0].startswith("project/flock.md:")
    assert lines[1] == "-- weaker matches, which may not answer it:"  # the party and the diet, apart
    assert sorted(x.split(":")[0] for x in lines[2:]) == ["people/alice/health.md", "people/bob/gifts.md"]
    out = runner.invoke(main, ["--root", str(root), "search", "android app launch date"])
    assert out.exit_code == 1  # no file answers it: exit 1, the weaker matches still shown
    assert out.output.splitlines()[0] == "-- no file answers this for sure; weaker matches, which may not answer it:"
    out = runner.invoke(main, ["--root", str(root), "search", "zebra"])
    assert (out.exit_code, out.output) == (1, "no matches\n")  # nothing found: exit 1, as grep
    out = runner.invoke(main, ["--root", str(root), "search", "x", "-k", "0"])
    assert out.exit_code == 2


def test_long_lines_are_clipped_around_the_match(md: memdir.Memdir) -> None:
    md.write("long.md", "word " * 100 + "needle " + "word " * 100 + "\n")
    hit = md.search("needle")[0]
    assert "needle" in hit.snippet and len(hit.snippet) <= 202
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")


# ---------------------------------------------------------------- bounds, symbols, filters, modes


def test_queries_are_bounded_in_bytes_and_words(md: memdir.Memdir) -> None:
    with pytest.raises(LimitExceeded, match=f"query is {MAX_QUERY_BYTES + 1} bytes, over the {MAX_QUERY_BYTES}-byte limit") as e:
        md.search("x" * (MAX_QUERY_BYTES + 1))
    assert (e.value.limit, e.value.actual) == (MAX_QUERY_BYTES, MAX_QUERY_BYTES + 1)
    words = " ".join(f"w{i}" for i in range(MAX_QUERY_TERMS + 1))
    with pytest.raises(LimitExceeded, match=f"query has {MAX_QUERY_TERMS + 1} distinct words, over the limit"):
        md.search(words)
    assert md.search(" ".join(f"w{i}" for i in range(MAX_QUERY_TERMS))) == []


def test_emoji_are_searched_as_text(md: memdir.Memdir) -> None:
    md.write("coffee.md", "Morning order: ☕ with oat milk.\n")
    md.write("tea.md", "Afternoon: 🍵 green tea.\n")
    hit = md.search("☕")[0]
    assert (hit.path, hit.snippet) == ("coffee.md", "Morning order: ☕ with oat milk.")
    assert [h.path for h in md.search("☕")] == [h.path for h in md.grep("☕")] == ["coffee.md"]
    assert {h.path for h in md.search("🍵 milk")} == {"coffee.md", "tea.md"}


def test_types_and_since_filter_inside_the_query(md: memdir.Memdir, root: Path) -> None:
    md.write("feedback/a.md", "deploy on fridays is fine\n", type="feedback")
    md.write("project/b.md", "deploy pipeline notes\n", type="project")
    (root / "project/old.md").write_text("---\nupdated: 2020-01-01\n---\ndeploy of 2020\n")
    md.reconcile(fix=True)
    assert {h.path for h in md.search("deploy")} == {"feedback/a.md", "project/b.md", "project/old.md"}
    assert [h.path for h in md.search("deploy", types=["feedback"])] == ["feedback/a.md"]
    assert [h.path for h in md.search("deploy", types="project", since="2021-01-01")] == ["project/b.md"]
    assert {h.path for h in md.search("deploy", since=dt.date(2019, 12, 31))} == {"feedback/a.md", "project/b.md",
                                                                                   "project/old.md"}
    with pytest.raises(InvalidArgument, match="since must be a date like 2026-03-05"):
        md.search("deploy", since="last week")
    with pytest.raises(InvalidArgument, match="types must be type names"):
        md.search("deploy", types=[3])  # type: ignore[list-item]


def test_semantic_modes_need_the_extra_and_auto_is_lexical(filled: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "available", lambda: False)  # as without `pip install 'memdir[semantic]'`
    for mode in ("semantic", "hybrid"):
        with pytest.raises(InvalidArgument, match=r"needs the semantic layer, which is not installed: pip install 'memdir\[semantic\]'"):
            filled.search("launch", mode=mode)
    assert filled.search("launch", mode="auto") == filled.search("launch", mode="lexical")
    with pytest.raises(InvalidArgument, match="mode must be one of auto, lexical, semantic, hybrid"):
        filled.search("launch", mode="fuzzy")


def test_sequence_neighbours_lend_their_score(md: memdir.Memdir) -> None:
    assert neighbours("chat/D1-3.md") == ("chat/D1-2.md", "chat/D1-4.md")
    assert neighbours("diary/2026-05-09.md") == ("diary/2026-05-08.md", "diary/2026-05-8.md", "diary/2026-05-10.md")
    assert neighbours("notes.md") == ()
    md.write("chat/D1-1.md", "Melanie: what did you do on the weekend?\n")
    md.write("chat/D1-2.md", "Caroline: we painted a sunrise over the lake.\n")
    md.write("chat/D1-3.md", "Melanie: lovely!\n")
    for i in range(10):
        md.write(f"misc/n{i}.md", f"unrelated note {i}\n")
    hits = md.search("what did Caroline do on the weekend")
    assert [h.path for h in hits][:2] == ["chat/D1-1.md", "chat/D1-2.md"]  # D1-2 has only "caroline"
    assert "chat/D1-3.md" in {h.path for h in hits}  # no word of the query, next to a match


# ---------------------------------------------------------------- persistence


def test_the_index_persists_and_a_new_process_reads_no_file(filled: memdir.Memdir, root: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    expected = filled.search("launch")
    filled.close()
    with sqlite3.connect(root / ".memdir" / "memdir.db") as db:  # beside the journal: one file for a new process to open
        assert db.execute("SELECT count(*) FROM search_docs").fetchone()[0] == 5
    with memdir.open(root) as again:
        monkeypatch.setattr(again.store, "get", lambda path: pytest.fail(f"read {path}"))
        assert again.search("launch") == expected


def test_an_index_kept_in_a_file_of_its_own_before_is_left_behind(filled: memdir.Memdir, root: Path) -> None:
    expected = filled.search("launch")
    filled.close()
    for suffix in ("", "-wal", "-shm"):
        (root / ".memdir" / f"search.db{suffix}").write_bytes(b"an index from an older memdir")
    with memdir.open(root) as again:
        assert again.search("launch") == expected
    assert not list((root / ".memdir").glob("search.db*"))


@pytest.mark.parametrize("lost", ["search_docs", "search_seq"])
def test_a_lost_index_table_is_rebuilt(filled: memdir.Memdir, root: Path, lost: str) -> None:
    expected = filled.search("launch")
    filled.close()
    with sqlite3.connect(root / ".memdir" / "memdir.db") as db:
        db.execute(f"DROP TABLE {lost}")
    with memdir.open(root) as again:
        assert again.search("launch") == expected
        assert again.reindex() == 5


def test_an_index_ahead_of_the_store_is_rebuilt(filled: memdir.Memdir, root: Path) -> None:
    filled.search("racing")  # the index is built
    filled.close()
    with sqlite3.connect(root / ".memdir" / "memdir.db") as db:
        db.execute("UPDATE search_seq SET seq = seq + 1000")
        db.execute("DELETE FROM search_docs WHERE path = 'project/flock.md'")  # what a stale copy would lack
    with memdir.open(root) as again:
        assert again.search("racing")[0].path == "project/flock.md"


def test_a_new_process_catches_a_lagging_index_up_from_the_store_alone(filled: memdir.Memdir, root: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    filled.search("racing")  # a process that searches: its write below updates the index
    filled.write("people/bob/gifts.md", "Bob wants a zeppelin.\n")
    filled.close()
    with sqlite3.connect(root / ".memdir" / "memdir.db") as db:  # as if the writer died before the index
        db.execute("UPDATE search_seq SET seq = seq - 1")
        db.execute("UPDATE search_docs SET version = 'old' WHERE path = 'people/bob/gifts.md'")
    with memdir.open(root) as again:
        read: list[str] = []
        real_get = again.store.get
        monkeypatch.setattr(again.store, "get", lambda path: read.append(path) or real_get(path))
        assert [h.path for h in again.search("zeppelin")] == ["people/bob/gifts.md"]
        assert read == ["people/bob/gifts.md"]  # only the changed file, and no catalog
        assert again._state.derived.catalog is None


def test_reindex_rebuilds_and_the_cli_reports_it(filled: memdir.Memdir, root: Path) -> None:
    assert filled.reindex() == 5
    assert filled.search("racing")[0].path == "project/flock.md"
    with pytest.raises(memdir.Forbidden):
        filled.scope(read=["project/"]).reindex()
    out = CliRunner().invoke(main, ["--root", str(root), "reindex", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["files"] == 5
    out = CliRunner().invoke(main, ["--root", str(root), "reindex"])
    assert out.stdout.startswith("indexed 5 files in ")


def test_cli_search_modes_and_filters(filled: memdir.Memdir, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "available", lambda: False)  # as without the semantic extra
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(root), "search", "launch", "--mode", "semantic"])
    assert out.exit_code == 1 and out.stderr.startswith("error: search mode 'semantic' needs the semantic layer")
    assert len(out.stderr.strip().splitlines()) == 1
    out = runner.invoke(main, ["--root", str(root), "search", "launch", "--type", "project", "--mode", "lexical"])
    assert out.stdout.startswith("project/flock.md:") and out.stdout.count("\n") == 1


# ---------------------------------------------------------------- grep


def test_grep_runs_in_linear_time_and_refuses_what_needs_backtracking(md: memdir.Memdir) -> None:
    md.write("a.md", "a" * 40 + "b\n")
    assert md.grep("(a+)+$") == []  # exponential in a backtracking engine
    written = md.write("a.md", "a" * 41 + "\n")
    assert [h.line for h in md.grep("(a+)+$")] == [written.text.split("\n").index("a" * 41) + 1]
    with pytest.raises(InvalidArgument, match=r"grep runs in linear time, so backreferences and lookaround are not available"):
        md.grep(r"(a)\1")
    with pytest.raises(LimitExceeded, match="pattern is 5000 bytes"):
        md.grep("x" * 5000)


def test_grep_matches_line_by_line(md: memdir.Memdir) -> None:
    md.write("a.md", "alpha\nbeta gamma\n\ngamma end\r\n")
    text = md.read("a.md").text.split("\n")
    first = text.index("alpha") + 1
    assert [(h.line, h.text) for h in md.grep("^gamma")] == [(first + 3, "gamma end")]
    assert [(h.line, h.text) for h in md.grep("gamma$")] == [(first + 1, "beta gamma")]
    assert md.grep(r"alpha\sbeta") == []  # a match across lines is not a line match
    assert [h.text for h in md.grep("GAMMA", ignore_case=True)] == ["beta gamma", "gamma end"]
    assert md.grep("GAMMA", ignore_case=False) == []
    assert [h.line for h in md.grep("")][:1] == [1]


def test_grep_literal_prefilter_keeps_every_match() -> None:
    from memdir.search.grep import compile

    assert compile("launch.*date").needles == (("launch",), ("date",))
    assert compile("launch|retr").needles == (("launch", "retr"),)
    assert compile("(?:ab)+c?x[yz]").needles == (("ab",),)
    assert compile("a|b.c").needles == ()
    assert compile("kelvin").needles == (("elv",),)  # K also folds to the Kelvin sign: never in a case-blind filter
    assert compile("Kelvin", ignore_case=False).needles == (("Kelvin",),)
    assert compile("(?i)Kelvin", ignore_case=False).needles == (("elv",),)


def test_grep_finds_the_kelvin_sign_case_blind(md: memdir.Memdir) -> None:
    md.write("t.md", "300 \u212aelvin\n")
    assert [h.path for h in md.grep("kelvin")] == ["t.md"]
    assert md.grep("kelvin", ignore_case=False) == []


def test_a_huge_matching_file_gives_one_line_and_a_short_snippet(md: memdir.Memdir, root: Path) -> None:
    (root / "big.md").write_text(("filler words here\n" * 50_000) + "the needle line\n" + ("x" * 300_000) + " needle\n")
    md.reconcile(fix=True)
    hit = md.search("needle")[0]
    assert (hit.path, hit.line, hit.snippet) == ("big.md", 50_001, "the needle line")
    assert [h.line for h in md.grep("needle")] == [50_001, 50_002]
    assert len(md.grep("needle")[1].text) == 300_007


def test_grep_sees_each_file_apart(md: memdir.Memdir, root: Path) -> None:
    (root / "a.md").write_text("one\n\ntwo")  # no final line break
    (root / "b.md").write_text("two\nthree\n")
    (root / "c.md").write_text("")
    md.reconcile(fix=True)
    assert [(h.path, h.line, h.text) for h in md.grep("^$")] == [("a.md", 2, "")]  # never the gap between files
    assert [(h.path, h.line) for h in md.grep("two")] == [("a.md", 3), ("b.md", 1)]
    assert [(h.path, h.line) for h in md.grep(r"two\s*three")] == []
    assert [(h.path, h.line) for h in md.grep("^t")] == [("a.md", 3), ("b.md", 1), ("b.md", 2)]


def test_without_re2_grep_refuses_nested_repetition(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdir.search import grep

    monkeypatch.setattr(grep, "_re2", None)
    md.write("a.md", "alpha beta\n")
    assert [h.text for h in md.grep(r"al(pha|x) \w+")] == ["alpha beta"]
    for pattern in ("(a+)+$", "(a*b?)*", r"(a)\1"):
        with pytest.raises(InvalidArgument, match="can take exponential time; simplify it, or install google-re2"):
            md.grep(pattern)


def test_a_conversations_turns_and_topic_files_are_ranked_and_only_what_holds_the_query_is_sure(tmp_path: Path) -> None:
    turns = ["Emma: Our piano recital is on 3 May at the town hall.", "Liam: Which pieces will you play?",
             "Emma: Two nocturnes; I practise the piano every evening.", "Liam: Good luck!"]
    with memdir.open(tmp_path / "m") as md:
        for number, text in enumerate(turns, 1):
            md.write(f"chat/session-01/D1-{number}.md", text)
        md.write("notes/shopping.md", "Buy a piano stool cushion and printer paper.")
        md.write("notes/Kyoto 2025.md", "Temples, a piano bar in Gion, and the bamboo grove.")  # a number, not a run
        found = md.search("piano recital date at the town hall")
    assert found[0].path == "chat/session-01/D1-1.md" and found[0].sure  # the best hit holds the query
    assert "chat/session-01/D1-2.md" in [h.path for h in found]  # the turn after it, lent its neighbour's score
    assert {h.path for h in found if not h.sure} >= {"notes/shopping.md", "notes/Kyoto 2025.md"}  # "piano" alone


def test_a_run_is_two_files_numbered_alike_in_one_folder() -> None:
    assert evidence.runs(["c/s1/D1-3.md", "c/s1/D1-7.md", "c/s2/D2-1.md", "Travel/Kyoto 2025.md", "notes/a.md"]) \
        == {"c/s1/D1-3.md", "c/s1/D1-7.md"}


def test_a_word_asking_for_a_value_is_held_where_a_value_of_its_kind_is() -> None:
    """For `sure` only (the ranking weighs words): "pressure" is answered by "32 psi", "phone" by a phone number,
    "cost" by a price; a date, an IP address or a house number is no phone number."""
    weights = evidence.weigh(Query(("gravel", "tyre", "pressure"), ()), 10, {"gravel": 2, "tyre": 1})
    bike = "Tyres: 40 mm tubeless, front 32 psi on gravel."
    assert weights.cover(bike) < 0.6 and weights.cover(bike, answers=True) == 1.0
    phone = evidence.weigh(Query(("gareth", "phone"), ()), 10, {"gareth": 3})
    for text in ("Gareth at number 14, since 2026-04-02.", "Gareth's Pi: 192.168.10.2", "Gareth: birthday 9 August"):
        assert phone.cover(text, answers=True) == phone.cover(text) < 0.5, text
    for text in ("Gareth: 07700 900461", "Gareth, +44 20 7946 0958", "Gareth 555-123-4567"):
        assert phone.cover(text, answers=True) == 1.0, text
    cost = evidence.weigh(Query(("backblaze", "cost"), ()), 10, {"backblaze": 1})
    assert cost.cover("Backblaze B2: £4 a month", answers=True) == 1.0
    assert cost.cover("Backblaze B2 holds 400 GB", answers=True) < 0.5


def test_a_month_is_held_where_a_date_of_that_month_is_and_wifi_where_wi_fi_is(tmp_path: Path) -> None:
    """For `sure` only (the ranking weighs words): "March" is held by a date in March, not by one in April or by a
    version number; "wifi" by "Wi-Fi"."""
    with memdir.open(tmp_path / "m") as md:
        md.write("incidents/checkout outage.md", "2026-03-02: checkout was down for 40 minutes, the certificate expired.")
        md.write("incidents/login outage.md", "2026-04-03: login was down after the v2026.3.1 deploy.")
        md.write("home/network.md", "Guest Wi-Fi is Garden-Guest; the password is on the fridge.")
        md.write("home/bins.md", "Recycling goes out on Tuesday evenings.")
        march = {h.path: h.sure for h in md.search("why did checkout go down in March?")}
        login = {h.path: h.sure for h in md.search("why did login go down in March?")}
        wifi = {h.path: h.sure for h in md.search("guest wifi password")}
    assert march["incidents/checkout outage.md"]
    assert login == {"incidents/login outage.md": False}  # April, and "v2026.3.1" is a version, not a date
    assert wifi == {"home/network.md": True}
    weights = evidence.weigh(Query(("checkout", "march"), ()), 10, {"checkout": 2})
    assert weights.cover("2026-03-02: checkout down") < 0.6 < weights.cover("2026-03-02: checkout down", answers=True)


def test_a_short_name_weighs_as_a_word_and_the_pieces_of_contractions_do_not() -> None:
    ios = evidence.weigh(Query(("ios", "app", "ship"), ()), 10, {"app": 4, "ship": 1})
    assert ios.stems.get("io", 0) > 0  # "iOS" stems to "io": a three-letter name, not a piece of "don't"
    assert ios.cover("The app ships on Android first.") < 0.6
    pieces = evidence.weigh(Query(("don", "t", "ship"), ()), 10, {"ship": 1})
    assert set(pieces.stems) == {"ship"}


def test_a_prompt_is_cut_into_the_clauses_that_each_name_two_topics() -> None:
    from memdir.search.confidence import clauses

    assert clauses("Quick question before I start on the tests today: when is Maya's birthday party?") == [
        "Quick question before I start on the tests today:", "when is Maya's birthday party?"]
    assert clauses("When is the flock launch, and what does the stripe webhook retry?") == [
        "When is the flock launch", "and what does the stripe webhook retry?"]
    assert clauses("ok, thanks. so when is the flock launch date?") == []  # one part: the query as it is
    assert clauses("Can you check something for me: where are the plasters?") == ["where are the plasters?"]
    assert clauses("how much did the bathroom renovation cost?") == []
    assert len(clauses(". ".join(f"step {i} failed again" for i in range(9)))) == 4  # the last four
