"""`memdir sync`: a memory of 1,000 and 10,000 files on two machines, 10 changes, and its cost in a hook (issue 36).

    python bench/sync.py                       # 1,000 and 10,000 files
    python bench/sync.py --sizes 1000 --runs 5

For each size: machine a writes N topic files (about 400 bytes each, in 50 folders) and pushes them to a bare
repository on the same disk (`sync --init`, the first sync); machine b joins it (`sync --init`: all N files
land through memdir). Then, each run, a makes 10 changes (8 writes, a rename, a delete) and syncs them out,
b syncs them in, and b syncs again with nothing new. The hook rows run `memdir hook claude-code` in a fresh
process, as Claude Code does, on b with `[sync] auto` off and on: SessionStart (with nothing to pull, and with
10 changes to pull) and SessionEnd (which starts the push in the background and returns); then SessionStart and
UserPromptSubmit in a project without a team memory and with one of 300 files (recall reads both). Medians of --runs, in
ms of wall time and of CPU time (this process's and its children's, git's included): on a shared machine the
CPU column is the one to compare. The hooks run with MEMDIR_RESIDENT=off, each in a process of its own, so the
CPU they cost is counted here (a resident process saves the import, with auto sync on or off alike). Git reads an empty HOME and no system config. Not a test: run it, read the
table, paste it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from timing import summary  # noqa: E402 - bench/timing.py, beside this script

import memdir  # noqa: E402
from memdir.remember import gitsync  # noqa: E402

BODY = "A fact worth keeping, written as a person would write it down for later. " * 5 + "\n"


def isolate(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update({"HOME": str(home), "MEMDIR_RESIDENT": "off", "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
                       "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.org",
                       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.org"})


def build(root: Path, n: int) -> memdir.Memdir:
    md = memdir.open(root, actor="cli:a")
    ops = [memdir.Op.write(f"f{i % 50:02d}/note-{i:05d}.md", f"---\ndescription: note {i}\n---\n{BODY}", as_written=True)
           for i in range(n)]
    for start in range(0, n, 500):
        md.apply(ops[start:start + 500])
    return md


def ten_changes(md: memdir.Memdir, run: int) -> None:
    for i in range(8):
        md.write(f"f{i:02d}/note-{i:05d}.md", f"changed in run {run}\n{BODY}")
    md.rename(f"f10/note-{10 + 50 * run:05d}.md", f"f10/moved-{run}.md")
    md.delete(f"f11/note-{11 + 50 * run:05d}.md")


def cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def clock(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one call."""
    start, used = time.perf_counter(), cpu()
    fn()
    return (time.perf_counter() - start) * 1000, (cpu() - used) * 1000


def hook(root: Path, event: str, cwd: Path, **extra: str) -> tuple[float, float]:
    payload = json.dumps({"hook_event_name": event, "source": "startup", "session_id": "bench", "cwd": str(cwd),
                          "transcript_path": str(cwd / "none.jsonl"), **extra})
    return clock(lambda: subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "hook", "claude-code"],
                                        input=payload.encode(), capture_output=True, check=False, cwd=cwd))


def wait_for_push(root: Path) -> None:
    """The background push of a SessionEnd: done when its log says so (a bench may wait; a test may not)."""
    log = root / ".memdir" / "sync.log"
    for _ in range(600):
        if log.is_file() and any(w in log.read_text() for w in ("pushed to", "has it all already", "not pushed")):
            log.unlink()
            return
        time.sleep(0.1)


def measure(tmp: Path, n: int, runs: int) -> list[tuple[str, float, float]]:
    """(what, median wall ms, median CPU ms) of each step."""
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(remote)], check=True)
    a = build(tmp / "a", n)
    rows = [("first sync of a (commit all, push)", *clock(lambda: gitsync.init(a, str(remote))))]
    b = memdir.open(tmp / "b", actor="cli:b")
    rows.append(("b joins (fetch, land all through memdir)", *clock(lambda: gitsync.init(b, str(remote)))))
    out: list[tuple[float, float]] = []
    inn, idle, start_off, start_on, start_pull, end_off, end_on = ([] for _ in range(7))
    for run in range(runs):
        ten_changes(a, run)
        out.append(clock(lambda: gitsync.git_sync(a)))
        inn.append(clock(lambda: gitsync.git_sync(b)))
        idle.append(clock(lambda: gitsync.git_sync(b)))
    (tmp / "b" / "memdir.toml").unlink(missing_ok=True)
    for _ in range(runs):
        start_off.append(hook(tmp / "b", "SessionStart", tmp))
        end_off.append(hook(tmp / "b", "SessionEnd", tmp))
    (tmp / "b" / "memdir.toml").write_text("[sync]\nauto = true\npull_timeout = 2\n", encoding="utf-8")
    gitsync.git_sync(b)
    for run in range(runs):
        start_on.append(hook(tmp / "b", "SessionStart", tmp))
        ten_changes(a, runs + run)
        gitsync.git_sync(a)
        start_pull.append(hook(tmp / "b", "SessionStart", tmp))
        end_on.append(hook(tmp / "b", "SessionEnd", tmp))
        wait_for_push(tmp / "b")
    rows += [(name, summary([w for w, _ in samples])[0], summary([c for _, c in samples])[0]) for name, samples in (
        ("a syncs out 10 changes", out), ("b syncs in 10 changes", inn), ("b syncs with nothing new", idle),
        ("hook SessionStart, auto off", start_off), ("hook SessionStart, auto on, nothing to pull", start_on),
        ("hook SessionStart, auto on, 10 changes to pull", start_pull), ("hook SessionEnd, auto off", end_off),
        ("hook SessionEnd, auto on (push in background)", end_on))]
    a.close()
    b.close()
    return rows + team(tmp, tmp / "b", runs)


def team(tmp: Path, personal: Path, runs: int, files: int = 300) -> list[tuple[str, float, float]]:
    """The hooks run in a project without a team memory, then with one of `files` files (recall reads both)."""
    project = tmp / "project"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    asked = {"prompt": "which folder holds the note about things worth keeping"}
    rows = []
    for label in ("no team memory", f"team memory of {files} files"):
        if label != "no team memory":
            build(project / "team-memory", files).close()
        start = [hook(personal, "SessionStart", project) for _ in range(runs)]
        prompt = [hook(personal, "UserPromptSubmit", project, **asked) for _ in range(runs)]
        rows += [(f"hook {event}, {label}", summary([w for w, _ in samples])[0],
                  summary([c for _, c in samples])[0]) for event, samples in (("SessionStart", start),
                                                                               ("UserPromptSubmit", prompt))]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        isolate(Path(tmp) / "home")
        print(f"{'files':>6}  {'what':<48} {'wall ms':>8} {'cpu ms':>7}")
        for n in (int(x) for x in args.sizes.split(",")):
            where = Path(tmp) / str(n)
            where.mkdir()
            for name, wall, used in measure(where, n, args.runs):
                print(f"{n:>6}  {name:<48} {wall:>8.0f} {used:>7.0f}", flush=True)


if __name__ == "__main__":
    main()
