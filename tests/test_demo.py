from pathlib import Path

from click.testing import CliRunner

from memdir.cli import main


def test_demo_runs_every_step_through_the_cli(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    result = CliRunner().invoke(main, ["--root", str(root), "demo"])
    assert result.exit_code == 0, result.output
    out = result.output
    for step in range(1, 9):
        assert f"== {step}. " in out
    assert "$ memdir --root" in out and "restored project/flock.md" in out
    assert "error: reference/aws.md: line" in out and "error: path '../outside.md' contains '..'" in out
    assert "Launch date: 2026-12-15." in (root / "project" / "flock.md").read_text()  # the undo took effect
    assert not (root / "reference" / "aws.md").exists() and not (tmp_path / "outside.md").exists()
    again = CliRunner().invoke(main, ["--root", str(root), "demo"])  # re-running is safe
    assert again.exit_code == 0, again.output
