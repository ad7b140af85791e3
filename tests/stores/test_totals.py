"""The folder store's totals: a process that never loads the catalog writes the indexes a loaded one would."""

import json
import random
import sqlite3
import time
from pathlib import Path

import pytest

import memdir
from memdir.core import index
from memdir.core.catalog import Catalog, Partial
from memdir.errors import InvalidPath
from memdir.paths import INDEX_NAME

SMALL = {"index_max_lines": 12, "index_max_bytes": 900}  # caps small enough that folders collapse and overflow
FOLDERS = ["", "a/", "a/b/", "c/", "c/d/e/", "archive/", "archive/x/"] + [f"w{i}/" for i in range(14)]


def _expected(cat: Catalog, limits: memdir.Limits) -> dict[str, str]:
    """Every index file a full render from the loaded catalog writes: the root and the folders it links, and so on."""
    out, stack = {}, [""]
    while stack:
        folder = stack.pop()
        text, links = index.render(cat, folder, limits.index_max_lines, limits.index_max_bytes)
        out[folder + INDEX_NAME] = text
        stack.extend(links)
    return out


def _on_disk(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob(INDEX_NAME) if ".memdir" not in p.parts}


def _step(md: memdir.Memdir, rng: random.Random, i: int) -> None:
    existing = [e.path for e in md.list()] if rng.random() < 0.3 else []  # most steps never load the catalog
    kind = rng.choice(["project", "user", "feedback", "reference", ""])
    if existing and rng.random() < 0.5:
        path = rng.choice(existing)
        if rng.random() < 0.5:
            md.delete(path)
        else:
            dest = f"{rng.choice(FOLDERS)}m{i}.md"
            md.rename(path, dest)
        return
    path = f"{rng.choice(FOLDERS)}n{rng.randrange(40)}.md"
    md.write(path, f"Fact {i}.\n", description="d" * rng.randrange(0, 90), type=kind)


@pytest.mark.parametrize("seed", range(3))
def test_a_process_without_the_catalog_writes_the_indexes_a_loaded_one_would(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(120):
        with memdir.open(root, **SMALL) as md:  # a new process each time: a CLI command, a hook
            _step(md, rng, i)
            loaded = md._state.derived.catalog is not None
        if i % 20 == 19 or i == 119:
            with memdir.open(root, **SMALL) as md:
                cat = md._state.derived.loaded()
                assert _on_disk(root) == _expected(cat, md.limits), (i, loaded)
                part = Partial(md.store.totals, cat.seq, md.limits.index_max_lines + 2)
                for folder, node in cat.folders.items():
                    part.prepare(folder)
                    mine = part.folders[folder]
                    assert (mine.count, mine.bytes, +mine.types, +mine.direct_types, mine.direct_bytes, mine.files,
                            mine.subs, mine.newest) == (node.count, node.bytes, +node.types, +node.direct_types,
                                                        node.direct_bytes, node.files, node.subs, cat.newest(folder))
                    assert mine.ranked == node.ranked[: part.rows] and part.recent(mine) == node.recent[-part.rows:]


@pytest.mark.parametrize("seed", range(2))
def test_a_long_lived_process_writes_the_indexes_a_render_from_scratch_would(root: Path, seed: int) -> None:
    """One process (a server) writing again and again: its first write renders from the totals, the next
    from the catalog it loads then; the files on disk stay those a full render from a loaded catalog gives,
    after every change, also when another process writes in between."""
    rng = random.Random(seed)
    with memdir.open(root, **SMALL) as first:
        first.write("seed.md", "The first fact.\n")
    existing = ["seed.md"]
    with memdir.open(root, **SMALL) as md:
        for i in range(120):
            if existing and rng.random() < 0.3:
                path = existing.pop(rng.randrange(len(existing)))
                if rng.random() < 0.5:
                    md.delete(path)
                else:
                    dest = f"{rng.choice(FOLDERS)}m{i}.md"
                    md.rename(path, dest)
                    existing.append(dest)
            else:
                path = f"{rng.choice(FOLDERS)}n{rng.randrange(40)}.md"
                md.write(path, f"Fact {i}.\n", description="d" * rng.randrange(0, 90),
                         type=rng.choice(["project", "user", "feedback", "reference", ""]))
                if path not in existing:
                    existing.append(path)
            if i % 7 == 3:  # another process writes in between: this one learns the index files again
                with memdir.open(root, **SMALL) as other:
                    other.write(f"{rng.choice(FOLDERS)}o{i}.md", "From elsewhere.\n", type="user")
            assert (md._state.derived.catalog is None) == (i == 0)  # the first write works from the totals
            with memdir.open(root, **SMALL) as fresh:
                assert _on_disk(root) == _expected(fresh._state.derived.loaded(), fresh.limits), i


def test_a_write_in_a_new_process_reads_only_the_folders_it_renders(root: Path) -> None:
    with memdir.open(root) as md:
        md.apply([memdir.Op.write(f"notes/n{i:04d}.md", f"fact {i}\n") for i in range(600)])
        stamp = memdir.model.now_stamp()
    while memdir.model.now_stamp() == stamp:  # stamps have seconds: let the change be the newest by time, not by name
        time.sleep(0.05)
    with memdir.open(root) as md:
        md.write("notes/n0001.md", "changed\n", description="the changed one")
        assert md._state.derived.catalog is None  # the catalog was never loaded
        assert "the changed one" in (root / "notes" / INDEX_NAME).read_text().split("\n")[3]  # newest first
        assert md.index() == (root / INDEX_NAME).read_text()
    with memdir.open(root) as md:
        assert _on_disk(root) == _expected(md._state.derived.loaded(), md.limits)


def test_a_case_clash_is_refused_without_the_catalog(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("Notes/Plan.md", "x\n")
        md.write("d.md/x.md", "x\n")
    with memdir.open(root) as md:
        with pytest.raises(InvalidPath, match="'Notes/Plan.md' already exists and differs only by case"):
            md.write("Notes/plan.md", "y\n")
        with pytest.raises(InvalidPath, match="path 'notes/other.md': 'Notes' already exists and differs only by case"):
            md.write("notes/other.md", "y\n")
        with pytest.raises(InvalidPath, match="puts a file under 'Notes/Plan.md'"):
            md.write("Notes/Plan.md/x.md", "y\n")
        with pytest.raises(InvalidPath, match="is a folder"):
            md.write("d.md", "y\n")
        assert md._state.derived.catalog is None


def test_a_folder_of_an_older_memdir_gets_its_totals_on_open(root: Path) -> None:
    """A folder written before the totals existed (schema 2, an outline file beside it) is brought up to
    date in one transaction on open: the next write renders from the totals what a loaded catalog would."""
    with memdir.open(root, **SMALL) as md:
        for i in range(40):
            md.write(f"{FOLDERS[i % len(FOLDERS)]}n{i}.md", f"fact {i}\n", description="d" * (i * 3 % 80))
    db = sqlite3.connect(root / ".memdir" / "memdir.db")
    db.execute("DROP TABLE folder")
    for column in ("folder", "key", "recent", "bytes", "type"):
        db.execute(f"DROP INDEX IF EXISTS catalog_{column}")
    db.execute("CREATE TABLE old(path TEXT PRIMARY KEY, entry TEXT, seq INTEGER NOT NULL)")  # version 2's table
    db.execute("INSERT INTO old SELECT path, entry, seq FROM catalog")
    db.execute("DROP TABLE catalog")
    db.execute("ALTER TABLE old RENAME TO catalog")
    db.execute("CREATE INDEX catalog_seq ON catalog(seq)")
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    (root / ".memdir" / "outline.db").write_bytes(b"an outline of an older memdir")
    with memdir.open(root, **SMALL) as md:
        md.write("a/new.md", "new\n", description="after the upgrade")
        assert md._state.derived.catalog is None
    assert not (root / ".memdir" / "outline.db").exists()
    with memdir.open(root, **SMALL) as md:
        assert _on_disk(root) == _expected(md._state.derived.loaded(), md.limits)
        assert "after the upgrade" in md.index("a/")


def test_totals_move_in_the_commit_itself(root: Path) -> None:
    """The totals and the catalog row are written in the journal's transaction: a change refused by the
    store moves nothing, and the root's totals always count what the catalog holds."""
    with memdir.open(root) as md:
        md.apply([memdir.Op.write(f"a/n{i}.md", f"fact {i}\n", expect=None) for i in range(5)])
        with pytest.raises(memdir.Conflict):
            md.apply([memdir.Op.write("b/x.md", "x\n"), memdir.Op.write("a/n0.md", "y\n", expect=None)])
        top = md.store.totals.folder("")
        assert top is not None and (top.count, top.subs) == (5, 1)
        assert md.store.totals.folder("b/") is None
        rows = sqlite3.connect(root / ".memdir" / "memdir.db").execute(
            "SELECT entry FROM catalog WHERE folder = 'a/'").fetchall()
        assert sorted(json.loads(r[0])["path"] for r in rows) == [f"a/n{i}.md" for i in range(5)]


def test_a_partial_catalog_is_read_only(root: Path) -> None:
    with memdir.open(root) as md:
        part = Partial(md.store.totals, 0, 10)
        with pytest.raises(TypeError):
            part.put(memdir.model.Entry("a.md", "a", "", None, (), None, None, 1, 1, "v"))
