"""The SDK's own memory tool and MemdirMemoryTool, side by side on the same commands.

`BetaLocalFilesystemMemoryTool` (the anthropic SDK's tool, on a plain folder) and
`MemdirMemoryTool` (over memdir) run the same command sequences: the edge cases
of the SDK's own test file and sequences hypothesis generates. After every
command both must answer the same, and every file must read back the same (for
memdir: the stored text without its created/updated lines). Where they differ
on purpose, the difference is one of DIFFERENCES, each with its reason; the
test names the one it saw, and anything else fails.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from services import need

import memdir
from memdir import model

need("anthropic")
need("hypothesis")

from anthropic.lib.tools import ToolError  # noqa: E402
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool  # noqa: E402
from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.control import currently_in_test_context  # noqa: E402

from memdir.faces.anthropic import MemdirMemoryTool  # noqa: E402

Files = dict[str, str]


@dataclass(frozen=True)
class Step:
    """One command as both tools saw it."""

    command: dict[str, Any]
    sdk: tuple[str, str]  # ("ok" | "error" | "crash", text)
    ours: tuple[str, str]
    before: Files  # the SDK's files before and after the command
    after: Files


# Where the two differ on purpose. A refusal: memdir says no where the SDK does it;
# the SDK's change is then rolled back so both go on from the same files.
DIFFERENCES: dict[str, tuple[str, Callable[[Step], bool]]] = {
    "not markdown": (
        "memories are .md topic files (the index, search and limits read only those); the SDK stores any name",
        lambda s: "is not a markdown file" in s.ours[1]
        and not str(s.command.get("path", s.command.get("new_path", ""))).rstrip("/").endswith(".md"),
    ),
    "first line ---": (
        "a text whose first line is `---` is frontmatter to memdir (and to Obsidian, Jekyll...), so it must be "
        "a closed YAML mapping; the SDK stores any text",
        lambda s: "frontmatter" in s.ours[1] and any(t.startswith("---") for t in _changed(s)),
    ),
    "frontmatter into body": (
        "no command may turn frontmatter into body text (the description would silently leave the index): "
        "insert at 0 above the `---` block, or an edit that pushes the block down, is refused with the line to use",
        lambda s: "into body text" in s.ours[1]
        and any(model.moves_frontmatter(s.before.get(p, ""), s.after.get(p, "")) for p in s.after),
    ),
    "line limit": (
        "a topic file a model writes is capped at max_lines (200 of its own lines: memdir's date lines do not count) "
        "so reads and the index stay small",
        lambda s: "lines; the limit is" in s.ours[1] and any(t.count("\n") > 200 for t in _changed(s)),
    ),
    "control characters": (
        "control characters other than tab and newline are refused in memories (they can forge index lines)",
        lambda s: "control character" in s.ours[1],
    ),
    "sdk crash": (
        "the SDK raises an uncaught OSError (a folder moved into itself, a file used as a folder); "
        "memdir refuses with a one-line error and changes nothing",
        lambda s: s.sdk[0] == "crash" and s.ours[0] == "error",
    ),
    "empty frontmatter block": (
        "an empty block (`---` then `---`) is where memdir keeps its created/updated lines, so the view shows "
        "it as no block (memdir's change is undone here so both go on from the same files)",
        lambda s: s.ours[0] == "ok" and any(model.split(t)[0] == "" for t in _changed(s)),
    ),
}

# Differences that are not refusals; the comparison normalises them.
NORMALISED = {
    "root view": "`view /memories` starts with the generated index and lists MEMORY.md (memdir's table of contents)",
    "directory sizes": "a folder's size is the total of its files on every backend; the SDK shows the directory "
                       "inode's size, which depends on the filesystem (4K on ext4)",
    "empty folders": "a folder exists while it holds a file (as on S3 and SQL backends); the SDK keeps empty "
                     "directories, so they are pruned on its side after each command",
}

# Not generated below (each is shown by a test in test_anthropic_tool.py or test_memdir.py):
# secrets (the secret guard refuses credentials), paging (a view shows at most read_max_lines
# and read_max_bytes, then says how to page), symlinks and non-UTF-8 files (memdir's own
# one-line refusals), `/memoriesX/...` (the SDK reads it as /memories/X/...; memdir refuses),
# and `created:`/`updated:` keys the model writes itself (memdir's own fields: hidden in views).


def _count(what: str) -> None:
    """Statistics for `pytest --hypothesis-show-statistics`."""
    if currently_in_test_context():
        event(what)


def _changed(s: Step) -> list[str]:
    return [t for p, t in s.after.items() if s.before.get(p) != t]


def _outcome(tool: Any, command: dict[str, Any]) -> tuple[str, str]:
    try:
        return "ok", str(tool.call(command))
    except ToolError as e:
        return "error", str(e.content)
    except OSError as e:  # the SDK's tool lets these through
        return "crash", type(e).__name__


def _normal(out: tuple[str, str]) -> tuple[str, str]:
    kind, text = out
    if text.startswith("/memories/MEMORY.md is the index"):
        text = text[text.index("Here're the files") :]
    if not text.startswith("Here're the files"):
        return kind, text
    lines = text.split("\n")
    keep = [lines[0]]
    for n, line in enumerate(lines[1:]):
        size, _, name = line.partition("\t")
        if name.rsplit("/", 1)[-1] == "MEMORY.md":
            continue
        keep.append(f"<dir>\t{name}" if n == 0 or name.endswith("/") else line)
    return kind, "\n".join(keep)


@dataclass
class Pair:
    """The SDK's tool on one folder, memdir's on another, and what happened so far."""

    base: Path
    sdk: BetaLocalFilesystemMemoryTool = field(init=False)
    md: memdir.Memdir = field(init=False)
    ours: MemdirMemoryTool = field(init=False)
    seen: list[str] = field(default_factory=list)  # the DIFFERENCES met, in order

    def __post_init__(self) -> None:
        self.sdk = BetaLocalFilesystemMemoryTool(base_path=str(self.base / "sdk"))
        self.md = memdir.open(self.base / "memdir", writes_per_minute=0)
        self.ours = MemdirMemoryTool(self.md)

    def sdk_files(self) -> Files:
        root = self.sdk.memory_root
        return {p.relative_to(root).as_posix(): p.read_bytes().decode() for p in sorted(root.rglob("*")) if p.is_file()}

    def our_files(self) -> Files:
        return {e.path: model.unstamped(self.md.read(e.path).text) for e in self.md.list()}

    def _restore(self, files: Files) -> None:
        root = self.sdk.memory_root
        shutil.rmtree(root)
        root.mkdir()
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(text.encode())

    def _prune(self) -> None:
        root = self.sdk.memory_root
        for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(folder.iterdir()):
                folder.rmdir()

    def run(self, **command: Any) -> Step:
        before = self.sdk_files()
        sdk = _outcome(self.sdk, command)
        self._prune()
        ours = _outcome(self.ours, command)
        step = Step(command, sdk, ours, before, self.sdk_files())
        if _normal(sdk) != _normal(ours) or step.after != self.our_files():
            known = [name for name, (_, seen) in DIFFERENCES.items() if seen(step)]
            assert known, f"the tools differ on {command}:\n  sdk:    {sdk}\n  memdir: {ours}\n" \
                          f"  sdk files:    {step.after}\n  memdir files: {self.our_files()}"
            self.seen.append(known[0])
            _count(f"difference: {known[0]}")
            if ours[0] == "ok":  # accepted but shown differently: undo it on memdir's side
                path = self.ours._rel(command.get("path") or command["new_path"])
                self.md.undo(path)
            self._restore(before)
            assert self.sdk_files() == self.our_files()
        else:
            _count(f"{command['command']}: {sdk[0]}, same")
        return step

    def close(self) -> None:
        self.md.close()


@pytest.fixture
def pair(tmp_path: Path) -> Any:
    p = Pair(tmp_path)
    yield p
    p.close()


# ---------------------------------------------------------------- the SDK test file's cases, side by side


def test_create_view_and_nested_folders(pair: Pair) -> None:
    assert pair.run(command="create", path="/memories/test_file.md", file_text="Hello, World!").ours == (
        "ok", "File created successfully at: /memories/test_file.md")
    pair.run(command="create", path="/memories/deep/nested/file.md", file_text="Nested file")
    pair.run(command="create", path="/memories/test_file.md", file_text="New")
    pair.run(command="create", path="/memories/test_file.md", file_text="---\nnot closed")  # exists comes first
    pair.run(command="create", path="/memories/view_test.md", file_text="Line 1\nLine 2\nLine 3")
    for path in ("/memories/view_test.md", "/memories", "/memories/", "/memories/deep", "/memories/deep/nested/"):
        pair.run(command="view", path=path)
    for view_range in ([2, 3], [0, 1], [3, 1], [2, -1], [2, 99], [5, 9], [2], [-3, -2]):
        pair.run(command="view", path="/memories/view_test.md", view_range=view_range)
    pair.run(command="view", path="/memories/nonexistent.md")
    pair.run(command="view", path="/memories/deep/nested/file.md/")
    assert pair.seen == []


def test_str_replace_cases(pair: Pair) -> None:
    pair.run(command="create", path="/memories/r.md", file_text="Line 1\nOld Text\nLine 3")
    pair.run(command="str_replace", path="/memories/r.md", old_str="Old Text", new_str="New Text")
    pair.run(command="str_replace", path="/memories/r.md", old_str="NotFound", new_str="Python")
    pair.run(command="create", path="/memories/m.md", file_text="Hello\nMiddle\nHello\naaa")
    pair.run(command="str_replace", path="/memories/m.md", old_str="Hello", new_str="Hi")
    pair.run(command="str_replace", path="/memories/m.md", old_str="aa", new_str="b")  # counted without overlaps
    pair.run(command="str_replace", path="/memories/m.md", old_str="", new_str="x")
    pair.run(command="str_replace", path="/memories/nonexistent.md", old_str="old", new_str="new")
    pair.run(command="str_replace", path="/memories", old_str="old", new_str="new")
    pair.run(command="create", path="/memories/crlf.md", file_text="line1\r\nline2\r\nline3\r\n")
    pair.run(command="view", path="/memories/crlf.md")
    pair.run(command="str_replace", path="/memories/crlf.md", old_str="line2", new_str="LINE2\nmore")
    assert pair.seen == []


def test_insert_cases(pair: Pair) -> None:
    pair.run(command="create", path="/memories/i.md", file_text="Line 1\nLine 2")
    pair.run(command="insert", path="/memories/i.md", insert_line=1, insert_text="Inserted Line")
    pair.run(command="insert", path="/memories/i.md", insert_line=0, insert_text="First Line")
    pair.run(command="insert", path="/memories/i.md", insert_line=4, insert_text="Last Line\n\n")
    pair.run(command="insert", path="/memories/i.md", insert_line=10, insert_text="text")
    pair.run(command="insert", path="/memories/i.md", insert_line=-1, insert_text="text")
    pair.run(command="insert", path="/memories/nonexistent.md", insert_line=0, insert_text="text")
    pair.run(command="create", path="/memories/crlf.md", file_text="line1\r\nline2\r\nline3\r\n")
    pair.run(command="insert", path="/memories/crlf.md", insert_line=1, insert_text="Inserted")
    pair.run(command="create", path="/memories/odd.md", file_text="a\u2028b\nform\x0cfeed")
    pair.run(command="insert", path="/memories/odd.md", insert_line=2, insert_text="end")
    pair.run(command="view", path="/memories/odd.md")
    assert pair.seen == []


def test_delete_and_rename_cases(pair: Pair) -> None:
    pair.run(command="create", path="/memories/delete_me.md", file_text="To be deleted")
    pair.run(command="delete", path="/memories/delete_me.md")
    pair.run(command="create", path="/memories/subdir/file.md", file_text="Content")
    pair.run(command="delete", path="/memories/subdir")
    pair.run(command="delete", path="/memories/nonexistent.md")
    pair.run(command="delete", path="/memories")
    pair.run(command="create", path="/memories/old_name.md", file_text="Original content")
    pair.run(command="rename", old_path="/memories/old_name.md", new_path="/memories/new_name.md")
    pair.run(command="rename", old_path="/memories/new_name.md", new_path="/memories/nested/dir/file.md")
    pair.run(command="rename", old_path="/memories/nonexistent.md", new_path="/memories/new.md")
    pair.run(command="create", path="/memories/file1.md", file_text="File 1")
    pair.run(command="rename", old_path="/memories/file1.md", new_path="/memories/nested/dir/file.md")
    pair.run(command="rename", old_path="/memories/nested", new_path="/memories/moved/here")
    pair.run(command="rename", old_path="/memories/moved/", new_path="/memories/file1.md")
    pair.run(command="rename", old_path="/memories", new_path="/memories/x")
    pair.run(command="view", path="/memories")
    assert pair.seen == []


def test_path_checks(pair: Pair) -> None:
    pair.run(command="create", path="/invalid/path.md", file_text="Invalid")
    pair.run(command="create", path="/memories/../../../etc/passwd", file_text="Escape attempt")
    pair.run(command="view", path="/memories/../x.md")
    pair.run(command="create", path="/memories/a/../b.md", file_text="inside after all")
    pair.run(command="view", path="/memories/./b.md")
    assert pair.seen == []


@pytest.mark.parametrize(
    "commands, difference",
    [
        ([{"command": "create", "path": "/memories/notes.txt", "file_text": "x"}], "not markdown"),
        ([{"command": "create", "path": "/memories/a.md", "file_text": "x"},
          {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/a"}], "not markdown"),
        ([{"command": "create", "path": "/memories/a.md", "file_text": "---\nrule\n"}], "first line ---"),
        ([{"command": "create", "path": "/memories/a.md", "file_text": "---\nname: n\n---\nbody\n"},
          {"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "top"}], "frontmatter into body"),
        ([{"command": "create", "path": "/memories/a.md", "file_text": "---\nname: n\n---\nbody\n"},
          {"command": "str_replace", "path": "/memories/a.md", "old_str": "---\nname", "new_str": "name"}], "frontmatter into body"),
        ([{"command": "create", "path": "/memories/a.md", "file_text": "x\n" * 201}], "line limit"),
        ([{"command": "create", "path": "/memories/d/a.md", "file_text": "x"},
          {"command": "rename", "old_path": "/memories/d", "new_path": "/memories/d/e"}], "sdk crash"),
        ([{"command": "create", "path": "/memories/a.md", "file_text": "---\nname: n\n---\nbody\n"},
          {"command": "str_replace", "path": "/memories/a.md", "old_str": "name: n\n", "new_str": ""}], "empty frontmatter block"),
    ],
)
def test_each_listed_difference_is_real(pair: Pair, commands: list[dict[str, Any]], difference: str) -> None:
    for command in commands:
        pair.run(**command)
    assert pair.seen == [difference]
    assert pair.sdk_files() == pair.our_files()


# ---------------------------------------------------------------- generated sequences

FILES = ["/memories/a.md", "/memories/b.md", "/memories/d/c.md", "/memories/d/e/f.md", "/memories/d/e/g/h.md"]
FOLDERS = ["/memories", "/memories/", "/memories/d", "/memories/d/", "/memories/d/e", "/memories/n"]
WORDS = ["alpha", "beta", "x = 1", "", "  indented", "café ☕", "tab\there", "form\x0cfeed", "a\u2028b", "cr\r",
         "---", "name: n", "#", "- item"]
HEADS = ["", "---\nname: n\n---\n", "---\n# kept\ndescription: d  # why\nlinks: {jira: X-1}\n---\n"]

texts = st.builds(
    lambda head, lines, end: head + "\n".join(lines) + end,
    st.sampled_from(HEADS), st.lists(st.sampled_from(WORDS), max_size=6), st.sampled_from(["", "\n"]),
)
snippets = st.one_of(st.sampled_from(WORDS + ["a", "\n", "alpha\nbeta", "---\n", "name: n\n", "d  # why"]), texts)
FROM_FILE = "<a piece of the file as it is then>"
creates = st.fixed_dictionaries({"command": st.just("create"), "path": st.sampled_from(FILES), "file_text": texts})
commands = st.one_of(
    creates,
    st.fixed_dictionaries(
        {"command": st.just("view"), "path": st.sampled_from(FILES + FOLDERS)},
        optional={"view_range": st.lists(st.integers(-3, 9), min_size=1, max_size=2)},
    ),
    st.fixed_dictionaries({"command": st.just("str_replace"), "path": st.sampled_from(FILES),
                           "old_str": st.one_of(snippets, st.just(FROM_FILE)), "new_str": snippets}),
    st.fixed_dictionaries({"command": st.just("insert"), "path": st.sampled_from(FILES),
                           "insert_line": st.integers(-1, 9), "insert_text": snippets}),
    st.fixed_dictionaries({"command": st.just("delete"), "path": st.sampled_from(FILES + FOLDERS)}),
    st.fixed_dictionaries({"command": st.just("rename"), "old_path": st.sampled_from(FILES + FOLDERS),
                           "new_path": st.sampled_from(FILES + ["/memories/n", "/memories/n/m", "/memories/z.md"])}),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(creates, min_size=2, max_size=5), st.lists(commands, min_size=1, max_size=12), st.data())
def test_generated_sequences_answer_the_same(
    tmp_path_factory: pytest.TempPathFactory, setup: list[dict[str, Any]], sequence: list[dict[str, Any]], data: st.DataObject
) -> None:
    pair = Pair(tmp_path_factory.mktemp("pair"))
    try:
        for command in setup + sequence:
            files = pair.sdk_files()
            if command.get("old_str") == FROM_FILE and files:  # most edits aim at a file there, at text it has
                path = data.draw(st.sampled_from(sorted(files)))
                start = data.draw(st.integers(0, len(files[path])))
                piece = files[path][start : start + data.draw(st.integers(1, 30))]
                command = {**command, "path": f"/memories/{path}", "old_str": piece}
            pair.run(**command)
    finally:
        pair.close()
