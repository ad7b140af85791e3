"""Deep Agents' BackendProtocol on memdir: `MemdirBackend` beside the framework's own `FilesystemBackend`.

Both run the same calls (hand-picked ones, then sequences hypothesis
generates), on the folder store and on PostgreSQL. After every call both must
answer the same, and every file must read back the same (for memdir: the
stored text without its created/updated lines). Where they differ on purpose,
the difference is one of DIFFERENCES, each with its reason; the test names the
one it saw, and anything else fails.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import Backend, make_backend
from framework_docs import PAGES, run_docs_example
from services import need

import memdir
from memdir import model

need("deepagents")
need("hypothesis")

from deepagents.backends import CompositeBackend, FilesystemBackend, StateBackend  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memdir.adapters.deepagents import MemdirBackend  # noqa: E402

Files = dict[str, str]


@dataclass(frozen=True)
class Step:
    """One call as both backends answered it (normalised to what the protocol defines)."""

    call: tuple[str, tuple[Any, ...]]
    theirs: Any
    ours: Any
    before: Files  # the framework's files before and after the call
    after: Files


def _paths(s: Step) -> list[str]:
    name, args = s.call
    if name == "upload_files":
        return [str(path) for path, _ in args[0]]
    if name == "download_files":
        return [str(path) for path in args[0]]
    return [str(args[0])] if args and isinstance(args[0], str) else []


def _ours_error(s: Step) -> str:
    out = s.ours
    if isinstance(out, tuple) and out and out[0] in ("error", "crash"):
        return str(out[1])
    if isinstance(out, list):
        return " ".join(str(r[-1]) for r in out if r[-1])
    return ""


DIFFERENCES: dict[str, tuple[str, Callable[[Step], bool]]] = {
    "not markdown": (
        "memories are .md topic files (the index, search and limits read only those): a write of /n.txt is refused "
        "with a message naming /n.md (an upload with invalid_path); the framework stores any name",
        lambda s: ("is not a markdown file" in _ours_error(s) or "invalid_path" in _ours_error(s))
        and any(not p.endswith(".md") for p in _paths(s)),
    ),
    "index": (
        "/MEMORY.md is the generated index: listed, read and downloaded, never written, edited or deleted "
        "(the refusal names a topic file to write); the framework has no such file",
        lambda s: any(p.endswith("MEMORY.md") for p in _paths(s)),
    ),
    "first line ---": (
        "a text whose first line is `---` is frontmatter to memdir (and to Obsidian, Jekyll...), so it must be "
        "a closed YAML mapping; the framework stores any text",
        lambda s: "frontmatter" in _ours_error(s) and any(t.startswith("---") for t in _changed(s)),
    ),
    "frontmatter into body": (
        "no edit may turn frontmatter into body text (the description would silently leave the index)",
        lambda s: "into body" in _ours_error(s)
        and any(model.moves_frontmatter(s.before.get(p, ""), s.after.get(p, "")) for p in s.after),
    ),
    "empty frontmatter block": (
        "an empty block (`---` then `---`) is where memdir keeps its created/updated lines, so a read shows it as "
        "no block (memdir's change is undone here so both go on from the same files)",
        lambda s: not _ours_error(s) and any(_empty_block(t) for t in _changed(s)),
    ),
    "whole memory": (
        "deleting / is refused (delete the files or folders in it); the framework removes its root directory",
        lambda s: s.call[0] == "delete" and _paths(s)[0].strip("/") == "",
    ),
    "framework raises": (
        "the framework raises ValueError for a path with '..' (ls, glob); memdir answers with an error result",
        lambda s: isinstance(s.theirs, tuple) and s.theirs[0] == "crash",
    ),
}

# Differences that are not refusals; the comparison normalises them.
NORMALISED = {
    "index entries": "ls / and a glob at / list /MEMORY.md, the generated index (see 'index')",
    "sizes and times": "size is the stored file's (memdir's date lines included; the protocol calls it approximate), "
                       "modified_at memdir's `updated`; the framework reports the file's stat",
    "order": "grep's matches come in path order; the framework's come in its directory walk's order",
    "error texts": "a refusal's text is memdir's one line; texts are compared where the framework's come from the "
                   "protocol's shared helpers (not found, edit and listing answers)",
    "empty folders": "a folder exists while it holds a file (as on SQL backends); the framework keeps empty "
                     "directories, so they are pruned on its side after each call",
}
STANDARD = ("File '", "Error: File '", "Error: String", "Error: old_string", "Path '", "Line offset", "Error: '")


def _empty_block(text: str) -> bool:
    try:
        return model.split(text)[0] == ""
    except memdir.InvalidMemory:
        return False


def _changed(s: Step) -> list[str]:
    return [t for p, t in s.after.items() if s.before.get(p) != t]


def _error(text: str | None) -> tuple[str, str] | None:
    return None if text is None else ("error", text)


def _compared(out: Any) -> Any:
    """An outcome as compared: a refusal's text only where the framework's comes from the shared helpers."""
    if isinstance(out, tuple) and len(out) == 2 and out[0] == "error" and not str(out[1]).startswith(STANDARD):
        return ("error", "<refused>")
    if isinstance(out, list) and all(len(r) == 2 for r in out):  # uploads: which failed (the literals differ)
        return [(path, error is None) for path, error in out]
    return out


def _infos(infos: list[Any] | None) -> list[tuple[str, bool]] | None:
    if infos is None:
        return None
    return sorted((i["path"], bool(i.get("is_dir"))) for i in infos if i["path"] != "/MEMORY.md")


def _normal(name: str, out: Any) -> Any:
    """What the protocol defines of a result (NORMALISED)."""
    if isinstance(out, tuple):  # a crash
        return out
    if name == "read":
        data = out.file_data or {}
        return _error(out.error) or (data.get("content"), data.get("encoding"), out.total_lines, out.start_line,
                                     out.end_line, out.next_offset, out.no_lines_requested)
    if name in ("write", "delete"):
        return _error(out.error) or ("ok", out.path)
    if name == "edit":
        return _error(out.error) or ("ok", out.path, out.occurrences)
    if name == "ls":
        return _error(out.error) or _infos(out.entries)
    if name == "glob":
        return _error(out.error) or (_infos(out.matches), out.truncated)
    if name == "grep":
        return _error(out.error) or (sorted((m["path"], m["line"], m["text"]) for m in out.matches or []), out.truncated)
    if name == "upload_files":
        return [(r.path, r.error) for r in out]
    if name == "download_files":
        return [(r.path, r.content, r.error) for r in out]
    raise AssertionError(name)


def _outcome(backend: Any, name: str, args: tuple[Any, ...]) -> Any:
    kw = {"max_count": args[3]} if name == "grep" and len(args) > 3 else {}
    try:
        return _normal(name, getattr(backend, name)(*args[:3] if kw else args, **kw))
    except (ValueError, OSError) as e:  # the framework lets these through
        return ("crash", type(e).__name__)


@dataclass
class Pair:
    """The framework's FilesystemBackend on one folder, MemdirBackend on a memory, and what happened so far."""

    base: Path
    md: memdir.Memdir
    theirs: FilesystemBackend = field(init=False)
    ours: MemdirBackend = field(init=False)
    seen: list[str] = field(default_factory=list)  # the DIFFERENCES met, in order

    def __post_init__(self) -> None:
        (self.base / "fs").mkdir(parents=True, exist_ok=True)
        self.theirs = FilesystemBackend(root_dir=self.base / "fs", virtual_mode=True)
        self.ours = MemdirBackend(self.md)

    def their_files(self) -> Files:
        root = self.theirs.cwd
        if not root.exists():
            root.mkdir()
        return {p.relative_to(root).as_posix(): p.read_bytes().decode() for p in sorted(root.rglob("*")) if p.is_file()}

    def our_files(self) -> Files:
        return {e.path: model.unstamped(self.md.read(e.path).text) for e in self.md.list()}

    def _restore(self, files: Files) -> None:
        root = self.theirs.cwd
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(text.encode())

    def _prune(self) -> None:
        root = self.theirs.cwd
        for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(folder.iterdir()):
                folder.rmdir()

    def run(self, name: str, *args: Any) -> Step:
        before = self.their_files()
        theirs = _outcome(self.theirs, name, args)
        self.their_files()  # a deleted root comes back, as the next write would bring it
        self._prune()
        ours = _outcome(self.ours, name, args)
        if name == "grep" and len(args) > 3 and args[3] is not None:  # which matches a cap keeps is the walk's
            full = _outcome(self.theirs, name, args[:3])  # order: compare how many, and that they are matches

            def capped(out: Any) -> Any:
                return out if out[0] == "error" else (len(out[0]), out[1], set(out[0]) <= set(full[0]))
            theirs, ours = capped(theirs), capped(ours)
        step = Step((name, args), theirs, ours, before, self.their_files())
        if _compared(theirs) != _compared(ours) or step.after != self.our_files():
            known = [key for key, (_, seen) in DIFFERENCES.items() if seen(step)]
            assert known, f"the backends differ on {name}{args}:\n  framework: {theirs}\n  memdir:    {ours}\n" \
                          f"  framework files: {step.after}\n  memdir files:    {self.our_files()}"
            self.seen.append(known[0])
            if step.after != self.our_files():
                for path, text in self.our_files().items():  # accepted but shown differently: undone on memdir's side
                    if step.after.get(path) != text and before.get(path) != text:
                        self.md.undo(path)
                ours_now = self.our_files()  # the framework keeps what both did alike, and nothing else
                self._restore({p: t for p in {*before, *step.after}
                               if (t := step.after.get(p) if ours_now.get(p) == step.after.get(p) else before.get(p)) is not None})
                assert self.their_files() == self.our_files()
        return step


@pytest.fixture(params=["fs", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, request, tmp_path)


_tenants = itertools.count()


@pytest.fixture
def pair(backend: Backend, tmp_path: Path) -> Iterator[Pair]:
    with backend.open(tenant=f"da{next(_tenants)}", agent=True, writes_per_minute=0) as md:
        yield Pair(tmp_path, md)


# ---------------------------------------------------------------- hand-picked calls, side by side


def test_read_windows_and_edits(pair: Pair) -> None:
    pair.run("write", "/notes.md", "Line 1\nOld Text\nLine 3\n")
    for offset, limit in ((0, 2000), (1, 1), (2, 5), (3, 1), (-2, 2), (0, 0), (0, -1), (9, 1)):
        pair.run("read", "/notes.md", offset, limit)
    pair.run("edit", "/notes.md", "Old Text", "New Text")
    pair.run("edit", "/notes.md", "Line", "L", False)
    pair.run("edit", "/notes.md", "Line", "L", True)
    pair.run("edit", "/notes.md", "", "x")
    pair.run("edit", "/notes.md", "L 3\n\n", "x")
    pair.run("edit", "/nope.md", "a", "b")
    pair.run("write", "/crlf.md", "one\r\ntwo\r\n")
    pair.run("read", "/crlf.md")
    pair.run("edit", "/crlf.md", "two\r\n", "2\n")
    pair.run("write", "/empty.md", "")
    pair.run("read", "/empty.md")
    pair.run("read", "/missing.md")
    assert pair.seen == []


def test_listing_globbing_and_grepping(pair: Pair) -> None:
    for path, text in (("/a.md", "alpha\nbeta\n"), ("/d/c.md", "alpha beta\n"), ("/d/e/f.md", "gamma\nalpha")):
        pair.run("write", path, text)
    for path in ("/", "/d", "/d/", "/d/e", "/zz", "/a.md"):
        pair.run("ls", path)
    for pattern, path in (("*.md", None), ("**/*.md", "/"), ("*.md", "/d"), ("/*.md", None), ("{a,c}.md", None),
                          ("e/*.md", "/d"), ("*.md", "/zz"), ("../*.md", None)):
        pair.run("glob", pattern, path)
    for args in (("alpha",), ("alpha", "/d"), ("beta", None, "*.md"), ("alpha", None, "e/*.md"), ("a", None, None, 2),
                 ("zzz",), ("alpha", "/zz"), ("", "/d/e")):
        pair.run("grep", *args)
    assert pair.seen == []


def test_delete_upload_and_download(pair: Pair) -> None:
    pair.run("upload_files", [("/u.md", b"uploaded\n"), ("/d/v.md", b"also\n")])
    pair.run("download_files", ["/u.md", "/d", "/d/v.md", "/nope.md"])
    pair.run("delete", "/d")
    pair.run("delete", "/d")
    pair.run("delete", "/u.md")
    pair.run("ls", "/")
    assert pair.seen == []


@pytest.mark.parametrize("calls, difference", [
    ([("write", "/n.txt", "x")], "not markdown"),
    ([("upload_files", [("/n.bin", b"x")])], "not markdown"),
    ([("write", "/MEMORY.md", "x")], "index"),
    ([("write", "/a.md", "x"), ("edit", "/MEMORY.md", "a", "b")], "index"),
    ([("write", "/a.md", "---\nrule\n")], "first line ---"),
    ([("write", "/a.md", "---\nname: n\n---\nbody\n"), ("edit", "/a.md", "---\nname", "name")], "frontmatter into body"),
    ([("write", "/a.md", "---\nname: n\n---\nbody\n"), ("edit", "/a.md", "name: n\n", "")], "empty frontmatter block"),
    ([("write", "/a.md", "x"), ("delete", "/")], "whole memory"),
    ([("ls", "/d/../a")], "framework raises"),
])
def test_each_listed_difference_is_real(pair: Pair, calls: list[tuple[Any, ...]], difference: str) -> None:
    for call in calls:
        pair.run(*call)
    assert pair.seen == [difference]
    assert pair.their_files() == pair.our_files()


def test_refusals_name_the_path_to_use(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory", agent=True, writes_per_minute=0) as md:
        files = MemdirBackend(md, route="/memories/")
        assert files.write("/notes.txt", "x").error == (
            "Error: /memories/notes.txt is not a markdown file; memories are .md files, so use /memories/notes.md instead")
        assert files.write("/d/MEMORY.md", "x").error == (
            "Error: /memories/d/MEMORY.md is generated from the topic files and cannot be changed; write a topic file "
            "such as /memories/d/notes.md instead (its description becomes its line in the index)")
        assert files.write("/a.md", "key: AKIAIOSFODNN7EXAMPLE\n").error.startswith("Error: a.md")  # type: ignore[union-attr]
        assert files.read("/MEMORY.md").file_data["content"].startswith("# Memory Index")  # type: ignore[index]
        assert files.grep("x", "/a.md").matches == [] and md.history() == []  # nothing landed


def test_through_composite_backend_and_undo(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory", agent=True, writes_per_minute=0) as md:
        files = CompositeBackend(default=StateBackend(), routes={"/memories/": MemdirBackend(md, route="/memories/")})
        assert files.write("/memories/prefs.md", "Short answers.\n").path == "/memories/prefs.md"
        assert asyncio.run(files.aedit("/memories/prefs.md", "Short", "Long")).occurrences == 1
        assert md.read("prefs.md").body == "Long answers.\n"
        assert [m["path"] for m in files.grep("Long", "/memories").matches] == ["/memories/prefs.md"]  # type: ignore[union-attr]
        md.undo("prefs.md")  # a person takes the agent's edit back
        assert files.read("/memories/prefs.md").file_data["content"] == "Short answers.\n"  # type: ignore[index]


def test_the_docs_example_runs(tmp_path: Path) -> None:
    out = run_docs_example(PAGES / "deepagents.md", tmp_path)
    assert out[0] == "Saved." and "- [style](style.md) — Alice likes short answers" in out
    assert out[-1] == "[('write', 'style.md')]"


# ---------------------------------------------------------------- generated sequences

FILES = ["/a.md", "/b.md", "/d/c.md", "/d/e/f.md", "/n.txt", "/MEMORY.md"]
FOLDERS = ["/", "/d", "/d/", "/d/e", "/zz"]
WORDS = ["alpha", "beta", "x = 1", "", "  indented", "café ☕", "tab\there", "form\x0cfeed", "a\u2028b", "cr\r", "---",
         "name: n", "#", "- item"]
HEADS = ["", "", "---\nname: n\n---\n", "---\n# kept\ndescription: d  # why\n---\n"]
texts = st.builds(lambda head, lines, end: head + "\n".join(lines) + end,
                  st.sampled_from(HEADS), st.lists(st.sampled_from(WORDS), max_size=6), st.sampled_from(["", "\n", "\r\n"]))
snippets = st.one_of(st.sampled_from(WORDS + ["a", "\n", "alpha\nbeta", "---\n", "name: n\n"]), texts)
FROM_FILE = "<a piece of the file as it is then>"
writes = st.tuples(st.just("write"), st.sampled_from(FILES), texts)
calls = st.one_of(
    writes,
    st.tuples(st.just("read"), st.sampled_from(FILES), st.integers(-1, 7), st.integers(-1, 4)),
    st.tuples(st.just("edit"), st.sampled_from(FILES), st.one_of(snippets, st.just(FROM_FILE)), snippets, st.booleans()),
    st.tuples(st.just("ls"), st.sampled_from(FOLDERS + FILES[:3])),
    st.tuples(st.just("glob"), st.sampled_from(["*.md", "**/*.md", "d/*.md", "/*.md", "*", "**", "c.md", "{a,b}.md", "*.txt"]),
              st.sampled_from([None, *FOLDERS])),
    st.tuples(st.just("grep"), st.sampled_from(["alpha", "a", "", " ", "x = 1", "café", "---", "name: n", "\t"]),
              st.sampled_from([None, *FOLDERS]), st.sampled_from([None, None, "*.md", "e/*.md"]),
              st.sampled_from([None, None, 1, 3])),
    st.tuples(st.just("delete"), st.sampled_from(FILES + FOLDERS[1:])),
    st.tuples(st.just("upload_files"), st.lists(st.tuples(st.sampled_from(FILES), texts.map(str.encode)), min_size=1,
                                                max_size=2, unique_by=lambda f: f[0])),
    st.tuples(st.just("download_files"), st.lists(st.sampled_from(FILES + FOLDERS[1:]), min_size=1, max_size=3)),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(writes, min_size=2, max_size=4), st.lists(calls, min_size=1, max_size=10), st.data())
def test_generated_sequences_answer_the_same(backend: Backend, tmp_path_factory: pytest.TempPathFactory,
                                             setup: list[tuple[Any, ...]], sequence: list[tuple[Any, ...]],
                                             data: st.DataObject) -> None:
    with backend.open(tenant=f"da{next(_tenants)}", agent=True, writes_per_minute=0) as md:
        pair = Pair(tmp_path_factory.mktemp("pair"), md)
        for call in setup + sequence:
            files = pair.their_files()
            if call[0] == "edit" and call[2] == FROM_FILE and files:  # most edits aim at a file there, at text it has
                path = data.draw(st.sampled_from(sorted(files)))
                start = data.draw(st.integers(0, len(files[path])))
                call = ("edit", f"/{path}", files[path][start : start + data.draw(st.integers(1, 30))], *call[3:])
            pair.run(*call)
