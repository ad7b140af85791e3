"""`memdir sync`: one folder memory on every machine, through any git remote.

Not `Memdir.sync`, which journals edits made by hand: this commits, fetches,
merges and pushes. A sync of a memory that is its own git repository:

1. **Commit** what memdir changed since the last sync, from the journal: one
   commit per run of changes by one actor, authored by that actor at the time
   of its last change and listing what it changed; then whatever else changed
   in the folder (MEMORY.md, memdir.toml, other files) in one more commit.
   Edits made by hand are journaled first (`Memdir.sync`).
2. **Fetch** the remote's branch (no lock held: a slow network never holds up a writer).
3. **Merge** (`git merge-tree`, git's own merge), each conflict resolved so
   nothing is lost (`merging`): memdir's stamps by rule, additions on both
   sides kept, a delete against an edit keeps the edit, and a true conflict
   keeps both versions, theirs as a `*.conflict-<commit>.md` sibling. What
   comes in lands through `Memdir` (as `sync:<remote>` in the journal, so `log`
   and `undo` work on it), MEMORY.md is rendered again around the hand-kept
   notes merged, and the merge commit is the folder as it then is.
4. **Push**, after the secret guard read every file the push would send, and
   refused paths that never leave the machine (`.memdir/`, raw session
   transcripts, other tenants' internals). A push the remote rejected because
   it moved is fetched and merged again; one that failed is retried at the
   next sync and shown by `memdir stats` and the page (`status`).

The tenants of a folder (`tenants/T/`, a project's memory by identity among
them) are memories of the same repository: each lands through its own
`Memdir`. Steps 1 and 3 hold every memory's locks; a crash between them leaves
a repository git itself can read, and the next sync commits what it missed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import paths
from ..core import guard
from ..core.memdir import Memdir
from ..core.opening import open as open_memdir
from ..errors import Forbidden, InvalidArgument, InvalidMemory, MemdirError, StoreError
from ..stores.base import Record
from .capture import settings as capture_settings
from .gitrepo import Repo, last_line, quoted, top_of
from .landing import Memories, Synced, is_index, land, resolve

STATE = "gitsync.json"  # in the memory's .memdir/: the journal seq each memory was committed to, the last push
GITIGNORE = ("# memdir: derived data and raw session transcripts never enter git", "/.memdir/", ".memdir/",
             "/sessions/raw/", "/tenants/*/sessions/raw/")
_PRIVATE = re.compile(r"(?:^|/)\.memdir/|^sessions/raw/|^tenants/[^/]+/sessions/raw/")
ACTOR = "sync"  # what comes in is journaled as sync:<remote>
_SCRATCH = "refs/memdir/replay"  # where the journal's commits are built before HEAD moves to them
_FEW = 200  # files git sees changed that are looked at one by one; past this, every file's stat at once
ATTEMPTS = 3  # pushes rejected because the remote moved meanwhile, before giving up until the next sync


@dataclass
class _Place:
    """Where a sync works: the repository (the memory's folder), its branch, and the remote's."""

    repo: Repo
    root: Path
    branch: str
    remote: str
    upstream: str  # the branch on the remote

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.upstream}"


# ---------------------------------------------------------------- the sync


def git_sync(md: Memdir, *, remote: str | None = None, pull: bool = True, push: bool = True,
             timeout: float = 60.0) -> Synced:
    """Commit this memory's changes since the last sync, fetch, merge and push (see the module's notes).

    Refuses, changing nothing, when the memory is not a folder that is its own
    git repository with a remote, or when what it would commit or push holds a
    credential (naming the file and line). A fetch or push that fails raises
    `StoreError` after what could be done locally was done; the state it leaves
    (`status`) says so until a sync succeeds.
    """
    place = _place(md, remote)
    mems = Memories(md, place.root)
    state = _load(place.root)
    done = Synced(place.remote)
    try:
        with mems.locked():
            done.committed += _commit_local(place, mems, state)
        for _ in range(ATTEMPTS):
            theirs = _fetch(place, timeout) if (pull or push) else None
            head = place.repo.rev("HEAD")
            if pull and theirs is not None and not (head and place.repo.ok("merge-base", "--is-ancestor", theirs, head)):
                with mems.locked():
                    done.committed += _commit_local(place, mems, state)
                    _merge(place, mems, theirs, state, done)
            if not push:
                break
            outcome = _push(place, md, theirs, timeout)
            if outcome != "rejected" or not pull:
                if outcome not in ("pushed", "same"):
                    done.error = ("the remote has changes this machine has not merged; sync without --no-pull"
                                  if outcome == "rejected" else outcome)
                done.pushed, done.sent = outcome in ("pushed", "same"), outcome == "pushed"
                break
        else:
            done.error = f"the remote kept moving ({ATTEMPTS} pushes rejected); run `memdir sync` again"
    except MemdirError as e:
        state["error"] = e.message
        if push:
            state["push_error"] = e.message  # what was to go did not: said until a push goes
        _save(place.root, state)
        raise
    finally:
        mems.close()
    now = _now()
    state["error"], state["synced"] = None, now
    if push:  # a pull alone (a session's start) leaves a failed push reported until a push goes
        state["push_error"] = done.error
    if done.pushed:
        state["pushed"] = now
    _save(place.root, state)
    return done


def _place(md: Memdir, remote: str | None) -> _Place:
    root = _root(md)
    top = top_of(root)
    if top is None:
        raise InvalidArgument(f"{root} is not a git repository, so there is nothing to sync with; make it one and "
                              "push it with `memdir sync --init REMOTE` (the URL or path of an empty git repository)")
    _own(root, top)
    repo = Repo(root)
    branch = repo.run("symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.decode().strip()
    if not branch:
        raise InvalidArgument(f"{root} has no branch checked out (a detached HEAD); check one out with `git -C {root} "
                              "switch main`, then sync")
    remotes = repo.out("remote").split()
    configured = repo.run("config", "--get", f"branch.{branch}.remote", check=False).stdout.decode().strip()
    name = remote or configured or ("origin" if "origin" in remotes else remotes[0] if len(remotes) == 1 else "")
    if not remotes:
        raise InvalidArgument(f"{root} has no git remote to sync with; add one with `memdir sync --init REMOTE` "
                              "(a URL, e.g. git@github.com:you/memory.git, or the path of a bare repository)")
    if name not in remotes:
        raise InvalidArgument(f"{root} has no git remote named {name or '(none chosen)'!r}; its remotes are "
                              f"{', '.join(remotes)}: pass one with --remote")
    merge = repo.run("config", "--get", f"branch.{branch}.merge", check=False).stdout.decode().strip()
    return _Place(repo, root, branch, name, merge.removeprefix("refs/heads/") or branch)


def _root(md: Memdir) -> Path:
    root = getattr(md.store, "root", None)
    if not isinstance(root, Path):
        raise InvalidArgument(f"memdir sync works on a folder memory; {md.store.key} is not one (a database or bucket "
                              "is shared by its own server: every machine can open it)")
    if md.principal is not None:
        raise Forbidden("sync works on the whole memory; run it without a scope")
    return root


def _own(root: Path, top: Path) -> None:
    """Refuse a memory that is only a part of a repository: a sync commits and pushes all of its repository."""
    if os.path.realpath(top) == os.path.realpath(root):
        return
    if root.parent.name == paths.TENANTS_DIR and os.path.realpath(top) == os.path.realpath(root.parent.parent):
        raise InvalidArgument(f"{root} is a tenant of the memory at {top}: sync that memory (`memdir --root {top} sync`), "
                              "which carries its tenants")
    raise InvalidArgument(f"{root} is inside the git repository at {top}, not a repository of its own: a sync commits and "
                          "pushes a whole repository, and a project's team memory travels with the project's own commits "
                          "and pull requests; to sync this memory by itself, move it out or run `memdir sync --init REMOTE`")


def init(md: Memdir, url: str, *, remote: str = "origin", timeout: float = 60.0) -> Synced:
    """Make the memory's folder a git repository (if it is not one) with `url` as its remote, then sync.

    The remote may be empty (this machine's memory goes up) or hold the memory
    another machine pushed (the two merge, losing nothing). A `.gitignore`
    keeps memdir's derived data and raw session transcripts out of git.
    """
    root = _root(md)
    if not isinstance(url, str) or not url.strip() or url.startswith("-"):
        raise InvalidArgument(f"--init needs the remote's URL or path, got {url!r}")
    top = top_of(root)
    if top is None:
        Repo(root).run("init", "-q")
        Repo(root).run("symbolic-ref", "HEAD", "refs/heads/main")
    else:
        _own(root, top)
    repo = Repo(root)
    _ignore(root)
    have = repo.run("remote", "get-url", remote, check=False)
    if have.returncode == 0:
        current = have.stdout.decode().strip()
        if current != url:
            raise InvalidArgument(f"{root} already has the remote {remote} at {current}; sync with it (`memdir sync`), "
                                  f"or change it with `git -C {root} remote set-url {remote} {url}`")
    else:
        repo.run("remote", "add", remote, url)
    return git_sync(md, remote=remote, timeout=timeout)


def _ignore(root: Path) -> None:
    """Add memdir's lines to the folder's .gitignore (the ones it has already stay, and so does everything else)."""
    path = root / ".gitignore"
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    have = set(old.splitlines())
    add = [line for line in GITIGNORE if line not in have]
    if add:
        path.write_text(old + ("\n" if old and not old.endswith("\n") else "") + "\n".join(add) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- 1. commit


def _commit_local(place: _Place, mems: Memories, state: dict[str, Any]) -> int:
    """Commit what changed here since the last sync (locks held); returns the commits made."""
    repo = place.repo
    head = repo.rev("HEAD")
    marks: dict[str, int] = state.setdefault("seq", {})
    runs: list[tuple[str, list[Record]]] = []  # (prefix, records of one actor in a row)
    latest: dict[str, int] = {}
    _ignore(place.root)
    dirty = _dirty(repo)
    for prefix, m in sorted(mems.open.items()):
        mine = [p[len(prefix):] for p in dirty if Memories.prefix_of(p) == prefix]
        if mine:  # hand edits journaled, and the index files brought along: they are committed
            m.sync(mine if len(mine) <= _FEW else None, with_index=True)  # many: one stat walk beats reading each
        last = m.history(limit=1)
        latest[prefix] = last[0].seq if last else 0
        since = marks.get(prefix)
        if head is None or since is None or latest[prefix] <= since:
            continue
        for r in _since(m, since):
            if runs and runs[-1][0] == prefix and runs[-1][1][-1].actor == r.actor:
                runs[-1][1].append(r)
            else:
                runs.append((prefix, [r]))
    made, replayed = 0, False
    if runs and head is not None:
        stream = _replay(place, head, runs, mems.open[""].limits.secret_guard)
        if stream is not None:
            repo.run("fast-import", "--quiet", "--force", input=stream)
            tip = repo.rev(_SCRATCH)
            repo.run("update-ref", "-d", _SCRATCH)
            if tip is not None and tip != head:
                repo.run("update-ref", "-m", "memdir sync: the journal's changes", "HEAD", tip, head)
                repo.run("reset", "-q")
                made, replayed = len(runs), True
    if dirty or replayed:
        made += _commit_rest(place, mems, "first" if head is None else "amend" if replayed else "rest")
    marks.update(latest)
    return made


def _dirty(repo: Repo) -> list[str]:
    """The files git sees differ from the last commit (changed, gone, new): where an edit by hand can be, found
    from git's index instead of a stat of every file against memdir's catalog (which a hook would pay for)."""
    out = repo.run("status", "--porcelain", "-z", "--untracked-files=all", "--no-renames").stdout.decode(
        "utf-8", "surrogateescape")
    return [entry[3:] for entry in out.split("\0") if len(entry) > 3]


def _since(m: Memdir, seq: int) -> list[Record]:
    """The journal's records after `seq`, oldest first."""
    limit = 256
    while True:
        records = m.history(limit=limit)
        if len(records) < limit or records[-1].seq <= seq:
            return [r for r in reversed(records) if r.seq > seq]
        limit *= 4


def _replay(place: _Place, head: str, runs: list[tuple[str, list[Record]]], secrets: bool) -> bytes | None:
    """A fast-import stream of one commit per run of one actor's changes, or None when a change of them held a
    credential (it then goes as the folder is now, in one commit, if the guard lets it)."""
    name, email = _ident(place.repo)
    now = int(dt.datetime.now(dt.UTC).timestamp())
    out: list[bytes] = []
    for prefix, records in runs:
        body: list[bytes] = []
        what: list[str] = []
        for r in records:
            for path, data in _effects(prefix, r):
                if _PRIVATE.search(path):
                    continue
                if data is None:
                    body.append(f"D {quoted(path)}\n".encode())
                    continue
                if secrets and (guard.find_secret(data.decode("utf-8", "replace")) or guard.find_secret(path)):
                    return None
                body += [f"M 100644 inline {quoted(path)}\n".encode(), f"data {len(data)}\n".encode(), data, b"\n"]
            what.append(f"{r.op} {prefix}{r.path}" + (f" -> {prefix}{r.dest}" if r.dest else ""))
        if not body:
            continue  # only what never leaves the machine
        actor = _ident_part(records[-1].actor)
        title = f"{actor}: {what[0]}" if len(what) == 1 else f"{actor}: {len(what)} changes"
        message = (title + "\n\n" + "\n".join(what[:200]) + ("\n..." if len(what) > 200 else "") + "\n").encode()
        parent = [] if out else [f"from {head}\n".encode()]  # the first grows from HEAD, each next from the one before
        out += [f"commit {_SCRATCH}\n".encode(),
                f"author {actor} <{email}> {_epoch(records[-1].time, now)} +0000\n".encode(),
                f"committer {_ident_part(name)} <{email}> {now} +0000\n".encode(),
                f"data {len(message)}\n".encode(), message, *parent]
        out += body
        out.append(b"\n")
    return b"".join(out) if out else None


def _effects(prefix: str, r: Record) -> list[tuple[str, bytes | None]]:
    """What one journal record did to the repository's files: (path, new bytes, or None for gone)."""
    if r.dest is not None:
        return [(prefix + r.path, None), (prefix + r.dest, r.new)]
    return [(prefix + r.path, r.new)]


def _commit_rest(place: _Place, mems: Memories, why: str) -> int:
    """Commit whatever else differs from HEAD in the folder (index files, settings, files memdir does not
    journal, or everything at a first sync), after the guard read it; returns 1 if a commit was made."""
    repo = place.repo
    staged = _stage(repo, place.root)
    if not staged:
        return 0
    if mems.open[""].limits.secret_guard:
        for path in staged:
            full = place.root / path
            if full.is_file() and not full.is_symlink():
                found = guard.find_secret(full.read_bytes().decode("utf-8", "replace"))
                if found is not None or guard.find_secret(path) is not None:
                    repo.run("reset", "-q")
                    kind, line = found or (guard.find_secret(path) or ("a credential", 0))
                    where = f"line {line}" if found else "its name"
                    raise InvalidMemory(f"{path}: {where} holds what looks like {kind}; nothing was committed or pushed: "
                                        "remove it (a memory must not hold credentials), then sync again", path=path)
    env = _identity_env(repo)
    if why == "amend" and all(is_index(p) for p in staged):  # the index files the journal's last changes rendered
        repo.run("commit", "-q", "--no-verify", "--amend", "--no-edit", env=env)
        return 0
    message = (f"memdir: the memory as it was at its first sync ({len(staged)} files)" if why == "first" else
               f"memdir: {len(staged)} file{'s' if len(staged) != 1 else ''} memdir does not journal (index files, "
               "settings, files of other kinds)") + "\n\n" + "\n".join(staged[:200]) + "\n"
    repo.run("commit", "-q", "--no-verify", "-F", "-", input=message.encode(), env=env)
    return 1


def _stage(repo: Repo, root: Path) -> list[str]:
    """Stage the folder as it is (what .gitignore leaves out stays out, and so does what never leaves the machine,
    whatever .gitignore says); the paths staged."""
    _ignore(root)
    repo.run("add", "-A", "--", ".")
    staged = _staged(repo)
    private = [p for p in staged if _PRIVATE.search(p)]
    if private:
        repo.run("reset", "-q", "--", *(f":(literal){p}" for p in private))
        staged = _staged(repo)
    return staged


def _staged(repo: Repo) -> list[str]:
    out = repo.run("diff", "--cached", "--name-only", "-z", "--no-renames").stdout.decode("utf-8", "surrogateescape")
    return [p for p in out.split("\0") if p]


def _ident(repo: Repo) -> tuple[str, str]:
    """(name, email) git commits as here; memdir's own when git has none configured."""
    got = repo.run("var", "GIT_COMMITTER_IDENT", check=False)
    m = re.match(r"(.*?) <(.*?)>", got.stdout.decode("utf-8", "replace")) if got.returncode == 0 else None
    if m is None or not m.group(1):
        return "memdir", "memdir@localhost"
    return m.group(1), m.group(2)


def _identity_env(repo: Repo) -> dict[str, str]:
    """An identity for `git commit` where git has none configured (a fresh machine), else nothing."""
    if repo.run("var", "GIT_COMMITTER_IDENT", check=False).returncode == 0:
        return {}
    return {"GIT_AUTHOR_NAME": "memdir", "GIT_AUTHOR_EMAIL": "memdir@localhost",
            "GIT_COMMITTER_NAME": "memdir", "GIT_COMMITTER_EMAIL": "memdir@localhost"}


def _ident_part(actor: str) -> str:
    return re.sub(r"[<>\n\r]", "_", actor).strip() or "memdir"


def _epoch(stamp: str, default: int) -> int:
    try:
        return int(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return default


# ---------------------------------------------------------------- 2. fetch


def _fetch(place: _Place, timeout: float) -> str | None:
    """Fetch the remote's branch; its commit, or None when the remote does not have it yet (an empty remote)."""
    done = place.repo.run("fetch", "--quiet", "--no-tags", place.remote,
                          f"+refs/heads/{place.upstream}:{place.tracking}", check=False, timeout=timeout)
    if done.returncode != 0:
        why = last_line(done.stderr)
        if "couldn't find remote ref" in why:
            return None
        raise StoreError(f"could not fetch from {place.remote}: {why}; nothing was lost: what is committed here goes "
                         "with the next sync")
    return place.repo.rev(place.tracking)


# ---------------------------------------------------------------- 3. merge


def _merge(place: _Place, mems: Memories, theirs: str, state: dict[str, Any], done: Synced) -> None:
    """Bring the remote's commit in (locks held): land its changes through memdir, then commit the folder."""
    repo = place.repo
    ours = repo.rev("HEAD")
    if ours is not None and (ours == theirs or repo.ok("merge-base", "--is-ancestor", theirs, ours)):
        return
    base = None
    if ours is not None:
        got = repo.run("merge-base", ours, theirs, check=False)
        base = got.stdout.decode().split()[0] if got.returncode == 0 and got.stdout.strip() else None
    forward = ours is None or base == ours
    if forward:
        target = repo.out("rev-parse", f"{theirs}^{{tree}}")
        indexes: set[str] = set()
    else:
        assert ours is not None
        target, indexes = resolve(place.repo, ours, theirs, done)
    _refuse_crafted(repo, target, theirs)
    land(place.repo, place.root, mems, ours, theirs, base, target, indexes, done, f"{ACTOR}:{place.remote}")
    if forward:
        repo.run("update-ref", "-m", f"memdir sync: fast-forward to {place.remote}", "HEAD", theirs, *([ours] if ours else []))
        repo.run("reset", "-q")
        _commit_rest(place, mems, "rest")
    else:
        assert ours is not None
        _stage(repo, place.root)
        tree = repo.out("write-tree")
        title = f"memdir: merge {place.remote}/{place.upstream}"
        lines = [f"conflict: {p} (the other version: {s})" for p, s in done.conflicts] + [f"kept: {k}" for k in done.kept]
        message = title + ("\n\n" + "\n".join(lines) if lines else "") + "\n"
        commit = repo.out("commit-tree", tree, "-p", ours, "-p", theirs, "-F", "-", input=message.encode(),
                          env=_identity_env(repo))
        repo.run("update-ref", "-m", title, "HEAD", commit, ours)
    marks = state.setdefault("seq", {})
    for prefix, m in mems.open.items():
        last = m.history(limit=1)
        marks[prefix] = last[0].seq if last else 0


def _refuse_crafted(repo: Repo, tree: str, theirs: str) -> None:
    """Refuse a merge whose tree holds a path git would never check out (`.git/`, `..`): a crafted remote."""
    names = repo.run("ls-tree", "-r", "-z", "--name-only", tree).stdout.decode("utf-8", "surrogateescape").split("\0")
    for name in names:
        if any(part in ("", ".", "..") or part.casefold() == ".git" for part in name.split("/")) and name:
            raise StoreError(f"the remote's commit {theirs[:12]} holds the path {name!r}, which git never writes "
                             "into a folder (a crafted repository?); nothing was merged: remove it from the remote")


# ---------------------------------------------------------------- 4. push


def _push(place: _Place, md: Memdir, theirs: str | None, timeout: float) -> str:
    """Push HEAD after the guard read what goes; "pushed", "same" (nothing to send), "rejected" (the remote moved)
    or why it failed."""
    repo = place.repo
    head = repo.rev("HEAD")
    if head is None or head == theirs:
        return "same"  # nothing was ever committed, or the remote has it all
    check_outgoing(repo, head, theirs, place.remote, secrets=md.limits.secret_guard)
    done = repo.run("push", "--porcelain", "-u", place.remote, f"HEAD:refs/heads/{place.upstream}", check=False,
                    timeout=timeout)
    if done.returncode == 0:
        return "pushed"
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    if "[rejected]" in said or "non-fast-forward" in said or "fetch first" in said:
        return "rejected"
    return f"the push to {place.remote} failed: {last_line(done.stderr or done.stdout)}; it is retried at the next sync"


def check_outgoing(repo: Repo, head: str, theirs: str | None, remote: str, *, secrets: bool = True) -> None:
    """Refuse (InvalidMemory) when a file the push would send is one that never leaves this machine or holds
    a credential, naming the file, its line and the commit that brought it."""
    since = [f"^{theirs}"] if theirs else ["--not", f"--remotes={remote}"]
    listed = repo.run("rev-list", "--objects", "--filter=object:type=blob", head, *since).stdout.decode(
        "utf-8", "surrogateescape")
    blobs: dict[str, str] = {}
    for row in listed.splitlines():
        oid, _, path = row.partition(" ")
        if path:
            blobs.setdefault(oid, path)
    for oid, path in blobs.items():
        if _PRIVATE.search(path):
            raise InvalidMemory(f"{path} is memdir's private data or a raw session transcript, committed in "
                                f"{_commit_of(repo, oid, head, since)}; it never leaves this machine: nothing was pushed. "
                                f"Take it out of that commit (`git -C {repo.top} rm --cached` and amend), then sync",
                                path=path)
    if not secrets:
        return
    contents = repo.blobs(list(blobs))
    for oid, data in contents.items():
        path = blobs[oid]
        found = guard.find_secret(data.decode("utf-8", "replace")) or guard.find_secret(path)
        if found is not None:
            kind, line = found
            raise InvalidMemory(f"{path}: line {line} holds what looks like {kind} (commit "
                                f"{_commit_of(repo, oid, head, since)}); nothing was pushed: remove it from that commit "
                                "(a memory must not hold credentials; `git rebase -i` or `git commit --amend`), then "
                                "sync again", path=path)


def _commit_of(repo: Repo, oid: str, head: str, since: list[str]) -> str:
    got = repo.run("log", "--format=%h", "-1", f"--find-object={oid}", head, *since, check=False)
    return got.stdout.decode().strip() or "an unpushed commit"


# ---------------------------------------------------------------- state


def _load(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / paths.INTERNAL_DIR / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(root: Path, state: dict[str, Any]) -> None:
    folder = root / paths.INTERNAL_DIR
    fd, tmp = tempfile.mkstemp(prefix=".gitsync-", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(state, f, indent=1, sort_keys=True)
    os.replace(tmp, folder / STATE)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status(md: Memdir) -> dict[str, Any] | None:
    """The last sync of a folder memory, for `memdir stats` and the page: when, whether its push went, the error
    that stopped it (retried at the next sync), and how many commits wait to be pushed; None if never synced."""
    root = getattr(md.store, "root", None)
    if not isinstance(root, Path) or not (root / paths.INTERNAL_DIR / STATE).is_file():
        return None
    state = _load(root)
    out = {"synced": state.get("synced"), "pushed": state.get("pushed"),
           "error": state.get("error") or state.get("push_error"), "waiting": None}
    top = top_of(root) if shutil.which("git") else None
    if top is not None:
        repo = Repo(root)
        with contextlib.suppress(StoreError):
            branch = repo.out("symbolic-ref", "-q", "--short", "HEAD")
            remote = repo.run("config", "--get", f"branch.{branch}.remote", check=False).stdout.decode().strip()
            merge = repo.run("config", "--get", f"branch.{branch}.merge", check=False).stdout.decode().strip()
            if remote and merge and repo.rev("HEAD"):
                tracking = f"refs/remotes/{remote}/{merge.removeprefix('refs/heads/')}"
                since = [f"^{tracking}"] if repo.rev(tracking) else []
                out["waiting"] = int(repo.out("rev-list", "--count", "HEAD", *since))
    return out


# ---------------------------------------------------------------- automatic, where it is safe

SETTINGS = {"auto": False, "pull_timeout": 2.0, "push_timeout": 60.0}  # memdir.toml [sync]


def settings(md: Memdir) -> dict[str, Any]:
    """`[sync]` of the memory's memdir.toml: `auto` (pull when a session starts, push when it ends), the seconds a
    session's pull may wait (`pull_timeout`) and the background push (`push_timeout`)."""
    got = dict(SETTINGS)
    for key, value in capture_settings(md, "sync").items():
        if key not in SETTINGS:
            raise InvalidArgument(f"memdir.toml [sync]: unknown setting {key!r}; known: {', '.join(SETTINGS)}")
        if key == "auto" and not isinstance(value, bool):
            raise InvalidArgument(f"memdir.toml [sync] auto must be true or false, got {value!r}")
        if key != "auto" and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
            raise InvalidArgument(f"memdir.toml [sync] {key} must be a number of seconds above 0, got {value!r}")
        got[key] = value
    return got


def sync_root(md: Memdir) -> Path | None:
    """The folder a sync of this memory runs on: its own, or for a tenant the memory that holds it; None when
    neither is its own git repository."""
    root = getattr(md.store, "root", None)
    if not isinstance(root, Path) or shutil.which("git") is None:
        return None
    top = top_of(root)
    if top is None:
        return None
    for candidate in (root, root.parent.parent if root.parent.name == paths.TENANTS_DIR else None):
        if candidate is not None and os.path.realpath(candidate) == os.path.realpath(top):
            return candidate
    return None


def before_session(md: Memdir) -> str | None:
    """SessionStart, with `[sync] auto`: bring in what other machines pushed, waiting at most `pull_timeout` for
    the network (a slow or absent one costs the session that much, never more); nothing is pushed. Returns why
    it did not, if it did not; the error stays for `memdir stats`."""
    cfg = settings(md)
    root = sync_root(md) if cfg["auto"] else None
    if root is None:
        return None
    own = os.path.realpath(root) == os.path.realpath(getattr(md.store, "root", ""))
    holder = md if own else open_memdir(root, actor=md.actor)
    try:
        git_sync(holder, push=False, timeout=float(cfg["pull_timeout"]))
        return None
    except MemdirError as e:
        return e.message
    finally:
        if not own:
            holder.close()


def after_session(md: Memdir) -> subprocess.Popen[bytes] | None:
    """SessionEnd, with `[sync] auto`: commit and push in a process of its own, so the session ends now; its
    output goes to .memdir/sync.log, a failure to `memdir stats`, and the next sync retries it."""
    cfg = settings(md)
    root = sync_root(md) if cfg["auto"] else None
    if root is None:
        return None
    log = open(root / paths.INTERNAL_DIR / "sync.log", "ab")  # noqa: SIM115 - the child keeps it open
    try:
        return subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(root), "sync", "--timeout",
                                 str(cfg["push_timeout"])], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True, env={**os.environ, "MEMDIR_ACTOR": md.actor})
    finally:
        log.close()
