"""Anthropic's memory tool (`memory_20250818`) served from any memdir backend.

    from anthropic import Anthropic
    from memdir.anthropic import MemdirMemoryTool

    tool = MemdirMemoryTool(memdir.open("memory"))
    runner = Anthropic().beta.messages.tool_runner(model=..., max_tokens=1024, tools=[tool], messages=[...])

Claude sends `view`, `create`, `str_replace`, `insert`, `delete` and `rename`
on `/memories/...`; `/memories/x.md` is the memdir path `x.md`. Every change
goes through `Memdir`, so path checks, limits, the secret guard, scopes and the
journal apply and any change can be undone (`memdir undo`).

Texts: results and errors use the strings of the public docs (the memory-tool
page), which Claude is trained on, including their `Error: ` prefixes where the
docs have them; where the docs say nothing (a directory's trailing `/`, name
order) the listing follows the SDK's local-filesystem tool. A refusal that only
memdir knows (a limit, a secret, a scope, a bad name) is memdir's one-line
message after `Error: `. Errors are raised as `ToolError`, which the SDK's tool
runner returns to Claude as an `is_error` tool result.

Choices:
- Only markdown topic files: a `create` of `/memories/notes.txt` is refused
  with a message naming `/memories/notes.md`, since mapping other extensions
  onto `.md` cannot be undone unambiguously when listing.
- `view /memories` shows the generated index (`MEMORY.md`: one line per file
  with its description) first, then the directory listing, capped at the
  index's line limit. `MEMORY.md` can be viewed but not written.
- Files are shown as stored, frontmatter included; memdir adds or refreshes
  `created`/`updated` on each write. Line numbers count the lines of the text
  (a final newline adds no empty line), so `insert_line` runs 0..lines.
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

from . import pages, paths
from .errors import Conflict, MemdirError, NotFound
from .memdir import Memdir, _occurrences
from .model import Memory
from .paths import INDEX_NAME

__all__ = ["AsyncMemdirMemoryTool", "MemdirMemoryTool"]

ROOT = "/memories"
WIDTH = 6  # line-number width of the docs and the SDK
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
    """Human-readable size as in the docs' listings: 512B, 1.5K, 4.0K, 1.2M."""
    if n < 1024:
        return f"{n}B"
    value = float(n)
    for unit in "KMGT":
        value /= 1024
        if value < 1024 or unit == "T":
            break
    return f"{value:.1f}{unit}"


def _numbered(lines: builtins.list[str], first: int) -> str:
    return "\n".join(f"{n:>{WIDTH}}\t{line}" for n, line in enumerate(lines, first))


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over a `Memdir` (any backend, any scope)."""

    def __init__(self, md: Memdir, *, cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self.md = md.for_agent()  # a model drives this tool: rate limited by default

    # ------------------------------------------------------------ dispatch

    def call(self, input: object) -> str:
        """Check the input's shape first: the SDK builds commands without validating them."""
        if not isinstance(input, dict):
            raise ToolError(f"Error: the memory tool takes an object with a `command`, got {type(input).__name__}")
        command = input.get("command")
        if command not in _FIELDS:
            raise ToolError(f"Error: unknown command {command!r}; use one of {', '.join(_FIELDS)}")
        for name, kind in _FIELDS[command]:
            value = input.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ToolError(f"Error: `{command}` needs `{name}` as {'an integer' if kind is int else 'a string'}, got {value!r}")
        view_range = input.get("view_range")
        if view_range is not None and not (
            isinstance(view_range, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        ):
            raise ToolError(f"Error: `view_range` must be two integers [start, end], got {view_range!r}")
        result = super().call(input)
        assert isinstance(result, str)
        return result

    def _guard(self, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a memdir call; its refusal becomes a one-line tool error."""
        try:
            return action(*args, **kwargs)
        except MemdirError as e:
            raise ToolError(f"Error: {e.message}") from None

    # ------------------------------------------------------------ paths

    def _rel(self, path: str) -> str:
        """'/memories/a/b.md' -> 'a/b.md'; '/memories' -> ''. Checks happen in memdir."""
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"Error: The path {path} is outside {ROOT}; every memory path starts with {ROOT}/")
        return path[len(ROOT) :].strip("/")

    def _topic(self, path: str) -> str:
        rel = self._rel(path)
        if not rel:
            raise ToolError(f"Error: {ROOT} is the memory directory, not a file; name a file such as {ROOT}/notes.md")
        if not rel.endswith(".md") and not self._is_dir(rel):
            stem = rel.rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel
            raise ToolError(
                f"Error: {path} is not a markdown file; memories are .md files, so use {ROOT}/{stem}.md instead"
            )
        return self._guard(paths.topic_path, rel)

    def _is_dir(self, rel: str) -> bool:
        if not rel:
            return True
        folder = self._guard(paths.folder, rel)
        return bool(self.md.list(folder))

    def _files(self, rel: str) -> builtins.list[str]:
        folder = self._guard(paths.folder, rel)
        return [e.path for e in self.md.list(folder)]

    def _read(self, path: str, rel: str) -> Memory | None:
        try:
            return self.md.read(rel)
        except NotFound:
            return None
        except MemdirError as e:
            raise ToolError(f"Error: {e.message}") from None

    # ------------------------------------------------------------ commands

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = command.path.rstrip("/") or command.path
        rel = self._rel(path)
        missing = f"The path {path} does not exist. Please provide a valid path."
        if rel == INDEX_NAME:
            text = self.md.index()
        elif rel.endswith(".md"):
            mem = self._read(path, self._topic(path))
            if mem is None:
                raise ToolError(missing)
            text = mem.text
        elif self._is_dir(rel):
            return self._listing(path, rel)
        else:
            raise ToolError(missing)
        return self._show(path, text, command.view_range)

    def _show(self, path: str, text: str, view_range: builtins.list[int] | None) -> str:
        lines = text.splitlines()
        if len(lines) > 999_999:
            raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
        first, last = 1, len(lines)
        if view_range is not None:
            if len(view_range) != 2 or view_range[0] < 1 or (view_range[1] != -1 and view_range[1] < view_range[0]):
                raise ToolError(
                    f"Error: Invalid `view_range` parameter: {view_range}; give [start, end] with 1 <= start <= end, "
                    f"or end = -1 for the end of the file ({len(lines)} lines)"
                )
            first = view_range[0]
            last = len(lines) if view_range[1] == -1 else min(view_range[1], len(lines))
        cap = self.md.limits.read_max_lines
        page = pages.lines(lines, first, last - first + 1, max_lines=cap, max_bytes=self.md.limits.read_max_bytes)
        out = f"Here's the content of {path} with line numbers:\n" + _numbered(page.lines, first)
        end = page.end
        if end < last:  # one read is capped (read_max_lines, read_max_bytes): say how to page on
            out += f"\n(showing lines {first}-{end} of {len(lines)}; view with view_range [{end + 1}, {min(end + cap, last)}] for more)"
        return out

    def _listing(self, path: str, rel: str) -> str:
        folder = self._guard(paths.folder, rel)
        sizes: dict[str, int] = {}  # relative name ("a/", "a/b.md", "c.md") -> bytes
        total = 0
        for entry in self.md.list(folder):
            parts = entry.path[len(folder) :].split("/")
            total += entry.size
            for depth in range(min(len(parts), 2)):
                key = "/".join(parts[: depth + 1]) + ("/" if depth + 1 < len(parts) else "")
                sizes[key] = sizes.get(key, 0) + entry.size
        names = sorted(sizes, key=lambda k: k.rstrip("/").split("/"))
        cap = self.md.limits.index_max_lines
        head = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items and node_modules:"
        lines = [f"{_size(total)}\t{path}"]
        if not rel:
            lines.append(f"{_size(len(self.md.index().encode()))}\t{ROOT}/{INDEX_NAME}")
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

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        rel = self._topic(command.path)
        try:
            self.md.write(rel, command.file_text, expect=None)
        except Conflict:
            raise ToolError(f"Error: File {command.path} already exists") from None
        except MemdirError as e:
            raise ToolError(f"Error: {e.message}") from None
        return f"File created successfully at: {command.path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path, old, new = command.path, command.old_str, command.new_str
        mem = self._read(path, self._topic(path)) if self._rel(path).endswith(".md") else None
        if mem is None:
            raise ToolError(f"Error: The path {path} does not exist. Please provide a valid path.")
        starts = _occurrences(mem.text, old) if old else []
        if not starts:
            raise ToolError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
        if len(starts) > 1:
            lines = ", ".join(str(mem.text.count("\n", 0, s) + 1) for s in starts)
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {lines}. Please ensure it is unique"
            )
        done = self._guard(self.md.edit, mem.path, old, new, expect=mem.version)
        at = mem.text.count("\n", 0, starts[0])
        after = done.text.splitlines()
        lo, hi = max(0, at - 2), min(len(after), at + new.count("\n") + 3)
        return "The memory file has been edited.\n" + _numbered(after[lo:hi], lo + 1)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, at = command.path, command.insert_line
        mem = self._read(path, self._topic(path)) if self._rel(path).endswith(".md") else None
        if mem is None:
            raise ToolError(f"Error: The path {path} does not exist")
        lines = mem.text.splitlines()
        if not 0 <= at <= len(lines):
            raise ToolError(
                f"Error: Invalid `insert_line` parameter: {at}. It should be within the range of lines of the file: [0, {len(lines)}]"
            )
        lines[at:at] = command.insert_text.rstrip("\n").split("\n")
        text = "\n".join(lines) + "\n"
        if mem.text:
            # The whole text is unique in itself: an edit of all of it is a compare-and-swap rewrite.
            self._guard(self.md.edit, mem.path, mem.text, text, expect=mem.version)
        else:
            self._guard(self.md.write, mem.path, text, expect=mem.version)
        return f"The file {path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path.rstrip("/") or command.path
        rel = self._rel(path)
        if not rel:
            raise ToolError(f"Error: Cannot delete the {ROOT} directory itself")
        if rel.endswith(".md"):
            topic = self._topic(path)
            try:
                self.md.delete(topic)
            except NotFound:
                raise ToolError(f"Error: The path {path} does not exist") from None
            except MemdirError as e:
                raise ToolError(f"Error: {e.message}") from None
            return f"Successfully deleted {path}"
        files = self._files(rel)
        if not files:
            raise ToolError(f"Error: The path {path} does not exist")
        self._check_writable(files)
        self._each(files, self.md.delete, "deleted")
        return f"Successfully deleted {path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_path, new_path = command.old_path.rstrip("/"), command.new_path.rstrip("/")
        src, dst = self._rel(old_path), self._rel(new_path)
        if not src:
            raise ToolError(f"Error: Cannot rename the {ROOT} directory itself")
        if not dst:
            raise ToolError(f"Error: The destination {new_path} already exists")
        if src.endswith(".md"):
            a, b = self._topic(old_path), self._topic(new_path)
            if self._read(old_path, a) is None:
                raise ToolError(f"Error: The path {old_path} does not exist")
            if self._read(new_path, b) is not None or self._is_dir(b):
                raise ToolError(f"Error: The destination {new_path} already exists")
            self._guard(self.md.rename, a, b)
            return f"Successfully renamed {old_path} to {new_path}"
        files = self._files(src)
        if not files:
            raise ToolError(f"Error: The path {old_path} does not exist")
        source, target = self._guard(paths.folder, src), self._guard(paths.folder, dst)
        if self._is_dir(dst) or (dst.endswith(".md") and self._read(new_path, self._topic(new_path)) is not None):
            raise ToolError(f"Error: The destination {new_path} already exists")
        if target.startswith(source):
            raise ToolError(f"Error: cannot move {old_path} into itself; choose a destination outside it")
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
                raise ToolError(f"Error: {e.message}") from None

    def _each(self, files: builtins.list[str], action: Callable[[str], Any], verb: str) -> None:
        """Apply a per-file change to every file of a directory; say how far it got if one fails."""
        for n, f in enumerate(files):
            try:
                action(f)
            except MemdirError as e:
                done = f"; {n} of {len(files)} files were {verb} before it (memdir undo brings each back)" if n else ""
                raise ToolError(f"Error: {e.message}{done}") from None


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
