"""SaaS load test: many tenants, several server processes over one store, many clients, and the checks that hold.

    python bench/saas.py --short                      # 40 tenants, 2 servers, 8 clients, 4 s (what `make test` runs)
    python bench/saas.py                              # 10,000 tenants, 4 servers, 200 clients, 60 s (`make soak`)
    python bench/saas.py --backend s3 --tenants 500 --clients 20 --seconds 20

Each server is a `memdir serve --http` process (as several hosts would run
it) over one PostgreSQL database (durable, on loopback) or one S3 bucket
(moto). Clients carry a JWT per request naming a random tenant, so every
server sees every tenant and keeps at most MEMDIR_MAX_OPEN of them open. The
workload: reads, writes without and with compare-and-swap (If-Match), searches
and context. Every body a client writes names its tenant; afterwards:

- every acknowledged write is read back, as last acknowledged, from another server;
- no answer ever held another tenant's marker;
- no answer was a 5xx.

Prints requests per second, p50 and p99 per operation, the most PostgreSQL
connections the servers held at once, and the checks. Not a test, but
`tests/test_bench_saas.py` runs the short form and requires the checks.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))

import jwt  # noqa: E402

SECRET = b"the load test's shared secret, 32+ bytes long"
OPS = ("read", "write", "cas write", "search", "context")
WEIGHTS = (40, 20, 10, 15, 15)
MARK = re.compile(r"tenant=(t\d+)\b")


@dataclass
class Result:
    seconds: float
    samples: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    acked: dict[tuple[str, str], str] = field(default_factory=dict)  # (tenant, path) -> body last acknowledged
    leaks: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    connections: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    @property
    def ok(self) -> bool:
        return not self.leaks and not self.missing and not self.server_errors and not self.errors and bool(self.acked)


def tenant_token(tenant: str) -> str:
    claims = {"sub": f"user-{tenant}", "tenant": tenant, "aud": "memdir", "exp": int(time.time()) + 3600}
    return str(jwt.encode(claims, SECRET, algorithm="HS256"))


class Client(threading.Thread):
    """One client: a keep-alive connection to one server, random tenants, the workload's mix."""

    def __init__(self, n: int, port: int, tenants: list[str], tokens: dict[str, str], stop: float, out: Result,
                 lock: threading.Lock) -> None:
        super().__init__(daemon=True)
        self.n, self.port, self.tenants, self.tokens, self.stop, self.out, self.lock = n, port, tenants, tokens, stop, out, lock
        self.rng = random.Random(n)
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.mine: dict[str, list[str]] = defaultdict(list)  # tenant -> paths this client wrote there

    def request(self, method: str, path: str, tenant: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        sent = {"Authorization": f"Bearer {self.tokens[tenant]}", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=data, headers=sent)
                reply = self.conn.getresponse()
                text = reply.read().decode()
                return reply.status, {k.lower(): v for k, v in reply.getheaders()}, text
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def run(self) -> None:
        try:
            while time.monotonic() < self.stop:
                self.one()
        except Exception as e:  # noqa: BLE001 - reported as a failed check, not a traceback
            with self.lock:
                self.out.errors.append(f"client {self.n}: {type(e).__name__}: {e}")

    def one(self) -> None:
        tenant = self.rng.choice(self.tenants)
        op = self.rng.choices(OPS, WEIGHTS)[0]
        started = time.perf_counter()
        acked: tuple[str, str] | None = None
        if op == "read":
            paths = self.mine.get(tenant)
            path = self.rng.choice(paths) if paths else "user/profile.md"
            status, _, text = self.request("GET", f"/v1/files/{quote(path)}", tenant)
        elif op in ("write", "cas write"):
            path = f"c{self.n}/note{self.rng.randrange(5)}.md"
            body = f"tenant={tenant} client {self.n} wrote {self.rng.getrandbits(40):x}\n"
            headers = {}
            if op == "cas write" and path in self.mine.get(tenant, []):
                status, got, _ = self.request("GET", f"/v1/files/{path}", tenant)
                if status == 200:
                    headers["If-Match"] = got["etag"]
            status, _, text = self.request("PUT", f"/v1/files/{path}", tenant, {"body": body, "description": "a note"},
                                           headers)
            if status in (200, 201):
                acked = (path, body)
        elif op == "search":
            status, _, text = self.request("GET", "/v1/search?q=client+wrote&k=5", tenant)
        else:
            status, _, text = self.request("GET", "/v1/context?q=notes&budget=800", tenant)
        elapsed = (time.perf_counter() - started) * 1000
        leaked = {m for m in MARK.findall(text) if m != tenant}
        with self.lock:
            self.out.samples[op].append(elapsed)
            self.out.statuses[status] += 1
            if leaked:
                self.out.leaks.append(f"{op} for {tenant} held {sorted(leaked)}")
            if acked is not None:
                self.out.acked[(tenant, acked[0])] = acked[1]
                if acked[0] not in self.mine[tenant]:
                    self.mine[tenant].append(acked[0])


def start_servers(location: str, count: int, env: dict[str, str], work: Path) -> list[tuple[subprocess.Popen[str], int]]:
    (work / "secret").write_bytes(SECRET)
    servers = []
    for _ in range(count):
        proc = subprocess.Popen(
            [sys.executable, "-m", "memdir", "--root", location, "serve", "--http", "127.0.0.1:0",
             "--jwt-secret-file", str(work / "secret"), "--jwt-audience", "memdir"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not found:
            proc.kill()
            raise SystemExit(f"a server did not start: {line!r}")
        servers.append((proc, int(found.group(1))))
    return servers


def seed(location: str, tenants: list[str]) -> None:
    """A profile per tenant, written straight through the library (the load test measures the servers)."""
    import memdir

    with memdir.connect(location) as db:
        for t in tenants:
            with db.tenant(t) as md:
                md.write("user/profile.md", f"tenant={t} profile: prefers short answers.\n", description=f"who {t} is")


def run(location: str, *, tenants: int, processes: int, clients: int, seconds: float,
        admin_url: str | None = None, max_open: int = 1000) -> Result:
    names = [f"t{i}" for i in range(tenants)]
    seed(location, names)
    tokens = {t: tenant_token(t) for t in names}
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    env.update({"PYTHONPATH": str(REPO / "src"), "MEMDIR_WRITES_PER_MINUTE": "1000000", "MEMDIR_MAX_OPEN": str(max_open)})
    with tempfile.TemporaryDirectory() as tmp:
        servers = start_servers(location, processes, env, Path(tmp))
        try:
            out = Result(seconds)
            lock = threading.Lock()
            stop = time.monotonic() + seconds
            watching = threading.Event()
            watcher = threading.Thread(target=_count_connections, args=(admin_url, location, out, watching), daemon=True)
            if admin_url:
                watcher.start()
            workers = [Client(i, servers[i % processes][1], names, tokens, stop, out, lock) for i in range(clients)]
            started = time.monotonic()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            out.seconds = time.monotonic() - started
            watching.set()
            _check(out, servers, tokens)
            return out
        finally:
            for proc, _ in servers:
                proc.terminate()
            for proc, _ in servers:
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()


def _count_connections(admin_url: str | None, location: str, out: Result, done: threading.Event) -> None:
    import psycopg

    database = location.rsplit("/", 1)[1]
    with psycopg.connect(admin_url or "", autocommit=True) as conn:
        while not done.wait(0.25):
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND usename = 'memdir_app'",
                               (database,)).fetchone()
            out.connections = max(out.connections, int(row[0]) if row else 0)


def _check(out: Result, servers: list[tuple[subprocess.Popen[str], int]], tokens: dict[str, str]) -> None:
    """Every acknowledged write, read back from a server other than the one that is first in line."""
    port = servers[-1][1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for (tenant, path), body in sorted(out.acked.items()):
        conn.request("GET", f"/v1/files/{path}", headers={"Authorization": f"Bearer {tokens[tenant]}",
                                                          "Accept": "application/json"})
        reply = conn.getresponse()
        got = json.loads(reply.read() or b"{}")
        if reply.status != 200 or got.get("body") != body:
            out.missing.append(f"{tenant}/{path}: {reply.status} {str(got.get('body'))[:60]!r} != {body[:60]!r}")


def report(out: Result, title: str) -> str:
    total = sum(len(v) for v in out.samples.values())
    lines = [title, "", f"{total:,} requests in {out.seconds:.1f} s: {total / out.seconds:,.0f} req/s; "
             f"most PostgreSQL connections held at once: {out.connections or 'n/a'}", "",
             "| operation | requests | req/s | p50 ms | p99 ms |", "|---|---|---|---|---|"]
    for op in OPS:
        samples = sorted(out.samples.get(op, []))
        if samples:
            p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
            lines.append(f"| {op} | {len(samples):,} | {len(samples) / out.seconds:,.0f} | "
                         f"{statistics.median(samples):.1f} | {p99:.1f} |")
    statuses = ", ".join(f"{k}: {v:,}" for k, v in sorted(out.statuses.items()))
    lines += ["", f"answers by status: {statuses}",
              f"check: every acknowledged write found afterwards ({len(out.acked):,} files): "
              f"{'pass' if not out.missing else 'FAIL ' + '; '.join(out.missing[:3])}",
              f"check: no answer held another tenant's data: {'pass' if not out.leaks else 'FAIL ' + '; '.join(out.leaks[:3])}",
              f"check: no 5xx: {'pass' if not out.server_errors else f'FAIL ({out.server_errors})'}",
              f"check: every client ran to the end: {'pass' if not out.errors else 'FAIL ' + '; '.join(out.errors[:3])}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("postgres", "s3"), default="postgres")
    parser.add_argument("--short", action="store_true", help="40 tenants, 2 servers, 8 clients, 4 s")
    parser.add_argument("--tenants", type=int, default=10_000)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    if args.short:
        args.tenants, args.processes, args.clients, args.seconds = 40, 2, 8, 4.0
    from tests import services

    with services.for_bench([args.backend], "memdir-saas") as (pg, _):
        if pg is not None:
            admin, location = pg.fresh_database("saas")
        else:
            admin, location = None, "s3://memdir-saas/load"
        print(f"  seeding {args.tenants:,} tenants, then {args.clients} clients for {args.seconds:.0f} s",
              file=sys.stderr, flush=True)
        out = run(location, tenants=args.tenants, processes=args.processes, clients=args.clients,
                  seconds=args.seconds, admin_url=admin)
    import memdir

    print(report(out, f"memdir {memdir.__version__} SaaS load test, {args.backend}: {args.tenants:,} tenants, "
                      f"{args.processes} server processes, {args.clients} clients, {args.seconds:.0f} s; "
                      f"Python {sys.version.split()[0]}, {os.cpu_count()} cores"))
    sys.exit(0 if out.ok else 1)


if __name__ == "__main__":
    main()
