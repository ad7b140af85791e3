"""The semantic floor per script: a query in a script the model does not read is shown nothing on meaning alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import memdir
from memdir.search import calibration, semantic
from memdir.testing import FakeEmbedder, Vectors


class ReadsNoChinese(FakeEmbedder):
    """A model for which every Chinese text means the same (as an English model nearly has it)."""

    def __init__(self) -> None:
        super().__init__(model="reads-no-chinese")

    def embed(self, texts: Sequence[str]) -> Vectors:
        return super().embed(["中文" if calibration.script(t) == "han" else t for t in texts])


class ReadsChinese(FakeEmbedder):
    """A model that knows which Chinese note answers which Chinese question of the calibration pairs."""

    def __init__(self) -> None:
        super().__init__(model="reads-chinese")

    def embed(self, texts: Sequence[str]) -> Vectors:
        topic = {t: f"topic{i}" for i, pair in enumerate(calibration.SCRIPT_PAIRS["han"]) for t in pair}
        return super().embed([topic.get(t, t) for t in texts])


def test_the_script_of_a_query_is_the_script_of_most_of_its_letters() -> None:
    assert calibration.script("因子状态机的转移规则") == "han"
    assert calibration.script("転入届はいつまでに出せばいい") == "kana"  # kanji beside kana is Japanese
    assert calibration.script("줄바꿈은 어떻게 처리해?") == "hangul"
    assert calibration.script("ค่าเช่าคอนโดเดือนละเท่าไหร่") == "thai"
    assert calibration.script("Stripe Tax什么时候上线？") == "latin"  # more Latin letters than Chinese characters
    assert calibration.script("Über die Brücke") == calibration.script("2026-05-04") == "latin"


def test_a_model_that_does_not_read_a_script_gets_a_floor_no_cosine_reaches() -> None:
    assert calibration.measure(ReadsNoChinese().embed, "han") == (calibration.UNREAD, calibration.UNREAD)
    assert calibration.measure(ReadsChinese().embed, "han").topic <= 1.0  # it reads it: bars it can reach
    assert calibration.measure(FakeEmbedder().embed, "hangul").floor == calibration.UNREAD


def test_a_question_in_a_script_the_model_does_not_read_gets_no_hit_on_meaning_alone(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("notes/factors.md", "# 因子状态机\n\n候选因子连续20个交易日IC大于0.03才能进入观察。\n")
        md.write("notes/calendar.md", "# 交易日历\n\n春节休市从2月16日到2月24日。\n")
        md.write("notes/kettle.md", "The kettle is descaled every month with citric acid.\n")
        semantic.reindex(md, embedder=ReadsNoChinese())
        for mode in ("semantic", "hybrid"):  # every Chinese note is at cosine 1 of the question, and none is sure
            assert not [h for h in md.search("怎么做红烧肉", mode=mode) if h.sure], mode
        assert [h.path for h in md.search("候选因子什么时候进入观察", mode="hybrid") if h.sure] == ["notes/factors.md"]
        assert [h.path for h in md.search("kettle citric", mode="semantic") if h.sure] == ["notes/kettle.md"]


class ReadsBoth(FakeEmbedder):
    """A model that reads Chinese and English: a Chinese question is close to its note, and closest to the English
    note its pair translates (as USE multilingual has it for some of them)."""

    def __init__(self) -> None:
        super().__init__(model="reads-both")

    def embed(self, texts: Sequence[str]) -> Vectors:
        meaning = {}
        for i, (question, note) in enumerate(calibration.SCRIPT_PAIRS["han"]):
            twin = calibration.PAIRS[calibration.TWINS["han"][i]][1]
            meaning.update({question: f"q{i}mean", note: f"q{i}mean s{i}said", twin: f"q{i}mean"})
        return super().embed([meaning.get(t, t) for t in texts])


class SiblingsAnswer(FakeEmbedder):
    """A model that sees the first question's sibling (the same kind of fact, of another thing) as its answer."""

    def __init__(self) -> None:
        super().__init__(model="siblings-answer")

    def embed(self, texts: Sequence[str]) -> Vectors:
        question, sibling = calibration.PAIRS[0][0], calibration.NEAR[0][2]
        return super().embed([question if t == sibling else t for t in texts])


def test_the_english_note_a_pair_translates_is_not_an_unrelated_one() -> None:
    bars = calibration.measure(ReadsBoth().embed, "han")
    assert bars.floor < 1.0  # the twin, closer than the answer, is neither unrelated nor a better answer


def test_a_topic_file_is_sure_on_meaning_only_closer_than_every_near_miss() -> None:
    plain, fooled = calibration.measure(FakeEmbedder().embed), calibration.measure(SiblingsAnswer().embed)
    assert plain.floor <= plain.topic < 1.0
    assert fooled.floor == plain.floor and fooled.topic == 1.0  # a near miss as close as can be: nothing reaches it
