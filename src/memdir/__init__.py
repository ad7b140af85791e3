"""memdir: memory for AI agents made of plain markdown files.

    import memdir
    md = memdir.open("memory")
    md.write("feedback/no-dark-themes.md", "Never propose dark themes.",
             description="NEVER use dark themes in generated UI", type="feedback")
    print(md.index())
"""

from __future__ import annotations

import getpass
import os
import re
from pathlib import Path
from typing import Any

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
from .memdir import ANY, Finding, Hit, Memdir, Report
from .model import Entry, Memory
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

TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def _actor() -> str:
    env = os.environ.get("MEMDIR_ACTOR")
    if env:
        return env
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (containers)
        return "unknown"


def prompt() -> str:
    """The system-prompt text that tells a model when to read and when to save memory."""
    from .tools import prompt as tools_prompt

    return tools_prompt()


def check_tenant(tenant: str) -> str:
    if not isinstance(tenant, str) or not TENANT.match(tenant):
        raise InvalidArgument(
            f"tenant {tenant!r} is not valid; use 1-63 lowercase letters, digits, '-' or '_', starting with a letter or digit"
        )
    return tenant


def open(  # noqa: A001 - the natural name: memdir.open("memory")
    location: str | os.PathLike[str] = "memory",
    *,
    tenant: str | None = None,
    actor: str | None = None,
    create: bool = True,
    agent: bool = False,
    **options: Any,
) -> Memdir:
    """Open (and by default create) the memory at `location`, bound to one tenant.

    `location` is a folder path (or `file://` URL). Keyword options set limits
    (e.g. `writes_per_minute=60`); see `memdir.Limits` for the names. `agent=True`
    uses the defaults for interfaces a model drives (60 writes per minute).
    """
    from . import limits as limits_mod
    from .stores.fs import FileStore

    text = os.fspath(location)
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme != "file":
            raise InvalidArgument(f"location {text!r}: unknown scheme {scheme!r}; give a folder path or a file:// URL")
        text = rest
    root = Path(text).expanduser()
    folder = root if tenant is None else root / "tenants" / check_tenant(tenant)
    limits = limits_mod.load(root if root.is_dir() else None, options, agent=agent)
    store = FileStore(folder, create=create)
    return Memdir(store, limits, actor=actor or _actor())
