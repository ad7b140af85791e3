"""The server as an ASGI app factory, for worker processes: `memdir.faces.asgi:create_app`.

`memdir serve --http PORT --workers N` runs N uvicorn worker processes over
one listening socket, each of which calls `create_app()` with the settings
the command put in `MEMDIR_SERVE_CONFIG` (`faces/settings.py`); gunicorn's
uvicorn workers load it the same way
(`gunicorn -k uvicorn.workers.UvicornWorker 'memdir.faces.asgi:create_app()'`).
Every worker opens its own memories over the shared store, so what must hold
across processes is the store's: compare-and-swap, the rate bucket, the
roll-up locks and the journal; the page's sessions and the wrong-token counts
live in a private folder `serve` makes for its workers (`Settings.shared`).

`Operations` wraps the app: `GET /healthz` (the process answers), `GET
/readyz` (the store answers: 503 when it does not, the reason in the server's
log), both without a token so a load balancer can ask, and saying nothing
else (no path, database, pid or count) unless the server needs no token for
anything; and the Prometheus metrics at
`GET /metrics`, behind the token like every other route: requests and
latencies by route and status, writes, refusals by reason, captures and
roll-ups by outcome and when each last succeeded (`remember.counts`; no tenant
label, so their number is bounded), the open memories and the PostgreSQL pool.
Under `--workers N` any worker's answer is the whole server's: counters summed
over every worker that ran, gauges summed over the live ones (prometheus_client's
multiprocess mode, in a private folder `serve` makes and removes).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import MemdirError
from ..remember import counts
from ..stores.locations import pool_stats
from . import http, mcp
from .auth import Memories, Proxies
from .settings import ENV, Settings

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's multiprocess mode: its samples' folder
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_ROUTES = ("/v1/files", "/v1/index", "/v1/search", "/v1/context", "/v1/history", "/v1/undo", "/v1/sessions", "/mcp", "/ui",
           "/openapi.json", "/metrics", "/healthz", "/readyz")
_WRITES = {"PUT", "DELETE", "POST"}
_LIVE_GAUGES = re.compile(r"gauge_live\w+_(\d+)\.db")  # a worker's gauges summed while it lives, by its pid
_METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"}  # others are labelled "other"
log = logging.getLogger(__name__)
HeaderDeadline = http._protocol(http.HEADER_TIMEOUT)  # uvicorn's protocol by import string, for worker processes


def route_of(path: str) -> str:
    """A route label of few values (never the path itself, which holds file names)."""
    if path == "/":
        return "/"
    for route in _ROUTES:
        if path == route or path.startswith(route + "/"):
            return route
    return "other"


class Metrics:
    """One app's metrics. In one process, a registry of its own (two apps in one process never share one);
    under `serve --workers N` (`PROMETHEUS_MULTIPROC_DIR`, a private folder `serve` makes), every worker
    writes its samples to that folder and a scrape of any worker reads all of them: the whole server."""

    def __init__(self, memories: Memories) -> None:
        self.memories = memories
        self.registry = CollectorRegistry()
        self.shared = os.environ.get(MULTIPROC_ENV) or None  # the workers' folder, or None: this process alone
        self.requests = Counter("memdir_requests", "HTTP requests answered", ["route", "method", "status"],
                                registry=self.registry)
        self.latency = Histogram("memdir_request_seconds", "Time to answer an HTTP request", ["route", "method"],
                                 registry=self.registry,
                                 buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))
        self.writes = Counter("memdir_writes", "Changes the HTTP API made (2xx answers to PUT, DELETE, POST)", ["route"],
                              registry=self.registry)
        self.refusals = Counter("memdir_refusals", "Requests refused, by the error type answered", ["reason"],
                                registry=self.registry)
        self.captures = Counter("memdir_captures", "Conversations captured, by outcome (captured, pending: kept raw "
                                "after a summariser error, skipped: nothing to keep, failed: the capture raised)",
                                ["status"], registry=self.registry)
        self.rollup_steps = Counter("memdir_rollup_steps", "Roll-up steps by kind and outcome (raced: done by another "
                                    "worker)", ["kind", "status"], registry=self.registry)
        self.rollups = Counter("memdir_rollups", "Roll-up runs, ok or failed (raised)", ["outcome"], registry=self.registry)
        self.last = {what: Gauge(f"memdir_last_{what}_timestamp_seconds", f"When the last {what} {done} (0: none yet)",
                                 registry=self.registry, multiprocess_mode="max")
                     for what, done in (("capture", "was captured"), ("rollup", "ran without a failed step"))}
        self.held = Gauge("memdir_open_memories", "Memories the server holds open", registry=self.registry,
                          multiprocess_mode="livesum")
        self.most = Gauge("memdir_open_memories_max", "The most memories it keeps open", registry=self.registry,
                          multiprocess_mode="livesum")
        self.evicted = Gauge("memdir_memories_evicted", "Memories closed to stay within the most",
                             registry=self.registry, multiprocess_mode="livesum")
        self.pool = Gauge("memdir_pool_connections", "PostgreSQL pool connections by state", ["database", "state"],
                          registry=self.registry, multiprocess_mode="livesum")
        self._counted = counts.snapshot()  # what capture and roll-up had counted when this app began
        self.refresh()

    def observe(self, method: str, path: str, status: int, seconds: float, reason: str | None) -> None:
        route = route_of(path)
        method = method if method in _METHODS else "other"  # a client picks the method: its label takes few values
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route, method).observe(seconds)
        if 200 <= status < 300 and method in _WRITES and path.startswith("/v1/"):
            self.writes.labels(route).inc()
        if status >= 400:
            self.refusals.labels(reason or f"http_{status}").inc()
        self.refresh()

    def refresh(self) -> None:
        """Bring the gauges and the capture counts up to this process's state (after each request: a worker
        holds what it served, and the capture a request made is counted by the worker that made it)."""
        stats = self.memories.stats()
        self.held.set(stats["open"])
        self.most.set(stats["max_open"])
        self.evicted.set(stats["evicted"])
        for where, numbers in pool_stats().items():
            for state in ("used", "idle", "max", "waiting"):
                self.pool.labels(where, state).set(numbers[state])
        now, was = counts.snapshot(), self._counted
        if now == was:
            return
        self._counted = now
        for status, n in now.captures.items():
            if n > was.captures.get(status, 0):
                self.captures.labels(status).inc(n - was.captures.get(status, 0))
        for (kind, status), n in now.rollups.items():
            if n > was.rollups.get((kind, status), 0):
                self.rollup_steps.labels(kind, status).inc(n - was.rollups.get((kind, status), 0))
        for outcome, n in now.rollup_runs.items():
            if n > was.rollup_runs.get(outcome, 0):
                self.rollups.labels(outcome).inc(n - was.rollup_runs.get(outcome, 0))
        for what, when in (("capture", now.last_capture), ("rollup", now.last_rollup)):
            if when:
                self.last[what].set(when)

    def text(self) -> bytes:
        self.refresh()
        if self.shared is None:
            return bytes(generate_latest(self.registry))
        bury_the_dead(self.shared)
        every = CollectorRegistry()
        MultiProcessCollector(every, path=self.shared)  # type: ignore[no-untyped-call]
        return bytes(generate_latest(every))

    def close(self) -> None:
        """A worker that stops takes its gauges out of the server's sum (a killed one's: at the next scrape)."""
        if self.shared is not None:
            mark_process_dead(os.getpid(), self.shared)  # type: ignore[no-untyped-call]


def bury_the_dead(folder: str) -> None:
    """Take the gauges of workers that are gone out of the live sum: uvicorn kills a worker that misses its
    health check and starts another, and a killed worker never runs its shutdown (`Metrics.close`)."""
    for name in os.listdir(folder):
        found = _LIVE_GAUGES.fullmatch(name)
        if found and not alive(int(found[1])):
            mark_process_dead(int(found[1]), folder)  # type: ignore[no-untyped-call]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or another user's: not a worker of this server
        return False
    return True


class Operations:
    """ASGI middleware: answers /healthz and /readyz, and times and counts every other request for /metrics."""

    def __init__(self, app: ASGIApp, memories: Memories, metrics: Metrics, *, open_server: bool = False) -> None:
        self.app, self.memories, self.metrics = app, memories, metrics
        self.open_server = open_server  # no token needed for anything: the probes may say what they know

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            async def stopping(message: Message) -> None:
                if message["type"] == "lifespan.shutdown.complete":
                    self.metrics.close()
                await send(message)

            await self.app(scope, receive, stopping)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method, start = scope["path"], scope.get("method", "GET"), time.perf_counter()
        seen: dict[str, Any] = {"status": 500, "reason": None}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = int(message["status"])
                for key, value in message.get("headers", []):
                    if key.lower() == b"x-memdir-error":
                        seen["reason"] = value.decode("latin-1")
            await send(message)

        try:
            if path in ("/healthz", "/readyz") and method in ("GET", "HEAD"):
                response = await self._probe(path)
                await response(scope, receive, sending)
            else:
                await self.app(scope, receive, sending)
        finally:
            self.metrics.observe(method, path, seen["status"], time.perf_counter() - start, seen["reason"])

    async def _probe(self, path: str) -> Response:
        """The probe's answer: its status alone, as anyone may ask (the store's location, its database's host,
        port, role and name stay in the log), with the pid and the open memories where no token guards anything."""
        detail: dict[str, Any] = {"pid": os.getpid()} if self.open_server else {}
        if path == "/healthz":
            return JSONResponse({"status": "ok", **detail})
        from starlette.concurrency import run_in_threadpool

        try:
            await run_in_threadpool(self.memories.ping)
        except MemdirError as e:
            log.warning("memdir: /readyz: the store does not answer: %s", e.message)
            said = f": {e.message}" if self.open_server else ""
            return http.error(503, "StoreUnavailable", f"the store does not answer{said}; see the server's log")
        if self.open_server:
            detail["memories"] = self.memories.stats()
        return JSONResponse({"status": "ready", **detail})


def metrics_route(metrics: Metrics) -> Route:
    async def serve_metrics(request: Request) -> Response:
        return Response(metrics.text(), media_type=CONTENT_TYPE)

    return Route("/metrics", serve_metrics, methods=["GET"])


def build(settings: Settings, memories: Memories | None = None) -> tuple[ASGIApp, Memories]:
    """The whole server for `settings`: the API, MCP and the page behind the guard, inside `Operations`."""
    principals = settings.principals()
    memories = memories or Memories(settings.root, transport="http")
    for principal in principals.all:  # opened now, so a bad tenant or scope fails at start (in every worker)
        memories.of(principal)
    metrics = Metrics(memories)
    app = http.build(principals, memories, host=settings.host, mcp=mcp.server(principals, memories),
                     proxies=Proxies(settings.trusted_proxies), extra=[metrics_route(metrics)], shared=settings.shared)
    return Operations(app, memories, metrics, open_server=not principals.required), memories


def create_app() -> ASGIApp:
    """What a worker process loads: the server `memdir serve` (or the environment) describes."""
    app, _ = build(Settings.from_env())
    return app


def run_workers(settings: Settings, sock: Any, workers: int, banner: Any) -> None:
    """Serve `settings` from `workers` uvicorn processes sharing `sock`, until interrupted."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    shared = tempfile.mkdtemp(prefix="memdir-serve-")  # private (0700): the page's sessions and wrong tokens, shared
    os.environ[ENV] = replace(settings, shared=shared).to_env()  # what each worker's create_app() reads
    samples = tempfile.mkdtemp(prefix="memdir-metrics-")  # private (0700): the workers' metrics, summed by a scrape
    os.environ[MULTIPROC_ENV] = samples  # read by prometheus_client when a worker imports it
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config("memdir.faces.asgi:create_app", factory=True, workers=workers,
                            http="memdir.faces.asgi:HeaderDeadline", log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=3, proxy_headers=False)
    print(banner(f"http://{f'[{host}]' if ':' in host else host}:{port}") + f"  [{workers} worker processes]", flush=True)
    try:
        Multiprocess(config, sockets=[sock]).run()
    finally:
        shutil.rmtree(samples, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)
