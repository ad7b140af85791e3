"""Pseudo-relevance feedback: the best files' other words find what the question's words miss."""

import pytest

import memdir
from memdir.search import feedback, semantic
from memdir.testing import FakeEmbedder

TURNS = {  # a short chat, one turn a file (topic names: no numbered run, so no neighbour lends anything)
    "chat/caroline-group.md": "Caroline: I went to the LGBTQ support group yesterday, the transgender stories were so inspiring.",
    "chat/caroline-pride.md": "Caroline: the pride parade last week was amazing, so many transgender and LGBTQ people.",
    "chat/melanie-memoir.md": "Melanie: reading a memoir by a transgender author now.",
    "chat/caroline-adoption.md": "Caroline: I am researching adoption agencies for my future family.",
    "chat/melanie-support.md": "Melanie: you have my support, always. The group of moms at school helps me a lot too.",
    "chat/melanie-pottery.md": "Melanie: I signed up for a pottery class, my kids love clay.",
    "chat/melanie-camping.md": "Melanie: we went camping in the mountains with the kids.",
    "chat/melanie-run.md": "Melanie: I ran a charity race for mental health.",
}
QUESTION = "When did Caroline go to the support group?"


@pytest.fixture
def chat(memory: memdir.Memdir) -> memdir.Memdir:
    for path, text in TURNS.items():
        memory.write(path, text)
    return memory


def ranked(md: memdir.Memdir) -> list[str]:
    return [h.path.removeprefix("chat/").removesuffix(".md") for h in md.search(QUESTION, mode="lexical")]


def sure(md: memdir.Memdir) -> list[str]:
    return [h.path.removeprefix("chat/").removesuffix(".md") for h in md.search(QUESTION, mode="lexical") if h.sure]


def test_feedback_reorders_what_holds_the_question(chat: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    # The best turn's rarer words (LGBTQ, transgender) lift the pride turn over the adoption one (each holds "Caroline").
    with_feedback, held = ranked(chat), sure(chat)
    monkeypatch.setattr(feedback, "ON", False)
    without = ranked(chat)
    assert with_feedback[0] == without[0] == "caroline-group"
    assert with_feedback.index("caroline-pride") < with_feedback.index("caroline-adoption")
    assert without.index("caroline-pride") > without.index("caroline-adoption")
    assert set(held) == set(sure(chat)) and held[0] == "caroline-group"  # feedback makes no hit sure


def test_feedback_adds_a_file_only_its_words_find_and_it_is_not_sure(
        chat: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    # The memoir turn shares no word with the question, only "transgender" with the best turn; a word in half
    # the files or more ("melanie") is asked for by no feedback query, so the other Melanie turns stay out.
    found = ranked(chat)
    assert found[0] == "caroline-group" and "melanie-memoir" in found and "melanie-memoir" not in sure(chat)
    assert not {"melanie-pottery", "melanie-camping", "melanie-run"} & set(found)
    monkeypatch.setattr(feedback, "ON", False)
    assert "melanie-memoir" not in ranked(chat)


def test_a_query_nothing_answers_still_finds_nothing(chat: memdir.Memdir) -> None:
    assert chat.search("zebra migration", mode="lexical") == []



def test_hybrid_goes_without_feedback(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    # The semantic side bridges the words in hybrid; there feedback cost REALTALK R@10 (search/feedback.py).
    for path, text in TURNS.items():
        md.write(path, text)
    semantic.attach(md, embedder=FakeEmbedder())
    hybrid = [(h.path, h.score) for h in md.search(QUESTION, mode="hybrid")]
    lexical = [h.path for h in md.search(QUESTION, mode="lexical")]
    monkeypatch.setattr(feedback, "ON", False)
    assert [(h.path, h.score) for h in md.search(QUESTION, mode="hybrid")] == hybrid
    assert [h.path for h in md.search(QUESTION, mode="lexical")] != lexical  # the switch is live
