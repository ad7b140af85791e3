"""Semantic and hybrid search over a real memory: fusion, signals, auto fallback, scope, privacy, upkeep."""

import json
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import Backend
from fakeembed import EmbeddingsAPI

import memdir
from memdir import search as search_layer
from memdir.errors import InvalidArgument
from memdir.faces.cli import main
from memdir.model import Entry
from memdir.search import calibration, embed, vector_location
from memdir.search import semantic as hybrid
from memdir.testing import FakeEmbedder

CALIBRATION = {t for pairs in (calibration.PAIRS, calibration.NEAR) for pair in pairs for t in pair}


def memory_texts(texts: list[str]) -> list[str]:
    """What was embedded of the memory and its queries: without the pairs a new index measures its floor on."""
    return [t for t in texts if t not in CALIBRATION]


@pytest.fixture
def md(root: Path) -> Iterator[memdir.Memdir]:
    with memdir.open(root) as m:
        yield m
        hybrid.close(m)


def find(md: memdir.Memdir, emb: FakeEmbedder, query: str, **kw: Any) -> list[memdir.SearchHit]:
    """Search `md` with `emb` as its embedder (the way a test plugs in the fake)."""
    hybrid.attach(md, embedder=emb)
    return md.search(query, **kw)


def test_weighted_fusion_scales_each_side_then_mixes_them() -> None:
    fused = hybrid.weighted([("a.md", 8.0), ("b.md", 2.0)], {"b.md": 0.9, "c.md": 0.5, "d.md": 0.1}, 0.4)
    assert fused == pytest.approx({"a.md": 0.6, "b.md": 0.15 + 0.4, "c.md": 0.2, "d.md": 0.0})


def test_reciprocal_rank_fusion_uses_ranks_only() -> None:
    fused = hybrid.reciprocal_rank(["a.md", "b.md"], ["b.md", "c.md"], 0.5, k=10)
    best = 0.5 / 12 + 0.5 / 11  # b.md: second on one side, first on the other
    assert fused == pytest.approx({"a.md": 0.5 / 11 / best, "b.md": 1.0, "c.md": 0.5 / 12 / best})


def test_people_are_read_from_the_query() -> None:
    assert hybrid.people("When did Caroline meet Mel at the LGBTQ center?") == {"Caroline", "Mel", "LGBTQ"}
    assert hybrid.people("What did she say?") == set()


def test_a_person_the_query_names_is_found_in_a_title_written_in_lower_case() -> None:
    def entry(path: str, name: str) -> Entry:
        return Entry(path, name, "", None, (), None, None, 10, 1, "1")

    entries = {"c/D1-1.md": entry("c/D1-1.md", "elise, 29 Dec 2023"), "c/D1-2.md": entry("c/D1-2.md", "Emi, 29 Dec 2023")}
    scores = {"c/D1-1.md": 1.0, "c/D1-2.md": 1.0}
    hybrid.apply_signals(scores, "Where did Elise go in Miami?", entries, hybrid.Settings())
    assert scores == {"c/D1-1.md": 1.0 + hybrid.Settings().people, "c/D1-2.md": 1.0}  # people type names as they like
    assert hybrid.without_people("Where did Elise go in Miami?", ["elise, 29 Dec 2023"]) == "Where did go in Miami?"


def test_a_setting_of_the_dates_signal_that_went_is_refused_with_the_known_ones() -> None:
    with pytest.raises(InvalidArgument, match="unknown \\[semantic\\] setting 'dates'; known: .*people"):
        hybrid.Settings.of({"dates": 0.2})


def test_neighbours_in_natural_order_share_part_of_a_score() -> None:
    files = ["s/t-1.md", "s/t-2.md", "s/t-3.md", "s/t-10.md"]
    order = {p: (files, i) for i, p in enumerate(files)}
    assert sorted(files[1:3], key=lambda p: hybrid.natural(p)) == files[1:3]
    out = hybrid.spread({"s/t-2.md": 1.0}, order, 0.25, 1)
    assert out == {"s/t-1.md": 0.25, "s/t-2.md": 1.0, "s/t-3.md": 0.25}


def conversation(md: memdir.Memdir) -> None:
    turns = [
        ("Caroline", "I went to a support group yesterday, it was powerful."),
        ("Melanie", "That sounds wonderful. How did it feel?"),
        ("Caroline", "It felt like home. Everyone shared their stories."),
        ("Melanie", "I took the kids camping at the lake last weekend."),
        ("Caroline", "Camping is fun. Did you roast marshmallows?"),
        ("Melanie", "Yes, and we watched the stars all night."),
    ]
    for i, (who, text) in enumerate(turns, 1):
        md.write(f"chat/s1/t-{i}.md", f"---\ncreated: 2023-05-08T13:56:00Z\n---\n{who}: {text}\n", name=f"{who}, 8 May 2023")
    md.write("chat/s2/t-1.md", "---\ncreated: 2023-06-20T10:00:00Z\n---\nMelanie: We went camping again.\n",
             name="Melanie, 20 June 2023")


def test_hybrid_adds_the_neighbours_and_the_person_the_question_names(md: memdir.Memdir) -> None:
    conversation(md)
    emb = FakeEmbedder()
    lexical = [h.path for h in md.search("How did the support group feel to Caroline?", k=3, mode="lexical")]
    hits = find(md, emb, "How did the support group feel to Caroline?", k=3, mode="hybrid")
    # The answer (t-3: "It felt like home") shares no rare word with the question; it follows the match.
    assert "chat/s1/t-3.md" not in lexical[:1]
    assert [h.path for h in hits][:1] == ["chat/s1/t-1.md"] and "chat/s1/t-3.md" in [h.path for h in hits]
    assert all(h.score > 0 for h in hits) and hits == sorted(hits, key=lambda h: -h.score)


def test_a_date_in_the_question_prefers_files_of_that_date(md: memdir.Memdir) -> None:
    conversation(md)
    emb = FakeEmbedder()
    june = find(md, emb, "Where did Melanie go camping in June 2023?", k=2, mode="hybrid")
    may = find(md, emb, "Where did Melanie go camping in May 2023?", k=2, mode="hybrid")
    assert june[0].path == "chat/s2/t-1.md"  # the June session's turn; in May, the camping turns of 8 May
    assert {h.path for h in may} == {"chat/s1/t-4.md", "chat/s1/t-5.md"}


def test_semantic_hits_point_at_the_lines_of_their_best_chunk(md: memdir.Memdir) -> None:
    md.write("garden.md", "Tomatoes need sun.\n\n- plant basil in May\n- prune the roses\n", name="garden")
    hits = find(md, FakeEmbedder(), "basil plant", k=1, mode="semantic")
    assert (hits[0].path, hits[0].line, hits[0].snippet) == ("garden.md", 8, "- plant basil in May")
    assert md.read("garden.md").text.splitlines()[8 - 1] == "- plant basil in May"


def test_auto_falls_back_to_hybrid_only_when_the_lexical_result_is_weak_and_counts_it(md: memdir.Memdir) -> None:
    conversation(md)
    emb = FakeEmbedder()
    assert find(md, emb, "marshmallows stars", k=4, mode="auto") == md.search("marshmallows stars", k=4, mode="lexical")
    assert emb.texts == []  # no vector index yet: auto never embeds a whole memory behind a search's back
    hybrid.attach(md, embedder=emb, settings=hybrid.Settings(auto_min_score=0))  # only "fewer than k hits" is weak
    hybrid.reindex(md)
    embedded = len(emb.texts)
    strong = find(md, emb, "camping", k=2, mode="auto")
    assert strong == md.search("camping", k=2, mode="lexical")
    assert hybrid.stats(md)["auto_fallbacks"] == 0 and len(emb.texts) == embedded  # not even the query
    weak = find(md, emb, "marshmallows stars", k=4, mode="auto")
    assert len(weak) == 4 and hybrid.stats(md)["auto_fallbacks"] == 1
    assert hybrid.stats(md)["queries"] == {"lexical": 0, "semantic": 0, "hybrid": 0, "auto": 2}
    assert weak[:2] != md.search("marshmallows stars", k=4, mode="lexical")[:2] or len(md.search("marshmallows stars", k=4, mode="lexical")) < 4


def test_without_the_extra_auto_is_lexical_semantic_says_what_to_install(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch,
                                                                         recwarn: pytest.WarningsRecorder) -> None:
    conversation(md)
    monkeypatch.setattr(embed, "available", lambda: False)
    assert md.search("marshmallows stars", k=4) == md.search("marshmallows stars", k=4, mode="lexical")
    assert len(recwarn) == 0 and hybrid.stats(md)["queries"]["auto"] == 0
    for mode in ("semantic", "hybrid"):
        with pytest.raises(InvalidArgument, match=r"needs the semantic layer, which is not installed: pip install 'memdir\[semantic\]'"):
            md.search("camping", mode=mode)


def test_a_scoped_view_ranks_only_what_it_may_read(md: memdir.Memdir) -> None:
    md.write("people/alice/health.md", "Alice is allergic to apple pollen.\n")
    md.write("people/bob/notes.md", "Bob likes apple pie.\n")
    md.write("house/garden.md", "The apple tree needs pruning.\n")
    emb = FakeEmbedder()
    bob = md.scope(read=["people/bob/", "house/"])
    for mode in ("semantic", "hybrid"):
        found = {h.path for h in find(bob, emb, "apple", k=10, mode=mode)}
        assert found == {"people/bob/notes.md", "house/garden.md"}
        other = find(bob, emb, "Alice allergic pollen", k=10, mode=mode)  # what answers it is not Bob's to see
        assert {h.path for h in other} <= found and not any(h.sure for h in other)
    assert {h.path for h in find(md, emb, "apple", k=10, mode="semantic", prefix="house/")} == {"house/garden.md"}


def test_edits_reembed_only_what_changed_and_deletes_leave_the_index(md: memdir.Memdir) -> None:
    conversation(md)
    emb = FakeEmbedder()
    seen: list[tuple[int, int]] = []
    hybrid.reindex(md, embedder=emb, progress=lambda done, total: seen.append((done, total)))
    assert len(memory_texts(emb.texts)) == 7 and seen == [(7, 7)]
    md.edit("chat/s1/t-6.md", "stars", "fireflies")
    md.delete("chat/s1/t-5.md")
    hits = find(md, emb, "fireflies", k=10, mode="semantic")
    assert memory_texts(emb.texts)[7:] == ["Melanie: Yes, and we watched the fireflies all night.", "fireflies"]
    assert "chat/s1/t-5.md" not in {h.path for h in hits}


def test_the_vectors_persist_beside_the_store_and_survive_a_restart(root: Path) -> None:
    with memdir.open(root) as md:
        conversation(md)
        hybrid.reindex(md, embedder=FakeEmbedder())
        hybrid.close(md)
    assert (root / ".memdir" / "vectors.sqlite3").is_file()
    again = FakeEmbedder()
    with memdir.open(root) as md:
        find(md, again, "camping", k=2, mode="hybrid")
        find(md, again, "camping", k=5, mode="hybrid")
        hybrid.close(md)
    assert again.texts == ["camping"]  # the floor measured once was kept, and the second search reuses the query's vector


def test_private_prefixes_in_memdir_toml_never_reach_the_endpoint(root: Path) -> None:
    root.mkdir()
    with EmbeddingsAPI() as api:
        (root / "memdir.toml").write_text(
            f'max_lines = 300\n\n[semantic]\nembedder = "openai"\nurl = "{api.url}"\nmodel = "nomic-embed-text"\n'
            'private = ["people/alice"]\nweight = 0.5\n'
        )
        with memdir.open(root) as md:
            md.write("people/alice/health.md", "Alice is allergic to pollen.\n")
            md.write("house/garden.md", "The pollen count is high in May.\n")
            hits = md.search("pollen", k=5, mode="hybrid")
            assert {h.path for h in hits} == {"people/alice/health.md", "house/garden.md"}  # found lexically, locally
            assert md.limits.max_lines == 300 and hybrid.attach(md).settings.weight == 0.5
            hybrid.close(md)
    assert memory_texts(api.inputs()) == ["The pollen count is high in May.", "pollen"]


def test_bad_semantic_settings_say_what_to_fix(root: Path) -> None:
    with pytest.raises(InvalidArgument, match=r"\[semantic\] weight = 'high' is not valid; use a float"):
        hybrid.Settings.of({"weight": "high"})
    with pytest.raises(InvalidArgument, match="unknown \\[semantic\\] setting 'wieght'"):
        hybrid.Settings.of({"wieght": 0.3})
    with pytest.raises(InvalidArgument, match="embedder = 'gpu'; use one of local, multilingual, openai"):
        hybrid.Settings.of({"embedder": "gpu"})


def test_every_backend_keeps_its_vectors_per_tenant_privately_and_reuses_them_after_a_restart(
        backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    with backend.open("a") as a, backend.open("b") as b:
        a.write("notes/kite.md", "We flew the red kite on the beach.\n")
        b.write("notes/boat.md", "We sailed the red boat on the lake.\n")
        emb = FakeEmbedder()
        assert [h.path for h in find(a, emb, "red kite", k=5, mode="semantic")] == ["notes/kite.md"]
        assert [h.path for h in find(b, emb, "red boat", k=5, mode="semantic")] == ["notes/boat.md"]
        assert not any(h.sure for h in find(b, emb, "red kite", k=5, mode="semantic"))  # a's kite is not b's
        where = vector_location(a.store)
        assert where is not None and where != vector_location(b.store)
        # The vectors file holds the text of every paragraph: its owner's only, as the store's files are.
        assert (stat.S_IMODE(where.stat().st_mode), stat.S_IMODE(where.parent.stat().st_mode)) == (0o600, 0o700)
        hybrid.close(a)
        hybrid.close(b)
    again = FakeEmbedder()
    with backend.open("a") as a:
        assert [h.path for h in find(a, again, "red kite", k=5, mode="hybrid")] == ["notes/kite.md"]
        hybrid.close(a)
    assert again.texts == ["red kite"]


def test_the_semantic_side_reads_the_question_without_the_people_who_title_files() -> None:
    titles = ["Caroline, 8 May 2023", "Melanie, 8 May 2023"]
    assert hybrid.without_people("When did Caroline go to the LGBTQ support group?", titles) == \
        "When did go to the LGBTQ support group?"
    assert hybrid.without_people("What is Caroline's identity?", titles) == "What is identity?"
    assert hybrid.without_people("Who is Caroline?", titles) == "Who is Caroline?"  # nothing would be left
    assert hybrid.without_people("When did Caroline go?", []) == "When did Caroline go?"


def test_an_edit_made_outside_memdir_reembeds_only_the_paragraph_that_changed(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("notes/trip.md", "We drove to the coast.\n\nThe hotel had a pool.\n\nWe ate oysters.\n")
        emb = FakeEmbedder()
        hybrid.reindex(md, embedder=emb)
        path = root / "notes" / "trip.md"
        path.write_text(path.read_text().replace("a pool", "a sauna"))  # a person edits the file
        md.reconcile(fix=True)  # what `memdir watch` does on a change event
        hits = find(md, emb, "sauna", k=1, mode="semantic")
        hybrid.close(md)
    assert memory_texts(emb.texts)[3:] == ["The hotel had a sauna.", "sauna"]
    assert (hits[0].path, hits[0].line) == ("notes/trip.md", path.read_text().splitlines().index("The hotel had a sauna.") + 1)


def test_a_topic_file_shown_on_its_meaning_alone_needs_more_than_a_conversations_turn(root: Path) -> None:
    # The fake model reads the first six letters of each word: the query shares meaning with the text
    # (understood ~ understand, ...) and no word the full-text index would match.
    text = "understand relationship democracy photograph professor strategy kettle lantern orchard pebble ferry"
    query = "understood relativity democrat photography professional strategic"
    emb = FakeEmbedder()
    bars = calibration.measure(emb.embed)
    rows = emb.embed([query, text])
    assert bars.floor <= float(rows[0] @ rows[1]) < bars.topic  # above the floor, below a near miss: not a topic's bar
    with memdir.open(root) as md:
        md.write("notes/civics.md", text)
        md.write("chat/session-01/D1-1.md", text)
        md.write("chat/session-01/D1-2.md", "Lovely weather today.")
        hybrid.reindex(md, embedder=emb)
        found = md.search(query, mode="semantic")  # both ranked first alike; only the turn is sure
        assert {h.path for h in found[:2]} == {"chat/session-01/D1-1.md", "notes/civics.md"}
        assert [h.path for h in found if h.sure] == ["chat/session-01/D1-1.md"]
        found = md.search(query, mode="hybrid")  # the turn after it ranks as its neighbour
        assert [h.path for h in found if h.sure] == ["chat/session-01/D1-1.md"]
        assert [h.path for h in found].index("chat/session-01/D1-2.md") < len(found)
        hybrid.close(md)


def test_a_query_the_meaning_answers_keeps_the_turns_its_words_find_beside_it(root: Path) -> None:
    text = "understand relationship democracy photograph professor strategy kettle lantern orchard"
    query = "understood relativity democrat photography professional strategic violin"
    emb = FakeEmbedder()
    with memdir.open(root) as md:
        for number, turn in enumerate([text, "Lovely weather today.", "More tea?", "Liam: I play the violin in a quartet."], 1):
            md.write(f"chat/session-01/D1-{number}.md", turn)
        md.write("notes/music.md", "The violin needs new strings.")
        hybrid.reindex(md, embedder=emb)
        assert not any(h.sure for h in md.search(query, mode="lexical"))  # "violin" alone holds too little
        found = md.search(query, mode="hybrid")
        hybrid.close(md)
    assert [h.path for h in found if h.sure] == ["chat/session-01/D1-1.md"]  # answered on its meaning
    assert {"chat/session-01/D1-4.md", "notes/music.md"} <= {h.path for h in found}  # its words find these: ranked


def test_closing_a_memory_closes_its_vector_index(root: Path) -> None:
    md = memdir.open(root)
    conversation(md)
    hybrid.reindex(md, embedder=FakeEmbedder())
    assert md.store in hybrid._OPEN
    md.close()
    assert md.store not in hybrid._OPEN


def test_a_semantic_only_hit_needs_the_models_floor_which_is_stored_with_the_vectors(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("notes/kite.md", "We flew the red kite on the beach.\n")
        md.write("notes/taxes.md", "File the tax return by the end of January.\n")
        emb = FakeEmbedder()
        hybrid.reindex(md, embedder=emb)
        index = hybrid.attach(md, embedder=emb).index
        assert index.floor == calibration.floor(FakeEmbedder().embed) > 0  # measured for this model
        for mode in ("semantic", "hybrid", "auto"):
            assert not any(h.sure for h in md.search("zebra stripes", mode=mode))  # nothing answers it
            found = md.search("red kite", mode=mode)
            assert found[0].path == "notes/kite.md" and [h.path for h in found if h.sure] == ["notes/kite.md"]
        hybrid.close(md)
    other = FakeEmbedder(32)  # another model: its vectors and its floor are measured anew
    with memdir.open(root) as md:
        index = hybrid.attach(md, embedder=other).index
        md.search("red kite", mode="semantic")
        assert index.floor == calibration.floor(FakeEmbedder(32).embed) != calibration.floor(FakeEmbedder().embed)
        hybrid.close(md)


def test_a_processs_memories_share_one_local_model_per_setting(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "a") as a, memdir.open(tmp_path / "b") as b:
        one = hybrid.attach(a).index.embedder  # a server's tenants: one session, not one per open memory
        assert hybrid.attach(b).index.embedder is one
        assert isinstance(one, embed.LocalEmbedder)
        assert hybrid.Settings.of({"threads": 1}).embedder_instance() is not one  # another setting, its own
        hybrid.close(a)
        hybrid.close(b)


def _home(md: memdir.Memdir) -> None:
    md.write("home/kitchen.md", "We picked white quartz countertops in March.\n", description="kitchen renovation")
    md.write("home/dentist.md", "Dr. Kim does the cleaning every six months.\n", description="the dentist")
    md.write("work/deploy.md", "Deploys go out with make release, never on Fridays.\n", description="deploys")


def test_a_question_in_another_script_is_read_by_the_multilingual_model(md: memdir.Memdir) -> None:
    _home(md)
    assert md.search("when do deploys go out?", mode="hybrid")[0].path == "work/deploy.md"
    other = vector_location(md.store, "multilingual")
    assert other is not None and not other.exists()  # English over English: the English model alone
    assert md.search("我们厨房选了什么台面？", mode="hybrid")[0].path == "home/kitchen.md"
    assert md.search("치과 검진은 얼마나 자주 가요?", mode="hybrid")[0].path == "home/dentist.md"
    assert other.is_file()


def test_a_memory_written_in_other_scripts_gets_the_multilingual_vectors_when_indexed(md: memdir.Memdir) -> None:
    md.write("家/厨房.md", "厨房的台面选了白色石英石。\n", description="厨房装修")
    md.write("家/牙医.md", "金医生每六个月洗一次牙。\n", description="牙医")
    counters = hybrid.reindex(md)
    other = vector_location(md.store, "multilingual")
    assert other is not None and other.is_file() and counters["embedded"] > 0
    assert md.search("what countertops did we choose?", mode="hybrid")[0].path == "家/厨房.md"


def test_a_configured_model_is_never_swapped_for_the_multilingual_one(md: memdir.Memdir) -> None:
    _home(md)
    assert find(md, FakeEmbedder(), "我们厨房选了什么台面？", mode="hybrid") is not None
    other = vector_location(md.store, "multilingual")
    assert other is not None and not other.exists()


def test_reindex_semantic_builds_the_vectors_auto_search_then_uses(md: memdir.Memdir, root: Path) -> None:
    _home(md)
    md.write("家/茶.md", "我们喜欢喝绿茶。\n", description="绿茶")
    md.write("家/猫.md", "猫每天早上七点吃饭。\n", description="猫")  # 2 of 5 files in Chinese: a multilingual memory
    assert not vector_location(md.store).exists()  # type: ignore[union-attr]  # no vectors yet: auto is lexical
    out = CliRunner().invoke(main, ["--root", str(root), "reindex", "--semantic", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["embedded"] >= 4
    assert all(vector_location(md.store, side).is_file() for side in ("", "multilingual"))  # type: ignore[union-attr]
    assert hybrid._indexed(md) and search_layer.semantic_ready(md)
    again = CliRunner().invoke(main, ["--root", str(root), "reindex", "--semantic"])
    assert again.stdout.startswith("indexed 5 files in ") and "; 0 new passages embedded" in again.stdout


def test_a_private_folder_never_reaches_the_multilingual_vectors_either(root: Path) -> None:
    root.mkdir()
    (root / "memdir.toml").write_text('[semantic]\nprivate = ["人/"]\n')
    with memdir.open(root) as md:
        md.write("人/爱丽丝.md", "爱丽丝对花粉过敏。\n", description="健康")
        md.write("家/花园.md", "五月花粉很多。\n", description="花园")
        assert {h.path for h in md.search("花粉", k=5, mode="hybrid")} == {"人/爱丽丝.md", "家/花园.md"}
        hybrid.close(md)
        for side in ("", "multilingual"):
            where = vector_location(md.store, side)
            assert where is not None and where.is_file()
            db = sqlite3.connect(where)
            try:
                assert {p for (p,) in db.execute("SELECT DISTINCT path FROM chunk")} == {"家/花园.md"}
            finally:
                db.close()


def test_an_auto_search_never_embeds_a_whole_memory_for_the_multilingual_model(md: memdir.Memdir, root: Path) -> None:
    _home(md)
    assert md.search("when do deploys go out?", mode="hybrid")[0].path == "work/deploy.md"  # the English vectors
    other = vector_location(md.store, "multilingual")
    assert other is not None
    md.search("我们厨房选了什么台面？")  # auto: the words find nothing, the English vectors exist, USE's do not
    assert not other.exists()
    out = CliRunner().invoke(main, ["--root", str(root), "reindex", "--semantic"])
    assert out.exit_code == 0 and other.is_file()  # reindex builds both models' vectors
    assert md.search("我们厨房选了什么台面？")[0].path == "home/kitchen.md"


def test_reindex_leaves_a_big_english_memory_to_the_english_model(md: memdir.Memdir,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _home(md)
    monkeypatch.setattr(hybrid, "BOTH_UP_TO", 2)  # three English files: "big"
    hybrid.reindex(md)
    other = vector_location(md.store, "multilingual")
    assert other is not None and not other.exists()
    assert md.search("我们厨房选了什么台面？", mode="hybrid")[0].path == "home/kitchen.md"  # asked for: built then
    assert other.is_file()
