"""bench/precision.py scores right, and its labelled query files are well formed."""

import json
from pathlib import Path

import benchscript
import pytest

bench = benchscript.load("precision")


def test_precision_recall_and_the_false_hit_rate_of_a_two_query_example() -> None:
    launch = bench.Answerable("launch date", frozenset({"project/flock.md"}), "words")
    stripe = bench.Answerable("stripe retries", frozenset({"reference/stripe.md", "project/billing.md"}), "words")
    run = bench.ModeRun(
        answerable=[
            # the relevant file second of three hits: P@5 1/5, hit precision 1/3, recall 1
            (launch, ["user/me.md", "project/flock.md", "project/misc.md"], ["user/me.md", "project/flock.md", "project/misc.md"]),
            # both relevant files in the top 5 of five hits, one more at rank 6 of the top 10
            (stripe, ["reference/stripe.md", "a.md", "b.md", "c.md", "project/billing.md"],
             ["reference/stripe.md", "a.md", "b.md", "c.md", "project/billing.md", "d.md"]),
        ],
        no_answer=[(bench.NoAnswer("zebra", "unrelated"), []),
                   (bench.NoAnswer("dentist phone", "unrelated"), ["user/me.md"])],
    )
    s = bench.score(run)
    assert s["p@5"] == pytest.approx((1 / 5 + 2 / 5) / 2)
    assert s["p@5 ceiling"] == pytest.approx((1 / 5 + 2 / 5) / 2)
    assert s["hit precision@5"] == pytest.approx((1 / 3 + 2 / 5) / 2)
    assert s["r@5"] == s["r@10"] == 1.0
    assert s["false-hit rate"] == 0.5  # one of the two no-answer queries returned something
    assert s["mean hits, no-answer"] == 0.5 and s["mean hits, answerable"] == 4.5
    assert bench.precision_at(["x.md"] * 5, {"y.md"}) == 0.0
    assert bench.hit_precision([], {"y.md"}) is None  # no hit: nothing to be imprecise about
    assert bench.recall_at(["a.md", "b.md"], {"b.md", "c.md"}, 1) == 0.0
    assert bench.false_hit_rate([]) == 0.0


@pytest.mark.parametrize("name", bench.names())
def test_the_labelled_queries_are_well_formed(name: str) -> None:
    mem = bench.load(name)
    spec = json.loads((bench.DATA / f"{name}.json").read_text())
    assert set(spec) == {"memory", "about", "answerable", "no_answer", "small_talk"} and spec["memory"] == name
    for q in mem.answerable:  # every relevant path is a file of that memory
        assert q.relevant and q.relevant <= set(mem.files), q.query
    answerable = {" ".join(q.query.casefold().split()) for q in mem.answerable}
    no_answer = {" ".join(q.query.casefold().split()) for q in mem.no_answer}
    assert not answerable & no_answer  # no query is both answerable and no-answer
    assert len(answerable) == len(mem.answerable) and len(no_answer) == len(mem.no_answer)
    assert {q.kind for q in mem.answerable} <= {"word", "words", "question", "paraphrase"}
    assert {q.kind for q in mem.no_answer} <= {"unrelated", "near-miss"}
    assert bench.problems(mem) == []  # frontmatter name, description and type on every file, too


def test_the_query_set_is_as_large_as_promised() -> None:
    mems = [bench.load(n) for n in bench.names()]
    answerable, no_answer, talk = (sum(len(getattr(m, f)) for m in mems) for f in ("answerable", "no_answer", "small_talk"))
    assert answerable + no_answer + talk >= 150 and no_answer >= 40 and talk >= 40
    assert max(len(m.files) for m in mems) >= 50  # the imported vault


def test_problems_are_found() -> None:
    mem = bench.Labelled("m", {"a.md": "---\nname: a\ndescription: d\ntype: reference\n---\nA.\n", "b.md": "B.\n"},
                         [bench.Answerable("alpha", frozenset({"a.md", "gone.md"}), "word")],
                         [bench.NoAnswer("Alpha", "unrelated")], ["thanks"])
    found = bench.problems(mem)
    assert any("b.md: frontmatter lacks description, name, type" in p for p in found)
    assert any("gone.md, which is not in the memory" in p for p in found)
    assert any("is in answerable and in no_answer" in p for p in found)


def test_distractors_are_deterministic_and_varied() -> None:
    first, again = list(bench.distractors(60)), list(bench.distractors(60))
    assert first == again and len({p for p, _ in first}) == 60
    assert len({p.split("/")[1] for p, _ in first}) == 14  # fourteen kinds of note
    assert all(t.startswith("---\nname: ") and "\ntype: " in t for _, t in first)


def test_a_memory_is_cut_into_pieces_or_padded() -> None:
    mem = bench.load("dev")
    cut = bench.pieces(mem, 5)
    assert sorted(p for piece in cut for p in piece.files) == sorted(mem.files)
    assert all(len(piece.files) + piece.padding == 5 for piece in cut)
    assert sum(len(piece.answerable) for piece in cut) == len(mem.answerable)
    assert all(q.relevant <= set(piece.files) and q.relevant for piece in cut for q in piece.answerable)
    (whole,) = bench.pieces(mem, 500)
    assert whole.padding == 500 - len(mem.files)


def test_the_api_calls_still_answer(tmp_path: Path) -> None:
    """The functions at the top of the script (search, context, the prompt hook) on a two-file memory."""
    mem = bench.Labelled(
        "tiny",
        {"project/flock.md": "---\nname: Flock\ndescription: route planner\ntype: project\n---\nLaunch date: 2026-12-15.\n",
         "user/me.md": "---\nname: Me\ndescription: who I am\ntype: user\n---\nA backend developer.\n"},
        [bench.Answerable("flock launch date", frozenset({"project/flock.md"}), "words")],
        [bench.NoAnswer("zebra", "unrelated")], ["thanks!"])
    with bench.build(mem, tmp_path / "m") as md:
        run = bench.run_mode(md, mem, "lexical")
        assert run.answerable[0][1][0] == "project/flock.md" and run.no_answer[0][1] == []
        ctx = bench.run_context(md, mem)
        assert ctx.answerable[0][1] == ["project/flock.md"] and ctx.no_answer[0][1] == []
        assert bench.recalled_paths(bench.prompt_hook(md, "thanks!")) == []
    text = '<memory-1a2b3c4d path="Books/The Cartographer&#x27;s Daughter.md" type="reference">\nx\n</memory-1a2b3c4d>'
    assert bench.recalled_paths(text) == ["Books/The Cartographer's Daughter.md"]
