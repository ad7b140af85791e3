"""MemdirMemoryTool: Anthropic's memory tool commands over memdir, with the docs' strings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import memdir

pytest.importorskip("anthropic")

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError  # noqa: E402

from memdir.anthropic import MemdirMemoryTool  # noqa: E402


@pytest.fixture
def tool(md: memdir.Memdir) -> MemdirMemoryTool:
    return MemdirMemoryTool(md)


def run(tool: MemdirMemoryTool, **command: Any) -> str:
    return tool.call(command)


def error(tool: MemdirMemoryTool, **command: Any) -> str:
    with pytest.raises(ToolError) as e:
        tool.call(command)
    content = e.value.content
    assert isinstance(content, str)
    return content


def test_it_is_the_sdk_memory_tool(tool: MemdirMemoryTool) -> None:
    assert isinstance(tool, BetaAbstractMemoryTool)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.name == "memory"


def test_create_view_and_the_file_on_disk(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    assert run(tool, command="create", path="/memories/notes.md", file_text="# Notes\nlikes tea\n") == (
        "File created successfully at: /memories/notes.md"
    )
    text = (root / "notes.md").read_text()
    assert text.endswith("---\n# Notes\nlikes tea\n") and "created:" in text
    lines = text.splitlines()
    assert run(tool, command="view", path="/memories/notes.md") == (
        "Here's the content of /memories/notes.md with line numbers:\n"
        + "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))
    )
    assert run(tool, command="view", path="/memories/notes.md", view_range=[len(lines), -1]) == (
        f"Here's the content of /memories/notes.md with line numbers:\n{len(lines):>6}\tlikes tea"
    )
    assert md.history("notes.md")[0].op == "write"


def test_view_root_shows_the_index_then_the_listing(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    md.write("user/profile.md", "Works at a bakery.\n", description="who the user is", type="user")
    md.write("project/flock/plan.md", "x" * 2000 + "\n", description="launch plan")
    md.write("project/flock/deep/more.md", "deep\n")
    out = run(tool, command="view", path="/memories")
    index, listing = out.split("\n\n", 1)[0], out.split("\n\n")[-1]
    assert index.startswith("/memories/MEMORY.md is the index of this memory, generated from the files (one line per file):\n# Memory Index")
    assert "- [profile](user/profile.md) — who the user is" in out
    size = {e.path: e.size for e in md.list()}
    total = sum(size.values())
    kb = lambda n: f"{n}B" if n < 1024 else f"{n / 1024:.1f}K"  # noqa: E731
    assert listing.splitlines() == [
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:",
        f"{kb(total)}\t/memories",
        f"{kb(len(md.index().encode()))}\t/memories/MEMORY.md",
        f"{kb(size['project/flock/plan.md'] + size['project/flock/deep/more.md'])}\t/memories/project/",
        f"{kb(size['project/flock/plan.md'] + size['project/flock/deep/more.md'])}\t/memories/project/flock/",
        f"{kb(size['user/profile.md'])}\t/memories/user/",
        f"{kb(size['user/profile.md'])}\t/memories/user/profile.md",
    ]
    sub = run(tool, command="view", path="/memories/project/")
    assert sub.splitlines()[1:] == [
        f"{kb(size['project/flock/plan.md'] + size['project/flock/deep/more.md'])}\t/memories/project",
        f"{kb(size['project/flock/plan.md'] + size['project/flock/deep/more.md'])}\t/memories/project/flock/",
        f"{kb(size['project/flock/deep/more.md'])}\t/memories/project/flock/deep/",
        f"{kb(size['project/flock/plan.md'])}\t/memories/project/flock/plan.md",
    ]
    assert run(tool, command="view", path="/memories/MEMORY.md").splitlines()[1] == "     1\t# Memory Index"


def test_empty_memory_view(tool: MemdirMemoryTool) -> None:
    out = run(tool, command="view", path="/memories")
    assert out.endswith("excluding hidden items and node_modules:\n0B\t/memories\n" + out.splitlines()[-1])
    assert out.splitlines()[-1].endswith("\t/memories/MEMORY.md")


def test_view_errors(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    md.write("a.md", "one\ntwo\n")
    assert error(tool, command="view", path="/memories/nope.md") == (
        "The path /memories/nope.md does not exist. Please provide a valid path."
    )
    assert error(tool, command="view", path="/memories/nothing-here") == (
        "The path /memories/nothing-here does not exist. Please provide a valid path."
    )
    assert error(tool, command="view", path="/etc/passwd") == (
        "Error: The path /etc/passwd is outside /memories; every memory path starts with /memories/"
    )
    assert error(tool, command="view", path="/memoriesX/a.md").startswith("Error: The path /memoriesX/a.md is outside")
    assert "contains '..'" in error(tool, command="view", path="/memories/../secret.md")
    assert "hidden component" in error(tool, command="view", path="/memories/.memdir/memdir.db")
    assert "Invalid `view_range` parameter: [3, 1]" in error(tool, command="view", path="/memories/a.md", view_range=[3, 1])
    assert error(tool, command="view", path="/memories/a.md", view_range=[1, "x"]) == (
        "Error: `view_range` must be two integers [start, end], got [1, 'x']"
    )


def test_long_hand_written_files_are_paged(tool: MemdirMemoryTool, root: Path) -> None:
    with memdir.open(root, read_max_lines=5) as md:
        (root / "long.md").write_text("".join(f"line {i}\n" for i in range(1, 13)))
        md.reconcile(fix=True)
        small = MemdirMemoryTool(md)
        out = small.call({"command": "view", "path": "/memories/long.md"}).splitlines()
        assert out[1:6] == [f"{n:>6}\tline {n}" for n in range(1, 6)]
        assert out[6] == "(showing lines 1-5 of 12; view with view_range [6, 10] for more)"
        page = small.call({"command": "view", "path": "/memories/long.md", "view_range": [11, -1]}).splitlines()
        assert page[1:] == ["    11\tline 11", "    12\tline 12"]
    with memdir.open(root, read_max_bytes=20) as md:  # "line N\n" is 7 bytes: two lines fit
        out = MemdirMemoryTool(md).call({"command": "view", "path": "/memories/long.md"}).splitlines()
        assert out[1:] == ["     1\tline 1", "     2\tline 2", "(showing lines 1-2 of 12; view with view_range [3, 12] for more)"]


def test_create_errors_and_nothing_changes(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="first\n")
    before = md.read("a.md").version
    assert error(tool, command="create", path="/memories/a.md", file_text="second\n") == "Error: File /memories/a.md already exists"
    assert md.read("a.md").version == before
    assert error(tool, command="create", path="/memories/progress.xml", file_text="<x/>") == (
        "Error: /memories/progress.xml is not a markdown file; memories are .md files, so use /memories/progress.md instead"
    )
    assert error(tool, command="create", path="/memories/todo", file_text="x") == (
        "Error: /memories/todo is not a markdown file; memories are .md files, so use /memories/todo.md instead"
    )
    assert error(tool, command="create", path="/memories/MEMORY.md", file_text="hi").startswith(
        "Error: path 'MEMORY.md' is a generated index"
    )
    assert "looks like an AWS access key id" in error(tool, command="create", path="/memories/k.md", file_text="AKIAABCDEFGHIJKLMNOP")
    assert "the limit is 200" in error(tool, command="create", path="/memories/big.md", file_text="x\n" * 300)
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["MEMORY.md", "a.md"]


def test_str_replace(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\n")
    out = run(tool, command="str_replace", path="/memories/a.md", old_str="delta", new_str="DELTA")
    text = md.read("a.md").text.splitlines()
    at = text.index("DELTA") + 1
    assert out == "The memory file has been edited.\n" + "\n".join(
        f"{n:>6}\t{text[n - 1]}" for n in range(at - 2, at + 3)
    )
    assert md.read("a.md").body == "alpha\nbeta\ngamma\nDELTA\nepsilon\nzeta\n"


def test_str_replace_errors(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="x = 1\ny = 2\nx = 1\n")
    version = md.read("a.md").version
    lines = md.read("a.md").text.splitlines()
    first = lines.index("x = 1") + 1
    assert error(tool, command="str_replace", path="/memories/a.md", old_str="x = 1", new_str="x = 3") == (
        f"No replacement was performed. Multiple occurrences of old_str `x = 1` in lines: {first}, {first + 2}. Please ensure it is unique"
    )
    assert error(tool, command="str_replace", path="/memories/a.md", old_str="z", new_str="w") == (
        "No replacement was performed, old_str `z` did not appear verbatim in /memories/a.md."
    )
    assert error(tool, command="str_replace", path="/memories/b.md", old_str="z", new_str="w") == (
        "Error: The path /memories/b.md does not exist. Please provide a valid path."
    )
    md.write("dir/c.md", "c\n")
    assert error(tool, command="str_replace", path="/memories/dir", old_str="c", new_str="d") == (
        "Error: The path /memories/dir does not exist. Please provide a valid path."
    )
    assert "looks like a Slack token" in error(
        tool, command="str_replace", path="/memories/a.md", old_str="y = 2", new_str="xoxb-1234567890-abcdef"
    )
    assert md.read("a.md").version == version


def test_insert(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="one\nthree\n")
    n = len(md.read("a.md").text.splitlines())
    assert run(tool, command="insert", path="/memories/a.md", insert_line=n - 1, insert_text="two\n") == (
        "The file /memories/a.md has been edited."
    )
    assert run(tool, command="insert", path="/memories/a.md", insert_line=n + 1, insert_text="four\nfive") == (
        "The file /memories/a.md has been edited."
    )
    assert md.read("a.md").body == "one\ntwo\nthree\nfour\nfive\n"
    m = len(md.read("a.md").text.splitlines())
    assert error(tool, command="insert", path="/memories/a.md", insert_line=m + 1, insert_text="x") == (
        f"Error: Invalid `insert_line` parameter: {m + 1}. It should be within the range of lines of the file: [0, {m}]"
    )
    assert error(tool, command="insert", path="/memories/zz.md", insert_line=0, insert_text="x") == (
        "Error: The path /memories/zz.md does not exist"
    )


def test_insert_into_an_empty_file(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    (root / "empty.md").write_text("")
    md.reconcile(fix=True)
    run(tool, command="insert", path="/memories/empty.md", insert_line=0, insert_text="first fact")
    assert md.read("empty.md").body == "first fact\n"


def test_delete_file_and_directory(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    md.write("a.md", "a\n")
    md.write("old/x.md", "x\n")
    md.write("old/deep/y.md", "y\n")
    assert run(tool, command="delete", path="/memories/a.md") == "Successfully deleted /memories/a.md"
    assert run(tool, command="delete", path="/memories/old") == "Successfully deleted /memories/old"
    assert md.list() == []
    assert error(tool, command="delete", path="/memories/a.md") == "Error: The path /memories/a.md does not exist"
    assert error(tool, command="delete", path="/memories/old") == "Error: The path /memories/old does not exist"
    assert error(tool, command="delete", path="/memories") == "Error: Cannot delete the /memories directory itself"
    md.undo("old/x.md")
    assert md.read("old/x.md").body == "x\n"


def test_rename_file_and_directory(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    md.write("a.md", "a\n")
    md.write("b.md", "b\n")
    md.write("old/x.md", "x\n")
    md.write("old/deep/y.md", "y\n")
    assert run(tool, command="rename", old_path="/memories/a.md", new_path="/memories/sub/c.md") == (
        "Successfully renamed /memories/a.md to /memories/sub/c.md"
    )
    assert run(tool, command="rename", old_path="/memories/old", new_path="/memories/archive/old") == (
        "Successfully renamed /memories/old to /memories/archive/old"
    )
    assert [e.path for e in md.list()] == ["archive/old/deep/y.md", "archive/old/x.md", "b.md", "sub/c.md"]
    assert error(tool, command="rename", old_path="/memories/b.md", new_path="/memories/sub/c.md") == (
        "Error: The destination /memories/sub/c.md already exists"
    )
    assert error(tool, command="rename", old_path="/memories/archive", new_path="/memories/sub") == (
        "Error: The destination /memories/sub already exists"
    )
    assert error(tool, command="rename", old_path="/memories/nope.md", new_path="/memories/n.md") == (
        "Error: The path /memories/nope.md does not exist"
    )
    assert error(tool, command="rename", old_path="/memories/archive", new_path="/memories/archive/inner") == (
        "Error: cannot move /memories/archive into itself; choose a destination outside it"
    )
    assert error(tool, command="rename", old_path="/memories", new_path="/memories/x") == (
        "Error: Cannot rename the /memories directory itself"
    )
    assert error(tool, command="rename", old_path="/memories/b.md", new_path="/memories/b.txt").startswith(
        "Error: /memories/b.txt is not a markdown file"
    )
    assert [e.path for e in md.list()] == ["archive/old/deep/y.md", "archive/old/x.md", "b.md", "sub/c.md"]


def test_scope_is_checked_for_every_file_before_a_directory_change(md: memdir.Memdir) -> None:
    md.write("shared/a.md", "a\n")
    md.write("shared/b.md", "b\n")
    md.write("people/alice/x.md", "x\n")
    alice = MemdirMemoryTool(md.scope(read=["shared/"], write=["people/alice/"]))
    assert "outside what this principal may write" in error(alice, command="delete", path="/memories/shared")
    assert "outside what this principal may write" in error(
        alice, command="rename", old_path="/memories/shared", new_path="/memories/people/alice/shared"
    )
    assert len(md.list()) == 3 and len(md.history()) == 3
    assert "people/bob" not in run(alice, command="view", path="/memories")
    assert error(alice, command="view", path="/memories/people/bob/x.md").startswith("The path /memories/people/bob/x.md does not exist")


def test_malformed_input_is_a_tool_error(tool: MemdirMemoryTool) -> None:
    assert error(tool, command="explode", path="/memories") == (
        "Error: unknown command 'explode'; use one of view, create, str_replace, insert, delete, rename"
    )
    assert error(tool, command="create", path="/memories/a.md") == "Error: `create` needs `file_text` as a string, got None"
    assert error(tool, command="insert", path="/memories/a.md", insert_line="1", insert_text="x") == (
        "Error: `insert` needs `insert_line` as an integer, got '1'"
    )
    with pytest.raises(ToolError):
        tool.call(["view"])


def test_async_tool(md: memdir.Memdir) -> None:
    import asyncio

    from memdir.anthropic import AsyncMemdirMemoryTool

    tool = AsyncMemdirMemoryTool(md)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}

    async def go() -> str:
        await tool.call({"command": "create", "path": "/memories/a.md", "file_text": "hello\n"})
        return await tool.call({"command": "view", "path": "/memories/a.md", "view_range": [1, 1]})

    assert asyncio.run(go()) == "Here's the content of /memories/a.md with line numbers:\n     1\t---"
    assert md.read("a.md").body == "hello\n"


def test_import_memdir_does_not_load_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, memdir, memdir.cli; print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
