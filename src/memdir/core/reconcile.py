"""Hand edits: files added, changed or removed outside memdir, found by comparing the store with the catalog.

`Memdir.sync` journals what it finds as `external` changes (undo works on
them; the watcher calls it with the paths it saw change), under the actor
`external:<the file's owner>`, never the actor of the process that noticed;
`Memdir.reconcile` reports it, with what else disagrees (a stale MEMORY.md,
quarantined records), what a write would refuse in any file (frontmatter a
person broke, with its line, the schema, the size ceiling) and, as notices,
files kept whole that are longer than an agent may write; asked to fix, it
repairs what needs no person.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .. import model, paths
from ..errors import MemdirError
from ..model import Entry, Memory
from ..stores.base import Blob, Change, Store
from . import guard, index
from . import limits as limits_mod
from .catalog import Catalog
from .limits import Limits

NOTICES = ("repaired", "link", "long", "unindexed", "theirs", "unlisted")  # reported, but nothing to repair
SPLIT_HINT = "kept whole; `memdir consolidate` proposes a split by its headings"
EXTERNAL = "external"  # the actor of edits made outside memdir (with the file's owner, where known)


@dataclass(frozen=True)
class Finding:
    """One thing reconcile found: kind is new, changed, missing, index, invalid, quarantined, link (a broken link),
    long (a file kept whole, longer than an agent may write: a notice), unindexed (a MEMORY.md memdir has not
    written yet: a notice), theirs (another tool's values, read as meant: a notice), unlisted (topic files a
    MEMORY.md's hand-kept notes leave its index no room for: a notice) or repaired."""

    kind: str
    path: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    fixed: bool = False

    @property
    def clean(self) -> bool:
        """Files, catalog and index agree (a broken link or a long file is reported, not a disagreement)."""
        return not [f for f in self.findings if f.kind not in NOTICES]

    def to_dict(self) -> dict[str, Any]:
        return {"clean": self.clean, "fixed": self.fixed, "findings": [f.to_dict() for f in self.findings]}


def found(store: Store, cat: Catalog, changed: Iterable[str] | None = None) -> dict[str, str | None]:
    """The stored version of every file (None: gone) that may differ from the catalog: all of them, or
    the `changed` paths a watcher saw (names that are not topic files are left out)."""
    if changed is None:
        now: dict[str, str | None] = dict(store.list())
        now.update((p, None) for p in cat.entries.keys() - now.keys())
        return now
    out: dict[str, str | None] = {}
    for raw in changed:
        try:
            p = paths.topic_path(raw)
        except MemdirError:
            continue  # MEMORY.md, .memdir/, not markdown: not a topic file
        blob = store.get(p)
        out[p] = None if blob is None else blob.version
    return out


def external(store: Store, cat: Catalog, versions: dict[str, str | None],
             memory: Callable[[str, Blob], Memory]) -> tuple[Report, list[Change]]:
    """What differs between the stored `versions` and the catalog, and the `external` changes that journal it.

    A file whose version moved but whose bytes are those journaled last (a copy
    by `cp -a`, `rsync -a` or `git clone`, or a `touch`: the folder store's
    version is its stat) is no change: its new version is kept in the catalog
    without a journal record.
    """
    report, changes = Report(), []
    now = model.now_stamp()
    same: dict[str, str] = {}
    for path in sorted(versions):
        entry, version = cat.get(path), versions[path]
        if (entry.version if entry is not None else None) == version:
            continue
        last = store.journal(path, limit=1) if entry is not None else []
        if version is None:
            report.findings.append(Finding("missing", path, "in the catalog but not on disk"))
            old = last[0].new if last and last[0].new is not None else None
            changes.append(Change(op="external", path=path, data=None, expect=entry.version if entry else None, old=old,
                                  entry=None, actor=EXTERNAL, time=now, record_only=True))
            continue
        blob = store.get(path)
        if blob is None:
            continue
        if entry is not None and last and (last[0].dest or last[0].path) == path and last[0].new == blob.data:
            same[path] = blob.version
            cat.entries[path] = replace(entry, version=blob.version)  # only the version: no label or total moves
            continue
        try:
            mem = memory(path, blob)
        except MemdirError as e:
            report.findings.append(Finding("invalid", path, e.message))
            continue
        report.findings.append(Finding("new" if entry is None else "changed", path,
                                       "not in the catalog" if entry is None else "changed outside memdir"))
        changes.append(Change(op="external", path=path, data=blob.data, expect=None if entry is None else entry.version,
                              old=last[0].new if last else None, entry=model.entry_of(mem), actor=editor(store, path),
                              time=now, record_only=True))
    restat = getattr(store, "restat", None)  # a store whose versions are stats keeps the new ones
    if same and restat is not None:
        restat(same)
    return report, changes


def editor(store: Store, path: str) -> str:
    """Who the journal says made an edit outside memdir: `external:<owner>` where the store knows the file's
    owner (a folder), else `external`."""
    owner = getattr(store, "owner", None)
    name = owner(path) if owner is not None else None
    return f"{EXTERNAL}:{name}" if name else EXTERNAL


def checked(store: Store, versions: dict[str, str | None], memory: Callable[[str, Blob], Memory], limits: Limits,
            known: set[str]) -> list[Finding]:
    """Every stored file a write would refuse as it is (`invalid`, with the refusal's own words), and every file
    kept whole that is longer than an agent may write (`long`); `known`: paths already reported invalid."""
    out = []
    for path in sorted(p for p, v in versions.items() if v is not None and p not in known):
        blob = store.get(path)
        if blob is None:
            continue
        try:
            mem = memory(path, blob)
        except MemdirError as e:
            out.append(Finding("invalid", path, e.message))
            continue
        out += [Finding("invalid", path, problem) for problem in problems(mem, limits)]
        values = theirs(mem, limits)
        if values:
            out.append(Finding("theirs", path, f"{'; '.join(values)}: another tool's values, which memdir reads as "
                                               "meant (its own writes would not set them); not a problem"))
        long = limits_mod.over(mem.text, limits)
        if long is not None:
            out.append(Finding("long", path, f"{long}: {SPLIT_HINT}"))
    return out


def long_files(entries: Iterable[Entry], text_of: Callable[[str], str], limits: Limits) -> list[Finding]:
    """The files kept whole that are longer than an agent may write (`memdir stats`): the catalog's counts
    pick the candidates, and only those are read (memdir's stamps do not count)."""
    out = []
    for e in entries:
        if e.lines > limits.max_lines or e.size > limits.max_bytes:
            long = limits_mod.over(text_of(e.path), limits)
            if long is not None:
                out.append(Finding("long", e.path, f"{long}: {SPLIT_HINT}"))
    return out


def problems(mem: Memory, limits: Limits) -> list[str]:
    """What is wrong with a file for memdir's own use, in the words a write refuses it with: frontmatter it cannot
    read (naming its line), a `created`/`updated` that is no date (an edit keeps it, and is refused), the size
    ceiling, a credential. Other tools' values (`type: Person`, `tags: A, B`) are `theirs`, not problems."""
    out = []
    meta = mem.meta
    try:
        # The file as read parsed its frontmatter leniently (a block its writer's parser accepts is read as
        # meant): what a write would refuse is the block parsed strictly, which only a file starting with '---' has.
        if mem.text.lstrip("\ufeff").startswith("---"):
            meta = model.parse(mem.text, path=mem.path)[0]
    except MemdirError as e:
        out.append(e.message if not mem.meta else  # read as its writer reads it (`model.repaired`), edits refused
                   f"{e.message.removesuffix('; fix that line between the ' + chr(39) + '---' + chr(39) + ' lines')}: "
                   "its writer accepts it and memdir reads it as meant, but refuses to edit the file until the value "
                   "is quoted")
    try:
        limits_mod.check_meta({k: v for k, v in meta.items() if k in model.STAMPS}, mem.path, limits)
    except MemdirError as e:
        out.append(e.message)
    try:
        limits_mod.check_size(mem.text, mem.path, limits, agent=False)
    except MemdirError as e:
        out.append(e.message)
    found = guard.find_secret(mem.text) if limits.secret_guard else None
    if found is not None:
        kind, line = found
        out.append(f"{mem.path}: {guard.where(line, model.head_lines(mem.text))} holds what looks like {kind}; a write "
                   "of this file would be refused: remove it and note where the secret is kept instead")
    return out


def theirs(mem: Memory, limits: Limits) -> list[str]:
    """The values of memdir's keys that another tool wrote and memdir's own writes would not (an Obsidian
    `tags: A, B` or `"#a/b"`, a `type` that is not one of memdir's): read as meant, never a problem."""
    out = []
    for key in ("name", "description", "type", "tags"):
        if mem.meta.get(key) not in (None, "", []):  # `tags:` left empty (Obsidian's empty list) says nothing
            try:
                limits_mod.check_meta({key: mem.meta[key]}, mem.path, limits)
            except MemdirError:
                out.append(f"{key}: {mem.meta[key]!r}")
    return out


_LINKED = re.compile(r"\]\(\s*(?:<([^<>\n]+?)>|([^()<>\s]+))\s*\)")


def unlisted(text: str | None, files: Iterable[str], max_lines: int) -> Finding | None:
    """A notice when a hand-kept MEMORY.md is so long that what an agent reads of it (its first `max_lines`
    lines, as Claude Code loads it) links not every topic file: memdir's index region below gets no room, and
    the files neither the notes nor the region's visible part link are found only by search or `memdir ls`."""
    kept = index.kept(text)
    if text is None or kept.empty:
        return None
    seen = "\n".join(paths.lines(text)[:max_lines])
    reach = {unicodedata.normalize("NFC", (m.group(1) or m.group(2)).removeprefix("./")) for m in _LINKED.finditer(seen)}
    folders = tuple(p[: -len(paths.INDEX_NAME)] for p in reach if p.endswith("/" + paths.INDEX_NAME))
    missing = sorted(p for p in files if unicodedata.normalize("NFC", p) not in reach
                     and not unicodedata.normalize("NFC", p).startswith(folders))
    if not missing:
        return None
    shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
    return Finding("unlisted", paths.INDEX_NAME, f"its hand-kept notes take {kept.lines} lines, so the {max_lines} "
                   f"lines an agent reads of it link {len(missing)} topic file{'' if len(missing) == 1 else 's'} "
                   f"neither in the notes nor in memdir's index region: found only by search or `memdir ls` ({shown}); "
                   "move notes into a topic file to give the index room")
