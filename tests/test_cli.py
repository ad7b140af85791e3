import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli import main


@pytest.fixture
def cli(root: Path):
    runner = CliRunner()

    def run(*args: str, input: str | None = None, code: int = 0) -> str:
        result = runner.invoke(main, ["--root", str(root), *args], input=input)
        assert result.exit_code == code, (result.output, result.stderr if hasattr(result, "stderr") else "")
        return result.stdout

    return run


def test_write_read_ls_index(cli, root: Path) -> None:
    out = cli("write", "feedback/no-dark.md", "-t", "feedback", "-d", "NEVER use dark themes", "--tag", "ui",
              "--body", "Never propose dark themes.")
    assert out.startswith("created feedback/no-dark.md (8 lines, version ")
    assert cli("read", "feedback/no-dark.md").endswith("---\nNever propose dark themes.\n")
    assert cli("ls").startswith("feedback/no-dark.md\tfeedback\t20")
    assert cli("index") == "# Memory Index\n\n## Feedback\n- [no dark](feedback/no-dark.md) — NEVER use dark themes\n"
    assert (root / "MEMORY.md").read_text() == cli("index")


def test_body_from_stdin(cli) -> None:
    cli("write", "notes.md", input="# From stdin\nline\n")
    assert "# From stdin" in cli("read", "notes.md")


def test_json_outputs_are_data(cli) -> None:
    written = json.loads(cli("write", "a.md", "--body", "alpha", "-d", "first", "--json"))
    assert written["change"] == "created" and written["path"] == "a.md"
    read = json.loads(cli("read", "a.md", "--json"))
    assert (read["description"], read["version"], read["body"]) == ("first", written["version"], "alpha")  # stored as given
    assert [e["path"] for e in json.loads(cli("ls", "--json"))] == ["a.md"]
    assert json.loads(cli("grep", "alpha", "--json")) == [{"path": "a.md", "line": 6, "text": "alpha"}]
    log = json.loads(cli("log", "--json", "--patch"))
    assert log[0]["op"] == "write" and "alpha" in log[0]["new"]
    assert json.loads(cli("index", "--json"))["text"].startswith("# Memory Index")
    assert json.loads(cli("reconcile", "--json"))["clean"] is True


def test_compare_and_swap_flags(cli) -> None:
    version = json.loads(cli("write", "a.md", "--body", "1", "--new", "--json"))["version"]
    cli("write", "a.md", "--body", "2", "--new", code=1)
    cli("write", "a.md", "--body", "2", "--expect", version)
    cli("write", "a.md", "--body", "3", "--expect", version, code=1)


def test_errors_are_one_line_on_stderr_with_exit_code_1(root: Path) -> None:
    result = CliRunner().invoke(main, ["--root", str(root), "write", "../x.md", "--body", "x"])
    assert result.exit_code == 1
    assert result.stderr == "error: path '../x.md' contains '..'; paths may not leave the memory root\n"
    assert result.stdout == ""


def test_usage_errors_exit_2(cli) -> None:
    cli("write", code=2)
    cli("frobnicate", code=2)
    cli("write", "a.md", "--body", "x", "--new", "--expect", "v", code=2)


def test_missing_memory_for_read_commands(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--root", str(tmp_path / "nowhere"), "ls"])
    assert result.exit_code == 1
    assert "no memory folder at" in result.stderr and "memdir init" in result.stderr
    assert not (tmp_path / "nowhere").exists()


def test_rm_mv_log_undo(cli) -> None:
    cli("write", "a.md", "--body", "alpha")
    assert cli("mv", "a.md", "b/a.md") == "renamed a.md to b/a.md\n"
    assert cli("rm", "b/a.md") == "deleted b/a.md (5 lines); undo with: memdir undo b/a.md\n"
    log = cli("log")
    assert "delete b/a.md" in log and "rename a.md -> b/a.md" in log and "write a.md" in log
    assert cli("undo", "b/a.md").startswith("restored b/a.md (version ")
    assert "alpha" in cli("read", "b/a.md")
    assert "+alpha" in cli("log", "b/a.md", "-p", "-n", "1")  # the undo brought the text back


def test_grep_options(cli) -> None:
    cli("write", "a.md", "--body", "Hello (world)")
    assert cli("grep", "hello").endswith("a.md:5:Hello (world)\n")
    assert cli("grep", "-s", "hello") == ""
    assert cli("grep", "-F", "(world)").endswith("a.md:5:Hello (world)\n")
    cli("grep", "(", code=1)


def test_init_writes_a_commented_settings_file(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    result = CliRunner().invoke(main, ["init", str(target)])
    assert result.exit_code == 0
    toml = (target / "memdir.toml").read_text()
    assert "# max_lines = 200" in toml and "# writes_per_minute = 0" in toml
    assert (target / "MEMORY.md").read_text() == "# Memory Index\n\nNo memories yet.\n"
    (target / "memdir.toml").write_text(toml.replace("# max_lines = 200", "max_lines = 9"))
    result = CliRunner().invoke(main, ["--root", str(target), "write", "a.md", "--body", "1\n2\n3\n4\n5\n6"])
    assert result.exit_code == 1 and "the limit is 9" in result.stderr


def test_environment_sets_root_and_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_ROOT", str(tmp_path / "env-root"))
    monkeypatch.setenv("MEMDIR_MAX_LINES", "5")
    result = CliRunner().invoke(main, ["write", "a.md", "--body", "1\n2"])
    assert result.exit_code == 1 and "the limit is 5" in result.stderr
    assert (tmp_path / "env-root").is_dir()


def test_reconcile_reports_then_fixes(cli, root: Path) -> None:
    cli("write", "a.md", "--body", "x")
    (root / "b.md").write_text("# Hand made\n")
    out = cli("reconcile")
    assert "new\tb.md\tnot in the catalog" in out
    cli("reconcile", "--fix")
    assert cli("reconcile").strip() == "clean: files, catalog and index agree"


def test_every_command_has_help() -> None:
    for name, command in main.commands.items():
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0 and command.help and len(command.help) > 20, name


def test_console_script_runs_as_a_module() -> None:
    proc = subprocess.run([sys.executable, "-m", "memdir", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "memory for AI agents" in proc.stdout
