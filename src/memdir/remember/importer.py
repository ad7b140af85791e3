"""`memdir import`: bring in memories kept by other systems, losing nothing.

Each importer writes through `Memdir` (so the journal, size limits and the
secret guard apply), never overwrites unless asked, and reports every file of
the source: what it brought in, with the lines it read and the lines that
landed, and what it did not, with the reason.

- A folder (`import_dir`: a Claude Code memory folder, an Obsidian vault;
  `import_basic_memory`: a basic-memory project): every `.md` file lands byte
  for byte at its relative path (`Op.write(as_written=True)`): frontmatter
  as its writer left it (keys, order, dates, other tools' types), no
  `created`/`updated` lines added, relative dates kept as written. memdir
  reads the dialects (`model.dialect`), so nothing needs rewriting. The one
  change: a value plain YAML refuses but its writer accepted (an unquoted
  `title: Decision: Postgres`) is quoted (`model.repaired`), and the report
  says which line. A folder's `MEMORY.md` (Claude Code keeps notes in it) is
  kept whole as the hand-kept part of the destination's `MEMORY.md`
  (`Memdir.keep_notes`), or, when that file keeps notes of its own, as the
  topic file `memory-notes.md`.
- mcp-memory: see `mcp_memory.py`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import model, paths
from ..core import index
from ..core.memdir import ANY, Memdir
from ..core.ops import Op
from ..errors import Conflict, MemdirError
from ..paths import INDEX_NAME

NOTES_FILE = "memory-notes.md"  # where a MEMORY.md's notes go when the destination's MEMORY.md keeps its own


@dataclass
class ImportResult:
    """What an import did with every file (or record) of its source."""

    imported: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # files that took in what a re-import added
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (source path, why)
    repaired: list[tuple[str, list[int]]] = field(default_factory=list)  # (path, file lines quoted for YAML)
    dangling: list[str] = field(default_factory=list)  # index lines naming files that are not there
    notes: list[str] = field(default_factory=list)  # anything else worth knowing, one line each
    kept: list[tuple[str, str]] = field(default_factory=list)  # (source MEMORY.md, where its notes are)
    files_in: int = 0  # files (or records) of the source brought in
    lines_in: int = 0  # their lines as the source has them
    lines_out: int = 0  # the lines they hold in the destination

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "unchanged": self.unchanged,
            "merged": self.merged,
            "skipped": [{"path": p, "why": w} for p, w in self.skipped],
            "repaired": [{"path": p, "lines": n} for p, n in self.repaired],
            "kept_notes": [{"from": s, "to": d} for s, d in self.kept],
            "index_lines_without_file": self.dangling,
            "notes": self.notes,
            "files": {"source": self.files_in + len(self.skipped), "brought_in": self.files_in,
                      "left_out": len(self.skipped)},
            "lines": {"in": self.lines_in, "out": self.lines_out},
        }

    def summary(self) -> str:
        n = len(self.imported)
        head = f"imported {n} file{'' if n == 1 else 's'}"
        for count, what in ((len(self.merged), "merged"), (len(self.unchanged), "unchanged")):
            if count:
                head += f", {count} {what}"
        lines = f"{self.lines_in:,} line{'' if self.lines_in == 1 else 's'} in, {self.lines_out:,} out"
        out = [head, f"brought in {self.files_in} of {self.files_in + len(self.skipped)} source items: {lines}"]
        for source, where in self.kept:
            out.append(f"kept {source} whole in {where}")
        for path, numbers in self.repaired:
            shown = ", ".join(str(x) for x in numbers)
            out.append(f"repaired {path} line{'' if len(numbers) == 1 else 's'} {shown}: quoted a value "
                       "that plain YAML refuses and its writer accepts (a colon, a {{placeholder}})")
        for path, why in self.skipped:
            out.append(f"skipped {path}: {why}")
        for path in self.dangling:
            out.append(f"MEMORY.md names {path}, which is not in the folder")
        out.extend(self.notes)
        return "\n".join(out)

    def landed(self, path: str, change: str, lines_in: int, lines_out: int) -> None:
        """Count one source item whose text is now in the destination."""
        {"unchanged": self.unchanged, "merged": self.merged}.get(change, self.imported).append(path)
        self.files_in += 1
        self.lines_in += lines_in
        self.lines_out += lines_out


def write_as_written(md: Memdir, result: ImportResult, path: str, text: str, *, overwrite: bool, source: str,
                     lines_in: int) -> bool:
    """Land `text` byte for byte at `path` (an identical file there is `unchanged`); record the outcome."""
    try:
        _, old, _ = md.read_text(path)
    except MemdirError:
        old = None
    if old == text:
        result.landed(path, "unchanged", lines_in, model.count_lines(text))
        return True
    try:
        md.apply([Op.write(path, text, expect=ANY if overwrite else None, as_written=True)])
    except MemdirError as e:
        why = e.message
        if old is not None and isinstance(e, Conflict):
            why = "already in the memory with other text (use --overwrite to replace it)"
        result.skipped.append((source, why))
        return False
    result.landed(path, "imported", lines_in, model.count_lines(text))
    return True


def _inside(root: Path, rel: str) -> bool:
    """Whether `rel` really lies in `root`: a symlink may point anywhere (~/.netrc), and is not followed out."""
    real, top = os.path.realpath(root / rel), os.path.realpath(root)
    return real.startswith(top + os.sep)


def _count(folder: str) -> int:
    return sum(len(files) for _, _, files in os.walk(folder))


def _walk(root: Path, result: ImportResult) -> list[str]:
    """Every `.md` file under `root` to bring in; every other file is reported with the reason it stays out."""
    found = []
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        at = "" if rel == "." else rel + "/"
        keep = []
        for d in sorted(dirs):
            where = os.path.join(folder, d)
            if os.path.islink(where):
                result.skipped.append((at + d, "a symlinked folder; import does not follow folder links"))
            elif d.startswith("."):
                n = _count(where)
                result.skipped.append((at + d + "/", f"a hidden folder ({n} file{'' if n == 1 else 's'}: another "
                                                     "tool's settings or data); not memories"))
            else:
                keep.append(d)
        dirs[:] = keep
        for name in sorted(files):
            if name.startswith("."):
                result.skipped.append((at + name, "a hidden file; not a memory"))
            elif not name.lower().endswith(".md"):
                kind = name.rsplit(".", 1)[-1].lower() if "." in name else "no extension"
                result.skipped.append((at + name, f"not a markdown note ({kind}); memdir keeps .md files only, "
                                                  "so links to it stay as written"))
            else:
                found.append(at + name)
    return found


def _text(root: Path, rel: str, result: ImportResult) -> str | None:
    if not _inside(root, rel):
        result.skipped.append((rel, "a symlink leading out of the source folder; not followed"))
        return None
    try:
        return (root / rel).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        result.skipped.append((rel, f"not UTF-8 text (byte {e.start})"))
    except OSError as e:
        result.skipped.append((rel, f"cannot be read ({e.strerror or e})"))
    return None


def _repaired(path: str, text: str, result: ImportResult) -> str:
    """`text` with a frontmatter block its writer accepted but plain YAML refuses quoted where it must be."""
    try:
        model.parse(text, path=path, strict=True)
        return text
    except MemdirError:
        pass
    try:
        block, _ = model.split(text, path=path)
    except MemdirError:
        return text  # never closed: refused with its own message
    if block is None:
        return text
    fixed, lines = model.repaired(block)
    if not lines:
        return text
    result.repaired.append((path, lines))
    start = text.index("\n") + 1  # the block starts after the opening '---' line
    return text[:start] + fixed + text[start + len(block):]


def _keep_index(md: Memdir, root: Path, rel: str, result: ImportResult, overwrite: bool) -> None:
    """A source MEMORY.md: its notes kept whole in the destination's MEMORY.md (or a topic file)."""
    text = _text(root, rel, result)
    if text is None:
        return
    folder = rel[: -len(INDEX_NAME)]
    here = folder + INDEX_NAME
    if index.kept(text).empty:
        result.skipped.append((rel, "memdir's own generated index; rebuilt from the files"))
        return
    lines = model.count_lines(text)
    try:
        changed = md.keep_notes(text, folder)
    except Conflict:
        target = folder + NOTES_FILE
        if write_as_written(md, result, target, text, overwrite=overwrite, source=rel, lines_in=lines):
            result.kept.append((rel, f"{target} ({here} keeps notes of its own)"))
        return
    except MemdirError as e:
        result.skipped.append((rel, e.message))
        return
    result.kept.append((rel, f"{here}, around memdir's marked index region"))
    result.landed(here, "imported" if changed else "unchanged", lines, lines)


def import_dir(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import every markdown file under `source` as written, and its MEMORY.md notes; report every other file."""
    root = Path(source)
    result = ImportResult()
    files = _walk(root, result)
    indexes = [rel for rel in files if rel.rsplit("/", 1)[-1].casefold() == INDEX_NAME.casefold()]
    topics = [rel for rel in files if rel not in indexes]
    for rel in topics:
        text = _text(root, rel, result)
        if text is None:
            continue
        try:
            path = paths.topic_path(rel)
        except MemdirError as e:
            result.skipped.append((rel, e.message))
            continue
        lines = model.count_lines(text)
        write_as_written(md, result, path, _repaired(path, text, result), overwrite=overwrite, source=rel, lines_in=lines)
    present = set(topics)
    for rel in indexes:  # after the topic files, so the index region lists them
        text = _text(root, rel, result) or ""
        folder = rel[: -len(INDEX_NAME)]
        listed, _ = index.parse(text)
        result.dangling += sorted({folder + x.path.lstrip("./") for x in listed} - present - {folder + INDEX_NAME})
        _untyped(md, folder, listed, result)
        _keep_index(md, root, rel, result, overwrite)
    return result


def _untyped(md: Memdir, folder: str, listed: list[index.IndexLine], result: ImportResult) -> None:
    """Name the files a MEMORY.md files under a type (`## Feedback`, `#feedback`) that say no type themselves:
    the import does not write a type into them, the report says how to make it one."""
    for line in listed:
        kind = next((k.lower() for k in (line.category, line.section) if k and k.lower() in md.limits.types), None)
        path = folder + line.path.lstrip("./")
        if kind is None or path not in result.imported + result.unchanged:
            continue
        try:
            if md.read(path).type is None:
                result.notes.append(f"{path}: {folder}{INDEX_NAME} line {line.number} files it under {kind}, but the "
                                    f"file names no type; add 'type: {kind}' to its frontmatter to make it one")
        except MemdirError:
            continue


# ---------------------------------------------------------------- shared helpers


def slug(text: str) -> str:
    """A file-name-safe form of a name: lowercase words joined by '-' ('John Smith' -> 'john-smith')."""
    words = re.findall(r"\w+", text.lower())
    return "-".join(words)[:80].strip("-_") or "untitled"


# ---------------------------------------------------------------- basic-memory

_WIKI = re.compile(r"!?\[\[([^\]|#^\\]+)(?:\\?[|#^][^\]]*)?\]\]")


def import_basic_memory(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import a basic-memory project as written (`import_dir`), and report `[[links]]` that name no note.

    basic-memory's `title`, `permalink`, `type`, observations (`- [category]
    text`) and relations (`- relation [[X]]`) stay as they are: memdir reads the
    title as the name, and a link finds a note by its title.
    """
    result = import_dir(md, source, overwrite=overwrite)
    known: set[str] = set()
    bodies: list[tuple[str, str]] = []
    for path in result.imported + result.unchanged:
        if path.rsplit("/", 1)[-1] == INDEX_NAME:
            continue
        try:
            m = md.read(path)
        except MemdirError:
            continue
        known |= {slug(path.rsplit("/", 1)[-1][:-3]), slug(m.name), slug(str(m.meta.get("permalink", "")))}
        known |= {slug(a) for a in model.aliases_of(m.meta)}
        bodies.append((path, m.body))
    for path, body in bodies:
        for target in dict.fromkeys(_WIKI.findall(body)):
            if slug(target) not in known and slug(target.rsplit("/", 1)[-1]) not in known:
                result.notes.append(f"{path}: [[{target}]] names no note in {source}; the link is kept as text")
    return result
