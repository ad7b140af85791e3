"""`memdir.open()`: a memory by its location, bound to one tenant (re-exported by `memdir`)."""

from __future__ import annotations

import getpass
import os
from typing import Any

from ..stores.locations import close_shared, config_file, journaled, open_shared, open_store, prepare_shared, scheme_of
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
    store = open_store(location, tenant, create=create)
    try:
        cfg = config_file(store)
        limits = limits_mod.load(None if cfg is None else cfg.parent, options, agent=agent)
        md = Memdir(store, limits, actor=actor or default_actor(), agent=agent)
        if not store.journal(limit=1) and store.list():
            md.sync()  # files memdir has never seen (a folder made by hand or another tool): journaled, not rewritten
        return md
    except BaseException:
        store.close()
        raise


class Database:
    """Many tenants' memories at one location, for a server or a request handler: `memdir.connect(url)`.

    `db.tenant("acme")` is cheap (no connection of its own, no schema check):
    on PostgreSQL every tenant borrows from the process's one pool for the URL,
    the tenant set per transaction; on S3 every tenant shares the endpoint's
    client. Use it per request, as a context manager; closing a tenant's
    memory gives nothing back because it holds nothing. `close()` closes the
    pool (the next `tenant()` makes a new one).
    """

    def __init__(self, location: str | os.PathLike[str], *, actor: str | None = None, agent: bool = False,
                 pool_size: int | None = None, **options: Any) -> None:
        self.location = os.fspath(location)
        self.scheme = scheme_of(self.location)
        self.actor = actor
        self.agent = agent
        self.pool_size = pool_size
        self.limits = limits_mod.load(None, options, agent=agent)  # one parse for every tenant
        prepare_shared(self.location, pool_size)  # connect and check the schema now, not on the first request

    def tenant(self, name: str | None, *, actor: str | None = None) -> Memdir:
        """The memory of tenant `name` (None: the folder itself, or tenant `default`)."""
        if self.scheme not in ("postgresql", "s3"):
            return open(self.location, tenant=name, actor=actor or self.actor, agent=self.agent)
        store = open_shared(self.location, name, pool_size=self.pool_size)
        try:
            md = Memdir(store, self.limits, actor=actor or self.actor or default_actor(), agent=self.agent)
            if self.scheme == "s3" and not journaled(store) and store.list():
                md.sync()  # objects another tool put there: journaled, as `open` does (rows in PostgreSQL come only from memdir)
            return md
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        close_shared(self.location)

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(location: str | os.PathLike[str], *, actor: str | None = None, agent: bool = False,
            pool_size: int | None = None, **options: Any) -> Database:
    """Many tenants at one location: `db = memdir.connect("postgresql://app@db/memdir")`, then per request
    `with db.tenant("acme") as md: ...`. Options are `memdir.open`'s limits, set once for every tenant;
    `pool_size` bounds the PostgreSQL connections of this process (default 10, env MEMDIR_PG_POOL_SIZE)."""
    return Database(location, actor=actor, agent=agent, pool_size=pool_size, **options)
