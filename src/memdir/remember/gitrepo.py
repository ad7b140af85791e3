"""A git repository through the `git` executable: what `gitsync` and `projects` ask of git, one subprocess each.

git runs without a terminal: it never asks for a password or a host key (a hook
or a background sync would wait forever), and its messages are in English so a
refusal can quote them. A failure is one `StoreError` line naming the command
and git's own last line; a command past its timeout is stopped and said so.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import StoreError

_BYTES = ("-c", "core.autocrlf=false", "-c", "core.safecrlf=false")  # a memory's bytes go as they are: CRLF stays CRLF
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's tree of nothing (a first commit's parent side)


def executable() -> str:
    found = shutil.which("git")
    if found is None:
        raise StoreError("git is not installed (no `git` on PATH); install git to sync a memory")
    return found


def quiet_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment git runs in: the caller's, with no prompts and messages in English."""
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANGUAGE": "C", "GIT_MERGE_AUTOEDIT": "no"})
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")  # an ssh remote asks nothing either
    if extra:
        env.update(extra)
    return env


class Repo:
    """One work tree; `run` is `git -C top ARGS`."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.git = executable()

    def run(self, *args: str, input: bytes | None = None, timeout: float | None = 120, check: bool = True,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        cmd = [self.git, "-C", str(self.top), *_BYTES, *args]
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=quiet_env(env),
                                    start_new_session=True)  # its own group: a timeout stops ssh and helpers too
        except OSError as e:
            raise StoreError(f"git could not be run ({e.strerror or e}); check that git is installed") from None
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise StoreError(f"git {args[0]} did not finish within {timeout:g} s (a slow or unreachable remote?); "
                             "nothing was lost: run `memdir sync` again later") from None
        done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        if check and done.returncode != 0:
            raise StoreError(f"git {args[0]} failed: {last_line(done.stderr or done.stdout)}")
        return done

    def out(self, *args: str, input: bytes | None = None, timeout: float | None = 120,
            env: Mapping[str, str] | None = None) -> str:
        """The command's standard output as text, without its last newline."""
        return self.run(*args, input=input, timeout=timeout, env=env).stdout.decode("utf-8", "replace").rstrip("\n")

    def ok(self, *args: str, timeout: float | None = 120) -> bool:
        """Whether the command succeeds (a question to git: is-ancestor, a ref that may not exist)."""
        return self.run(*args, check=False, timeout=timeout).returncode == 0

    def rev(self, name: str) -> str | None:
        """The commit `name` points to, or None."""
        done = self.run("rev-parse", "-q", "--verify", f"{name}^{{commit}}", check=False)
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    def blobs(self, names: Sequence[str]) -> dict[str, bytes]:
        """The contents of many objects (`oid` or `commit:path`) in one `cat-file --batch`; a name git has no
        object for is left out."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        data = self.run("cat-file", "--batch", input="".join(f"{o}\n" for o in wanted).encode()).stdout
        out, pos = {}, 0
        for name in wanted:
            end = data.index(b"\n", pos)
            head = data[pos:end].split()
            if head[-1:] in ([b"missing"], [b"ambiguous"]) or len(head) < 3:
                pos = end + 1
                continue
            size = int(head[2])
            out[name] = data[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return out

    def store_blob(self, data: bytes) -> str:
        return self.out("hash-object", "-w", "--stdin", input=data)


def top_of(folder: Path) -> Path | None:
    """The top of the git work tree `folder` is in, or None when it is in none."""
    if not folder.is_dir():
        return None
    done = subprocess.run([executable(), "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                          env=quiet_env(), check=False, timeout=30)
    if done.returncode != 0:
        return None
    return Path(done.stdout.decode("utf-8", "surrogateescape").rstrip("\n"))


def last_line(raw: bytes) -> str:
    """What git said went wrong, on one line: its first fatal or error line, else its last (hints dropped)."""
    lines = [x.strip() for x in raw.decode("utf-8", "replace").splitlines() if x.strip() and not x.startswith("hint:")]
    worst = [x for x in lines if x.startswith(("fatal:", "error:"))]
    return (worst or lines or ["no message"])[0 if worst else -1][:300]


def quoted(path: str) -> str:
    """A path as git's fast-import reads one: C-style quoted, so spaces, quotes and newlines cannot break a line."""
    out = ['"']
    for ch in path:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
