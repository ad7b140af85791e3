"""The page's sessions: strangers' sessions apart and bounded, each principal's own bounded."""

from __future__ import annotations

from pathlib import Path

from memdir.web.sessions import SESSION_IDLE, SESSION_MAX, Session, Sessions


def same(got: Session | None, made: Session) -> bool:
    return got is not None and (got.id, got.principal, got.csrf) == (made.id, made.principal, made.csrf)


def test_strangers_push_out_only_each_other_and_a_principal_only_its_own() -> None:
    sessions = Sessions(max_pending=3, per_principal=2)
    alice, bob = sessions.new("alice", proven=True), sessions.new("bob", proven=True)
    strangers = [sessions.new(None, proven=False) for _ in range(10)]
    assert same(sessions.get(alice.id), alice) and same(sessions.get(bob.id), bob)
    assert [sessions.get(s.id) is not None for s in strangers] == [False] * 7 + [True] * 3
    more = [sessions.new("alice", proven=True) for _ in range(2)]
    assert sessions.get(alice.id) is None and same(sessions.get(bob.id), bob)  # alice's oldest went, not bob's
    assert all(same(sessions.get(s.id), s) for s in more)
    assert len(sessions) == 3 + 2 + 1


def test_a_session_that_comes_back_with_its_cookie_is_proven() -> None:
    sessions = Sessions(max_pending=2, per_principal=5)
    mine = sessions.new("default", proven=False)  # a server without tokens: the first page a browser asks for
    assert same(sessions.get(mine.id), mine)  # its cookie came back
    for _ in range(5):
        sessions.new("default", proven=False)
    assert same(sessions.get(mine.id), mine)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_ends_with_its_credential_and_a_week_after_it_began_whatever_its_use() -> None:
    clock = Clock()
    sessions = Sessions(clock=clock)
    from_jwt = sessions.new("jwt:alice", proven=True, until=clock.now + 300)  # the token's exp
    from_token = sessions.new("alice", proven=True)
    clock.now += 299
    assert same(sessions.get(from_jwt.id), from_jwt)
    clock.now += 1
    assert sessions.get(from_jwt.id) is None  # before: it lasted 12 h past its last use, its token long expired
    while clock.now + SESSION_IDLE / 2 < 1_000_000.0 + SESSION_MAX:  # used every six hours for a week
        clock.now += SESSION_IDLE / 2
        assert same(sessions.get(from_token.id), from_token)
    clock.now = 1_000_000.0 + SESSION_MAX  # used six hours ago, begun a week ago
    assert sessions.get(from_token.id) is None


def test_the_workers_of_one_server_share_their_sessions(tmp_path: Path) -> None:
    """`serve --workers N`: a session one worker made, and its CSRF token and messages, are there in another."""
    one, other = Sessions(tmp_path / "sessions.db"), Sessions(tmp_path / "sessions.db")
    made = one.new("alice", proven=True)
    made.flash.append({"message": "saved", "kind": "ok", "undo": None})
    one.save(made)
    got = other.get(made.id)
    assert same(got, made) and got is not None and got.flash == made.flash
    other.drop(made.id)
    assert one.get(made.id) is None
