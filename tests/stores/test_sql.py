"""SQLite and PostgreSQL specifics: migrations, the append-only journal, row-level security, roles, errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from services import Postgres

import memdir
from memdir import InvalidArgument, NotFound, StoreError
from memdir.stores import postgres as pg_store
from memdir.stores import sqlite as sqlite_store
from memdir.stores.locations import migrate

# ---------------------------------------------------------------- SQLite


def test_sqlite_migrate_is_named_recorded_idempotent_and_check_never_writes(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'm.db'}"
    names = ("0001_tables", "0002_search", "0003_rate", "0004_rewrite")
    report = migrate(url, check=True)
    assert report.pending == names and report.applied == ()
    assert not (tmp_path / "m.db").exists()
    assert migrate(url).applied == names
    again = migrate(url)
    assert again.applied == () and again.current == names
    assert migrate(url, check=True).pending == ()
    recorded = sqlite3.connect(tmp_path / "m.db").execute("SELECT name FROM memdir_migrations ORDER BY name").fetchall()
    assert recorded == [(n,) for n in names]


def test_sqlite_url_forms_name_the_same_file(tmp_path: Path) -> None:
    with memdir.open(f"sqlite://{tmp_path}/m.db", tenant="acme") as md:
        md.write("a.md", "a\n")
    with memdir.open(f"sqlite:///{tmp_path}/m.db", tenant="acme") as md:
        assert md.read("a.md").body == "a\n"
    assert sqlite_store.database_path(f"sqlite:////{tmp_path}/m.db") == tmp_path / "m.db"


def test_sqlite_journal_is_append_only(tmp_path: Path) -> None:
    with memdir.open(f"sqlite://{tmp_path / 'm.db'}") as md:
        md.write("p.md", "x\n")
    db = sqlite3.connect(tmp_path / "m.db")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM memdir_journal")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE memdir_journal SET op = 'x'")


def test_sqlite_keeps_the_memory_without_a_tenant_as_before_and_no_one_may_name_it(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'm.db'}"
    with memdir.open(url) as md:
        md.write("p.md", "mine\n")
    db = sqlite3.connect(tmp_path / "m.db")
    assert {r[0] for r in db.execute("SELECT tenant_id FROM memdir_files")} == {"default"}  # as every memdir stored it
    db.close()
    with memdir.open(url) as md:  # what was written without a tenant opens the same way
        assert md.read("p.md").body == "mine\n"
    with pytest.raises(InvalidArgument, match="tenant 'default' is reserved: it is the memory without a tenant"):
        memdir.open(url, tenant="default")
    with memdir.open(url, tenant="other") as md:
        assert md.list() == []


def test_sqlite_errors_are_one_actionable_line(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="no memdir database at .*missing.db: create it with `memdir --root sqlite://"):
        memdir.open(f"sqlite://{tmp_path / 'missing.db'}", create=False)
    (tmp_path / "junk.db").write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="file is not a database; is this a memdir database?") as err:
        memdir.open(f"sqlite://{tmp_path / 'junk.db'}")
    assert "\n" not in str(err.value)
    with pytest.raises(StoreError, match="names no database file"):
        memdir.open("sqlite://")


# ---------------------------------------------------------------- PostgreSQL


def test_row_level_security_keeps_raw_sql_inside_its_tenant(postgres: Postgres) -> None:
    with memdir.open(postgres.app_url, tenant="rls-a") as a, memdir.open(postgres.app_url, tenant="rls-b") as b:
        a.write("a.md", "tenant a\n")
        b.write("b.md", "tenant b\n", description="b's")
        conn = a.store.db  # type: ignore[attr-defined]  # memdir's own connection, set for tenant rls-a
        for table in pg_store.TABLES:
            tenants = {row[0] for row in conn.execute(f"SELECT tenant_id FROM {table}").fetchall()}
            assert tenants <= {"rls-a"}, table
        assert conn.execute("SELECT count(*) FROM memdir_files WHERE tenant_id = 'rls-b'").fetchone() == (0,)
        assert conn.execute("UPDATE memdir_files SET data = 'x' WHERE tenant_id = 'rls-b'").rowcount == 0
        assert conn.execute("DELETE FROM memdir_files WHERE tenant_id = 'rls-b'").rowcount == 0
        assert conn.execute("DELETE FROM memdir_catalog WHERE tenant_id = 'rls-b'").rowcount == 0
        assert conn.execute("UPDATE memdir_files SET tenant_id = 'rls-b' WHERE path = 'nothing'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute("INSERT INTO memdir_files VALUES ('rls-b', 'evil.md', 'x', 'v')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute("UPDATE memdir_files SET tenant_id = 'rls-b' WHERE tenant_id = 'rls-a'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("ALTER TABLE memdir_files NO FORCE ROW LEVEL SECURITY")
        assert b.read("b.md").body == "tenant b\n"
        assert [e.path for e in b.list()] == ["b.md"] and "b's" in b.index()
        assert [p for p, _ in b.store.list()] == ["b.md"]


def test_postgres_journal_is_append_only(postgres: Postgres) -> None:
    with memdir.open(postgres.app_url, tenant="append") as md:
        md.write("p.md", "x\n")
    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            conn.execute("DELETE FROM memdir_journal WHERE tenant_id = 'append'")
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            conn.execute("UPDATE memdir_journal SET op = 'x'")


def test_memdir_refuses_roles_that_could_bypass_row_level_security(postgres: Postgres) -> None:
    with pytest.raises(StoreError, match="role 'memdir_admin' is a superuser") as err:
        memdir.open(postgres.admin_url, tenant="x")
    assert "--grant ROLE" in str(err.value)
    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS memdir_owner")
        conn.execute("DROP DATABASE IF EXISTS owned")
        conn.execute("CREATE ROLE memdir_owner LOGIN")
        conn.execute("CREATE DATABASE owned OWNER memdir_owner")
    owner_url = postgres.url("memdir_owner", "owned")
    migrate(owner_url)  # the owner makes the tables ...
    with pytest.raises(StoreError, match="role 'memdir_owner' owns the memdir tables"):
        memdir.open(owner_url, tenant="x")  # ... but may not use them through memdir


def test_postgres_migrate_is_named_recorded_idempotent_and_check_never_writes(postgres: Postgres) -> None:
    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS migrations")
        conn.execute("CREATE DATABASE migrations")
    url = postgres.url("memdir_admin", "migrations")
    names = ("0001_tables", "0002_append_only_journal", "0003_row_level_security", "0004_search", "0005_rate",
             "0006_tenants", "0007_search_spaceless",
             "0008_search_names", "0009_rewrite", "0010_search_stems")
    assert migrate(url, check=True).pending == names
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'memdir%'").fetchone() == (0,)
    with pytest.raises(StoreError, match=r"lacks memdir's schema .*run `memdir db migrate postgresql://"):
        memdir.open(postgres.url("memdir_app", "migrations"), tenant="x")
    first = migrate(url, grant="memdir_app")
    assert (first.applied, first.granted) == (names, "memdir_app")
    assert migrate(url).applied == ()
    assert migrate(url, check=True).pending == ()
    with psycopg.connect(url) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM memdir_migrations ORDER BY name")] == list(names)
    with memdir.open(postgres.url("memdir_app", "migrations")) as md:  # tenant None: stored as the tenant 'default'
        md.write("p.md", "x\n")
    with memdir.open(postgres.url("memdir_app", "migrations")) as md:
        assert md.read("p.md").body == "x\n"
    with psycopg.connect(url) as conn:
        assert [r[0] for r in conn.execute("SELECT DISTINCT tenant_id FROM memdir_files")] == ["default"]


def test_postgres_connection_errors_say_what_to_check(postgres: Postgres) -> None:
    from services import free_port

    url = f"postgresql://app:s3cret@127.0.0.1:{free_port()}/app"
    with pytest.raises(StoreError) as err:
        memdir.open(url, tenant="x")
    message = str(err.value)
    assert message.startswith(f"cannot connect to postgresql://app:***@127.0.0.1:{url.split(':')[3]}")
    assert message.endswith("is the server running? check the URL")
    assert "s3cret" not in message and "\n" not in message
    with pytest.raises(memdir.InvalidArgument, match="is not a role name"):
        migrate(postgres.admin_url, grant="x; DROP TABLE memdir_files")


def test_postgres_reads_have_an_index_whatever_the_other_tenants_hold(postgres: Postgres) -> None:
    with memdir.open(postgres.app_url, tenant="plan") as md:
        md.write("p.md", "x\n")
        conn = md.store.db  # type: ignore[attr-defined]
        conn.execute("SET enable_seqscan = off")  # tiny tables are scanned anyway: ask whether an index serves
        try:
            plans = {
                name: " ".join(row[0] for row in conn.execute("EXPLAIN " + sql).fetchall())
                for name, sql in {
                    "catalog": "SELECT path, entry, seq FROM memdir_catalog WHERE tenant_id = 'plan' AND seq > 5",
                    "files": "SELECT data FROM memdir_files WHERE tenant_id = 'plan' AND path = 'p.md'",
                    "journal": "SELECT seq FROM memdir_journal WHERE tenant_id = 'plan' AND path = 'p.md'",
                }.items()
            }
        finally:
            conn.execute("RESET enable_seqscan")
    for name, plan in plans.items():
        assert "Seq Scan" not in plan and f"on memdir_{name}" in plan, plan
        assert "Index Cond: " in plan and "tenant_id = 'plan'" in plan.split("Index Cond: ", 1)[1], plan


def test_postgres_upgrade_gives_the_rate_table_to_roles_granted_before(postgres: Postgres) -> None:
    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS upgrade")
        conn.execute("CREATE DATABASE upgrade")
    url = postgres.url("memdir_admin", "upgrade")
    migrate(url, grant="memdir_app")
    with psycopg.connect(url, autocommit=True) as conn:  # back to what the previous release made
        conn.execute("DROP TABLE memdir_rate")
        conn.execute("DELETE FROM memdir_migrations WHERE name = '0005_rate'")
    assert migrate(url).applied == ("0005_rate",)  # upgraded without --grant
    with memdir.open(postgres.url("memdir_app", "upgrade"), tenant="t", writes_per_minute=1) as md:
        md.write("a.md", "x\n")
        with pytest.raises(memdir.RateLimited):
            md.write("b.md", "y\n")
        conn = md.store.db  # type: ignore[attr-defined]
        assert conn.execute("SELECT count(*) FROM memdir_rate").fetchone() == (1,)
        conn.execute("SET memdir.tenant = 'someone-else'")  # row-level security covers the new table too
        assert conn.execute("SELECT count(*) FROM memdir_rate").fetchone() == (0,)


def test_postgres_upgrade_lists_the_tenants_made_before_and_after(postgres: Postgres) -> None:
    from memdir.stores.postgres import tenants

    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS upgrade_tenants")
        conn.execute("CREATE DATABASE upgrade_tenants")
    url, app = postgres.url("memdir_admin", "upgrade_tenants"), postgres.url("memdir_app", "upgrade_tenants")
    migrate(url, grant="memdir_app")
    with psycopg.connect(url, autocommit=True) as conn:  # back to what the previous release made
        conn.execute("DROP TRIGGER memdir_journal_tenant ON memdir_journal")
        conn.execute("DROP FUNCTION memdir_note_tenant()")
        conn.execute("DROP TABLE memdir_tenants")
        conn.execute("DELETE FROM memdir_migrations WHERE name = '0006_tenants'")
    with pytest.raises(StoreError, match="pending migrations: 0006_tenants"):
        memdir.open(app, tenant="old")
    with psycopg.connect(app, autocommit=True) as conn:  # what the previous release's memdir wrote
        for tenant in ("old-b", "old-a"):
            conn.execute("SELECT set_config('memdir.tenant', %s, false)", (tenant,))
            conn.execute("INSERT INTO memdir_journal(tenant_id, seq, time, actor, op, path) "
                         "VALUES (%s, 1, '2026-11-30T00:00:00Z', 'test', 'write', 'a.md')", (tenant,))
    assert migrate(url).applied == ("0006_tenants",)  # upgraded without --grant: the app role may use it
    with memdir.open(app, tenant="new") as md:
        md.write("a.md", "x\n")
    assert tenants(app) == ["new", "old-a", "old-b"]



def test_sqlite_rate_token_is_not_flushed_but_writes_still_are(tmp_path: Path) -> None:
    """The bucket's own transaction commits without an fsync; the connection is FULL again for the journal."""
    with memdir.open(f"sqlite://{tmp_path / 'm.db'}", writes_per_minute=1000) as md:
        db = md.store.db  # type: ignore[attr-defined]
        seen: list[int] = []
        db.set_trace_callback(lambda sql: seen.append(db.execute("PRAGMA synchronous").fetchone()[0])
                              if sql.startswith("COMMIT") else None)
        md.store.take(1000)
        md.write("a.md", "one\n")
        assert seen[0] == 1  # NORMAL for the token
        assert seen[-1] == 2  # FULL for the write
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 2


def test_postgres_rate_token_does_not_wait_for_the_flush(postgres: Postgres) -> None:
    with memdir.open(postgres.app_url, tenant="token-flush", writes_per_minute=1000) as md:
        store = md.store
        statements: list[str] = []
        real = store._run  # type: ignore[attr-defined]

        def run(sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
            statements.append(sql)
            return real(sql, args)  # type: ignore[no-any-return]

        store._run = run  # type: ignore[attr-defined]
        store.take(1000)  # its own transaction: asynchronous commit, for that transaction only
        assert statements[0] == "BEGIN" and "SET LOCAL synchronous_commit TO OFF" in statements
        statements.clear()
        with store.lock():
            store.take(1000)  # joined to a write's transaction: as durable as the write
        assert not any("synchronous_commit" in sql for sql in statements)
        assert md.write("a.md", "one\n").change == "created"
        assert str(real("SHOW synchronous_commit")[0][0]) == postgres_default(real)


def postgres_default(run: object) -> str:
    """The server's own setting, which SET LOCAL left alone outside its transaction."""
    return str(run("SELECT reset_val FROM pg_settings WHERE name = 'synchronous_commit'")[0][0])  # type: ignore[operator]
