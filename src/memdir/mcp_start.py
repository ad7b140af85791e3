"""The first answers of `memdir serve` over stdio, given while the MCP SDK is still loading.

Importing the SDK is most of a stdio server's start (0.3-0.6 s on a busy
2-core machine: longer than the whole Node reference server takes). What a
client asks first, `server/discover` and `tools/list` of the stateless
protocol (2026-07-28), depends only on memdir's and the SDK's code, not on the
memory: the SDK's own answer line from an earlier start is kept in the user's
cache folder, keyed by the files of both packages, and replayed with the new
request's id while the SDK loads in a thread. Everything else waits for the
SDK, in the order it came; so does a client of the older protocol, whose
`initialize` starts a session only the SDK can hold.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import select
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

CACHEABLE = ('"server/discover"', '"tools/list"')
_META = "io.modelcontextprotocol/protocolVersion"


def _cache_file() -> Path:
    from .paths import user_cache

    return user_cache() / "mcp-answers.json"


def _code_key() -> str:
    """What the cached answers depend on: memdir's MCP code and the SDK's, by file and change time."""
    here = Path(__file__).parent
    files = [here / n for n in ("__init__.py", "mcp.py", "mcp_start.py", "tools.py")]
    for package in ("mcp", "mcp_types"):
        spec = importlib.util.find_spec(package)  # finds the package without importing it
        if spec is None or spec.origin is None:
            return ""
        files.append(Path(spec.origin))
    parts = []
    for f in files:
        st = f.stat()
        parts.append(f"{f}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()


def _cache_key(line: str) -> str | None:
    """The cache key of a stateless request whose answer is the same every time, else None."""
    if not any(m in line for m in CACHEABLE):
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("id"), (int, str)):
        return None
    params = message.get("params") or {}
    if (message.get("method") not in ("server/discover", "tools/list") or not isinstance(params, dict)
            or set(params) != {"_meta"} or not isinstance(params["_meta"], dict) or _META not in params["_meta"]):
        return None  # a cursor, or a request of the older protocol (its session lives in the SDK)
    return f"{message['method']} {json.dumps(params, sort_keys=True)}"


class Early:
    """Answers from the cache until the SDK is ready, then records the SDK's answers the cache lacks."""

    def __init__(self) -> None:
        try:
            self.key = _code_key()
            kept = json.loads(_cache_file().read_text())
            self.answers: dict[str, str] = kept["answers"] if kept.get("key") == self.key and self.key else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.answers = {}
        self.queued: list[str] = []  # lines for the SDK, in the order they came
        self.partial = ""  # the start of a line not yet ended
        self.eof = False
        self.wanted: dict[Any, str] = {}  # request id -> cache key: the SDK's answer to keep
        self.lock = threading.Lock()

    def serve_until(self, thread: threading.Thread) -> None:
        """Read stdin and answer what the cache can while `thread` (loading the SDK) runs."""
        buffer = b""
        while thread.is_alive() and not self.eof:
            try:
                readable, _, _ = select.select([0], [], [], 0.005)
            except (OSError, ValueError):  # stdin cannot be polled: wait for the SDK
                break
            if not readable:
                continue
            chunk = os.read(0, 1 << 16)
            if not chunk:
                self.eof = True
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace") + "\n"
                if self.queued or not self._answer(line):
                    self.queued.append(line)  # after the first line the SDK must see, all go to it in order
        self.partial = buffer.decode("utf-8", "replace")
        thread.join()

    def _answer(self, line: str) -> bool:
        key = _cache_key(line)
        kept = None if key is None else self.answers.get(key)
        if kept is None:
            return False
        answer = json.loads(kept)
        answer["id"] = json.loads(line)["id"]
        view = memoryview((json.dumps(answer, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
        while view:
            view = view[os.write(1, view):]
        return True

    def note(self, line: str) -> None:
        """A request on its way to the SDK: keep its answer if the cache lacks it."""
        key = _cache_key(line)
        if key is not None and key not in self.answers:
            with self.lock:
                self.wanted[json.loads(line)["id"]] = key

    def heard(self, line: str) -> None:
        """A line the SDK wrote: if it answers a wanted request, save it in the cache."""
        try:
            ident = json.loads(line).get("id")
        except (ValueError, AttributeError):
            return
        with self.lock:
            key = self.wanted.pop(ident, None) if isinstance(ident, (int, str)) else None
        if key is None or '"result"' not in line or not self.key:
            return
        self.answers[key] = line.strip()
        target = _cache_file()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            staged = target.with_name(f"{target.name}.{os.getpid()}")
            fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps({"key": self.key, "answers": self.answers}))
            os.replace(staged, target)
        except OSError:
            pass  # no cache folder: every start waits for the SDK, as before


class Recording:
    """The SDK's stdout, telling `Early` what was written (only while it still wants an answer)."""

    def __init__(self, out: Any, early: Early) -> None:
        self.out = out
        self.early = early

    def write(self, text: str) -> int:
        if self.early.wanted:
            for line in text.splitlines():
                self.early.heard(line)
        written: int = self.out.write(text)
        return written

    def flush(self) -> None:
        self.out.flush()

    def close(self) -> None:
        self.out.close()


def serve(build: Callable[[], Any], run: Callable[[Any, Early], None]) -> None:
    """Build the server (importing the SDK) in a thread while `Early` answers, then `run` it."""
    early = Early()
    box: dict[str, Any] = {}

    def load() -> None:
        try:
            box["app"] = build()
        except BaseException as e:  # raised again below, in the main thread
            box["error"] = e

    thread = threading.Thread(target=load, name="memdir-mcp-load", daemon=True)
    thread.start()
    early.serve_until(thread)
    if "error" in box:
        raise box["error"]
    run(box["app"], early)
