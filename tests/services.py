"""Real servers for the tests and the benchmark: PostgreSQL and an S3-compatible server, on loopback.

`start_postgres()` runs initdb into a temporary folder and starts the
server on a free 127.0.0.1 port (as the `postgres` user when we are root:
initdb refuses root). It makes two roles: `memdir_admin` (superuser, runs
migrations) and `memdir_app` (what memdir connects as: no superuser, no
BYPASSRLS, owns nothing). `start_s3()` runs moto's server (tests/s3_server.py).
Both return None with a reason when the software is missing.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass
class Postgres:
    base: Path
    bindir: Path
    port: int
    user: str | None

    def url(self, role: str, database: str = "postgres") -> str:
        return f"postgresql://{role}@127.0.0.1:{self.port}/{database}"

    @property
    def admin_url(self) -> str:
        return self.url("memdir_admin")

    @property
    def app_url(self) -> str:
        return self.url("memdir_app")

    def fresh_database(self, name: str) -> tuple[str, str]:
        """A new database with memdir's schema: (admin URL, app URL)."""
        import psycopg

        from memdir.stores.locations import migrate

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        migrate(self.url("memdir_admin", name), grant="memdir_app")
        return self.url("memdir_admin", name), self.url("memdir_app", name)

    def stop(self) -> None:
        _as(self.user, [str(self.bindir / "pg_ctl"), "-D", str(self.base / "data"), "-m", "immediate", "stop"],
            check=False)
        shutil.rmtree(self.base, ignore_errors=True)


def _as(user: str | None, cmd: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    if user is not None:
        cmd = ["runuser", "-u", user, "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def start_postgres(*, durable: bool = False) -> Postgres | str:
    """A running server with memdir's schema in database `postgres`, or why there is none."""
    bindir = _pg_bindir()
    if bindir is None:
        return "PostgreSQL is not installed (no initdb); `make test` installs it (apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed; pip install -e '.[dev]'"
    user = None
    if os.geteuid() == 0:
        user = "postgres"
        try:
            pwd.getpwnam(user)
        except KeyError:
            user = "nobody"
    base = Path(tempfile.mkdtemp(prefix="memdir-pg-"))
    if user is not None:
        shutil.chown(base, user)
    port = free_port()
    try:
        _as(user, [str(bindir / "initdb"), "-D", str(base / "data"), "-U", "memdir_admin", "--auth=trust",
                   "-E", "UTF8", "--no-sync"])
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c max_connections=200"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        _as(user, [str(bindir / "pg_ctl"), "-D", str(base / "data"), "-o", options, "-l", str(base / "log"),
                   "-w", "-t", "60", "start"])
    except subprocess.CalledProcessError as e:
        log = (base / "log").read_text() if (base / "log").exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        return f"could not start PostgreSQL: {e.stderr or e.stdout} {log[-500:]}"
    pg = Postgres(base, bindir, port, user)
    import psycopg

    with psycopg.connect(pg.admin_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE memdir_app LOGIN")
    from memdir.stores.locations import migrate

    migrate(pg.admin_url, grant="memdir_app")
    return pg


@dataclass
class S3:
    endpoint: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def make_bucket(self, name: str) -> None:
        import boto3

        boto3.client("s3", endpoint_url=self.endpoint).create_bucket(Bucket=name)


AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def start_s3() -> S3 | str:
    """moto's S3 server on a free loopback port, or why there is none. Set AWS_* yourself (AWS_ENV)."""
    try:
        import boto3  # noqa: F401
        import moto  # noqa: F401
    except ImportError:
        return "boto3 or moto is not installed; pip install -e '.[dev]'"
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(HERE / "s3_server.py"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return S3(endpoint, proc)
        except OSError:
            if proc.poll() is not None:
                return f"the S3 server exited with code {proc.returncode}"
            time.sleep(0.1)
    proc.kill()
    return "the S3 server did not answer within 60 s"


def need(module: str) -> Any:
    """Import an optional package a test module uses: skip without it, but under
    MEMDIR_TEST_SERVICES=require (what `make test` sets) its absence fails the run."""
    import importlib

    import pytest

    if os.environ.get("MEMDIR_TEST_SERVICES") == "require":
        try:
            return importlib.import_module(module)
        except ImportError as e:
            pytest.fail(f"MEMDIR_TEST_SERVICES=require but {module} cannot be imported ({e}); `make install` installs it",
                        pytrace=False)
    return pytest.importorskip(module)


@contextmanager
def for_bench(names: list[str], bucket: str) -> Iterator[tuple[Postgres | None, S3 | None]]:
    """The servers a benchmark over `names` (backends) needs, started and stopped around it;
    the process exits with the reason when one cannot start. S3 gets `bucket` and the AWS environment."""
    pg = s3 = None
    try:
        if "postgres" in names:
            got = start_postgres(durable=True)
            if isinstance(got, str):
                sys.exit(f"postgres: {got}")
            pg = got
        if "s3" in names:
            got_s3 = start_s3()
            if isinstance(got_s3, str):
                sys.exit(f"s3: {got_s3}")
            s3 = got_s3
            os.environ.update(AWS_ENV)
            os.environ["AWS_ENDPOINT_URL"] = s3.endpoint
            s3.make_bucket(bucket)
        yield pg, s3
    finally:
        if pg is not None:
            pg.stop()
        if s3 is not None:
            s3.stop()

