import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir.faces.cli import main


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
    assert (read["description"], read["version"], read["body"]) == ("first", written["version"], "alpha\n")
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
    assert cli("grep", "-s", "hello", code=1) == ""  # nothing matched: exit 1, as grep
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
    body = "\n".join(str(i) for i in range(10))
    result = CliRunner().invoke(main, ["--root", str(target), "--agent", "write", "a.md", "--body", body])
    assert result.exit_code == 1 and "has 10 lines; the limit is 9" in result.stderr
    result = CliRunner().invoke(main, ["--root", str(target), "write", "a.md", "--body", body])
    assert result.exit_code == 0  # a person's file is kept whole


def test_environment_sets_root_and_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_ROOT", str(tmp_path / "env-root"))
    monkeypatch.setenv("MEMDIR_MAX_LINES", "5")
    monkeypatch.setenv("MEMDIR_AGENT", "1")
    result = CliRunner().invoke(main, ["write", "a.md", "--body", "1\n2\n3\n4\n5\n6"])
    assert result.exit_code == 1 and "has 6 lines; the limit is 5" in result.stderr
    assert (tmp_path / "env-root").is_dir()


def test_reconcile_reports_then_fixes(cli, root: Path) -> None:
    cli("write", "a.md", "--body", "x")
    (root / "b.md").write_text("# Hand made\n")
    out = cli("reconcile", code=1)  # something to repair: exit 1
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


def test_every_command_sees_hand_edits_at_once(cli, root: Path) -> None:
    cli("write", "project/launch.md", "-d", "launch on Friday", "--body", "The launch is on Friday.")
    cli("write", "project/old.md", "-d", "an old note", "--body", "Old.")
    launch = root / "project" / "launch.md"
    launch.write_text(launch.read_text().replace("launch on Friday", "launch moved to Monday"))  # as sed -i would
    (root / "project" / "old.md").unlink()
    (root / "project" / "added.md").write_text("# Added by hand in an editor\nwith a zeppelin.\n")
    assert "launch moved to Monday" in cli("index") and "old note" not in cli("index")
    listed = {e["path"]: e for e in json.loads(cli("ls", "--json"))}
    assert sorted(listed) == ["project/added.md", "project/launch.md"]
    assert cli("search", "zeppelin").startswith("project/added.md:")
    out = cli("write", "project/launch.md", "--expect", listed["project/launch.md"]["version"], "--body", "Monday.")
    assert out.startswith("updated project/launch.md")
    ops = [r["op"] for r in json.loads(cli("log", "project/old.md", "--json"))]
    assert ops == ["external", "write"]


# ---------------------------------------------------------------- what the system refuses: one line, exit 1


def memdir_cli(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "memdir", *args], input=input, capture_output=True, timeout=60)


def one_line_error(proc: subprocess.CompletedProcess[bytes], start: str) -> None:
    err = proc.stderr.decode()
    assert proc.returncode == 1 and proc.stdout == b"", err
    assert err.startswith("error: " + start) and err.count("\n") == 1 and "Traceback" not in err, err


def test_stdin_that_is_not_utf8_is_refused(root: Path) -> None:
    proc = memdir_cli("--root", str(root), "write", "a.md", input=b"caf\xe9 au lait\n")
    one_line_error(proc, "stdin is not UTF-8 text (byte 3 is b'\\xe9')")
    assert not (root / "a.md").exists()


def test_a_file_as_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a folder\n")
    one_line_error(memdir_cli("--root", str(tmp_path / "notes.txt"), "ls"), f"{tmp_path / 'notes.txt'} is a file, not a memory folder")
    one_line_error(memdir_cli("--root", str(tmp_path / "notes.txt" / "m"), "write", "a.md", "--body", "x"), "no memory at ")
    one_line_error(memdir_cli("init", str(tmp_path / "notes.txt" / "m")), "the system refused: Not a directory")
    assert (tmp_path / "notes.txt").read_text() == "not a folder\n"


def test_a_read_only_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ro"
    root.mkdir()
    mounted = False
    if os.geteuid() == 0:  # root ignores permission bits: a read-only tmpfs it is
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(root)]).returncode == 0
        if not mounted:
            pytest.skip("running as root without the right to mount a read-only folder")
    try:
        assert memdir_cli("--root", str(root), "write", "a.md", "--body", "first").returncode == 0
        if mounted:
            assert subprocess.run(["mount", "-o", "remount,ro", str(root)]).returncode == 0
        else:
            for p in [root, *root.rglob("*")]:
                p.chmod(p.stat().st_mode & ~0o222)
        proc = memdir_cli("--root", str(root), "write", "b.md", "--body", "second")
        one_line_error(proc, "")
        assert "read-only" in proc.stderr.decode().lower() or "permission" in proc.stderr.decode().lower()
        assert not (root / "b.md").exists()
    finally:
        if mounted:
            subprocess.run(["umount", str(root)])
        else:
            for p in [root, *root.rglob("*")]:
                p.chmod(p.stat().st_mode | 0o200)


def test_a_path_argument_that_is_not_utf8_is_refused(root: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "write", b"\xff.md", "--body", "x"],
                          capture_output=True, timeout=60)
    one_line_error(proc, "")


def test_the_rate_limit_holds_across_cli_processes(root: Path) -> None:
    """writes_per_minute lives in the store: five processes share one bucket, so the third write is refused."""
    CliRunner().invoke(main, ["--root", str(root), "init"])
    (root / "memdir.toml").write_text("writes_per_minute = 2\n")
    codes, errors = [], []
    for i in range(5):
        done = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "--agent", "write", f"n{i}.md",
                               "--body", f"note {i}"], capture_output=True, text=True)
        codes.append(done.returncode)
        errors.append(done.stderr)
    assert codes == [0, 0, 1, 1, 1]
    assert errors[2].startswith("error: n2.md: more than 2 writes per minute for this memory; wait ")
    assert errors[2].count("\n") == 1 and "Traceback" not in "".join(errors)
    listed = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "ls"], capture_output=True, text=True)
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["n0.md", "n1.md"]


def test_agent_mode_takes_the_agents_rate_limit_and_a_person_has_none(root: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(root), "write", "a.md", "--body", "a"]).exit_code == 0
    with memdir.open(root) as md:
        while md.store.take(60) < 0.5:  # use up the agents' default bucket of 60 a minute
            pass
    person = runner.invoke(main, ["--root", str(root), "write", "b.md", "--body", "b"])
    assert person.exit_code == 0  # nothing configured: a person is not limited
    monkeypatch.setenv("MEMDIR_AGENT", "1")
    agent = runner.invoke(main, ["--root", str(root), "write", "c.md", "--body", "c"])
    assert agent.exit_code == 1 and "more than 60 writes per minute" in agent.output


# ---------------------------------------------------------------- the first hour


def test_global_options_also_follow_the_command(tmp_path: Path) -> None:
    """`memdir ls --root X` works like `memdir --root X ls`, and each command's --help lists them."""
    root = tmp_path / "memory"
    runner = CliRunner()
    assert runner.invoke(main, ["write", "a.md", "--body", "alpha", "--root", str(root)]).exit_code == 0
    assert runner.invoke(main, ["ls", "--root", str(root)]).stdout.startswith("a.md\t")
    assert runner.invoke(main, ["--root", str(root), "ls"]).stdout.startswith("a.md\t")
    assert runner.invoke(main, ["db", "migrate", "--root", "sqlite://t.db", "--check"], catch_exceptions=False).exit_code in (0, 1)
    for command in (["ls"], ["serve"], ["db", "migrate"], ["write"]):
        help_text = runner.invoke(main, [*command, "--help"]).stdout
        assert "--root LOCATION" in help_text and "--tenant" in help_text, command


def test_a_mistyped_root_is_refused_and_a_new_memory_is_announced(tmp_path: Path) -> None:
    runner = CliRunner()
    typo = tmp_path / "no-such-parent" / "memroy"
    result = runner.invoke(main, ["--root", str(typo), "write", "a.md", "--body", "x"])
    assert result.exit_code == 1 and not typo.parent.exists()
    assert result.stderr == (f"error: no memory at {typo}, and its parent folder {typo.parent} does not exist either; "
                             f"check the path, or create it with `memdir init {typo}`\n")
    fresh = tmp_path / "memory"
    result = runner.invoke(main, ["--root", str(fresh), "write", "a.md", "--body", "x"])
    assert result.exit_code == 0 and result.stderr == f"memdir: created a new memory at {fresh}\n"
    again = runner.invoke(main, ["--root", str(fresh), "write", "b.md", "--body", "x"])
    assert again.stderr == ""  # said once, when it was made
    result = runner.invoke(main, ["--root", str(typo), "serve", "--http", "0"])
    assert result.exit_code == 1 and "does not exist either" in result.stderr and not typo.parent.exists()
    assert runner.invoke(main, ["init", str(typo)]).exit_code == 0 and typo.is_dir()  # init makes the parents
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    result = runner.invoke(main, ["--root", str(a_file), "write", "a.md", "--body", "x"])
    assert result.exit_code == 1 and result.stderr == f"error: --root {a_file} is a file, not a memory folder; give a folder\n"


def test_exit_codes_a_script_can_use(cli, root: Path) -> None:
    cli("write", "a.md", "--body", "alpha")
    cli("grep", "alpha")
    cli("grep", "zebra", code=1)
    cli("grep", "zebra", "--json", code=1)
    cli("search", "alpha")
    cli("search", "zebra", code=1)
    cli("reconcile")
    (root / "b.md").write_text("made by hand\n")
    cli("reconcile", code=1)  # something differs, like `git diff --exit-code`
    cli("reconcile", "--fix")  # repaired
    cli("reconcile")
    (root / "c.md").write_text("x\n" * 500)  # longer than an agent may write: kept, and only a notice
    cli("reconcile", "--fix")
    cli("doctor")
    (root / "d.md").write_text("---\nname: [unclosed\n---\nbody\n")  # broken by hand: --fix cannot repair that
    cli("reconcile", "--fix", code=1)
    cli("doctor", code=1)


def test_help_lists_every_command_without_cutting_it(cli) -> None:
    out = CliRunner().invoke(main, ["--help"]).stdout
    commands = out.split("Commands:")[1]
    assert "..." not in commands
    assert re.search(r"Copy a whole tenant \(files, catalog, journal\) from SOURCE to\n +DESTINATION", out)  # any column


def test_mv_takes_expect(cli) -> None:
    version = json.loads(cli("write", "a.md", "--body", "1", "--json"))["version"]
    cli("write", "a.md", "--body", "2")
    cli("mv", "a.md", "b.md", "--expect", version, code=1)
    current = json.loads(cli("read", "a.md", "--json"))
    assert "change" not in current  # a read changed nothing
    cli("mv", "a.md", "b.md", "--expect", current["version"])
    assert json.loads(cli("read", "b.md", "--json"))["body"] == "2\n"


def test_copy_reports_progress_while_it_verifies(tmp_path: Path) -> None:
    import memdir

    with memdir.open(tmp_path / "src") as md:
        md.write("a.md", "alpha\n")
    result = CliRunner().invoke(main, ["copy", str(tmp_path / "src"), f"sqlite:///{tmp_path / 'dst.db'}"])
    assert result.exit_code == 0, result.output
    assert "copy: verify source 1/1" in result.stderr and "copy: verify copy 1/1" in result.stderr


def test_read_prints_the_file_as_it_is_without_loading_the_yaml_parser(root: Path) -> None:
    """A hook or a script that shows a file pays for no frontmatter parse; --json and --as-of still parse."""
    text = "---\nname: n\ndescription: d\n# a comment the parse would drop\n---\nbody\n"
    with memdir.open(root) as md:
        md.write("n.md", text)
    probe = ("import sys; from memdir.faces.cli import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
             "print('yaml' in sys.modules, file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", probe, "--root", str(root), "read", "n.md"], capture_output=True, text=True)
    assert run.stdout.startswith("---\nname: n\ndescription: d\n# a comment")
    assert run.stderr.strip() == "False"
    run = subprocess.run([sys.executable, "-c", probe, "--root", str(root), "read", "n.md", "--json"], capture_output=True, text=True)
    assert json.loads(run.stdout)["description"] == "d"
    assert run.stderr.strip() == "True"


def test_each_command_lives_in_the_group_module_the_table_names() -> None:
    """`memdir` loads a command's group module when the command is asked for: the table must say where each is."""
    import importlib

    import click

    from memdir.faces import cli

    for group, names in cli.COMMANDS.items():
        registered = click.Group()
        importlib.import_module(f"memdir.faces.cli.{group}").register(registered)
        assert sorted(registered.commands) == sorted(names), group
    assert sorted(cli.main.list_commands(click.Context(cli.main))) == sorted(n for ns in cli.COMMANDS.values() for n in ns)


def test_a_hook_loads_no_other_command_group(tmp_path: Path) -> None:
    probe = ("import io, sys\nfrom memdir.faces.cli import main\nsys.stdin = io.StringIO('{}')\n"
             "try:\n    main(['--root', sys.argv[1], 'hook', 'claude-code'])\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith('memdir.faces.cli.')))")
    run = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "m")], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "['memdir.faces.cli.base', 'memdir.faces.cli.hooks']"


def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "m", writes_per_minute=0) as md:
        md.apply([memdir.Op.write(f"n{i}.md", f"fact {i}\n" * 3) for i in range(400)])
        for i in range(300):
            md.write(f"n{i}.md", f"changed {i}\n")
    for command in ("log -n 1000", "ls", "grep fact", "index"):
        done = subprocess.run(["bash", "-c", f"{sys.executable} -m memdir --root {tmp_path / 'm'} {command} | head -1;"
                               " echo status=${PIPESTATUS[0]} >&2"], capture_output=True, text=True, timeout=120)
        assert done.stdout.count("\n") == 1, command
        assert done.stderr.strip() == "status=0", (command, done.stderr)
