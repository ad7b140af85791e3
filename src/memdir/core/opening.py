"""`memdir.open()` and `memdir.prompt()`: the two functions of the public API (re-exported by `memdir`)."""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterable
from typing import Any

from .memdir import Memdir


def default_actor() -> str:
    """Who is writing, for the journal: MEMDIR_ACTOR, else the login name."""
    env = os.environ.get("MEMDIR_ACTOR")
    if env:
        return env
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (containers)
        return "unknown"


def prompt(md: Memdir | None = None, *, budget: int = 2000, include: Iterable[str] | str = ()) -> str:
    """The system-prompt text that tells a model when to read and when to save memory.

    Given a memory, the prompt also carries its context (pinned and feedback
    memories, the index, the `include`d files) within `budget` tokens, so the
    model starts the conversation knowing them without a tool call. A query
    has no place here: a system prompt outlives the turn; use `md.context(query)`
    or the `get_memory_context` tool for that.
    """
    from ..faces.tools import prompt as tools_prompt

    text = tools_prompt()
    if md is None:
        return text
    ctx = md.context(budget=budget, include=include)
    return f"{text}\n{ctx.text}" if ctx.text else text


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

    `location` is a folder path (or `file://` URL), `sqlite:///path/to.db`,
    `postgresql://user@host/db` or `s3://bucket/prefix`. Tenant None is the
    folder itself, or the tenant `default` on the other backends. Keyword
    options set limits (e.g. `writes_per_minute=60`); see `memdir.Limits`. `agent=True`
    uses the defaults for interfaces a model drives (60 writes per minute).
    """
    from ..stores.locations import open_store
    from . import limits as limits_mod

    store, root = open_store(location, tenant, create=create)
    try:
        limits = limits_mod.load(root if root is not None and root.is_dir() else None, options, agent=agent)
        return Memdir(store, limits, actor=actor or default_actor(), agent=agent)
    except BaseException:
        store.close()
        raise
