"""What a sync brings in, landed through memdir: conflicts resolved into a tree, then that tree's changes written.

`resolve` takes git's merge of two commits (`git merge-tree`: renames, moves
and clean merges are git's) and settles every path git left in conflict so
that nothing is lost (`merging`). `land` writes the difference between this
machine's commit and the merged tree through each memory's `Memdir`, under the
actor `sync:<remote>`, so the journal records what came in (`memdir log`,
`undo`): topic files byte for byte (`as_written`), a rename as a rename, the
notes a person keeps in a MEMORY.md merged and kept around an index memdir
renders again. A file memdir refuses to write (broken frontmatter, a
credential, a name it cannot serve) still lands, as git would leave it, and is
journaled as a hand edit, so the folder always holds the merge.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import paths
from ..core import index
from ..core.memdir import Memdir
from ..core.opening import open as open_memdir
from ..core.ops import Op
from ..errors import InvalidPath, MemdirError, StoreError
from ..stores.locations import TENANT
from . import merging
from .gitrepo import EMPTY_TREE, Repo

_STAGE = re.compile(rb"(\d{6}) ([0-9a-f]{40,64}) ([123])\t(.*)", re.S)
_ZERO = "0" * 40


@dataclass
class Synced:
    """What one sync did: commits made here, changes brought in, conflicts kept, whether the push went."""

    remote: str
    committed: int = 0
    brought: list[str] = field(default_factory=list)  # paths (in the repository) that came in changed
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (path, the other side's sibling), in the repository
    kept: list[str] = field(default_factory=list)  # edits kept over a delete on the other side, one line each
    held: list[str] = field(default_factory=list)  # incoming files memdir refused to write: landed as hand edits
    pushed: bool = False  # the remote has everything committed here (sent now, or already)
    sent: bool = False  # commits went to the remote in this sync
    error: str | None = None  # why the push did not happen (retried at the next sync)

    def lines(self) -> list[str]:
        n, b = self.committed, len(self.brought)
        out = [f"committed {n} change{'s' if n != 1 else ''} here" if n else "nothing new here to commit",
               f"brought in {b} changed file{'s' if b != 1 else ''} from {self.remote}" if b else f"nothing new from {self.remote}"]
        out += [f"conflict: {p} changed on both sides; the other version is {s} (`memdir conflicts`)" for p, s in self.conflicts]
        out += [f"kept: {k}" for k in self.kept]
        out += [f"held: {h}" for h in self.held]
        out.append(f"pushed to {self.remote}" if self.sent else f"{self.remote} has it all already" if self.pushed
                   else f"not pushed: {self.error or 'asked not to'}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "committed": self.committed, "brought": self.brought,
                "conflicts": [{"path": p, "other": s} for p, s in self.conflicts], "kept": self.kept, "held": self.held,
                "pushed": self.pushed, "sent": self.sent, "error": self.error}


class Memories:
    """The root memory and its tenants (`tenants/T/`), by their prefix in the repository; tenants opened as needed."""

    def __init__(self, md: Memdir, root: Path) -> None:
        self.root = root
        self.open: dict[str, Memdir] = {"": md}
        self._mine: list[Memdir] = []
        folder = root / paths.TENANTS_DIR
        for t in sorted(os.listdir(folder)) if folder.is_dir() else []:
            if TENANT.match(t) and (folder / t).is_dir():
                self.get(f"{paths.TENANTS_DIR}/{t}/")

    def get(self, prefix: str) -> Memdir:
        if prefix not in self.open:
            m = open_memdir(self.root, tenant=prefix.split("/")[1], actor=self.open[""].actor)
            self._mine.append(m)
            self.open[prefix] = m
        return self.open[prefix]

    @staticmethod
    def prefix_of(path: str) -> str:
        """The memory a repository path belongs to: a tenant's folder, or the root ("")."""
        parts = path.split("/")
        if len(parts) > 2 and parts[0] == paths.TENANTS_DIR and TENANT.match(parts[1]):
            return f"{parts[0]}/{parts[1]}/"
        return ""

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for prefix in sorted(self.open):
                stack.enter_context(self.open[prefix].locked())
            yield

    def close(self) -> None:
        for m in self._mine:
            m.close()


def is_index(path: str) -> bool:
    return path.rpartition("/")[2].casefold() == paths.INDEX_NAME.casefold()


# ---------------------------------------------------------------- conflicts into a tree


def resolve(repo: Repo, ours: str, theirs: str, done: Synced) -> tuple[str, set[str]]:
    """git's merge of `ours` and `theirs` with every conflict settled: (the tree, the MEMORY.md paths whose kept
    notes `land` must merge). A true conflict keeps ours at the path and theirs as a marked sibling."""
    got = repo.run("merge-tree", "--write-tree", "-z", "--allow-unrelated-histories", ours, theirs, check=False)
    if got.returncode not in (0, 1):
        raise StoreError(f"git merge-tree could not merge {theirs[:12]} into {ours[:12]}; nothing was changed")
    fields = got.stdout.split(b"\0")
    tree = fields[0].decode()
    stages: dict[str, dict[int, tuple[str, str]]] = {}
    for f in fields[1:]:
        m = _STAGE.fullmatch(f)
        if m is None:
            break
        stages.setdefault(m.group(4).decode("utf-8", "surrogateescape"), {})[int(m.group(3))] = (m.group(1).decode(),
                                                                                               m.group(2).decode())
    indexes: set[str] = set()
    if not stages:
        return tree, indexes
    contents = repo.blobs([oid for st in stages.values() for _, oid in st.values()])
    taken = set(repo.run("ls-tree", "-r", "-z", "--name-only", tree).stdout.decode("utf-8", "surrogateescape").split("\0"))
    entries: list[bytes] = []

    def put(path: str, entry: tuple[str, str] | None) -> None:
        mode, oid = entry or ("0", _ZERO)
        entries.append(f"{mode} {oid}\t{path}\0".encode("utf-8", "surrogateescape"))

    for path, st in sorted(stages.items()):
        b, o, t = st.get(1), st.get(2), st.get(3)
        if is_index(path):
            indexes.add(path)
            put(path, o or t)
        elif o and t:
            merged = (merging.merge_memory(repo.git, path, contents.get(b[1]) if b else None, contents[o[1]], contents[t[1]])
                      if path.endswith(".md") else None)
            if merged is not None:
                put(path, (o[0], repo.store_blob(merged)))
                continue
            put(path, o)
            other = merging.sibling(path, theirs[:7], taken)
            taken.add(other)
            prefix = Memories.prefix_of(path)
            put(other, (t[0], repo.store_blob(merging.marked(contents[t[1]], other, path[len(prefix):]))))
            done.conflicts.append((path, other))
        elif o:
            put(path, o)
            done.kept.append(f"{path}: deleted on the other side and changed here; the change is kept")
        elif t:
            put(path, t)
            done.kept.append(f"{path}: deleted here and changed on the other side; the change is kept")
        else:
            put(path, None)
    with tempfile.TemporaryDirectory(prefix="memdir-sync-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        repo.run("read-tree", tree, env=env)
        repo.run("update-index", "-z", "--index-info", input=b"".join(entries), env=env)
        return repo.out("write-tree", env=env), indexes


# ---------------------------------------------------------------- landing a tree's changes


@dataclass
class _Work:
    """One memory's share of the changes: memdir's ops (with the bytes each brings) and the other files."""

    ops: list[Op] = field(default_factory=list)
    data: dict[str, bytes | None] = field(default_factory=dict)  # memory path -> bytes (None: gone), for a fallback
    files: dict[str, tuple[bytes | None, str]] = field(default_factory=dict)  # repository path -> (bytes, mode)


def land(repo: Repo, root: Path, mems: Memories, ours: str | None, theirs: str, base: str | None, target: str,
         indexes: set[str], done: Synced, actor: str) -> None:
    """Write what differs between `ours` and the tree `target` through memdir (the memories' locks held)."""
    changes = _diff(repo, f"{ours}^{{tree}}" if ours else EMPTY_TREE, target)
    contents = repo.blobs([oid for _, _, _, oid, _ in changes if oid != _ZERO])
    work: dict[str, _Work] = {}
    for status, old, new, oid, mode in changes:
        indexes.update(p for p in (old, new) if is_index(p))
        if is_index(new) and (old == new or is_index(old)):
            continue  # an index is rendered again here, around the notes merged
        done.brought.append(new)
        data = None if status == "D" else contents.get(oid)
        prefix = Memories.prefix_of(new)
        a, b = _topic(old[len(prefix):]), _topic(new[len(prefix):])
        if status == "R100" and prefix == Memories.prefix_of(old) and a and b and data is not None:
            w = work.setdefault(prefix, _Work())
            w.ops.append(Op.rename(a, b))  # moved as it is: memdir journals a rename
            w.data[b] = data
            continue
        if status[0] == "R" and not is_index(old):
            _one(work, old, None, "000000")
        _one(work, new, data, mode)
    for prefix, w in sorted(work.items()):
        m = mems.get(prefix)
        view = m.as_person().acting(actor)
        view.limits = replace(view.limits, writes_per_minute=0)
        changed = _apply(view, root, prefix, w, done)
        for path, (data, mode) in w.files.items():
            _write_file(root, path, data, mode, done)
        for path in sorted(indexes):
            if Memories.prefix_of(path) == prefix:
                _notes(repo, root, view, prefix, path, ours, theirs, base, done)
        if changed:
            m.sync(changed)
    for path in sorted(indexes):
        prefix = Memories.prefix_of(path)
        if prefix not in work:
            view = mems.get(prefix).as_person().acting(actor)
            _notes(repo, root, view, prefix, path, ours, theirs, base, done)


def _diff(repo: Repo, a: str, b: str) -> list[tuple[str, str, str, str, str]]:
    """(status, old path, new path, new blob, new mode) of every file that differs between two trees."""
    raw = repo.run("diff-tree", "-r", "-z", "-M", a, b).stdout.decode("utf-8", "surrogateescape").split("\0")
    out, i = [], 0
    while i < len(raw) - 1:
        head = raw[i].split()
        if not head or not head[0].startswith(":"):
            i += 1
            continue
        status = head[4]
        if status[0] in "RC":
            out.append((status, raw[i + 1], raw[i + 2], head[3], head[1]))
            i += 3
        else:
            out.append((status, raw[i + 1], raw[i + 1], head[3], head[1]))
            i += 2
    return out


def _topic(path: str) -> str | None:
    """The memory path a repository path is, when it is a topic file memdir serves (None: another kind of file)."""
    try:
        return paths.topic_path(path)
    except InvalidPath:
        return None


def _one(work: dict[str, _Work], path: str, data: bytes | None, mode: str) -> None:
    prefix = Memories.prefix_of(path)
    w = work.setdefault(prefix, _Work())
    rel = path[len(prefix):]
    topic = _topic(rel)
    text = None
    if data is not None:
        with contextlib.suppress(UnicodeDecodeError):
            text = data.decode("utf-8")
    if topic is not None and (data is None or text is not None) and mode in ("100644", "100755", "000000"):
        w.ops.append(Op.delete(topic) if text is None else Op.write(topic, text, as_written=True))
        w.data[topic] = data
    else:
        w.files[path] = (data, mode)


def _apply(view: Memdir, root: Path, prefix: str, w: _Work, done: Synced) -> list[str]:
    """Land the ops in one batch; when memdir refuses one, each alone, and a refused one as git would leave it
    (journaled after as a hand edit). Returns the paths to journal so."""
    order = sorted(w.ops, key=lambda op: {"delete": 0, "rename": 1}.get(op.kind, 2))
    try:
        view.apply(order)
        return []
    except MemdirError:
        pass
    changed = []
    for op in order:
        try:
            view.apply([op])
        except MemdirError as e:
            if op.kind == "delete" and not (root / prefix / op.path).exists():
                continue  # gone already (a name spelled another way here): nothing to do
            targets = [op.path] if op.dest is None else [op.path, op.dest]
            for path in targets:
                data = None if op.kind == "delete" or path == op.path and op.dest is not None else w.data.get(path)
                _write_file(root, prefix + path, data, "100644", done)
                changed.append(path)
            done.held.append(f"{prefix}{op.dest or op.path}: {e.message} (landed as it came, as a hand edit)")
    return changed


_NEVER = {"", ".", "..", ".git", paths.INTERNAL_DIR}  # a name a tree may hold that no file of a merge is written to


def _write_file(root: Path, path: str, data: bytes | None, mode: str, done: Synced) -> None:
    """A file of the merge written as git would write it (atomically), or removed; never into git's or memdir's
    own data, never out of the folder (a crafted tree's `..`, a folder that is a symlink)."""
    full = root / path
    inside = os.path.realpath(full.parent).startswith(os.path.realpath(root) + os.sep) or full.parent == root
    if any(part.casefold() in _NEVER for part in path.split("/")) or not inside:
        done.held.append(f"{path}: a file of the merge that would land outside the memory or in git's or memdir's own "
                         "data; it is not written")
        return
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            full.unlink()
        return
    if mode not in ("100644", "100755"):
        done.held.append(f"{path}: a {'symbolic link' if mode == '120000' else 'submodule'} is not written into a "
                         "memory; it stays in git")
        return
    full.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".memdir-sync-", dir=full.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o700 if mode == "100755" else 0o600)
    os.replace(tmp, full)


def _notes(repo: Repo, root: Path, view: Memdir, prefix: str, path: str, ours: str | None, theirs: str,
           base: str | None, done: Synced) -> None:
    """Merge the notes a person keeps in one MEMORY.md (its index is memdir's to render); on a true conflict
    theirs go beside it as a marked topic file."""
    names = {c: f"{c}:{path}" for c in (base, ours, theirs) if c}
    got = repo.blobs(list(names.values()))

    def text(commit: str | None) -> str | None:
        data = got.get(names[commit]) if commit else None
        return None if data is None else data.decode("utf-8", "replace")

    merged = merging.merge_kept(repo.git, text(base), text(ours), text(theirs))
    rel = path[len(prefix):]
    folder = rel[: len(rel) - len(paths.INDEX_NAME)]
    try:
        if merged is None:
            theirs_notes = index.kept(text(theirs))
            other = merging.sibling(folder + "index-notes.md", theirs[:7], {e.path for e in view.list(folder)})
            notes = (theirs_notes.before + theirs_notes.after).encode()
            view.apply([Op.write(other, merging.marked(notes, other, rel).decode("utf-8", "replace"), as_written=True)])
            done.conflicts.append((path, prefix + other))
            return
        on_disk = root / path
        current = index.kept(on_disk.read_text(encoding="utf-8", errors="replace") if on_disk.is_file() else None)
        if merged != current:
            view.keep_notes(merged.around(""), folder, replace=True)
    except MemdirError as e:
        done.held.append(f"{path}: the notes kept in it could not be merged ({e.message}); this machine's stay")
