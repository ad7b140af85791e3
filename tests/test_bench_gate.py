"""bench/gate.py replays the prompt hook's injection and search's no-sure-hit from a record, as a rule decides."""

import math

import benchscript

gate = benchscript.load("gate")


def question(half: str, relevant: list[str], *parts: list[tuple[str, bool, float]]) -> dict[str, object]:
    """A recorded question: each part (the query, then its clauses) with its lexical hits (path, sure, share held)."""
    return {"memory": "m", "half": half, "query": "q", "kind": "", "lang": "en", "relevant": relevant,
            "parts": [{"asked": f"part {i}", "lexical": [{"path": p, "sure": s, "cover": c} for p, s, c in hits]}
                      for i, hits in enumerate(parts)]}


def test_the_hook_takes_the_sure_hits_of_the_query_and_of_its_clauses_and_search_only_the_querys() -> None:
    rows = [
        question("tuning", ["a.md"], [("a.md", False, 0.5)], [("a.md", True, 0.7)]),  # its clause is sure of it
        question("tuning", ["b.md"], [("x.md", True, 0.9), ("b.md", False, 0.4)]),  # another file, not the answer
        question("tuning", [], [("c.md", True, 0.6)]),
        question("held-out", [], [("c.md", False, 0.55)], [("d.md", True, 0.8)]),  # only its clause is sure
        question("held-out", [], [("c.md", False, 0.2)]),
    ]
    assert gate.injected(rows[0], "lexical") == ["a.md"] and gate.injected(rows[1], "lexical") == ["x.md"]
    figures = gate.replay(rows)
    assert figures["tuning"] == {"answer injected": 0.5, "anything injected, no answer": 1.0,
                                 "no sure hit, no answer": 0.0}
    assert math.isnan(figures["held-out"]["answer injected"])  # no answerable question in that half
    assert figures["held-out"]["anything injected, no answer"] == 0.5 and figures["held-out"]["no sure hit, no answer"] == 1.0
    stricter = gate.replay(rows, sure=lambda row, part, hit: hit["cover"] >= 0.7)  # a rule tried on the record
    assert stricter["tuning"]["answer injected"] == 0.5 and stricter["tuning"]["anything injected, no answer"] == 0.0
    assert stricter["held-out"]["anything injected, no answer"] == 0.5


def test_a_rule_of_hits_sure_on_their_own_keeps_searchs_beside_and_margins_compare_with_the_other_files() -> None:
    rows = [question("tuning", ["b.md"], [("a.md", False, 0.7), ("b.md", False, 0.35), ("c.md", False, 0.2)]),
            question("tuning", [], [("b.md", False, 0.35)])]  # nothing sure on its own: nothing beside
    rule = gate.beside(lambda row, part, hit: hit["cover"] >= 0.6)
    assert gate.injected(rows[0], "lexical", rule) == ["a.md", "b.md"] and gate.injected(rows[1], "lexical", rule) == []
    part = {"use": {"a.md": [0.5, 0.6, 0.2, 0], "b.md": [0.3, 0.7, 0.1, 2], "c.md": [0.1, 0.1, 0.4, 1]}}
    assert [round(m, 3) for m in gate.margins(part, "a.md")] == [0.2, -0.1, -0.2]
