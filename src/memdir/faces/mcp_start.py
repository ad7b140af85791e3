"""The stdio wire of `memdir serve`: tool calls answered without the MCP SDK, everything else handed to it.

Importing the SDK is most of a stdio server's start (0.3-0.6 s on a busy
2-core machine), and its stdio transport costs about half a millisecond a
call (a thread hop for each line read and written, two pydantic parses and
dumps, a task per request): five times what memdir takes to read a file.
So one thread reads stdin from the first moment and answers what it can
answer exactly as the SDK would:

- `tools/call` of the stateless protocol (2026-07-28) with the envelope a
  stock client sends, at once, even while the SDK is still loading; of the
  handshake protocol once `initialize` is answered (the negotiated version
  shapes the result: the SDK's serializer shapes it, or before the SDK has
  loaded `mcp.legacy_shape`, where it agreed with that serializer on probes
  at an earlier start);
- `server/discover` and `tools/list` of the stateless protocol, and the
  handshake protocol's first `initialize` and `tools/list`: the SDK's own
  answer line from an earlier start, kept in the user's cache folder under a
  key of both packages' files, with the new request's id. `initialize` is
  keyed on all its params, `tools/list` on the negotiated version and its
  own params. An `initialize` answered here still goes to the SDK, under an
  id of ours whose answer is dropped, so it holds the session as if it had
  answered.

Every other line (an `initialize` with no kept answer, resources, prompts, ping, notifications,
progress tokens, unknown fields, anything malformed) goes to the SDK, and so
does everything while the SDK still owes an answer or has a line to read
(but a plain `notifications/initialized`, which no answer depends on): a
client's requests are then served in the order the SDK serves them, never
overtaken. Each line is answered once, by one side. Both sides write whole
lines under one lock. When stdin closes with nothing owed while the SDK is
still loading, the process ends at once (`Wire.quit`).
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import os
import queue
import re
import sys
import threading
from collections.abc import Callable
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from .mcp import Sessions

CACHEABLE = ('"server/discover"', '"tools/list"', '"initialize"')
_META = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_CLIENT = "io.modelcontextprotocol/clientInfo"
MODERN = "2026-07-28"  # the stateless generation whose result shape `mcp.wire_result` writes (a test holds the SDK to it)
ERA = "\x00memdir.era"  # the id of the ping that tells the SDK which generation the client speaks
HELLO = "\x00memdir.hello"  # the id of the client's `initialize` as handed to the SDK after it was answered here
OURS = (ERA, HELLO)  # requests of our own: the SDK's answers to them are dropped
KEPT = 64  # answers kept at most (one per client and version, in practice)
_ANSWER_ID = re.compile(r'\{"jsonrpc":"2\.0","id":(-?\d{1,18}|"(?:[^"\\]|\\.){0,1000}"),"(result|error)"')
_MAX_ID = 2**53  # beyond what every JSON parser reads exactly: such an id goes to the SDK

logger = logging.getLogger(__name__)


def _cache_file() -> Path:
    from ..paths import user_cache

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
    return blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()


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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON the SDK reads")


def _no_twins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key given twice: which one a parser keeps is its own choice")
    return found


_DECODER = json.JSONDecoder(parse_constant=_no_constant)  # NaN and Infinity go to the SDK
_STRICT = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=_no_twins)  # for lines whose answers are kept


def _handshake_key(line: str, version: str | None) -> tuple[Any, str] | None:
    """The id and cache key of a handshake-protocol `initialize` or `tools/list` whose answer is the same every time.

    `initialize` is keyed on all its params (the SDK's answer depends only on
    the protocolVersion they ask for, but only the SDK's validator knows which
    params it accepts). `tools/list` is keyed on the negotiated version and its
    own params: memdir's handler ignores the client, and the SDK shapes the
    result by version alone.
    """
    if '"initialize"' not in line and '"tools/list"' not in line:
        return None
    try:
        message = _STRICT.decode(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.keys() - {"params"} != {"jsonrpc", "id", "method"} \
            or message["jsonrpc"] != "2.0" or not _request_id(message["id"]) or message["id"] in OURS:
        return None
    params = message.get("params", None)
    if "\\u" in line and _tools().not_text(message):
        return None
    if message["method"] == "initialize" and isinstance(params, dict) and "_meta" not in params:
        return message["id"], f"initialize {json.dumps(params, sort_keys=True)}"
    if message["method"] == "tools/list" and version is not None and (params is None or isinstance(params, dict)):
        if params is not None and (not isinstance(params.get("_meta", {}), dict) or _META in params.get("_meta", {})):
            return None  # a stateless envelope: the SDK's to judge
        shown = "-" if "params" not in message else json.dumps(params, sort_keys=True)
        return message["id"], f"legacy tools/list {version} {shown}"
    return None


def _quiet(line: str) -> bool:
    """`notifications/initialized` as a stock client sends it: no answer either side gives depends on it.

    (The SDK serves requests once `initialize` is answered, not once this comes;
    the stateless generation drops it.) So an answer here may go out before the
    SDK has read it, as before the SDK has read the `initialize` itself.
    """
    if '"notifications/initialized"' not in line:
        return False
    try:
        message = _STRICT.decode(line)
    except (ValueError, RecursionError):
        return False
    return (isinstance(message, dict) and message.keys() <= {"jsonrpc", "method", "params"}
            and message.get("jsonrpc") == "2.0" and message.get("method") == "notifications/initialized"
            and message.get("params", {}) == {})


def _tools() -> Any:
    from . import tools

    return tools


def _request_id(value: Any) -> bool:
    return isinstance(value, str) or (type(value) is int and -_MAX_ID < value < _MAX_ID)


def _line(ident: Any, result: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}, ensure_ascii=False, separators=(",", ":"))


def _plain_envelope(meta: dict[str, Any]) -> bool:
    """The envelope a stock client sends: valid for the SDK without asking it."""
    client = meta.get(_CLIENT, {"name": "", "version": ""})
    return (meta.keys() <= {_META, _CAPABILITIES, _CLIENT} and meta[_META] == MODERN and meta.get(_CAPABILITIES) == {}
            and isinstance(client, dict) and client.keys() == {"name", "version"}
            and all(isinstance(v, str) for v in client.values()))


class Wire:
    """stdin and stdout of a stdio server, shared by the fast path (a thread of its own) and the SDK."""

    def __init__(self, sessions: Sessions, in_fd: int, out_fd: int, *, fast: bool = True) -> None:
        from . import mcp

        try:
            self.key = _code_key()
            kept = json.loads(_cache_file().read_text())
            self.answers: dict[str, str] = kept["answers"] if kept.get("key") == self.key and self.key else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.answers = {}
        self.sessions = sessions
        self.fast = fast
        self.lines = io.TextIOWrapper(os.fdopen(in_fd, "rb", closefd=False), encoding="utf-8", errors="replace")
        self.out_fd = out_fd
        self.stamp = mcp.server_info()
        self.for_sdk: queue.Queue[str | None] = queue.Queue()
        self.write_lock = threading.Lock()  # whole lines: a fast answer never lands inside one of the SDK's
        self.lock = threading.Lock()  # the state below
        self.era: str | None = None  # "modern" or "legacy": the client's first request decides, as in the SDK
        self.version: str | None = None  # the older protocol's version, as the SDK's `initialize` answer negotiated it
        self.greeted = False  # an `initialize` came (answered here or read by the SDK): later ones are the SDK's
        self.initializing: set[Any] = set()  # ids of `initialize` requests the SDK has not answered
        self.pending: set[Any] = set()  # ids of requests the SDK has not answered
        self.backlog = 0  # lines queued for the SDK that it has not read yet
        self.wanted: dict[Any, str] = {}  # request id -> cache key: the SDK's answer to keep
        self.envelopes: dict[str, bool] = {}  # envelopes the SDK was asked about, and its verdict
        self.sdk_ready = False
        self.quitting = False  # stdin closed with nothing owed before the SDK loaded: the stdin thread ends the process
        self.answered = 0  # requests answered here: said at the end, so a test (or a curious user) can tell
        self.read_lines = 0

    # ---------------------------------------------------------------- the reader thread

    def read(self) -> None:
        """Read stdin line by line (split as the SDK's own stdio reader splits) until it closes."""
        try:
            for line in self.lines:
                self.read_lines += 1
                self.take(line)
        finally:
            self.for_sdk.put(None)
        with self.lock:
            self.quitting = self.fast and not self.sdk_ready and not self.pending and not self.backlog
        if self.quitting:
            self.quit()

    def quit(self) -> None:
        """stdin closed, every request answered here, the SDK still loading: exit now rather than wait for it.

        All the SDK has left to read is our own lines (the `initialize` and pings
        whose answers are dropped) and `notifications/initialized`: nothing it
        would write. A one-shot client (the Inspector's command line) waits for
        the server to exit.
        """
        print(f"memdir: {self.answered} of {self.read_lines} lines answered without the MCP SDK", file=sys.stderr)
        try:
            self.sessions.memories.close()
        finally:
            sys.stderr.flush()
            os._exit(0)

    def take(self, line: str) -> None:
        try:
            answer = self.answer(line) if self.fast else None
        except Exception:  # a bug before any call ran: the SDK still answers
            logger.exception("the stdio fast path failed on a line; the SDK answers it")
            answer = None
        if answer is not None:
            self.write(answer)
            self.answered += 1
            return
        if not _quiet(line):
            with self.lock:
                self.backlog += 1
        self.for_sdk.put(line)

    def answer(self, line: str) -> bytes | None:
        """The answer to a line the fast path serves exactly as the SDK would, else None (nothing was run)."""
        from . import mcp, tools

        if '"tools/call"' not in line and not any(m in line for m in CACHEABLE):
            return None
        with self.lock:
            if self.pending or self.backlog:
                return None
            era, version, greeted = self.era, self.version, self.greeted
        if era != "modern" and ('"initialize"' in line or '"tools/list"' in line):
            early = self.handshake(line, version if era == "legacy" else None, greeted)
            if early is not None:
                return early
        try:
            message = _DECODER.decode(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
            return None
        params, ident = message["params"], message["id"]
        if message["jsonrpc"] != "2.0" or not _request_id(ident) or not isinstance(params, dict):
            return None
        if "\\u" in line and tools.not_text(message):
            return None  # a lone surrogate: the SDK's parser refuses it, and `mcp._Answerable` answers
        meta = params.get("_meta")
        envelope = meta if isinstance(meta, dict) and _META in meta else None
        modern = envelope is not None
        if envelope is not None:
            if era == "legacy" or not self.envelope(envelope):
                return None
        elif era != "legacy" or version is None or "_meta" in params:
            return None
        if message["method"] == "tools/call":
            arguments = params.get("arguments", {})
            if not params.keys() <= {"name", "arguments", "_meta"} or not isinstance(params.get("name"), str) \
                    or not isinstance(arguments, dict):
                return None
            result = mcp.call(self.sessions.stdio(modern), params["name"], arguments)
            try:
                if modern:
                    shaped = mcp.wire_result(result, self.stamp)
                else:  # before the SDK has loaded, without it where it agreed at an earlier start
                    unloaded = not self.sdk_ready and f"shape {version}" in self.answers
                    shaped = (mcp.legacy_shape(result, version or "") if unloaded else None) \
                        or mcp.legacy_result(result, version or "")
                text = _line(ident, shaped)
            except Exception:  # the call ran, so it is answered here: an error, as the SDK answers a handler that fails
                logger.exception("tool %s: its result could not be written", params["name"])
                text = json.dumps({"jsonrpc": "2.0", "id": ident,
                                   "error": {"code": -32603, "message": "Internal server error"}})
        elif modern and message["method"] in ("server/discover", "tools/list"):
            key = _cache_key(line)
            kept = None if key is None else self.answers.get(key)
            if kept is None:
                return None
            text = _line(ident, json.loads(kept)["result"])
        else:
            return None
        if era is None and envelope is not None:
            self.open(envelope)
        return (text + "\n").encode("utf-8", "replace")

    def handshake(self, line: str, version: str | None, greeted: bool) -> bytes | None:
        """A handshake-protocol `initialize` or `tools/list` answered with the SDK's answer from an earlier start.

        The `initialize` still goes to the SDK, under an id of ours whose answer
        is dropped, so the SDK holds the session as if it had answered.
        """
        found = _handshake_key(line, version)
        kept = None if found is None else self.answers.get(found[1])
        if found is None or kept is None:
            return None
        ident, key = found
        result = json.loads(kept)["result"]
        if key.startswith("initialize "):
            negotiated = result.get("protocolVersion")
            if greeted or not isinstance(negotiated, str):
                return None
            with self.lock:
                self.era, self.version, self.greeted = "legacy", negotiated, True
            params = _STRICT.decode(line)["params"]
            self.for_sdk.put(json.dumps({"jsonrpc": "2.0", "id": HELLO, "method": "initialize", "params": params}) + "\n")
        return (_line(ident, result) + "\n").encode("utf-8", "replace")

    def envelope(self, meta: dict[str, Any]) -> bool:
        """Whether the SDK accepts this stateless envelope on a tool call (asked once per envelope once it is loaded)."""
        if _plain_envelope(meta):
            return True
        if meta.get(_META) != MODERN or not self.sdk_ready:
            return False
        key = json.dumps(meta, sort_keys=True)
        verdict = self.envelopes.get(key)
        if verdict is None:
            from mcp.shared.inbound import InboundModernRoute, classify_inbound_request
            from mcp_types import methods

            params = {"name": "read_memory_file", "arguments": {}, "_meta": meta}
            try:
                verdict = isinstance(classify_inbound_request({"method": "tools/call", "params": params}),
                                     InboundModernRoute)
                methods.validate_client_request("tools/call", MODERN, params)
            except Exception:
                verdict = False
            if len(self.envelopes) < 64:
                self.envelopes[key] = verdict
        return verdict

    def open(self, meta: dict[str, Any]) -> None:
        """The fast path answered the client's first request: tell the SDK it is a stateless client, as that request would have."""
        with self.lock:
            if self.era is not None:
                return
            self.era = "modern"
        self.for_sdk.put(json.dumps({"jsonrpc": "2.0", "id": ERA, "method": "ping", "params": {"_meta": meta}}) + "\n")

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        with self.write_lock:
            while view:
                view = view[os.write(self.out_fd, view):]

    # ---------------------------------------------------------------- the SDK's side

    async def next_line(self) -> str | None:
        """The next line for the SDK (None at the end of stdin)."""
        import anyio

        try:
            return self.for_sdk.get_nowait()
        except queue.Empty:
            return await anyio.to_thread.run_sync(self.for_sdk.get, abandon_on_cancel=True)

    def given(self, line: str) -> None:
        """The SDK is about to read this line (as `mcp._Answerable` rewrote it): note what it will owe."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None
        ident = message.get("id") if isinstance(message, dict) else None
        quiet = _quiet(line)
        with self.lock:
            if ident not in OURS and not quiet:
                self.backlog -= 1
            if not isinstance(message, dict) or not isinstance(message.get("method"), str):
                return
            params = message.get("params")
            if message["method"] == "notifications/cancelled" and isinstance(params, dict):
                self.pending.discard(params.get("requestId"))  # the SDK may never answer it now
            if not _request_id(ident) or ident in OURS:
                return
            self.pending.add(ident)
            if self.era is None:
                meta = params.get("_meta") if isinstance(params, dict) else None
                modern = message["method"] != "initialize" and isinstance(meta, dict) and _META in meta
                self.era = "modern" if modern else "legacy"
            if message["method"] == "initialize":
                self.initializing.add(ident)
                self.greeted = True
            era = self.era
        key = _cache_key(line)
        if key is None and era == "legacy":
            found = _handshake_key(line, "\x00")  # the version goes in when the answer comes, as the SDK negotiated it
            key = None if found is None else found[1]
        if key is not None and key not in self.answers:
            with self.lock:
                self.wanted[ident] = key

    def from_sdk(self, text: str) -> None:
        """A line the SDK writes: note the request it answers, then send it (unless it answers our own ping)."""
        found = _ANSWER_ID.match(text)
        if found is not None:
            ident = json.loads(found.group(1))
            if ident == HELLO and found.group(2) == "result" and self.version is not None:
                self.witness(self.version)
            elif ident == HELLO:  # cannot be, with the same code: kept answers are results the SDK gave to these params
                logger.error("the MCP SDK refused an initialize answered from its kept answer: %s", text.strip())
            if ident in OURS:
                return
            with self.lock:
                self.pending.discard(ident)
                initialized = ident in self.initializing
                self.initializing.discard(ident)
                wanted = self.wanted.pop(ident, None)
            if initialized and found.group(2) == "result":
                version = json.loads(text)["result"].get("protocolVersion")
                with self.lock:
                    self.version = version if isinstance(version, str) else None
                if isinstance(version, str):
                    self.witness(version)
            if wanted is not None and "\x00" in wanted:
                with self.lock:
                    settled = self.version if not self.initializing else None
                wanted = None if settled is None else wanted.replace("\x00", settled)
                if wanted in self.answers:
                    wanted = None
            if wanted is not None and found.group(2) == "result":
                self.keep(wanted, text.strip())
        self.write(text.encode("utf-8"))

    def witness(self, version: str) -> None:
        """Note for later starts whether `mcp.legacy_shape` writes what the SDK's serializer writes at this version."""
        key = f"shape {version}"
        if key in self.answers or not self.key:
            return
        from . import mcp, tools

        probes = [tools.Result("caf\u00e9 \U0001f600 \"quoted\"\n", data={"a": None, "b": [1, 0.5, True, "x"], "c": {"d": ""}}),
                  tools.Result("refused", is_error=True), tools.Result("", data={})]
        try:
            agrees = all(json.dumps(mcp.legacy_shape(r, version)) == json.dumps(mcp.legacy_result(r, version))
                         for r in probes)
        except Exception:  # a version the SDK does not shape: no witness
            agrees = False
        if agrees:
            self.keep(key, "agrees")

    def keep(self, key: str, line: str) -> None:
        """Save the SDK's answer to a cacheable request for the next start."""
        if not self.key:
            return
        self.answers[key] = line
        while len(self.answers) > KEPT:
            del self.answers[next(iter(self.answers))]
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


class Out:
    """The SDK's stdout: each line it writes goes out whole through the wire (no thread hop)."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    async def write(self, text: str) -> int:
        self.wire.from_sdk(text)
        return len(text)

    async def flush(self) -> None:
        pass


def _claim() -> tuple[int, int, Callable[[], None]]:
    """Private copies of fd 0 and 1 for the wire; fd 0 reads the null device and fd 1 goes to stderr meanwhile.

    A stray print or a child process then cannot corrupt or steal the wire,
    as in the SDK's own stdio transport.
    """
    import fcntl

    try:
        wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # no descriptors to spare: serve on 0 and 1 themselves
        return 0, 1, lambda: None
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    return wire_in, wire_out, restore


def serve(sessions: Sessions, build: Callable[[], Server[Any]], run: Callable[[Server[Any], Wire], None]) -> None:
    """Answer stdin from the first moment while `build` imports the SDK, then `run` the SDK on the same wire."""
    wire_in, wire_out, restore = _claim()
    try:
        wire = Wire(sessions, wire_in, wire_out, fast=os.environ.get("MEMDIR_MCP_FAST", "1") != "0")
        threading.Thread(target=wire.read, name="memdir-mcp-stdin", daemon=True).start()
        switch = sys.getswitchinterval()
        sys.setswitchinterval(0.0002)  # importing holds the GIL: hand it to a call waiting on the wire within 0.2 ms, not 5
        try:
            app = build()
        finally:
            sys.setswitchinterval(switch)
        with wire.lock:
            wire.sdk_ready = True
            quitting = wire.quitting
        if quitting:
            threading.Event().wait()  # the stdin thread is closing the memories and exiting the process
        run(app, wire)
        print(f"memdir: {wire.answered} of {wire.read_lines} lines answered without the MCP SDK", file=sys.stderr)
    finally:
        restore()
