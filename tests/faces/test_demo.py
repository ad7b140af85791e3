from pathlib import Path

from click.testing import CliRunner

import memdir
from memdir.faces.cli import main


def test_demo_runs_every_step_through_the_cli(tmp_path: Path) -> None:
    root = tmp_path / "tour"
    result = CliRunner().invoke(main, ["demo", str(root)])
    assert result.exit_code == 0, result.output
    out = result.output
    for step in range(1, 9):
        assert f"== {step}. " in out
    assert "$ memdir --root" in out and "restored project/flock.md" in out
    assert "error: reference/aws.md: line" in out and "error: path '../outside.md' contains '..'" in out
    assert "Launch date: 2026-12-15." in (root / "project" / "flock.md").read_text()  # the undo took effect
    assert not (root / "reference" / "aws.md").exists() and not (tmp_path / "outside.md").exists()


def test_demo_never_writes_into_a_memory_that_holds_files(tmp_path: Path) -> None:
    """`make demo` after the README tour must not replace the user's project/flock.md."""
    root = tmp_path / "memory"
    memdir.open(root).write("project/flock.md", "Launch moved to 2027-01-10.\n")
    for argv in (["demo", str(root)], ["--root", str(root), "demo"], ["demo", "--root", str(root)]):
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 1, (argv, result.output)
        assert "already holds files" in result.output
    assert memdir.open(root).read("project/flock.md").body == "Launch moved to 2027-01-10.\n"


def test_demo_without_a_folder_runs_in_a_scratch_folder_it_names(tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    made = [p for p in tmp_path.iterdir() if p.name.startswith("memdir-demo-")]
    assert len(made) == 1 and f"a sample memory in {made[0]}/" in result.output
    assert (made[0] / "project" / "flock.md").exists() and not (tmp_path / "memory").exists()
