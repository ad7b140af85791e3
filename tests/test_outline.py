"""The catalog's outline: a process that never loads the catalog writes the indexes a loaded one would."""

import random
import sqlite3
import time
from pathlib import Path

import pytest

import memdir
from memdir import index
from memdir import memdir as memdir_mod
from memdir.catalog import Catalog
from memdir.errors import InvalidPath
from memdir.outline import Outline
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
            loaded = md._state.catalog is not None
        if i % 20 == 19 or i == 119:
            with memdir.open(root, **SMALL) as md:
                cat = md._sync_catalog()
                assert _on_disk(root) == _expected(cat, md.limits), (i, loaded)
                outline = md._outline()
                assert outline is not None
                seq, _ = outline.catch_up(md.store)
                part = outline.catalog(seq, md.limits.index_max_lines + 2)
                for folder, node in cat.folders.items():
                    part.prepare(folder)
                    mine = part.folders[folder]
                    assert (mine.count, mine.bytes, +mine.types, +mine.direct_types, mine.direct_bytes, mine.files,
                            mine.subs, mine.newest) == (node.count, node.bytes, +node.types, +node.direct_types,
                                                        node.direct_bytes, node.files, node.subs, cat.newest(folder))
                    assert mine.ranked == node.ranked[: part.rows] and part.recent(mine) == node.recent[-part.rows:]


@pytest.mark.parametrize("seed", range(3))
def test_a_long_lived_process_without_the_catalog_patches_the_indexes_a_loaded_one_would_write(
        root: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One process (a server) writing again and again from the outline patches its last renderings;
    the files on disk stay those a full render from a loaded catalog gives, after every change, also
    when another process writes in between."""
    monkeypatch.setattr(memdir_mod, "LOAD_AT_MOST", -1)  # as with a memory too large to load on a second write
    rng = random.Random(seed)
    with memdir.open(root, **SMALL) as first:
        first.write("seed.md", "The first fact.\n")
    existing, kept = ["seed.md"], 0
    with memdir.open(root, **SMALL) as md:
        for i in range(150):
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
            assert md._state.catalog is None  # it works from the outline
            kept += bool(md._state.drawn)  # and keeps its renderings (none while the memory is empty)
            with memdir.open(root, **SMALL) as fresh:
                assert _on_disk(root) == _expected(fresh._sync_catalog(), fresh.limits), i
    assert kept > 100


def test_a_process_writing_again_loads_a_small_catalog_and_keeps_a_large_one_on_the_outline(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with memdir.open(root, **SMALL) as md:
        md.apply([memdir.Op.write(f"a/n{i}.md", f"fact {i}\n") for i in range(10)])
    monkeypatch.setattr(memdir_mod, "LOAD_AT_MOST", 10)
    with memdir.open(root, **SMALL) as md:
        md.write("a/n0.md", "once\n")  # a CLI command: the outline
        assert md._state.catalog is None
        md.write("a/n1.md", "twice\n")  # writing again, 10 files: worth loading
        assert md._state.catalog is not None
        md.write("b/new.md", "a third\n")
        assert _on_disk(root) == _expected(md._state.catalog, md.limits)
    monkeypatch.setattr(memdir_mod, "LOAD_AT_MOST", 10)  # now 11 files: more than that
    with memdir.open(root, **SMALL) as md:
        for i in range(3):
            md.write("a/n2.md", f"again {i}\n")
        assert md._state.catalog is None
        with memdir.open(root, **SMALL) as fresh:
            assert _on_disk(root) == _expected(fresh._sync_catalog(), fresh.limits)


def test_a_write_in_a_new_process_reads_only_the_folders_it_renders(root: Path) -> None:
    with memdir.open(root) as md:
        md.apply([memdir.Op.write(f"notes/n{i:04d}.md", f"fact {i}\n") for i in range(600)])
        stamp = memdir.model.now_stamp()
    while memdir.model.now_stamp() == stamp:  # stamps have seconds: let the change be the newest by time, not by name
        time.sleep(0.05)
    with memdir.open(root) as md:
        md.write("notes/n0001.md", "changed\n", description="the changed one")
        assert md._state.catalog is None  # the catalog was never loaded
        assert "the changed one" in (root / "notes" / INDEX_NAME).read_text().split("\n")[3]  # newest first
        assert md.index() == (root / INDEX_NAME).read_text()
    with memdir.open(root) as md:
        assert _on_disk(root) == _expected(md._sync_catalog(), md.limits)


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
        assert md._state.catalog is None


@pytest.mark.parametrize("damage", ["garbage", "another memory", "behind"])
def test_an_outline_that_does_not_match_the_store_is_rebuilt(root: Path, tmp_path: Path, damage: str) -> None:
    with memdir.open(root) as md:
        for i in range(30):
            md.write(f"a/n{i}.md", f"fact {i}\n")
    outline = root / ".memdir" / "outline.db"
    if damage == "garbage":
        for suffix in ("-wal", "-shm"):
            Path(f"{outline}{suffix}").unlink(missing_ok=True)
        outline.write_bytes(b"not a database" * 100)
    elif damage == "another memory":  # an outline of a different history, at the same seq or beyond
        other = tmp_path / "other"
        with memdir.open(other) as md:
            for i in range(40):
                md.write(f"z/n{i}.md", f"other {i}\n")
        with memdir.open(root) as md:  # writes the outline through
            md.write("a/n0.md", "again\n")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{outline}{suffix}").unlink(missing_ok=True)
        (other / ".memdir" / "outline.db").rename(outline)
        for suffix in ("-wal", "-shm"):
            Path(f"{other / '.memdir' / 'outline.db'}{suffix}").unlink(missing_ok=True)
    else:  # a process with the catalog loaded died before bringing the outline along
        with memdir.open(root) as md:
            md._sync_catalog()
            for i in range(10):
                md.write(f"b/n{i}.md", f"more {i}\n")
            md._state.outline = None  # as if killed: close does not catch it up
            md._state.outline_tried = True
    with memdir.open(root) as md:
        md.write("a/new.md", "new\n")
        assert md._state.catalog is None
    with memdir.open(root) as md:
        assert _on_disk(root) == _expected(md._sync_catalog(), md.limits)
        assert "z/" not in (root / INDEX_NAME).read_text()
    db = sqlite3.connect(outline)
    assert db.execute("SELECT count(*) FROM entry WHERE path LIKE 'z/%'").fetchone()[0] == 0
    db.close()


def test_an_outline_is_kept_when_its_last_path_was_written_again_since(root: Path) -> None:
    """The check finds the outline's last record among its path's older ones (a writer that never brought
    the outline along wrote that path again), so the outline is trusted, not emptied and rebuilt."""
    with memdir.open(root) as md:
        for i in range(30):
            md.write(f"a/n{i}.md", f"fact {i}\n")
    with memdir.open(root) as md:  # the outline's mark is a/n29; this process writes it again and dies
        md._sync_catalog()
        md.write("a/n29.md", "again\n")
        md._state.outline, md._state.outline_tried = None, True
    outline = Outline.open(root / ".memdir" / "outline.db", index.label)
    with memdir.open(root) as md:
        assert md.store.journal("a/n29.md", limit=1)[0].seq > outline.seq()
        before = outline.seq()
        outline._check(md.store)
        assert outline.seq() == before > 0
        assert outline.size() == 30
    outline.close()


def test_a_partial_catalog_is_read_only(tmp_path: Path) -> None:
    outline = Outline.open(tmp_path / "o.db", index.label)
    assert outline is not None
    part = outline.catalog(0, 10)
    with pytest.raises(TypeError):
        part.put(memdir.model.Entry("a.md", "a", "", None, (), None, None, 1, 1, "v"))
    outline.close()


def test_an_outline_that_breaks_while_in_use_is_dropped_and_the_write_lands(root: Path, caplog: pytest.LogCaptureFixture) -> None:
    with memdir.open(root) as md:
        for i in range(30):
            md.write(f"a/n{i}.md", f"fact {i}\n")
    with memdir.open(root) as md:
        outline = md._outline()
        assert outline is not None
        outline.db.execute("DROP TABLE entry")  # any failure of the outline's queries past its opening
        md.write("a/new.md", "new\n", description="written all the same")
        assert md._state.catalog is not None  # checked and rendered from the whole catalog instead
        assert "catalog outline is unusable" in caplog.text
    assert not (root / ".memdir" / "outline.db").exists()  # the next process builds a new one
    with memdir.open(root) as md:
        md.write("a/newer.md", "newer\n")
        assert md._state.catalog is None
    with memdir.open(root) as md:
        assert _on_disk(root) == _expected(md._sync_catalog(), md.limits)
        assert "written all the same" in md.index("a/")


def test_the_outline_is_private(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "x\n")
    assert (root / ".memdir" / "outline.db").stat().st_mode & 0o777 == 0o600
