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
