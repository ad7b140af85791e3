"""The page shows what a git sync left for a person, and settles a conflict with a button."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitmachines import bare, isolate
from serving import Browser, Running

import memdir
from memdir.remember import gitsync, merging


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(tmp_path / "home", monkeypatch.setenv)


def test_a_conflict_is_shown_with_its_difference_and_settled_on_the_page(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    a = memdir.open(tmp_path / "a", actor="cli:a")
    a.write("user/profile.md", "Likes tea.\n", type="user", description="the user")
    gitsync.init(a, str(remote))
    b = memdir.open(tmp_path / "b", actor="cli:b")
    gitsync.init(b, str(remote))
    a.write("user/profile.md", "Likes green tea, no sugar.\n")
    b.write("user/profile.md", "Likes coffee <black>.\n")
    gitsync.git_sync(a)
    gitsync.git_sync(b)
    [pair] = merging.conflicts(b)
    b.close()
    with Running(tmp_path / "b") as srv:
        browser = Browser(srv.url)
        status, _, html = browser.get("/ui/conflicts")
        assert status == 200 and pair.other in html and "Last sync:" in html
        assert "Likes green tea, no sugar." in html and "Likes coffee &lt;black&gt;." in html  # escaped
        status, url, html = browser.post("/ui/conflicts", {"other": pair.other, "keep": "theirs"})
        assert status == 200 and url.endswith("/ui/conflicts") and "No conflicts." in html
    with memdir.open(tmp_path / "b") as b:
        assert b.read("user/profile.md").body == "Likes green tea, no sugar.\n"
        assert merging.conflicts(b) == []
    a.close()


def test_a_memory_never_synced_says_how_to_start(tmp_path: Path) -> None:
    memdir.open(tmp_path / "m").close()
    with Running(tmp_path / "m") as srv:
        status, _, html = Browser(srv.url).get("/ui/conflicts")
        assert status == 200 and "memdir sync --init REMOTE" in html and "No conflicts." in html
