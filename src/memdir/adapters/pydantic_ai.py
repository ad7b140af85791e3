"""Pydantic AI's memory capability on a `Memdir`: the harness's `MemoryStore` kept as markdown files.

    import memdir
    from pydantic_ai import Agent
    from pydantic_ai_harness import Memory
    from memdir.adapters.pydantic_ai import MemdirMemoryStore

    agent = Agent(model, capabilities=[Memory(MemdirMemoryStore(memdir.open("memory")))])

`pydantic_ai_harness.memory.MemoryStore` (the store behind `Memory`: its
notebook `MEMORY.md` injected into the prompt, and its `write_memory`,
`read_memory`, `delete_memory` and `search_memory` tools) over memdir, so every
write is journaled (`memdir log`, `memdir undo`), memdir's limits and secret
guard hold, and a person reads and corrects the notes like any memory.
Pydantic AI's own memory tool (`pydantic_ai.native_tools.MemoryTool`) is
Anthropic's; memdir serves that one through `memdir.faces.anthropic`.

Paths: the harness's path `main/MEMORY.md` is the memdir file
`pydantic-ai/main/notebook+.md` (under `folder`), since `MEMORY.md` is memdir's
generated index. Path segments are case-sensitive and memdir paths must not
differ only by case, so an upper-case letter is `^` and the letter
(`Notes.md` is `^notes.md`), a leading `.` is `+d`, and a last segment that
does not end in `.md` gets `+.md`. `^` and `+` are not in the harness's path
alphabet, so the mapping is reversible. A file keeps exactly the text the
harness wrote (memdir's `created`/`updated` lines are left out of a read, as in
Anthropic's memory tool).

As the harness's own `InMemoryStore` answers (`tests/adapters/test_pydantic_ai.py`
runs both on generated sequences): `write` and `delete` are compare-and-swap on
the version a `read` returned (`expected_version=None`: must not exist), and a
`MemoryOperation` is applied once: its receipt answers a replay, and its id
with other arguments raises `MemoryOperationConflictError`. A refusal of
memdir's (a file past 200 lines or 25 KB, a credential, a broken frontmatter)
is raised as `pydantic_ai.ModelRetry` with memdir's one line, so the model
reads what to do, and nothing is written. `search` (`SearchableMemoryStore`) is
memdir's search over the scope's files, best first.

Left out: receipts are kept in this process (the last 1,024, as `InMemoryStore`
and `FileStore` keep them), not in the memory; `write_with_metadata`
(`MetadataMemoryStore`) is not implemented, since the journal already records
who wrote each version.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict

from pydantic_ai import ModelRetry
from pydantic_ai_harness.memory import (
    MemoryConflictError,
    MemoryFile,
    MemoryMutation,
    MemoryOperation,
    MemoryOperationConflictError,
    MemorySearchMatch,
    MemorySearchResult,
)

from .. import model, paths
from ..core.memdir import Memdir
from ..core.ops import Op
from ..errors import Conflict, InvalidArgument, InvalidMemory, InvalidPath, LimitExceeded, NotFound, RateLimited

__all__ = ["MemdirMemoryStore"]

NOTEBOOK = "MEMORY.md"  # the harness's main notebook; memdir's MEMORY.md is its generated index
NOTEBOOK_FILE = "notebook+.md"
MAX_RECEIPTS = 1024
_SEGMENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
REFUSALS = (InvalidMemory, InvalidPath, LimitExceeded, RateLimited)  # what the model can act on: said to it as a retry


def _segment(name: str) -> str:
    out = "".join("^" + ch.lower() if "A" <= ch <= "Z" else ch for ch in name)
    return "+d" + out[1:] if out.startswith(".") else out


def _unsegment(name: str) -> str:
    name = "." + name[2:] if name.startswith("+d") else name
    out, upper = [], False
    for ch in name:
        if ch == "^":
            upper = True
            continue
        out.append(ch.upper() if upper else ch)
        upper = False
    return "".join(out)


def validate(path: str) -> None:
    """The harness's rule for a store path (segments of `A-Za-z0-9_.-`, none `.` or holding `..`)."""
    if not isinstance(path, str) or not all(
            0 < len(s) <= 200 and set(s) <= _SEGMENT_CHARS and ".." not in s and s != "." for s in path.split("/")):
        raise ValueError(f"invalid memory path: {path!r}")


class MemdirMemoryStore:
    """The harness's `MemoryStore` (and `SearchableMemoryStore`) on a `Memdir`, rooted at `folder`.

    The memory is used as a model drives it (`md.for_agent()`: rate limited by default).
    """

    def __init__(self, md: Memdir, *, folder: str = "pydantic-ai/") -> None:
        self.md = md.for_agent()
        self.folder = paths.folder(folder)
        self._receipts: OrderedDict[str, tuple[str, MemoryMutation]] = OrderedDict()
        self._operation_ids: dict[str, str | None] = {}
        self._lock = threading.Lock()  # a receipt is checked and kept with its change

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.folder or '/'})"

    # ------------------------------------------------------------ paths

    def memdir_path(self, path: str) -> str:
        """The memdir file of a harness path: `main/MEMORY.md` -> `pydantic-ai/main/notebook+.md`."""
        validate(path)
        *folders, name = path.split("/")
        if name == NOTEBOOK:
            last = NOTEBOOK_FILE
        else:
            last = _segment(name) if name.endswith(".md") else _segment(name) + "+.md"
        return self.folder + "/".join([*map(_segment, folders), last])

    def store_path(self, path: str) -> str | None:
        """The harness path of a memdir file under `folder` (None for a name the mapping never makes)."""
        *folders, name = path[len(self.folder):].split("/")
        if name == NOTEBOOK_FILE:
            last = NOTEBOOK
        elif name.endswith("+.md"):
            last = _unsegment(name[:-4])
        else:
            last = _unsegment(name)
        got = "/".join([*map(_unsegment, folders), last])
        try:
            validate(got)
        except ValueError:
            return None
        return got if self.memdir_path(got) == path else None

    # ------------------------------------------------------------ the protocol

    async def read(self, path: str, *, max_chars: int) -> MemoryFile | None:
        if max_chars <= 0:
            raise ValueError("max_chars must be positive")
        p = self.memdir_path(path)
        return await asyncio.to_thread(self._read, path, p, max_chars)

    async def get_operation(self, operation: MemoryOperation) -> MemoryMutation | None:
        with self._lock:
            return self._receipt(operation)

    async def write(self, path: str, content: str, *, expected_version: str | None,
                    operation: MemoryOperation | None = None) -> MemoryMutation:
        p = self.memdir_path(path)
        if not isinstance(content, str):
            raise TypeError(f"content must be text, got {type(content).__name__}")
        return await asyncio.to_thread(self._change, path, Op.write(p, content, expect=expected_version), operation)

    async def delete(self, path: str, *, expected_version: str | None,
                     operation: MemoryOperation | None = None) -> MemoryMutation:
        p = self.memdir_path(path)
        return await asyncio.to_thread(self._change, path, Op.delete(p, expect=expected_version), operation)

    async def list_paths(self, prefix: str = "", *, limit: int) -> list[str]:
        if prefix:
            validate(prefix.removesuffix("/"))
        if limit <= 0:
            raise ValueError("limit must be positive")
        return (await asyncio.to_thread(self._paths, prefix))[:limit]

    async def search(self, prefix: str, query: str, *, limit: int, max_files: int, max_chars: int,
                     max_file_chars: int) -> MemorySearchResult:
        """memdir's search over the files directly in `prefix` (a scope), best first, within the bounds given."""
        if prefix:
            validate(prefix.removesuffix("/"))
        if not query.split() or min(limit, max_files, max_chars, max_file_chars) <= 0:
            return MemorySearchResult(matches=[], scanned=0, truncated=False)
        return await asyncio.to_thread(self._search, prefix, query, limit, max_files, max_chars)

    # ------------------------------------------------------------ in a worker thread

    def _receipt(self, operation: MemoryOperation) -> MemoryMutation | None:
        got = self._receipts.get(operation.id)
        if got is None:
            return None
        fingerprint, mutation = got
        if fingerprint != operation.fingerprint:
            raise MemoryOperationConflictError(f"operation id {operation.id!r} was reused with different arguments")
        return MemoryMutation(version=mutation.version, replayed=True, existed=mutation.existed)

    def _read(self, path: str, p: str, max_chars: int) -> MemoryFile | None:
        try:
            _, text, version = self.md.read_text(p)
        except NotFound:
            return None
        content = model.unstamped(text)
        return MemoryFile(content=content[:max_chars], version=version, operation_id=self._operation_ids.get(path),
                          truncated=len(content) > max_chars)

    def _change(self, path: str, op: Op, operation: MemoryOperation | None) -> MemoryMutation:
        with self._lock:
            if operation is not None and (replayed := self._receipt(operation)) is not None:
                return replayed
            existed = bool(self.md.list(op.path))
            if op.kind == "delete" and not existed and op.expect is None:
                mutation = MemoryMutation(version=None, replayed=False, existed=False)  # nothing there, as expected
            else:
                try:
                    done = self.md.apply([op])[0]
                except Conflict:
                    verb = "written" if op.kind == "write" else "deleted"
                    raise MemoryConflictError(f"memory path {path!r} changed before it could be {verb}") from None
                except NotFound:  # a delete of a file that is not there, expecting a version
                    raise MemoryConflictError(f"memory path {path!r} changed before it could be deleted") from None
                except REFUSALS as e:
                    raise ModelRetry(e.message) from None
                mutation = MemoryMutation(version=done.version if op.kind == "write" else None, replayed=False,
                                          existed=existed)
            if op.kind == "write":
                self._operation_ids[path] = operation.id if operation else None
            else:
                self._operation_ids.pop(path, None)
            if operation is not None:
                self._receipts[operation.id] = (operation.fingerprint, mutation)
                while len(self._receipts) > MAX_RECEIPTS:
                    self._receipts.popitem(last=False)
            return mutation

    def _paths(self, prefix: str) -> list[str]:
        start = prefix.rsplit("/", 1)[0] + "/" if "/" in prefix else ""
        try:
            under = self.memdir_path(start + "x.md").rsplit("/", 1)[0] + "/" if start else self.folder
        except ValueError:
            return []
        got = (self.store_path(e.path) for e in self.md.list(under))
        return sorted(p for p in got if p is not None and p.startswith(prefix))

    def _search(self, prefix: str, query: str, limit: int, max_files: int, max_chars: int) -> MemorySearchResult:
        folder = self.memdir_path(prefix + "x.md").rsplit("/", 1)[0] + "/" if prefix else self.folder
        try:
            hits = self.md.search(query, k=max(limit * 4, limit), prefix=folder)
        except InvalidArgument:
            return MemorySearchResult(matches=[], scanned=0, truncated=False)
        matches: list[MemorySearchMatch] = []
        left, truncated = max_chars, False
        for hit in hits:
            path = self.store_path(hit.path) if "/" not in hit.path[len(folder):] else None
            if path is None:
                continue  # nested scopes are searched on their own
            if len(matches) == limit or left - len(path) <= 0:
                truncated = True
                break
            snippet = hit.snippet[: left - len(path)]
            matches.append(MemorySearchMatch(path=path, snippet=snippet, score=hit.score))
            left -= len(path) + len(snippet)
        return MemorySearchResult(matches=matches, scanned=min(self.md.count(folder), max_files), truncated=truncated)


