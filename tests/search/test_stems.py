"""English words are reduced by Porter2 on every backend: inflections and derivations meet, fewer different words do."""

from __future__ import annotations

from conftest import Backend

from memdir.search.text import indexed, stem


def test_the_stemmer_merges_forms_of_a_word_and_keeps_most_different_words_apart() -> None:
    assert stem("deployment") == stem("deployed") == stem("deploy")  # FTS5's porter kept deployment apart
    assert stem("configuration") == stem("configured")
    assert stem("university") != stem("universe") and stem("general") != stem("generous")
    assert stem("community") != stem("communication") and stem("news") != stem("new")
    assert indexed("Deployments to Production, 走行距離") == "deploy to product,  走行 行距 距離 離 "


def test_a_word_finds_its_forms_and_not_a_word_that_only_begins_alike(backend: Backend) -> None:
    with backend.open() as md:
        md.write("project/university.md", "---\nname: University program\ndescription: free Pro for students\n---\n"
                 "Students of universities get Pro free for a year.\n")
        md.write("reference/universe.md", "---\nname: Conference talk\ndescription: accepted\n---\n"
                 "Our talk at GitHub Universe about CI caching.\n")
        md.write("reference/deploys.md", "---\nname: Deploys\ndescription: how a change ships\n---\n"
                 "Every deployment is promoted from a preview.\n")
        for query, path in (("university", "project/university.md"), ("universe", "reference/universe.md"),
                            ("deploying", "reference/deploys.md")):
            assert [h.path for h in md.search(query, mode="lexical") if h.sure] == [path], query
