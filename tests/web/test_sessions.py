"""The page's sessions: strangers' sessions apart and bounded, each principal's own bounded."""

from __future__ import annotations

from memdir.web.sessions import Sessions


def test_strangers_push_out_only_each_other_and_a_principal_only_its_own() -> None:
    sessions = Sessions(max_pending=3, per_principal=2)
    alice, bob = sessions.new("alice", proven=True), sessions.new("bob", proven=True)
    strangers = [sessions.new(None, proven=False) for _ in range(10)]
    assert sessions.get(alice.id) is alice and sessions.get(bob.id) is bob
    assert [sessions.get(s.id) is not None for s in strangers] == [False] * 7 + [True] * 3
    more = [sessions.new("alice", proven=True) for _ in range(2)]
    assert sessions.get(alice.id) is None and sessions.get(bob.id) is bob  # alice's oldest went, not bob's
    assert all(sessions.get(s.id) is s for s in more)
    assert len(sessions) == 3 + 2 + 1


def test_a_session_that_comes_back_with_its_cookie_is_proven() -> None:
    sessions = Sessions(max_pending=2, per_principal=5)
    mine = sessions.new("default", proven=False)  # a server without tokens: the first page a browser asks for
    assert sessions.get(mine.id) is mine  # its cookie came back
    for _ in range(5):
        sessions.new("default", proven=False)
    assert sessions.get(mine.id) is mine
