"""The command line on other backends: MEMDIR_URL, --tenant, `memdir db migrate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from services import Postgres

from memdir.faces.cli import main


def run(*args: str, env: dict[str, str] | None = None, code: int = 0) -> Result:
    result = CliRunner().invoke(main, list(args), env=env)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


def test_memdir_url_and_tenant_from_the_environment(tmp_path: Path) -> None:
    env = {"MEMDIR_URL": f"sqlite://{tmp_path / 'm.db'}", "MEMDIR_TENANT": "acme"}
    assert run("write", "a.md", "--body", "for acme", env=env).stdout.startswith("created a.md (5 lines, version 0000000000000001)")
    assert run("read", "a.md", env=env).stdout.endswith("for acme\n")
    assert run("--tenant", "globex", "ls", env=env).stderr == "no memories under the root\n"
    both = {**env, "MEMDIR_ROOT": str(tmp_path / "folder")}
    assert run("read", "a.md", env=both).stdout.endswith("for acme\n")  # MEMDIR_URL wins
    folder = {"MEMDIR_ROOT": str(tmp_path / "folder")}
    run("write", "b.md", "--body", "in a folder", env=folder)
    assert (tmp_path / "folder" / "b.md").exists()


def test_db_migrate_check_then_apply(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'm.db'}"
    assert run("db", "migrate", url, "--check", code=1).stdout == "pending: 0001_tables, 0002_search, 0003_rate, 0004_rewrite\n"
    assert not (tmp_path / "m.db").exists()
    assert run("db", "migrate", url).stdout == f"{url}: applied 0001_tables, 0002_search, 0003_rate, 0004_rewrite\n"
    assert run("db", "migrate", url).stdout == f"{url}: already up to date\n"
    assert run("--root", url, "db", "migrate", "--check").stdout == f"up to date: {url}\n"
    report = json.loads(run("db", "migrate", url, "--json").stdout)
    assert report == {"location": url, "applied": [], "pending": [], "current": ["0001_tables", "0002_search", "0003_rate",
                                                                                 "0004_rewrite"],
                      "granted": None}


@pytest.mark.parametrize("location", ["memory", "s3://bucket/prefix"])
def test_db_migrate_explains_what_has_no_schema(location: str) -> None:
    result = run("db", "migrate", location, code=1)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "has no schema to migrate; migrations are for sqlite:// and postgresql://" in result.stderr


def test_db_migrate_on_postgresql(postgres: Postgres) -> None:
    assert run("db", "migrate", postgres.admin_url, "--check").stdout == f"up to date: {postgres.admin_url}\n"
    granted = run("db", "migrate", postgres.admin_url, "--grant", "memdir_app").stdout
    assert granted == f"{postgres.admin_url}: already up to date; granted to memdir_app\n"
    env = {"MEMDIR_URL": postgres.app_url, "MEMDIR_TENANT": "cli-pg"}
    run("write", "x.md", "--body", "on postgres", env=env)
    assert run("grep", "postgres", env=env).stdout == "x.md:5:on postgres\n"


def test_bad_locations_are_one_line(tmp_path: Path) -> None:
    result = run("--root", "ftp://x/y", "ls", code=1)
    assert result.stderr.startswith("error: location 'ftp://x/y': unknown scheme 'ftp'")
    result = run("--root", f"sqlite://{tmp_path / 'none.db'}", "read", "a.md", code=1)
    assert "no memdir database at" in result.stderr and result.stderr.count("\n") == 1
