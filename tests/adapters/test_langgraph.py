"""LangGraph's BaseStore on memdir: `MemdirStore` beside LangGraph's own `InMemoryStore`.

The directed tests read as usage; the generated test runs the same batches on
both stores (on the folder store and on PostgreSQL) and compares every result
where the interface defines it. Where `InMemoryStore` defines more than the
interface does, the comparison says so in `DIFFERENCES`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Backend, make_backend
from framework_docs import PAGES, run_docs_example
from services import need

import memdir

need("langgraph")
need("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from memdir.adapters.langgraph import MemdirItem, MemdirStore, decode, encode, file_name  # noqa: E402

# Where InMemoryStore answers more than BaseStore defines; the comparison below allows exactly these.
DIFFERENCES = {
    "order": "a search without a query: InMemoryStore returns items in the order their namespace and key were first "
             "inserted; memdir returns them newest first (as PostgresStore does), so pages are compared as sets",
    "query": "a search with a query: InMemoryStore without an embedding index ignores the query; memdir ranks by its "
             "search, so the hits must be items that match the prefix and filter, best first",
    "created_at": "InMemoryStore stamps created_at anew on every put; memdir keeps it across updates",
    "empty namespaces": "InMemoryStore lists a namespace after a get touched it or its last item was deleted (its "
                        "defaultdict); memdir lists folders that hold items, as PostgresStore lists rows",
}


@pytest.fixture(params=["fs", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, request, tmp_path)


@pytest.fixture
def store(backend: Backend) -> Iterator[MemdirStore]:
    with backend.open() as md:
        yield MemdirStore(md)


# ---------------------------------------------------------------- items are topic files


def test_an_item_is_a_topic_file_a_person_can_read(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        store = MemdirStore(md)
        store.put(("users", "U1"), "prefs", {"content": "Likes short answers.\n", "lang": "en"})
        item = store.get(("users", "U1"), "prefs")
        assert item is not None and item.value == {"content": "Likes short answers.\n", "lang": "en"}
        assert (item.namespace, item.key, item.created_at) == (("users", "U1"), "prefs", item.updated_at)
        text = (tmp_path / "memory" / "users" / "^u1" / "prefs.md").read_text()
        assert text.startswith("---\nname: prefs\nlanggraph:\n  key: prefs\n  body: content\n  value:\n    lang: en\n")
        assert text.endswith("---\nLikes short answers.\n")
        assert "- [prefs](users/^u1/prefs.md) — Likes short answers." in md.index() or "users/" in md.index()
        md.write("users/^u1/prefs.md", "Likes long answers.\n")  # a person corrects the body
        assert store.get(("users", "U1"), "prefs").value["content"] == "Likes long answers.\n"  # type: ignore[union-attr]
        assert [r.op for r in md.history("users/^u1/prefs.md")] == ["write", "write"]  # both journaled, undoable


def test_a_hand_edit_is_the_items_last_update(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with memdir.open(tmp_path / "memory") as md:
        store = MemdirStore(md)
        store.put(("a",), "k", {"content": "old"})
        later = memdir.model.Stamp("2099-01-01T00:00:00Z")
        monkeypatch.setattr(memdir.model, "now_stamp", lambda: later)  # memdir's clock, an hour or a century on
        md.write("a/k.md", "corrected\n")
        item = store.get(("a",), "k")
        assert item is not None and item.value == {"content": "corrected\n"} and item.updated_at.year == 2099


def test_a_hand_written_file_is_an_item_with_its_body_as_content(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        md.write("project/flock.md", "Launch on 2026-12-15.\n", description="Flock's launch")
        md.write("project/Notes.md", "not a name the store writes, so not an item\n")
        store = MemdirStore(md)
        assert store.get(("project",), "flock").value == {"content": "Launch on 2026-12-15.\n"}  # type: ignore[union-attr]
        assert [i.key for i in store.search(("project",))] == ["flock"]


@pytest.mark.parametrize("key", ["", "k", "K", "/notes.md", "memory", "MEMORY", "tenants", "a.b", ".hidden", "x y",
                                 "café", "550e8400-e29b-41d4-a716-446655440000", "+2f", "^k", "~", "é" * 150, "x" * 400])
def test_every_key_has_its_own_file_and_comes_back(tmp_path: Path, key: str) -> None:
    with memdir.open(tmp_path / "memory") as md:
        store = MemdirStore(md)
        store.put(("ns",), key, {"v": key})
        store.put(("ns",), key.swapcase(), {"v": key.swapcase()})
        assert store.get(("ns",), key).value == {"v": key}  # type: ignore[union-attr]
        assert sorted(i.key for i in store.search(("ns",))) == sorted({key, key.swapcase()})
        assert all(len(e.path.encode()) < 300 for e in md.list())


@given(st.text(), st.booleans())
def test_names_are_reversible_and_never_differ_only_by_case(name: str, key: bool) -> None:
    text = encode(name, key=key)
    assert decode(text, key=key) == name or (not key and name == "")
    assert text == text.lower() or "^" not in text.lower() and text.lower() == text
    assert not any(c.isupper() for c in text)
    memdir.paths.topic_path(f"ns/{file_name(name)}.md")  # a valid memdir path, whatever the key


def test_the_docs_example_runs(tmp_path: Path) -> None:
    assert run_docs_example(PAGES / "langgraph.md", tmp_path) == [
        "Noted: short answers.", "{'source': 'chat', 'content': 'I like short answers.'}", "I like short answers.", "None"]


# ---------------------------------------------------------------- batches


def test_a_batch_answers_in_op_order_from_the_state_before_it(store: MemdirStore) -> None:
    store.put(("a",), "k", {"n": 1})
    got = store.batch([
        PutOp(("a",), "k", {"n": 2}),
        GetOp(("a",), "k"),  # the state before the batch
        PutOp(("a",), "k", {"n": 3}),  # the last put of a key wins
        PutOp(("a",), "gone", None),  # deleting a missing key is a no-op
        SearchOp(("a",)),
        ListNamespacesOp(),
    ])
    assert [type(r).__name__ for r in got] == ["NoneType", "MemdirItem", "NoneType", "NoneType", "list", "list"]
    assert got[1].value == {"n": 1} and [i.value for i in got[4]] == [{"n": 1}] and got[5] == [("a",)]
    assert store.get(("a",), "k").value == {"n": 3}  # type: ignore[union-attr]


def test_a_batch_lands_whole_or_not_at_all(store: MemdirStore) -> None:
    agents = MemdirStore(store.md.for_agent())  # a model's writes keep to the size limits
    with pytest.raises(memdir.LimitExceeded):
        agents.batch([PutOp(("a",), "small", {"n": 1}), PutOp(("a",), "big", {"content": "x\n" * 500})])
    assert store.search(("a",)) == []


def test_created_at_survives_updates_and_search_is_newest_first(store: MemdirStore) -> None:
    store.put(("a",), "first", {"n": 1})
    store.put(("a",), "second", {"n": 2})
    created = store.get(("a",), "first").created_at  # type: ignore[union-attr]
    store.put(("a",), "first", {"n": 3})
    first = store.get(("a",), "first")
    assert first is not None and first.created_at == created < first.updated_at
    found = store.search(("a",))
    assert [(i.key, i.score) for i in found] == [("first", None), ("second", None)]
    assert [i.key for i in store.search(("a",), limit=1, offset=1)] == ["second"]


def test_search_with_a_query_is_best_first(store: MemdirStore) -> None:
    store.put(("m",), "morning", {"content": "Prefers coffee in the morning, sometimes tea."})
    store.put(("m",), "tea", {"content": "Tea: green, no sugar."})  # the key is the file's name, which weighs most
    store.put(("m",), "other", {"content": "Nothing about drinks here."})
    found = store.search(("m",), query="tea")
    assert [i.key for i in found] == ["tea", "morning"] and found[0].score >= found[1].score > 0  # type: ignore[operator]
    assert [i.key for i in store.search(("m",), query="tea", filter={"content": {"$ne": ""}}, limit=1)] == ["tea"]


def test_filters_compare_as_langgraph_defines_them(store: MemdirStore) -> None:
    store.put(("f",), "a", {"n": 1, "tag": "x", "meta": {"lang": "en", "v": 2}, "tags": ["a", "b"]})
    store.put(("f",), "b", {"n": 5, "tag": "y"})
    store.put(("f",), "c", {"tag": "x"})  # no n: a comparison does not match it (InMemoryStore raises TypeError)

    def keys(where: dict[str, Any]) -> list[str]:
        return sorted(i.key for i in store.search(("f",), filter=where))

    assert keys({"tag": "x"}) == ["a", "c"]
    assert keys({"n": {"$gt": 1}}) == ["b"] and keys({"n": {"$gte": 1, "$lt": 5}}) == ["a"]
    assert keys({"n": {"$lte": 5, "$ne": 1}}) == ["b"] and keys({"tag": {"$eq": "y"}}) == ["b"]
    assert keys({"meta": {"lang": "en"}}) == ["a"] and keys({"tags": ["a", "b"]}) == ["a"]


def test_list_namespaces_with_prefix_suffix_wildcards_and_depth(store: MemdirStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"), ("B",)]:
        store.put(ns, "k", {"n": 0})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(max_depth=1) == [("B",), ("a",)] and store.list_namespaces(limit=1, offset=5) == [("a", "c", "f")]
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {})


def test_expect_is_compare_and_swap(store: MemdirStore) -> None:
    store.put(("c",), "k", {"n": 1}, expect=None)  # must not exist yet
    item = store.get(("c",), "k")
    assert isinstance(item, MemdirItem)
    store.put(("c",), "k", {"n": 2}, expect=item.version)
    with pytest.raises(memdir.Conflict):
        store.put(("c",), "k", {"n": 3}, expect=item.version)  # someone wrote since that read
    with pytest.raises(memdir.Conflict):
        store.put(("c",), "k", {"n": 3}, expect=None)
    with pytest.raises(memdir.Conflict):
        store.delete(("c",), "k", expect=item.version)
    store.delete(("c",), "k", expect=store.get(("c",), "k").version)  # type: ignore[union-attr]
    assert store.get(("c",), "k") is None
    with pytest.raises(memdir.Conflict):
        store.put(("c",), "k", {"n": 4}, expect=item.version)  # deleted since
    store.delete(("c",), "k", expect=None)  # not there, as expected: nothing to do
    with pytest.raises(NotImplementedError):
        store.put(("c",), "k", {"n": 1}, ttl=5)


def test_the_async_methods(store: MemdirStore) -> None:
    async def run() -> list[Any]:
        await store.aput(("a",), "k", {"n": 1})
        item = await store.aget(("a",), "k")
        assert item is not None
        await store.aput(("a",), "k", {"n": 2}, expect=item.version)
        return [await store.aget(("a",), "k"), await store.asearch(("a",)), await store.alist_namespaces()]

    got, found, spaces = asyncio.run(run())
    assert got.value == {"n": 2} and [i.key for i in found] == ["k"] and spaces == [("a",)]


# ---------------------------------------------------------------- generated batches, beside InMemoryStore

NAMESPACES = [("a",), ("a", "b"), ("A",), ("a", "B", "c"), ("x y",), ("é",), ("memory",), ("tenants", "t")]
KEYS = ["k", "K", "", "/notes.md", "memory", "a.b", "550e8400-e29b-41d4-a716-446655440000", "é", "x" * 230, "+2f"]
CONTENTS = ["", "one line", "two\nlines\n", "café ☕ tea", "---\nlooks like frontmatter\n---\n", "  spaced  ", "crlf\r\nend"]
PREFIXES = [(), ("a",), ("a", "b"), ("A",), ("zz",)]
FILTERS: list[dict[str, Any] | None] = [None, {"n": 1}, {"n": {"$gt": 0}}, {"n": {"$lte": 1, "$ne": -1}}, {"tag": "x"},
                                        {"tag": {"$ne": "x"}}, {"nested": {"x": 1}}]
FULL = 10**6

values = st.builds(
    lambda n, extra: {"n": n, **extra},
    st.integers(-2, 2),
    st.fixed_dictionaries({}, optional={"tag": st.sampled_from(["x", "y", "yes", "2026-12-01"]),
                                        "content": st.sampled_from(CONTENTS), "nested": st.fixed_dictionaries({"x": st.integers(0, 1)}),
                                        "list": st.lists(st.integers(0, 3), max_size=3)}),
)
puts = st.builds(PutOp, st.sampled_from(NAMESPACES), st.sampled_from(KEYS), st.one_of(values, values, st.none()))
gets = st.builds(GetOp, st.sampled_from(NAMESPACES), st.sampled_from(KEYS))
searches = st.builds(SearchOp, st.sampled_from(PREFIXES), st.sampled_from(FILTERS), st.sampled_from([1, 2, 10]),
                     st.sampled_from([0, 1, 3]), st.sampled_from([None, None, None, "line", "tea", "looks"]))
conditions = st.builds(
    lambda prefix, suffix: tuple([MatchCondition("prefix", prefix)] * bool(prefix) + [MatchCondition("suffix", suffix)] * bool(suffix)),
    st.sampled_from([(), ("a",), ("a", "*")]), st.sampled_from([(), ("c",), ("*", "b")]),
)
lists = st.builds(ListNamespacesOp, conditions, st.sampled_from([None, 1, 2]), st.sampled_from([100, 2]), st.sampled_from([0, 1]))
batches = st.lists(st.one_of(puts, puts, gets, searches, lists), min_size=1, max_size=4)
_tenants = itertools.count()


def _shown(items: list[Any]) -> list[tuple[tuple[str, ...], str, str]]:
    return sorted((tuple(i.namespace), i.key, json.dumps(i.value, sort_keys=True)) for i in items)


def _check_search(op: SearchOp, ours: list[Any], theirs: list[Any], ours_all: list[Any], theirs_all: list[Any]) -> None:
    assert _shown(ours_all) == _shown(theirs_all)  # the same items match the prefix and the filter
    if op.query is None:  # DIFFERENCES["order"]: the same page size, and our page is a page of our order
        assert len(ours) == len(theirs)
        assert _shown(ours) == _shown(ours_all[op.offset : op.offset + op.limit])
        assert [i.updated_at for i in ours_all] == sorted((i.updated_at for i in ours_all), reverse=True)
        assert all(i.score is None for i in ours)
    else:  # DIFFERENCES["query"]
        assert set(_shown(ours)) <= set(_shown(theirs_all)) and len(ours) <= op.limit
        scores = [i.score for i in ours]
        assert all(isinstance(s, float) for s in scores) and scores == sorted(scores, reverse=True)


def _expected_namespaces(op: ListNamespacesOp, live: list[Any]) -> list[tuple[str, ...]]:
    """InMemoryStore's own answer over the items that exist (DIFFERENCES["empty namespaces"])."""
    fresh = InMemoryStore()
    for item in live:
        fresh.put(tuple(item.namespace), item.key, item.value)
    return fresh.batch([op])[0]  # type: ignore[return-value]


def _run(store: Any, ops: list[Any], asynchronous: bool) -> list[Any]:
    return asyncio.run(store.abatch(ops)) if asynchronous else store.batch(ops)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(batches, st.booleans()), min_size=1, max_size=8))
def test_generated_batches_answer_as_inmemorystore(backend: Backend, steps: list[tuple[list[Any], bool]]) -> None:
    theirs = InMemoryStore()
    created: dict[tuple[tuple[str, ...], str], Any] = {}  # DIFFERENCES["created_at"]: ours, kept across updates
    with backend.open(tenant=f"lg{next(_tenants)}") as md:
        ours = MemdirStore(md)
        for ops, asynchronous in steps:
            # Each search also runs unpaged in the same batch (reads see the state before it), and so does a
            # search of everything, which the namespace listings are checked against.
            extra = [op._replace(offset=0, limit=FULL, query=None) for op in ops if isinstance(op, SearchOp)] + [SearchOp((), limit=FULL)]
            mine, ref = _run(ours, ops + extra, asynchronous), _run(theirs, ops + extra, asynchronous)
            full = iter(zip(mine[len(ops) :], ref[len(ops) :], strict=True))
            live = ref[-1]
            for op, a, b in zip(ops, mine[: len(ops)], ref[: len(ops)], strict=True):
                if isinstance(op, GetOp):
                    assert (a is None) == (b is None) and (a is None or _shown([a]) == _shown([b]))
                elif isinstance(op, SearchOp):
                    _check_search(op, a, b, *next(full))
                elif isinstance(op, ListNamespacesOp):
                    assert a == _expected_namespaces(op, live)
                else:
                    assert a is None and b is None
            now = ours.search((), limit=FULL)
            assert _shown(now) == _shown(theirs.search((), limit=FULL))
            for item in now:
                assert item.created_at == created.setdefault((item.namespace, item.key), item.created_at) <= item.updated_at
            for gone in set(created) - {(i.namespace, i.key) for i in now}:
                del created[gone]


def test_deep_agents_store_backend_runs_on_it(store: MemdirStore) -> None:
    """Deep Agents' StoreBackend keeps its files as store items whose keys are paths."""
    backends = need("deepagents.backends")
    files = backends.StoreBackend(store=store, namespace=lambda _rt: ("filesystem",))
    assert files.write("/notes/todo.md", "- buy tea\n").error is None
    assert files.edit("/notes/todo.md", "tea", "green tea").occurrences == 1
    assert files.read("/notes/todo.md").file_data["content"] == "- buy green tea\n"
    assert [m["path"] for m in files.grep("green").matches] == ["/notes/todo.md"]
    assert [e["path"] for e in files.ls("/").entries] == ["/notes/"]
    assert store.get(("filesystem",), "/notes/todo.md").value["content"] == "- buy green tea\n"  # type: ignore[union-attr]
