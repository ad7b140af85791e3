"""Where a memory lives: a folder, or a `sqlite://`, `postgresql://` or `s3://` URL.

The scheme picks the store; the client libraries of PostgreSQL (psycopg) and
S3 (boto3) are imported only when such a URL is opened.

Tenants: in a folder, tenant None is the folder itself and tenant T lives in
`tenants/T/` under it. On the other backends every memory belongs to a
tenant; tenant None is stored as the tenant named `default`, which is why no
caller may name `default` itself (`check_tenant`), on any backend.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidArgument, StoreError
from .base import DEFAULT_TENANT, Store, redact
from .fs import FileStore
from .sqlite import SQLiteStore, database_path
from .sqlite import migrate as run

if TYPE_CHECKING:  # opening a folder never loads the SQL stores' module
    from .sql import MigrationReport

TENANT = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}\Z")  # \Z: `$` would let a trailing newline in
SCHEMES = ("file", "sqlite", "postgresql", "postgres", "s3")


def check_tenant(tenant: str) -> str:
    """A tenant id as given, or one line saying why not. `default` is reserved on every backend: it is where
    SQLite, PostgreSQL and S3 keep the memory without a tenant (the operator's, the CLI's, the hooks'), so no
    token, claim or auth file may name it."""
    if not isinstance(tenant, str) or not TENANT.match(tenant):
        raise InvalidArgument(
            f"tenant {tenant!r} is not valid; use 1-63 lowercase letters, digits, '-' or '_', starting with a letter or digit"
        )
    if tenant == DEFAULT_TENANT:
        raise InvalidArgument(
            f"tenant {tenant!r} is reserved: it is the memory without a tenant; leave the tenant out for that one "
            "(no --tenant, tenant=None), or name another"
        )
    return tenant


def scheme_of(location: str) -> str:
    if "://" not in location:
        return "file"
    scheme = location.split("://", 1)[0].lower()
    if scheme not in SCHEMES:
        raise InvalidArgument(
            f"location {redact(location)!r}: unknown scheme {scheme!r}; give a folder path or a file://, sqlite://, "
            "postgresql:// or s3:// URL"
        )
    return "postgresql" if scheme == "postgres" else scheme


def folder_of(location: str) -> Path:
    text = location.split("://", 1)[1] if "://" in location else location
    return Path(text).expanduser()


CONFIG_FILE = "memdir.toml"


def config_file(store: Store) -> Path | None:
    """The memdir.toml that configures a folder memory: its own, else for a tenant (`tenants/T/`) the one of
    the folder that holds it, so a server's settings apply to every tenant it serves; None on the other
    backends (they are configured by the environment). Limits, [semantic], [capture], [diary] and
    [summarizer] are all read from this one file."""
    root = getattr(store, "root", None)
    if not isinstance(root, Path):
        return None
    for folder in (root, root.parent.parent if root.parent.name == "tenants" else None):
        if folder is not None and (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
    return None


def open_store(location: str | os.PathLike[str], tenant: str | None, *, create: bool = True) -> Store:
    """The store for one tenant at `location` (its settings: `config_file`)."""
    text = os.fspath(location)
    scheme = scheme_of(text)
    if tenant is not None:
        _check_named(tenant, text, scheme)
    if scheme == "file":
        root = folder_of(text)
        folder = root if tenant is None else root / "tenants" / tenant
        return FileStore(folder, create=create)
    name = tenant or DEFAULT_TENANT
    if scheme == "sqlite":
        return SQLiteStore(database_path(text), name, create=create)
    if scheme == "postgresql":
        from .postgres import PostgresStore  # the optional backends' modules load with their first URL

        return PostgresStore(text, name)
    from .s3 import S3Store

    return S3Store(text, name, create=create)


def _check_named(tenant: str, location: str, scheme: str) -> None:
    """`check_tenant`, saying where a folder's `tenants/default/` from before the name was reserved went."""
    if tenant == DEFAULT_TENANT and scheme == "file" and (folder_of(location) / "tenants" / tenant / ".memdir").is_dir():
        raise InvalidArgument(
            f"tenant {tenant!r} is reserved (the memory without a tenant); {folder_of(location) / 'tenants' / tenant} "
            "was written under that name before: move it to tenants/NAME and open it with --tenant NAME"
        )
    check_tenant(tenant)


def open_shared(location: str | os.PathLike[str], tenant: str | None, *, pool_size: int | None = None) -> Store:
    """A tenant's store on what the process shares for `location`: the PostgreSQL pool of its URL, the S3
    client of its endpoint (folders and SQLite files have nothing to share: their stores open as usual)."""
    text = os.fspath(location)
    scheme = scheme_of(text)
    if tenant is not None:
        check_tenant(tenant)
    name = tenant or DEFAULT_TENANT
    if scheme == "postgresql":
        from .postgres import PostgresStore, shared_pool

        return PostgresStore(text, name, pool=shared_pool(text, pool_size))
    if scheme == "s3":
        from .s3 import S3Store

        return S3Store(text, name, shared=True)
    return open_store(text, tenant)


def journaled(store: Store) -> bool:
    """Whether memdir ever journaled the store's tenant (S3 on a shared client remembers it, asking nothing)."""
    known = getattr(store, "journaled", None)
    return bool(known()) if known is not None else bool(store.journal(limit=1))


def prepare_shared(location: str, pool_size: int | None = None) -> None:
    """Make what `open_shared` will share now (the PostgreSQL pool, after its schema and role check)."""
    if scheme_of(location) == "postgresql":
        from .postgres import shared_pool

        shared_pool(location, pool_size)


def close_shared(location: str) -> None:
    """Close the process's pool for a PostgreSQL location (nothing else holds anything)."""
    if scheme_of(location) == "postgresql":
        from .postgres import close_pools

        close_pools(location)


def ping_location(location: str) -> None:
    """Raise `StoreError` unless the store at `location` answers now (a server's readiness)."""
    scheme = scheme_of(location)
    if scheme == "postgresql":
        from .postgres import ping

        ping(location)
    elif scheme == "s3":
        from .s3 import ping as ping_s3

        ping_s3(location)
    elif scheme == "file" and not folder_of(location).is_dir():
        raise StoreError(f"the memory folder {str(folder_of(location))!r} is gone; restore it or restart with another --root")
    elif scheme == "sqlite" and not database_path(location).exists():
        raise StoreError(f"the database {str(database_path(location))!r} is gone; restore it")


def pool_stats() -> dict[str, dict[str, int]]:
    """The process's PostgreSQL pools (none if no postgresql:// location was opened): `postgres.pool_stats`."""
    module = sys.modules.get(f"{__package__}.postgres")
    return module.pool_stats() if module is not None else {}


def migrate(location: str, *, check: bool = False, grant: str | None = None) -> MigrationReport:
    """Create or upgrade the schema at a sqlite:// or postgresql:// location."""
    scheme = scheme_of(location)
    if grant is not None and scheme != "postgresql":
        raise InvalidArgument(f"--grant is for PostgreSQL roles; {redact(location)!r} is a {scheme} location")
    if scheme == "sqlite":
        return run(location, check=check)
    if scheme == "postgresql":
        from .postgres import migrate as run_pg

        return run_pg(location, check=check, grant=grant)
    raise InvalidArgument(
        f"{location!r} is a {scheme} location, which has no schema to migrate; migrations are for sqlite:// and postgresql://"
    )
