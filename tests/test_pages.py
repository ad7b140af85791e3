"""Paging (src/memdir/pages.py): one answer never carries a whole huge file or listing."""

from __future__ import annotations

from memdir import pages, paths


def test_a_text_page_stops_at_the_line_and_byte_caps() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 501))
    first = pages.lines(text, max_lines=200, max_bytes=10_000)
    assert (first.offset, first.end, first.total, first.next) == (1, 200, 500, 201)
    assert first.lines[0] == "line 1" and first.lines[-1] == "line 200"
    small = pages.lines(text, 10, 3, max_lines=200, max_bytes=10_000)
    assert small.lines == ["line 10", "line 11", "line 12"] and small.next == 13
    by_bytes = pages.lines(text, max_lines=200, max_bytes=20)  # "line N\n" is 7 bytes
    assert by_bytes.lines == ["line 1", "line 2"] and by_bytes.next == 3
    last = pages.lines(text, 500, max_lines=200, max_bytes=10_000)
    assert (last.lines, last.next) == (["line 500"], None)


def test_one_huge_line_is_cut_and_marked() -> None:
    text = "x" * 10_000_000 + "\nshort\n"
    page = pages.lines(text, max_lines=200, max_bytes=25_600)
    assert len(page.text.encode()) <= 25_600
    assert page.cut == (1,) and page.lines[0].endswith(f"…[line 1 cut: {10_000_000 - 25_600 + 48:,} more bytes]")
    assert page.lines[1:] == ["short"] and not page.whole


def test_a_cut_never_splits_a_character() -> None:
    page = pages.lines("é" * 100, max_lines=10, max_bytes=101)  # 200 bytes: the cut falls inside a character
    kept = page.lines[0].split(" …")[0]
    assert set(kept) == {"é"} and len(kept.encode()) <= 101


def test_a_small_text_is_whole() -> None:
    assert pages.lines("a\nb\n", max_lines=200, max_bytes=100).whole
    assert paths.lines("a\u2028b\x0cc\n") == ["a\u2028b\x0cc"]  # only '\n' ends a line


def test_a_listing_page_fits_the_count_and_the_bytes() -> None:
    names = [f"file-{i:05}.md" for i in range(10_000)]
    page = pages.items(names, max_items=200, max_bytes=25_600, size=lambda n: len(n) + 1)
    assert (page.offset, page.end, page.total, page.next) == (1, 200, 10_000, 201)
    tight = pages.items(names, 9_999, max_items=200, max_bytes=30, size=lambda n: len(n) + 1)
    assert tight.items == ["file-09998.md", "file-09999.md"] and tight.next is None
    huge = pages.items(["x" * 1000, "y"], max_items=10, max_bytes=10, size=len)
    assert huge.items == ["x" * 1000] and huge.next == 2  # the first item always comes, so paging moves on


# ---------------------------------------------------------------- every face pages through the same core


import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from serving import Running, call  # noqa: E402

import memdir  # noqa: E402
from memdir.faces import tools  # noqa: E402
from memdir.faces.anthropic import MemdirMemoryTool  # noqa: E402
from memdir.faces.cli import main  # noqa: E402

HUGE = 2_000_000  # a hand-placed one-line file: 2 MB


@pytest.fixture
def big(root: Path) -> Path:
    """A memory with a 2 MB one-line file and 600 files whose listing is far over 25 KB."""
    (root / "many").mkdir(parents=True)
    (root / "huge.md").write_text("z" * HUGE + "\n")
    for i in range(600):
        (root / "many" / f"note-{i:04}.md").write_text(f"---\ndescription: {'word ' * 30}{i}\n---\nbody {i}\n")
    with memdir.open(root) as md:
        md.reconcile(fix=True)
    return root


def test_tools_cap_a_huge_line_and_page_a_long_listing(big: Path) -> None:
    with memdir.open(big) as md:
        read = tools.handle(md, "read_memory_file", {"path": "huge.md"})
        assert not read.is_error and len(read.text.encode()) < md.limits.read_max_bytes + 200
        assert "…[line 1 cut: " in read.text
        first = tools.handle(md, "list_memory_files", {"folder": "many/"})
        assert len(first.text.encode()) <= md.limits.read_max_bytes + 100
        assert first.data is not None and first.data["total"] == 600 and first.data["files"][0]["path"] == "many/note-0000.md"
        step = first.data["next_offset"]
        assert first.text.endswith(f"[files 1-{step - 1} of 600; list on with offset={step}]")
        seen = [f["path"] for f in first.data["files"]]
        while step is not None:  # following next_offset lists every file exactly once
            page = tools.handle(md, "list_memory_files", {"folder": "many/", "offset": step})
            assert page.data is not None and not page.is_error
            seen += [f["path"] for f in page.data["files"]]
            step = page.data["next_offset"]
        assert seen == [f"many/note-{i:04}.md" for i in range(600)]
        past = tools.handle(md, "list_memory_files", {"folder": "many/", "offset": 601})
        assert past.is_error and "offset 601 is past the end (600 files under many/)" in past.text


def test_the_index_overflow_line_points_at_a_paged_listing(root: Path) -> None:
    with memdir.open(root, index_max_lines=20) as md:
        for i in range(40):
            md.write(f"log/n{i:02}.md", f"note {i}", description=f"note {i}")
        index = md.index("log/")
        assert 'list them with list_memory_files(folder="log/")' in index
        page = tools.handle(md, "list_memory_files", {"folder": "log/"})
        assert page.data is not None and page.data["total"] == 40


def test_http_pages_files_and_listings(big: Path) -> None:
    with Running(big) as s:
        got = call("GET", f"{s.url}/v1/files/huge.md")
        assert got.status == 200 and len(got.body) < 40_000 and got.json["cut"] == [1] and got.json["next_offset"] is None
        raw = call("GET", f"{s.url}/v1/files/huge.md", headers={"Accept": "text/markdown"})
        assert len(raw.body) < 40_000 and raw.headers["x-memdir-lines"] == "1-1/1"
        small = call("GET", f"{s.url}/v1/files/many/note-0001.md")
        assert small.json["text"].endswith("body 1\n") and "cut" not in small.json  # a file memdir could write: whole
        paged = call("GET", f"{s.url}/v1/files/many/note-0001.md?offset=2&limit=1")
        assert paged.json["text"].startswith("description: ") and paged.json["next_offset"] == 3
        listing = call("GET", f"{s.url}/v1/files?folder=many/&limit=250")
        assert [f["path"] for f in listing.json["files"]][-1] == "many/note-0249.md"
        assert (listing.json["total"], listing.json["next_offset"]) == (600, 251)
        rest = call("GET", f"{s.url}/v1/files?folder=many/&offset=251")
        assert len(rest.json["files"]) == 350 and rest.json["next_offset"] is None
        assert call("GET", f"{s.url}/v1/files?limit=100000").status == 400


@pytest.mark.anyio
async def test_the_mcp_resource_is_capped(big: Path) -> None:
    from mcp import Client

    from memdir.faces import mcp
    from memdir.faces.auth import Memories, Principal, Principals

    memories = Memories(big, transport="mcp")
    try:
        async with Client(mcp.server(Principals(Principal("default")), memories)) as client:  # type: ignore[arg-type]
            text = (await client.read_resource("memdir://file/huge.md")).contents[0].text  # type: ignore[union-attr]
            assert len(text.encode()) < 26_000 and "…[line 1 cut: " in text
            whole = (await client.read_resource("memdir://file/many/note-0003.md")).contents[0].text  # type: ignore[union-attr]
            assert whole == (big / "many/note-0003.md").read_text()
    finally:
        memories.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_memory_tool_caps_views_and_listings(big: Path) -> None:
    with memdir.open(big) as md:
        tool = MemdirMemoryTool(md)
        view = tool.call({"command": "view", "path": "/memories/huge.md"})
        assert len(view.encode()) < md.limits.read_max_bytes + 300 and "…[line 1 cut: " in view
        listing = tool.call({"command": "view", "path": "/memories/many"})
        assert len(listing.encode()) < md.limits.read_max_bytes + 300
        assert "more; view a subdirectory to list it" in listing


def test_memdir_ls_pages(big: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(main, ["--root", str(big), "ls", "many/", "--limit", "100"])
    assert first.exit_code == 0 and len(first.stdout.splitlines()) == 100
    assert first.stderr == "… 500 more of 600; list on with `memdir ls many/ --offset 101` (or --limit 0 for all)\n"
    rest = runner.invoke(main, ["--root", str(big), "ls", "many/", "--offset", "101", "--limit", "0", "--json"])
    assert [e["path"] for e in json.loads(rest.stdout)][0] == "many/note-0100.md" and rest.stderr == ""
