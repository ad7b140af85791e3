"""Past one database: two PostgreSQL databases as two shards behind a tenant -> URL map (DESIGN.md, "Past one database")."""

from __future__ import annotations

import psycopg
from services import Postgres

import memdir
from memdir.remember.copy import copy_tenant
from memdir.stores import postgres as pg_store


class Shards:
    """What a SaaS keeps beside memdir: which database holds each tenant, and one `memdir.connect` per database."""

    def __init__(self, placement: dict[str, str]) -> None:
        self.placement = placement
        self.dbs = {url: memdir.connect(url) for url in set(placement.values())}

    def tenant(self, name: str) -> memdir.Memdir:
        return self.dbs[self.placement[name]].tenant(name)


def _rows(admin: str, tenant: str) -> int:
    with psycopg.connect(admin, autocommit=True) as conn:  # the owner, past row-level security
        conn.execute("ALTER TABLE memdir_files NO FORCE ROW LEVEL SECURITY")
        try:
            row = conn.execute("SELECT count(*) FROM memdir_files WHERE tenant_id = %s", (tenant,)).fetchone()
        finally:
            conn.execute("ALTER TABLE memdir_files FORCE ROW LEVEL SECURITY")
    return int(row[0]) if row else 0


def test_two_databases_as_shards_keep_tenants_apart_and_a_tenant_moves_between_them(postgres: Postgres) -> None:
    admin_a, shard_a = postgres.fresh_database("shard_a")
    admin_b, shard_b = postgres.fresh_database("shard_b")
    try:
        shards = Shards({"acme": shard_a, "globex": shard_b})
        with shards.tenant("acme") as md:
            md.write("project/launch.md", "Launch on 2026-12-15.\n", description="launch date")
            md.write("project/launch.md", "Launch on 2027-01-10.\n", description="launch date, moved")
        with shards.tenant("globex") as md:
            md.write("user/profile.md", "Prefers email.\n")
        # Each tenant's rows live in its shard only; the other shard has none of them.
        assert (_rows(admin_a, "acme"), _rows(admin_b, "acme")) == (1, 0)
        assert (_rows(admin_a, "globex"), _rows(admin_b, "globex")) == (0, 1)
        assert memdir.connect(shard_b).tenant("acme").list() == []
        # Move acme to shard B: copy (journal replayed, verified by hash), then point the map at B.
        report = copy_tenant(shard_a, shard_b, "acme")
        assert report.verified and report.files == 1 and report.journal == 2
        shards.placement["acme"] = shard_b
        with shards.tenant("acme") as md:
            assert md.read("project/launch.md").body == "Launch on 2027-01-10.\n"
            assert [r.op for r in md.history("project/launch.md")] == ["write", "write"]
            assert md.undo("project/launch.md").change == "restored"  # history came along: undo works on B
            assert md.read("project/launch.md").body == "Launch on 2026-12-15.\n"
        with shards.tenant("globex") as md:
            assert [e.path for e in md.list()] == ["user/profile.md"]  # its neighbour's arrival changed nothing
    finally:
        pg_store.close_pools(shard_a)
        pg_store.close_pools(shard_b)
