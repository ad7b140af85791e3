"""Helpers for the server tests: a real HTTP server on loopback in a thread, and a plain HTTP client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import Cookie, CookieJar
from pathlib import Path
from typing import Any, Self

import uvicorn

from memdir.faces import http, mcp
from memdir.faces.auth import Memories, Principal, Principals


class _Server(uvicorn.Server):
    """uvicorn's server, stopped as uvicorn stops it but looking every 10 ms where uvicorn waits 0.1 s (for
    `should_exit`, then for connections and tasks to end): a test's server took 0.15 s to stop, a hundred a run."""

    async def main_loop(self) -> None:
        steps = 0
        while not await self.on_tick(steps // 10):  # its once-a-second work still once a second
            steps = (steps + 1) % 8_640_000
            await asyncio.sleep(0.01)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                await asyncio.sleep(0.01)
                while self.server_state.connections or self.server_state.tasks:
                    await asyncio.sleep(0.01)
                for server in self.servers:
                    await server.wait_closed()
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        await self.lifespan.shutdown()


class Threaded:
    """An app on a real loopback socket (port chosen by the OS), served by uvicorn in a thread of this process."""

    memories: Memories

    def serve(self, app: Any, host: str = "127.0.0.1", **config: Any) -> None:
        self.sock = http.listen(host, 0)
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        self.server = _Server(http.config(app, timeout_graceful_shutdown=1, **config))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.memories.close()


class Running(Threaded):
    """`memdir serve --http` in this process: the same app on a real loopback socket."""

    def __init__(self, root: Path | str, principals: Principals | None = None, host: str = "127.0.0.1",
                 header_timeout: float = http.HEADER_TIMEOUT) -> None:
        self.principals = principals or Principals(Principal("default"))
        self.memories = Memories(root, transport="http")
        app = http.build(self.principals, self.memories, host=host, mcp=mcp.server(self.principals, self.memories))
        self.serve(app, host, header_timeout=header_timeout)


class Served:
    """`memdir serve --http 127.0.0.1:0 ARGS...` in a subprocess, as an operator starts it; `url` once it serves."""

    def __init__(self, root: Path | str, *args: str, env: dict[str, str] | None = None) -> None:
        self.argv = [sys.executable, "-m", "memdir", "--root", str(root), "serve", "--http", "127.0.0.1:0", *args]
        self.env = {**env_without_memdir(), **(env or {})}
        self.url = ""

    def __enter__(self) -> Served:
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        line = self.proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        if not found:
            self.__exit__()
            raise AssertionError(f"the server did not start: {line!r} {self.proc.stderr.read()!r}")
        self.url = found.group(0)
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class Browser:
    """A cookie-keeping HTTP client that asks for HTML, as a browser does (redirects followed); `headers` go with
    every request (a proxy's, say)."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        self.base = base
        self.headers = {"Accept": "text/html", **(headers or {})}
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = ""

    def get(self, path: str) -> tuple[int, str, str]:
        return self._send(urllib.request.Request(self.base + path, headers=self.headers))

    def post(self, path: str, fields: dict[str, str | list[str]], *, csrf: bool = True,
             headers: dict[str, str] | None = None) -> tuple[int, str, str]:
        data = dict(fields)
        if csrf:
            data.setdefault("csrf", self.csrf)
        body = urllib.parse.urlencode(data, doseq=True).encode()
        sent = {**self.headers, "Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        return self._send(urllib.request.Request(self.base + path, data=body, headers=sent, method="POST"))

    def _send(self, request: urllib.request.Request) -> tuple[int, str, str]:
        try:
            with self.opener.open(request) as r:
                status, url, text = r.status, r.url, r.read().decode()
        except urllib.error.HTTPError as e:
            status, url, text = e.code, e.url, e.read().decode()
        found = re.search(r'name="csrf" value="([^"]+)"', text)
        if found:
            self.csrf = found.group(1)
        return status, url, text

    def cookie(self) -> Cookie:
        [c] = [c for c in self.jar if c.name == "memdir_session"]
        return c


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()

    @property
    def error(self) -> tuple[str, str]:
        e = self.json["error"]
        return e["type"], e["message"]


def call(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None, token: str | None = None) -> Reply:
    """One HTTP request; a dict or list body is sent as JSON, a str as text/markdown."""
    sent = dict(headers or {})
    data = None
    if isinstance(body, (dict, list)):
        data = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    elif isinstance(body, str):
        data = body.encode()
        sent.setdefault("Content-Type", "text/markdown")
    elif isinstance(body, bytes):
        data = body
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return Reply(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())


def env_without_memdir() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}


def stdio_answers(root: Path, lines: list[str], expected: int, env: dict[str, str] | None = None) -> dict[Any, Any]:
    """Start `memdir serve`, send the lines at once and keep stdin open, as a client does, until `expected` answers
    are in (by id)."""
    proc = subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(root), "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env or env_without_memdir())
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(line + "\n" for line in lines))
    proc.stdin.flush()
    answers: dict[Any, Any] = {}
    try:
        while len(answers) < expected:
            line = proc.stdout.readline()
            assert line, f"the server stopped; answered {sorted(map(str, answers))}"
            answer = json.loads(line)
            answers[answer["id"]] = answer
    finally:
        proc.stdin.close()
        proc.wait(30)
    return answers


def stdio_exchange(root: Path, lines: list[str], env: dict[str, str] | None = None,
                   timeout: float = 60) -> tuple[list[Any], int]:
    """Start `memdir serve`, write the lines, close stdin as a one-shot client does, and read every answer until the
    server exits: the answers in the order they came, and the exit code."""
    done = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "serve"], input="".join(f"{x}\n" for x in lines),
                          capture_output=True, text=True, env=env or env_without_memdir(), timeout=timeout)
    return [json.loads(line) for line in done.stdout.splitlines()], done.returncode
