"""Who is calling a server, and which memory they get.

A `Principal` is a name, a tenant and a scope. The servers know one default
principal (from `memdir serve --tenant --scope-read --scope-write`) and, over
HTTP, the principals of bearer tokens: `--token`/`--token-file`/`MEMDIR_TOKEN`
(the default principal, behind a token) and an `--auth FILE` such as

    # memdir-auth.toml: one table per principal; the table name is the actor in the journal
    [tokens.alice]
    token = "a long random string"        # or token_sha256 = "<hex digest>"
    tenant = "home"                       # default: the server's --tenant
    scope-read = ["household/"]           # default (neither scope key): the whole tenant
    scope-write = ["people/alice/"]
    forget = true                         # may erase memories for good (default false; docs/forgetting.md)

Tokens are kept only as SHA-256 digests and compared in constant time; they
are never logged. Wrong tokens are counted per client address (`Throttle`):
past `FAILURES` in `WINDOW` seconds the client is answered 429 with
Retry-After, before its token is looked at, until the oldest failure leaves
the window. The client address is the connection's, or behind a proxy named
with `--trusted-proxy` the one it forwards (`Proxies`). `Memories` opens one
`Memdir` per principal with the agent-facing defaults, so limits, scopes and
history all come from `Memdir`.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import os
import re
import sqlite3
import threading
import time
import tomllib
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.memdir import Memdir
from ..core.opening import connect, default_actor
from ..core.opening import open as open_memdir
from ..errors import InvalidArgument
from ..remember.watch import Watchers
from ..stores.locations import check_tenant, ping_location, scheme_of
from ..stores.locations import folder_of as folder_path

log = logging.getLogger(__name__)
MIN_TOKEN_CHARS = 16
PRINCIPAL = "memdir.principal"  # the ASGI scope key under which the HTTP guard puts the caller
MAKE_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
_KEYS = {"token", "token_sha256", "tenant", "scope-read", "scope-write", "forget"}
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}\Z")  # \Z: `$` would let a trailing newline in
FAILURES = 10  # wrong tokens one client may send...
WINDOW = 60.0  # ...in this many seconds; then it waits until the oldest of them is this old
MAX_CLIENTS = 65_536  # clients whose failures are remembered; the longest quiet are forgotten first


@dataclass(frozen=True)
class Principal:
    """One caller: `read`/`write` are folder prefixes, or None for the whole tenant; `forget`: may erase and redact
    for good (within what it may write), which no principal may unless it is given."""

    name: str
    tenant: str | None = None
    read: tuple[str, ...] | None = None
    write: tuple[str, ...] | None = None
    forget: bool = False

    @property
    def scoped(self) -> bool:
        return self.read is not None or self.write is not None


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def check_token(token: str, source: str) -> str:
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise InvalidArgument(
            f"{source}: the token is {len(token)} characters; use at least {MIN_TOKEN_CHARS} random characters, e.g. from {MAKE_TOKEN}"
        )
    return token


def read_token_file(path: str | os.PathLike[str]) -> str:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidArgument(f"token file {str(p)!r} cannot be read ({e.strerror}); give a file holding one token") from None
    return check_token(text, f"token file {str(p)!r}")


class Principals:
    """The default principal and the bearer tokens that name principals."""

    def __init__(self, default: Principal) -> None:
        self.default = default
        self._tokens: list[tuple[bytes, Principal]] = []
        self.verifier: Any = None  # a `bearer.Verifier` for JWTs a SaaS issues, besides the static tokens

    @property
    def required(self) -> bool:
        """True when HTTP requests must carry a bearer token."""
        return bool(self._tokens) or self.verifier is not None

    @property
    def all(self) -> list[Principal]:
        seen = {self.default.name: self.default}
        for _, p in self._tokens:
            seen.setdefault(p.name, p)
        return list(seen.values())

    def add(self, token_digest: bytes, principal: Principal, source: str) -> None:
        for known, other in self._tokens:
            if hmac.compare_digest(known, token_digest):
                raise InvalidArgument(f"{source}: {principal.name} has the same token as {other.name}; give each principal its own token")
            if other.name == principal.name and other != principal:
                raise InvalidArgument(f"{source}: principal {principal.name!r} is defined twice; rename one of them")
        self._tokens.append((token_digest, principal))

    def add_token(self, token: str, source: str = "--token") -> None:
        """Require `token` for the default principal."""
        self.add(digest(check_token(token, source)), self.default, source)

    def load(self, path: str | os.PathLike[str]) -> None:
        """Add the principals of an auth file (TOML; see the module docstring)."""
        p = Path(path)
        where = f"auth file {str(p)!r}"
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise InvalidArgument(f"{where} cannot be read ({e.strerror}); give a TOML file with [tokens.NAME] tables") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise InvalidArgument(f"{where} is not valid TOML ({e}); fix it") from None
        extra = sorted(set(data) - {"tokens"})
        if extra or not isinstance(data.get("tokens"), dict) or not data["tokens"]:
            raise InvalidArgument(f"{where}: expected only [tokens.NAME] tables (found {', '.join(extra) or 'none'}); see `memdir serve --help`")
        for name, entry in data["tokens"].items():
            self._load_entry(str(name), entry, f"{where} [tokens.{name}]")

    def _load_entry(self, name: str, entry: Any, where: str) -> None:
        if not NAME.match(name) or name == "default":
            raise InvalidArgument(
                f"{where}: name {name!r} is not usable; use up to 64 letters, digits, '_', '.', '@' or '-' "
                "('default' is the server's own principal)"
            )
        if not isinstance(entry, dict):
            raise InvalidArgument(f"{where}: expected a table with token, tenant, scope-read, scope-write")
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            raise InvalidArgument(f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_KEYS))}")
        if ("token" in entry) == ("token_sha256" in entry):
            raise InvalidArgument(f"{where}: give exactly one of token or token_sha256")
        if "token" in entry:
            if not isinstance(entry["token"], str):
                raise InvalidArgument(f"{where}: token must be a string")
            token_digest = digest(check_token(entry["token"], where))
        else:
            try:
                token_digest = bytes.fromhex(str(entry["token_sha256"]))
            except ValueError:
                token_digest = b""
            if len(token_digest) != 32:
                raise InvalidArgument(f"{where}: token_sha256 must be 64 hex digits (sha256 of the token)")
        tenant = entry.get("tenant", self.default.tenant)
        if tenant is not None:
            check_tenant(tenant)
        scope: dict[str, tuple[str, ...] | None] = {}
        for key in ("scope-read", "scope-write"):
            value = entry.get(key)
            if value is None:
                scope[key] = None
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                scope[key] = tuple(value)
            else:
                raise InvalidArgument(f"{where}: {key} must be a list of folder prefixes, e.g. [\"people/alice/\"]")
        if scope["scope-read"] is not None or scope["scope-write"] is not None:
            scope = {k: v or () for k, v in scope.items()}
        forget = entry.get("forget", False)
        if not isinstance(forget, bool):
            raise InvalidArgument(f"{where}: forget must be true or false")
        self.add(token_digest, Principal(name, tenant, scope["scope-read"], scope["scope-write"], forget), where)

    def authenticate(self, authorization: str | None) -> Principal | None:
        """The principal of an `Authorization: Bearer ...` header, or None.

        Compares the token's digest with every known digest (no early exit),
        so the time taken says nothing about which token came close.
        """
        if not self.required:
            return self.default
        if not authorization:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        if self.verifier is not None and token.strip().count(".") == 2:  # shaped like a JWT: the verifier first
            principal: Principal | None = self.verifier.principal(token.strip())
            if principal is not None:
                return principal
        given = digest(token.strip())
        found = None
        for known, principal in self._tokens:
            if hmac.compare_digest(known, given):
                found = principal
        return found


    def expires(self, authorization: str | None) -> float | None:
        """When the credential of an `Authorization: Bearer ...` header ends (a JWT's `exp`), or None: a
        static token does not (the page ends a session made from it with the token's)."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if self.verifier is None or scheme.lower() != "bearer" or token.strip().count(".") != 2:
            return None
        until: float | None = self.verifier.expires(token.strip())
        return until


def client_key(host: str) -> str:
    """Whose failures an address counts as: an IPv6 address by its /64 (one host's usual share), others as given."""
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Throttle:
    """Wrong tokens per client: after `limit` of them within `window` seconds, `wait` says how long to wait.

    The servers ask `wait` before they look at a token, so a blocked client
    cannot tell a right token from a wrong one, and count a wrong one with
    `failed`. A right token does not clear the count (else one token of its
    own would let a client go on guessing others'). With `path` the count is
    a SQLite file the worker processes of one server share (`serve --workers
    N`), so N workers allow `limit` guesses, not N times as many (give or take
    the N - 1 other workers may be checking at the same moment).
    """

    def __init__(self, limit: int = FAILURES, window: float = WINDOW, *, clock: Callable[[], float] | None = None,
                 max_clients: int = MAX_CLIENTS, path: str | Path | None = None) -> None:
        shared = path is not None
        self.limit, self.window, self.max_clients = limit, window, max_clients
        self.clock = clock or (time.time if shared else time.monotonic)  # processes share the wall clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()
        self._db = None
        if shared:
            self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS failures(client TEXT NOT NULL, at REAL NOT NULL)")
            self._db.execute("CREATE INDEX IF NOT EXISTS failures_by_client ON failures(client, at)")

    def wait(self, client: str) -> float:
        """Seconds until `client` may try a token again (0: now)."""
        key, now = client_key(client), self.clock()
        if self._db is not None:
            with self._lock:
                last = [float(r[0]) for r in self._db.execute(
                    "SELECT at FROM failures WHERE client = ? AND at > ? ORDER BY at DESC LIMIT ?",
                    (key, now - self.window, self.limit))]
            return max(0.0, min(last) + self.window - now) if len(last) >= self.limit else 0.0
        with self._lock:
            times = self._failures.get(key)
            if times is None:
                return 0.0
            while times and times[0] <= now - self.window:
                times.popleft()
            if not times:
                del self._failures[key]
                return 0.0
            return max(0.0, times[0] + self.window - now) if len(times) >= self.limit else 0.0

    def failed(self, client: str) -> None:
        key, now = client_key(client), self.clock()
        if self._db is not None:
            with self._lock, self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("INSERT INTO failures VALUES (?, ?)", (key, now))
                self._db.execute("DELETE FROM failures WHERE at <= ?", (now - self.window,))  # only the window counts
                self._db.execute("DELETE FROM failures WHERE rowid <= (SELECT MAX(rowid) FROM failures) - ?",
                                 (self.max_clients * self.limit,))  # a bounded table, the oldest going first
            return
        with self._lock:
            times = self._failures.setdefault(key, deque(maxlen=self.limit))
            times.append(now)
            self._failures.move_to_end(key)
            while len(self._failures) > self.max_clients:
                self._failures.popitem(last=False)


class Proxies:
    """The proxies whose forwarded client address and scheme are believed (`--trusted-proxy`); none by default."""

    def __init__(self, trusted: Iterable[str] = ()) -> None:
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for raw in trusted:
            for item in re.split(r"[\s,]+", raw.strip()):
                if not item:
                    continue
                try:
                    self.networks.append(ipaddress.ip_network(item.strip("[]"), strict=False))
                except ValueError:
                    raise InvalidArgument(
                        f"--trusted-proxy {item!r} is not an IP address or network; give one such as 127.0.0.1 or 10.0.0.0/8"
                    ) from None

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, host: str) -> bool:
        try:
            ip = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            return False
        ip = getattr(ip, "ipv4_mapped", None) or ip
        return any(ip in net for net in self.networks)

    def forwarded(self, peer: str, headers: dict[str, str]) -> tuple[str, str | None]:
        """(client address, scheme or None) of a request that came from `peer` (the connection's address).

        Only a trusted peer's `Forwarded` (RFC 7239) or `X-Forwarded-For` /
        `X-Forwarded-Proto` count. The client is the nearest address on the
        forwarded chain that is not itself a trusted proxy, so a client cannot
        put a made-up address ahead of the one its proxy saw.
        """
        if not self.trusts(peer):
            return peer, None
        if "forwarded" in headers:
            elements = [_pairs(e) for e in headers["forwarded"].split(",")]
            hops = [_host(e.get("for", "")) for e in elements]
            protos = [e["proto"] for e in elements if "proto" in e]
        else:
            hops = [_host(h) for h in headers.get("x-forwarded-for", "").split(",")]
            protos = [p.strip() for p in headers.get("x-forwarded-proto", "").split(",")]
        client = peer
        for hop in reversed([h for h in hops if h]):
            if not self.trusts(client):
                break
            client = hop
        scheme = protos[-1].strip().lower() if protos else ""
        return client, scheme if scheme in ("http", "https") else None


def _pairs(element: str) -> dict[str, str]:
    out = {}
    for pair in element.split(";"):
        key, sep, value = pair.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip().strip('"')
    return out


def _host(value: str) -> str:
    """The address of a forwarded `for` value: `[2001:db8::1]:4711` -> `2001:db8::1`, `192.0.2.1:80` -> `192.0.2.1`."""
    value = value.strip().strip('"')
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else ""
    if value.count(":") == 1:
        return value.partition(":")[0]
    return value


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_bind(value: str) -> tuple[str, int]:
    """`[HOST:]PORT` (HOST may be `[::1]`) -> (host, port); the host defaults to 127.0.0.1."""
    text = value.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host = ""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
        if not 0 <= port <= 65535:
            raise ValueError(port)
    except ValueError:
        raise InvalidArgument(f"--http {value!r}: expected [HOST:]PORT such as 8765 or 127.0.0.1:8765") from None
    return host or "127.0.0.1", port


def check_bind(host: str, principals: Principals) -> None:
    """Refuse to serve beyond this machine without a token."""
    if not is_loopback(host) and not principals.required:
        raise InvalidArgument(
            f"refusing to serve on {host} without a token: anyone who can reach it could read and change the memory; "
            "pass --token-file FILE (or --auth FILE, or MEMDIR_TOKEN), or bind to 127.0.0.1"
        )


MAX_OPEN = int(os.environ.get("MEMDIR_MAX_OPEN") or 1000)  # memories a server keeps open at most
RETIRE_SECONDS = 30.0  # an evicted memory is closed this long after, so a request still using it finishes first


def _there(md: Memdir) -> object:
    """What says a memory's tenant is still there: a folder's database file (a drop deletes it, and an open
    connection would read on from the deleted file), else whether the store journals anything (None: nothing)."""
    internal = getattr(md.store, "internal", None)
    if isinstance(internal, Path):
        try:
            st = os.stat(internal / "memdir.db")
        except OSError:
            return None
        return st.st_dev, st.st_ino
    return bool(md.store.journal(limit=1)) or None


class Memories:
    """The servers' open memories: one `Memdir` per principal, opened with the agent-facing defaults.

    At most `max_open` stay open, the least recently used going first, so a
    server that sees 10,000 tenants holds a bounded set of catalogs and caches;
    on PostgreSQL and S3 they share the process's pool or client
    (`memdir.connect`), so connections are bounded by the pool, whatever the
    number of tenants. An evicted memory is closed `RETIRE_SECONDS` later.
    A tenant dropped meanwhile (`memdir db drop-tenant`, in any process) is
    seen through the store at its next request, at most every `recheck`
    seconds: its memory is let go and opened anew, and finds nothing.
    """

    recheck = 1.0  # seconds between two looks at whether an open memory's tenant was dropped

    def __init__(self, root: str | os.PathLike[str], *, transport: str, watch: bool = True,
                 max_open: int | None = None) -> None:
        self.root = root
        self.transport = transport
        self.watch = watch  # follow edits made by hand in memory folders (remember.watch)
        self.max_open = max(1, max_open or MAX_OPEN)
        self._open: OrderedDict[Principal, tuple[Memdir, Memdir, Any]] = OrderedDict()  # -> (view, parent, watcher)
        self._seen: dict[Principal, tuple[float, object]] = {}  # -> when last looked at, what the store was (`_there`)
        self._retired: deque[tuple[float, Memdir, Any]] = deque()
        self._lock = threading.RLock()
        self._shared = connect(root, agent=True) if scheme_of(os.fspath(root)) in ("postgresql", "s3") else None
        folder = os.fspath(root) if scheme_of(os.fspath(root)) == "file" else None
        self._watchers = Watchers(str(folder_path(folder))) if watch and folder is not None else None  # one per root
        self.opened = 0  # memories opened since start
        self.evicted = 0  # memories let go to stay within max_open

    def actor(self, principal: Principal) -> str:
        if principal.name != "default":
            return f"{self.transport}:{principal.name}"
        return os.environ.get("MEMDIR_ACTOR") or f"{self.transport}:{default_actor()}"

    def of(self, principal: Principal) -> Memdir:
        with self._lock:
            got = self._open.get(principal)
            if got is not None and not self._dropped(principal, got[1]):
                self._open.move_to_end(principal)
                return got[0]
            self._close_retired(time.monotonic() - RETIRE_SECONDS)
            got = self._open[principal] = self._open_for(principal)
            self._seen[principal] = (time.monotonic(), _there(got[1]))
            self.opened += 1
            while len(self._open) > self.max_open:
                if not self.evicted:
                    log.warning("memdir: %d memories open, the most this server keeps (MEMDIR_MAX_OPEN); the least "
                                "recently used are closed as new tenants come", self.max_open)
                _, (_, parent, watcher) = self._open.popitem(last=False)
                self._retired.append((time.monotonic(), parent, watcher))
                self.evicted += 1
            return got[0]

    def _dropped(self, principal: Principal, md: Memdir) -> bool:
        """Whether the tenant of this open memory was dropped since it was opened; if so it is let go."""
        now = time.monotonic()
        when, was = self._seen.get(principal, (0.0, None))
        if now - when < self.recheck:
            return False
        there = _there(md)
        self._seen[principal] = (now, there or was)
        if not was or there == was:
            return False
        self.let_go(principal.tenant)
        return True

    def let_go(self, tenant: str | None) -> None:
        """Close every open memory of `tenant` (dropped): its next request opens it anew."""
        with self._lock:
            for principal in [p for p in self._open if p.tenant == tenant]:
                _, parent, watcher = self._open.pop(principal)
                self._seen.pop(principal, None)
                self._retired.append((time.monotonic(), parent, watcher))  # closed once requests using it are done

    def _open_for(self, principal: Principal) -> tuple[Memdir, Memdir, Any]:
        actor = self.actor(principal)
        if self._shared is not None:
            md = self._shared.tenant(principal.tenant, actor=actor)
        else:
            md = open_memdir(self.root, tenant=principal.tenant, actor=actor, agent=True)
        watcher = md if self._watchers is not None and self._watchers.add(md) else None
        if principal.scoped:
            return md.scope(read=principal.read or (), write=principal.write or ()), md, watcher
        return md, md, watcher

    def _close_retired(self, before: float) -> None:
        while self._retired and self._retired[0][0] <= before:
            _, md, watcher = self._retired.popleft()
            if watcher is not None and self._watchers is not None:
                self._watchers.remove(watcher)
            md.close()

    def stats(self) -> dict[str, int]:
        """What the server holds: memories open now (and the most it keeps), opened and evicted since start."""
        with self._lock:
            return {"open": len(self._open), "max_open": self.max_open, "opened": self.opened,
                    "evicted": self.evicted, "retired": len(self._retired)}

    def ping(self) -> None:
        """Raise `StoreError` unless the store answers (for `/readyz`)."""
        ping_location(os.fspath(self.root))

    def close(self) -> None:
        with self._lock:
            for _, parent, watcher in self._open.values():
                self._retired.append((0.0, parent, watcher))
            self._open.clear()
            if self._watchers is not None:
                self._watchers.stop()
            self._close_retired(float("inf"))
