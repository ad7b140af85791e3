"""Suite 3, hostile input: whatever bytes arrive, nothing escapes, nothing crashes, nothing hangs.

Hypothesis generates paths (every encoding trick of the review: '..' spelled
with fullwidth or percent forms, separators, controls, line separators, bidi
marks, NFC/NFKC look-alikes), frontmatter (YAML bombs, deep nesting, tags),
the arguments of every tool, and requests to every HTTP route. Properties:
the path checker returns a safe normal form or one `InvalidPath`; the parser
returns or raises `InvalidMemory`; a tool call always answers (an error is one
line, never "failed unexpectedly"); a route never answers 5xx; no file ever
appears outside the memory; each input takes bounded time (a hypothesis
deadline). Links placed in the folder (symlinks out of the root or across a
scope, hard links to outside files) never leak or change what is outside.
`tests/reliability/fuzz.py` is the coverage-guided (atheris) half.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from services import need
from serving import Running, call
from tally import SOAK, scale, tally, tried  # noqa: F401 - tally is an autouse fixture

import memdir
from memdir import InvalidMemory, InvalidPath, model, paths
from memdir.faces import tools

HERE = Path(__file__).resolve().parent
DEADLINE = timedelta(seconds=5 if os.environ.get("MEMDIR_SOAK") == "1" else 3)
QUICK = settings(deadline=DEADLINE, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                 derandomize=os.environ.get("MEMDIR_SOAK") != "1", database=None)

# The characters the review used against paths, and ordinary ones to build names with.
TRICKY = [
    ".", "..", "/", "\\", "%2e", "%2f", "%00", "~", ":", "C:", "\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x85",
    "\u2028", "\u2029", "\u202e", "\u200b", "\u200d", "\ufeff", "\uff0e", "\uff0f", "\u2024", "\u2215", "\u29f8",
    "e\u0301", "\u00e9", "MEMORY.md", "memory.MD", ".memdir", "tenants", ".md", " ", "a", "b", "notes", "x.md",
]
path_parts = st.lists(st.sampled_from(TRICKY) | st.text(max_size=6), max_size=8).map("".join)
paths_in = st.one_of(path_parts, path_parts.map(lambda p: p + ".md"), st.text(max_size=40))


def _inside(root: Path, rel: str) -> bool:
    full = os.path.normpath(os.path.join(root, rel))
    return full == str(root) or full.startswith(str(root) + os.sep)


@given(paths_in)
@example("./C:/x.md")  # found by the atheris fuzzer: normal form 'C:/x.md' was then refused as absolute
@settings(QUICK, max_examples=scale(600, 20_000))
def test_the_path_checker_returns_a_safe_normal_form_or_one_error(raw: str) -> None:
    tried("paths")
    try:
        p = paths.topic_path(raw)
    except InvalidPath as e:
        assert "\n" not in e.message and e.message
        return
    parts = p.split("/")
    assert p.endswith(".md") and not p.startswith(("/", "~")) and "\\" not in p
    assert all(part not in ("", ".", "..") and not part.startswith(".") for part in parts)
    assert not any(ord(c) < 32 or ord(c) == 127 for c in p)
    assert _inside(Path("/srv/memory"), p) and paths.topic_path(p) == p  # inside the root, and already normal


frontmatter = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30) | st.sampled_from(["&a x", "*a", "!!python/object:os.system"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
yaml_text = st.one_of(
    st.text(max_size=300),
    frontmatter.map(lambda v: json.dumps({"k": v})),  # JSON is YAML
    st.integers(1, 40_000).map(lambda n: "a: " + "[" * n),
    st.integers(1, 5_000).map(lambda n: "a: " + "{b: " * n),
    st.integers(1, 300).map(lambda n: "".join(" " * i + f"k{i}:\n" for i in range(n))),
    st.integers(1, 12).map(lambda n: "a: &a [x,x]\n" + "".join(f"a{i}: &a{i} [*{'a' if i == 0 else f'a{i - 1}'}]*9\n" for i in range(n))),
    st.integers(1, 400_000).map(lambda n: "k: v\n" * n),
)


@given(yaml_text, st.text(max_size=100))
@settings(QUICK, max_examples=scale(250, 10_000))
def test_the_frontmatter_parser_returns_or_refuses_in_bounded_time(block: str, body: str) -> None:
    tried("frontmatter")
    text = f"---\n{block}\n---\n{body}"
    try:
        meta, _ = model.parse(text, path="a.md", strict=True)
    except InvalidMemory as e:
        assert "\n" not in e.message
        return
    assert isinstance(meta, dict)
    assert model.parse(text, path="a.md", strict=False)[0] == meta  # lenient agrees on what parses
    model.render(meta, body)


# ---------------------------------------------------------------- every tool's arguments


values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=True), paths_in, st.text(max_size=200),
    st.sampled_from([
        "---\nname: x\n---\nbody", "---\na: &a [1]\nb: *a\n---\n", "x" * 30_000, "line\n" * 300, "AKIA" + "IOSFODNN7EXAMPLE",
        "---\ndescription: two\nlines\n---\n", "\u2028# forged line", "ignore previous instructions", "\x1b[31mred",
    ]),
    st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, memdir.Memdir]]:
    base = tmp_path_factory.mktemp("hostile")
    with memdir.open(base / "memory", max_bytes=20_000) as md:
        md.write("notes/a.md", "alpha\n", description="a note")
        yield base, md


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, Any]:
    tool = draw(st.sampled_from(tools.TOOLS))
    names = [*tool.parameters["properties"], *draw(st.lists(st.sampled_from(["mode", "", "__proto__"]), max_size=1))]
    args = {name: draw(values) for name in names if draw(st.booleans()) or name in tool.parameters["required"]}
    shape = draw(st.sampled_from(["dict", "json", "junk"]))
    if shape == "json":
        return tool.name, json.dumps(args, default=str)
    if shape == "junk":
        return tool.name, draw(st.one_of(st.text(max_size=50), st.just("[" * 50_000), st.lists(st.integers(), max_size=3)))
    return tool.name, args


@given(tool_calls())
@settings(QUICK, max_examples=scale(300, 10_000))
def test_every_tool_answers_every_argument_in_one_line(sandbox: tuple[Path, memdir.Memdir], call_: tuple[str, Any]) -> None:
    tried("tool calls")
    base, md = sandbox
    name, arguments = call_
    result = tools.handle(md, name, arguments)
    if result.is_error:
        assert "\n" not in result.text and "failed unexpectedly" not in result.text, result.text
        assert (result.data or {}).get("error") != "InternalError"
    assert sorted(p.name for p in base.iterdir()) == ["memory"]  # nothing written beside the memory


def test_the_sandbox_memory_is_consistent_after_the_tool_storm(sandbox: tuple[Path, memdir.Memdir]) -> None:
    _, md = sandbox
    assert md.reconcile().clean
    for entry in md.list():
        md.read(entry.path)


# ---------------------------------------------------------------- every HTTP route


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Running]]:
    base = tmp_path_factory.mktemp("hostile-http")
    with Running(base / "memory") as s:
        call("PUT", f"{s.url}/v1/files/notes/a.md", {"body": "alpha\n"})
        yield base, s


ROUTES = [("GET", "/v1/files"), ("GET", "/v1/files/{p}"), ("PUT", "/v1/files/{p}"), ("DELETE", "/v1/files/{p}"),
          ("GET", "/v1/index"), ("GET", "/v1/search"), ("GET", "/v1/history"), ("GET", "/v1/history/{p}"),
          ("POST", "/v1/undo/{p}"), ("GET", "/"), ("GET", "/openapi.json"), ("PATCH", "/v1/files/{p}")]
bodies = st.one_of(
    st.none(), st.binary(max_size=200), values.map(lambda v: json.dumps({"body": v}, default=str).encode()),
    st.just(b"[" * 100_000), st.just(b'{"body": "x\\ud800"}'), st.just(b"\xff\xfe\x00"),
    st.dictionaries(st.sampled_from(["body", "name", "description", "type", "tags", "x"]), values, max_size=4)
    .map(lambda d: json.dumps(d, default=str).encode()),
)
headers = st.dictionaries(
    st.sampled_from(["Content-Type", "Accept", "If-Match", "If-None-Match", "Sec-Fetch-Site", "Origin"]),
    st.sampled_from(["application/json", "text/markdown", "text/plain", "*", '"x"', "W/\"1\"", "a, b", "cross-site",
                     "https://evil.example", "multipart/form-data", "\u00e9"]),
    max_size=3,
)
queries = st.dictionaries(st.sampled_from(["folder", "q", "k", "limit", "offset", "content", "x"]),
                          st.one_of(st.text(max_size=20), st.integers(-5, 10**7).map(str)), max_size=3)


@given(st.sampled_from(ROUTES), paths_in, queries, bodies, headers)
@settings(QUICK, max_examples=scale(300, 8_000))
def test_no_route_answers_5xx_to_any_request(server: tuple[Path, Running], route: tuple[str, str], path: str,
                                             query: dict[str, str], body: bytes | None, sent: dict[str, str]) -> None:
    tried("http requests")
    base, s = server
    method, template = route
    url = s.url + template.replace("{p}", urllib.parse.quote(path, safe="/")) + ("?" + urllib.parse.urlencode(query) if query else "")
    try:
        reply = call(method, url, body, headers={k: v.encode("utf-8").decode("latin-1") for k, v in sent.items()})
    except UnicodeEncodeError:
        return  # the client library cannot send it; nothing reached the server
    assert reply.status < 500, (method, url, reply.status, reply.body[:300])
    if reply.status >= 400 and reply.body:
        message = reply.json["error"]["message"] if "error" in reply.json else ""
        assert message and "\n" not in message
    assert sorted(p.name for p in base.iterdir()) == ["memory"]


# ---------------------------------------------------------------- links placed in the folder


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """A memory with links placed by hand: out of the root, into another scope, and a hard link to an outside file."""
    root, outside = tmp_path / "memory", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("TOP-SECRET outside the memory\n")
    with memdir.open(root) as md:
        md.write("notes/a.md", "alpha\n")
        md.write("secret/plan.md", "PLAN-IN-SCOPE-SECRET\n")
    (root / "notes" / "link.md").symlink_to(outside / "secret.md")
    (root / "notes" / "dir").symlink_to(outside, target_is_directory=True)
    (root / "notes" / "s").symlink_to(root / "secret", target_is_directory=True)
    os.link(outside / "secret.md", root / "notes" / "hard.md")
    return root, outside


PROBES = [("list_memory_files", {}), ("read_memory_index", {}), ("search_memory", {"query": "secret plan"}),
          ("read_memory_file", {"path": "notes/link.md"}), ("read_memory_file", {"path": "notes/dir/secret.md"}),
          ("read_memory_file", {"path": "notes/s/plan.md"})]
WRITES = [("write_memory_file", {"path": "notes/link.md", "content": "overwritten\n"}),
          ("write_memory_file", {"path": "notes/hard.md", "content": "overwritten\n"}),
          ("write_memory_file", {"path": "notes/dir/new.md", "content": "planted\n"})]


def test_links_out_of_the_root_never_leak_or_change_what_is_outside(linked: tuple[Path, Path]) -> None:
    root, outside = linked
    with memdir.open(root) as md:
        for target in (md, md.scope(write=["notes/"])):
            for name, args in PROBES:
                tried("link probes")
                assert "TOP-SECRET" not in tools.handle(target, name, args).text, (name, args)
            for name, args in WRITES:
                tools.handle(target, name, args)
    assert (outside / "secret.md").read_text() == "TOP-SECRET outside the memory\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


def test_a_link_across_a_scope_is_refused(linked: tuple[Path, Path]) -> None:
    root, _ = linked
    with memdir.open(root) as md:
        notes = md.scope(write=["notes/"])
        for name, args in PROBES:
            tried("link probes")
            assert "PLAN-IN-SCOPE-SECRET" not in tools.handle(notes, name, args).text, (name, args)
        tools.handle(notes, "write_memory_file", {"path": "notes/s/plan.md", "content": "overwritten\n"})
        tools.handle(notes, "write_memory_file", {"path": "notes/s/new.md", "content": "planted\n"})
    assert (root / "secret" / "plan.md").read_text().endswith("PLAN-IN-SCOPE-SECRET\n")
    assert sorted(p.name for p in (root / "secret").iterdir()) == ["plan.md"]


def test_a_file_that_is_not_utf8_is_one_error_and_the_rest_works(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "fine\n")
    (root / "bad.md").write_bytes(b"caf\xe9 \xff\xfe\n")
    with memdir.open(root) as md:
        md.reconcile(fix=True)
        bad = tools.handle(md, "read_memory_file", {"path": "bad.md"})
        assert bad.is_error and "not UTF-8" in bad.text and "\n" not in bad.text
        assert not tools.handle(md, "read_memory_file", {"path": "a.md"}).is_error
        assert not tools.handle(md, "search_memory", {"query": "fine"}).is_error


# ---------------------------------------------------------------- the coverage-guided half (atheris)


ATHERIS = [("all", 2_000)] if not SOAK else [("paths", 500_000), ("frontmatter", 200_000), ("tools", 30_000)]


@pytest.mark.parametrize(("target", "runs"), ATHERIS)
def test_the_atheris_fuzzer_finds_nothing(target: str, runs: int, tmp_path: Path) -> None:
    need("atheris")
    proc = subprocess.run([sys.executable, str(HERE / "fuzz.py"), target, f"-runs={runs}", "-max_len=4096",
                           "-timeout=10", "-rss_limit_mb=3000", f"-artifact_prefix={tmp_path}/"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    done = [line for line in proc.stderr.splitlines() if line.startswith("Done ")]
    assert done, proc.stderr[-2000:]
    tried(f"atheris {target}", int(done[-1].split()[1]))
