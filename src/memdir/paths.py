"""Path normalisation and checks: paths are data, never commands.

A memory path is relative, uses `/`, ends in `.md`, and names no hidden or
reserved component. Everything that takes a path from outside goes through
`topic_path` (files) or `folder` (prefixes) before touching a store.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

from .errors import InvalidPath

INDEX_NAME = "MEMORY.md"
INTERNAL_DIR = ".memdir"
TENANTS_DIR = "tenants"  # a folder memory's other tenants live here: never part of a memory
MAX_PATH_BYTES = 1024
MAX_PART_BYTES = 255
# Characters that forge lines or reorder text for a reader: line and paragraph
# separators, NEL, and the bidi controls (LRM/RLM, ALM, embeddings, overrides, isolates).
_FORGING = frozenset("\u0085\u2028\u2029\u200e\u200f\u061c") | frozenset(map(chr, range(0x202A, 0x202F))) | frozenset(
    map(chr, range(0x2066, 0x206A))
)


UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f" + "".join(sorted(_FORGING)) + "]")
"""Control characters and the line-forging ones: never in a path, a name or a description."""


def lines(text: str) -> list[str]:
    """The lines of `text`, split on newlines only (a CRLF ending is one break).

    `str.splitlines` also breaks on U+2028, U+0085, form feeds and more, which
    would make memdir's line numbers disagree with every editor and let one
    line pose as two.
    """
    if not text:
        return []
    out = text.split("\n")
    if out[-1] == "":
        out.pop()
    return [line[:-1] if line.endswith("\r") else line for line in out]


def fold(name: str) -> str:
    """How two names clash: the same but for case or Unicode normalisation (macOS writes `é` as `e` and a
    combining accent; a case-insensitive or normalising file system takes both for one file)."""
    return (name if name.isascii() else unicodedata.normalize("NFC", name)).casefold()


def _parts(raw: object, what: str) -> list[str]:
    """The components of a path, as given: a name keeps its bytes (an NFD name stays NFD, so two names
    that differ only by normalisation stay two files); `fold` is what makes them clash for a new name."""
    if not isinstance(raw, str):
        raise InvalidPath(f"{what} must be a string, got {type(raw).__name__}")
    path = raw
    shown = repr(raw)
    bad = UNPRINTABLE.search(path)
    if bad is not None:
        raise InvalidPath(
            f"{what} {shown} contains a control character (U+{ord(bad.group()):04X}); use printable characters only",
            path=raw,
        )
    if "\\" in path:
        raise InvalidPath(f"{what} {shown} contains a backslash; separate folders with '/'", path=raw)
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise InvalidPath(f"{what} {shown} is absolute; give a path relative to the memory root, e.g. 'project/notes.md'", path=raw)
    if path.startswith("~"):
        raise InvalidPath(f"{what} {shown} starts with '~'; give a path relative to the memory root", path=raw)
    if len(path.encode()) > MAX_PATH_BYTES:
        raise InvalidPath(f"{what} {shown[:60]}... is {len(path.encode())} bytes; the limit is {MAX_PATH_BYTES}", path=raw)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if parts and parts[0][1:2] == ":":  # './C:/x.md' is 'C:/x.md' once normal: absolute on Windows either way
        raise InvalidPath(f"{what} {shown} is absolute; give a path relative to the memory root, e.g. 'project/notes.md'", path=raw)
    for part in parts:
        if part == "..":
            raise InvalidPath(f"{what} {shown} contains '..'; paths may not leave the memory root", path=raw)
        if part.startswith("."):
            raise InvalidPath(f"{what} {shown} has a hidden component {part!r}; names starting with '.' are reserved", path=raw)
        if len(part.encode()) > MAX_PART_BYTES:
            raise InvalidPath(f"{what} {shown} has a component over {MAX_PART_BYTES} bytes; shorten it", path=raw)
        if part != part.strip():
            raise InvalidPath(f"{what} {shown} has a component with leading or trailing spaces; remove them", path=raw)
    for part in parts[:-1] if what == "path" else parts:
        if part.casefold() == INDEX_NAME.casefold():
            raise InvalidPath(
                f"{what} {shown} uses {part!r} as a folder; that name is the generated index, so pick another folder name",
                path=raw,
            )
    if parts and parts[0].casefold() == TENANTS_DIR:
        raise InvalidPath(
            f"{what} {shown} is under {parts[0]}/, which is reserved for other tenants' memories; pick another folder",
            path=raw,
        )
    return parts


def topic_path(raw: object) -> str:
    """Return the normal form of a topic-file path, or raise `InvalidPath`."""
    if type(raw) is str:
        return _topic_path_of_text(raw)  # paths repeat (every read checks one): remember the recent ones
    return _topic_path(raw)


@functools.lru_cache(maxsize=1 << 14)
def _topic_path_of_text(raw: str) -> str:
    return _topic_path(raw)


def _topic_path(raw: object) -> str:
    parts = _parts(raw, "path")
    if not parts:
        raise InvalidPath(f"path {raw!r} is empty; name a topic file such as 'project/notes.md'", path=str(raw))
    name = parts[-1]
    if name.casefold() == INDEX_NAME.casefold():
        raise InvalidPath(
            f"path {raw!r} is a generated index; MEMORY.md is rebuilt from the topic files, so write a topic file instead",
            path=str(raw),
        )
    if not name.endswith(".md") or name == ".md":
        raise InvalidPath(f"path {raw!r} is not a markdown topic file; memory paths end in '.md'", path=str(raw))
    return "/".join(parts)


def folder(raw: object) -> str:
    """Return the normal form of a folder prefix: '' for the root, else 'a/b/'."""
    if raw is None or raw == "":
        return ""
    parts = _parts(raw, "folder")
    return "".join(p + "/" for p in parts)


def parent(path: str) -> str:
    """'a/b/c.md' -> 'a/b/'; 'c.md' -> ''."""
    cut = path.rfind("/")
    return path[: cut + 1]


def ancestors(path: str) -> list[str]:
    """Folders containing `path`, root first: 'a/b/c.md' -> ['', 'a/', 'a/b/']."""
    out = [""]
    start = 0
    while (cut := path.find("/", start)) >= 0:
        out.append(path[: cut + 1])
        start = cut + 1
    return out


def relative(path: str, base: str) -> str:
    """`path` as seen from folder `base` (which must contain it)."""
    return path[len(base):]


def user_cache() -> Path:
    """The folder memdir keeps per-user caches in (S3 index copies, vectors, kept MCP answers):
    $MEMDIR_CACHE, else $XDG_CACHE_HOME/memdir, else ~/.cache/memdir."""
    import os

    base = os.environ.get("MEMDIR_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memdir")
    return Path(base)
