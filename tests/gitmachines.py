"""Machines that share memories through git, for the sync tests: a git of their own and a bare remote.

Git reads nothing of this machine's: HOME and the global config are temporary, the
system config is off, and the identity is set in the environment.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Person", "GIT_AUTHOR_EMAIL": "person@example.org",
    "GIT_COMMITTER_NAME": "Test Person", "GIT_COMMITTER_EMAIL": "person@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def isolate(home: Path, setenv: object) -> None:
    """Point git at an empty HOME and global config (`setenv` is monkeypatch.setenv, or os.environ's __setitem__)."""
    home.mkdir(parents=True, exist_ok=True)
    values = {**GIT_ENV, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "XDG_CONFIG_HOME": str(home / ".config")}
    for key, value in values.items():
        setenv(key, value)  # type: ignore[operator]


def git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, env=os.environ)
    if done.returncode:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(path)], check=True, env=os.environ)
    return path


def remote_texts(remote: Path, ref: str = "refs/heads/main") -> dict[str, str]:
    """Every file of the remote's branch, as text."""
    names = git(remote, "ls-tree", "-r", "-z", "--name-only", ref).split("\0")
    return {n: git(remote, "show", f"{ref}:{n}") for n in names if n}


def every_object(remote: Path) -> str:
    """The text of every object the remote holds, of any commit: where a secret that reached it would be."""
    listed = git(remote, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)").split("\n")
    blobs = [line.split()[0] for line in listed if line.endswith(" blob")]
    return "\n".join(git(remote, "cat-file", "-p", oid) for oid in blobs)


def files(root: Path) -> dict[str, bytes]:
    """The folder as a person sees it: every file but memdir's and git's own data."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not any(part in (".memdir", ".git") for part in rel.split("/")):
            out[rel] = p.read_bytes()
    return out
