"""English words are reduced by Porter2 on every backend: inflections and derivations meet, fewer different words do."""

from __future__ import annotations

from conftest import Backend

from memdir.search.text import indexed, stem


def test_the_stemmer_merges_forms_of_a_word_and_keeps_most_different_words_apart() -> None:
    assert stem("deployment") == stem("deployed") == stem("deploy")  # FTS5's porter kept deployment apart
    assert stem("configuration") == stem("configured")
    assert stem("university") != stem("universe") and stem("general") != stem("generous")
    assert stem("community") != stem("communication") and stem("news") != stem("new")
    assert indexed("Deployments to Production, 走行距離") == "deploy to production,  走行 行距 距離 離 "


def test_words_porter2_would_merge_with_another_word_keep_their_own_family() -> None:
    for word, other in (("production", "product"), ("accountant", "account"), ("customer", "custom"),
                        ("apartment", "apart"), ("engineer", "engine"), ("positive", "position"),
                        ("authorization", "author"), ("business", "busy"), ("experiment", "experience")):
        assert stem(word) != stem(other), (word, other)
    # ... and their own forms still meet, as every word's do.
    assert stem("accountants") == stem("accountant") and stem("accounting") == stem("accounts") == stem("account")
    assert stem("Productions") == stem("production") and stem("products") == stem("product")
    assert stem("experimented") == stem("experiments") == stem("experimental") == stem("experiment")
    assert stem("engineering") == stem("engineers") == stem("engineer")
    assert stem("authorizing") == stem("authorized") == stem("authorization")


def test_a_question_about_production_finds_the_deploys_and_not_the_product(backend: Backend) -> None:
    with backend.open() as md:  # PostgreSQL is given memdir's stems too (its own `english` merged them)
        md.write("project/deploys.md", "---\nname: Deploys\ndescription: how a change ships\n---\n"
                 "Production deploys go out from the release branch after the staging checks.\n")
        md.write("project/pricing.md", "---\nname: Pricing\ndescription: plans\n---\n"
                 "The product costs 12 euros a month; products for teams cost more.\n")
        assert [h.path for h in md.search("how do we deploy to production?", mode="lexical")] == ["project/deploys.md"]
        assert [h.path for h in md.search("what do our products cost", mode="lexical")] == ["project/pricing.md"]


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
