"""`memdir import`: bring in memories kept by other systems, losing nothing and changing nothing silently.

Each importer writes through `Memdir` (so the journal, the size ceiling and the
secret guard apply), never overwrites unless asked, and reports every item of
the source: the notes it brought in, the lines of every note read (those it
could not bring in too) and the lines that landed; the notes it could not bring
in, with why (the command then exits 1); the files that are not notes; and
every change it made on the way.

- A folder (`import_dir`: a Claude Code memory folder, an Obsidian vault;
  `import_basic_memory`: a basic-memory project): every `.md` file lands byte
  for byte (CRLF, a byte-order mark, frontmatter as its writer left it, no
  `created`/`updated` lines, relative dates as written) at its relative path,
  whose name keeps its bytes (`intake.Names`: renamed, with the reason, only
  where it would clash with a name taken or memdir's paths refuse it).
  memdir reads the dialects (`model.dialect`), so nothing needs rewriting.
  What does change is said: a frontmatter line YAML refuses but its writer
  accepted is quoted (`model.repaired`), or the block is kept as text when
  quoting cannot help; a value the secret guard refuses is redacted on its
  line (`intake.redacted`); a file not in UTF-8 is converted. Only regular
  files are read, opened without blocking (a FIFO named `*.md` is left out).
  A folder's `MEMORY.md` (Claude Code keeps notes in it) is kept whole as the
  hand-kept part of the destination's `MEMORY.md` (`Memdir.keep_notes`), or,
  when that file keeps notes of its own, as the topic file `memory-notes.md`.
- mcp-memory: see `mcp_memory.py`.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import model, paths
from ..core import index
from ..core.memdir import ANY, Memdir
from ..core.ops import Op
from ..errors import Conflict, MemdirError
from ..paths import INDEX_NAME
from . import intake

NOTES_FILE = "memory-notes.md"  # where a MEMORY.md's notes go when the destination's MEMORY.md keeps its own


def _plural(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


@dataclass
class ImportResult:
    """What an import did with every file (or record) of its source, and every change it made on the way."""

    imported: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # files that took in what a re-import added
    skipped: list[tuple[str, str]] = field(default_factory=list)  # notes not brought in: (source path, why)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # files that are not notes: (source path, why)
    renamed: list[tuple[str, str, str]] = field(default_factory=list)  # (source path, memory path, why)
    repaired: list[tuple[str, list[int]]] = field(default_factory=list)  # (path, file lines quoted for YAML)
    as_text: list[tuple[str, str]] = field(default_factory=list)  # (path, why its frontmatter is read as text)
    redacted: list[tuple[str, int, str]] = field(default_factory=list)  # (path, file line, what it looked like)
    converted: list[tuple[str, str]] = field(default_factory=list)  # (path, how its text was read)
    dangling: list[str] = field(default_factory=list)  # index lines naming files that are not there
    notes: list[str] = field(default_factory=list)  # anything else worth knowing, one line each
    kept: list[tuple[str, str]] = field(default_factory=list)  # (source MEMORY.md, where its notes are)
    unit: str = "note"  # what the source's items are: notes (a folder) or records (a memory.jsonl)
    files_in: int = 0  # items of the source brought in
    lines_in: int = 0  # the lines of every item read, as the source has them (those not brought in too)
    lines_out: int = 0  # the lines the items brought in hold in the destination
    lines_skipped: int = 0  # the lines of the items read but not brought in

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "unchanged": self.unchanged,
            "merged": self.merged,
            "skipped": [{"path": p, "why": w} for p, w in self.skipped],
            "left_out": [{"path": p, "why": w} for p, w in self.left_out],
            "renamed": [{"from": a, "to": b, "why": w} for a, b, w in self.renamed],
            "repaired": [{"path": p, "lines": n} for p, n in self.repaired],
            "frontmatter_as_text": [{"path": p, "why": w} for p, w in self.as_text],
            "redacted": [{"path": p, "line": n, "what": w} for p, n, w in self.redacted],
            "converted": [{"path": p, "how": w} for p, w in self.converted],
            "kept_notes": [{"from": s, "to": d} for s, d in self.kept],
            "index_lines_without_file": self.dangling,
            "notes": self.notes,
            "files": {"source": self.files_in + len(self.skipped) + len(self.left_out), self.unit + "s": self.files_in
                      + len(self.skipped), "brought_in": self.files_in, "skipped": len(self.skipped),
                      "left_out": len(self.left_out)},
            "lines": {"in": self.lines_in, "out": self.lines_out, "skipped": self.lines_skipped},
        }

    def summary(self) -> str:
        head = f"imported {_plural(len(self.imported), 'file')}"
        for count, what in ((len(self.merged), "merged"), (len(self.unchanged), "unchanged")):
            if count:
                head += f", {count} {what}"
        lines = f"{_plural(self.lines_in, 'line')} in, {self.lines_out:,} out"
        if self.lines_skipped:
            lines += f", {self.lines_skipped:,} in the {_plural(len(self.skipped), self.unit)} not brought in"
        total = self.files_in + len(self.skipped)
        out = [head, f"brought in {self.files_in:,} of {_plural(total, self.unit)}: {lines}"]
        for source, where in self.kept:
            out.append(f"kept {source} whole in {where}")
        out += [f"renamed '{a}' to '{b}': {w}" for a, b, w in self.renamed]
        for path, numbers in self.repaired:
            shown = ", ".join(str(x) for x in numbers)
            out.append(f"repaired {path} line{'' if len(numbers) == 1 else 's'} {shown}: quoted a value "
                       "that plain YAML refuses and its writer accepts (a colon, a {{placeholder}}, an @name)")
        out += [f"kept the frontmatter of {p} as text: {w}" for p, w in self.as_text]
        out += [f"redacted {p} line {n}: it held what looks like {w} (now {intake.REDACTED}); the rest is as written"
                for p, n, w in self.redacted]
        out += [f"converted {p}: {w}" for p, w in self.converted]
        out += [f"skipped {p}: {w}" for p, w in self.skipped]
        out += _grouped(self.left_out)
        out += [f"MEMORY.md names {p}, which is not in the folder" for p in self.dangling]
        out.extend(self.notes)
        return "\n".join(out)

    def read(self, lines: int) -> None:
        """Count the lines of one source item read (whether it is brought in or not)."""
        self.lines_in += lines

    def skip(self, source: str, why: str, lines: int = 0) -> None:
        """One source item read (its `lines`) that is not brought in."""
        self.skipped.append((source, why))
        self.lines_skipped += lines

    def landed(self, path: str, change: str, lines_out: int, items: int = 1) -> None:
        """Count the source items (one note; a file's records) whose text is now at `path` in the destination."""
        {"unchanged": self.unchanged, "merged": self.merged}.get(change, self.imported).append(path)
        self.files_in += items
        self.lines_out += lines_out


def _grouped(left_out: list[tuple[str, str]]) -> list[str]:
    """The files that are not notes, one line per kind (a vault's hundreds of images are one line)."""
    plain = Counter(w.split(" (")[0] for _, w in left_out if w.startswith(_NOT_NOTE))
    kinds = Counter(p.rsplit(".", 1)[-1].lower() if "." in p.rsplit("/", 1)[-1] else "no extension"
                    for p, w in left_out if w.startswith(_NOT_NOTE))
    out = []
    if plain:
        shown = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in kinds.most_common())
        out.append(f"left out {_plural(sum(kinds.values()), 'file')} that {'is' if sum(kinds.values()) == 1 else 'are'} "
                   f"not markdown ({shown}): memdir keeps .md notes, so links to them stay as written")
    return out + [f"left out {p}: {w}" for p, w in left_out if not w.startswith(_NOT_NOTE)]


_NOT_NOTE = "not a markdown note"


def write_as_written(md: Memdir, result: ImportResult, path: str, text: str, *, overwrite: bool, source: str,
                     lines_in: int) -> bool:
    """Land `text` byte for byte at `path` (an identical file there is `unchanged`); record the outcome."""
    try:
        _, old, _ = md.read_text(path)
    except MemdirError:
        old = None
    if old == text:
        result.landed(path, "unchanged", model.count_lines(text))
        return True
    try:
        md.apply([Op.write(path, text, expect=ANY if overwrite else None, as_written=True)])
    except MemdirError as e:
        why = e.message
        if old is not None and isinstance(e, Conflict):
            why = f"{path} is already in the memory with other text (use --overwrite to replace it)"
        result.skip(source, why, lines_in)
        return False
    result.landed(path, "imported", model.count_lines(text))
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
                result.left_out.append((at + d, "a symlinked folder; import does not follow folder links"))
            elif d.startswith("."):
                n = _count(where)
                result.left_out.append((at + d + "/", f"a hidden folder ({n} file{'' if n == 1 else 's'}: another "
                                                      "tool's settings or data); not memories"))
            else:
                keep.append(d)
        dirs[:] = keep
        for name in sorted(files):
            if name.startswith("."):
                result.left_out.append((at + name, "a hidden file; not a memory"))
            elif not name.lower().endswith(".md"):
                kind = name.rsplit(".", 1)[-1].lower() if "." in name else "no extension"
                result.left_out.append((at + name, f"{_NOT_NOTE} ({kind}); memdir keeps .md files only, "
                                                   "so links to it stay as written"))
            else:
                found.append(at + name)
    return found


def _text(root: Path, rel: str, result: ImportResult) -> str | None:
    """A source note's text as written (counted as read), or None with the reason recorded."""
    if not _inside(root, rel):
        result.left_out.append((rel, "a symlink leading out of the source folder; not followed"))
        return None
    try:
        data = intake.read_regular(root / rel)
    except OSError as e:
        result.skip(rel, f"cannot be read ({e.strerror or e})")
        return None
    if data is None:
        result.left_out.append((rel, "not a regular file (a FIFO, socket or device named *.md); not read"))
        return None
    text, how = intake.decoded(data)
    if how:
        result.converted.append((rel, how))
    result.read(model.count_lines(text))
    return text


def _readable(path: str, text: str, result: ImportResult) -> str:
    """`text` with a frontmatter block its writer accepted but plain YAML refuses quoted where it must be,
    or as it is, its block then read as text (and the report says which)."""
    try:
        model.parse(text, path=path, strict=True)
        return text
    except MemdirError as e:
        refused = e.message
    try:
        block, _ = model.split(text, path=path)
    except MemdirError:
        block = None  # never closed: all of it is text
    fixed, lines = model.repaired(block) if block is not None else (block, [])
    if not lines or fixed is None or block is None:
        why = refused.split(": ", 1)[-1] if refused.startswith(path) else refused
        result.as_text.append((path, f"{why}; memdir reads the file without it (name from the file name), as written"))
        return text
    result.repaired.append((path, lines))
    start = text.index("\n") + 1  # the block starts after the opening '---' line
    return text[:start] + fixed + text[start + len(block):]


def _secure(md: Memdir, path: str, text: str, result: ImportResult) -> str:
    """`text` with the values the secret guard refuses redacted, each line reported."""
    if not md.limits.secret_guard:
        return text
    clean, found = intake.redacted(text)
    result.redacted += [(path, n, kind) for n, kind in found]
    return clean


def _keep_index(md: Memdir, rel: str, text: str, folder: str, result: ImportResult, overwrite: bool) -> None:
    """A source MEMORY.md: its notes kept whole in the destination's MEMORY.md (or a topic file) in `folder`."""
    here = folder + INDEX_NAME
    lines = model.count_lines(text)
    if index.kept(text).empty:
        result.left_out.append((rel, "memdir's own generated index; rebuilt from the files"))
        result.lines_in -= lines  # not a note: its lines are memdir's, written again
        return
    text = _secure(md, here, text, result)
    try:
        changed = md.keep_notes(text, folder)
    except Conflict:
        target = folder + NOTES_FILE
        if write_as_written(md, result, target, text, overwrite=overwrite, source=rel, lines_in=lines):
            result.kept.append((rel, f"{target} ({here} keeps notes of its own)"))
        return
    except MemdirError as e:
        result.skip(rel, e.message, lines)
        return
    result.kept.append((rel, f"{here}, around memdir's marked index region"))
    result.landed(here, "imported" if changed else "unchanged", lines)


def import_dir(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import every markdown file under `source` as written, and its MEMORY.md notes; report every other file."""
    root = Path(source)
    result = ImportResult()
    files = sorted(_walk(root, result), key=lambda r: (unicodedata.normalize("NFC", r) != r, r))  # composed names first
    names = intake.Names(e.path for e in md.list())
    indexes = [rel for rel in files if rel.rsplit("/", 1)[-1].casefold() == INDEX_NAME.casefold()]
    topics = [rel for rel in files if rel not in indexes]
    for rel in topics:
        text = _text(root, rel, result)
        if text is None:
            continue
        lines = model.count_lines(text)
        dest, renamed = names.place(rel)
        try:
            path = paths.topic_path(dest)
        except MemdirError as e:
            result.skip(rel, e.message, lines)
            continue
        result.renamed += renamed
        text = _secure(md, path, _readable(path, text, result), result)
        write_as_written(md, result, path, text, overwrite=overwrite, source=rel, lines_in=lines)
    present = set(topics)
    for rel in indexes:  # after the topic files, so the index region lists them
        source_folder = rel[: -len(INDEX_NAME)]
        folder, renamed = names.folder(source_folder)
        result.renamed += renamed
        text = _text(root, rel, result)
        if text is None:
            continue
        listed, _ = index.parse(text)
        result.dangling += sorted({source_folder + x.path.lstrip("./") for x in listed} - present - {rel})
        _keep_index(md, rel, text, folder, result, overwrite)
        _untyped(md, folder, listed, result)
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
