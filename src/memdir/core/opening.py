"""`memdir.open()`: a memory by its location, bound to one tenant (re-exported by `memdir`)."""

from __future__ import annotations

import getpass
import os
from typing import Any

from ..stores.locations import open_store
from . import limits as limits_mod
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
    store, root = open_store(location, tenant, create=create)
    try:
        limits = limits_mod.load(root if root is not None and root.is_dir() else None, options, agent=agent)
        md = Memdir(store, limits, actor=actor or default_actor(), agent=agent)
        if not store.journal(limit=1) and store.list():
            md.sync()  # files memdir has never seen (a folder made by hand or another tool): journaled, not rewritten
        return md
    except BaseException:
        store.close()
        raise
