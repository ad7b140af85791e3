"""Every backend behaves the same: one suite, run on the folder, SQLite, PostgreSQL and S3 stores.

Each test gets its own memory (`memory`, opened on `backend`); `backend.open(tenant)`
opens another tenant at the same location.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime

import pytest
from conftest import Backend

import memdir
from memdir import Conflict, InvalidArgument, InvalidPath, LimitExceeded, NotFound, model
from memdir.recall import links
from memdir.stores.base import Change

# ---------------------------------------------------------------- write and read


def test_write_then_read_round_trips_metadata_and_body(memory: memdir.Memdir) -> None:
    written = memory.write("feedback/no-dark-themes.md", "Never propose dark themes.\n",
                           name="no dark themes", description="NEVER use dark themes", type="feedback", tags=["ui"])
    assert written.change == "created"
    got = memory.read("feedback/no-dark-themes.md")
    assert (got.name, got.description, got.type, got.tags) == ("no dark themes", "NEVER use dark themes", "feedback", ("ui",))
    assert got.body == "Never propose dark themes.\n"
    assert got.version == written.version
    assert got.created == got.updated and got.created.endswith("Z")
    assert got.text.startswith("---\nname: no dark themes\ndescription: NEVER use dark themes\ntype: feedback\ntags: [ui]\n")


def test_unicode_paths_and_content(memory: memdir.Memdir) -> None:
    paths = ["café/naïve.md", "日本/東京 メモ.md", "emoji/🦆 duck.md", "a b/c d.md"]
    for i, path in enumerate(paths):
        memory.write(path, f"Grüße {i} — ✓ 漢字\n", description=f"ünïcode {i}")
    assert [e.path for e in memory.list()] == sorted(paths)
    assert memory.read("日本/東京 メモ.md").body == "Grüße 1 — ✓ 漢字\n"
    assert [h.path for h in memory.grep("漢字", prefix="日本")] == ["日本/東京 メモ.md"]
    assert "[🦆 duck](<emoji/🦆 duck.md>)" in memory.index() or "emoji/🦆 duck.md" in memory.index()
    assert [p for p, _ in memory.store.list("café/")] == ["café/naïve.md"]


def test_empty_and_large_files(backend: Backend) -> None:
    with backend.open(max_bytes=3_000_000, max_lines=100_000) as md:
        md.write("empty.md", "")
        assert md.read("empty.md").body == ""
        big = "".join(f"line {i:06d} " + "x" * 40 + "\n" for i in range(40_000))  # about 2 MB
        v = md.write("big.md", big, description="big").version
        got = md.read("big.md")
        assert got.body == big and got.version == v
        assert md.store.get("big.md").data == got.text.encode()  # type: ignore[union-attr]
        assert md.history("big.md")[0].new == got.text.encode()


def test_identical_write_is_unchanged_and_keeps_version(memory: memdir.Memdir) -> None:
    a = memory.write("p.md", "same\n", description="d")
    b = memory.write("p.md", "same\n")
    assert b.change == "unchanged" and b.version == a.version
    assert len(memory.history("p.md")) == 1


def test_a_new_memory_is_clean_before_its_first_write(memory: memdir.Memdir) -> None:
    assert memory.reconcile().to_dict() == {"clean": True, "fixed": False, "findings": []}
    assert memory.index().startswith("# Memory Index")


def test_a_persons_frontmatter_survives_a_write_on_every_backend(memory: memdir.Memdir) -> None:
    hand = "---\n# by alice\nowner: alice\nlinks: {jira: X-1}\n---\nbody\n"
    first = memory.write("p.md", hand)
    memory.write("p.md", "new body\n", description="d")
    text = memory.read("p.md").text
    assert text.startswith("---\n# by alice\nowner: alice\nlinks: {jira: X-1}\ndescription: d\ncreated: " + str(first.created))
    assert text.endswith("---\nnew body\n")


def test_read_missing_file_says_so(memory: memdir.Memdir) -> None:
    with pytest.raises(NotFound, match="nope.md does not exist"):
        memory.read("nope.md")
    assert memory.store.get("nope.md") is None


def test_reopen_sees_everything(backend: Backend) -> None:
    with backend.open() as md:
        md.write("a/one.md", "one\n", description="first")
        md.write("b.md", "two\n")
        md.delete("b.md")
    with backend.open() as md:
        assert md.read("a/one.md").body == "one\n"
        assert "first" in md.index() and "b.md" not in md.index()
        assert [r.op for r in md.history()] == ["delete", "write", "write"]
        assert md.store.get("MEMORY.md").data == md.index().encode()  # type: ignore[union-attr]
        assert md.reconcile().clean


# ---------------------------------------------------------------- compare-and-swap


def test_expect_none_creates_only(memory: memdir.Memdir) -> None:
    memory.write("p.md", "one\n", expect=None)
    with pytest.raises(Conflict, match="already exists"):
        memory.write("p.md", "two\n", expect=None)
    assert memory.read("p.md").body == "one\n"


def test_expect_version_detects_a_concurrent_change(memory: memdir.Memdir) -> None:
    v1 = memory.write("p.md", "one\n").version
    v2 = memory.write("p.md", "two\n", expect=v1).version
    assert v2 != v1
    with pytest.raises(Conflict, match=f"version {v1} is now {v2}"):
        memory.write("p.md", "stale\n", expect=v1)
    with pytest.raises(Conflict):
        memory.delete("p.md", expect=v1)
    assert memory.read("p.md").body == "two\n"


def test_versions_never_repeat_even_for_identical_content(memory: memdir.Memdir) -> None:
    seen = {memory.write("p.md", f"{i % 2}\n").version for i in range(30)}
    assert len(seen) == 30


def test_two_handles_on_one_tenant_see_each_others_writes(backend: Backend) -> None:
    with backend.open() as a, backend.open() as b:
        v = a.write("p.md", "from a\n", description="written by a").version
        assert b.read("p.md").version == v
        assert "written by a" in b.index()
        b.write("p.md", "from b\n", expect=v, description="written by b")
        with pytest.raises(Conflict):
            a.write("p.md", "stale\n", expect=v)
        assert "written by b" in a.index()
        assert [e.description for e in a.list()] == ["written by b"]


# ---------------------------------------------------------------- atomicity


def test_a_refused_write_changes_nothing(memory: memdir.Memdir) -> None:
    memory.write("keep.md", "keep\n", description="kept")
    before = (memory.store.list(), memory.history(), memory.index(), memory.store.get("MEMORY.md"))
    with pytest.raises(LimitExceeded):
        memory.for_agent().write("big.md", "x\n" * 500)  # a model's write keeps to the size limits
    with pytest.raises(Conflict):
        memory.write("keep.md", "other\n", expect="0123456789abcdef")
    with pytest.raises(InvalidArgument):
        memory.rename("keep.md", "keep.md")
    assert (memory.store.list(), memory.history(), memory.index(), memory.store.get("MEMORY.md")) == before


def test_a_commit_applies_all_of_its_changes_or_none(memory: memdir.Memdir) -> None:
    memory.write("a.md", "a\n")
    store = memory.store
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    good = Change(op="write", path="new.md", data=b"new\n", expect=None, old=None, entry=None, actor="t", time=stamp)
    bad = Change(op="write", path="a.md", data=b"b\n", expect="0000000000000bad", old=b"a\n", entry=None,
                 actor="t", time=stamp)
    before = (store.list(), store.journal(), store.changes(0))
    with store.lock(), pytest.raises(Conflict):
        store.commit([good, bad])
    assert (store.list(), store.journal(), store.changes(0)) == before
    assert store.get("new.md") is None
    with store.lock():
        records = store.commit([good, Change(op="delete", path="a.md", data=None, expect=store.list()[0][1],
                                             old=b"a\n", entry=None, actor="t", time=stamp)])
    assert [(r.op, r.path) for r in records] == [("write", "new.md"), ("delete", "a.md")]
    assert [p for p, _ in store.list()] == ["new.md"]
    assert records[1].seq == records[0].seq + 1


# ---------------------------------------------------------------- delete, rename, list, grep


def test_delete_removes_the_file_and_its_index_line(memory: memdir.Memdir) -> None:
    memory.write("project/a.md", "a\n", description="alpha")
    gone = memory.delete("project/a.md")
    assert gone.change == "deleted" and gone.body == "a\n"
    assert "alpha" not in memory.index() and memory.list() == []
    assert memory.store.list() == []
    with pytest.raises(NotFound):
        memory.delete("project/a.md")


def test_rename_moves_content_and_refuses_to_overwrite(memory: memdir.Memdir) -> None:
    memory.write("a.md", "a\n", description="alpha")
    memory.write("b.md", "b\n")
    with pytest.raises(Conflict, match="b.md already exists"):
        memory.rename("a.md", "b.md")
    moved = memory.rename("a.md", "archive/a.md")
    assert moved.path == "archive/a.md" and moved.body == "a\n"
    assert [e.path for e in memory.list()] == ["archive/a.md", "b.md"]
    assert memory.read("archive/a.md").version == moved.version
    with pytest.raises(NotFound):
        memory.read("a.md")


def test_list_with_prefixes(memory: memdir.Memdir) -> None:
    for path in ["project/a.md", "project/sub/b.md", "projects.md", "project-x/c.md", "z.md"]:
        memory.write(path, "x\n")
    assert [e.path for e in memory.list("project")] == ["project/a.md", "project/sub/b.md"]
    assert [e.path for e in memory.list("project/sub/")] == ["project/sub/b.md"]
    assert [e.path for e in memory.list("project/a.md")] == ["project/a.md"]
    assert memory.list("nothing/") == []
    assert [p for p, _ in memory.store.list("project/")] == ["project/a.md", "project/sub/b.md"]
    assert [p for p, _ in memory.store.list()] == ["project-x/c.md", "project/a.md", "project/sub/b.md",
                                                    "projects.md", "z.md"]
    versions = dict(memory.store.list())
    assert versions["z.md"] == memory.read("z.md").version
    memory.write("project/a.md", "a\nb\n", type="project", description="alpha")
    entry = memory.list("project/a.md")[0]
    assert (entry.type, entry.description, entry.lines, entry.version) == (
        "project", "alpha", 8, memory.read("project/a.md").version)


def test_grep_finds_lines(memory: memdir.Memdir) -> None:
    memory.write("a.md", "Webhooks retry\nother\n")
    memory.write("sub/b.md", "no match\nwebhook signing\n")
    assert [(h.path, h.text) for h in memory.grep("webhook")] == [("a.md", "Webhooks retry"), ("sub/b.md", "webhook signing")]
    assert [h.path for h in memory.grep("webhook", ignore_case=False)] == ["sub/b.md"]
    assert [h.path for h in memory.grep("webhook", prefix="sub")] == ["sub/b.md"]


# ---------------------------------------------------------------- journal and undo


def test_history_records_every_change_with_previous_content(memory: memdir.Memdir) -> None:
    memory.write("p.md", "one\n")
    memory.write("p.md", "two\n")
    memory.rename("p.md", "q.md")
    memory.delete("q.md")
    ops = [(r.op, r.path, r.dest) for r in memory.history()]
    assert ops == [("delete", "q.md", None), ("rename", "p.md", "q.md"), ("write", "p.md", None), ("write", "p.md", None)]
    assert [r.seq for r in memory.history()] == [4, 3, 2, 1]
    second = memory.history("p.md")[1]
    assert b"one" in (second.old or b"") and b"two" in (second.new or b"")
    assert second.actor == memory.actor
    assert [r.op for r in memory.history("q.md")] == ["delete", "rename"]
    assert [r.seq for r in memory.history(limit=2)] == [4, 3]


def test_the_journal_filters_by_prefix_and_limits_in_the_query(memory: memdir.Memdir) -> None:
    for path in ("notes/a.md", "secret/plan.md", "notes0.md", "notesx/b.md", "notes/sub/c.md", "n.md"):
        memory.write(path, f"{path}\n")
    memory.rename("notes/a.md", "secret/a.md")  # the record's path is notes/a.md: it matches notes/
    memory.write("notes/a.md", "again\n")
    store = memory.store
    assert [(r.op, r.path) for r in store.journal(prefixes=["notes/"])] == [
        ("write", "notes/a.md"), ("rename", "notes/a.md"), ("write", "notes/sub/c.md"), ("write", "notes/a.md")]
    assert [r.path for r in store.journal(prefixes=["notes/"], limit=1)] == ["notes/a.md"]
    assert [r.path for r in store.journal(prefixes=["secret/", "n.md"], limit=5)] == ["n.md", "secret/plan.md"]
    assert store.journal(prefixes=[]) == []
    assert len(store.journal(prefixes=[""])) == len(store.journal()) == 8
    assert [r.op for r in store.journal("secret/a.md", prefixes=["notes/"])] == ["rename"]  # its dest, its path in scope
    assert store.journal("secret/a.md", prefixes=["secret/"]) == []


def test_scoped_history_hides_what_the_scope_cannot_read(memory: memdir.Memdir) -> None:
    memory.write("notes/a.md", "a\n")
    memory.write("secret/plan.md", "the plan\n")
    memory.rename("notes/a.md", "secret/moved.md")
    memory.rename("secret/plan.md", "notes/plan.md")
    notes = memory.scope(write=["notes/"])
    seen = notes.history()
    assert [(r.op, r.path, r.dest) for r in seen] == [("rename", "notes/a.md", None), ("write", "notes/a.md", None)]
    assert (seen[0].new, seen[0].old, seen[0].new_version) == (None, None, None)
    assert notes.history(limit=1) == seen[:1]
    assert notes.history("notes/plan.md") == []  # it came from a hidden path
    assert notes.history("secret/plan.md") == []
    everything = [r.to_dict(content=True) for r in notes.history()]
    assert "secret" not in repr(everything) and "the plan" not in repr(everything)


def test_a_scope_cannot_tell_by_undo_whether_a_hidden_path_has_history(memory: memdir.Memdir) -> None:
    memory.write("secret/plan.md", "the plan\n")
    notes = memory.scope(read=["notes/"], write=["notes/"])
    refusals = []
    for path in ("secret/plan.md", "secret/never.md"):
        with pytest.raises(memdir.Forbidden) as e:
            notes.undo(path)
        refusals.append(e.value.message.replace(path, "PATH"))
    assert refusals[0] == refusals[1]
    assert memory.read("secret/plan.md").body == "the plan\n"


def test_undo_restores_previous_content_with_a_new_version(memory: memdir.Memdir) -> None:
    v1 = memory.write("p.md", "one\n").version
    v2 = memory.write("p.md", "two\n").version
    restored = memory.undo("p.md")
    assert restored.body == "one\n" and restored.change == "restored"
    assert restored.version not in (v1, v2)
    with pytest.raises(Conflict):  # a stale compare-and-swap still fails
        memory.write("p.md", "stale\n", expect=v1)
    assert memory.undo("p.md").body == "two\n"  # undoing the undo redoes


def test_undo_after_delete_after_create_and_of_a_rename(memory: memdir.Memdir) -> None:
    memory.write("p.md", "keep me\n", description="kept")
    memory.delete("p.md")
    assert memory.undo("p.md").body == "keep me\n"
    assert "kept" in memory.index()
    memory.write("new.md", "fresh\n")
    assert memory.undo("new.md").change == "deleted"
    with pytest.raises(NotFound):
        memory.read("new.md")
    memory.write("a.md", "a\n")
    memory.rename("a.md", "b.md")
    assert memory.undo("b.md").path == "a.md"
    assert [e.path for e in memory.list()] == ["a.md", "p.md"]
    with pytest.raises(NotFound, match="no journaled change"):
        memory.undo("never.md")


# ---------------------------------------------------------------- index


def test_index_lists_by_type_and_is_stored_as_memory_md(memory: memdir.Memdir) -> None:
    memory.write("feedback/x.md", "x\n", type="feedback", description="no dark themes")
    memory.write("project/flock.md", "y\n", type="project", description="route planner")
    assert memory.index() == (
        "# Memory Index\n\n## Feedback\n- [x](feedback/x.md) — no dark themes\n\n"
        "## Project\n- [flock](project/flock.md) — route planner\n"
    )
    assert memory.store.get("MEMORY.md").data == memory.index().encode()  # type: ignore[union-attr]
    assert memory.store.derived() == memory.history()[0].seq


def test_index_collapses_big_folders_into_their_own_index(backend: Backend) -> None:
    with backend.open(index_max_lines=12) as md:
        for i in range(15):
            md.write(f"big/n{i:02d}.md", f"fact {i}\n", description=f"fact {i}")
        md.write("small.md", "s\n", description="small one")
        top = md.index()
        assert "big/MEMORY.md" in top and "small one" in top and "fact 3" not in top
        sub = md.index("big")
        assert "fact 14" in sub
        assert md.store.get("big/MEMORY.md").data == sub.encode()  # type: ignore[union-attr]
        assert "big/MEMORY.md" not in [p for p, _ in md.store.list()]
        for i in range(12):
            md.delete(f"big/n{i:02d}.md")
        assert "fact 13" in md.index() and "big/MEMORY.md" not in md.index()
        assert md.store.get("big/MEMORY.md") is None
    with backend.open(index_max_lines=12) as md:
        assert md.reconcile().clean


# ---------------------------------------------------------------- tenancy


def test_tenants_cannot_see_each_other(backend: Backend) -> None:
    with backend.open("acme") as a, backend.open("globex") as b:
        a.write("secret/plan.md", "acme's launch plan: webhook v2\n", description="acme secret", type="project")
        assert b.list() == [] and b.store.list() == []
        with pytest.raises(NotFound):
            b.read("secret/plan.md")
        assert b.store.get("secret/plan.md") is None
        assert b.grep("webhook") == []
        assert "acme" not in b.index()
        assert b.history() == [] and b.history("secret/plan.md") == []
        with pytest.raises(NotFound):
            b.undo("secret/plan.md")
        vb = b.write("secret/plan.md", "globex's own\n").version
        assert a.read("secret/plan.md").body == "acme's launch plan: webhook v2\n"
        assert b.read("secret/plan.md").version == vb
        assert [r.actor for r in a.history()] == [a.actor]
        b.delete("secret/plan.md")
        assert a.read("secret/plan.md").body.startswith("acme")
        assert "acme secret" in a.index()


def test_tenant_ids_are_checked(backend: Backend) -> None:
    for bad in ["", "Acme", "../x", "a/b", "x" * 64, "-x", "a b"]:
        with pytest.raises(InvalidArgument, match="is not valid"):
            memdir.open(backend.location, tenant=bad)


# ---------------------------------------------------------------- recover

CRASH = {
    # backend: (what the child patches to die mid-commit, what survives)
    "fs": ("from memdir.stores.fs import FileStore as S; S._apply = crash", "new"),
    "sqlite": ("from memdir.stores.sql import SqlStore as S; S._catalog = crash", "old"),
    "postgres": ("from memdir.stores.sql import SqlStore as S; S._catalog = crash", "old"),
    "s3": ("from memdir.stores.s3 import S3Store as S; S._put_file = crash; S.lease_seconds = 1", "new"),
}


def test_a_writer_killed_mid_commit_leaves_old_or_new_and_a_clean_memory(backend: Backend) -> None:
    with backend.open() as md:
        md.write("p.md", "old\n", description="old one")
    patch, survivor = CRASH[backend.name]
    code = textwrap.dedent(f"""
        import os, sys, memdir
        def crash(*a, **k):
            os._exit(9)
        {patch}
        memdir.open(sys.argv[1], tenant=sys.argv[2] or None).write("p.md", "new\\n", description="new one")
    """)
    proc = subprocess.run([sys.executable, "-c", code, backend.location, backend.tenant() or ""],
                          capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    if backend.name == "s3":
        time.sleep(1.2)  # the dead writer's lease expires
    with backend.open() as md:
        assert md.read("p.md").body == f"{survivor}\n"
        assert f"{survivor} one" in md.index()
        assert len(md.history("p.md")) == (2 if survivor == "new" else 1)
        if survivor == "new":
            assert md.recovered and "p.md" in md.recovered[0]
        assert md.reconcile().clean
        md.write("p.md", "after\n", expect=md.read("p.md").version)
        assert md.read("p.md").body == "after\n"


# ---------------------------------------------------------------- edit, append, search, scopes


def test_edit_append_and_search_on_every_backend(memory: memdir.Memdir) -> None:
    memory.write("project/flock.md", "Launch date: 2026-12-15.\nStack: FastAPI.\n", type="project",
                 description="flock route planner")
    memory.write("reference/stripe.md", "Webhooks are signed.\n", type="reference")
    edited = memory.edit("project/flock.md", "2026-12-15", "2027-01-10")
    assert "Launch date: 2027-01-10." in memory.read("project/flock.md").body
    appended = memory.append("project/flock.md", "beta users: 40")
    assert appended.version != edited.version
    assert memory.read("project/flock.md").body.rstrip().endswith("beta users: 40")
    assert [h.path for h in memory.search("when is the flock launch?")][:1] == ["project/flock.md"]
    assert [h.path for h in memory.search("signed webhooks")] == ["reference/stripe.md"]
    memory.delete("reference/stripe.md")
    assert memory.search("signed webhooks") == []
    assert [r.op for r in memory.history("project/flock.md")] == ["write", "write", "write"]  # edit, append, write
    assert memory.undo("project/flock.md").body.startswith("Launch date: 2027-01-10.")


def test_search_index_persists_and_grep_reads_no_file(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.open() as md:
        md.write("project/flock.md", "Launch date: 2026-12-15.\nStack: FastAPI.\n", type="project")
        md.write("notes/a.md", "Lunch with the flock team.\n", description="team notes")
        md.rename("notes/a.md", "notes/b.md")
        expected = md.search("flock launch")
        assert [h.path for h in expected] == ["project/flock.md", "notes/b.md"]
    with backend.open() as md:  # a new process: the index is trusted, no file is read
        monkeypatch.setattr(md.store, "get", lambda path: pytest.fail(f"read {path}"))
        assert md.search("flock launch") == expected
        assert [(h.path, h.text) for h in md.grep("launch|lunch")] == [
            ("notes/b.md", "Lunch with the flock team."), ("project/flock.md", "Launch date: 2026-12-15.")]
        assert [h.path for h in md.search("fastapi", types=["project"], since="2020-01-01")] == ["project/flock.md"]
        assert md.search("fastapi", types=["feedback"]) == []
        monkeypatch.undo()
        assert md.reindex() == 2
        assert md.search("flock launch") == expected


def test_a_new_process_searches_without_loading_the_catalog(backend: Backend) -> None:
    with backend.open() as md:
        md.write("project/flock.md", "Launch date: 2026-12-15.\n", type="project")
        with backend.open() as fresh:  # a CLI command or a hook: the index is trusted when its seq is the store's
            assert [h.path for h in fresh.search("launch")] == ["project/flock.md"]
            md.write("notes/kite.md", "A kite for Bob.\n")
            md.delete("project/flock.md")
            assert [h.path for h in fresh.search("kite")] == ["notes/kite.md"]
            assert fresh.search("launch") == []
            assert fresh._state.derived.catalog is None
            assert [h.path for h in fresh.grep("kite")] == ["notes/kite.md"]
            assert fresh.count() == 1  # the catalog, loaded when something needs it, agrees


def test_grep_literals_with_like_wildcards_are_matched_as_written_on_every_backend(memory: memdir.Memdir) -> None:
    memory.write("odd.md", "Progress: 100%_DONE in C:\\Temp\\x.\nProgress: 100 percent done.\n")
    assert [h.text for h in memory.grep("100%_done in c:\\temp\\x", fixed=True)] == ["Progress: 100%_DONE in C:\\Temp\\x."]
    assert [h.path for h in memory.grep("100%_done", fixed=True)] == ["odd.md"]
    assert memory.grep("100x_done", fixed=True) == []  # % and _ are literal characters, not wildcards
    assert memory.grep("100%_DONE", fixed=True, ignore_case=False)[0].path == "odd.md"


def test_search_never_sees_nor_counts_another_tenant(backend: Backend) -> None:
    with backend.open("alpha") as a, backend.open("beta") as b:
        b.write("zoo.md", "A zebra and a lion.\n")
        for i in range(5):
            b.write(f"other-{i}.md", f"Plain note {i}.\n")
        alone = b.search("zebra")[0].score
        for i in range(20):
            a.write(f"z-{i}.md", "zebra zebra\n")
        assert [h.path for h in b.search("zebra")] == ["zoo.md"]
        assert b.search("zebra")[0].score == alone  # ranking statistics are the tenant's own
        assert [h.path for h in b.grep("zebra")] == ["zoo.md"]
        assert len(a.search("zebra", k=50)) == 20


def test_scopes_see_and_write_only_their_prefixes_on_every_backend(memory: memdir.Memdir) -> None:
    memory.write("household/groceries.md", "Oat milk.\n", description="shopping rules")
    memory.write("people/alice/health.md", "Allergic to penicillin.\n", description="alice's health")
    memory.write("people/bob/gifts.md", "A bike for alice.\n", description="bob's gift ideas")
    alice = memory.scope(read=["household/"], write=["people/alice/"])
    assert [e.path for e in alice.list()] == ["household/groceries.md", "people/alice/health.md"]
    assert [h.path for h in alice.grep("alice")] == ["people/alice/health.md"]
    assert "bob" not in alice.index() and "bob's gift ideas" in memory.index()
    assert [h.path for h in alice.search("bike")] == []
    with pytest.raises(NotFound):
        alice.read("people/bob/gifts.md")
    with pytest.raises(memdir.Forbidden):
        alice.write("people/bob/gifts.md", "stolen\n")
    assert memory.read("people/bob/gifts.md").body == "A bike for alice.\n"
    alice.write("people/alice/notes.md", "mine\n")
    assert all(r.path.startswith(("household/", "people/alice/")) for r in alice.history())


# ---------------------------------------------------------------- paths that cannot exist side by side


@pytest.mark.parametrize("second", ["people/bob/x.md/y.md", "people/bob/x.md/deeper/y.md"])
def test_a_file_is_never_used_as_a_folder(memory: memdir.Memdir, second: str) -> None:
    memory.write("people/bob/x.md", "bob\n", description="bob")
    before = (memory.store.list(), memory.history(), memory.index())
    with pytest.raises(InvalidPath, match="'people/bob/x.md', which is a file, not a folder") as err:
        memory.write(second, "y\n")
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidPath, match="which is a file"):
        memory.rename("people/bob/x.md", "people/bob/x.md/moved.md")
    assert (memory.store.list(), memory.history(), memory.index()) == before


def test_a_folder_is_never_replaced_by_a_file(memory: memdir.Memdir) -> None:
    memory.write("notes.md/inner.md", "inner\n")
    with pytest.raises(InvalidPath, match="is a folder"):
        memory.write("notes.md", "outer\n")
    memory.write("a.md", "a\n")
    memory.rename("a.md", "b.md")
    memory.write("a.md/c.md", "c\n")  # a.md is free now, so it may become a folder
    with pytest.raises(InvalidPath, match="is a folder"):
        memory.undo("b.md")  # moving b.md back to a.md would replace that folder
    assert memory.read("b.md").body == "a\n" and memory.read("a.md/c.md").body == "c\n"


def test_names_that_differ_only_by_case_are_refused(memory: memdir.Memdir) -> None:
    memory.write("notes/todo.md", "t\n")
    for clash in ["notes/TODO.md", "Notes/other.md", "NOTES/x/y.md"]:
        with pytest.raises(InvalidPath, match="differs only by case"):
            memory.write(clash, "x\n")
    with pytest.raises(InvalidPath, match="differs only by case"):
        memory.rename("notes/todo.md", "Notes/todo.md")
    memory.write("notes/todo.md", "updated\n")  # the exact name is fine
    assert [e.path for e in memory.list()] == ["notes/todo.md"]


@pytest.mark.parametrize("path", ["MEMORY.md/x.md", "notes/MEMORY.md/x.md", "memory.md/x.md", "notes/Memory.MD",
                                  "tenants/acme/x.md", "Tenants/x.md"])
def test_reserved_names_are_refused_on_every_backend(memory: memdir.Memdir, path: str) -> None:
    with pytest.raises(InvalidPath):
        memory.write(path, "x\n")
    assert memory.store.list() == [] and memory.history() == []


# ---------------------------------------------------------------- failures after the commit point


def test_a_failure_after_the_commit_reports_success_and_repairs_the_index(
    memory: memdir.Memdir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the change is committed, a failing MEMORY.md write (disk full) must not turn it into an error."""
    memory.write("a.md", "one\n", description="first")
    store = memory.store
    real = store.derive

    def broken(files: object, seq: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "derive", broken)
    written = memory.write("a.md", "two\n", description="second")
    assert written.change == "updated"
    assert memory.read("a.md").body == "two\n" and memory.read("a.md").version == written.version
    assert "second" in memory.index()  # the index text is computed from the catalog, not read back
    assert b"second" not in store.get("MEMORY.md").data  # type: ignore[union-attr]
    monkeypatch.setattr(store, "derive", real)
    memory.write("b.md", "three\n", description="third")  # the next write rebuilds the stale index
    stored = store.get("MEMORY.md").data.decode()  # type: ignore[union-attr]
    assert "second" in stored and "third" in stored and stored == memory.index()
    assert [e.path for e in memory.list()] == ["a.md", "b.md"]
    assert memory.search("three")[0].path == "b.md"
    assert memory.reconcile().clean


def test_a_stale_index_is_rebuilt_by_the_next_open(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.open() as md:
        md.write("a.md", "one\n", description="first")

        def broken(files: object, seq: int) -> None:
            raise memdir.StoreError("disk full")

        monkeypatch.setattr(md.store, "derive", broken)
        md.write("b.md", "two\n", description="second")
        assert md.store.derived() < md.history()[0].seq
    with backend.open() as md:
        assert [e.path for e in md.list()] == ["a.md", "b.md"]  # the first look at the catalog repairs the index
        assert "second" in md.store.get("MEMORY.md").data.decode()  # type: ignore[union-attr]
        assert md.reconcile().clean


# ---------------------------------------------------------------- the rate limit lives in the store


def test_the_rate_bucket_is_shared_by_every_handle_on_a_tenant(backend: Backend) -> None:
    with backend.open(writes_per_minute=2) as a, backend.open(writes_per_minute=2) as b, \
            backend.open("other", writes_per_minute=2) as other:
        a.write("a.md", "1\n")
        b.write("b.md", "2\n")
        with pytest.raises(memdir.RateLimited, match="more than 2 writes per minute") as err:
            a.write("c.md", "3\n")
        assert 0 < err.value.retry_after <= 30
        with pytest.raises(memdir.RateLimited):
            b.write("c.md", "3\n")
        other.write("c.md", "another tenant has its own bucket\n")
        assert [e.path for e in a.list()] == ["a.md", "b.md"]


def test_take_refills_with_time(memory: memdir.Memdir) -> None:
    store = memory.store
    start, taken = time.monotonic(), 0
    while (wait := store.take(60)) == 0.0:  # a burst of 60, then one a second
        taken += 1
        assert taken < 200
    elapsed = time.monotonic() - start
    assert 60 <= taken <= 60 + elapsed + 1 and 0 < wait <= 1.0
    time.sleep(wait + 0.05)
    assert store.take(60) == 0.0


def test_symlink_free_stores_resolve_paths_to_themselves(memory: memdir.Memdir) -> None:
    memory.write("a/b.md", "x\n")
    assert memory.store.resolve("a/b.md") == "a/b.md" and memory.store.problems() == []


# ---------------------------------------------------------------- batches and time


def test_apply_commits_a_batch_at_once_or_not_at_all(memory: memdir.Memdir) -> None:
    from memdir import Op

    memory.write("sessions/a.md", "alpha\n", description="a")
    memory.write("sessions/b.md", "beta\n", description="b")
    a, b = memory.read("sessions/a.md"), memory.read("sessions/b.md")
    done = memory.apply([
        Op.write("diary/day.md", "---\ntype: diary\n---\nthe day\n", expect=None),
        Op.rename("sessions/a.md", "archive/a.md", expect=a.version),
        Op.rename("sessions/b.md", "archive/b.md", text="---\nreason: folded\n---\nbeta\n", expect=b.version),
    ])
    assert [(m.path, m.change) for m in done] == [("diary/day.md", "created"), ("archive/a.md", "renamed"),
                                                  ("archive/b.md", "renamed")]
    assert [e.path for e in memory.list()] == ["archive/a.md", "archive/b.md", "diary/day.md"]
    assert memory.read("archive/b.md").meta["reason"] == "folded"
    assert done[0].version == memory.read("diary/day.md").version
    seqs = [r.seq for r in memory.history()[:3]]
    assert seqs == sorted(seqs, reverse=True) and seqs[0] - seqs[2] == 2  # one commit, three records
    # a second worker doing the same roll-up: refused whole, nothing half-applied
    memory.write("sessions/c.md", "gamma\n")
    before = [(e.path, e.version) for e in memory.list()]
    with pytest.raises(Conflict):
        memory.apply([Op.rename("sessions/c.md", "archive/c.md"), Op.write("diary/day.md", "again\n", expect=None)])
    assert [(e.path, e.version) for e in memory.list()] == before
    assert "archive/" in memory.index() and "archive/a.md" not in memory.index()  # retired files: one folder link


def test_read_as_of_and_changes_in_a_window(memory: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ["2026-03-01T09:00:00Z"]  # memdir's clock (journal stamps are whole seconds), set here instead of slept on
    monkeypatch.setattr(model, "now_stamp", lambda: model.Stamp(clock[0]))
    memory.write("project/launch.md", "Launch in March.\n")
    middle = datetime(2026, 3, 1, 9, 0, 1, tzinfo=UTC)
    clock[0] = "2026-03-01T09:00:02Z"
    memory.write("project/launch.md", "Launch in May.\n")
    memory.write("notes/other.md", "x\n")
    assert memdir.read_as_of(memory, "project/launch.md", middle).body == "Launch in March.\n"
    assert memory.read("project/launch.md").body == "Launch in May.\n"
    with pytest.raises(NotFound):
        memdir.read_as_of(memory, "notes/other.md", middle)
    recent = memdir.changes(memory, since=middle)
    assert [(r.op, r.path) for r in recent] == [("write", "notes/other.md"), ("write", "project/launch.md")]
    assert [r.path for r in memdir.changes(memory, since=middle, prefix="project/")] == ["project/launch.md"]
    assert [r.path for r in memdir.changes(memory, until=middle)] == ["project/launch.md"]


# ---------------------------------------------------------------- links and context


def test_links_and_context_follow_changes_on_every_backend(memory: memdir.Memdir) -> None:
    memory.write("project/flock.md", "Launch date: 2026-12-15. Payments: [[stripe]], [old](../ref/gone.md).\n", type="project")
    memory.write("reference/stripe.md", "Webhooks retry for 3 days.\n", type="reference")
    memory.write("feedback/no-dark.md", "---\npinned: true\n---\nNever dark themes.\n", type="feedback")
    assert [x.target for x in memdir.links(memory, "project/flock.md").links] == ["reference/stripe.md", None]
    memory.rename("reference/stripe.md", "archive/stripe.md")
    assert memdir.links(memory, "archive/stripe.md").backlinks == ("project/flock.md",)
    assert [path for path, _ in links.broken(memory)] == ["project/flock.md"]
    assert memory.reconcile().findings == []  # a link to nothing is not a disagreement of files and catalog
    ctx = memdir.context(memory, "when is the flock launch?")
    assert [(i.path, i.why) for i in ctx.included] == [
        ("feedback/no-dark.md", "pinned"), ("MEMORY.md", "index"), ("project/flock.md", "search")]
    memory.delete("feedback/no-dark.md")
    assert "Never dark themes" not in memdir.context(memory, ).text
    assert memory.count() == 2 and memory.count("archive/") == 1 and memory.scope(read=["project/"]).count() == 1
