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
    assert {q.kind for q in mem.answerable} <= {"words", "question", "paraphrase", "other-language"}
    assert {q.kind for q in mem.no_answer} <= {"unrelated", "near-miss"}
    for q in spec["answerable"] + spec["no_answer"]:  # every query says its kind and its language
        assert set(q) == ({"query", "relevant", "kind", "lang"} if "relevant" in q else {"query", "kind", "lang"}), q
        assert q["lang"] in bench.LANGUAGES, q
    assert bench.problems(mem) == []  # every frontmatter block closes, too


def test_the_query_set_is_as_large_as_promised() -> None:
    mems = {n: bench.load(n) for n in bench.names()}
    answerable, no_answer, talk = (sum(len(getattr(m, f)) for m in mems.values()) for f in ("answerable", "no_answer", "small_talk"))
    assert answerable >= 300 and no_answer >= 120 and talk >= 40
    asked = [q for m in mems.values() for q in (*m.answerable, *m.no_answer)]
    count = {(q.kind, q.lang): 0 for q in asked}
    for q in asked:
        count[q.kind, q.lang] += 1
    for kind in bench.ANSWERABLE_KINDS:  # issue 30: every kind a person asks, in their languages
        assert sum(n for (k, _), n in count.items() if k == kind) >= 20, kind
    for lang in ("zh", "ko"):  # a Chinese and a Korean memory asked in their own words, and about nothing they hold
        assert all(count.get((kind, lang), 0) >= 5 for kind in ("words", "question", "near-miss", "unrelated")), lang
    assert sum(n for (_, lang), n in count.items() if lang == "ja") >= 15 and count.get(("question", "th"), 0) >= 3
    assert max(len(m.files) for m in mems.values()) >= 60  # the family's memory on six subjects
    assert len({p.split("/")[0] for p in mems["family"].files}) == 6


def test_the_memories_are_in_the_shapes_people_keep() -> None:
    """Claude Code's `<type>_<topic>.md` with `metadata:` (some pinned), Obsidian notes without frontmatter."""
    code = bench.load("claude-code").files
    assert all("_" in p and "/" not in p for p in code) and all("\nmetadata:\n  type: " in t for t in code.values())
    assert any("\n  pinned: true\n" in t for t in code.values())
    for name in ("korean", "chinese"):  # Claude Code's file names over native text
        files = bench.load(name).files
        assert "feedback_vercel-env-newline.md" in files or "project_factor-state-machine.md" in files
    vault = bench.load("obsidian").files
    assert sum(not t.startswith("---\n") for t in vault.values()) >= 5 and sum("[[" in t for t in vault.values()) >= 10
    assert "因子状态机的转移规则" in {q.query for q in bench.load("chinese").answerable}


def test_problems_are_found() -> None:
    mem = bench.Labelled("m", {"a.md": "---\nname: a\ndescription: d\ntype: reference\n---\nA.\n", "b.md": "B.\n",
                               "c.md": "---\nname: c\nC.\n"},
                         [bench.Answerable("alpha", frozenset({"a.md", "gone.md"}), "word", "en"),
                          bench.Answerable("beta", frozenset({"b.md"}), "words", "fr")],
                         [bench.NoAnswer("Alpha", "unrelated", "en")], ["thanks"])
    found = bench.problems(mem)
    assert not any("b.md" in p for p in found)  # a note without frontmatter is as a person or Obsidian writes it
    assert any("c.md: its frontmatter block does not close" in p for p in found)
    assert any("gone.md, which is not in the memory" in p for p in found)
    assert any("is in answerable and in no_answer" in p for p in found)
    assert any("'alpha' has kind 'word'" in p for p in found) and any("'beta' has language 'fr'" in p for p in found)


def test_plain_bm25_and_the_labelled_table() -> None:
    """The baseline answers whatever shares a word; the table counts top-5 answers, sure hits and the hook per group."""
    find = bench.plain_bm25({"a.md": "The launch date is in May.\n", "b.md": "Dentist on Friday.\n", "c.md": "因子状态机\n"})
    assert find("when is the launch?", 5) == ["a.md"] and find("the", 5) == [] and find("Friday launch", 5)[:2] != []
    assert find("因子状态机", 5) == ["c.md"] and find("因子", 5) == []  # a spaceless run is one token to unicode61
    launch = bench.Answerable("launch", frozenset({"a.md"}), "words", "en")
    para = bench.Answerable("go-live", frozenset({"a.md"}), "paraphrase", "en")
    zero = bench.NoAnswer("zebra", "unrelated", "en")
    near = bench.NoAnswer("dentist phone", "near-miss", "zh")
    runs = {"lexical": {"m": bench.ModeRun([(launch, ["a.md"], ["a.md"]), (para, ["b.md"], ["b.md"])],
                                           [(zero, []), (near, ["b.md"])])}}
    hooks = {"m": bench.HookRun([(launch, ["a.md", "b.md"]), (para, [])], [(zero, []), (near, ["b.md"])])}
    scores = bench.labelled_scores([bench.Labelled("m", {}, [launch, para], [zero, near], [])], runs, hooks)
    rows = {r["group"]: r for r in scores["answerable"]}
    assert rows["all"]["lexical"] == 0.5 and rows["kind paraphrase"]["lexical"] == 0.0
    assert rows["all"]["hook injects the answer"] == 0.5 and rows["all"]["hook files per prompt"] == 1.0
    assert "lang zh" not in rows and "kind near-miss" not in rows  # a group with no query of its side has no row
    rows = {r["group"]: r for r in scores["no_answer"]}
    assert rows["all"]["lexical"] == 0.5 and rows["lang zh"]["lexical"] == 0.0 and rows["kind unrelated"]["lexical"] == 1.0
    assert rows["lang zh"]["hook injects anything"] == 1.0
    text = bench.labelled_report([bench.Labelled("m", {}, [launch, para], [zero, near], [])], runs, hooks)
    assert "| kind paraphrase | 1 | 0.0% | 0.0% | 0.0 |" in text


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
    hook = bench.run_hook(tmp_path / "m", mem)
    assert hook.answerable[0][1] == ["project/flock.md"] and hook.no_answer[0][1] == []
    assert bench.run_bm25(mem).answerable[0][1][0] == "project/flock.md"
    text = '<memory-1a2b3c4d path="Books/The Cartographer&#x27;s Daughter.md" type="reference">\nx\n</memory-1a2b3c4d>'
    assert bench.recalled_paths(text) == ["Books/The Cartographer's Daughter.md"]
