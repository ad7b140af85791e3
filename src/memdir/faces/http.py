"""The HTTP server: the MCP endpoint (`/mcp`) and a small JSON API (`/v1`) for apps that are not MCP clients.

Every route is a thin layer over `Memdir`: parse the request, call one method
for the caller's principal, format the answer. Bodies are JSON unless the
request says otherwise: `GET /v1/files/{path}` and `GET /v1/index` return raw
markdown for `Accept: text/markdown`, and `PUT /v1/files/{path}` takes either
JSON (`{"body": ..., "description": ...}`) or the raw file as `text/markdown`.
The ETag of a file is its version; `If-Match` makes a write or delete a
compare-and-swap (412 if the file changed) and `If-None-Match: *` makes a
write create-only. Errors are `{"error": {"type", "message", ...}}`.

Starlette and uvicorn come with the `mcp` SDK (the `memdir[mcp]` extra).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .. import errors, pages
from ..core.memdir import ANY, Memdir
from ..recall import context as context_mod
from ..remember import capture as capture_mod
from ..remember import forget as forget_mod
from ..stores.base import redact
from ..web.page import Page
from .auth import PRINCIPAL, Memories, Principal, Principals, Proxies, Throttle, is_loopback
from .openapi import document
from .tools import not_text

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)
MAX_BODY = 1024 * 1024  # bytes read from a request at most; Memdir's own limits are far lower
MAX_ANSWER = 1024 * 1024  # bytes of files or lines one answer carries at most (a page)
# Seconds a client has to send a request's headers (slow-header clients are cut off); env MEMDIR_HEADER_TIMEOUT.
HEADER_TIMEOUT = float(os.environ.get("MEMDIR_HEADER_TIMEOUT") or 10.0)
LIST_PAGE = 1000  # files per GET /v1/files page at most
# A transcript POST /v1/sessions takes at most, counted before it is parsed: lines of a text (a long session's
# JSONL has a few thousand) and messages of a list. A longer one is captured from its file (`memdir capture`).
CAPTURE_LINES = 20_000
CAPTURE_TURNS = 5_000
MARKDOWN = "text/markdown; charset=utf-8"



class ApiError(Exception):
    """An HTTP-level refusal (bad header, body, parameter) with its status."""

    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers or {}


def error(status: int, kind: str, message: str, headers: dict[str, str] | None = None, **fields: Any) -> JSONResponse:
    body = {"type": kind, "message": message, **{k: v for k, v in fields.items() if v is not None}}
    # the error's type in a header too, so the metrics count refusals by reason without reading the body
    return JSONResponse({"error": body}, status_code=status, headers={**(headers or {}), "X-Memdir-Error": kind})


def memdir_error(e: errors.MemdirError, precondition: bool = False) -> JSONResponse:
    status = errors.status_of(e)
    headers = {}
    if isinstance(e, errors.RateLimited):
        headers["Retry-After"] = str(max(1, math.ceil(e.retry_after)))
    if isinstance(e, errors.Conflict) and precondition:
        status = 412
    return error(status, type(e).__name__, e.message, headers, path=e.path, limit=e.limit, actual=e.actual)


# ---------------------------------------------------------------- request helpers


def etag(version: str) -> str:
    return f'"{version}"'


def _tag(header: str, name: str) -> str:
    value = header.strip()
    if "," in value:
        raise ApiError(400, "BadRequest", f"{name}: give one ETag, got {value!r}")
    if value.startswith("W/"):
        raise ApiError(400, "BadRequest", f"{name}: weak ETags cannot guard a write; send the ETag of a GET as it came")
    return value.strip('"')


def _expect(request: Request, md: Memdir, path: str) -> tuple[Any, bool]:
    """The `expect=` for a write or delete from If-Match / If-None-Match, and whether one was given."""
    match, none_match = request.headers.get("if-match"), request.headers.get("if-none-match")
    if match is not None and none_match is not None:
        raise ApiError(400, "BadRequest", "send If-Match or If-None-Match, not both")
    if none_match is not None:
        if none_match.strip() != "*":
            raise ApiError(400, "BadRequest", f"If-None-Match on a write must be '*' (create only), got {none_match!r}")
        return None, True
    if match is None:
        return ANY, False
    if match.strip() == "*":  # any version, but the file must exist: pin the one there now
        return md.read(path).version, True
    return _tag(match, "If-Match"), True


def _wants_markdown(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return ("text/markdown" in accept or "text/plain" in accept) and "application/json" not in accept


def _int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise ApiError(400, "BadRequest", f"{name}={raw!r} is not valid; use a whole number from {low} to {high}")
    return value


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "").lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise ApiError(400, "BadRequest", f"{name}={raw!r} is not valid; use true or false")


async def _body(request: Request) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise ApiError(413, "LimitExceeded", f"the request body is {int(length):,} bytes; the most accepted is {MAX_BODY:,}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise ApiError(413, "LimitExceeded", f"the request body is over {MAX_BODY:,} bytes; memories are far smaller")
        chunks.append(chunk)
    return b"".join(chunks)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ApiError(400, "BadRequest", f"the body is not UTF-8 (byte {e.start}); send UTF-8 text") from None


_WRITE_FIELDS = {"body": str, "name": str, "description": str, "type": str, "tags": list}


def _field(fields: dict[str, Any], key: str, what: str) -> Any:
    """The type a body's field must have, or a 400 naming the fields `what` takes."""
    if key not in fields:
        raise ApiError(400, "BadRequest", f"unknown field {key!r}; {what} takes {', '.join(fields)}")
    return fields[key]


async def _write_arguments(request: Request) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    data = await _body(request)
    if kind in ("text/markdown", "text/plain"):
        return {"body": _text(data)}
    if kind != "application/json":
        raise ApiError(
            415, "UnsupportedMediaType",
            f"Content-Type {kind or '(none)'!r} is not accepted; send application/json {{\"body\": ...}} or the file as text/markdown",
        )
    try:
        args = json.loads(_text(data))
    except json.JSONDecodeError as e:
        raise ApiError(400, "BadRequest", f"the body is not valid JSON ({e.msg} at line {e.lineno}); send an object") from None
    except RecursionError:
        raise ApiError(400, "BadRequest", "the body nests too deeply to be a write; send an object with body (and name, description, type, tags)") from None
    broken = not_text(args)
    if broken:
        raise ApiError(400, "BadRequest", f"{broken}; send UTF-8 text (a JSON \\u escape needs both halves of a pair)")
    if not isinstance(args, dict):
        raise ApiError(400, "BadRequest", f"the body must be a JSON object with body (and name, description, type, tags), got {type(args).__name__}")
    for key, value in args.items():
        want = _field(_WRITE_FIELDS, key, "a write")
        if value is not None and not isinstance(value, want):
            raise ApiError(400, "BadRequest", f"{key} must be {'a list of strings' if want is list else 'a string'}, got {value!r}")
    if not isinstance(args.get("body"), str):
        raise ApiError(400, "BadRequest", "the JSON body needs a 'body' field: the markdown (it may start with frontmatter)")
    return args


# ---------------------------------------------------------------- the API


class Api:
    """The `/v1` routes for the principals of one server."""

    def __init__(self, memories: Memories) -> None:
        self.memories = memories

    def memdir(self, request: Request) -> Memdir:
        principal: Principal = request.scope[PRINCIPAL]
        return self.memories.of(principal)

    def routes(self) -> list[Route]:
        def route(path: str, handler: Callable[[Request], Awaitable[Response]], *methods: str) -> Route:
            return Route(path, self._guarded(handler), methods=list(methods))

        return [
            route("/", self.home, "GET"),
            route("/openapi.json", self.openapi, "GET"),
            route("/v1/files", self.list_files, "GET"),
            route("/v1/files/{path:path}", self.get_file, "GET"),
            route("/v1/files/{path:path}", self.put_file, "PUT"),
            route("/v1/files/{path:path}", self.delete_file, "DELETE"),
            route("/v1/index", self.index, "GET"),
            route("/v1/search", self.search, "GET"),
            route("/v1/context", self.context, "GET"),
            route("/v1/history", self.history, "GET"),
            route("/v1/history/{path:path}", self.history, "GET"),
            route("/v1/undo/{path:path}", self.undo, "POST"),
            route("/v1/sessions", self.capture, "POST"),
            route("/v1/forget", self.forget, "POST"),
        ]

    @staticmethod
    def _guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except ApiError as e:
                return error(e.status, e.kind, e.message, e.headers)
            except errors.MemdirError as e:
                return memdir_error(e)
            except Exception as e:  # a bug or a failing backend: still one line of JSON, and the server goes on
                logger.exception("%s %s failed", request.method, request.url.path)
                return error(500, "InternalError", f"{request.method} {request.url.path} failed inside memdir "
                             f"({type(e).__name__}); this is a bug: retry once, then report it")

        run.__name__ = handler.__name__
        return run

    async def home(self, request: Request) -> Response:
        return JSONResponse({"name": "memdir", "mcp": "/mcp", "api": "/v1", "openapi": "/openapi.json"})

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(document())

    async def list_files(self, request: Request) -> Response:
        md = self.memdir(request)
        folder = request.query_params.get("folder", "")
        offset = _int(request, "offset", 1, 1, 1 << 40)
        limit = _int(request, "limit", LIST_PAGE, 1, LIST_PAGE)
        entries = await run_in_threadpool(md.list, folder)
        page = pages.items(entries, offset, limit, max_items=LIST_PAGE, max_bytes=MAX_ANSWER,
                           size=lambda e: len(json.dumps(e.to_dict(), ensure_ascii=False).encode()) + 2)
        return JSONResponse({"folder": folder, "files": [e.to_dict() for e in page.items], "total": page.total,
                             "offset": offset, "next_offset": page.next})

    async def get_file(self, request: Request) -> Response:
        md = self.memdir(request)
        m = await run_in_threadpool(md.read, request.path_params["path"])
        headers = {"ETag": etag(m.version)}
        wanted = request.headers.get("if-none-match")
        if wanted is not None and wanted.strip() in (etag(m.version), m.version, "*"):
            return Response(status_code=304, headers=headers)
        paged = "offset" in request.query_params or "limit" in request.query_params
        offset = _int(request, "offset", 1, 1, 1 << 40)
        limits = md.limits  # whatever memdir may write comes back whole; a bigger (hand-placed) file in pages
        page = pages.lines(m.text, offset, _int(request, "limit", 0, 1, 1 << 40) or None,
                           max_lines=max(limits.max_lines, limits.read_max_lines),
                           max_bytes=max(limits.max_bytes, limits.read_max_bytes))
        if not paged and page.whole:
            if _wants_markdown(request):
                return Response(m.text, media_type=MARKDOWN, headers=headers)
            return JSONResponse(m.to_dict(), headers=headers)
        if page.offset > max(page.total, 1):
            raise ApiError(400, "BadRequest", f"offset={offset} is past the end of {m.path} ({page.total} lines)")
        headers["X-Memdir-Lines"] = f"{page.offset}-{page.end}/{page.total}"
        if page.next is not None:
            headers["X-Memdir-Next-Offset"] = str(page.next)
        if _wants_markdown(request):
            return Response(page.text + "\n" if page.lines else "", media_type=MARKDOWN, headers=headers)
        return JSONResponse({"path": m.path, "version": m.version, "lines": page.total, "offset": page.offset,
                             "end": page.end, "next_offset": page.next, "cut": list(page.cut), "text": page.text},
                            headers=headers)

    async def put_file(self, request: Request) -> Response:
        md = self.memdir(request)
        path = request.path_params["path"]
        args = await _write_arguments(request)
        try:
            expect, precondition = await run_in_threadpool(_expect, request, md, path)
        except errors.NotFound as e:  # If-Match: * on a file that does not exist
            raise ApiError(412, "Conflict", f"{e.path} does not exist (If-Match: *); create it without If-Match") from None
        body = args.pop("body")
        try:
            m = await run_in_threadpool(lambda: md.write(path, body, expect=expect, **args))
        except errors.MemdirError as e:
            return memdir_error(e, precondition)
        out = {"path": m.path, "change": m.change, "version": m.version, "lines": m.lines, "size": m.size}
        return JSONResponse(out, status_code=201 if m.change == "created" else 200, headers={"ETag": etag(m.version)})

    async def delete_file(self, request: Request) -> Response:
        md = self.memdir(request)
        path = request.path_params["path"]
        if request.headers.get("if-none-match") is not None:
            raise ApiError(400, "BadRequest", "If-None-Match does not apply to a delete; use If-Match with the ETag you read")
        expect, precondition = await run_in_threadpool(_expect, request, md, path)
        try:
            m = await run_in_threadpool(lambda: md.delete(path, expect=expect))
        except errors.MemdirError as e:
            return memdir_error(e, precondition)
        return JSONResponse({"path": m.path, "change": "deleted", "lines": m.lines, "undo": f"POST /v1/undo/{m.path}"})

    async def index(self, request: Request) -> Response:
        md = self.memdir(request)
        folder = request.query_params.get("folder", "")
        text = await run_in_threadpool(md.index, folder)
        if _wants_markdown(request):
            return Response(text, media_type=MARKDOWN)
        return JSONResponse({"folder": folder, "text": text})

    async def search(self, request: Request) -> Response:
        md = self.memdir(request)
        query = request.query_params.get("q", "")
        if not query.strip():
            raise ApiError(400, "BadRequest", "q is empty; give the words to search for, e.g. /v1/search?q=launch+date")
        k = _int(request, "k", 10, 1, 100)
        folder = request.query_params.get("folder", "")
        mode = request.query_params.get("mode", "auto")
        types = request.query_params.getlist("type")
        since = request.query_params.get("since")
        hits = await run_in_threadpool(lambda: md.search(query, k=k, mode=mode, prefix=folder, types=types, since=since))
        return JSONResponse({"query": query, "hits": [h.to_dict() for h in hits]})

    async def context(self, request: Request) -> Response:
        """What an agent should see this turn: `?q=` (optional), `budget`, `include` (repeatable)."""
        md = self.memdir(request)
        query = request.query_params.get("q") or None
        budget = _int(request, "budget", 2000, 100, 100_000)
        include = request.query_params.getlist("include")
        ctx = await run_in_threadpool(lambda: context_mod.build(md, query, budget=budget, include=include))
        if _wants_markdown(request):
            return Response(ctx.text, media_type=MARKDOWN)
        return JSONResponse(ctx.to_dict())

    async def history(self, request: Request) -> Response:
        md = self.memdir(request)
        path = request.path_params.get("path")
        limit = _int(request, "limit", 20, 1, 1000)
        content = _flag(request, "content")
        records = await run_in_threadpool(lambda: md.history(path, limit=limit))
        return JSONResponse({"path": path, "records": [r.to_dict(content=content) for r in records]})

    async def undo(self, request: Request) -> Response:
        md = self.memdir(request)
        m = await run_in_threadpool(md.undo, request.path_params["path"])
        out: dict[str, Any] = {"path": m.path, "change": m.change}
        if m.change != "deleted":
            out["version"] = m.version
        return JSONResponse(out)

    async def capture(self, request: Request) -> Response:
        """Capture one conversation (`memdir.capture`): `{"session_id", "transcript", "at"}`, the transcript
        as text (plain, JSON messages, JSONL) or a list of messages. A transcript with nothing to keep is
        still an answer (status skipped), never an error: capture leaves a trace of every attempt."""
        md = self.memdir(request)
        args = await _capture_arguments(request)
        md = await run_in_threadpool(md.prepaid, "sessions/")  # the rate token before the work, not after it
        done = await run_in_threadpool(lambda: capture_mod.capture(md, args["session_id"], args["transcript"],
                                                                   at=args.get("at"), event="http"))
        return JSONResponse(done.to_dict(), status_code=201 if done.change == "created" else 200)


    async def forget(self, request: Request) -> Response:
        """Forget for good (`remember.forget`): `{"path"}` erases a memory and its history, `{"text"}` or
        `{"pattern"}` redacts everywhere (a principal without a scope only); `"dry_run": true` says what would go.
        Only a principal given the right may (`forget = true` in the auth file, the JWT scope `memdir:forget`)."""
        principal: Principal = request.scope[PRINCIPAL]
        if not principal.forget:
            raise ApiError(403, "Forbidden", f"principal {principal.name!r} may not forget; the operator grants it "
                           "(forget = true in the auth file, or the JWT scope memdir:forget)")
        try:
            args = json.loads(_text(await _body(request)))
        except (json.JSONDecodeError, RecursionError):
            raise ApiError(400, "BadRequest", "the body must be a JSON object: {\"path\"} or {\"text\"}") from None
        fields = {"path": str, "text": str, "pattern": str, "ignore_case": bool, "dry_run": bool}
        if not isinstance(args, dict) or [k for k in args if not isinstance(args[k], _field(fields, k, "a forget"))]:
            raise ApiError(400, "BadRequest", "the body must be a JSON object of path or text or pattern (strings), "
                           "ignore_case and dry_run (true or false)")
        md, dry = self.memdir(request), bool(args.get("dry_run"))
        if ("path" in args) == ("text" in args or "pattern" in args):
            raise ApiError(400, "BadRequest", "give path (erase a memory) or text or pattern (redact), one of them")
        if "path" in args:
            if dry:
                return JSONResponse((await run_in_threadpool(forget_mod.plan, md, args["path"]))[0].to_dict())
            return JSONResponse((await run_in_threadpool(forget_mod.erase, md, args["path"])).to_dict())
        if principal.scoped:
            raise ApiError(403, "Forbidden", "redacting reaches every file and journal record of the tenant; "
                           "it needs a principal without a scope")
        done = await run_in_threadpool(lambda: forget_mod.redact(
            md, args.get("text"), pattern=args.get("pattern"), ignore_case=bool(args.get("ignore_case")), dry_run=dry))
        return JSONResponse(done.to_dict())


_CAPTURE_FIELDS: dict[str, tuple[type, ...]] = {"session_id": (str,), "transcript": (str, list), "at": (str,)}


async def _capture_arguments(request: Request) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise ApiError(415, "UnsupportedMediaType",
                       f"Content-Type {kind or '(none)'!r} is not accepted; send application/json "
                       '{"session_id": ..., "transcript": ...}')
    try:
        args = json.loads(_text(await _body(request)))
    except (json.JSONDecodeError, RecursionError):
        raise ApiError(400, "BadRequest", "the body is not a JSON object; send {\"session_id\": ..., \"transcript\": ...}") from None
    if not isinstance(args, dict):
        raise ApiError(400, "BadRequest", f"the body must be a JSON object with session_id and transcript, got {type(args).__name__}")
    for key, value in args.items():
        want = _field(_CAPTURE_FIELDS, key, "a capture")
        if not isinstance(value, want):
            raise ApiError(400, "BadRequest", f"{key} must be {' or '.join(t.__name__ for t in want)}, got {type(value).__name__}")
    missing = [k for k in ("session_id", "transcript") if k not in args]
    if missing:
        raise ApiError(400, "BadRequest", f"the body needs {' and '.join(missing)}: the conversation's id and its text or messages")
    transcript = args["transcript"]
    count, most, what = ((transcript.count("\n") + (not transcript.endswith("\n")), CAPTURE_LINES, "lines") if isinstance(transcript, str)
                         else (len(transcript), CAPTURE_TURNS, "messages"))
    if count > most:
        raise ApiError(413, "LimitExceeded", f"the transcript has {count:,} {what}; a capture over HTTP takes at most "
                       f"{most:,}: capture a longer session from its file (memdir capture SESSION_ID FILE)")
    return args


# ---------------------------------------------------------------- the guard


class Guard:
    """ASGI middleware in front of everything: the Host check, the cross-site check and the bearer token.

    Bound to a loopback address, only loopback Host headers are served (a web
    page cannot reach the memory through DNS rebinding). A request that changes
    memory must not come from another site's page (`_cross_site`), token or no
    token. With tokens, every request needs `Authorization: Bearer <token>`;
    the principal it names is put in the ASGI scope for the routes and the MCP
    tools, and a client that sent too many wrong ones waits (`auth.Throttle`,
    shared with the page). Behind a proxy named with `--trusted-proxy`, the
    client address and scheme it forwards replace the connection's in the scope
    (so the page's cookie is `Secure` behind a TLS proxy); from anyone else
    those headers count for nothing.
    """

    def __init__(self, app: ASGIApp, principals: Principals, *, loopback: bool, page: Any = None,
                 proxies: Proxies | None = None, throttle: Throttle | None = None) -> None:
        self.app = app
        self.principals = principals
        self.loopback = loopback
        self.page = page  # the web page (`web.Page`): its own login cookie, and a CSRF token in each form
        self.proxies = proxies or Proxies()
        self.throttle = throttle or Throttle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        peer = scope.get("client") or ("", 0)
        client, scheme = self.proxies.forwarded(str(peer[0]), headers)
        if client != peer[0] or scheme is not None:  # what a trusted proxy says the client and its scheme were
            scope["client"] = (client, 0 if client != peer[0] else peer[1])
            if scheme is not None:
                scope["scheme"] = scheme if scope["type"] == "http" else {"http": "ws", "https": "wss"}[scheme]
        if self.loopback and not _loopback_host(headers.get("host", "")):
            response = error(421, "MisdirectedRequest", "this server answers only to localhost, 127.0.0.1 and [::1] host names")
            await response(scope, receive, send)
            return
        page = self.page is not None and self.page.owns(scope["path"], headers)
        refused = _cross_site(scope.get("method", "GET"), headers, forms=page)
        if refused:
            response = error(403, "Forbidden", f"cross-site request refused: {refused}; "
                             "memdir changes memory only for requests from this server's own origin or a non-browser client")
            await response(scope, receive, send)
            return
        if scope["path"].startswith("/.well-known/"):
            # Clients probe for OAuth metadata (RFC 9728) before using a token; there is none: say so, not 401.
            response = error(404, "NotFound", f"no {scope['path']} here; this server takes a bearer token, not OAuth")
            await response(scope, receive, send)
            return
        if page:
            await self.page(scope, receive, send)
            return
        wait = self.throttle.wait(client) if self.principals.required else 0.0
        if wait:  # before the token is looked at: a blocked client learns nothing of it
            seconds = max(1, math.ceil(wait))
            response = error(429, "RateLimited", f"too many wrong tokens from this address; wait {seconds} s and try again",
                             {"Retry-After": str(seconds)})
            await response(scope, receive, send)
            return
        principal = self.principals.authenticate(headers.get("authorization"))
        if principal is None:
            missing = "authorization" not in headers
            if not missing:
                self.throttle.failed(client)
            message = (
                "this server needs a bearer token: send the header 'Authorization: Bearer <token>'"
                if missing else "the bearer token is not valid for this server; check the token you were given"
            )
            response = error(401, "Unauthorized", message, {"WWW-Authenticate": 'Bearer realm="memdir"'})
            await response(scope, receive, send)
            return
        scope[PRINCIPAL] = principal
        await self.app(scope, receive, send)


_READ_METHODS = {"GET", "HEAD", "OPTIONS"}
_SIMPLE_TYPES = {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}


def _cross_site(method: str, headers: dict[str, str], *, forms: bool = False) -> str | None:
    """Why a state-changing request looks sent by a web page of another site (CSRF), or None.

    Browsers mark their requests: `Sec-Fetch-Site` says whose page sent it and
    `Origin` names that page. A non-browser client sends neither. A POST with a
    body type a form or a no-cors fetch may send without a preflight is refused
    too, whatever the headers say, so no CORS-simple request changes memory;
    except with `forms`, for the web page's own forms, which carry a CSRF token.
    """
    if method.upper() in _READ_METHODS:
        return None
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site and site not in ("same-origin", "none"):
        return f"Sec-Fetch-Site is {site!r}"
    origin = headers.get("origin")
    if origin is not None and not _same_origin(origin, headers.get("host", "")):
        return f"Origin {origin!r} is not this server"
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if method.upper() == "POST" and kind in _SIMPLE_TYPES and not forms:
        return f"a POST with Content-Type {kind} is what a web page may send to any site; send application/json or no body"
    return None


def _same_origin(origin: str, host: str) -> bool:
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == host.strip().lower()


def _loopback_host(host: str) -> bool:
    name = host.strip()
    if name.startswith("["):
        name = name[: name.find("]") + 1]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    return is_loopback(name)


async def _not_found(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return error(405, "MethodNotAllowed", f"{request.method} is not served on {request.url.path}; see /openapi.json",
                     dict(exc.headers or {}))
    return error(exc.status_code, "NotFound" if exc.status_code == 404 else "HTTPError",
                 f"no route {request.method} {request.url.path}; see /openapi.json for the routes")


def build(principals: Principals, memories: Memories, *, host: str, mcp: Any = None,
          proxies: Proxies | None = None, extra: list[Route] | None = None, shared: str | None = None) -> ASGIApp:
    """The ASGI app: the `/v1` API, `/openapi.json`, the web page (`/ui/`), and `/mcp` when given a low-level MCP server.

    `proxies` are the proxies whose forwarded client address and scheme count (none by default); `extra`
    routes sit behind the same guard (`/metrics`); `shared` is the folder the worker processes of one server
    share (`serve --workers N`), where the page's sessions and the wrong-token counts live."""
    routes = Api(memories).routes() + list(extra or ())
    if mcp is None:
        app = Starlette(routes=routes)
    else:
        app = mcp.streamable_http_app(streamable_http_path="/mcp", host=host, custom_starlette_routes=routes)
    app.add_exception_handler(HTTPException, _not_found)
    inner: ASGIApp = app
    if mcp is not None:  # each MCP session its principal's (faces.mcp loads the SDK: only a server with MCP does)
        from .mcp import Sessions

        inner = Sessions(app, mcp.session_manager)
    throttle = Throttle(path=None if shared is None else os.path.join(shared, "throttle.db"))  # API, MCP and page
    return Guard(inner, principals, loopback=is_loopback(host), page=Page(principals, memories, throttle, shared=shared),
                 proxies=proxies, throttle=throttle)


def listen(host: str, port: int) -> socket.socket:
    """Bind the listening socket (so a busy port is a clear error, and port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP by number: asyncio then sets TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise errors.InvalidArgument(f"cannot listen on {host}:{port} ({e.strerror}); pick another port or stop what uses it") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def config(app: ASGIApp, *, header_timeout: float = HEADER_TIMEOUT, **options: Any) -> Any:
    """uvicorn's settings for memdir: its h11 protocol with a header timeout (see `_protocol`)."""
    import uvicorn

    # proxy_headers off: uvicorn would believe X-Forwarded-* from any loopback peer; the Guard believes --trusted-proxy only
    options = {"log_level": "warning", "lifespan": "on", "timeout_graceful_shutdown": 3, "proxy_headers": False, **options}
    return uvicorn.Config(app, http=_protocol(header_timeout), **options)


def _protocol(seconds: float) -> type[Any]:
    """uvicorn's h11 protocol, plus a deadline for a request's headers.

    uvicorn closes a connection idle after a response (`timeout_keep_alive`),
    but not one that connects and then sends its headers a byte at a time: a
    few hundred such clients would hold every socket. Here a connection must
    finish each request's headers within `seconds` of connecting or of its
    previous response, or it is closed.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = self.loop.call_later(seconds, self._expired)

        def _expired(self) -> None:
            waiting = self.cycle is None or self.cycle.response_complete  # no request under way: still in its headers
            if waiting and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline


def run(app: ASGIApp, sock: socket.socket, banner: Callable[[str], str]) -> None:
    """Serve until interrupted; prints `banner(url)` once the socket is bound."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    server = uvicorn.Server(config(app))

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            print(banner(f"http://{shown}:{port}"), flush=True)
        await task

    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # pragma: no cover - uvicorn handles the signal itself
        pass
    finally:
        sys.stdout.flush()


def banner(url: str, root: str, token: bool) -> str:
    """The one line `memdir serve --http` prints: where it serves, and how to point an agent at it."""
    header = " --header 'Authorization: Bearer <token>'" if token else ""
    return (
        f"memdir: serving {redact(root)} - web page at {url}/, MCP at {url}/mcp, HTTP API at {url}/v1 - connect Claude Code with: "
        f"claude mcp add --transport http memdir {url}/mcp{header}  (Ctrl-C stops; `memdir demo` is the guided tour)"
    )
