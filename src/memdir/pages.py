"""Paging: how much of one file or one listing a single answer returns.

Every face (the tools, the MCP resources, the HTTP API, the memory tool, the
CLI) pages through these two functions, so a 10 MB one-line file or a folder
of 100,000 files never comes back whole, and each face says the same thing
about where the next page starts. Offsets are 1-based everywhere: line 1,
file 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .paths import lines as lines_of

T = TypeVar("T")
_MARK_ROOM = 48  # bytes kept free for the "line cut" mark


@dataclass(frozen=True)
class Lines:
    """One page of a text: `lines` start at line `offset` of `total`; `cut` lists lines shown only in part."""

    lines: list[str]
    offset: int
    total: int
    cut: tuple[int, ...] = ()

    @property
    def end(self) -> int:
        """The number of the last line shown (offset - 1 when the page is empty)."""
        return self.offset + len(self.lines) - 1

    @property
    def next(self) -> int | None:
        """Where the next page starts, or None at the end of the text."""
        return self.end + 1 if self.end < self.total else None

    @property
    def whole(self) -> bool:
        """True when the page is the whole text, unchanged."""
        return self.offset == 1 and self.next is None and not self.cut

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing: `items` start at item `offset` (1-based) of `total`."""

    items: list[T]
    offset: int
    total: int

    @property
    def end(self) -> int:
        return self.offset + len(self.items) - 1

    @property
    def next(self) -> int | None:
        return self.end + 1 if self.end < self.total else None


def clip(line: str, max_bytes: int) -> tuple[str, int]:
    """`line` cut to at most `max_bytes` UTF-8 bytes (on a character boundary), and the bytes left out."""
    data = line.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return line, 0
    kept = data[:max_bytes].decode("utf-8", "ignore")
    return kept, len(data) - len(kept.encode("utf-8", "surrogatepass"))


def lines(text: str | Sequence[str], offset: int = 1, limit: int | None = None, *,
          max_lines: int, max_bytes: int) -> Lines:
    """The page of `text` from line `offset`: at most `limit` (and `max_lines`) lines and `max_bytes` bytes.

    A line longer than the byte cap is cut and marked (`cut`), so one huge
    line cannot blow the cap; the page always holds at least one line when
    there is one to show, so paging always moves on.
    """
    all_lines = lines_of(text) if isinstance(text, str) else list(text)
    count = max_lines if limit is None else max(0, min(limit, max_lines))
    start = max(offset, 1)
    shown: list[str] = []
    cut: list[int] = []
    budget = max_bytes
    for number in range(start, min(len(all_lines), start - 1 + count) + 1):
        line = all_lines[number - 1]
        if shown:  # later lines go whole, or wait for the next page
            size = len(line.encode("utf-8", "surrogatepass")) + 1
            if size > budget:
                break
        else:  # the first line alone may be over the cap: cut it, leaving room for the mark
            if len(line.encode("utf-8", "surrogatepass")) + 1 > max_bytes:
                line, left = clip(line, max(max_bytes - _MARK_ROOM, max_bytes // 2, 1))
                line += f" …[line {number} cut: {left:,} more bytes]"
                cut.append(number)
            size = len(line.encode("utf-8", "surrogatepass")) + 1
        shown.append(line)
        budget -= size
    return Lines(shown, start, len(all_lines), tuple(cut))


def items(seq: Sequence[T], offset: int = 1, limit: int | None = None, *, max_items: int, max_bytes: int,
          size: Callable[[T], int]) -> Page[T]:
    """The page of `seq` from item `offset`: at most `limit` (and `max_items`) items whose `size`s fit `max_bytes`.

    The first item is always included, so a listing always moves on.
    """
    count = max_items if limit is None else max(0, min(limit, max_items))
    start = max(offset, 1)
    out: list[T] = []
    budget = max_bytes
    for item in seq[start - 1 : start - 1 + count]:
        cost = size(item)
        if out and cost > budget:
            break
        out.append(item)
        budget -= cost
    return Page(out, start, len(seq))
