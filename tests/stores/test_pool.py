"""Many tenants in one process: `memdir.connect(url).tenant(t)` on one shared pool (PostgreSQL) or client (S3)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest
from conftest import BUCKET
from services import S3, Postgres

import memdir
from memdir.stores import postgres as pg_store


@pytest.fixture
def pooled(postgres: Postgres, request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """A database of its own (admin URL, app URL), so the pool's size and the connection counts are this test's."""
    name = "pool_" + request.node.name.removeprefix("test_")[:40]
    urls = postgres.fresh_database(name)
    yield urls
    pg_store.close_pools(urls[1])


def _backends(admin: str, database: str) -> int:
    """Connections the app role holds to `database`, as the server counts them."""
    with psycopg.connect(admin, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND usename = 'memdir_app'",
                           (database,)).fetchone()
    return int(row[0]) if row else 0


def test_tenants_interleaved_on_one_pooled_connection_never_see_each_other(pooled: tuple[str, str]) -> None:
    admin, url = pooled
    db = memdir.connect(url, pool_size=1)
    for round_ in range(3):  # acme, globex, acme, ... through the one connection
        for tenant in ("acme", "globex"):
            with db.tenant(tenant) as md:
                md.write(f"{tenant}-{round_}.md", f"{tenant} note {round_}\n", description=f"{tenant}'s note")
    acme, globex = db.tenant("acme"), db.tenant("globex")
    assert [e.path for e in acme.list()] == ["acme-0.md", "acme-1.md", "acme-2.md"]
    assert [e.path for e in globex.list()] == ["globex-0.md", "globex-1.md", "globex-2.md"]
    assert [h.path for h in globex.search("acme")] == [] and len(acme.search("acme")) == 3
    with pytest.raises(memdir.NotFound):
        acme.read("globex-0.md")
    assert "globex" not in acme.index()
    stats = pg_store.pool_stats()[pg_store.redact(url)]
    assert stats["size"] == 1 and stats["max"] == 1
    assert _backends(admin, url.rsplit("/", 1)[1]) == 1
    # The connection back in the pool carries no tenant: a statement without the setting sees no rows.
    with pg_store.shared_pool(url).connection() as conn:
        assert conn.execute("SELECT current_setting('memdir.tenant', true)").fetchone()[0] in ("", None)
        assert conn.execute("SELECT count(*) FROM memdir_files").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM memdir_journal").fetchone() == (0,)


def test_a_write_holds_its_connection_and_tenant_until_commit(pooled: tuple[str, str]) -> None:
    """Another tenant's reads on a second pooled connection go on while a write transaction is open."""
    _, url = pooled
    db = memdir.connect(url, pool_size=2)
    a, b = db.tenant("alpha"), db.tenant("beta")
    b.write("b.md", "beta\n")
    inside = threading.Event()
    done = threading.Event()

    def hold() -> None:
        with a.store.lock():
            a.store.get("x.md")
            inside.set()
            done.wait(10)

    worker = threading.Thread(target=hold)
    worker.start()
    try:
        assert inside.wait(10)
        assert b.read("b.md").body == "beta\n"
        assert [p for p, _ in b.store.list()] == ["b.md"]
    finally:
        done.set()
        worker.join()
    a.write("a.md", "alpha\n")
    assert [e.path for e in a.list()] == ["a.md"]


def test_a_failed_statement_leaves_the_pooled_connection_clean(pooled: tuple[str, str]) -> None:
    _, url = pooled
    db = memdir.connect(url, pool_size=1)
    md = db.tenant("broken")
    with pytest.raises(memdir.StoreError):
        md.store._run("SELECT no_such_function()")  # type: ignore[attr-defined]
    md.write("ok.md", "still fine\n")
    assert md.read("ok.md").body == "still fine\n"
    with pg_store.shared_pool(url).connection() as conn:
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert conn.execute("SELECT count(*) FROM memdir_files").fetchone() == (0,)


def test_many_tenants_hold_only_the_pools_connections_and_check_the_schema_once(pooled: tuple[str, str]) -> None:
    admin, url = pooled
    db = memdir.connect(url, pool_size=3)
    checks: list[str] = []
    real = pg_store._refuse_privileged
    pg_store._refuse_privileged = lambda conn, where: checks.append(where)  # type: ignore[assignment]
    try:
        for i in range(60):
            with db.tenant(f"t{i}") as md:
                md.write("n.md", f"tenant {i}\n")
    finally:
        pg_store._refuse_privileged = real
    assert checks == []  # checked when the pool was made, never per tenant
    assert _backends(admin, url.rsplit("/", 1)[1]) <= 3
    assert db.tenant("t7").read("n.md").body == "tenant 7\n"


def test_connect_refuses_what_open_refuses(postgres: Postgres) -> None:
    with pytest.raises(memdir.StoreError, match="is a superuser|owns the memdir tables"):
        memdir.connect(postgres.admin_url)
    with pytest.raises(memdir.InvalidArgument, match="tenant 'Bad Name' is not valid"):
        memdir.connect(postgres.app_url).tenant("Bad Name")


def test_closing_the_database_closes_the_pool_and_the_next_tenant_makes_a_new_one(pooled: tuple[str, str]) -> None:
    admin, url = pooled
    with memdir.connect(url) as db:
        db.tenant("c").write("c.md", "one\n")
    assert pg_store.redact(url) not in pg_store.pool_stats()
    assert memdir.connect(url).tenant("c").read("c.md").body == "one\n"


def test_s3_tenants_share_one_client_and_stay_apart(s3_server: S3) -> None:
    db = memdir.connect(f"s3://{BUCKET}/pooled")
    a, b = db.tenant("acme"), db.tenant("globex")
    assert a.store.s3 is b.store.s3  # type: ignore[attr-defined]
    a.write("a.md", "acme\n")
    b.write("b.md", "globex\n")
    a.close()
    assert [e.path for e in db.tenant("acme").list()] == ["a.md"]
    assert [e.path for e in b.list()] == ["b.md"]
    with pytest.raises(memdir.NotFound):
        b.read("a.md")


def test_a_folder_location_opens_each_tenant_as_open_does(tmp_path: object) -> None:
    db = memdir.connect(str(tmp_path))
    with db.tenant("acme") as md:
        md.write("a.md", "acme\n")
    assert (tmp_path / "tenants" / "acme" / "a.md").read_text().endswith("acme\n")  # type: ignore[operator]
