"""What an import reads from another tool's files, and the names it lands them under: nothing changed
without a word.

- `read_regular`: a source file's bytes, only from a regular file opened without blocking (a FIFO or a
  device named `*.md` is no note, and reading one would hang the import for ever).
- `decoded`: the text as written: CRLF stays CRLF, a byte-order mark stays; a file that is not UTF-8 is
  read as what it is (UTF-16 by its mark, Windows-1252 when no byte of it is UTF-8's) or has its bad
  bytes replaced, and the import says which.
- `Names`: the memory path of each source path. A name keeps its bytes (an NFD name from a Mac stays
  NFD); one that would clash with a name already taken (the same but for case or Unicode normalisation:
  `Projects/` beside `projects/`, `Zoë.md` composed beside decomposed) or that memdir's paths refuse (a
  leading space) is renamed, `name (2).md`, and the reason is given.
- `redacted`: a note with a line holding what the secret guard refuses keeps every other byte: only the
  secret's value is replaced (`token=REDACTED`), or the line when the value cannot be singled out.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Iterable

from .. import model, paths
from ..core import guard
from ..errors import InvalidArgument

REDACTED = "REDACTED"  # a plain word: it stays valid YAML in frontmatter, and the guard knows it for a placeholder
_ATOM = re.compile(r"[^\s\"'`<>=&?:,;()\[\]{}]+")  # a value between the separators of URLs, YAML and code
_LEAD = re.compile(r"[^\s\"'`<>=/]*\Z")
_MAX_LINE = 10_000  # a longer line holding a secret is replaced whole (each value tried costs a scan of the line)
_UTF8_PAIR = re.compile(rb"[\xc2-\xf4][\x80-\xbf]")


def read_regular(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes of a regular file, or None for anything else (a FIFO, socket or device); opened without
    blocking, as the folder store reads, so a FIFO cannot stall the import."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def source_text(path: str | os.PathLike[str], what: str) -> bytes:
    """A source file given by name (the MCP server's memory.jsonl): its bytes, or one line saying why not."""
    try:
        data = read_regular(path)
    except OSError as e:
        raise InvalidArgument(f"cannot read {path} ({e.strerror or e}); give {what}") from None
    if data is None:
        raise InvalidArgument(f"{path} is not a regular file (a FIFO, socket or device); give {what}")
    return data


def decoded(data: bytes) -> tuple[str, str | None]:
    """(text, how it was read when not as UTF-8): every byte that is UTF-8 kept as it is."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "converted from UTF-16 (its byte-order mark says so) to UTF-8, which memdir keeps"
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        first = e.start
    if not _UTF8_PAIR.search(data):  # no UTF-8 sequence anywhere: a Windows or Latin-1 file
        try:
            return data.decode("cp1252"), f"read as Windows-1252 (byte {first} is not UTF-8) and kept as UTF-8"
        except UnicodeDecodeError:
            pass
    text = data.decode("utf-8", errors="replace")
    line = data.count(b"\n", 0, first) + 1
    return text, f"bytes that are not UTF-8 (the first on line {line}) replaced by U+FFFD"


# ---------------------------------------------------------------- names


class Names:
    """The memory path for each source path: its own where it can be, else a free one and why."""

    def __init__(self, existing: Iterable[str] = ()) -> None:
        self._taken: dict[str, tuple[str, bool]] = {}  # parent + NUL + folded name -> (the name there, is a folder)
        self._folders: dict[str, tuple[str, str | None]] = {}  # source folder -> (memory folder, why renamed)
        for path in existing:
            parts = path.split("/")
            for i, part in enumerate(parts):
                self._take("".join(p + "/" for p in parts[:i]), part, i < len(parts) - 1)

    def _take(self, parent: str, name: str, folder: bool) -> None:
        self._taken.setdefault(f"{parent}\0{paths.fold(name)}", (name, folder))

    def folder(self, source: str) -> tuple[str, list[tuple[str, str, str]]]:
        """The memory folder for a source folder ('a/b/'), and the folders renamed on the way (from, to, why)."""
        parent, renamed = "", []
        parts = [p for p in source.split("/") if p]
        for i in range(len(parts)):
            key = "".join(p + "/" for p in parts[: i + 1])
            if key not in self._folders:
                name, why = self._free(parent, parts[i], folder=True)
                self._folders[key] = (parent + name + "/", why)
                if why:
                    renamed.append((key, parent + name + "/", why))
            parent = self._folders[key][0]
        return parent, renamed

    def place(self, source: str) -> tuple[str, list[tuple[str, str, str]]]:
        """The memory path for a source file, and what was renamed to get there: (from, to, why) each."""
        cut = source.rfind("/") + 1
        parent, renamed = self.folder(source[:cut])
        name, why = self._free(parent, source[cut:], folder=False)
        if why:
            renamed.append((source, parent + name, why))
        return parent + name, renamed

    def _free(self, parent: str, raw: str, *, folder: bool) -> tuple[str, str | None]:
        name, why = _clean(raw, top=not parent, folder=folder)
        stem, ext = (name, "") if folder or "." not in name else (name[: name.rfind(".")], name[name.rfind("."):])
        n, candidate = 1, name
        while True:
            held = self._taken.get(f"{parent}\0{paths.fold(candidate)}")
            if held is None or held == (candidate, folder):
                break
            if n == 1:
                why = f"{parent}{held[0]}{'/' if held[1] else ''} is already there and {_differs(candidate, held[0])}"
            n += 1
            candidate = f"{stem} ({n}){ext}"
        self._take(parent, candidate, folder)
        return candidate, why


def _differs(a: str, b: str) -> str:
    """How two names that clash differ (their folded forms are equal)."""
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return ("differs only by Unicode normalisation (one spells an accent as a separate character, as macOS "
                "writes names; most file systems take them for one)")
    if a.casefold() == b.casefold():
        return "differs only by case (most file systems take them for one)"
    return "differs only by case and Unicode normalisation (most file systems take them for one)"


def _clean(name: str, *, top: bool, folder: bool) -> tuple[str, str | None]:
    """A name memdir's paths accept, as close to `name` as can be, and why it differs."""
    why = None
    if paths.UNPRINTABLE.search(name) or "\\" in name:
        name = paths.UNPRINTABLE.sub("-", name).replace("\\", "-")
        why = "its name held a control character or a backslash, which memdir's paths may not (now '-')"
    if name != name.strip():
        name = name.strip() or "untitled"
        why = "its name starts or ends with a space, which memdir's paths may not"
    if folder and top and name.casefold() == paths.TENANTS_DIR:
        name, why = f"{name} (folder)", f"a top folder named {paths.TENANTS_DIR}/ is where memdir keeps other tenants"
    if folder and name.casefold() == paths.INDEX_NAME.casefold():
        name, why = f"{name} (folder)", f"a folder named {paths.INDEX_NAME} would hide the index memdir writes there"
    return name, why


# ---------------------------------------------------------------- secrets


def redacted(text: str) -> tuple[str, list[tuple[int, str]]]:
    """`text` with what the secret guard refuses replaced, and (file line, what it looked like) for each."""
    if guard.find_secret(text) is None:
        return text, []
    lines = text.split("\n")
    head = model.head_lines(text)  # a line of the frontmatter goes as a YAML comment
    found: list[tuple[int, str]] = []
    block = False  # inside a private key block: every line of it goes
    for i, line in enumerate(lines):
        hit = guard.find_secret(line)
        begins = hit is not None and hit[0] == "a private key block"
        if begins or block:
            if begins:
                found.append((i + 1, "a private key block"))
            block = "-----END" not in line
            lines[i] = _line_note("a private key block", i < head) + ("\r" if line.endswith("\r") else "")
        elif hit is not None:
            lines[i] = _redact_line(line, i < head)
            found.append((i + 1, hit[0]))
    text = "\n".join(lines)
    for _ in range(len(lines)):  # a secret only the lines together hold (split across two): its line goes whole
        hit = guard.find_secret(text)
        if hit is None:
            break
        kind, number = hit
        lines[number - 1] = _line_note(kind, number <= head)
        found.append((number, kind))
        text = "\n".join(lines)
    return text, sorted(set(found))


def _line_note(kind: str, frontmatter: bool = False) -> str:
    return f"{'# ' if frontmatter else ''}[line redacted by memdir import: it held what looks like {kind}]"


def _redact_line(line: str, frontmatter: bool = False) -> str:
    """The line with each value that completes a secret replaced by REDACTED; the whole line if that fails."""
    if len(line) <= _MAX_LINE:
        out, shift = line, 0
        for m in _ATOM.finditer(line):
            a, b = m.start() + shift, m.end() + shift
            if guard.find_secret(out[:b]) is not None and guard.find_secret(out[:a]) is None:
                lead = _LEAD.search(out, 0, a)  # the value goes back to its `=`, its key's space or its quote
                a = lead.start() if lead is not None else a
                out = out[:a] + REDACTED + out[b:]
                shift += len(REDACTED) - (b - a)
                if guard.find_secret(out) is None:
                    return out
    hit = guard.find_secret(line)
    return _line_note(hit[0] if hit else "a credential", frontmatter) + ("\r" if line.endswith("\r") else "")
