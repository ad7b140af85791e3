"""MEMORY.md: rendering from the catalog (flat and hierarchical) and parsing.

An index lists one line per topic file, grouped by type. When everything does
not fit under the caps, whole folders collapse into one line that links the
folder's own index, largest folders first; a folder with more files than fit
lists the most recently updated and says how many more there are.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..model import Entry, label
from ..paths import INDEX_NAME, lines
from .catalog import Catalog, Folder

TYPE_ORDER = ("feedback", "user", "project", "reference")
UNTYPED = "Other"
FOLDERS = "Folders"
ARCHIVE = "archive/"
# Folders no index lists or links: capture's notes of attempts that captured nothing, which `memdir stats` shows
# (an agent's context is no place for "capture skipped").
UNLISTED = ("sessions/skipped/",)


_ANGLED = re.compile(r"[ ()<>]")


@functools.lru_cache(maxsize=1 << 16)
def _target(path: str) -> str:
    return f"<{path}>" if _ANGLED.search(path) else path


def line(entry: Entry, base: str = "") -> str:
    """One index line for `entry`, its link relative to folder `base`."""
    name, tail = label(entry)
    return f"- [{name}]({_target(entry.path[len(base):])}){tail}"


def _line(cat: Catalog, path: str, base: str) -> str:
    name, tail = cat.labels[path]
    return f"- [{name}]({_target(path[len(base):])}){tail}"


def _section_title(kind: str | None) -> str:
    return UNTYPED if kind is None else kind.replace("-", " ").replace("_", " ").title()


def _section_order(kind: str | None) -> tuple[int, str]:
    if kind is None:
        return (2, "")
    if kind in TYPE_ORDER:
        return (0, f"{TYPE_ORDER.index(kind)}")
    return (1, kind)


def _title(folder: str) -> str:
    return "# Memory Index" if not folder else f"# Memory Index: {folder}"


def _folder_line(cat: Catalog, sub: str, base: str) -> str:
    """The line that links `sub`'s own index from its parent folder `base` (kept until `sub` changes)."""
    node = cat.folders[sub]
    if node.link is None:
        node.link = _link_text(cat, node, sub, base)
    return node.link


def _link_text(cat: Catalog, node: Folder, sub: str, base: str) -> str:
    kinds = sorted(node.types.items(), key=lambda kv: (-kv[1], _section_order(kv[0])))
    mix = ", ".join(f"{_section_title(k).lower()} {n:,}" for k, n in kinds[:4])
    newest = cat.newest(sub)[:10]
    noun = "memory" if node.count == 1 else "memories"
    text = f"- [{sub[len(base):]}]({_target(sub[len(base):] + INDEX_NAME)}) — {node.count:,} {noun} ({mix})"
    return f"{text}, newest {newest}" if newest else text


def _more_line(folder: str, files: int, folders: int) -> str:
    parts = []
    if files:
        parts.append(f"{files:,} older {'file' if files == 1 else 'files'}")
    if folders:
        parts.append(f"{folders:,} smaller {'folder' if folders == 1 else 'folders'}")
    where = folder or "the root"
    command = f"memdir ls {folder}".rstrip()
    call = f'list_memory_files(folder="{folder}")' if folder else "list_memory_files()"
    return f"… and {' and '.join(parts)} in {where} not shown here; list them with {call} or `{command}`"


def render(cat: Catalog, folder: str, max_lines: int, max_bytes: int) -> tuple[str, list[str]]:
    """(index text for `folder`, the subfolders it collapses into links).

    Works from the catalog's running totals, so its cost grows with the lines
    the index shows (bounded by the caps), not with the files in the folder.
    """
    cat.prepare(folder)
    node = cat.folders.get(folder)
    if node is None or node.count == 0:
        return f"{_title(folder)}\n\nNo memories yet.\n", []
    plan, hidden_files, hidden_folders = _decide(cat, folder, node, max_lines, max_bytes)
    return _text(cat, folder, plan, hidden_files, hidden_folders), sorted(plan.links)


def _decide(cat: Catalog, folder: str, node: Folder, max_lines: int, max_bytes: int) -> tuple[_Plan, int, int]:
    """What the index of `folder` lists: (the plan, files and folders left out)."""
    ranked = node.ranked  # (-count, path) of the subfolders: largest first, then by path (not copied: it can be long)
    plan = _Plan(cat, folder, max_lines, max_bytes)
    plan.add_all(node)
    hidden = _hidden(cat, folder)
    for sub in hidden:
        plan.hide(sub)
    archived = not folder and ARCHIVE in node.subfolders
    if archived:  # retired and folded files: one link, never listed in the top index
        plan.collapse(ARCHIVE)
    collapsed = 0
    if 1 + node.files + node.subs > max_lines:
        collapsed = node.subs  # even with every folder collapsed the lines would not fit: skip to the fallback
    while not plan.fits() and collapsed < node.subs:
        sub = ranked[collapsed][1]  # the largest folders first
        collapsed += 1
        if not (archived and sub == ARCHIVE) and sub not in plan.hidden:
            plan.collapse(sub)
    hidden_files = hidden_folders = 0
    if not plan.fits():
        # Only files and folder links remain: keep the largest folders, then the newest files.
        plan = _Plan(cat, folder, max_lines, max_bytes, reserve=_more_line(folder, 10**9, 10**9))
        plan.hidden = set(hidden)
        for _, sub in ranked:
            if sub in plan.hidden:
                continue
            plan.link(sub)
            if not plan.fits():
                plan.unlink()
                break
        hidden_folders = node.subs - len(plan.links) - len(plan.hidden & node.subfolders)
        if not hidden_folders:
            plan.add_newest(node)
        hidden_files = node.files - len(plan.files)
    return plan, hidden_files, hidden_folders


def _hidden(cat: Catalog, folder: str) -> list[str]:
    """The unlisted folders below `folder` that hold something."""
    out = []
    for sub in UNLISTED:
        if sub.startswith(folder) and sub != folder:
            cat.prepare(sub)
            node = cat.folders.get(sub)
            if node is not None and node.count:
                out.append(sub)
    return out


def _text(cat: Catalog, folder: str, plan: _Plan, hidden_files: int, hidden_folders: int) -> str:
    """The index lines of a plan: a section per type, newest first (ties by path), then the folder links."""
    groups: dict[str | None, list[Entry]] = {}
    for entry in plan.listed():
        groups.setdefault(entry.type, []).append(entry)
    out = [_title(folder)]
    for kind in sorted(groups, key=_section_order):
        items = sorted(groups[kind], key=lambda e: e.path)
        items.sort(key=lambda e: e.updated or "", reverse=True)  # stable: ties stay by path
        out += ["", f"## {_section_title(kind)}"]
        out += [_line(cat, e.path, folder) for e in items]
    if plan.links:
        out += ["", f"## {FOLDERS}"]
        out += [plan.links[s] for s in sorted(plan.links)]
    if hidden_files or hidden_folders:
        out += ["", _more_line(folder, hidden_files, hidden_folders)]
    return "\n".join(out) + "\n"


Candidate = tuple[str, str, "str | None", int]  # a file for the newest-files list: (updated, path, type, line bytes)


class _Plan:
    """What one index lists, with running totals of its lines and bytes."""

    def __init__(self, cat: Catalog, folder: str, max_lines: int, max_bytes: int, reserve: str = "") -> None:
        self.cat, self.folder = cat, folder
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.files: list[str] = []
        self.everything: Folder | None = None  # set when all of the folder is listed but what `links` collapses
        self.links: dict[str, str] = {}
        self.hidden: set[str] = set()  # unlisted folders, left out of the lines and the totals
        self.kinds: Counter[str | None] = Counter()
        self.sections = 0  # type sections listed, and the bytes of their headings
        self.section_bytes = 0
        title = _title(folder)
        self.lines = 1 + (2 if reserve else 0)
        self.bytes = len(title.encode()) + 1 + (len(reserve.encode()) + 2 if reserve else 0)

    def _count(self, kind: str | None, delta: int) -> None:
        before = self.kinds[kind]
        self.kinds[kind] = before + delta
        if (before > 0) != (before + delta > 0):
            sign = 1 if before + delta > 0 else -1
            self.sections += sign
            self.section_bytes += sign * (len(_section_title(kind).encode()) + 5)

    def add_all(self, node: Folder) -> None:
        self.everything = node
        for kind, n in node.types.items():
            self._count(kind, n)
        self.lines += node.count
        self.bytes += node.bytes

    def add_file(self, path: str) -> None:
        self.files.append(path)
        self._count(self.cat.entries[path].type, 1)
        self.lines += 1
        self.bytes += self.cat.line_bytes(path)

    def add_newest(self, node: Folder) -> None:
        """The folder's own files, newest first, as many as fit (what `add_file` and `fits` would pick)."""
        cat = self.cat
        recent = cat.recent(node)  # before `entries`: a Partial reads them here
        entries, sizes = cat.entries, cat._bytes
        taken, _ = self._fill((u, p, entries[p].type, sizes[p]) for u, p in reversed(recent))
        self.files += [c[1] for c in taken]
        for kind, n in Counter(c[2] for c in taken).items():
            self._count(kind, n)
        self.lines += len(taken)
        self.bytes += sum(c[3] for c in taken)

    def _fill(self, candidates: Iterable[Candidate]) -> tuple[list[Candidate], Candidate | None]:
        """The candidates (newest first) that fit, and the first that did not."""
        links = 1 if self.links else 0
        lines, size = self.lines, self.bytes + self.section_bytes + links * (len(FOLDERS) + 5)
        sections, seen = self.sections + links, {k for k, n in self.kinds.items() if n > 0}
        taken: list[Candidate] = []
        for candidate in candidates:
            kind, extra = candidate[2], candidate[3]
            grow = kind not in seen
            if lines + 1 + 2 * (sections + grow) > self.max_lines:
                return taken, candidate
            if grow:
                extra += len(_section_title(kind).encode()) + 5
            if size + extra > self.max_bytes:
                return taken, candidate
            lines, size = lines + 1, size + extra
            if grow:
                seen.add(kind)
                sections += 1
            taken.append(candidate)
        return taken, None

    def hide(self, sub: str) -> None:
        """Leave an unlisted folder out: its files count for nothing and it gets no link."""
        self._less(sub, 1)
        self.hidden.add(sub)

    def _less(self, sub: str, sign: int) -> None:
        node = self.cat.folders[sub]
        for kind, n in node.types.items():
            self._count(kind, -sign * n)
        self.lines -= sign * node.count
        self.bytes -= sign * node.bytes

    def collapse(self, sub: str) -> None:
        self._less(sub, 1)
        for h in self.hidden:  # already left out: not twice
            if h.startswith(sub):
                self._less(h, -1)
        self.link(sub)

    def link(self, sub: str) -> None:
        text = _folder_line(self.cat, sub, self.folder)
        self.links[sub] = text
        self.lines += 1
        self.bytes += len(text.encode()) + 1

    def unlink(self) -> None:
        sub, text = self.links.popitem()
        self.lines -= 1
        self.bytes -= len(text.encode()) + 1

    def fits(self) -> bool:
        folders = 1 if self.links else 0
        lines = self.lines + 2 * (self.sections + folders)
        size = self.bytes + self.section_bytes + folders * (len(FOLDERS) + 5)
        return lines <= self.max_lines and size <= self.max_bytes

    def listed(self) -> list[Entry]:
        cat, entries = self.cat, self.cat.entries
        listed = []
        for path in self.files:
            entry = cat.get(path)
            assert entry is not None, path
            listed.append(entry)
        if self.everything is not None:
            listed += [entries[p] for _, p in self.cat.recent(self.everything)]
            for sub in self.everything.subfolders - self.links.keys() - self.hidden:
                listed.extend(self.cat.walk(sub))
        if self.hidden:
            prefixes = tuple(self.hidden)
            listed = [e for e in listed if not e.path.startswith(prefixes)]
        return listed


# ---------------------------------------------------------------- parsing

_LINK = re.compile(r"^\s*[-*+]\s+\[(?P<title>(?:\\.|[^\]])*)\]\((?P<target><[^>]*>|[^)\s]+)\)\s*(?:(?:—|–|--|-|:)\s*(?P<desc>.*))?$")
_PIPE = re.compile(r"^\s*[-*+]\s+(?P<target>[^|\s][^|]*?\.md)\s*\|\s*(?P<desc>.*?)\s*(?:#(?P<category>[\w-]+))?\s*$")
_HEADER = re.compile(r"^\s*#{2,6}\s+(?P<title>.+?)\s*$")


@dataclass(frozen=True)
class IndexLine:
    """One line of an existing index, as `parse` understood it."""

    path: str
    title: str | None
    description: str | None
    category: str | None
    section: str | None
    number: int


def parse(text: str) -> tuple[list[IndexLine], list[tuple[int, str]]]:
    """(entries understood, (line number, line) not understood) of an index file."""
    found: list[IndexLine] = []
    skipped: list[tuple[int, str]] = []
    section = None
    for number, raw in enumerate(lines(text), 1):
        if not raw.strip() or raw.lstrip().startswith("# ") or raw.strip().startswith("<!--"):
            continue
        m = _HEADER.match(raw)
        if m:
            section = m.group("title")
            continue
        m = _LINK.match(raw)
        if m:
            target = m.group("target").strip("<>")
            title = m.group("title").replace("\\[", "[").replace("\\]", "]")
            desc = (m.group("desc") or "").strip() or None
            found.append(IndexLine(target, title, desc, None, section, number))
            continue
        m = _PIPE.match(raw)
        if m:
            desc = m.group("desc").strip() or None
            found.append(IndexLine(m.group("target").strip(), None, desc, m.group("category"), section, number))
            continue
        skipped.append((number, raw))
    return found, skipped


def links(text: str, folder: str) -> list[str]:
    """The subfolders an index text of `folder` links to (their own MEMORY.md), sorted.

    Only lines naming an index file can be such links, and `parse` reads each line on its
    own, so the others are not parsed (a process learning a 200-line index pays for its links).
    """
    found, _ = parse("\n".join(line for line in lines(text) if INDEX_NAME in line))
    return sorted(folder + line.path[: -len(INDEX_NAME)] for line in found if line.path.endswith("/" + INDEX_NAME))


# ---------------------------------------------------------------- a MEMORY.md someone else keeps too

BEGIN = "<!-- memdir:index: generated from the topic files; memdir rewrites what is between these two lines -->"
END = "<!-- /memdir:index -->"
MIN_LINES, MIN_BYTES = 12, 2048  # what the generated part keeps however long the hand-kept part is
_GENERATED = re.compile(r"^(?:# Memory Index(?:: .*)?|## .+|No memories yet\.|… and .+ not shown here; .+)$")


@dataclass(frozen=True)
class Kept:
    """What a MEMORY.md holds besides memdir's index: the text before and after its region, byte for byte."""

    before: str = ""
    after: str = ""

    @property
    def empty(self) -> bool:
        return not self.before and not self.after

    @property
    def lines(self) -> int:
        return len(lines(self.before)) + len(lines(self.after))

    @property
    def size(self) -> int:
        return len(self.before.encode()) + len(self.after.encode())

    def caps(self, max_lines: int, max_bytes: int) -> tuple[int, int]:
        """The lines and bytes the generated part may take so that the whole file stays in the caps (with a floor)."""
        if self.empty:
            return max_lines, max_bytes
        extra = len(BEGIN) + len(END) + 4  # the two marker lines and the newlines around the region
        return max(MIN_LINES, max_lines - self.lines - 2), max(MIN_BYTES, max_bytes - self.size - extra)

    def around(self, generated: str) -> str:
        """The file: what was kept, and the generated index in its marked region where it stood."""
        if self.empty:
            return generated
        before = self.before if not self.before or self.before.endswith("\n") else self.before + "\n"
        return f"{before}{BEGIN}\n{generated}{END}\n{self.after}"


def kept(text: str | None) -> Kept:
    """The hand-kept parts of a MEMORY.md: none when memdir wrote all of it (no region and only index lines)."""
    if not text:
        return Kept()
    start = text.find(BEGIN)
    if start >= 0:
        end = text.find(END, start)
        tail = "" if end < 0 else text[end + len(END):]
        return Kept(text[:start], tail[1:] if tail.startswith("\n") else tail)
    # No region yet: memdir's own index is the run of index lines under its title, if there is one (a person may
    # have written around it); everything else, or all of a file without that title, is someone else's.
    rows = text.splitlines(keepends=True)
    title = next((i for i, row in enumerate(rows) if row.startswith("# Memory Index")), None)
    if title is None:
        return Kept(text)
    last = title + 1
    while last < len(rows) and (not rows[last].strip() or _GENERATED.match(rows[last].rstrip("\n"))
                                or _LINK.match(rows[last].rstrip("\n"))):
        last += 1
    return Kept("".join(rows[:title]), "".join(rows[last:]))


def generated(text: str) -> str:
    """The generated part of a MEMORY.md: its region, or memdir's index lines where there is no region yet."""
    start = text.find(BEGIN)
    if start < 0:
        parts = kept(text)
        return text[len(parts.before): len(text) - len(parts.after)]
    end = text.find(END, start)
    return text[start + len(BEGIN) + 1 : end if end >= 0 else len(text)]
