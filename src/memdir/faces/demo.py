"""`memdir demo`: a guided tour of the command line, one labelled step at a time.

Every step runs the real `memdir` command in a subprocess and shows it first,
so each line can be copied and run by hand.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile

import click

MEMORIES = [
    ("user/profile.md", "user", "Alice: data engineer, prefers Python and short answers",
     "# Alice\n\nData engineer at a logistics company. Prefers Python, short answers, and examples over theory.\n"),
    ("feedback/no-dark-themes.md", "feedback", "NEVER use dark themes in generated UI; user finds them unreadable",
     "Never propose dark themes.\n\n**Why:** the user corrected this twice; low-contrast screens hurt their eyes.\n"
     "**How to apply:** any UI, slide or chart the agent generates.\n"),
    ("feedback/tests-first.md", "feedback", "Write the failing test before the fix",
     "Start every bug fix with a failing test.\n\n**Why:** asked on 2026-03-02 after a regression shipped.\n"
     "**How to apply:** any code change that fixes a bug.\n"),
    ("project/flock.md", "project", "Flock: route planner; launch on 2026-12-15, Postgres + FastAPI",
     "# Flock\n\nRoute planner for delivery vans. Launch date: 2026-12-15.\nStack: PostgreSQL, FastAPI, React.\n"),
    ("reference/stripe-webhooks.md", "reference", "Stripe webhooks: verify signatures, retry for 3 days",
     "Stripe signs every webhook; verify with the endpoint secret.\nFailed deliveries are retried for up to 3 days.\n"),
]


def scratch(folder: str | None) -> str:
    """Where the tour runs: a new temporary folder, or `folder` if it holds no memories yet."""
    if folder is None:
        return tempfile.mkdtemp(prefix="memdir-demo-")
    if os.path.exists(folder) and (not os.path.isdir(folder) or any(
        name.endswith(".md") or name == ".memdir" for _, dirs, files in os.walk(folder) for name in [*dirs, *files]
    )):
        raise click.ClickException(
            f"{folder} already holds files; the demo writes sample memories, so give it a new or empty folder "
            "(or none, for a temporary one)"
        )
    return folder


def _step(title: str) -> None:
    click.echo()
    click.secho(f"== {title}", bold=True)


def _run(root: str, *args: str, body: str | None = None, check: bool = True) -> int:
    argv = ["memdir", "--root", root, *args]
    click.secho("$ " + " ".join(shlex.quote(a) for a in argv), fg="cyan")
    proc = subprocess.run([sys.executable, "-m", "memdir", "--root", root, *args], input=body, text=True,
                          capture_output=True)
    if proc.stdout:
        click.echo(proc.stdout, nl=not proc.stdout.endswith("\n"))
    if proc.stderr:
        click.echo(proc.stderr, nl=not proc.stderr.endswith("\n"))
    if check and proc.returncode != 0:
        raise SystemExit(f"demo step failed with exit code {proc.returncode}")
    return proc.returncode


def run(root: str) -> None:
    click.secho(f"memdir demo: a sample memory in {root}/ (a scratch folder; plain markdown files, look at them "
                "afterwards). Your own memory is not touched.", bold=True)
    _step("1. Create the memory folder")
    _run(root, "init")
    _step("2. Write a few memories, one per topic file, each with a type and a one-line description")
    for path, kind, description, body in MEMORIES:
        _run(root, "write", path, "--type", kind, "--description", description, "--body", body)
    _step("3. MEMORY.md: the index an agent reads every turn, generated from the files")
    _run(root, "index")
    _step("4. Read one topic file just in time")
    _run(root, "read", "feedback/no-dark-themes.md")
    _step("5. Search the files")
    _run(root, "grep", "launch|retr")
    _step("6. Change a memory, then look at its history")
    _run(root, "write", "project/flock.md", "--body",
         "# Flock\n\nRoute planner for delivery vans. Launch moved to 2027-01-10.\nStack: PostgreSQL, FastAPI, React.\n")
    _run(root, "log", "project/flock.md", "--limit", "2", "--patch")
    _step("7. Undo the change: the previous content comes back as a new version")
    _run(root, "undo", "project/flock.md")
    _run(root, "read", "project/flock.md")
    _step("8. Bad input is refused with one line that says why, and nothing is written")
    _run(root, "write", "reference/aws.md", "--body", "key: AKIA" + "Z" * 16, check=False)
    _run(root, "write", "../outside.md", "--body", "escape attempt", check=False)
    _step("Done")
    click.echo(f"The memory is in {root}/: open {root}/MEMORY.md, or try `memdir --root {root} ls`.")
    click.echo("`memdir --help` lists every command.")
