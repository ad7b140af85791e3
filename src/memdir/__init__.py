"""memdir: memory for AI agents made of plain markdown files.

    import memdir
    md = memdir.open("memory")
    md.write("feedback/no-dark-themes.md", "Never propose dark themes.",
             description="NEVER use dark themes in generated UI", type="feedback")
    print(md.index())
"""

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
from .limits import Limits
from .memdir import ANY, Finding, Hit, Memdir, Op, Report
from .model import Entry, Memory
from .opening import open, prompt
from .scope import Scope
from .search import SearchHit
from .stores.base import Record

__all__ = [
    "ANY",
    "Conflict",
    "Entry",
    "Finding",
    "Forbidden",
    "Hit",
    "InvalidArgument",
    "InvalidMemory",
    "InvalidPath",
    "LimitExceeded",
    "Limits",
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
