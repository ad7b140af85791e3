from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import services

import memdir


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def md(root: Path) -> Iterator[memdir.Memdir]:
    with memdir.open(root) as m:
        yield m


@pytest.fixture(scope="session", autouse=True)
def _runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Resident processes (faces/resident.py) live in a folder of this run and end with it. Tests run commands in
    their own process (MEMDIR_RESIDENT=off); one that builds its environment without MEMDIR_* variables gets the
    resident, as a user does."""
    runtime = tmp_path_factory.mktemp("run")
    runtime.chmod(0o700)
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    yield
    for pid_file in runtime.glob("memdir/*.pid"):
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass
    if before is None:
        os.environ.pop("XDG_RUNTIME_DIR", None)
    else:
        os.environ["XDG_RUNTIME_DIR"] = before


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for key in list(os.environ):
        if key.startswith("MEMDIR_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MEMDIR_RESIDENT", "off")  # a command a test starts runs in its own process, and leaves none
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))  # S3's local index copies
    # and what servers started without MEMDIR_* variables keep (kept MCP answers): never the real home
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


# ---------------------------------------------------------------- backends
# Real servers: PostgreSQL (initdb into a temporary folder) and moto's S3 server,
# both on loopback, started once per session (tests/services.py). Without them a
# test skips with the reason; `make test` sets MEMDIR_TEST_SERVICES=require, so
# there a missing server fails the run instead.

REQUIRE_SERVICES = os.environ.get("MEMDIR_TEST_SERVICES") == "require"
BACKENDS = ["fs", "sqlite", "postgres", "s3"]
BUCKET = "memdir-test"
_names = itertools.count(1)


def _unavailable(reason: str) -> None:
    if REQUIRE_SERVICES:
        pytest.fail(f"MEMDIR_TEST_SERVICES=require but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres() -> Iterator[services.Postgres]:
    got = services.start_postgres()
    if isinstance(got, str):
        _unavailable(got)
        raise AssertionError  # unreachable: _unavailable raises
    yield got
    got.stop()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[services.S3]:
    got = services.start_s3()
    if isinstance(got, str):
        _unavailable(got)
        raise AssertionError
    saved = {k: os.environ.get(k) for k in [*services.AWS_ENV, "AWS_ENDPOINT_URL"]}
    os.environ.update(services.AWS_ENV)
    os.environ["AWS_ENDPOINT_URL"] = got.endpoint
    got.make_bucket(BUCKET)
    yield got
    got.stop()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@dataclass
class Backend:
    """One memory location on one backend, private to a test."""

    name: str
    location: str
    ns: str  # unique per test: PostgreSQL tenants share one database, so they are named after it

    def tenant(self, tenant: str | None = None) -> str | None:
        if self.name == "postgres":
            return self.ns if tenant is None else f"{self.ns}-{tenant}"
        return tenant

    def open(self, tenant: str | None = None, **options: Any) -> memdir.Memdir:
        return memdir.open(self.location, tenant=self.tenant(tenant), **options)


def make_backend(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    ns = f"t{os.getpid()}x{next(_names)}"
    if name == "fs":
        return Backend(name, str(tmp_path / "memory"), ns)
    if name == "sqlite":
        return Backend(name, f"sqlite://{tmp_path / 'memory.db'}", ns)
    if name == "postgres":
        pg: services.Postgres = request.getfixturevalue("postgres")
        return Backend(name, pg.app_url, ns)
    request.getfixturevalue("s3_server")
    return Backend(name, f"s3://{BUCKET}/{ns}", ns)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend(request.param, request, tmp_path)


@pytest.fixture
def memory(backend: Backend) -> Iterator[memdir.Memdir]:
    with backend.open() as m:
        yield m
