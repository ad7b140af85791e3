"""The short form of bench/saas.py: two server processes over one PostgreSQL, JWT clients, and its checks hold."""

import benchscript
from services import Postgres

bench = benchscript.load("saas")


def test_the_short_load_test_finds_every_write_no_leak_and_no_5xx(postgres: Postgres) -> None:
    admin, url = postgres.fresh_database("saas_short")
    out = bench.run(url, tenants=30, processes=2, clients=6, seconds=3.0, admin_url=admin, max_open=10)
    text = bench.report(out, "short")
    assert out.ok, text
    assert out.acked and sum(len(v) for v in out.samples.values()) > 30
    assert set(out.samples) == set(bench.OPS)  # every operation of the mix ran
    assert 0 < out.connections <= 2 * 10  # two servers, one pool of at most 10 each, whatever the tenants
    assert text.count(": pass") == 4


def test_the_checks_fail_on_a_leak_a_lost_write_or_a_5xx() -> None:
    out = bench.Result(1.0, acked={("t1", "a.md"): "x"})
    assert out.ok
    out.leaks.append("read for t1 held ['t2']")
    assert not out.ok and "FAIL read for t1 held" in bench.report(out, "")
    out = bench.Result(1.0, acked={("t1", "a.md"): "x"})
    out.statuses[502] += 1
    assert not out.ok and "no 5xx: FAIL (1)" in bench.report(out, "")
