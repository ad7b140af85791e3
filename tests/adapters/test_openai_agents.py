"""OpenAI Agents SDK on memdir: `MemdirSession` (the SDK's `Session` protocol) and memdir over MCP.

The session keeps its items in the SDK's own `SQLiteSession` and answers as it
does (generated sequences, side by side with a bare one); when the
conversation ends its items become memdir's session record, on the folder
store and on PostgreSQL. Agents run on scripted models: a `Model` subclass
written here and the SDK's own `ScriptedModel`, never the network.
"""

from __future__ import annotations

import asyncio
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

need("agents")
need("hypothesis")

from agents import Agent, ModelResponse, Runner, SQLiteSession, Usage, function_tool  # noqa: E402
from agents.memory import Session  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.testing import assistant_message, function_call  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memdir.adapters.openai_agents import MemdirSession  # noqa: E402

_tenants = itertools.count()


@pytest.fixture(params=["fs", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, request, tmp_path)


@pytest.fixture
def md(backend: Backend) -> Iterator[memdir.Memdir]:
    with backend.open(tenant=f"oa{next(_tenants)}") as m:
        yield m


class Canned(Model):
    """A model that answers from a list of canned outputs, and keeps what it was given."""

    def __init__(self, *outputs: Any) -> None:
        self.outputs, self.inputs = list(outputs), []  # type: ignore[var-annotated]

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        return ModelResponse(output=[self.outputs.pop(0)], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def test_a_session_is_the_sdks_session_and_ends_in_one_record(md: memdir.Memdir) -> None:
    session = MemdirSession(md, "chat-1")
    assert isinstance(session, Session)
    assert asyncio.run(session.capture()) is None and capture.sessions(md) == []  # nothing said yet: no record
    asyncio.run(session.add_items([user("I prefer tea to coffee."), {"role": "assistant", "content": "Noted."}]))
    assert asyncio.run(session.get_items(limit=1)) == [{"role": "assistant", "content": "Noted."}]
    first = asyncio.run(session.capture())
    assert first is not None and first.status == "captured" and first.change == "created"
    asyncio.run(session.add_items([user("Decided: green tea only.")]))
    asyncio.run(session.capture())  # the conversation went on: the same record, replaced
    records = capture.sessions(md)
    assert [(r.session, r.path) for r in records] == [("chat-1", first.path)]
    assert "green tea only" in md.read(first.path).text
    assert asyncio.run(session.pop_item()) == user("Decided: green tea only.")
    asyncio.run(session.clear_session())  # captured before it clears: the record keeps the conversation
    assert asyncio.run(session.get_items()) == [] and "tea to coffee" in md.read(first.path).text


def test_a_runner_remembers_the_conversation_and_the_record_follows(md: memdir.Memdir) -> None:
    @function_tool
    def today() -> str:
        """The date."""
        return "2026-12-03"

    model = Canned(function_call("today", {}, call_id="c1"), assistant_message("It is 2026-12-03."),
                   assistant_message("You asked for the date."))
    agent = Agent(name="helper", model=model, tools=[today])

    async def chat() -> MemdirSession:
        async with MemdirSession(md, "chat-2") as session:
            await Runner.run(agent, "What is the date? My key is AKIAIOSFODNN7EXAMPLE", session=session)
            await Runner.run(agent, "What did I ask?", session=session)
        return session

    session = asyncio.run(chat())
    assert "What is the date?" in str(model.inputs[-1])  # the session gave the model the first turn back
    assert session.captured is not None and session.captured.status == "captured"
    text = md.read(session.captured.path).text
    assert "What did I ask?" in text and "AKIAIOSFODNN7EXAMPLE" not in text  # the record's secrets are replaced


def test_items_can_live_in_a_durable_session_store(md: memdir.Memdir, tmp_path: Path) -> None:
    db = tmp_path / "conversations.db"
    asyncio.run(MemdirSession(md, "chat-3", items=SQLiteSession("chat-3", db)).add_items([user("Call me Sam.")]))
    again = MemdirSession(md, "chat-3", items=SQLiteSession("chat-3", db))  # another process, the same conversation
    assert asyncio.run(again.get_items()) == [user("Call me Sam.")]
    assert asyncio.run(again.capture()).status == "captured"  # type: ignore[union-attr]


def test_the_docs_example_runs(tmp_path: Path) -> None:
    out = run_docs_example(PAGES / "openai-agents.md", tmp_path)
    assert out[:3] == ["Noted: short answers.", "You like short answers.", "Likes short answers."]
    assert out[3] == "I like short answers. 8"  # the record's title (the first request), and the items the session holds


items = st.builds(user, st.sampled_from(["tea", "coffee", "I like short answers.", "Decided: Lisbon", "x"]))
steps = st.lists(st.one_of(st.tuples(st.just("add"), st.lists(items, min_size=1, max_size=3)),
                           st.tuples(st.just("get"), st.sampled_from([None, 1, 2, 5])), st.tuples(st.just("pop")),
                           st.tuples(st.just("clear")), st.tuples(st.just("capture"))), min_size=1, max_size=10)


def _call(session: Any, step: tuple[Any, ...]) -> Any:
    kind = step[0]
    if kind == "add":
        return session.add_items(list(step[1]))
    if kind == "get":
        return session.get_items(step[1])
    return {"pop": session.pop_item, "clear": session.clear_session, "capture": session.get_items}[kind]()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps)
def test_generated_sequences_answer_as_the_sdks_session(md: memdir.Memdir, sequence: list[tuple[Any, ...]]) -> None:
    sid = f"gen-{next(_tenants)}"
    theirs, ours = SQLiteSession(sid), MemdirSession(md, sid)
    for step in sequence:
        kind = step[0]
        had = asyncio.run(theirs.get_items())
        answers = []
        for session in (theirs, ours):
            answers.append(asyncio.run(_call(session, step)))
        assert answers[0] == answers[1], step
        if kind == "capture":
            assert (asyncio.run(ours.capture()) is None) == (not had)
        if kind in ("clear", "capture") and had:  # the conversation is in its record
            record = capture.find(md, sid)
            assert record is not None and md.read(record).meta["session"] == sid
            assert had[0]["content"] in md.read(record).text
    assert sum(r.session == sid for r in capture.sessions(md)) <= 1  # one record per session, however often captured
