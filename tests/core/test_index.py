import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memdir
from memdir import NotFound, model
from memdir.core import index as index_mod
from memdir.core.catalog import Catalog
from memdir.core.index import parse

LINK = re.compile(r"\]\(<?([^)>]+)>?\)")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A controllable clock: each write is one minute after the last."""
    now = [0]

    def stamp() -> model.Stamp:
        now[0] += 1
        return model.Stamp(f"2026-03-{1 + now[0] // 1440:02d}T{now[0] // 60 % 24:02d}:{now[0] % 60:02d}:00Z")

    monkeypatch.setattr(model, "now_stamp", stamp)
    yield now


def test_sections_in_type_order_newest_first(md: memdir.Memdir, clock: list[int]) -> None:
    md.write("notes/loose.md", "# Loose note\n")
    md.write("r/old.md", "x\n", type="reference", description="old ref")
    md.write("p/plan.md", "x\n", type="project", description="the plan")
    md.write("s/today.md", "x\n", type="session", description="a session")
    md.write("d/day.md", "x\n", type="diary", description="a day")
    md.write("u/me.md", "x\n", type="user", name="me", description="who I am")
    md.write("f/one.md", "x\n", type="feedback", description="first rule")
    md.write("r/new.md", "x\n", type="reference", description="new ref")
    md.write("f/two.md", "x\n", type="feedback", description="second rule")
    assert md.index() == (
        "# Memory Index\n"
        "\n## Feedback\n"
        "- [two](f/two.md) — second rule\n"
        "- [one](f/one.md) — first rule\n"
        "\n## User\n"
        "- [me](u/me.md) — who I am\n"
        "\n## Project\n"
        "- [plan](p/plan.md) — the plan\n"
        "\n## Reference\n"
        "- [new](r/new.md) — new ref\n"
        "- [old](r/old.md) — old ref\n"
        "\n## Diary\n"
        "- [day](d/day.md) — a day\n"
        "\n## Session\n"
        "- [today](s/today.md) — a session\n"
        "\n## Other\n"
        "- [loose](notes/loose.md) — Loose note\n"
    )


def test_type_defaults_to_a_top_folder_named_for_a_type(md: memdir.Memdir) -> None:
    md.write("feedback/x.md", "# Be brief\n")
    assert "## Feedback\n- [x](feedback/x.md) — Be brief\n" in md.index()


def test_index_on_disk_is_rewritten_on_every_change(md: memdir.Memdir, root: Path) -> None:
    assert (root / "MEMORY.md").exists() is False or "No memories" in (root / "MEMORY.md").read_text()
    md.write("a.md", "x\n", description="alpha")
    assert (root / "MEMORY.md").read_text() == md.index()
    md.write("a.md", "x\n", description="beta")
    assert "beta" in (root / "MEMORY.md").read_text()
    md.delete("a.md")
    assert (root / "MEMORY.md").read_text() == "# Memory Index\n\nNo memories yet.\n"


def test_odd_names_are_escaped_so_links_still_parse(md: memdir.Memdir) -> None:
    md.write("my notes (draft).md", "x\n", name="a [bracketed] name", description="d")
    line = md.index().splitlines()[-1]
    assert line == "- [a \\[bracketed\\] name](<my notes (draft).md>) — d"
    found, skipped = parse(md.index())
    assert [(f.path, f.title) for f in found] == [("my notes (draft).md", "a [bracketed] name")]
    assert skipped == []


def _fill(md: memdir.Memdir, layout: dict[str, int], kind: str = "project") -> None:
    for folder, n in layout.items():
        for i in range(n):
            md.write(f"{folder}{i:03d}.md", "x\n", type=kind, description=f"{folder} item {i}")


def test_largest_folders_collapse_first_into_linked_folder_indexes(root: Path, clock: list[int]) -> None:
    with memdir.open(root, index_max_lines=20) as md:
        _fill(md, {"big/": 12, "mid/": 6, "small/": 2, "": 1})
        top = md.index()
        assert len(top.splitlines()) <= 20
        assert "## Folders\n- [big/](big/MEMORY.md) — 12 memories (project 12), newest 2026-03-01\n" in top
        assert "small/001.md" in top and "mid/000.md" in top and "big/000.md" not in top
        assert top.rstrip().splitlines()[-2] == "## Folders"  # the last section
        folder_index = (root / "big" / "MEMORY.md").read_text()
        assert folder_index == md.index("big")
        assert folder_index.startswith("# Memory Index: big/\n")
        assert "- [011](011.md) — big/ item 11" in folder_index  # links relative to the folder
        assert not (root / "mid" / "MEMORY.md").exists()  # not collapsed, not written
        assert md.index("mid").startswith("# Memory Index: mid/\n")  # but available


def test_folder_index_disappears_when_the_folder_fits_again(root: Path) -> None:
    with memdir.open(root, index_max_lines=12) as md:
        _fill(md, {"big/": 10, "other/": 1})
        assert (root / "big" / "MEMORY.md").exists()
        for i in range(5):
            md.delete(f"big/{i:03d}.md")
        assert not (root / "big" / "MEMORY.md").exists()
        assert "big/009.md" in md.index()


def test_one_huge_folder_lists_the_newest_and_says_how_many_more(root: Path, clock: list[int]) -> None:
    with memdir.open(root, index_max_lines=15) as md:
        _fill(md, {"": 30})
        top = md.index()
        lines = top.splitlines()
        assert len(lines) <= 15
        assert lines[3] == "- [029](029.md) — item 29"  # newest first
        assert lines[-1] == "… and 20 older files in the root not shown here; list them with list_memory_files() or `memdir ls`"


def test_byte_cap_holds_as_well_as_line_cap(root: Path) -> None:
    with memdir.open(root, index_max_bytes=2_000) as md:
        for i in range(40):
            md.write(f"f{i % 4}/n{i}.md", "x\n", description="y" * 100)
        assert len(md.index().encode()) <= 2_000
        for f in range(4):
            if f"f{f}/MEMORY.md" in md.index():
                assert len(md.index(f"f{f}").encode()) <= 2_000


def test_index_of_missing_folder(md: memdir.Memdir) -> None:
    with pytest.raises(NotFound, match="no memories under nope/"):
        md.index("nope")


def test_incremental_indexes_equal_a_full_rebuild(root: Path) -> None:
    rng = random.Random(7)
    folders = ["", "a/", "a/b/", "a/b/c/", "d/", "e/f/"]
    with memdir.open(root, index_max_lines=14, index_max_bytes=900) as md:
        for step in range(300):
            path = f"{rng.choice(folders)}n{rng.randrange(25)}.md"
            action = rng.random()
            exists = (root / path).exists()
            if action < 0.65 or not exists:
                md.write(path, f"step {step}\n", type=rng.choice(["project", "user", None]) or "")
            elif action < 0.85:
                md.delete(path)
            else:
                target = f"{rng.choice(folders)}m{rng.randrange(25)}.md"
                if not (root / target).exists():
                    md.rename(path, target)
        on_disk = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("MEMORY.md")}
    with memdir.open(root, index_max_lines=14, index_max_bytes=900) as fresh:
        assert fresh.reconcile().clean
        for name, text in on_disk.items():
            assert fresh.index(name[: -len("MEMORY.md")]) == text
            assert len(text.splitlines()) <= 14 and len(text.encode()) <= 900


def _reachable(root: Path) -> tuple[set[str], int]:
    """Follow links from MEMORY.md as an agent would: (topic files seen, max index depth)."""
    seen: set[str] = set()
    depth = 0
    queue = [("", 1)]
    while queue:
        folder, d = queue.pop()
        depth = max(depth, d)
        text = (root / folder / "MEMORY.md").read_text()
        for target in LINK.findall(text):
            if target.endswith("MEMORY.md"):
                queue.append((folder + target[: -len("MEMORY.md")], d + 1))
            else:
                seen.add(folder + target)
    return seen, depth


def _spread(root: Path, n: int) -> list[str]:
    """n hand-written topic files over two levels of folders (at most 100 per folder)."""
    made = []
    for i in range(n):
        kind = ("project", "reference", "user", "feedback")[i % 4]
        path = f"{kind}/g{i // 400:02d}/s{i // 100 % 4}/n{i:05d}.md"
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(f"---\ndescription: fact number {i} about {kind}\ntype: {kind}\n---\nbody {i}\n")
        made.append(path)
    return made


@pytest.mark.slow
def test_ten_thousand_files_stay_within_caps_and_reachable(root: Path) -> None:
    root.mkdir()
    made = _spread(root, 10_000)
    with memdir.open(root) as md:  # a new memory over existing files: reconcile catalogs them
        md.reconcile(fix=True)
        top = md.index()
        assert len(top.splitlines()) <= 200 and len(top.encode()) <= 25 * 1024
        assert (root / "MEMORY.md").read_text() == top
        seen, depth = _reachable(root)
        assert seen == set(made)
        assert depth <= 4
        for index_file in root.rglob("MEMORY.md"):
            text = index_file.read_text()
            assert len(text.splitlines()) <= 200 and len(text.encode()) <= 25 * 1024
        # A write at this size updates only the indexes on its path.
        md.write("project/g00/s0/n00000.md", "changed\n", description="changed fact")
        assert any("changed fact" in p.read_text() for p in root.rglob("MEMORY.md"))
        assert md.reconcile().clean


@pytest.mark.slow
def test_ten_thousand_files_in_one_folder(root: Path) -> None:
    root.mkdir()
    for i in range(10_000):
        (root / f"n{i:05d}.md").write_text(f"fact {i}\n")
    with memdir.open(root) as md:
        md.reconcile(fix=True)
        lines = md.index().splitlines()
        assert len(lines) <= 200
        shown = sum(1 for line in lines if line.startswith("- ["))
        assert lines[-1] == (f"… and {10_000 - shown:,} older files in the root not shown here; "
                             "list them with list_memory_files() or `memdir ls`")
        assert len(md.list()) == 10_000


def _reference_render(cat: Catalog, folder: str, max_lines: int, max_bytes: int) -> str:
    """The index rule spelled out the slow, obvious way: try every file and folder in turn."""
    def size(paths: list[str], links: list[str], more: str) -> tuple[int, int]:
        kinds = {cat.entries[p].type for p in paths}
        sections = [index_mod._section_title(k) for k in kinds] + (["Folders"] if links else [])
        lines = 1 + len(paths) + len(links) + 2 * len(sections) + (2 if more else 0)
        size = len(index_mod._title(folder).encode()) + 1 + sum(cat.line_bytes(p) for p in paths)
        size += sum(len(index_mod._folder_line(cat, s, folder).encode()) + 1 for s in links)
        size += sum(len(n.encode()) + 5 for n in sections) + (len(more.encode()) + 2 if more else 0)
        return lines, size

    def fits(paths: list[str], links: list[str], more: str = "") -> bool:
        lines, size_ = size(paths, links, more)
        return lines <= max_lines and size_ <= max_bytes

    everything = sorted(e.path for e in cat.walk(folder))
    direct = sorted((p for p in everything if "/" not in p[len(folder):]),
                    key=lambda p: (cat.entries[p].updated or "", p), reverse=True)
    subs = sorted((f for f in cat.folders if f.startswith(folder) and f != folder and "/" not in f[len(folder):-1]),
                  key=lambda f: (-cat.folders[f].count, f))
    links: list[str] = []
    shown = everything
    if not folder and index_mod.ARCHIVE in subs:  # the archive is always a link in the top index
        links.append(index_mod.ARCHIVE)
        shown = [p for p in shown if not p.startswith(index_mod.ARCHIVE)]
    for sub in subs:
        if fits(shown, links):
            break
        if sub not in links:
            links.append(sub)
            shown = [p for p in shown if not p.startswith(sub)]
    hidden_files = hidden_folders = 0
    if not fits(shown, links):
        reserve = index_mod._more_line(folder, 10**9, 10**9)
        links = []
        for sub in subs:
            if not fits([], links + [sub], reserve):
                break
            links.append(sub)
        shown = []
        if len(links) == len(subs):
            for path in direct:
                if not fits(shown + [path], links, reserve):
                    break
                shown.append(path)
        hidden_files, hidden_folders = len(direct) - len(shown), len(subs) - len(links)
    out = [index_mod._title(folder)]
    groups: dict[str | None, list[str]] = {}
    for path in shown:
        groups.setdefault(cat.entries[path].type, []).append(path)
    for kind in sorted(groups, key=index_mod._section_order):
        out += ["", f"## {index_mod._section_title(kind)}"]
        items = sorted(sorted(groups[kind]), key=lambda p: cat.entries[p].updated or "", reverse=True)
        out += [index_mod._line(cat, p, folder) for p in items]
    if links:
        out += ["", "## Folders"] + [index_mod._folder_line(cat, s, folder) for s in sorted(links)]
    if hidden_files or hidden_folders:
        out += ["", index_mod._more_line(folder, hidden_files, hidden_folders)]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("seed", range(6))
def test_render_follows_the_rule_at_every_size_and_shape(seed: int) -> None:
    rng = random.Random(seed)
    cat = Catalog()
    folders = ["", "a/", "a/b/", "c/", "c/d/e/", "archive/", "archive/x/"] + [f"w{i}/" for i in range(rng.randrange(1, 40))]
    for step in range(rng.randrange(50, 400)):
        path = f"{rng.choice(folders)}n{rng.randrange(60)}.md"
        if rng.random() < 0.15:
            cat.remove(path)
            continue
        kind = rng.choice(["project", "user", "feedback", None])
        cat.put(model.Entry(path, f"note {step}", "x" * rng.randrange(0, 80), kind, (), None,
                            f"2026-01-{1 + rng.randrange(28):02d}", 10, 1, "v"))
    for max_lines, max_bytes in ((12, 700), (40, 2500), (200, 25 * 1024)):
        for folder in sorted(cat.folders):
            text, links = index_mod.render(cat, folder, max_lines, max_bytes)
            assert text == _reference_render(cat, folder, max_lines, max_bytes), (folder, max_lines)
            assert len(text.splitlines()) <= max_lines or "older" in text or "smaller" in text


def test_descriptions_keep_their_brackets_unless_they_would_make_a_link(md: memdir.Memdir) -> None:
    md.append("log.md", "met Alice about the launch")
    md.write("docs.md", "x\n", description="see [the docs](https://example.com) and [x][y]")
    lines = {line.split("](", 1)[0]: line for line in md.index().splitlines() if line.startswith("- [")}
    assert re.fullmatch(r"- \[log\]\(log\.md\) — \[\d{4}-\d\d-\d\d \d\d:\d\d\] met Alice about the launch", lines["- [log"])
    assert lines["- [docs"] == r"- [docs](docs.md) — see [the docs\](https://example.com) and [x\][y]"
    found, skipped = parse(md.index())
    assert [f.path for f in found] == ["docs.md", "log.md"] or [f.path for f in found] == ["log.md", "docs.md"]
    assert skipped == []


def test_a_list_of_newest_files_never_skips_files_it_did_not_show() -> None:
    """A folder showing its newest files: old files that change but stay old must not jump the
    files between them and the ones shown, however many of those go later."""
    cat = Catalog()
    for name, day in (("a", 6), ("b", 5), ("c", 4), ("d", 3), ("e", 2), ("g", 1), ("h", 0)):
        cat.put(model.Entry(f"{name}.md", name, "", "project", (), None, f"2026-01-0{day}", 10, 1, "v"))
    for name in ("x", "y"):  # the oldest: never shown
        cat.put(model.Entry(f"{name}.md", name, "", "project", (), None, "2025-12-01", 10, 1, "v"))
    caps = (8, 25 * 1024)  # room for three files
    for change in (["a.md", "g.md"], ["b.md", "h.md"], ["c.md"]):
        for path in change:
            old = cat.entries[path]
            if path in ("g.md", "h.md"):
                cat.put(model.Entry(path, f"{path[0]} changed", "", "project", (), None, old.updated, 10, 1, "v"))
            else:
                cat.remove(path)
        text, _ = index_mod.render(cat, "", *caps)
        assert text == _reference_render(cat, "", *caps)
    assert [line[3] for line in text.splitlines() if line.startswith("- [")] == ["d", "e", "g"]


_INDEX_LINES = st.sampled_from([
    "- [sub/](sub/MEMORY.md) — 3 files (project)",
    "- [a b/](<a b/MEMORY.md>) — 1 file",
    "- [x](notes/x.md) — a file",
    "- [odd \\[name\\]](odd/MEMORY.md)",
    "## Folders with MEMORY.md",
    "# MEMORY.md",
    "<!-- MEMORY.md is generated -->",
    "| deep/MEMORY.md | project | the deep folder |",
    "prose that mentions MEMORY.md",
    "",
    "- [weird](sub/MEMORY.md.md)",
    "- [r](sub/MEMORY.md) trailing\r",
])


@given(st.lists(st.one_of(_INDEX_LINES, st.text(max_size=30)), max_size=30), st.sampled_from(["", "f/"]))
def test_links_read_only_the_lines_that_name_an_index_yet_find_what_a_full_parse_finds(lines: list[str], folder: str) -> None:
    text = "\n".join(lines)
    found, _ = parse(text)
    whole = sorted(folder + line.path[: -len("MEMORY.md")] for line in found if line.path.endswith("/MEMORY.md"))
    assert index_mod.links(text, folder) == whole


@pytest.mark.parametrize("seed", range(6))
def test_an_unlisted_folder_is_in_no_index_at_any_size(seed: int) -> None:
    """Capture's skipped attempts (sessions/skipped/) never reach an index, however the rest collapses."""
    rng = random.Random(seed)
    cat = Catalog()
    folders = ["", "sessions/", "sessions/skipped/", "project/", "archive/"] + [f"w{i}/" for i in range(rng.randrange(1, 20))]
    for step in range(rng.randrange(50, 300)):
        folder = rng.choice(folders)
        kind = "session" if folder.startswith("sessions/") else rng.choice(["project", "feedback", None])
        cat.put(model.Entry(f"{folder}n{rng.randrange(60)}.md", f"note {step}", "x" * rng.randrange(0, 80), kind, (),
                            None, f"2026-01-{1 + rng.randrange(28):02d}", 10, 1, "v"))
    for max_lines, max_bytes in ((12, 700), (40, 2500), (200, 25 * 1024)):
        for folder in sorted(cat.folders):
            if folder == "sessions/skipped/":
                continue
            text, links = index_mod.render(cat, folder, max_lines, max_bytes)
            assert "skipped/" not in text and "sessions/skipped/" not in links, (folder, max_lines)
            assert len(text.splitlines()) <= max_lines or "older" in text or "smaller" in text
