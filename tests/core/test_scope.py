"""Scopes: the household case, where nobody's private notes leak into another's view."""

from pathlib import Path

import pytest

import memdir
from memdir import Forbidden, NotFound
from memdir.core.scope import Scope


@pytest.fixture
def household(md: memdir.Memdir) -> memdir.Memdir:
    md.write("household/groceries.md", "Oat milk, not cow's milk.\n", description="shopping rules")
    md.write("people/alice/health.md", "Allergic to penicillin.\n", description="alice's health")
    md.write("people/bob/gifts.md", "Surprise for alice: a bike.\n", description="bob's gift ideas")
    return md


def test_a_scope_sees_only_its_prefixes(household: memdir.Memdir) -> None:
    alice = household.scope(read=["household/"], write=["people/alice/"])
    assert [e.path for e in alice.list()] == ["household/groceries.md", "people/alice/health.md"]
    assert alice.read("people/alice/health.md").body == "Allergic to penicillin.\n"
    with pytest.raises(NotFound, match="people/bob/gifts.md does not exist"):
        alice.read("people/bob/gifts.md")  # not Forbidden: a scope does not reveal what exists
    assert [h.path for h in alice.grep("alice")] == ["people/alice/health.md"]
    assert alice.list("people/bob/") == []


def test_the_index_of_a_scope_lists_only_what_it_can_read(household: memdir.Memdir, root: Path) -> None:
    alice = household.scope(read=["household/"], write=["people/alice/"])
    text = alice.index()
    assert "alice's health" in text and "shopping rules" in text
    assert "bob" not in text
    assert "bob's gift ideas" in (root / "MEMORY.md").read_text()  # the tenant's own index has everything
    with pytest.raises(NotFound):
        alice.index("people/bob")


def test_writes_outside_the_write_prefixes_are_forbidden(household: memdir.Memdir) -> None:
    alice = household.scope(read=["household/"], write=["people/alice/"])
    with pytest.raises(Forbidden, match=r"household/groceries.md is outside what this principal may write \(people/alice/\)"):
        alice.write("household/groceries.md", "Cow's milk is fine.\n")
    with pytest.raises(Forbidden):
        alice.delete("household/groceries.md")
    with pytest.raises(Forbidden):
        alice.rename("people/alice/health.md", "household/health.md")
    assert household.read("household/groceries.md").body == "Oat milk, not cow's milk.\n"
    written = alice.write("people/alice/todo.md", "Book a checkup.\n")
    assert written.change == "created"
    assert "todo" in alice.index() and "todo" in household.index()


def test_history_and_undo_stay_inside_the_scope(household: memdir.Memdir) -> None:
    bob = household.scope(read=["household/"], write=["people/bob/"])
    assert {r.path for r in bob.history()} == {"household/groceries.md", "people/bob/gifts.md"}
    assert bob.history("people/alice/health.md") == []
    with pytest.raises(Forbidden):
        bob.undo("household/groceries.md")
    bob.write("people/bob/gifts.md", "A helmet too.\n")
    assert bob.undo("people/bob/gifts.md").body == "Surprise for alice: a bike.\n"


def test_views_see_each_others_changes(household: memdir.Memdir) -> None:
    alice = household.scope(read=["household/"], write=["people/alice/"])
    bob = household.scope(read=["household/"], write=["people/bob/"])
    assert "new rule" not in bob.index()
    household.write("household/rules.md", "Shoes off.\n", description="new rule")
    assert "new rule" in bob.index() and "new rule" in alice.index()
    alice.write("people/alice/diary.md", "Good day.\n", description="alice diary")
    assert "alice diary" not in bob.index()


def test_a_view_of_a_view_only_narrows(household: memdir.Memdir) -> None:
    alice = household.scope(read=["household/"], write=["people/alice/"])
    wider = alice.scope(read=[""], write=["people/"])  # asks for everything
    assert wider.principal == Scope(read=("household/", "people/alice/"), write=("people/alice/",))
    assert [e.path for e in wider.list()] == ["household/groceries.md", "people/alice/health.md"]


def test_scoped_views_cannot_reconcile_or_close_the_store(household: memdir.Memdir) -> None:
    alice = household.scope(read=["household/"])
    with pytest.raises(Forbidden, match="reconcile works on the whole memory"):
        alice.reconcile()
    alice.close()
    assert household.read("household/groceries.md")  # still open
    with pytest.raises(Forbidden, match="may write \\(nothing\\)"):
        alice.write("household/x.md", "read-only view\n")


def test_scope_prefixes_are_checked_paths() -> None:
    with pytest.raises(memdir.InvalidPath):
        Scope.of(read=["../escape"])
    assert Scope.of(read=["a", "a/b/", "c/"], write=["a/b"]) == Scope(read=("a/", "c/"), write=("a/b/",))
