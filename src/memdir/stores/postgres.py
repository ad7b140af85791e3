"""The PostgreSQL store: many tenants, many processes, many hosts; tenancy enforced by the database.

Every table has row-level security, forced even for its owner, with a policy
that admits only rows whose `tenant_id` equals the connection's
`memdir.tenant` setting, which the store sets once when it connects. memdir
refuses to connect as a role that could step around that (a superuser, a
role with BYPASSRLS, or the tables' owner, who could turn it off), so a query
sent through memdir's connection, whatever its WHERE clause, reaches only
its own tenant's rows.

`lock()` opens a transaction and takes `pg_advisory_xact_lock` keyed on the
tenant: writers of one tenant queue on every host, other tenants never wait,
and the lock ends with the COMMIT that makes content, journal, catalog and
MEMORY.md durable together. Readers run in autocommit without locks.

Two ways to hold a connection. `memdir.open(url, tenant=...)` (a CLI command,
a script) gets a connection of its own with the tenant set for the session.
`memdir.connect(url).tenant(...)` (a server, a request handler) borrows from
one `psycopg_pool.ConnectionPool` per URL, shared by every tenant of the
process (`shared_pool`): each statement outside a write runs in a short
transaction of its own and a write's statements in one, and the tenant is
set with `set_config('memdir.tenant', t, true)` inside that transaction, so
row-level security binds every statement and the setting ends with the
COMMIT: a connection back in the pool carries no tenant, and a statement
sent on it without one sees no rows. The schema and role are checked once
per pool, not per tenant.

The schema is created by `memdir db migrate URL [--grant ROLE]`, run as the
tables' owner; the store only checks that every migration is there.
"""

from __future__ import annotations

import builtins
import os
import re
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidArgument, StoreError
from .base import redact, scrub
from .sql import Migration, MigrationReport, Migrator, SqlStore

TABLES = ("memdir_files", "memdir_journal", "memdir_catalog", "memdir_derived", "memdir_state")  # of 0003
_RATE_POLICY = """CREATE POLICY memdir_tenant ON memdir_rate
    USING (tenant_id = current_setting('memdir.tenant', true))
    WITH CHECK (tenant_id = current_setting('memdir.tenant', true))"""
_MIGRATE_LOCK = 0x6D656D646972  # "memdir": migrators queue on this advisory lock

# The search rows indexed before a migration that changes their form, dropped with their seq so the next search
# rebuilds them from the files: the owner reaches every tenant's rows once, row-level security lifted meanwhile.
_REINDEX = [
    "ALTER TABLE memdir_search NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memdir_state NO FORCE ROW LEVEL SECURITY",
    "DELETE FROM memdir_search",
    "DELETE FROM memdir_state WHERE key = 'search_seq'",
    "ALTER TABLE memdir_search FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memdir_state FORCE ROW LEVEL SECURITY",
]

MIGRATIONS: list[Migration] = [
    (
        "0001_tables",
        [
            """CREATE TABLE memdir_files(
                tenant_id text NOT NULL, path text COLLATE "C" NOT NULL, data bytea NOT NULL, version text NOT NULL,
                PRIMARY KEY (tenant_id, path))""",
            """CREATE TABLE memdir_journal(
                tenant_id text NOT NULL, seq bigint NOT NULL, time text NOT NULL, actor text NOT NULL,
                op text NOT NULL, path text COLLATE "C" NOT NULL, dest text COLLATE "C", old_version text,
                new_version text, old bytea, new bytea, undoes bigint,
                PRIMARY KEY (tenant_id, seq))""",
            "CREATE INDEX memdir_journal_path ON memdir_journal(tenant_id, path, seq)",
            "CREATE INDEX memdir_journal_dest ON memdir_journal(tenant_id, dest, seq) WHERE dest IS NOT NULL",
            """CREATE TABLE memdir_catalog(
                tenant_id text NOT NULL, path text COLLATE "C" NOT NULL, entry text, seq bigint NOT NULL,
                PRIMARY KEY (tenant_id, path))""",
            "CREATE INDEX memdir_catalog_seq ON memdir_catalog(tenant_id, seq)",
            """CREATE TABLE memdir_derived(
                tenant_id text NOT NULL, path text COLLATE "C" NOT NULL, data bytea NOT NULL,
                PRIMARY KEY (tenant_id, path))""",
            """CREATE TABLE memdir_state(
                tenant_id text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (tenant_id, key))""",
        ],
    ),
    (
        "0002_append_only_journal",
        [
            """CREATE FUNCTION memdir_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'the journal is append-only'; END $$""",
            """CREATE TRIGGER memdir_journal_append_only BEFORE UPDATE OR DELETE ON memdir_journal
                FOR EACH ROW EXECUTE FUNCTION memdir_append_only()""",
            """CREATE TRIGGER memdir_journal_no_truncate BEFORE TRUNCATE ON memdir_journal
                FOR EACH STATEMENT EXECUTE FUNCTION memdir_append_only()""",
        ],
    ),
    (
        "0003_row_level_security",
        [
            statement
            for table in TABLES
            for statement in (
                f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
                f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
                f"""CREATE POLICY memdir_tenant ON {table}
                    USING (tenant_id = current_setting('memdir.tenant', true))
                    WITH CHECK (tenant_id = current_setting('memdir.tenant', true))""",
            )
        ],
    ),
    (
        "0004_search",
        [
            # The full-text index (memdir.search.pg): one row per topic file; the tsvector is generated
            # from the name (A), the written description and tags (B) and the body (D), capped because
            # PostgreSQL limits a tsvector to 1 MB.
            """CREATE TABLE memdir_search(
                tenant_id text NOT NULL, path text COLLATE "C" NOT NULL, version text NOT NULL, name text NOT NULL,
                description text NOT NULL, tags text NOT NULL, type text, updated text, head integer NOT NULL,
                body_at integer NOT NULL, text text NOT NULL,
                tsv tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector('english', name), 'A')
                    || setweight(to_tsvector('english', description || ' ' || tags), 'B')
                    || setweight(to_tsvector('english', left(substr(text, body_at + 1), 200000)), 'D')
                ) STORED,
                PRIMARY KEY (tenant_id, path))""",
            "CREATE INDEX memdir_search_tsv ON memdir_search USING gin (tsv)",
            "ALTER TABLE memdir_search ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE memdir_search FORCE ROW LEVEL SECURITY",
            """CREATE POLICY memdir_tenant ON memdir_search
                USING (tenant_id = current_setting('memdir.tenant', true))
                WITH CHECK (tenant_id = current_setting('memdir.tenant', true))""",
        ],
    ),
    (
        "0005_rate",
        [
            "CREATE TABLE memdir_rate(tenant_id text PRIMARY KEY, tokens double precision NOT NULL, "
            "stamp double precision NOT NULL)",
            "ALTER TABLE memdir_rate ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE memdir_rate FORCE ROW LEVEL SECURITY",
            _RATE_POLICY,
            # roles already granted the use of memdir get the new table too
            """DO $$ DECLARE r record; BEGIN
                FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
                         WHERE table_name = 'memdir_files' AND privilege_type = 'INSERT' AND grantee <> current_user
                LOOP EXECUTE format('GRANT SELECT, INSERT, UPDATE ON memdir_rate TO %I', r.grantee); END LOOP;
            END $$""",
        ],
    ),
    (
        "0006_tenants",
        [
            # The tenants a database holds, for `rollup --all-tenants`: names only, kept by a trigger on the
            # journal (every change of a tenant is journaled). No row-level security: the app role can name
            # any tenant already (finding 18 in the README's Security section), so a list of names adds nothing.
            "CREATE TABLE memdir_tenants(tenant_id text PRIMARY KEY)",
            "ALTER TABLE memdir_journal NO FORCE ROW LEVEL SECURITY",  # the owner reads every tenant's rows, once
            "INSERT INTO memdir_tenants SELECT DISTINCT tenant_id FROM memdir_journal",
            "ALTER TABLE memdir_journal FORCE ROW LEVEL SECURITY",
            """CREATE FUNCTION memdir_note_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN INSERT INTO memdir_tenants(tenant_id) VALUES (NEW.tenant_id) ON CONFLICT DO NOTHING;
                RETURN NULL; END $$""",
            """CREATE TRIGGER memdir_journal_tenant AFTER INSERT ON memdir_journal
                FOR EACH ROW EXECUTE FUNCTION memdir_note_tenant()""",
            """DO $$ DECLARE r record; BEGIN
                FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
                         WHERE table_name = 'memdir_files' AND privilege_type = 'INSERT' AND grantee <> current_user
                LOOP EXECUTE format('GRANT SELECT, INSERT ON memdir_tenants TO %I', r.grantee); END LOOP;
            END $$""",
        ],
    ),    (
        "0007_search_spaceless",
        [
            # Spaceless scripts (Chinese, Japanese, Thai...) as character pairs (memdir.search.text.grams), given
            # by memdir per field and indexed with the 'simple' configuration beside the English stems. The rows
            # indexed before are dropped with their seq, so the next search rebuilds them from the files.
            "ALTER TABLE memdir_search ADD COLUMN grams_a text NOT NULL DEFAULT '', "
            "ADD COLUMN grams_b text NOT NULL DEFAULT '', ADD COLUMN grams_d text NOT NULL DEFAULT ''",
            "DROP INDEX memdir_search_tsv",
            "ALTER TABLE memdir_search DROP COLUMN tsv",
            """ALTER TABLE memdir_search ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english', name), 'A')
                || setweight(to_tsvector('english', description || ' ' || tags), 'B')
                || setweight(to_tsvector('english', left(substr(text, body_at + 1), 200000)), 'D')
                || setweight(to_tsvector('simple', grams_a), 'A')
                || setweight(to_tsvector('simple', grams_b), 'B')
                || setweight(to_tsvector('simple', left(grams_d, 200000)), 'D')
            ) STORED""",
            "CREATE INDEX memdir_search_tsv ON memdir_search USING gin (tsv)",
            *_REINDEX,
        ],
    ),
    (
        "0008_search_names",
        [
            # The words of a file's name (memdir.search.text.name_words: `feedback_vercel-env-newline.md`), given by
            # memdir and weighed like the name. The rows indexed before are dropped with their seq, as in 0007.
            "ALTER TABLE memdir_search ADD COLUMN words_a text NOT NULL DEFAULT ''",
            "DROP INDEX memdir_search_tsv",
            "ALTER TABLE memdir_search DROP COLUMN tsv",
            """ALTER TABLE memdir_search ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english', name || ' ' || words_a), 'A')
                || setweight(to_tsvector('english', description || ' ' || tags), 'B')
                || setweight(to_tsvector('english', left(substr(text, body_at + 1), 200000)), 'D')
                || setweight(to_tsvector('simple', grams_a), 'A')
                || setweight(to_tsvector('simple', grams_b), 'B')
                || setweight(to_tsvector('simple', left(grams_d, 200000)), 'D')
            ) STORED""",
            "CREATE INDEX memdir_search_tsv ON memdir_search USING gin (tsv)",
            *_REINDEX,
        ],
    ),
    (
        "0009_rewrite",
        [
            # Packed journal records (memdir.stores.packing); the journal stays append-only except inside a
            # rewrite (forgetting, redaction, compaction, dropping a tenant), which sets memdir.rewrite for its
            # transaction; TRUNCATE, which would reach every tenant, stays refused.
            "ALTER TABLE memdir_journal ADD COLUMN form text, ADD COLUMN base bigint",
            "CREATE INDEX memdir_journal_base ON memdir_journal(tenant_id, base) WHERE base IS NOT NULL",
            """CREATE OR REPLACE FUNCTION memdir_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP <> 'TRUNCATE' AND current_setting('memdir.rewrite', true) = 'on' THEN
                        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
                        RETURN NEW;
                    END IF;
                    RAISE EXCEPTION 'the journal is append-only';
                END $$""",
            """DO $$ DECLARE r record; BEGIN
                FOR r IN SELECT DISTINCT grantee FROM information_schema.table_privileges
                         WHERE table_name = 'memdir_files' AND privilege_type = 'INSERT' AND grantee <> current_user
                LOOP
                    EXECUTE format('GRANT UPDATE, DELETE ON memdir_journal TO %I', r.grantee);
                    EXECUTE format('GRANT DELETE ON memdir_rate, memdir_tenants TO %I', r.grantee);
                END LOOP;
            END $$""",
        ],
    ),
    (
        "0010_search_stems",
        [
            # memdir's own stems (memdir.search.text.indexed, the form the FTS5 index is given), per weight class,
            # indexed with 'simple': both backends stem alike (PostgreSQL's 'english' merged production with
            # product). They replace the English stems and the pairs (`indexed` holds both); the rows indexed
            # before are dropped with their seq, as in 0007.
            "ALTER TABLE memdir_search ADD COLUMN stems_a text NOT NULL DEFAULT '', "
            "ADD COLUMN stems_b text NOT NULL DEFAULT '', ADD COLUMN stems_d text NOT NULL DEFAULT ''",
            "DROP INDEX memdir_search_tsv",
            "ALTER TABLE memdir_search DROP COLUMN tsv",
            "ALTER TABLE memdir_search DROP COLUMN IF EXISTS words_a, DROP COLUMN IF EXISTS grams_a, "
            "DROP COLUMN IF EXISTS grams_b, DROP COLUMN IF EXISTS grams_d",
            """ALTER TABLE memdir_search ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('simple', stems_a), 'A')
                || setweight(to_tsvector('simple', stems_b), 'B')
                || setweight(to_tsvector('simple', left(stems_d, 200000)), 'D')
            ) STORED""",
            "CREATE INDEX memdir_search_tsv ON memdir_search USING gin (tsv)",
            *_REINDEX,
        ],
    ),
]

_ROLE = re.compile(r"[A-Za-z_][A-Za-z0-9_$-]{0,62}\Z")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise StoreError("postgresql:// locations need psycopg; install it with: pip install 'memdir[postgres]'") from None
    return psycopg


def _connect(url: str) -> Any:
    psycopg = _psycopg()
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as e:
        reason = scrub(str(e).strip().splitlines()[-1], url) if str(e).strip() else type(e).__name__
        raise StoreError(
            f"cannot connect to {redact(url)}: {reason}; is the server running? check the URL"
        ) from None


def _run(conn: Any, where: str, sql: str, args: Sequence[object]) -> builtins.list[tuple[Any, ...]]:
    psycopg = _psycopg()
    try:
        if args:
            cur = conn.execute(sql.replace("?", "%s"), tuple(args))
        else:
            cur = conn.execute(sql)
        return cur.fetchall() if cur.description is not None else []
    except psycopg.Error as e:
        raise StoreError(f"{where}: {str(e).strip().splitlines()[0]}") from None


POOL_SIZE = int(os.environ.get("MEMDIR_PG_POOL_SIZE") or 10)  # connections one process keeps to one database at most
POOL_WAIT = 10.0  # seconds a statement waits for a free pooled connection before it fails
_POOLS: dict[str, tuple[int, Any]] = {}  # url -> (pid that made it, pool); a forked worker makes its own
_POOLS_LOCK = threading.Lock()


def shared_pool(url: str, size: int | None = None) -> Any:
    """The process's pool for `url`, made on first use after checking the schema and the role once."""
    with _POOLS_LOCK:
        got = _POOLS.get(url)
        if got is not None and got[0] == os.getpid():
            return got[1]
        try:
            from psycopg_pool import ConnectionPool
        except ImportError:  # pragma: no cover - depends on the installed extras
            raise StoreError("memdir.connect() needs psycopg_pool; install it with: pip install 'memdir[postgres]'") from None
        where = redact(url)
        conn = _connect(url)  # a direct connection first: its failure is a clear one-line error
        try:
            _PostgresMigrator(conn, where).require()
            _refuse_privileged(conn, where)
        finally:
            conn.close()
        pool = ConnectionPool(url, min_size=1, max_size=max(1, size or POOL_SIZE), timeout=POOL_WAIT,
                              kwargs={"autocommit": True, "connect_timeout": 10}, name=where, open=False)
        pool.open(wait=False)
        _POOLS[url] = (os.getpid(), pool)
        return pool


def pool_stats() -> dict[str, dict[str, int]]:
    """For each pooled database (redacted URL): connections open, idle, in use and callers waiting."""
    out = {}
    with _POOLS_LOCK:
        pools = [p for pid, p in _POOLS.values() if pid == os.getpid()]
    for pool in pools:
        stats = pool.get_stats()
        size, idle = int(stats.get("pool_size", 0)), int(stats.get("pool_available", 0))
        out[str(pool.name)] = {"size": size, "idle": idle, "used": size - idle, "max": int(pool.max_size),
                               "waiting": int(stats.get("requests_waiting", 0))}
    return out


def ping(url: str) -> None:
    """One `SELECT 1` through the process's pool for `url` (made if need be); StoreError if it fails."""
    psycopg = _psycopg()
    pool = shared_pool(url)
    try:
        with pool.connection(timeout=POOL_WAIT) as conn:
            conn.execute("SELECT 1")
    except (psycopg.Error, OSError) as e:
        reason = scrub(str(e).strip().splitlines()[0], url) if str(e).strip() else type(e).__name__
        raise StoreError(f"{redact(url)}: {reason}") from None


def close_pools(url: str | None = None) -> None:
    """Close the process's pool for `url` (every pool without one); the next tenant opened makes a new one."""
    with _POOLS_LOCK:
        keys = [url] if url is not None else list(_POOLS)
        gone = [_POOLS.pop(k) for k in keys if k in _POOLS]
    for pid, pool in gone:
        if pid == os.getpid():
            pool.close()


def _refuse_privileged(conn: Any, where: str) -> None:
    row = _run(
        conn, where,
        "SELECT r.rolname, r.rolsuper, r.rolbypassrls, "
        "coalesce(bool_or(pg_has_role(t.tableowner, 'MEMBER')), false) "
        "FROM pg_roles r LEFT JOIN pg_tables t ON t.tablename = 'memdir_files' AND t.schemaname = current_schema() "
        "WHERE r.rolname = current_user GROUP BY r.rolname, r.rolsuper, r.rolbypassrls", (),
    )[0]
    name, superuser, bypass, owner = row
    why = "is a superuser" if superuser else "has BYPASSRLS" if bypass else "owns the memdir tables" if owner else ""
    if why:
        raise StoreError(
            f"{where}: role {name!r} {why}, so row-level security would not keep tenants apart; "
            "connect as a role of its own: `memdir db migrate URL --grant ROLE` lets ROLE use memdir"
        )


class _PostgresMigrator(Migrator):
    def __init__(self, conn: Any, where: str) -> None:
        super().__init__(where, MIGRATIONS)
        self.conn = conn

    def run(self, sql: str, args: Sequence[object] = ()) -> builtins.list[tuple[Any, ...]]:
        return _run(self.conn, self.where, sql, args)

    def has_table(self) -> bool:
        return bool(self.run("SELECT to_regclass('memdir_migrations') IS NOT NULL")[0][0])

    def begin(self) -> None:
        self.run("BEGIN")
        self.run(f"SELECT pg_advisory_xact_lock({_MIGRATE_LOCK})")

    def end(self, commit: bool) -> None:
        self.run("COMMIT" if commit else "ROLLBACK")


def migrate(url: str, *, check: bool = False, grant: str | None = None) -> MigrationReport:
    """Create or upgrade the schema (run as the owner); `grant` lets a role use it through memdir."""
    if grant is not None and not _ROLE.match(grant):
        raise InvalidArgument(f"--grant {grant!r} is not a role name; give a plain PostgreSQL role such as memdir_app")
    conn = _connect(url)
    try:
        report = _PostgresMigrator(conn, redact(url)).migrate(check)
        if grant is not None and not check:
            psycopg = _psycopg()
            role = psycopg.sql.Identifier(grant)
            statements = [
                "GRANT SELECT, INSERT, UPDATE, DELETE ON memdir_files, memdir_catalog, memdir_derived, memdir_state, "
                "memdir_search TO {}",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON memdir_rate TO {}",
                "GRANT SELECT, INSERT, DELETE ON memdir_tenants TO {}",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON memdir_journal TO {}",  # updates only in a rewrite (trigger)
                "GRANT SELECT ON memdir_migrations TO {}",
            ]
            try:
                for statement in statements:
                    conn.execute(psycopg.sql.SQL(statement).format(role))
            except psycopg.Error as e:
                raise StoreError(f"{redact(url)}: cannot grant to {grant!r}: {str(e).strip().splitlines()[0]}") from None
            report = MigrationReport(report.location, report.applied, report.pending, report.current, grant)
        return report
    finally:
        conn.close()


def tenants(url: str) -> list[str]:
    """Every tenant with at least one change in the database at `url`."""
    conn = _connect(url)
    try:
        where = redact(url)
        _PostgresMigrator(conn, where).require()
        return [r[0] for r in _run(conn, where, "SELECT tenant_id FROM memdir_tenants ORDER BY 1", ())]
    finally:
        conn.close()


class PostgresStore(SqlStore):
    """One tenant in a PostgreSQL database whose schema `memdir db migrate` made.

    With `pool` (from `shared_pool`), connections are borrowed per statement or
    per write transaction and the tenant is set inside each transaction only."""

    def __init__(self, url: str, tenant: str, *, pool: Any = None) -> None:
        super().__init__(tenant)
        self.where = redact(url)
        self.key = f"{self.where}#{tenant}"
        self.pool = pool
        self._tx: Any = None  # the pooled connection a write transaction holds
        if pool is not None:
            self.db: Any = None
            return
        self.db = _connect(url)
        try:
            _PostgresMigrator(self.db, self.where).require()
            _refuse_privileged(self.db, self.where)
            self._run("SELECT set_config('memdir.tenant', ?, false)", (tenant,))
        except BaseException:
            self.db.close()
            raise

    def _run(self, sql: str, args: Sequence[object] = ()) -> builtins.list[tuple[Any, ...]]:
        conn = self._tx if self._tx is not None else self.db
        if conn is not None:
            return _run(conn, self.where, sql, args)
        psycopg = _psycopg()
        conn = self._borrow()
        try:
            # Two statements in one simple query are one implicit transaction and one round trip: the tenant is
            # set for this statement alone and ends with it (the values are quoted by psycopg, never by memdir).
            cur = psycopg.ClientCursor(conn)
            cur.execute("SELECT set_config('memdir.tenant', %s, true); " + sql.replace("?", "%s"), (self.tenant, *args))
            cur.nextset()
            return cur.fetchall() if cur.description is not None else []
        except psycopg.Error as e:
            raise StoreError(f"{self.where}: {str(e).strip().splitlines()[0]}") from None
        finally:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                _rollback(conn)
            self.pool.putconn(conn)

    def _borrow(self) -> Any:
        from psycopg_pool import PoolTimeout

        try:
            return self.pool.getconn()
        except PoolTimeout:
            raise StoreError(
                f"{self.where}: all {self.pool.max_size} pooled connections stayed busy for {POOL_WAIT:.0f} s; "
                "retry, or raise MEMDIR_PG_POOL_SIZE (and the server's max_connections)"
            ) from None

    def _begin(self) -> None:
        if self.pool is not None:
            self._tx = self._borrow()
        try:
            self._run("BEGIN")
            if self.pool is not None:
                self._run("SELECT set_config('memdir.tenant', ?, true)", (self.tenant,))
            self._run("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", ("memdir:" + self.tenant,))
        except BaseException:
            try:
                self._run("ROLLBACK")
            except StoreError:
                pass
            self._give_back()
            raise

    def _give_back(self) -> None:
        conn, self._tx = self._tx, None
        if conn is not None:
            self.pool.putconn(conn)

    def take(self, rate: int) -> float:
        """A token taken in its own transaction does not wait for the server's WAL flush: a crash of the
        server may give it back, and a write need not pay a second flush for that."""
        with self._mutex, self.lock():
            if self._depth == 1:
                self._run("SET LOCAL synchronous_commit TO OFF")
            return super().take(rate)

    def _end(self, commit: bool) -> None:
        conn = self._tx if self._tx is not None else self.db
        if conn is None:  # a pooled transaction already ended (a failed COMMIT is followed by a rollback)
            return
        try:
            if not commit:
                self._run("ROLLBACK")
                return
            psycopg = _psycopg()
            try:
                status = conn.execute("COMMIT").statusmessage
            except psycopg.Error as e:
                raise StoreError(f"{self.where}: {str(e).strip().splitlines()[0]}") from None
            if status != "COMMIT":  # an error earlier in the transaction made the server roll it back
                raise StoreError(f"{self.where}: the change was rolled back after a database error; nothing was written, retry")
        finally:
            self._give_back()

    def _now(self) -> float:
        return float(self._run("SELECT extract(epoch FROM clock_timestamp())")[0][0])

    def _rewriting(self, on: bool) -> None:
        self._run("SELECT set_config('memdir.rewrite', ?, true)", ("on" if on else "off",))

    def _tables(self) -> builtins.list[str]:
        return [str(r[0]) for r in self._run(
            "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'tenant_id' "
            "AND table_schema = current_schema()")]

    def scrub(self) -> builtins.list[str]:
        """Nothing memdir's role may do: the deleted rows are gone from every query at once, and their dead row
        versions from the files when autovacuum (or the tables' owner running VACUUM) gets to them."""
        return []

    def close(self) -> None:
        """Close the own connection; a pooled store leaves the pool to the process (`close_pools`)."""
        if self.db is not None:
            self.db.close()


def _rollback(conn: Any) -> None:
    try:
        conn.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - the connection is broken; the pool checks and replaces it
        pass
