"""Deep Agents' `BackendProtocol` over a `Memdir`: route the agent's `/memories/` to memdir.

    import memdir
    from deepagents import create_deep_agent
    from deepagents.backends import CompositeBackend, StateBackend
    from memdir.adapters.deepagents import MemdirBackend

    backend = CompositeBackend(default=StateBackend(),
                               routes={"/memories/": MemdirBackend(memdir.open("memory"), route="/memories/")})
    agent = create_deep_agent(model=..., backend=backend)

The agent's file tools (`ls`, `read_file`, `write_file`, `edit_file`, `glob`,
`grep`, and `delete`, `upload_files`, `download_files` for code) work on the
memory's topic files: `/notes.md` is the memdir path `notes.md` (under
`folder`, when given). Every change goes through `Memdir`, so paths, limits,
the secret guard, scopes and the journal apply, and any change can be shown
and undone (`memdir log`, `memdir undo`).

As the framework's own `FilesystemBackend` answers (`tests/adapters/
test_deepagents.py` runs both on generated sequences): a file reads back as it
was written (memdir's own `created`/`updated` lines are kept out of it, as in
Anthropic's memory tool), with the same windows (`offset` 0-based, lines
1-indexed, `next_offset`), the same edit, not-found and listing answers, and
grep is literal. Errors come back inside the result objects, never raised:
the protocol's literals (`file_not_found`, `is_directory`, `invalid_path`,
`permission_denied`) in upload and download responses, one line a model can
act on everywhere else.

Choices:
- Memories are markdown topic files: a write of `/notes.txt` is refused with a
  message naming `/notes.md` (prefixed with `route`, the path the agent sees).
- `/MEMORY.md` is the generated index: `ls /` lists it and `read` shows it, but
  a write, edit or delete of it is refused with a message naming a topic file
  to write instead (each file's description is its line in the index).
- A folder exists while it holds a file; deleting a folder deletes its files in
  one commit (all or none, each undoable), and deleting `/` is refused.
- `size` in listings is the stored file's (memdir's two date lines included;
  the protocol calls it approximate); `modified_at` is memdir's `updated` stamp.
- An edit that would turn the frontmatter into body text is refused (its
  description would leave the index silently), as in Anthropic's memory tool.
"""

from __future__ import annotations

import builtins

from deepagents.backends.protocol import (
    FILE_NOT_FOUND,
    INVALID_PATH,
    IS_DIRECTORY,
    PERMISSION_DENIED,
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileOperationError,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import (
    InvalidGlobPatternError,
    check_empty_content,
    compile_grep_include_glob,
    perform_string_replacement,
    slice_read_response,
)

from .. import model, paths
from ..core.memdir import Memdir
from ..core.ops import Op
from ..errors import Conflict, Forbidden, InvalidPath, MemdirError, NotFound
from ..model import Entry, Memory
from ..paths import INDEX_NAME

__all__ = ["MemdirBackend"]


class _Refused(Exception):
    """A request this backend answers with an error (the message is the answer)."""


def _lf(text: str) -> str:
    """Line ends as the framework's own backend reads them (universal newlines)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class MemdirBackend(BackendProtocol):
    """Deep Agents' `BackendProtocol` on a `Memdir` (any backend, any scope), rooted at `folder`.

    `route` is the prefix `CompositeBackend` routes here (e.g. `/memories/`):
    it is used only in messages, so they name paths as the agent sees them.
    The memory is used as a model drives it (`md.for_agent()`: rate limited
    by default).
    """

    def __init__(self, md: Memdir, *, folder: str = "", route: str = "") -> None:
        self.md = md.for_agent()
        self.folder = paths.folder(folder)
        self.route = route.rstrip("/")

    # ------------------------------------------------------------ paths

    def _rel(self, path: str) -> str:
        """'/a/./b.md' -> 'a/b.md'; '/' -> ''. Names are checked by memdir."""
        if not isinstance(path, str):
            raise _Refused(f"a path must be text, got {type(path).__name__}")
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise _Refused(f"Path traversal not allowed: {path}")
        return "/".join(parts)

    def _shown(self, rel: str) -> str:
        return f"{self.route}/{rel}"

    def _is_index(self, rel: str) -> bool:
        return rel.rsplit("/", 1)[-1].casefold() == INDEX_NAME.casefold()

    def _topic(self, rel: str) -> str:
        """The memdir path of a file to write: markdown only, never the index."""
        name = rel.rsplit("/", 1)[-1]
        if self._is_index(rel):
            folder = rel[: -len(name)]
            raise _Refused(f"{self._shown(rel)} is generated from the topic files and cannot be changed; write a topic "
                           f"file such as {self._shown(folder + 'notes.md')} instead (its description becomes its line in the index)")
        if not rel:
            raise _Refused(f"{self._shown('')} is a folder; give a file path such as {self._shown('notes.md')}")
        if not name.endswith(".md"):
            stem = rel.rsplit(".", 1)[0] if "." in name.lstrip(".") else rel
            raise _Refused(f"{self._shown(rel)} is not a markdown file; memories are .md files, so use {self._shown(stem + '.md')} instead")
        try:
            return paths.topic_path(self.folder + rel)
        except InvalidPath as e:
            raise _Refused(e.message) from None

    def _entries(self, rel: str) -> builtins.list[Entry]:
        """The topic files under a folder (none: no such folder)."""
        try:
            return self.md.list(paths.folder(self.folder + rel))
        except InvalidPath:
            return []

    def _text(self, rel: str) -> tuple[str, Memory | None] | None:
        """A file's text as the agent sees it (and the memory it is), or None if there is no such file."""
        if self._is_index(rel):
            inside = rel.rsplit("/", 1)[0] if "/" in rel else ""
            try:
                return self.md.index(paths.folder(self.folder + inside)), None
            except (NotFound, InvalidPath):
                return None
        if not rel.endswith(".md"):
            return None
        try:
            mem = self.md.read(self.folder + rel)
        except (NotFound, InvalidPath):
            return None
        return model.unstamped(mem.text), mem

    def _info(self, entry: Entry) -> FileInfo:
        info: FileInfo = {"path": "/" + entry.path[len(self.folder) :], "is_dir": False, "size": entry.size}
        if entry.updated:
            info["modified_at"] = entry.updated
        return info

    def _index_info(self) -> FileInfo:
        return {"path": "/" + INDEX_NAME, "is_dir": False, "size": len(self.md.index(self.folder).encode())}

    # ------------------------------------------------------------ reading

    def ls(self, path: str) -> LsResult:
        try:
            rel = self._rel(path)
        except _Refused as e:
            return LsResult(error=str(e))
        entries = self._entries(rel)
        if not entries:
            if rel and self._text(rel) is not None:
                return LsResult(error=f"Path '{path}': not_a_directory")
            if rel:
                return LsResult(error=f"Path '{path}': path_not_found")
        base = paths.folder(self.folder + rel)
        out: builtins.list[FileInfo] = []
        folders: dict[str, str] = {}  # '/a/' -> its newest file's stamp
        for entry in entries:
            inner = entry.path[len(base) :]
            if "/" in inner:
                name = "/" + (base + inner.split("/", 1)[0])[len(self.folder) :] + "/"
                folders[name] = max(folders.get(name, ""), entry.updated or "")
            else:
                out.append(self._info(entry))
        out += [{"path": name, "is_dir": True, "size": 0, "modified_at": stamp} for name, stamp in folders.items()]
        if not rel:
            out.append(self._index_info())
        out.sort(key=lambda info: info.get("path", ""))
        return LsResult(entries=out)

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        try:
            found = self._text(self._rel(file_path))
        except _Refused as e:
            return ReadResult(error=str(e))
        except MemdirError as e:
            return ReadResult(error=e.message)
        if found is None:
            return ReadResult(error=f"File '{file_path}' not found")
        text, mem = found
        data = FileData(content=text, encoding="utf-8")
        if mem is not None and mem.created:
            data["created_at"] = mem.created
        if mem is not None and mem.updated:
            data["modified_at"] = mem.updated
        empty = check_empty_content(_lf(text))
        if empty:
            return ReadResult(file_data=FileData(content=empty, encoding="utf-8"))
        return slice_read_response(data, offset, limit)

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None, *,
             max_count: int | None = None) -> GrepResult:
        """Lines holding `pattern` literally, in the topic files under `path` (or that one file)."""
        if glob is not None:
            try:
                include = compile_grep_include_glob(glob)
            except InvalidGlobPatternError as e:
                return GrepResult(error=str(e), matches=[])
        try:
            rel = self._rel(path or "/")
        except _Refused:
            return GrepResult(matches=[])
        files = [e.path for e in self._entries(rel)]
        root = paths.folder(self.folder + rel)
        if not files and rel.endswith(".md") and self._text(rel) is not None:
            files, root = [self.folder + rel], paths.folder(self.folder + rel.rpartition("/")[0])
        if pattern and files:  # the search index says which files can hold it
            try:
                holding = {hit.path for hit in self.md.grep(pattern, prefix=root, ignore_case=False, fixed=True)}
                files = [f for f in files if f in holding]
            except MemdirError:
                pass
        matches: builtins.list[GrepMatch] = []
        for f in files:
            if glob is not None and not include(f[len(root) :]):
                continue
            found = self._text(f[len(self.folder) :])
            if found is None:
                continue
            lines = _lf(found[0]).split("\n")
            if lines[-1] == "":
                lines.pop()
            for number, line in enumerate(lines, 1):
                if pattern in line:
                    if max_count is not None and len(matches) >= max_count:
                        return GrepResult(matches=matches, truncated=True)
                    matches.append({"path": "/" + f[len(self.folder) :], "line": number, "text": line})
        return GrepResult(matches=matches)

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            matcher = compile_grep_include_glob(pattern)
        except InvalidGlobPatternError as e:
            return GlobResult(error=str(e), matches=None)
        try:
            rel = self._rel(path or "/")
        except _Refused as e:
            return GlobResult(error=str(e), matches=[])
        base = paths.folder(self.folder + rel) if rel else self.folder
        found = [self._info(e) for e in self._entries(rel) if matcher(e.path[len(base) :])]
        if not rel and matcher(INDEX_NAME):
            found.append(self._index_info())
        found.sort(key=lambda info: info.get("path", ""))
        return GlobResult(matches=found)

    # ------------------------------------------------------------ writing

    def _commit(self, ops: builtins.list[Op]) -> None:
        self.md.apply(ops)

    def write(self, file_path: str, content: str) -> WriteResult:
        try:
            topic = self._topic(self._rel(file_path))
            if not isinstance(content, str):
                raise _Refused(f"content must be text, got {type(content).__name__}")
            self._commit([Op.write(topic, content)])
        except _Refused as e:
            return WriteResult(error=f"Error: {e}")
        except MemdirError as e:
            return WriteResult(error=f"Error: {e.message}")
        return WriteResult(path=file_path)

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        try:
            rel = self._rel(file_path)
            found = self._text(rel)
            if found is None:
                return EditResult(error=f"Error: File '{file_path}' not found")
            self._topic(rel)  # the index: refused, naming a topic file to write
            text, mem = found
            assert mem is not None
            before = _lf(text)
            result = perform_string_replacement(before, _lf(old_string), _lf(new_string), replace_all)
            if isinstance(result, str):
                return EditResult(error=result)
            after, count = result
            if model.moves_frontmatter(before, after):
                head = model.head_lines(before)
                raise _Refused(f"this edit would turn the frontmatter of {self._shown(rel)} (lines 1-{head}) into body "
                               "text; keep its '---' lines at the top, or remove the whole block")
            self._commit([Op.write(mem.path, after, expect=mem.version)])
        except Conflict as e:
            return EditResult(error=f"Error: {e.message}")
        except _Refused as e:
            return EditResult(error=f"Error: {e}")
        except MemdirError as e:
            return EditResult(error=f"Error: {e.message}")
        return EditResult(path=file_path, occurrences=int(count))

    def delete(self, file_path: str) -> DeleteResult:
        """Delete a file, or every file under a folder in one commit (undo brings each back)."""
        try:
            rel = self._rel(file_path)
            if not rel:
                raise _Refused(f"{self._shown('')} is the whole memory; delete the files or folders in it one at a time")
            if self._is_index(rel):
                self._topic(rel)
            entries = self._entries(rel)
            if entries:
                self._commit([Op.delete(e.path, expect=e.version) for e in entries])
            elif self._text(rel) is not None:
                self._commit([Op.delete(self.folder + rel)])
            else:
                return DeleteResult(error=f"Error: '{file_path}' not found")
        except _Refused as e:
            return DeleteResult(error=f"Error: {e}")
        except MemdirError as e:
            return DeleteResult(error=f"Error: {e.message}")
        return DeleteResult(path=file_path)

    def upload_files(self, files: builtins.list[tuple[str, bytes]]) -> builtins.list[FileUploadResponse]:
        """Each file written on its own (UTF-8 markdown only); the literals say what failed."""
        out: builtins.list[FileUploadResponse] = []
        for path, content in files:
            error: FileOperationError | str | None = None
            try:
                topic = self._topic(self._rel(path))
                text = bytes(content).decode("utf-8")
                self._commit([Op.write(topic, text)])
            except (_Refused, InvalidPath, UnicodeDecodeError):
                error = INVALID_PATH
            except Forbidden:
                error = PERMISSION_DENIED
            except MemdirError as e:
                error = e.message
            out.append(FileUploadResponse(path=path, error=error))
        return out

    def download_files(self, paths_: builtins.list[str]) -> builtins.list[FileDownloadResponse]:
        out: builtins.list[FileDownloadResponse] = []
        for path in paths_:
            try:
                rel = self._rel(path)
                if not rel or self._entries(rel):
                    out.append(FileDownloadResponse(path=path, error=IS_DIRECTORY))
                    continue
                found = self._text(rel)
            except _Refused:
                out.append(FileDownloadResponse(path=path, error=INVALID_PATH))
                continue
            except Forbidden:
                out.append(FileDownloadResponse(path=path, error=PERMISSION_DENIED))
                continue
            except MemdirError as e:
                out.append(FileDownloadResponse(path=path, error=e.message))
                continue
            if found is None:
                out.append(FileDownloadResponse(path=path, error=FILE_NOT_FOUND))
            else:
                out.append(FileDownloadResponse(path=path, content=found[0].encode()))
        return out
