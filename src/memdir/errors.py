"""The error hierarchy.

Every failure memdir reports is a `MemdirError`; its message is one line that a
person or a model can act on: what was wrong, the value, the limit, what to do.

    MemdirError
     ├── NotFound          the path does not exist
     ├── Conflict          the version changed, or the target already exists
     ├── InvalidPath       the path is not an acceptable topic-file path
     ├── InvalidMemory     frontmatter or schema is wrong
     ├── InvalidArgument   any other bad input (a bad regex, a bad option)
     ├── LimitExceeded     a size or line limit
     ├── RateLimited       too many writes per minute
     ├── Forbidden         outside the principal's scope, or a reserved name
     └── StoreError        the storage backend failed
"""

from __future__ import annotations


class MemdirError(Exception):
    """Root of every memdir error; `str(err)` is the one-line message."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        limit: int | float | None = None,
        actual: int | float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.limit = limit
        self.actual = actual


class NotFound(MemdirError):
    """The path does not exist (or is not visible to this principal)."""


class Conflict(MemdirError):
    """The file changed since it was read, or a target already exists."""


class InvalidPath(MemdirError):
    """The path is absolute, escapes the root, is reserved or is not `.md`."""


class InvalidMemory(MemdirError):
    """The frontmatter does not parse or breaks the schema."""


class InvalidArgument(MemdirError):
    """An argument other than a path or a memory is wrong."""


class LimitExceeded(MemdirError):
    """A size, line or count limit would be exceeded."""


class RateLimited(MemdirError):
    """Too many writes in the last minute; `retry_after` says how long to wait."""

    def __init__(self, message: str, *, retry_after: float, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.retry_after = retry_after


class Forbidden(MemdirError):
    """The path is outside what this principal may read or write."""


class StoreError(MemdirError):
    """The storage backend failed; the store is unchanged."""


STATUS: dict[type[MemdirError], int] = {  # the HTTP status the API and the page answer each error with
    NotFound: 404,
    Conflict: 409,
    InvalidPath: 400,
    InvalidMemory: 400,
    InvalidArgument: 400,
    LimitExceeded: 413,
    RateLimited: 429,
    Forbidden: 403,
    StoreError: 503,
}


def status_of(error: MemdirError) -> int:
    """The HTTP status of an error (400 for any other `MemdirError`)."""
    return next((s for cls, s in STATUS.items() if isinstance(error, cls)), 400)
