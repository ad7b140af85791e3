"""Google ADK's BaseMemoryService on memdir: `MemdirMemoryService` beside ADK's own `InMemoryMemoryService`.

Both take the same calls (hand-picked ones, then sequences hypothesis
generates), on the folder store and on PostgreSQL, and every search must
return the same memories (id, author, timestamp, text), in any order: the
ranking is memdir's BM25, not ADK's count of shared words. The texts use words
that both tokenisers read alike (no function words, no shared stems), and
each event belongs to one session and comes once in it, as ADK mints event ids
(ADK's own service would keep a session's duplicate event twice).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Backend, make_backend
from framework_docs import PAGES, run_docs_example
from services import need

import memdir
from memdir.remember import capture

need("google.adk")
need("hypothesis")

from google.adk.cli.service_registry import ServiceRegistry, load_services_module  # noqa: E402
from google.adk.events.event import Event  # noqa: E402
from google.adk.memory import InMemoryMemoryService  # noqa: E402
from google.adk.memory.memory_entry import MemoryEntry  # noqa: E402
from google.adk.sessions.session import Session  # noqa: E402
from google.genai import types  # noqa: E402
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memdir.adapters.adk import MemdirMemoryService, register  # noqa: E402

T0 = 1_780_000_000.0
_tenants = itertools.count()


def event(eid: str, text: str, author: str = "user", at: float = T0) -> Event:
    role = "user" if author == "user" else "model"
    return Event(id=eid, author=author, invocation_id="i1", timestamp=at,
                 content=types.Content(role=role, parts=[types.Part(text=text)]))


def session(sid: str, *events: Event, app: str = "app", user: str = "alice") -> Session:
    return Session(id=sid, app_name=app, user_id=user, events=list(events))


def found(service: Any, query: str, app: str = "app", user: str = "alice") -> list[tuple[Any, ...]]:
    got = asyncio.run(service.search_memory(app_name=app, user_id=user, query=query))
    return sorted((m.id, m.author, m.timestamp, " ".join(p.text or "" for p in m.content.parts or [])) for m in got.memories)


@pytest.fixture(params=["fs", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, request, tmp_path)


@pytest.fixture
def md(backend: Backend) -> Iterator[memdir.Memdir]:
    with backend.open(tenant=f"adk{next(_tenants)}") as m:
        yield m


def both(md: memdir.Memdir) -> tuple[InMemoryMemoryService, MemdirMemoryService]:
    return InMemoryMemoryService(), MemdirMemoryService(md)


# ---------------------------------------------------------------- hand-picked calls


def test_a_session_added_as_it_grows_is_one_record(md: memdir.Memdir) -> None:
    theirs, ours = both(md)
    s = session("s1", event("e-a", "I like apple pie"), event("e-b", "Noted: apple pie", "helper", T0 + 1))
    for service in (theirs, ours):
        asyncio.run(service.add_session_to_memory(s))
    s.events.append(event("e-c", "banana bread too", at=T0 + 2))
    for service in (theirs, ours):
        asyncio.run(service.add_session_to_memory(s))
    assert found(ours, "apple") == found(theirs, "apple") and len(found(ours, "apple")) == 2
    assert found(ours, "banana") == found(theirs, "banana")
    records = capture.sessions(md)
    assert [r.session for r in records] == ["adk:app/alice/s1"]  # the same session is one record, replaced
    assert "banana bread too" in md.read(records[0].path).body
    assert [e.path.rsplit("/", 1)[-1] for e in md.list("adk/app/alice/")] == ["e-a.md", "e-b.md", "e-c.md"]


def test_event_deltas_are_deduplicated_by_event_id(md: memdir.Memdir) -> None:
    theirs, ours = both(md)
    for service in (theirs, ours):
        for events in ([event("d1", "cherry jam")], [event("d1", "cherry jam again"), event("d2", "cherry tart")]):
            asyncio.run(service.add_events_to_memory(app_name="app", user_id="alice", session_id="s1", events=events))
        asyncio.run(service.add_events_to_memory(app_name="app", user_id="alice", events=[event("d3", "cherry pit")]))
    assert found(ours, "cherry") == found(theirs, "cherry")
    assert [m[-1] for m in found(ours, "cherry")] == ["cherry jam", "cherry tart", "cherry pit"]
    assert md.count("adk/app/alice/conversations/") == 3 and len(capture.sessions(md)) == 2


def test_a_deleted_event_stays_deleted_and_leaves_the_record(md: memdir.Memdir) -> None:
    theirs, ours = both(md)
    s = session("s1", event("locker", "my locker code is walnut"), event("party", "garden party on friday", at=T0 + 1))
    for service in (theirs, ours):
        asyncio.run(service.add_session_to_memory(s))
        asyncio.run(service.delete_memory(app_name="app", user_id="alice", memory_id="locker"))
        asyncio.run(service.add_session_to_memory(s))  # added again: the deleted event does not come back
    assert found(ours, "walnut") == found(theirs, "walnut") == []
    record = capture.sessions(md)[0].path
    assert "walnut" not in md.read(record).text and "garden" in md.read(record).text
    md.undo("adk/app/alice/conversations/s1/locker.md")  # a person takes the deletion back
    assert [m[0] for m in found(ours, "walnut")] == ["locker"]


def test_a_session_added_again_without_an_event_drops_it_but_keeps_it_addable(md: memdir.Memdir) -> None:
    theirs, ours = both(md)
    for service in (theirs, ours):
        asyncio.run(service.add_session_to_memory(session("s1", event("kettle", "violet kettle"), event("stripes", "zebra"))))
        asyncio.run(service.add_session_to_memory(session("s1", event("stripes", "zebra"))))  # e.g. a rewind
        assert found(service, "violet") == []
        asyncio.run(service.add_session_to_memory(session("s1", event("kettle", "violet kettle"), event("stripes", "zebra"))))
    assert found(ours, "violet") == found(theirs, "violet") != []


def test_apps_and_users_are_apart(md: memdir.Memdir) -> None:
    theirs, ours = both(md)
    for service in (theirs, ours):
        asyncio.run(service.add_session_to_memory(session("s1", event("u1", "piano lessons"), user="Alice")))
        asyncio.run(service.add_session_to_memory(session("s1", event("u2", "piano tuner"), user="alice")))
        asyncio.run(service.add_session_to_memory(session("s1", event("u3", "piano bench"), app="other")))
    for app, user in (("app", "Alice"), ("app", "alice"), ("other", "alice"), ("app", "bob")):
        assert found(ours, "piano", app, user) == found(theirs, "piano", app, user)
    folders = sorted({e.path.split("/conversations/")[0] for e in md.list("adk/")})
    assert folders == ["adk/app/alice", "adk/app/alice.3bc51062", "adk/other/alice"]  # Alice: a name of its own


def test_sessions_whose_ids_join_alike_keep_a_record_each(md: memdir.Memdir) -> None:
    """App `a/b` with user `c` and app `a` with user `b/c`: one record id `adk:a/b/c/s1` before, now two."""
    ours = MemdirMemoryService(md)
    asyncio.run(ours.add_session_to_memory(session("s1", event("x1", "the first user's pancakes"), app="a/b", user="c")))
    asyncio.run(ours.add_session_to_memory(session("s1", event("x2", "the second user's waffles"), app="a", user="b/c")))
    records = capture.sessions(md)
    assert len(records) == 2 and len({r.session for r in records}) == 2
    texts = sorted(md.read(r.path).body for r in records)
    assert "pancakes" in texts[0] + texts[1] and "waffles" in texts[0] + texts[1]
    assert not any("pancakes" in t and "waffles" in t for t in texts)


def test_a_record_captured_under_the_old_id_is_replaced_not_doubled(md: memdir.Memdir) -> None:
    ours = MemdirMemoryService(md)
    capture.capture(md, "adk:app/alice@example.com/s1", [{"role": "user", "content": "older record"}],
                    at="2026-05-28T10:00:00Z")
    asyncio.run(ours.add_session_to_memory(session("s1", event("y1", "muffins"), user="alice@example.com")))
    records = capture.sessions(md)
    assert [r.session for r in records] == [MemdirMemoryService.record_id("app", "alice@example.com", "s1")]
    assert "muffins" in md.read(records[0].path).body


def test_search_is_capped_for_preload(md: memdir.Memdir) -> None:
    ours = MemdirMemoryService(md, max_chars=300)
    events = [event(f"{i:02x}" * 4, f"marble {'stone ' * 20}{i}", at=T0 + i) for i in range(15)]
    asyncio.run(ours.add_session_to_memory(session("s1", *events)))
    got = asyncio.run(ours.search_memory(app_name="app", user_id="alice", query="marble")).memories
    assert len(got) == 2 and sum(len(m.content.parts[0].text or "") for m in got) <= 300  # type: ignore[index]
    assert len(found(MemdirMemoryService(md), "marble")) == 10  # ADK's own cap: ten


def test_add_memory_writes_topic_files_a_person_reads(md: memdir.Memdir) -> None:
    ours = MemdirMemoryService(md)
    facts = [MemoryEntry(id="pref-1", content=types.Content(parts=[types.Part(text="Prefers short answers.")]),
                         author="helper", custom_metadata={"topic": "style"}),
             MemoryEntry(content=types.Content(parts=[types.Part(text="Lives in Lisbon.")]))]
    asyncio.run(ours.add_memory(app_name="app", user_id="alice", memories=facts, custom_metadata={"source": "chat"}))
    assert md.read("adk/app/alice/memories/pref-1.md").body == "Prefers short answers.\n"
    got = asyncio.run(ours.search_memory(app_name="app", user_id="alice", query="short answers")).memories
    assert [(m.id, m.author, m.custom_metadata) for m in got] == [("pref-1", "helper", {"source": "chat", "topic": "style"})]
    md.write("adk/app/alice/memories/pref-1.md", "Prefers long answers.")  # a person corrects it
    assert found(ours, "answers")[0][-1] == "Prefers long answers."
    asyncio.run(ours.delete_memory(app_name="app", user_id="alice", memory_id="pref-1"))
    assert [m[-1] for m in found(ours, "lisbon")] == ["Lives in Lisbon."] and found(ours, "answers") == []
    with pytest.raises(memdir.InvalidArgument, match="has no text"):
        asyncio.run(ours.add_memory(app_name="app", user_id="alice", memories=[MemoryEntry(content=types.Content())]))


def test_credentials_are_redacted_before_they_are_kept(md: memdir.Memdir) -> None:
    ours = MemdirMemoryService(md)
    asyncio.run(ours.add_session_to_memory(session("s1", event("k1", "deploy key AKIAIOSFODNN7EXAMPLE\nfor the river"))))
    text = md.read("adk/app/alice/conversations/s1/k1.md").body
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "river" in text


def test_registered_by_uri_and_by_services_yaml(tmp_path: Path) -> None:
    registry = ServiceRegistry()
    register(registry)
    service = registry.create_memory_service(f"memdir:{tmp_path / 'memory'}", agents_dir=str(tmp_path))
    assert isinstance(service, MemdirMemoryService)
    asyncio.run(service.add_session_to_memory(session("s1", event("y1", "river walk"))))
    assert [m[0] for m in found(service, "river")] == ["y1"]
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "services.yaml").write_text(
        "services:\n  - scheme: memdir\n    type: memory\n    class: memdir.adapters.adk.MemdirMemoryService\n")
    load_services_module(str(tmp_path / "agents"))  # ADK's own loader, into its process-wide registry
    from google.adk.cli.service_registry import get_service_registry

    by_yaml = get_service_registry().create_memory_service(f"memdir://{tmp_path / 'memory'}", agents_dir="x")
    assert isinstance(by_yaml, MemdirMemoryService) and [m[0] for m in found(by_yaml, "river")] == ["y1"]
    with pytest.raises(memdir.InvalidArgument, match="not a memdir URI"):
        MemdirMemoryService(uri="postgresql://x")
    with pytest.raises(memdir.InvalidArgument, match="mode must be one of auto, lexical, semantic, hybrid; got 'x'"):
        MemdirMemoryService(uri=f"memdir:{tmp_path / 'memory'}", mode="x")


def test_the_docs_example_runs(tmp_path: Path) -> None:
    out = run_docs_example(PAGES / "adk.md", tmp_path)
    assert out[:2] == ["remembered: False", "remembered: True"]  # PreloadMemoryTool found Monday's session
    assert out[-1] == "['I like short answers.']"  # Monday's words, found again


# ---------------------------------------------------------------- generated sequences

WORDS = ["apple", "banana", "cherry", "garden", "piano", "river", "violet", "zebra"]
USERS = [("app", "alice"), ("app", "Alice"), ("web", "alice")]
SESSIONS = ["s1", "S1", None]  # None: events added without a session id
KEYS = [(app, user, sid) for app, user in USERS for sid in SESSIONS]


def _id(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()[:12]  # no numbered sequence: ids as ADK mints them


pools = st.lists(st.tuples(st.sampled_from(range(len(KEYS))), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
                           st.sampled_from(["user", "helper"])), min_size=1, max_size=9)
steps = st.lists(st.tuples(st.sampled_from(["session", "events", "delete", "search"]), st.integers(0, 8),
                           st.lists(st.integers(0, 8), max_size=5), st.sampled_from(WORDS)), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pools, steps)
# A file that shares only the best hits' other words ("banana") is ranked by the feedback query, not returned.
@example(pool=[(0, ["apple"], "user")] * 4 + [(0, ["banana"], "user"), (0, ["apple"], "user"), (0, ["apple", "banana"], "user")],
         sequence=[("session", 0, [0, 4, 6], "apple")])
def test_generated_sequences_find_the_same(backend: Backend, pool: list[tuple[int, list[str], str]],
                                           sequence: list[tuple[str, int, list[int], str]]) -> None:
    events = [(KEYS[k], event(_id(n), " ".join(words), author, T0 + n)) for n, (k, words, author) in enumerate(pool)]
    with backend.open(tenant=f"adk{next(_tenants)}") as md:
        theirs, ours = both(md)
        for kind, pick, picks, word in sequence:
            key, ev = events[pick % len(events)]
            app, user, sid = key
            chosen = list({e.id: e for k, e in (events[i % len(events)] for i in picks) if k == key}.values())
            for service in (theirs, ours):
                if kind == "session" and sid is not None:
                    asyncio.run(service.add_session_to_memory(session(sid, *chosen, app=app, user=user)))
                elif kind in ("session", "events"):
                    asyncio.run(service.add_events_to_memory(app_name=app, user_id=user, session_id=sid, events=chosen))
                elif kind == "delete":
                    asyncio.run(service.delete_memory(app_name=app, user_id=user, memory_id=ev.id))
            if kind == "search":
                assert found(ours, word, app, user) == found(theirs, word, app, user)
        for (app, user), word in itertools.product(USERS, WORDS):
            assert found(ours, word, app, user) == found(theirs, word, app, user), (app, user, word)
