"""Importing folders (Claude Code memory, Obsidian, basic-memory): every line lands, every other file is named."""

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Backend

import memdir
from memdir import model
from memdir.core import index
from memdir.faces.cli import main
from memdir.remember.export import export_dir
from memdir.remember.importer import NOTES_FILE, import_basic_memory, import_dir

REAL = Path(__file__).parents[1] / "data" / "real"
TERN = REAL / "claude-code" / "memory" / "tern"
NOTES = REAL / "basic-memory" / "notes"
VAULTS = [REAL / "obsidian" / "en" / "Homebase", REAL / "obsidian" / "ja" / "はるとのノート"]


def claude_code_folder(tmp_path: Path) -> Path:
    src = tmp_path / "claude" / "memory"
    src.mkdir(parents=True)
    (src / "user_role.md").write_text("---\nname: role\ndescription: data scientist\ntype: user\n---\nWorks on churn models.\n")
    (src / "feedback_testing.md").write_text("Always run the integration tests against a real database.\n")
    (src / "project_launch.md").write_text("Launch is 2026-12-15.\n")
    (src / "notes").mkdir()
    (src / "notes" / "pipe.md").write_text("Pipe-style entry body.\n")
    (src / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    (src / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (src / "MEMORY.md").write_text(
        "# Memory\n\n"
        "## Feedback\n"
        "- [feedback_testing.md](feedback_testing.md) -- integration tests hit a real database\n"
        "- [Launch](project_launch.md) — launch date and scope\n"
        "- notes/pipe.md | a pipe style description #reference\n"
        "- [Gone](missing.md) — this file is not there\n"
        "some prose: Dana prefers short answers\n"
    )
    return src


def test_import_claude_code_memory_folder(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        result = import_dir(md, src)
        assert sorted(result.imported) == ["MEMORY.md", "broken.md", "feedback_testing.md", "notes/pipe.md",
                                           "project_launch.md", "user_role.md"]
        assert result.skipped == []
        assert result.left_out == [
            ("diagram.png", "not a markdown note (png); memdir keeps .md files only, so links to it stay as written"),
        ]
        assert result.repaired == [("broken.md", [2])]  # `name: [unclosed` read as its writer did: the rest of the line
        assert md.read("broken.md").name == "[unclosed"
        assert result.dangling == ["missing.md"]
        assert result.notes == [  # a type only MEMORY.md gives is not written into the file, but named
            "notes/pipe.md: MEMORY.md line 6 files it under reference, but the file names no type; "
            "add 'type: reference' to its frontmatter to make it one",
        ]  # (project_launch.md is a project by its file name, whatever section MEMORY.md puts it in)
        assert result.kept == [("MEMORY.md", "MEMORY.md, around memdir's marked index region")]
        assert (result.files_in, result.lines_in, result.lines_out) == (6, 21, 21)

        for rel in ("user_role.md", "feedback_testing.md", "project_launch.md", "notes/pipe.md"):
            assert md.read(rel).text == (src / rel).read_text()  # byte for byte: no stamps, no added keys
        assert md.read("feedback_testing.md").type == "feedback"  # Claude Code's file name says so
        # the hand-kept MEMORY.md stays whole in the destination's, before memdir's region
        top = md.index()
        assert top.startswith((src / "MEMORY.md").read_text() + index.BEGIN + "\n# Memory Index\n")
        assert "- [role](user_role.md) — data scientist" in top
        assert (tmp_path / "memory" / "MEMORY.md").read_text() == top

        again = import_dir(md, src)
        assert again.imported == [] and sorted(again.unchanged) == sorted(result.imported)
        assert "imported 0 files, 6 unchanged" in again.summary()
    assert (src / "MEMORY.md").read_text().startswith("# Memory\n")  # the source is untouched


def test_a_changed_file_is_not_replaced_unless_asked(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        import_dir(md, src)
        (src / "project_launch.md").write_text("Launch moved to 2027-01-10.\n")
        result = import_dir(md, src)
        assert ("project_launch.md", "project_launch.md is already in the memory with other text (use --overwrite to "
                                     "replace it)") in result.skipped
        assert md.read("project_launch.md").body == "Launch is 2026-12-15.\n"
        result = import_dir(md, src, overwrite=True)
        assert result.imported == ["project_launch.md"] and md.read("project_launch.md").body == "Launch moved to 2027-01-10.\n"
        assert md.undo("project_launch.md").body == "Launch is 2026-12-15.\n"  # journaled like every write


def test_notes_go_to_a_topic_file_when_the_destination_keeps_its_own(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        md.write("x.md", "x\n")
        assert md.keep_notes("# Our own notes\n\nKeep these.\n")
        result = import_dir(md, src)
        assert result.kept == [("MEMORY.md", f"{NOTES_FILE} (MEMORY.md keeps notes of its own)")]
        assert md.read(NOTES_FILE).text == (src / "MEMORY.md").read_text()
        assert md.index().startswith("# Our own notes\n\nKeep these.\n" + index.BEGIN)


def copy_of_every_md(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))
            if ".obsidian" not in p.parts and ".trash" not in p.parts}


@pytest.mark.parametrize("source", [TERN, NOTES, *VAULTS], ids=["claude-code", "basic-memory", "obsidian-en", "obsidian-ja"])
def test_import_of_the_corpus_loses_no_line_and_names_every_file_it_leaves(tmp_path: Path, source: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        result = (import_basic_memory if source == NOTES else import_dir)(md, source)
        expected = copy_of_every_md(source)
        assert result.skipped == [] and result.redacted == [] and result.renamed == []
        skipped = dict(result.left_out)
        repaired = dict(result.repaired)
        for rel, text in expected.items():
            got = md.index() if rel == "MEMORY.md" else md.read(rel).text
            if rel == "MEMORY.md":
                assert got.startswith(text + index.BEGIN)  # the notes, then memdir's region
            elif rel in repaired:  # only the lines YAML refused differ, and only by quotes
                old, new = text.split("\n"), got.split("\n")
                assert len(old) == len(new)
                assert [i + 1 for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b] == repaired[rel]
                assert all(b.replace('"', "") == a.replace('"', "") for a, b in zip(old, new, strict=True))
            else:
                assert got == text, rel  # byte for byte
        # every other file of the source is named, with why
        others = {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file() and p.suffix != ".md"}
        listed = set(skipped) - {p for p in skipped if p.endswith("/")}
        hidden = {p for p in others if p.split("/", 1)[0].startswith(".")}
        assert listed == others - hidden and all(any(h.startswith(d) for d in skipped if d.endswith("/")) for h in hidden)
        assert result.lines_in == result.lines_out == sum(
            model.count_lines(t) for t in expected.values())  # long notes too: a person's file is kept whole
        assert result.files_in == len(expected)


def test_the_corpus_frontmatter_stays_as_written_and_is_read_as_meant(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "bm") as md:
        import_basic_memory(md, NOTES)
        amara = md.read("people/Amara Nwosu.md")
        assert amara.text.startswith("---\ntitle: Amara Nwosu\ntype: Person\npermalink: people/amara-nwosu\n"
                                     "tags: [person, garden]\nupdated: 2025-06-30\n---\n")
        assert (amara.name, amara.type, amara.updated, amara.created) == ("Amara Nwosu", "person", "2025-06-30", None)
        decision = md.read("projects/orchard/Decision- Postgres over SQLite.md")
        assert decision.name == "Decision: Postgres over SQLite" and decision.type is None  # `type: note`
        assert decision.text.startswith('---\ntitle: "Decision: Postgres over SQLite"\ntype: note\n')
    with memdir.open(tmp_path / "cc") as md:
        import_dir(md, TERN)
        feedback = sorted(e.path for e in md.list() if e.type == "feedback")
        assert feedback == ["feedback_commit_style.md", "feedback_dutch_translations.md", "feedback_never_real_slack.md",
                            "feedback_no_threshold_changes.md", "feedback_sentry_scrubber.md",
                            "feedback_tests_before_commit.md"]
        assert md.read("feedback_commit_style.md").updated == "2026-03-09T10:02:44Z"  # metadata.modified
        shown = memdir.context(md).text
        assert all(md.read(p).name in shown for p in feedback)  # every feedback memory reaches the session


def test_relative_dates_in_imported_notes_are_kept_as_written(tmp_path: Path) -> None:
    vault = VAULTS[0]
    bills = (vault / "Household" / "Bills split.md").read_text(encoding="utf-8")
    assert "A few weeks ago" in bills and "Last Tuesday" in bills
    with memdir.open(tmp_path / "memory") as md:
        import_dir(md, vault)
        assert md.read("Household/Bills split.md").text == bills  # no "(2026-…)" put into a note of 2025
        today = dt.datetime.now(dt.UTC).date()
        written = md.write("agent.md", "We met a few weeks ago.\n")  # what an agent writes: against the write's date
        assert f"a few weeks ago ({(today - dt.timedelta(weeks=3)).isoformat()})" in written.body


def test_cli_import_reports_files_and_lines_in_and_out(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(tmp_path / "memory"), "import", str(src), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["files"] == {"source": 7, "notes": 6, "brought_in": 6, "skipped": 0, "left_out": 1}
    assert data["lines"] == {"in": 21, "out": 21, "skipped": 0}
    assert data["kept_notes"] == [{"from": "MEMORY.md", "to": "MEMORY.md, around memdir's marked index region"}]
    out = runner.invoke(main, ["--root", str(tmp_path / "m2"), "import", "--from", "obsidian", str(src)])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[:3] == [
        "imported 6 files",
        "brought in 6 of 6 notes: 21 lines in, 21 out",
        "kept MEMORY.md whole in MEMORY.md, around memdir's marked index region",
    ]
    out = runner.invoke(main, ["--root", str(tmp_path / "m3"), "import", "--from", "basic-memory", str(src / "MEMORY.md")])
    assert out.exit_code == 2 and "--from basic-memory reads a folder" in out.output


@pytest.mark.parametrize("source", [TERN, NOTES, *VAULTS], ids=["claude-code", "basic-memory", "obsidian-en", "obsidian-ja"])
def test_import_then_export_gives_the_source_back(tmp_path: Path, source: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        result = import_dir(md, source)
        report = export_dir(md, tmp_path / "out")
    back = copy_of_every_md(tmp_path / "out")
    want = copy_of_every_md(source)
    assert back.keys() == want.keys()
    repaired = dict(result.repaired)
    assert {r for r in want if back[r] != want[r]} == set(repaired)
    assert report.files == len(want) and report.lines == result.lines_out


def test_cli_export_writes_a_folder_and_refuses_a_full_one(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    runner = CliRunner()
    root = str(tmp_path / "memory")
    assert runner.invoke(main, ["--root", root, "import", str(src)]).exit_code == 0
    out = runner.invoke(main, ["--root", root, "export", str(tmp_path / "out")])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == ["exported 6 files (21 lines)", "wrote MEMORY.md with the notes kept beside memdir's index"]
    assert (tmp_path / "out" / "MEMORY.md").read_text() == (src / "MEMORY.md").read_text()
    out = runner.invoke(main, ["--root", root, "export", str(tmp_path / "out")])
    assert out.exit_code == 1 and "is not empty; export into a new or empty folder" in out.output


def test_import_never_follows_a_symlink_out_of_the_source(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".netrc"
    secret.parent.mkdir()
    secret.write_text("machine example.com login me password hunter2\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("outside the source\n")
    source = tmp_path / "source"
    (source / "notes").mkdir(parents=True)
    (source / "notes" / "real.md").write_text("a real note\n")
    (source / "notes" / "setup.md").symlink_to(secret)
    (source / "notes" / "alias.md").symlink_to("real.md")  # a link that stays inside is followed
    (source / "linked").symlink_to(elsewhere)
    for run in (import_dir, import_basic_memory):
        with memdir.open(tmp_path / f"memory-{run.__name__}") as md:
            result = run(md, source)
            assert sorted(result.imported) == ["notes/alias.md", "notes/real.md"]
            assert result.skipped == [] and sorted(result.left_out) == [
                ("linked", "a symlinked folder; import does not follow folder links"),
                ("notes/setup.md", "a symlink leading out of the source folder; not followed"),
            ]
            assert md.grep("hunter2") == [] and md.grep("outside the source") == []


def test_an_agent_edits_an_imported_note_without_touching_what_it_did_not_write(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        import_basic_memory(md, NOTES)
        amara = md.read("people/Amara Nwosu.md")  # `type: Person`, which is not one of memdir's types
        edited = md.edit("people/Amara Nwosu.md", "Uses a tablet, large text", "Uses a tablet, large text; new glasses")
        assert edited.meta["type"] == "Person" and edited.text.startswith(amara.text.split("updated:")[0])
        with pytest.raises(memdir.InvalidMemory, match="type 'Person' is not one of"):
            md.write("people/new.md", "---\ntype: Person\n---\nx\n")  # a key this write sets is still checked
        import_dir(md, VAULTS[0])
        bills = md.read("Household/Bills split.md")
        yesterday = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
        rewritten = md.write("Household/Bills split.md", bills.body + "\nWe settled up yesterday.\n")
        assert "A few weeks ago" in rewritten.body and "A few weeks ago (" not in rewritten.body  # its words stay
        assert f"yesterday ({yesterday})" in rewritten.body  # the line this write brings is resolved


def test_every_backend_keeps_the_imported_notes_beside_its_index(memory: memdir.Memdir, backend: Backend,
                                                                 tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    result = import_dir(memory, src)
    assert result.kept == [("MEMORY.md", "MEMORY.md, around memdir's marked index region")]
    notes = (src / "MEMORY.md").read_text()
    memory.write("later.md", "written after the import\n")  # the next write renders beside the notes
    with backend.open() as again:  # another process sees the same file
        top = again.index()
        assert top.startswith(notes + index.BEGIN) and "- [later](later.md)" in top
        assert export_dir(again, tmp_path / "out").notes == ["MEMORY.md"]
    assert (tmp_path / "out" / "MEMORY.md").read_text() == notes
    assert (tmp_path / "out" / "user_role.md").read_text() == (src / "user_role.md").read_text()


def test_a_folders_own_index_in_any_case_keeps_its_notes_there(tmp_path: Path) -> None:
    src = tmp_path / "vault"
    (src / "work").mkdir(parents=True)
    (src / "work" / "plan.md").write_text("The plan.\n")
    (src / "work" / "memory.md").write_text("# Work notes\n\nAsk Priya first.\n")  # a name memdir reserves
    with memdir.open(tmp_path / "memory") as md:
        result = import_dir(md, src)
        assert result.kept == [("work/memory.md", "work/MEMORY.md, around memdir's marked index region")]
        assert result.skipped == [] and result.lines_in == result.lines_out == 4
        assert md.index("work/").startswith("# Work notes\n\nAsk Priya first.\n" + index.BEGIN)
