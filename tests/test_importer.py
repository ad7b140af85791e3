from pathlib import Path

import memdir
from memdir.importer import import_dir


def claude_code_folder(tmp_path: Path) -> Path:
    src = tmp_path / "claude" / "memory"
    src.mkdir(parents=True)
    (src / "user_role.md").write_text("---\nname: role\ndescription: data scientist\ntype: user\n---\nWorks on churn models.\n")
    (src / "feedback_testing.md").write_text("Always run the integration tests against a real database.\n")
    (src / "project_launch.md").write_text("Launch is 2026-12-15.\n")
    (src / "notes").mkdir()
    (src / "notes" / "pipe.md").write_text("Pipe-style entry body.\n")
    (src / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    (src / "MEMORY.md").write_text(
        "# Memory\n\n"
        "## Feedback\n"
        "- [feedback_testing.md](feedback_testing.md) -- integration tests hit a real database\n"
        "- [Launch](project_launch.md) — launch date and scope\n"
        "- notes/pipe.md | a pipe style description #reference\n"
        "- [Gone](missing.md) — this file is not there\n"
        "some prose the importer cannot map\n"
    )
    return src


def test_import_claude_code_memory_folder(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        result = import_dir(md, src)
        assert sorted(result.imported) == ["feedback_testing.md", "notes/pipe.md", "project_launch.md", "user_role.md"]
        assert [p for p, _ in result.skipped] == ["broken.md"]
        assert "not valid YAML" in result.skipped[0][1]
        assert result.dangling == ["missing.md"]
        assert result.unmapped == [(8, "some prose the importer cannot map")]

        testing = md.read("feedback_testing.md")
        assert (testing.description, testing.type) == ("integration tests hit a real database", "feedback")
        assert testing.meta.get("name") is None  # a title that is just the file name is not a name
        launch = md.read("project_launch.md")
        assert (launch.name, launch.description, launch.type) == ("Launch", "launch date and scope", "feedback")
        pipe = md.read("notes/pipe.md")
        assert (pipe.description, pipe.type) == ("a pipe style description", "reference")
        role = md.read("user_role.md")
        assert (role.name, role.description, role.type) == ("role", "data scientist", "user")  # the file wins
        assert "data scientist" in md.index()

        again = import_dir(md, src)
        assert again.imported == []
        assert all("already in the memory" in why for p, why in again.skipped if p != "broken.md")
        summary = again.summary()
        assert "skipped user_role.md: already in the memory (use --overwrite to replace it)" in summary
    assert (src / "MEMORY.md").read_text().startswith("# Memory\n")  # the source is untouched


def test_import_overwrite_reports_unchanged(tmp_path: Path) -> None:
    src = claude_code_folder(tmp_path)
    with memdir.open(tmp_path / "memory") as md:
        import_dir(md, src)
        again = import_dir(md, src, overwrite=True)
        assert again.imported == [] and len(again.unchanged) == 4
