"""memdir: memory for AI agents made of plain markdown files.

    import memdir
    md = memdir.open("memory")
    md.write("feedback/no-dark-themes.md", "Never propose dark themes.",
             description="NEVER use dark themes in generated UI", type="feedback")
    print(md.index())
"""

import typing

from .core.limits import Limits
from .core.memdir import ANY, Finding, Hit, Memdir, Op, Report
from .core.opening import open, prompt
from .core.scope import Scope
from .errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    InvalidMemory,
    InvalidPath,
    LimitExceeded,
    MemdirError,
    NotFound,
    RateLimited,
    StoreError,
)
from .model import Entry, Memory
from .stores.base import Record

if typing.TYPE_CHECKING:
    from .recall.context import Context
    from .recall.links import Links
    from .search import SearchHit

_LAZY = {"Context": "recall.context", "Links": "recall.links", "SearchHit": "search"}  # loaded on first use: a CLI call or a
# hook that does not search or build context does not import them


def __getattr__(name: str) -> typing.Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANY",
    "Conflict",
    "Context",
    "Entry",
    "Finding",
    "Forbidden",
    "Hit",
    "InvalidArgument",
    "InvalidMemory",
    "InvalidPath",
    "LimitExceeded",
    "Limits",
    "Links",
    "Memdir",
    "MemdirError",
    "Memory",
    "NotFound",
    "Op",
    "RateLimited",
    "Record",
    "Report",
    "Scope",
    "SearchHit",
    "StoreError",
    "open",
    "prompt",
]

__version__ = "0.1.0"
