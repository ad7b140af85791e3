"""Pydantic AI's memory capability on memdir: `MemdirMemoryStore` beside the harness's own `InMemoryStore`.

Both take the same calls (hand-picked ones, then sequences hypothesis
generates), on the folder store and on PostgreSQL, and must answer the same:
contents, truncation, operation ids, listings, conflicts and receipts. Versions
are opaque, so each side's own versions are used (the one it last returned,
an older one of the same path, or none). Not compared: a write of the text
already there, which memdir skips and keeps the version of (the generated
texts are all different), and texts memdir refuses (tested by hand).
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

need("pydantic_ai_harness")
need("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pydantic_ai import Agent, ModelRetry  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402
from pydantic_ai_harness import Memory  # noqa: E402
from pydantic_ai_harness.memory import (  # noqa: E402
    InMemoryStore,
    MemoryConflictError,
    MemoryOperation,
    MemoryOperationConflictError,
    MemoryStore,
    SearchableMemoryStore,
)

from memdir.adapters.pydantic_ai import MemdirMemoryStore  # noqa: E402

_tenants = itertools.count()


@pytest.fixture(params=["fs", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, request, tmp_path)


@pytest.fixture
def md(backend: Backend) -> Iterator[memdir.Memdir]:
    with backend.open(tenant=f"pa{next(_tenants)}", agent=True, writes_per_minute=0) as m:
        yield m


class Pair:
    """The harness's InMemoryStore and MemdirMemoryStore, each with the versions it returned per path."""

    def __init__(self, md: memdir.Memdir) -> None:
        self.stores: tuple[Any, Any] = (InMemoryStore(), MemdirMemoryStore(md))
        self.versions: tuple[dict[str, list[str]], dict[str, list[str]]] = ({}, {})

    def version(self, side: int, path: str, which: str) -> str | None:
        seen = self.versions[side].get(path, [])
        if which == "last":
            return seen[-1] if seen else None
        if which == "old":
            return seen[0] if seen else "0"
        return None

    def run(self, name: str, path: str, *args: Any, which: str = "none", op: MemoryOperation | None = None) -> Any:
        outs = []
        for side, store in enumerate(self.stores):
            try:
                if name == "read":
                    got = asyncio.run(store.read(path, max_chars=args[0]))
                    if got is not None:
                        self.versions[side].setdefault(path, []).append(got.version)
                    out: Any = None if got is None else (got.content, got.truncated, got.operation_id)
                elif name in ("write", "delete"):
                    expected = self.version(side, path, which)
                    call = store.write(path, args[0], expected_version=expected, operation=op) if name == "write" \
                        else store.delete(path, expected_version=expected, operation=op)
                    m = asyncio.run(call)
                    if m.version is not None:
                        self.versions[side].setdefault(path, []).append(m.version)
                    out = (m.version is not None, m.replayed, m.existed)
                elif name == "list":
                    out = asyncio.run(store.list_paths(path, limit=args[0]))
                else:
                    m = asyncio.run(store.get_operation(args[0]))
                    out = None if m is None else (m.version is not None, m.replayed, m.existed)
            except (MemoryConflictError, MemoryOperationConflictError, ValueError) as e:
                out = type(e).__name__
            outs.append(out)
        assert outs[0] == outs[1], f"{name}({path!r}, {args}, {which}, {op}): harness {outs[0]!r}, memdir {outs[1]!r}"
        return outs[1]


# ---------------------------------------------------------------- hand-picked calls


def test_reads_writes_and_compare_and_swap(md: memdir.Memdir) -> None:
    pair = Pair(md)
    assert pair.run("read", "main/MEMORY.md", 100) is None
    assert pair.run("write", "main/MEMORY.md", "- likes tea\n") == (True, False, False)
    assert pair.run("read", "main/MEMORY.md", 100) == ("- likes tea\n", False, None)
    assert pair.run("read", "main/MEMORY.md", 5) == ("- lik", True, None)
    assert pair.run("write", "main/MEMORY.md", "x\n") == "MemoryConflictError"  # must not exist yet
    assert pair.run("write", "main/MEMORY.md", "- likes coffee\n", which="last") == (True, False, True)
    assert pair.run("write", "main/MEMORY.md", "- likes water\n", which="old") == "MemoryConflictError"
    assert pair.run("delete", "main/MEMORY.md", which="old") == "MemoryConflictError"
    assert pair.run("delete", "main/MEMORY.md", which="last") == (False, False, True)
    assert pair.run("delete", "main/MEMORY.md") == (False, False, False)  # nothing there, as expected
    assert pair.run("delete", "main/MEMORY.md", which="old") == "MemoryConflictError"
    assert md.history()[0].op == "delete"  # every change journaled


def test_operations_are_applied_once(md: memdir.Memdir) -> None:
    pair = Pair(md)
    op = MemoryOperation(id="run1:step1:call1", fingerprint="f1")
    assert pair.run("write", "main/notes.md", "first\n", op=op) == (True, False, False)
    assert pair.run("write", "main/notes.md", "first\n", op=op) == (True, True, False)  # a replay: its receipt
    assert pair.run("read", "main/notes.md", 100) == ("first\n", False, "run1:step1:call1")
    assert pair.run("op", "", op) == (True, True, False)
    assert pair.run("write", "main/notes.md", "other\n", which="last", op=MemoryOperation(id=op.id, fingerprint="f2")) \
        == "MemoryOperationConflictError"
    assert len(md.history()) == 1


def test_paths_map_reversibly_to_markdown_files(md: memdir.Memdir) -> None:
    pair = Pair(md)
    for path in ("main/MEMORY.md", "main/Notes.md", "main/notes.md", "ns/main/.hidden.md", "main/todo.txt",
                 "main/sub/x.md", "Main/MEMORY.md"):
        pair.run("write", path, f"text of {path}\n")
    assert pair.run("list", "", 100) == ["Main/MEMORY.md", "main/MEMORY.md", "main/Notes.md", "main/notes.md",
                                         "main/sub/x.md", "main/todo.txt", "ns/main/.hidden.md"]
    assert pair.run("list", "main/", 2) == ["main/MEMORY.md", "main/Notes.md"]
    assert pair.run("list", "ma", 100) == ["main/MEMORY.md", "main/Notes.md", "main/notes.md", "main/sub/x.md",
                                           "main/todo.txt"]
    assert [e.path for e in md.list("pydantic-ai/")] == [
        "pydantic-ai/^main/notebook+.md", "pydantic-ai/main/^notes.md", "pydantic-ai/main/notebook+.md",
        "pydantic-ai/main/notes.md", "pydantic-ai/main/sub/x.md", "pydantic-ai/main/todo.txt+.md",
        "pydantic-ai/ns/main/+dhidden.md"]
    for bad in ("main/../x.md", "main/./x.md", "/main/x.md", "main/x y.md", ""):
        assert pair.run("read", bad, 10) == "ValueError"


def test_refusals_are_said_to_the_model_and_change_nothing(md: memdir.Memdir) -> None:
    store = MemdirMemoryStore(md)
    for text, says in (("key AKIAIOSFODNN7EXAMPLE\n", "AWS access key"), ("line\n" * 300, "200"),
                       ("---\nname: [broken\n---\nx\n", "frontmatter")):
        with pytest.raises(ModelRetry, match=says):
            asyncio.run(store.write("main/MEMORY.md", text, expected_version=None))
    assert md.history() == [] and asyncio.run(store.list_paths("", limit=10)) == []


def test_search_is_memdirs_within_the_bounds(md: memdir.Memdir) -> None:
    store = MemdirMemoryStore(md)
    assert isinstance(store, MemoryStore) and isinstance(store, SearchableMemoryStore)
    for path, text in (("main/MEMORY.md", "- Alice likes green tea\n"), ("main/drinks.md", "Tea, green and black.\n"),
                       ("main/sub/deep.md", "tea in a nested scope\n"), ("other/MEMORY.md", "tea elsewhere\n")):
        asyncio.run(store.write(path, text, expected_version=None))
    got = asyncio.run(store.search("main/", "green tea", limit=5, max_files=100, max_chars=1000, max_file_chars=1000))
    assert sorted(m.path for m in got.matches) == ["main/MEMORY.md", "main/drinks.md"] and not got.truncated
    one = asyncio.run(store.search("main/", "tea", limit=1, max_files=100, max_chars=1000, max_file_chars=1000))
    assert len(one.matches) == 1 and one.truncated


def test_the_capability_runs_on_it(md: memdir.Memdir) -> None:
    agent = Agent(TestModel(call_tools=["write_memory"], custom_output_text="Saved."),
                  capabilities=[Memory(MemdirMemoryStore(md))])
    assert agent.run_sync("Remember this.").output == "Saved."
    assert [r.path for r in md.history()] == ["pydantic-ai/main/notebook+.md"]  # TestModel wrote its notebook
    seen = Agent(TestModel(call_tools=[]), capabilities=[Memory(MemdirMemoryStore(md))]).run_sync("Hi").all_messages()
    assert "<memory>" in str(seen)  # the next run is shown the notebook


def test_the_docs_examples_run(tmp_path: Path) -> None:
    out = run_docs_example(PAGES / "pydantic-ai.md", tmp_path)
    assert out == ["Noted.", "- Alice likes short answers.", "[('write', 'pydantic-ai/main/notebook+.md')]", "[]"]
    out = run_docs_example(PAGES / "pydantic-ai.md", tmp_path, block=1)
    assert [line.split(" ->")[0] for line in out] == ["write_memory_file", "read_memory_file", "undo_memory_change",
                                                      "Done."]
    assert "undone: user/style.md did not exist before" in out[2]  # the text the model reads comes first


def test_function_model_writes_reads_and_undoes(md: memdir.Memdir) -> None:
    steps = iter([[ToolCallPart("write_memory", {"content": "- short answers\n"})], [TextPart("ok")]])
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=next(steps))),
                  capabilities=[Memory(MemdirMemoryStore(md))])
    agent.run_sync("I like short answers.")
    store = MemdirMemoryStore(md)
    assert asyncio.run(store.read("main/MEMORY.md", max_chars=100)).content == "- short answers\n"  # type: ignore[union-attr]
    md.undo("pydantic-ai/main/notebook+.md")
    assert asyncio.run(store.read("main/MEMORY.md", max_chars=100)) is None


# ---------------------------------------------------------------- generated sequences

PATHS = ["main/MEMORY.md", "main/notes.md", "main/Notes.md", "ns/main/MEMORY.md", "main/.x.md", "main/a.txt",
         "main/sub/b.md"]
PREFIXES = ["", "main/", "main", "ns/", "main/sub/", "zz/", "main/N"]
OPS = [None, MemoryOperation(id="o1", fingerprint="a"), MemoryOperation(id="o1", fingerprint="b"),
       MemoryOperation(id="o2", fingerprint="a")]
WORDS = ["- likes tea", "Alice", "", "# Notes", "  indented", "café ☕", "tab\there"]
calls = st.lists(st.one_of(
    st.tuples(st.just("read"), st.sampled_from(PATHS), st.sampled_from([1, 4, 1000])),
    st.tuples(st.just("write"), st.sampled_from(PATHS), st.lists(st.sampled_from(WORDS), max_size=3),
              st.sampled_from(["none", "last", "old"]), st.sampled_from(range(len(OPS)))),
    st.tuples(st.just("delete"), st.sampled_from(PATHS), st.sampled_from(["none", "last", "old"]),
              st.sampled_from(range(len(OPS)))),
    st.tuples(st.just("list"), st.sampled_from(PREFIXES), st.sampled_from([1, 3, 100])),
    st.tuples(st.just("op"), st.sampled_from(range(1, len(OPS)))),
), min_size=1, max_size=14)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(calls)
def test_generated_sequences_answer_the_same(backend: Backend, sequence: list[tuple[Any, ...]]) -> None:
    with backend.open(tenant=f"pa{next(_tenants)}", agent=True, writes_per_minute=0) as md:
        pair = Pair(md)
        for n, call in enumerate(sequence):
            kind = call[0]
            if kind == "read":
                pair.run("read", call[1], call[2])
            elif kind == "write":  # every text different: memdir keeps the version of a write that changes nothing
                pair.run("write", call[1], "\n".join([*call[2], f"v{n}"]) + "\n", which=call[3], op=OPS[call[4]])
            elif kind == "delete":
                pair.run("delete", call[1], which=call[2], op=OPS[call[3]])
            elif kind == "list":
                pair.run("list", call[1], call[2])
            else:
                pair.run("op", "", OPS[call[1]])
        for path in PATHS:
            pair.run("read", path, 1000)
