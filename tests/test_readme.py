"""The README's commands run as written and print what it shows."""

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"```(console|python|sh)\n(.*?)```", re.S)
VARIABLE = [(re.compile(r"\b[0-9a-f]{16}\b"), "VERSION"), (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "TIME")]


def normal(text: str) -> str:
    for rx, name in VARIABLE:
        text = rx.sub(name, text)
    return text


def console_steps() -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for kind, body in BLOCK.findall(README.read_text()):
        if kind != "console":
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def test_first_screen_gives_the_two_commands() -> None:
    head = "\n".join(README.read_text().splitlines()[:20])
    assert "make run" in head and "make test" in head
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make test" in ci


def test_tour_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "MEMDIR_ACTOR": "cli:alice"}
    env.pop("MEMDIR_ROOT", None)
    steps = console_steps()
    assert len(steps) >= 8
    for command, expected in steps:
        if command.startswith(". .venv/bin/activate"):
            continue  # the test already runs with the venv on PATH
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        shown = "\n".join(expected)
        actual = proc.stdout.replace(str(tmp_path), "/home/you")  # the README shows a home folder
        failed = shown.startswith("error:") or shown == "no matches"  # exit 1, as the README's exit codes say
        assert proc.returncode == (1 if failed else 0), (command, actual)
        assert normal(actual).rstrip("\n") == normal(shown), command


def test_python_example_runs(tmp_path: Path) -> None:
    code = [body for kind, body in BLOCK.findall(README.read_text()) if kind == "python"]
    assert code
    setup = "import memdir\nmemdir.open('memory').write('project/flock.md', 'Launch date: 2026-12-15.')\n"
    proc = subprocess.run([sys.executable, "-c", setup + code[0]], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Beta users: 40." in (tmp_path / "memory" / "project" / "flock.md").read_text()
