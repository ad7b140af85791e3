"""memdir: memory for AI agents made of plain markdown files.

    import memdir
    md = memdir.open("memory")
    md.write("feedback/no-dark-themes.md", "Never propose dark themes.",
             description="NEVER use dark themes in generated UI", type="feedback")
    print(md.index())
    print(memdir.context(md, "dark themes").text)

`Memdir` reads, writes, lists and searches one tenant's memory; what builds
on it is a function of its own module that takes the memory first:
`memdir.context(md, query)`, `memdir.links(md, path)`, `memdir.capture(md,
session_id, transcript)`, `memdir.remember_feedback(md, rule, why, how)`,
`memdir.supersede(md, path, reason=...)`, `memdir.changes(md, since)`,
`memdir.read_as_of(md, path, when)`, `memdir.prompt(md)`, `memdir.git_sync(md)` (one
folder memory on every machine, through a git remote), and forgetting for good:
`memdir.forget(md, path)`, `memdir.redact(md, text)`, `memdir.drop_tenant(location, tenant)`.
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
from .version import __version__ as __version__

TYPE_CHECKING = False  # not typing's: importing typing costs a served hook a third of its time
if TYPE_CHECKING:
    from .core.limits import Limits
    from .core.memdir import Hit, Memdir
    from .core.opening import Database, connect, open
    from .core.ops import ANY, Op
    from .core.reconcile import Finding, Report
    from .core.scope import Scope
    from .faces.tools import Result as ToolResult
    from .faces.tools import Session as ToolSession
    from .faces.tools import anthropic_tools, openai_tools, prompt
    from .faces.tools import handle as handle_tool
    from .model import Entry, Memory
    from .recall.context import Context
    from .recall.context import build as context
    from .recall.links import Links
    from .recall.links import of as links
    from .remember.capture import capture, remember_feedback
    from .remember.forget import drop_tenant, redact
    from .remember.forget import erase as forget
    from .remember.gitsync import git_sync
    from .remember.timeline import changes, read_as_of, supersede
    from .search import SearchHit
    from .stores.base import Record
del TYPE_CHECKING  # read once, above; not a public name

# Loaded on first use, so that a hook or a server handing its work to the resident process (faces/resident.py)
# imports none of them, and a CLI call only what it runs.
_LAZY = {
    "Limits": ("core.limits", "Limits"), "Hit": ("core.memdir", "Hit"), "Memdir": ("core.memdir", "Memdir"),
    "Database": ("core.opening", "Database"), "connect": ("core.opening", "connect"), "open": ("core.opening", "open"),
    "ANY": ("core.ops", "ANY"), "Op": ("core.ops", "Op"), "Finding": ("core.reconcile", "Finding"),
    "Report": ("core.reconcile", "Report"), "Scope": ("core.scope", "Scope"), "Entry": ("model", "Entry"),
    "Memory": ("model", "Memory"), "Record": ("stores.base", "Record"),
    "Context": ("recall.context", "Context"), "Links": ("recall.links", "Links"), "SearchHit": ("search", "SearchHit"),
    "context": ("recall.context", "build"), "links": ("recall.links", "of"), "prompt": ("faces.tools", "prompt"),
    "capture": ("remember.capture", "capture"), "remember_feedback": ("remember.capture", "remember_feedback"),
    "supersede": ("remember.timeline", "supersede"), "changes": ("remember.timeline", "changes"),
    "read_as_of": ("remember.timeline", "read_as_of"), "git_sync": ("remember.gitsync", "git_sync"),
    "forget": ("remember.forget", "erase"), "redact": ("remember.forget", "redact"),
    "drop_tenant": ("remember.forget", "drop_tenant"),
    # your own agent loop: the tool schemas for each API, and the dispatcher that runs a call (faces/tools.py)
    "anthropic_tools": ("faces.tools", "anthropic_tools"), "openai_tools": ("faces.tools", "openai_tools"),
    "handle_tool": ("faces.tools", "handle"), "ToolSession": ("faces.tools", "Session"),
    "ToolResult": ("faces.tools", "Result"),
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANY", "Conflict", "Context", "Database", "Entry", "Finding", "Forbidden", "Hit", "InvalidArgument", "InvalidMemory",
    "InvalidPath", "LimitExceeded", "Limits", "Links", "Memdir", "MemdirError", "Memory", "NotFound", "Op",
    "RateLimited", "Record", "Report", "Scope", "SearchHit", "StoreError", "ToolResult", "ToolSession",
    "anthropic_tools", "capture", "changes", "connect", "context", "drop_tenant", "forget", "git_sync",
    "handle_tool", "links", "open", "openai_tools", "prompt", "read_as_of", "redact", "remember_feedback",
    "supersede",
]
