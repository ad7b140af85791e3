"""Anthropic's memory tool (`memory_20250818`) served from any memdir backend.

    from anthropic import Anthropic
    from memdir.anthropic import MemdirMemoryTool

    tool = MemdirMemoryTool(memdir.open("memory"))
    runner = Anthropic().beta.messages.tool_runner(model=..., max_tokens=1024, tools=[tool], messages=[...])

Claude sends `view`, `create`, `str_replace`, `insert`, `delete` and `rename`
on `/memories/...`; `/memories/x.md` is the memdir path `x.md`. Every change
goes through `Memdir`, so path checks, limits, the secret guard, scopes and the
journal apply and any change can be undone (`memdir undo`).

Texts: results and errors are those of the SDK's own local-filesystem tool
(`BetaLocalFilesystemMemoryTool`), which Claude is trained against, and a file
views back exactly as the model wrote it, with the same line numbers: memdir's
own `created`/`updated` lines are kept out of what the model sees (frontmatter
the model or a person wrote stays, as written). A refusal only memdir makes (a
limit, a secret, a scope, a bad name) is memdir's one-line message. Errors are
raised as `ToolError`, which the SDK's tool runner returns to Claude as an
`is_error` tool result. `tests/test_anthropic_differential.py` runs both tools
on the same commands and lists every place they differ, with the reason.

Choices:
- Only markdown topic files: a `create` of `/memories/notes.txt` is refused
  with a message naming `/memories/notes.md`, since mapping other extensions
  onto `.md` cannot be undone unambiguously when listing.
- `view /memories` shows the generated index (`MEMORY.md`: one line per file
  with its description) first, then the directory listing. `MEMORY.md` can be
  viewed but not written. A directory's size is the total of its files.
- No command turns frontmatter into body text: an `insert` at line 0 above the
  `---` block, or an edit that would push the block below other text, is
  refused with the line to use instead.
- A directory `delete` or `rename` is applied to each file under it, after
  checking all of them (existence, scope, destination free) first.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, TypeVar

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from .. import model, pages, paths
from ..core.memdir import Memdir
from ..errors import Conflict, MemdirError, NotFound
from ..model import Entry, Memory
from ..paths import INDEX_NAME

__all__ = ["AsyncMemdirMemoryTool", "MemdirMemoryTool"]

ROOT = "/memories"
WIDTH = 6  # line-number width of the SDK's tool
MAX_LINES = 999_999  # the SDK's tool refuses to show a file longer than this
_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    "view": (("path", str),),
    "create": (("path", str), ("file_text", str)),
    "str_replace": (("path", str), ("old_str", str), ("new_str", str)),
    "insert": (("path", str), ("insert_line", int), ("insert_text", str)),
    "delete": (("path", str),),
    "rename": (("old_path", str), ("new_path", str)),
}

T = TypeVar("T")


def _size(n: int) -> str:
    """A size as the SDK's listing shows it: 0B, 512B, 1.5K, 4K, 1.2M."""
    unit = min((n.bit_length() - 1) // 10, 3) if n else 0
    value = n / 1024**unit
    return f"{int(value) if value == int(value) else f'{value:.1f}'}{'BKMG'[unit]}"


def _numbered(lines: builtins.list[str], first: int) -> str:
    return "\n".join(f"{n:>{WIDTH}}\t{line}" for n, line in enumerate(lines, first))


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over a `Memdir` (any backend, any scope)."""

    def __init__(self, md: Memdir, *, cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self.md = md.for_agent()  # a model drives this tool: rate limited by default
        self._shown: dict[tuple[str, str], int] = {}  # (path, version) -> size of the text as shown

    # ------------------------------------------------------------ dispatch

    def call(self, input: object) -> str:
        """Check the input's shape first: the SDK builds commands without validating them."""
        if not isinstance(input, dict):
            raise ToolError(f"the memory tool takes an object with a `command`, got {type(input).__name__}")
        command = input.get("command")
        if command not in _FIELDS:
            raise ToolError(f"unknown command {command!r}; use one of {', '.join(_FIELDS)}")
        for name, kind in _FIELDS[command]:
            value = input.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ToolError(f"`{command}` needs `{name}` as {'an integer' if kind is int else 'a string'}, got {value!r}")
        view_range = input.get("view_range")
        if view_range is not None and not (
            isinstance(view_range, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        ):
            raise ToolError(f"`view_range` must be two integers [start, end], got {view_range!r}")
        result = super().call(input)
        assert isinstance(result, str)
        return result

    def _guard(self, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a memdir call; its refusal becomes a one-line tool error."""
        try:
            return action(*args, **kwargs)
        except MemdirError as e:
            raise ToolError(e.message) from None

    # ------------------------------------------------------------ paths

    def _rel(self, path: str) -> str:
        """'/memories/a/../b.md' -> 'b.md'; '/memories' -> ''. Names are checked in memdir."""
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        parts: builtins.list[str] = []
        for part in path[len(ROOT) :].split("/"):
            if part == "..":
                if not parts:
                    raise ToolError(f"Path {path} would escape {ROOT} directory")
                parts.pop()
            elif part not in ("", "."):
                parts.append(part)
        return "/".join(parts)

    def _topic(self, path: str, rel: str) -> str:
        """The memdir path of a file to create or move to: markdown only."""
        name = rel.rsplit("/", 1)[-1]
        if not name.endswith(".md"):
            stem = rel.rsplit(".", 1)[0] if "." in name else rel
            raise ToolError(f"{path} is not a markdown file; memories are .md files, so use {ROOT}/{stem}.md instead")
        return self._guard(paths.topic_path, rel)

    def _is_dir(self, rel: str) -> bool:
        if not rel:
            return True
        if rel.rsplit("/", 1)[-1].casefold() == INDEX_NAME.casefold():
            return False  # the index's name is never a folder: the file checks say what is wrong with it
        folder = self._guard(paths.folder, rel)
        return bool(self.md.list(folder))

    def _files(self, rel: str) -> builtins.list[str]:
        folder = self._guard(paths.folder, rel)
        return [e.path for e in self.md.list(folder)]

    def _read(self, rel: str) -> Memory | None:
        """The file at a relative path, or None when there is no such markdown file (a folder is not one)."""
        if not rel.endswith(".md") or self._is_dir(rel):
            return None
        try:
            return self.md.read(rel)
        except NotFound:
            return None
        except MemdirError as e:
            raise ToolError(e.message) from None

    def _exists(self, rel: str) -> bool:
        return not rel or self._read(rel) is not None or self._is_dir(rel)

    def _file(self, path: str, rel: str) -> Memory:
        """The file a `str_replace` or `insert` works on, or the SDK's error."""
        mem = self._read(rel)
        if mem is not None:
            return mem
        if self._is_dir(rel):
            raise ToolError(f"The path {path} is not a file.")
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")

    def _save(self, mem: Memory, old: str, new: str, refusal: str) -> None:
        """Replace a file's shown text with `new`; memdir puts back its `created` and sets `updated`."""
        if model.moves_frontmatter(old, new):
            raise ToolError(refusal)
        if mem.text:  # an edit of the whole stored text is a compare-and-swap rewrite of the file
            self._guard(self.md.edit, mem.path, mem.text, new, expect=mem.version)
        else:
            self._guard(self.md.write, mem.path, new, expect=mem.version)

    # ------------------------------------------------------------ commands

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = command.path
        rel = self._rel(path)
        if rel == INDEX_NAME:
            return self._show(path, self.md.index(), command.view_range)
        mem = self._read(rel)
        if mem is not None:
            return self._show(path, model.unstamped(mem.text), command.view_range)
        if self._is_dir(rel):
            return self._listing(path, rel)
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")

    def _show(self, path: str, text: str, view_range: builtins.list[int] | None) -> str:
        """Numbered lines as the SDK shows them (split on newlines only), capped per read."""
        lines = text.split("\n")
        if len(lines) > MAX_LINES:
            raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
        start, stop = 0, len(lines)
        if view_range is not None and len(view_range) == 2:
            start = max(1, view_range[0]) - 1
            stop = len(lines) if view_range[1] == -1 else view_range[1]
        window = range(len(lines))[start:stop]  # the lines the SDK's slice shows (negative ends included)
        first = window.start + 1 if window else start + 1
        last = first + len(window) - 1
        cap = self.md.limits.read_max_lines
        page = pages.lines(lines, first, len(window), max_lines=cap, max_bytes=self.md.limits.read_max_bytes)
        out = f"Here's the content of {path} with line numbers:\n" + _numbered(page.lines, first)
        if page.end < last:  # one read is capped (read_max_lines, read_max_bytes): say how to page on
            out += f"\n(showing lines {first}-{page.end} of {len(lines)}; view with view_range [{page.end + 1}, {min(page.end + cap, last)}] for more)"
        return out

    def _listing(self, path: str, rel: str) -> str:
        folder = self._guard(paths.folder, rel)
        sizes: dict[str, int] = {}  # relative name ("a/", "a/b.md", "c.md") -> bytes
        total = 0
        for entry in self.md.list(folder):
            parts = entry.path[len(folder) :].split("/")
            total += entry.size
            for depth in range(min(len(parts) - 1, 2)):
                key = "/".join(parts[: depth + 1]) + "/"
                sizes[key] = sizes.get(key, 0) + entry.size
            if len(parts) <= 2:
                sizes["/".join(parts)] = self._shown_size(entry)
        if not rel:
            sizes[INDEX_NAME] = len(self.md.index().encode())
        names = sorted(sizes, key=lambda k: k.rstrip("/").split("/"))
        cap = self.md.limits.index_max_lines
        head = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
        lines = [f"{_size(total)}\t{path}"]
        page = pages.items([f"{_size(sizes[n])}\t{path}/{n}" for n in names], max_items=cap,
                           max_bytes=self.md.limits.read_max_bytes, size=lambda line: len(line.encode()) + 1)
        lines += page.items
        if page.next is not None:
            lines.append(f"… and {page.total - page.end} more; view a subdirectory to list it")
        listing = head + "\n" + "\n".join(lines)
        if rel:
            return listing
        index = self.md.index().rstrip("\n")
        return (
            f"{ROOT}/{INDEX_NAME} is the index of this memory, generated from the files (one line per file):\n"
            f"{index}\n\n{listing}"
        )

    def _shown_size(self, entry: Entry) -> int:
        """The size of a file as the model sees it (without memdir's lines); read once per version."""
        key = (entry.path, entry.version)
        size = self._shown.get(key)
        if size is None:
            try:
                size = len(model.unstamped(self.md.read(entry.path).text).encode())
            except MemdirError:  # gone since the listing, or not text: its size as stored
                size = entry.size
            if len(self._shown) >= 10_000:
                self._shown.clear()
            self._shown[key] = size
        return size

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = command.path
        rel = self._rel(path)
        if self._exists(rel):  # before the text is checked, as the SDK's tool answers
            raise ToolError(f"File {path} already exists")
        topic = self._topic(path, rel)
        try:
            self.md.write(topic, command.file_text, expect=None, absolute_dates=False)  # views back as written
        except Conflict:
            raise ToolError(f"File {path} already exists") from None
        except MemdirError as e:
            raise ToolError(e.message) from None
        return f"File created successfully at: {path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path, old, new = command.path, command.old_str, command.new_str
        mem = self._file(path, self._rel(path))
        text = model.unstamped(mem.text)
        count = text.count(old)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
        if count > 1:
            lines, at = [], text.find(old)
            while at >= 0:
                lines.append(str(text.count("\n", 0, at) + 1))
                at = text.find(old, at + 1)
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {', '.join(lines)}. Please ensure it is unique"
            )
        at = text.count("\n", 0, text.find(old))
        after = text.replace(old, new)
        head = model.head_lines(text)
        self._save(mem, text, after, f"This edit would turn the frontmatter of {path} (lines 1-{head}) into body text; "
                                     "keep its '---' lines at the top, or remove the whole block")
        lines_after = after.split("\n")
        lo, hi = max(0, at - 2), min(len(lines_after), at + 3)
        return (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            + _numbered(lines_after[lo:hi], lo + 1)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, at = command.path, command.insert_line
        mem = self._file(path, self._rel(path))
        text = model.unstamped(mem.text)
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        if not 0 <= at <= len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {at}. It should be within the range [0, {len(lines)}].")
        head = model.head_lines(text)
        lines.insert(at, command.insert_text.rstrip("\n"))
        after = "\n".join(lines)
        if not after.endswith("\n"):
            after += "\n"
        self._save(mem, text, after, f"Lines 1-{head} of {path} are its frontmatter, and text inserted at line {at} "
                                     f"would turn them into body text; insert at line {head} to put it right below them")
        return f"The file {path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path
        rel = self._rel(path)
        if not rel:
            raise ToolError(f"Cannot delete the {ROOT} directory itself")
        mem = self._read(rel)
        if mem is not None:
            try:
                self.md.delete(mem.path)
            except NotFound:
                raise ToolError(f"The path {path} does not exist") from None
            except MemdirError as e:
                raise ToolError(e.message) from None
            return f"Successfully deleted {path}"
        files = self._files(rel)
        if not files:
            raise ToolError(f"The path {path} does not exist")
        self._check_writable(files)
        self._each(files, self.md.delete, "deleted")
        return f"Successfully deleted {path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_path, new_path = command.old_path, command.new_path
        src, dst = self._rel(old_path), self._rel(new_path)
        if not src:
            raise ToolError(f"Cannot rename the {ROOT} directory itself")
        if self._exists(dst):
            raise ToolError(f"The destination {new_path} already exists")
        mem = self._read(src)
        if mem is not None:
            self._guard(self.md.rename, mem.path, self._topic(new_path, dst))
            return f"Successfully renamed {old_path} to {new_path}"
        files = self._files(src)
        if not files:
            raise ToolError(f"The path {old_path} does not exist")
        source, target = self._guard(paths.folder, src), self._guard(paths.folder, dst)
        if target.startswith(source):
            raise ToolError(f"cannot move {old_path} into itself; choose a destination outside it")
        moves = {f: self._guard(paths.topic_path, target + f[len(source):]) for f in files}
        self._check_writable([*moves, *moves.values()])
        self._each(files, lambda f: self.md.rename(f, moves[f]), "renamed")
        return f"Successfully renamed {old_path} to {new_path}"

    def _check_writable(self, targets: builtins.list[str]) -> None:
        """Check every file of a directory change against the scope before changing any."""
        scope = self.md.principal
        for f in targets if scope is not None else ():
            try:
                scope.check_write(f)  # type: ignore[union-attr]
            except MemdirError as e:
                raise ToolError(e.message) from None

    def _each(self, files: builtins.list[str], action: Callable[[str], Any], verb: str) -> None:
        """Apply a per-file change to every file of a directory; say how far it got if one fails."""
        for n, f in enumerate(files):
            try:
                action(f)
            except MemdirError as e:
                done = f"; {n} of {len(files)} files were {verb} before it (memdir undo brings each back)" if n else ""
                raise ToolError(f"{e.message}{done}") from None


class AsyncMemdirMemoryTool(BetaAsyncAbstractMemoryTool):
    """The same tool for `AsyncAnthropic`: each command runs the sync tool in a worker thread."""

    def __init__(self, md: Memdir, *, cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self.sync = MemdirMemoryTool(md)

    async def call(self, input: object) -> str:
        from anyio.to_thread import run_sync

        return await run_sync(self.sync.call, input)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self.call(command.model_dump(exclude_none=True))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self.call(command.model_dump())

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self.call(command.model_dump())

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self.call(command.model_dump())

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self.call(command.model_dump())

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self.call(command.model_dump())
