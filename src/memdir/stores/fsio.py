"""The folder store's file I/O: private files and folders, reads that never block, versions, one-line errors."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from .. import paths
from ..errors import InvalidPath, StoreError
from .base import Blob


class _Rooted(Protocol):
    root: Path


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound=_Rooted)

HINTS = {
    errno.ENOSPC: "free some disk space and retry",
    errno.EDQUOT: "free some disk space (quota) and retry",
    errno.EACCES: "check the folder's permissions",
    errno.EPERM: "check the folder's permissions",
    errno.EROFS: "the file system is read-only; remount it or use another folder",
    errno.EIO: "the disk reported an I/O error; check it, then retry",
}


def storage_error(where: object, doing: str, e: BaseException) -> StoreError:
    """One line for an OS or SQLite failure: where, what memdir was doing, why, what to do."""
    if isinstance(e, OSError):
        why = e.strerror or str(e) or type(e).__name__
        hint = HINTS.get(e.errno or 0, "retry; if it persists, run `memdir doctor`")
    else:
        why = " ".join(str(e).split()) or type(e).__name__
        hint = "free some disk space and retry" if "full" in why else "retry; if it persists, run `memdir doctor`"
    return StoreError(f"{where}: cannot {doing}: {why}; {hint}")


def translated(doing: str) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """Turn OSError and sqlite3.Error raised by a store method into a one-line StoreError."""

    def wrap(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(fn)
        def inner(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(self, *args, **kwargs)
            except (OSError, sqlite3.Error) as e:
                raise storage_error(self.root, doing, e) from None

        return inner

    return wrap


DIR_MODE, FILE_MODE = 0o700, 0o600  # what memdir creates is private, whatever the umask
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO named *.md must not block the open (and the lock)


def mkdirs(path: Path) -> None:
    """Create `path` and its missing parents, each one private (the umask cannot loosen it)."""
    missing = []
    while not path.exists() and path.parent != path:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC) -> int:
    fd = os.open(path, flags, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd


def write_private(path: Path, data: bytes) -> None:
    fd = open_private(path)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def read_fd(fd: int, path: str) -> Blob | None:
    """A topic file's bytes from an fd opened with `READ_FLAGS`, closing it; None when it is not a regular file
    (a FIFO, a socket or a device named `*.md` is not a memory, and reading one could block or never end)."""
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InvalidPath(f"path {path!r} is a folder, not a topic file", path=path)
        if not stat.S_ISREG(st.st_mode):
            return None
        data = os.read(fd, st.st_size + 1)  # one byte more than the size: a read of exactly the size is all
        if len(data) != st.st_size:  # it changed meanwhile (or a short read): read on to the end
            chunks = [data]
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
            data = b"".join(chunks)
    finally:
        os.close(fd)
    return Blob(data, version(st))


def version(st: os.stat_result) -> str:
    raw = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}".encode()
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


@functools.cache
def plain() -> re.Pattern[str]:
    """The common case of `servable`, decided without topic_path (compiled by the first listing, not by every open)."""
    return re.compile(r"[A-Za-z0-9_+,=@~-][A-Za-z0-9_.+,=@~/-]*\Z")


def servable(path: str, plain: re.Pattern[str]) -> bool:
    """A file placed by hand is a memory only if its path is one memdir accepts (no MEMORY.md, no forged lines).

    `list` has already skipped hidden names and the top `tenants/`; a plain
    ASCII path then only needs the length and index-name checks.
    """
    if plain.match(path) and len(path) <= paths.MAX_PATH_BYTES and "memory.md" not in path.lower():
        return True
    try:
        return paths.topic_path(path) == path
    except InvalidPath:
        return False


def boot_id() -> str:
    """This boot's id (read at every open: os.read, not a text file object, which costs ten times more)."""
    try:
        fd = os.open("/proc/sys/kernel/random/boot_id", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        return os.read(fd, 128).decode("ascii", "replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


def quarantined(note: dict[str, object]) -> str:
    return (f"journal change #{note['seq']} to {note['path']} could not be applied ({note['why']}); "
            f"its content is kept in .memdir/quarantine/{note['file']}: restore it under another name, "
            f"then delete .memdir/quarantine/{note['seq']}.*")
