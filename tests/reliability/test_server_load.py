"""Suite 6, the server under load: `memdir serve --http` on loopback, 50 clients at once, for a fixed time.

Clients mix reads (files, the index, search, listings, history), writes of
their own files (each client knows the last content it was acknowledged for),
MCP tool calls over /mcp, and malformed requests (bad JSON, lone surrogates,
100 KB of '[', unknown routes). Slow-header clients connect and dribble
header lines. Afterwards: no 5xx at all, every acknowledged write is there
with the acknowledged content, every slow client was cut off by the header
deadline, and the p99 latency is reported. 5 s in `make test`, 60 s in soak.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from serving import env_without_memdir
from tally import note, scale, tally, tried  # noqa: F401 - tally is an autouse fixture

CLIENTS = 50
SLOW_CLIENTS = 8
HEADER_TIMEOUT = 1.5
SECONDS = scale(5, 60)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    root = tmp_path / "memory"
    env = {**env_without_memdir(), "MEMDIR_WRITES_PER_MINUTE": "0", "MEMDIR_HEADER_TIMEOUT": str(HEADER_TIMEOUT)}
    proc = subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(root), "serve", "--http", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert found, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield "127.0.0.1", int(found.group(1)), root
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)
    acknowledged: dict[str, str] = field(default_factory=dict)  # path -> the body last acknowledged
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, status: int, seconds: float, what: str) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status >= 500:
                self.server_errors.append(f"{status} {what}")


MALFORMED = [
    ("PUT", "/v1/files/bad.md", b'{"body": "x\\ud800"}', "application/json"),
    ("PUT", "/v1/files/bad.md", b"[" * 100_000, "application/json"),
    ("PUT", "/v1/files/bad.md", b"\xff\xfe", "text/markdown"),
    ("PUT", "/v1/files/../bad.md", b'{"body": "x"}', "application/json"),
    ("GET", "/v1/files?limit=-1", None, None),
    ("POST", "/v1/undo/never.md", b"x=1", "application/x-www-form-urlencoded"),
    ("GET", "/v1/nope", None, None),
    ("POST", "/mcp", b"[" * 50_000, "application/json"),
]


def client(number: int, host: str, port: int, until: float, stats: Stats) -> None:
    rng = random.Random(number)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    written = 0

    def send(method: str, path: str, body: bytes | None = None, kind: str | None = None,
             extra: dict[str, str] | None = None) -> tuple[int, bytes]:
        nonlocal conn
        headers = {"Content-Type": kind} if kind else {}
        headers.update(extra or {})
        start = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            reply = conn.getresponse()
            data = reply.read()
            status = reply.status
        except (OSError, http.client.HTTPException) as e:  # a dropped connection: counted, then reconnect
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=30)
            stats.record(599, time.perf_counter() - start, f"{method} {path}: {type(e).__name__}")
            return 599, b""
        stats.record(status, time.perf_counter() - start, f"{method} {path}: {data[:200]!r}")
        if reply.getheader("connection", "").lower() == "close":
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=30)
        return status, data

    while time.monotonic() < until:
        roll = rng.random()
        if roll < 0.3:
            written += 1
            path = f"load/c{number:02d}/n{written % 7}.md"
            body = f"client {number} write {written}\n"
            status, data = send("PUT", f"/v1/files/{path}", json.dumps({"body": body}).encode(), "application/json")
            if status in (200, 201):
                with stats.lock:
                    stats.acknowledged[path] = body
        elif roll < 0.85:
            other = rng.randrange(CLIENTS)
            target = rng.choice([f"/v1/files/load/c{other:02d}/n{rng.randrange(7)}.md", "/v1/index", "/v1/files?folder=load/",
                                 "/v1/search?q=client+write", "/v1/history?limit=5", f"/v1/files?folder=load/c{other:02d}/"])
            send("GET", target)
        else:
            method, path, body, kind = rng.choice(MALFORMED)
            status, _ = send(method, path, body, kind)
            assert status < 500 or status == 599
        tried("requests")
    conn.close()


def mcp_client(number: int, host: str, port: int, until: float, stats: Stats) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def rpc(payload: dict[str, object], extra: dict[str, str]) -> tuple[int, dict[str, object], dict[str, str]]:
        start = time.perf_counter()
        conn.request("POST", "/mcp", body=json.dumps(payload).encode(), headers={**base, **extra})
        reply = conn.getresponse()
        data = reply.read().decode()
        stats.record(reply.status, time.perf_counter() - start, f"mcp {payload.get('method')}: {data[:200]}")
        message = next((json.loads(line[5:]) for line in data.splitlines() if line.startswith("data:")), None)
        if message is None and data.strip().startswith("{"):
            message = json.loads(data)
        return reply.status, message or {}, {k.lower(): v for k, v in reply.getheaders()}

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": f"load{number}", "version": "1"}}}
    _, _, headers = rpc(init, {})
    session = {"mcp-session-id": headers.get("mcp-session-id", ""), "mcp-protocol-version": "2025-06-18"}
    rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    n = 1
    while time.monotonic() < until:
        n += 1
        name, args = (("write_memory_file", {"path": f"mcp/m{number}.md", "content": f"mcp {number} write {n}\n"})
                      if n % 3 == 0 else ("read_memory_index", {}))
        status, message, _ = rpc({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                  "params": {"name": name, "arguments": args}}, session)
        result = message.get("result") if isinstance(message, dict) else None
        if name == "write_memory_file" and status == 200 and isinstance(result, dict) and not result.get("isError"):
            with stats.lock:
                stats.acknowledged[f"mcp/m{number}.md"] = args["content"]  # type: ignore[index]
        tried("mcp calls")
    conn.close()


def slow_client(host: str, port: int, until: float, cut: list[float]) -> None:
    sock = socket.create_connection((host, port))
    sock.settimeout(1)
    start = time.monotonic()
    sock.sendall(b"GET /v1/index HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    try:
        while time.monotonic() < until + HEADER_TIMEOUT + 2:
            sock.sendall(b"X-Slow: 1\r\n")
            time.sleep(0.3)
    except OSError:
        cut.append(time.monotonic() - start)
    finally:
        sock.close()


def test_fifty_clients_get_no_5xx_and_lose_no_write(served: tuple[str, int, Path]) -> None:
    host, port, root = served
    stats, cut = Stats(), []
    until = time.monotonic() + SECONDS
    threads = [threading.Thread(target=client, args=(i, host, port, until, stats)) for i in range(CLIENTS - 5)]
    threads += [threading.Thread(target=mcp_client, args=(i, host, port, until, stats)) for i in range(5)]
    threads += [threading.Thread(target=slow_client, args=(host, port, until, cut)) for _ in range(SLOW_CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SECONDS + 60)
    assert not any(t.is_alive() for t in threads)

    assert stats.server_errors == [], stats.server_errors[:5]
    assert len(cut) == SLOW_CLIENTS and max(cut) < HEADER_TIMEOUT + 1.5, cut
    lost = []
    conn = http.client.HTTPConnection(host, port, timeout=30)
    for path, body in sorted(stats.acknowledged.items()):
        conn.request("GET", f"/v1/files/{path}", headers={"Accept": "application/json"})
        reply = conn.getresponse()
        got = json.loads(reply.read())
        if reply.status != 200 or got.get("body") != body:
            lost.append((path, reply.status, got.get("body"), body))
    conn.close()
    assert lost == [], lost[:5]
    ordered = sorted(stats.latencies)
    p50, p99 = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.99)]
    note(f"load: {len(ordered):,} requests in {SECONDS} s from {CLIENTS} clients (+{SLOW_CLIENTS} slow-header), "
         f"statuses {dict(sorted(stats.statuses.items()))}, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
         f"{len(stats.acknowledged)} files written and all found, slow clients cut after {max(cut):.1f} s")
    assert os.path.isdir(root)
