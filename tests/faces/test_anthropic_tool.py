"""MemdirMemoryTool: Anthropic's memory tool over memdir, answering as the SDK's own tool does.

`test_anthropic_differential.py` runs the SDK's local-filesystem tool and this one
side by side; these tests show the behaviours one by one, memdir's own included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from services import need

import memdir

need("anthropic")

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError  # noqa: E402
from anthropic.lib.tools._beta_builtin_memory_tool import _format_file_size as sdk_size  # noqa: E402

from memdir.faces.anthropic import MemdirMemoryTool  # noqa: E402

HEAD = "Here's the content of {} with line numbers:\n"


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


def numbered(lines: list[str], first: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))


def test_it_is_the_sdk_memory_tool(tool: MemdirMemoryTool) -> None:
    assert isinstance(tool, BetaAbstractMemoryTool)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.name == "memory"


# ---------------------------------------------------------------- files view back as written


def test_a_file_views_back_exactly_as_written(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    assert run(tool, command="create", path="/memories/notes.md", file_text="# Notes\nlikes tea\n") == (
        "File created successfully at: /memories/notes.md"
    )
    on_disk = (root / "notes.md").read_text()
    assert on_disk.startswith("---\ncreated: ") and on_disk.endswith("---\n# Notes\nlikes tea\n")
    # The SDK splits on "\n": a final newline shows as an empty last line.
    assert run(tool, command="view", path="/memories/notes.md") == (
        HEAD.format("/memories/notes.md") + numbered(["# Notes", "likes tea", ""])
    )
    assert run(tool, command="view", path="/memories/notes.md", view_range=[2, -1]) == (
        HEAD.format("/memories/notes.md") + numbered(["likes tea", ""], 2)
    )
    assert md.read("notes.md").description == "Notes"
    assert md.history("notes.md")[0].op == "write"


def test_text_without_a_final_newline_stays_without_one(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="Line 1\nLine 2")
    assert run(tool, command="view", path="/memories/a.md") == HEAD.format("/memories/a.md") + numbered(["Line 1", "Line 2"])
    assert md.read("a.md").body == "Line 1\nLine 2"


def test_frontmatter_the_model_writes_stays_as_written_and_memdir_lines_stay_out(
    tool: MemdirMemoryTool, md: memdir.Memdir, root: Path
) -> None:
    text = "---\n# kept for the team\nname: flock\ndescription: launch plan  # short\nlinks: {jira: FL-1}\n---\nShip it.\n"
    run(tool, command="create", path="/memories/project/flock.md", file_text=text)
    assert run(tool, command="view", path="/memories/project/flock.md") == (
        HEAD.format("/memories/project/flock.md") + numbered(text.split("\n"))
    )
    on_disk = (root / "project/flock.md").read_text()
    assert on_disk.startswith(text.split("---\nShip")[0] + "created: ")  # memdir's lines go last in the block
    assert "- [flock](project/flock.md) — launch plan" in md.index()
    run(tool, command="str_replace", path="/memories/project/flock.md", old_str="Ship it.", new_str="Shipped.")
    assert (root / "project/flock.md").read_text().startswith(on_disk.split("updated:")[0])  # created kept, in place
    assert md.read("project/flock.md").body == "Shipped.\n"


def test_a_hand_written_file_shows_without_its_date_lines(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    (root / "user").mkdir(parents=True)
    (root / "user/profile.md").write_text("---\nname: me\ncreated: 2026-01-05\ntype: user  # who\n---\nLikes tea.\n")
    md.reconcile(fix=True)
    assert run(tool, command="view", path="/memories/user/profile.md") == (
        HEAD.format("/memories/user/profile.md") + numbered(["---", "name: me", "type: user  # who", "---", "Likes tea.", ""])
    )
    run(tool, command="insert", path="/memories/user/profile.md", insert_line=5, insert_text="Lives in Lyon.")
    after = (root / "user/profile.md").read_text()
    assert after.startswith("---\nname: me\ntype: user  # who\ncreated: 2026-01-05\nupdated: ")
    assert after.endswith("---\nLikes tea.\nLives in Lyon.\n")


def test_lines_split_only_on_newlines(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    text = "a\u2028b\nform\x0cfeed\ncr\r\n"
    run(tool, command="create", path="/memories/odd.md", file_text=text)
    assert run(tool, command="view", path="/memories/odd.md") == HEAD.format("/memories/odd.md") + numbered(
        ["a\u2028b", "form\x0cfeed", "cr\r", ""]
    )
    run(tool, command="insert", path="/memories/odd.md", insert_line=1, insert_text="new")
    assert md.read("odd.md").body == "a\u2028b\nnew\nform\x0cfeed\ncr\r\n"


# ---------------------------------------------------------------- view


def test_view_root_shows_the_index_then_the_listing(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    md.write("user/profile.md", "Works at a bakery.\n", description="who the user is", type="user")
    md.write("project/flock/plan.md", "x" * 2047 + "\n")
    md.write("project/flock/deep/more.md", "deep\n")
    out = run(tool, command="view", path="/memories")
    index, listing = out.split("\n\n", 1)[0], out.split("\n\n")[-1]
    assert index.startswith("/memories/MEMORY.md is the index of this memory, generated from the files (one line per file):\n# Memory Index")
    assert "- [profile](user/profile.md) — who the user is" in out
    size = {e.path: e.size for e in md.list()}  # a folder's size: the total of its files as stored
    project = size["project/flock/plan.md"] + size["project/flock/deep/more.md"]
    assert listing.splitlines() == [
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:",
        f"{sdk_size(sum(size.values()))}\t/memories",
        f"{sdk_size(len(md.index().encode()))}\t/memories/MEMORY.md",
        f"{sdk_size(project)}\t/memories/project/",
        f"{sdk_size(project)}\t/memories/project/flock/",
        f"{sdk_size(size['user/profile.md'])}\t/memories/user/",
        # The file as the model sees it: what was written, without memdir's created/updated lines.
        f"{len('---|description: who the user is|type: user|---|Works at a bakery.|')}B\t/memories/user/profile.md",
    ]
    sub = run(tool, command="view", path="/memories/project/")
    assert sub.splitlines()[1:] == [  # the path as given, as the SDK does
        f"{sdk_size(project)}\t/memories/project/",
        f"{sdk_size(project)}\t/memories/project//flock/",
        f"{sdk_size(size['project/flock/deep/more.md'])}\t/memories/project//flock/deep/",
        "2K\t/memories/project//flock/plan.md",  # 2048 bytes, as the SDK shows them
    ]
    assert run(tool, command="view", path="/memories/MEMORY.md").splitlines()[1] == "     1\t# Memory Index"


def test_a_file_changed_by_hand_into_bytes_is_listed_and_refused_when_viewed(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    md.write("bin.md", "text for now\n")
    (root / "bin.md").write_bytes(b"\xff\xfe junk")
    listing = run(tool, command="view", path="/memories")  # still answers; an unreadable file shows its catalogued size
    assert listing.splitlines()[-1].endswith(("\t/memories/bin.md", "\t/memories/MEMORY.md"))
    assert error(tool, command="view", path="/memories/bin.md") == "bin.md is not UTF-8 text (byte 0); memdir stores text only"


def test_empty_memory_view(tool: MemdirMemoryTool) -> None:
    out = run(tool, command="view", path="/memories")
    assert out.endswith("excluding hidden items:\n0B\t/memories\n" + out.splitlines()[-1])
    assert out.splitlines()[-1].endswith("\t/memories/MEMORY.md")


def test_view_ranges_follow_the_sdk(tool: MemdirMemoryTool) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="one\ntwo\nthree")
    view = lambda r: run(tool, command="view", path="/memories/a.md", view_range=r)  # noqa: E731
    assert view([2, 3]) == HEAD.format("/memories/a.md") + numbered(["two", "three"], 2)
    assert view([0, 1]) == HEAD.format("/memories/a.md") + numbered(["one"])
    assert view([3, 1]) == HEAD.format("/memories/a.md")  # an empty range shows no line
    assert view([2, 99]) == HEAD.format("/memories/a.md") + numbered(["two", "three"], 2)
    assert view([2]) == run(tool, command="view", path="/memories/a.md")  # not a pair: the whole file


def test_view_errors(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    md.write("a.md", "one\ntwo\n")
    assert error(tool, command="view", path="/memories/nope.md") == (
        "The path /memories/nope.md does not exist. Please provide a valid path."
    )
    assert error(tool, command="view", path="/memories/nothing-here") == (
        "The path /memories/nothing-here does not exist. Please provide a valid path."
    )
    assert error(tool, command="view", path="/etc/passwd") == "Path must start with /memories, got: /etc/passwd"
    assert error(tool, command="view", path="/memoriesX/a.md") == "Path must start with /memories, got: /memoriesX/a.md"
    assert error(tool, command="view", path="/memories/../secret.md") == "Path /memories/../secret.md would escape /memories directory"
    assert run(tool, command="view", path="/memories/x/../a.md").startswith(HEAD.format("/memories/x/../a.md"))
    assert "hidden component" in error(tool, command="view", path="/memories/.memdir/memdir.db")
    assert error(tool, command="view", path="/memories/a.md", view_range=[1, "x"]) == (
        "`view_range` must be two integers [start, end], got [1, 'x']"
    )


def test_long_hand_written_files_are_paged(tool: MemdirMemoryTool, root: Path) -> None:
    with memdir.open(root, read_max_lines=5) as md:
        (root / "long.md").write_text("".join(f"line {i}\n" for i in range(1, 13)))
        md.reconcile(fix=True)
        small = MemdirMemoryTool(md)
        out = small.call({"command": "view", "path": "/memories/long.md"}).splitlines()
        assert out[1:6] == [f"{n:>6}\tline {n}" for n in range(1, 6)]
        assert out[6] == "(showing lines 1-5 of 13; view with view_range [6, 10] for more)"
        page = small.call({"command": "view", "path": "/memories/long.md", "view_range": [11, -1]}).splitlines()
        assert page[1:] == ["    11\tline 11", "    12\tline 12", "    13\t"]
    with memdir.open(root, read_max_bytes=20) as md:  # "line N\n" is 7 bytes: two lines fit
        out = MemdirMemoryTool(md).call({"command": "view", "path": "/memories/long.md"}).splitlines()
        assert out[1:] == ["     1\tline 1", "     2\tline 2", "(showing lines 1-2 of 13; view with view_range [3, 13] for more)"]


# ---------------------------------------------------------------- create


def test_create_errors_and_nothing_changes(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="first\n")
    md.write("dir/b.md", "b\n")
    before = md.read("a.md").version
    assert error(tool, command="create", path="/memories/a.md", file_text="second\n") == "File /memories/a.md already exists"
    assert error(tool, command="create", path="/memories/dir", file_text="x") == "File /memories/dir already exists"
    assert error(tool, command="create", path="/memories", file_text="x") == "File /memories already exists"
    assert md.read("a.md").version == before
    assert error(tool, command="create", path="/memories/progress.xml", file_text="<x/>") == (
        "/memories/progress.xml is not a markdown file; memories are .md files, so use /memories/progress.md instead"
    )
    assert error(tool, command="create", path="/memories/todo", file_text="x") == (
        "/memories/todo is not a markdown file; memories are .md files, so use /memories/todo.md instead"
    )
    assert error(tool, command="create", path="/memories/MEMORY.md", file_text="hi").startswith(
        "path 'MEMORY.md' is a generated index"
    )
    assert "looks like an AWS access key id" in error(tool, command="create", path="/memories/k.md", file_text="AKIAABCDEFGHIJKLMNOP")
    assert "the limit is 200" in error(tool, command="create", path="/memories/big.md", file_text="x\n" * 300)
    assert "never closed" in error(tool, command="create", path="/memories/rule.md", file_text="---\nnot frontmatter\n")
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["MEMORY.md", "a.md", "dir"]


# ---------------------------------------------------------------- str_replace


def test_str_replace_shows_the_lines_around_the_change(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\n")
    out = run(tool, command="str_replace", path="/memories/a.md", old_str="delta", new_str="DELTA")
    assert out == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        + numbered(["beta", "gamma", "DELTA", "epsilon", "zeta"], 2)
    )
    assert md.read("a.md").body == "alpha\nbeta\ngamma\nDELTA\nepsilon\nzeta\n"


def test_str_replace_errors(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="x = 1\ny = 2\nx = 1\n")
    version = md.read("a.md").version
    assert error(tool, command="str_replace", path="/memories/a.md", old_str="x = 1", new_str="x = 3") == (
        "No replacement was performed. Multiple occurrences of old_str `x = 1` in lines: 1, 3. Please ensure it is unique"
    )
    assert error(tool, command="str_replace", path="/memories/a.md", old_str="z", new_str="w") == (
        "No replacement was performed, old_str `z` did not appear verbatim in /memories/a.md."
    )
    assert error(tool, command="str_replace", path="/memories/b.md", old_str="z", new_str="w") == (
        "The path /memories/b.md does not exist. Please provide a valid path."
    )
    md.write("dir/c.md", "c\n")
    assert error(tool, command="str_replace", path="/memories/dir", old_str="c", new_str="d") == (
        "The path /memories/dir is not a file."
    )
    assert "looks like a Slack token" in error(
        tool, command="str_replace", path="/memories/a.md", old_str="y = 2", new_str="xoxb-1234567890-abcdef"
    )
    assert md.read("a.md").version == version


def test_memdir_lines_cannot_be_edited_because_they_are_not_shown(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="body\n")
    assert error(tool, command="str_replace", path="/memories/a.md", old_str="created:", new_str="x") == (
        "No replacement was performed, old_str `created:` did not appear verbatim in /memories/a.md."
    )


def test_no_edit_turns_frontmatter_into_body_text(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="---\ndescription: kept\n---\nbody\n")
    version = md.read("a.md").version
    assert error(tool, command="str_replace", path="/memories/a.md", old_str="---\ndesc", new_str="desc") == (
        "This edit would turn the frontmatter of /memories/a.md (lines 1-3) into body text; "
        "keep its '---' lines at the top, or remove the whole block"
    )
    run(tool, command="str_replace", path="/memories/a.md", old_str="---\ndescription: kept\n---\n", new_str="")
    assert md.read("a.md").version != version and md.read("a.md").description == "body"


# ---------------------------------------------------------------- insert


def test_insert(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="one\nthree")
    assert run(tool, command="insert", path="/memories/a.md", insert_line=1, insert_text="two\n") == (
        "The file /memories/a.md has been edited."
    )
    run(tool, command="insert", path="/memories/a.md", insert_line=3, insert_text="four\nfive")
    run(tool, command="insert", path="/memories/a.md", insert_line=0, insert_text="zero")
    assert md.read("a.md").body == "zero\none\ntwo\nthree\nfour\nfive\n"
    assert error(tool, command="insert", path="/memories/a.md", insert_line=7, insert_text="x") == (
        "Invalid `insert_line` parameter: 7. It should be within the range [0, 6]."
    )
    assert error(tool, command="insert", path="/memories/zz.md", insert_line=0, insert_text="x") == (
        "The path /memories/zz.md does not exist. Please provide a valid path."
    )


def test_insert_at_the_top_of_a_file_with_frontmatter_names_the_line_to_use(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    run(tool, command="create", path="/memories/a.md", file_text="---\ndescription: the plan\n---\nbody\n")
    assert error(tool, command="insert", path="/memories/a.md", insert_line=0, insert_text="Top fact") == (
        "Lines 1-3 of /memories/a.md are its frontmatter, and text inserted at line 0 "
        "would turn them into body text; insert at line 3 to put it right below them"
    )
    run(tool, command="insert", path="/memories/a.md", insert_line=3, insert_text="Top fact")
    run(tool, command="insert", path="/memories/a.md", insert_line=1, insert_text="tags: [plan]")
    got = md.read("a.md")
    assert (got.body, got.description, got.tags) == ("Top fact\nbody\n", "the plan", ("plan",))
    assert run(tool, command="view", path="/memories/a.md") == HEAD.format("/memories/a.md") + numbered(
        ["---", "tags: [plan]", "description: the plan", "---", "Top fact", "body", ""]
    )


def test_insert_into_an_empty_file(tool: MemdirMemoryTool, md: memdir.Memdir, root: Path) -> None:
    (root / "empty.md").write_text("")
    md.reconcile(fix=True)
    run(tool, command="insert", path="/memories/empty.md", insert_line=0, insert_text="first fact")
    assert md.read("empty.md").body == "first fact\n"


# ---------------------------------------------------------------- delete and rename


def test_delete_file_and_directory(tool: MemdirMemoryTool, md: memdir.Memdir) -> None:
    md.write("a.md", "a\n")
    md.write("old/x.md", "x\n")
    md.write("old/deep/y.md", "y\n")
    assert run(tool, command="delete", path="/memories/a.md") == "Successfully deleted /memories/a.md"
    assert run(tool, command="delete", path="/memories/old/") == "Successfully deleted /memories/old/"
    assert md.list() == []
    assert error(tool, command="delete", path="/memories/a.md") == "The path /memories/a.md does not exist"
    assert error(tool, command="delete", path="/memories/old") == "The path /memories/old does not exist"
    assert error(tool, command="delete", path="/memories") == "Cannot delete the /memories directory itself"
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
        "The destination /memories/sub/c.md already exists"
    )
    assert error(tool, command="rename", old_path="/memories/archive", new_path="/memories/sub") == (
        "The destination /memories/sub already exists"
    )
    assert error(tool, command="rename", old_path="/memories/nope.md", new_path="/memories/n.md") == (
        "The path /memories/nope.md does not exist"
    )
    assert error(tool, command="rename", old_path="/memories/archive", new_path="/memories/archive/inner") == (
        "cannot move /memories/archive into itself; choose a destination outside it"
    )
    assert error(tool, command="rename", old_path="/memories", new_path="/memories/x") == (
        "Cannot rename the /memories directory itself"
    )
    assert error(tool, command="rename", old_path="/memories/b.md", new_path="/memories/b.txt").startswith(
        "/memories/b.txt is not a markdown file"
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


# ---------------------------------------------------------------- input and async


def test_malformed_input_is_a_tool_error(tool: MemdirMemoryTool) -> None:
    assert error(tool, command="explode", path="/memories") == (
        "unknown command 'explode'; use one of view, create, str_replace, insert, delete, rename"
    )
    assert error(tool, command="create", path="/memories/a.md") == "`create` needs `file_text` as a string, got None"
    assert error(tool, command="insert", path="/memories/a.md", insert_line="1", insert_text="x") == (
        "`insert` needs `insert_line` as an integer, got '1'"
    )
    with pytest.raises(ToolError):
        tool.call(["view"])


def test_async_tool(md: memdir.Memdir) -> None:
    import asyncio

    from memdir.faces.anthropic import AsyncMemdirMemoryTool

    tool = AsyncMemdirMemoryTool(md)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}

    async def go() -> str:
        await tool.call({"command": "create", "path": "/memories/a.md", "file_text": "hello\n"})
        return await tool.call({"command": "view", "path": "/memories/a.md", "view_range": [1, 1]})

    assert asyncio.run(go()) == HEAD.format("/memories/a.md") + "     1\thello"
    assert md.read("a.md").body == "hello\n"


def test_import_memdir_does_not_load_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, memdir, memdir.faces.cli; print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
