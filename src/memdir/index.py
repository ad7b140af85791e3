"""MEMORY.md: rendering from the catalog (flat and hierarchical) and parsing.

An index lists one line per topic file, grouped by type. When everything does
not fit under the caps, whole folders collapse into one line that links the
folder's own index, largest folders first; a folder with more files than fit
lists the most recently updated and says how many more there are.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .catalog import Catalog
from .model import Entry, clip
from .paths import INDEX_NAME

TYPE_ORDER = ("feedback", "user", "project", "reference")
UNTYPED = "Other"
FOLDERS = "Folders"
ARCHIVE = "archive/"


def _escape(text: str) -> str:
    return " ".join(text.split()).replace("[", "\\[").replace("]", "\\]")


_ANGLED = re.compile(r"[ ()<>]")


def _target(path: str) -> str:
    return f"<{path}>" if _ANGLED.search(path) else path


def label(entry: Entry) -> tuple[str, str]:
    """The parts of an index line that do not depend on where the index is: (name, " — description")."""
    desc = clip(entry.description)
    return _escape(entry.name), f" — {_escape(desc)}" if desc else ""


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
    node = cat.folders[sub]
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
    """(index text for `folder`, the subfolders it collapses into links)."""
    title = _title(folder)
    node = cat.folders.get(folder)
    if node is None or node.count == 0:
        return f"{title}\n\nNo memories yet.\n", []
    subs = sorted(node.subfolders, key=lambda f: (-cat.folders[f].count, f))
    direct = [p for _, p in reversed(node.recent)]  # newest first
    plan = _Plan(cat, folder, max_lines, max_bytes)
    for path in direct:
        plan.add_file(path)
    for sub in subs:
        plan.add_inline(sub)
    inline = list(subs)
    if not folder and ARCHIVE in inline:  # retired and folded files: one link, never listed in the top index
        plan.collapse(ARCHIVE)
        inline.remove(ARCHIVE)
    while not plan.fits() and inline:  # collapse the largest folders first
        plan.collapse(inline.pop(0))
    hidden_files = hidden_folders = 0
    if not plan.fits():
        # Only files and folder links remain: keep the largest folders, then the newest files.
        plan = _Plan(cat, folder, max_lines, max_bytes, reserve=_more_line(folder, 10**9, 10**9))
        for sub in subs:
            plan.link(sub)
            if not plan.fits():
                plan.unlink()
                break
        hidden_folders = len(subs) - len(plan.links)
        if not hidden_folders:
            for path in direct:
                plan.add_file(path)
                if not plan.fits():
                    plan.drop_file()
                    break
        hidden_files = len(direct) - len(plan.files)
    return plan.text(hidden_files, hidden_folders), sorted(plan.links)


class _Plan:
    """What one index lists, with running totals of its lines and bytes."""

    def __init__(self, cat: Catalog, folder: str, max_lines: int, max_bytes: int, reserve: str = "") -> None:
        self.cat, self.folder = cat, folder
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.files: list[str] = []
        self.inline: list[str] = []
        self.links: dict[str, str] = {}
        self.kinds: Counter[str | None] = Counter()
        title = _title(folder)
        self.lines = 1 + (2 if reserve else 0)
        self.bytes = len(title.encode()) + 1 + (len(reserve.encode()) + 2 if reserve else 0)

    def add_file(self, path: str) -> None:
        self.files.append(path)
        self.kinds[self.cat.entries[path].type] += 1
        self.lines += 1
        self.bytes += self.cat.line_bytes(path)

    def drop_file(self) -> None:
        path = self.files.pop()
        self.kinds[self.cat.entries[path].type] -= 1
        self.lines -= 1
        self.bytes -= self.cat.line_bytes(path)

    def add_inline(self, sub: str) -> None:
        node = self.cat.folders[sub]
        self.inline.append(sub)
        self.kinds.update(node.types)
        self.lines += node.count
        self.bytes += node.bytes

    def collapse(self, sub: str) -> None:
        node = self.cat.folders[sub]
        self.inline.remove(sub)
        self.kinds.subtract(node.types)
        self.lines -= node.count
        self.bytes -= node.bytes
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

    def _sections(self) -> list[str]:
        names = [_section_title(k) for k, n in self.kinds.items() if n > 0]
        return names + ([FOLDERS] if self.links else [])

    def fits(self) -> bool:
        sections = self._sections()
        lines = self.lines + 2 * len(sections)
        size = self.bytes + sum(len(n.encode()) + 5 for n in sections)
        return lines <= self.max_lines and size <= self.max_bytes

    def text(self, hidden_files: int, hidden_folders: int) -> str:
        listed = [self.cat.entries[p] for p in self.files]
        for sub in self.inline:
            listed.extend(self.cat.walk(sub))
        groups: dict[str | None, list[Entry]] = {}
        for entry in listed:
            groups.setdefault(entry.type, []).append(entry)
        out = [_title(self.folder)]
        for kind in sorted(groups, key=_section_order):
            out += ["", f"## {_section_title(kind)}"]
            items = sorted(groups[kind], key=lambda e: e.path)
            items.sort(key=lambda e: e.updated or "", reverse=True)  # stable: ties stay by path
            out += [_line(self.cat, e.path, self.folder) for e in items]
        if self.links:
            out += ["", f"## {FOLDERS}"]
            out += [self.links[s] for s in sorted(self.links)]
        if hidden_files or hidden_folders:
            out += ["", _more_line(self.folder, hidden_files, hidden_folders)]
        return "\n".join(out) + "\n"


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
    for number, raw in enumerate(text.splitlines(), 1):
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
