"""Three-way merges of one file that lose nothing: what `gitsync` does when both machines changed the same memory.

A memory changed on both sides merges line by line against the version they
came from (`git merge-file`), with memdir's own stamps taken out first and set
after by rule (`created`: the earlier, `updated`: the later), since every
write rewrites them and they would conflict every time. Lines both sides
added at the same place (two machines appending facts) are kept, ours first.
A merge whose result would not parse, or where both sides changed the same
lines, is a true conflict: the caller keeps ours at the path and theirs as a
sibling (`sibling`) marked with a `conflict:` frontmatter key naming the file
it belongs beside, so both stay valid memories until a person chooses.

A MEMORY.md is never merged as text: only what a person keeps in it around
memdir's region (`index.Kept`) merges, the region is rendered again.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import model, paths
from ..core import index
from ..core.memdir import Memdir
from ..core.ops import ANY, Op
from ..errors import InvalidArgument, MemdirError, NotFound
from .gitrepo import quiet_env

CONFLICT_KEY = "conflict"  # the frontmatter key of the other side's version: the path of the file it conflicts with
_MARK = 31  # conflict marker size: longer than any line a person writes with '<', '=', '|' or '>'
_SIBLING = re.compile(r"\.conflict-[0-9a-z]+(?:-\d+)?(?=\.[^./]+$|$)")


def three_way(git: str, base: str, ours: str, theirs: str) -> str | None:
    """The line merge of two texts that came from `base`, or None where both changed the same lines.

    Where both only added lines at the same place (nothing of the base between
    them changed), both additions are kept, ours first.
    """
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    with tempfile.TemporaryDirectory(prefix="memdir-merge-") as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            f = Path(tmp) / name
            f.write_bytes(text.encode("utf-8", "surrogateescape"))
            files.append(str(f))
        done = subprocess.run([git, "merge-file", "-p", "-q", "--diff3", f"--marker-size={_MARK}", *files],
                              capture_output=True, env=quiet_env(), check=False, timeout=60)
    if done.returncode < 0 or done.returncode > 127:
        return None
    merged = done.stdout.decode("utf-8", "surrogateescape")
    return merged if done.returncode == 0 else _unioned(merged)


def _unioned(merged: str) -> str | None:
    """A merge whose every conflict is two additions at one place, with both kept; None if any changed the base."""
    out: list[str] = []
    part = None  # inside a conflict: "ours", "base", "theirs"
    ours: list[str] = []
    theirs: list[str] = []
    for line in merged.splitlines(keepends=True):
        mark = line[:_MARK]
        if len(mark) == _MARK and len(set(mark)) == 1 and mark[0] in "<|=>" and line[_MARK:_MARK + 1] in (" ", "\n", "\r", ""):
            kind = mark[0]
            if kind == "<" and part is None:
                part, ours, theirs = "ours", [], []
                continue
            if kind == "|" and part == "ours":
                part = "base"
                continue
            if kind == "=" and part == "base":
                part = "theirs"
                continue
            if kind == ">" and part == "theirs":
                if ours and not ours[-1].endswith("\n"):
                    ours[-1] += "\n"
                out += ours + theirs
                part = None
                continue
        if part is None:
            out.append(line)
        elif part == "ours":
            ours.append(line)
        elif part == "theirs":
            theirs.append(line)
        else:
            return None  # the base had lines here that a side changed: a true conflict
    return None if part is not None else "".join(out)


def merge_memory(git: str, path: str, base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    """A memory both sides changed, merged (bytes), or None when they truly conflict.

    memdir's stamps are set by rule; everything else merges by lines; the
    result must parse as the two sides did.
    """
    if ours == theirs:
        return ours
    if base is None:
        return None  # two files made apart under one name: nothing says how they relate
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    try:
        texts = [x.decode("utf-8") for x in (base, ours, theirs)]
    except UnicodeDecodeError:
        return None
    stamps = _stamps(path, texts[1], texts[2])
    merged = three_way(git, *(model.unstamped(t) for t in texts))
    if merged is None:
        return None
    try:
        if stamps:
            merged = model.set_fields(merged, stamps, path=path)
        if merged.startswith("---"):
            model.parse(merged, path=path, strict=True)
    except MemdirError:
        return None
    return merged.encode("utf-8")


def _stamps(path: str, ours: str, theirs: str) -> dict[str, str]:
    """memdir's stamps of the merge: the earlier `created`, the later `updated` (ISO text sorts as time)."""
    got: dict[str, list[str]] = {"created": [], "updated": []}
    for text in (ours, theirs):
        try:
            meta, _ = model.parse(text, path=path, strict=False)
        except MemdirError:
            continue
        for key in got:
            value = meta.get(key)
            if isinstance(value, str) and value:
                got[key].append(value)
    out = {}
    if got["created"]:
        out["created"] = min(got["created"])
    if got["updated"]:
        out["updated"] = max(got["updated"])
    return out


def merge_kept(git: str, base: str | None, ours: str | None, theirs: str | None) -> index.Kept | None:
    """The notes a person keeps in a MEMORY.md (around memdir's region), merged; None when they conflict."""
    b, o, t = (index.kept(x) for x in (base, ours, theirs))
    before = three_way(git, b.before, o.before, t.before)
    after = three_way(git, b.after, o.after, t.after)
    if before is None or after is None:
        return None
    return index.Kept(before, after)


def sibling(path: str, tag: str, taken: set[str]) -> str:
    """Where the other side's version of `path` goes: `name.conflict-<tag>.md` beside it, a name not `taken`."""
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    n = 1
    while True:
        extra = "" if n == 1 else f"-{n}"
        candidate = f"{folder + '/' if folder else ''}{stem}.conflict-{tag}{extra}{'.' + ext if ext else ''}"
        if candidate.casefold() not in {t.casefold() for t in taken}:
            return candidate
        n += 1


def is_sibling(path: str) -> bool:
    """Whether `path` is named as a conflict's other version (`name.conflict-<tag>.md`)."""
    return bool(_SIBLING.search(path.rpartition("/")[2]))


def marked(text: bytes, path: str, of: str) -> bytes:
    """The other side's version, marked as the conflict of `of` in its frontmatter (its text otherwise as it was);
    a file that is not UTF-8 or whose frontmatter does not parse is kept as it is."""
    try:
        return model.set_fields(text.decode("utf-8"), {CONFLICT_KEY: of}, path=path).encode("utf-8")
    except (UnicodeDecodeError, MemdirError):
        return text


# ---------------------------------------------------------------- conflicts kept, and resolved


@dataclass(frozen=True)
class Pair:
    """A conflict a sync kept: the memory as this machine keeps it, and the other side's version beside it."""

    path: str
    other: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "other": self.other}


def conflicts(md: Memdir) -> list[Pair]:
    """Every conflict kept in this memory (that this view may read), by path."""
    out = []
    for e in md.list():
        if is_sibling(e.path):
            with contextlib.suppress(MemdirError):
                of = md.read(e.path).meta.get(CONFLICT_KEY)
                if isinstance(of, str) and of:
                    out.append(Pair(of, e.path))
    return sorted(out, key=lambda p: (p.path, p.other))


def resolve(md: Memdir, path: str, keep: str) -> Pair:
    """Settle one conflict: keep `mine` (the other version goes) or `theirs` (it replaces mine, without its
    conflict mark), in one change the journal keeps (undo brings either back). `path` names the memory or the
    other version; a memory with several others must be named by the one meant."""
    if keep not in ("mine", "theirs"):
        raise InvalidArgument(f"keep must be mine or theirs, got {keep!r}")
    p = paths.topic_path(path)
    pairs = [c for c in conflicts(md) if p in (c.path, c.other)]
    if not pairs:
        raise NotFound(f"{p} has no conflict kept; `memdir conflicts` lists them", path=p)
    if len(pairs) > 1:
        raise InvalidArgument(f"{p} has {len(pairs)} other versions ({', '.join(c.other for c in pairs)}); name the one "
                              "to settle")
    pair = pairs[0]
    if keep == "mine":
        md.delete(pair.other)
        return pair
    _, text, version = md.read_text(pair.other)
    ours = md.store.get(pair.path)
    mine = model.set_fields(text, {CONFLICT_KEY: None}, path=pair.path)
    md.apply([Op.write(pair.path, mine, as_written=True, expect=None if ours is None else ANY),
              Op.delete(pair.other, expect=version)])
    return pair
