"""The MCP server: memdir's tool set, the index and topic files as resources, the conventions as a prompt.

Built on the official `mcp` SDK's low-level `Server` (the `memdir[mcp]`
extra), because the tools are data (`faces.tools.TOOLS`: JSON Schema and
annotations), not Python signatures for the SDK to derive schemas from. Each
tool call goes to a `tools.Session`, which never raises: a refusal comes back
as a tool result with `isError` and the one-line message as its text.

One `Conversation` (a `tools.Session`: what the model has read) per principal
and connection: the SDK enters the server's lifespan once per connection it
runs (stdio, where one process is one client, and in process) and once for an
HTTP app, where a handshake-protocol client names its session in the
`mcp-session-id` header; 2026-07-28 clients, which have no connection state,
share one per principal. A conversation's requests take turns in the order
they came (a FIFO lock), then read-only tools run on the event loop (they
take well under a millisecond) and writes, which wait for fsync, in a worker
thread.

Over stdio the SDK's own transport serves (`serve_stdio`), with two small
additions of ours (`_Stdio`): a request the SDK cannot parse still gets an
answer under its own id, and stdin's end waits for every answer owed.

This module is imported only by `memdir serve`, so `memdir --help` never loads the SDK.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import signal
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.server import stdio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel.server import Server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .. import pages
from ..core.limits import Limits
from ..core.memdir import Memdir
from ..errors import MemdirError
from ..model import Entry
from ..recall.team import PREFIX, Team
from ..version import __version__
from . import tools
from .auth import PRINCIPAL, Memories, Principal, Principals

INDEX_URI = "memdir://index"
FILE_PREFIX = "memdir://file/"
FILE_TEMPLATE = FILE_PREFIX + "{path}"
PROMPT_NAME = "memory_conventions"
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
PAGE = 500  # resources per resources/list page
NAME = "memdir"
DESCRIPTION = "Memory made of plain markdown files: an index, topic files, a journal with undo"
SESSION_HEADER = "mcp-session-id"  # how a handshake-protocol client over HTTP names its session
KEPT = 10_000  # conversations kept at most (the SDK's HTTP session manager keeps as many sessions open)
SESSIONS_PER_PRINCIPAL = 64  # MCP sessions a principal holds over HTTP at most (MEMDIR_MCP_SESSIONS, read at start)

logger = logging.getLogger(__name__)


@dataclass
class Conversation:
    """One client's memory, what its model has read (`session`), and the turn its requests take, one at a time."""

    md: Memdir
    session: tools.Session
    turn: anyio.Lock = field(default_factory=anyio.Lock)  # FIFO: requests are served in the order they came


class Conversations:
    """The conversations of one connection (stdio, in process) or of one HTTP app: the server's lifespan state.

    A low-level handler gets no per-connection state from the SDK in public
    (`Connection.state` is behind a private attribute), but the SDK enters the
    lifespan once per connection it runs and once per HTTP app; over HTTP, a
    handshake-protocol client's `mcp-session-id` tells its sessions apart.
    """

    def __init__(self, principals: Principals, memories: Memories, team: Path | None = None) -> None:
        self.principals = principals
        self.memories = memories
        self.team = team  # a local server's folder: its project's team memory is `team/` (`recall.team`)
        self.open: OrderedDict[tuple[Principal, str | None], Conversation] = OrderedDict()

    def principal(self, ctx: Any) -> Principal:
        request = ctx.request
        if request is None:  # stdio, or in process
            return self.principals.default
        principal = getattr(request, "scope", {}).get(PRINCIPAL)
        if not isinstance(principal, Principal):  # the HTTP guard always sets it; refuse rather than guess
            raise MCPError(-32600, "no authenticated principal for this request")
        return principal

    def of(self, ctx: Any) -> Conversation:
        """The conversation of this request, on the memory `Memories` holds for its principal now: every
        request asks it, so a busy conversation stays recently used, and one whose memory was evicted (and
        closed) goes on with the memory opened again, keeping what its model has read."""
        principal = self.principal(ctx)
        handshake = ctx.request is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        key = (principal, ctx.request.headers.get(SESSION_HEADER) if handshake else None)
        md = self.memories.of(principal)
        found = self.open.get(key)
        if found is not None:
            self.open.move_to_end(key)  # kept in order of use: the longest idle goes first
            if found.md is not md:
                found.md, found.session.md = md, md.for_agent()
            return found
        shared = None if self.team is None or principal.scoped else Team(md, self.team, actor=md.actor, agent=True)
        found = self.open[key] = Conversation(md, tools.Session(md, team=shared))
        if len(self.open) > KEPT:
            self.open.popitem(last=False)
        return found


def call(session: tools.Session, name: str, arguments: dict[str, Any]) -> tools.Result:
    """One tool call, as the SDK's handler makes it: never raises."""
    refused = arguments.get(REFUSED)
    if isinstance(refused, str):  # a call the transport could not read whole (see _Stdio)
        return tools.Result(refused, is_error=True)
    try:
        return session.handle(name, arguments)
    except Exception as e:  # a bug, not a refusal: still a tool error, so the agent loop goes on
        logger.exception("tool %s failed", name)
        return tools.Result(f"{name} failed inside memdir ({type(e).__name__}: {e}); this is a bug", is_error=True)


def structured(result: tools.Result) -> dict[str, Any] | None:
    """The result's data with the text the model is meant to read as its first key, `text`.

    Claude Code and Codex hand the model only `structuredContent` when a result
    has it (the `content` text goes nowhere), so the memory text, the undo hint
    and the "replaced without reading" warning must be in it; a client that
    passes `content` on gets the same text. The data's own `text` (a file's
    page, the index) is that text already, or a part of it: it is not sent twice.
    """
    if result.data is None:
        return None
    return {"text": result.text, **{k: v for k, v in result.data.items() if k != "text"}}


def server(principals: Principals, memories: Memories, team: Path | None = None) -> Server[Any]:
    """A low-level MCP `Server` for the principals; run it over stdio (`serve_stdio`) or HTTP (`faces.http`).
    With `team` (a folder), its project's team memory is served beside each memory, under `team/`."""
    listed = [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.parameters,
            annotations=types.ToolAnnotations(
                title=t.title,
                read_only_hint=t.annotations.get("readOnlyHint"),
                destructive_hint=t.annotations.get("destructiveHint"),
                idempotent_hint=t.annotations.get("idempotentHint"),
                open_world_hint=False,  # the memory folder is all these tools touch
            ),
        )
        for t in tools.TOOLS
    ]
    # Search can read and rank many files: it runs in a worker thread like the writes.
    readers = {t.name for t in tools.TOOLS if t.annotations.get("readOnlyHint")} - {"search_memory"}
    prompt = types.Prompt(
        name=PROMPT_NAME,
        title="Memory conventions",
        description="When to read memory, when to save, and how to write a good memory file",
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    def conversation(ctx: Any) -> Conversation:
        held: Conversations = ctx.lifespan_context
        return held.of(ctx)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        talk = conversation(ctx)
        arguments = params.arguments or {}
        async with talk.turn:  # before either path: a read never overtakes the write before it
            if params.name in readers or isinstance(arguments.get(REFUSED), str):  # a thread hop would cost more
                result = call(talk.session, params.name, arguments)
            else:  # a write waits for fsync: keep the event loop free for other clients
                result = await anyio.to_thread.run_sync(call, talk.session, params.name, arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            structured_content=structured(result),
            is_error=result.is_error,
        )

    index = types.Resource(uri=INDEX_URI, name="MEMORY.md", title="Memory index", mime_type="text/markdown",
                           description="The index of every memory file: read it first")

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        talk = conversation(ctx)
        start = _cursor(params.cursor if params else None)
        def listed() -> list[Entry]:  # yours, then the team's of the project this runs in (`recall.team`)
            shared = None if talk.session.team is None else talk.session.team.memory()
            return talk.md.list() + ([] if shared is None else [replace(e, path=PREFIX + e.path) for e in shared.list()])

        async with talk.turn:
            entries = await anyio.to_thread.run_sync(listed)
        total = len(entries) + 1  # the index, then every file (the team's under team/, read like any)
        found = [
            index if i == 0 else types.Resource(
                uri=FILE_PREFIX + quote(entries[i - 1].path, safe="/"), name=entries[i - 1].path,
                title=entries[i - 1].name, description=entries[i - 1].description, mime_type="text/markdown",
                size=entries[i - 1].size,
            )
            for i in range(start, min(start + PAGE, total))
        ]
        after = start + PAGE
        return types.ListResourcesResult(resources=found, next_cursor=str(after) if after < total else None)

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=FILE_TEMPLATE, name="memory file", title="A memory topic file",
            description="One topic file by its path, e.g. memdir://file/project/flock.md", mime_type="text/markdown",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        talk = conversation(ctx)
        md, uri = talk.md, str(params.uri)
        try:
            async with talk.turn:
                if uri == INDEX_URI:
                    text = md.index()
                elif uri.startswith(FILE_PREFIX):
                    md, path, prefix = talk.session.at(unquote(uri[len(FILE_PREFIX) :]))  # team/...: the team's
                    memory = md.read(path)
                    talk.session.seen.add(prefix + memory.path)  # the model has it now: overwriting it is no surprise
                    text = _first_page(prefix + memory.path, memory.text, md.limits)
                else:
                    raise MCPError(RESOURCE_NOT_FOUND, f"unknown resource {uri!r}; use {INDEX_URI} or {FILE_TEMPLATE}")
        except MemdirError as e:
            raise MCPError(RESOURCE_NOT_FOUND, str(e)) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT_NAME:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}; this server has {PROMPT_NAME!r}")
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=tools.prompt()))
        return types.GetPromptResult(description=prompt.description, messages=[message])

    return Server(
        NAME,
        version=__version__,
        title=NAME,
        description=DESCRIPTION,
        instructions=tools.prompt(),
        lifespan=lambda _: contextlib.nullcontext(Conversations(principals, memories, team)),  # entered once per connection
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


class Sessions:
    """ASGI middleware before the SDK's streamable HTTP app: whose each MCP session is, and how many a principal holds.

    The principal the guard authenticated is handed to the SDK as its `AuthenticatedUser`, so a session
    answers only the principal that opened it (the SDK answers another one's requests, a DELETE included,
    404 as if it did not exist). A principal holds at most `per_principal` sessions: opening one more closes
    its least recently used (a DELETE of it through the SDK), so one principal cannot fill the server's
    sessions (the SDK's 10,000) and leave everyone else with 503 until they expire.
    """

    def __init__(self, app: Any, manager: Any, per_principal: int | None = None) -> None:
        self.app, self.manager = app, manager
        self.per_principal = max(1, per_principal or int(os.environ.get("MEMDIR_MCP_SESSIONS") or SESSIONS_PER_PRINCIPAL))
        self.held: OrderedDict[Principal, OrderedDict[str, None]] = OrderedDict()  # a principal's sessions, by use

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        principal = scope.get(PRINCIPAL) if scope["type"] == "http" and scope["path"] == "/mcp" else None
        if not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        scope["user"] = _user(principal)
        headers = dict(scope["headers"])
        asked = headers.get(SESSION_HEADER.encode(), b"").decode("latin-1") or None
        mine = self.held.setdefault(principal, OrderedDict())
        self.held.move_to_end(principal)
        if asked is None and scope.get("method") == "POST":
            while len(mine) >= self.per_principal:
                await self._close(mine.popitem(last=False)[0], scope)
        elif asked is not None and asked in mine:
            mine.move_to_end(asked)
        seen: dict[str, Any] = {}

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = int(message["status"])
                seen["session"] = dict(message.get("headers", [])).get(SESSION_HEADER.encode(), b"").decode("latin-1")
            await send(message)

        await self.app(scope, receive, sending)
        status, made = seen.get("status", 500), seen.get("session")
        if asked is None and made and status < 400:
            mine[made] = None
        elif asked is not None and (status == 404 or (scope.get("method") == "DELETE" and status < 400)):
            mine.pop(asked, None)  # gone: expired, or closed by its client
        if not mine:
            self.held.pop(principal, None)

    async def _close(self, session: str, scope: Any) -> None:
        """End one of the principal's sessions as its client would (a DELETE), answering nobody."""
        keep = {b"host", b"origin"}
        closing = {**scope, "method": "DELETE", "query_string": b"",
                   "headers": [(k, v) for k, v in scope["headers"] if k in keep] + [
                       (SESSION_HEADER.encode(), session.encode("latin-1"))]}

        async def nothing() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def dropped(message: Any) -> None:
            return None

        await self.manager.handle_request(closing, nothing, dropped)
        logger.info("memdir: closed the least recently used MCP session of %s (%d is the most one holds)",
                    scope[PRINCIPAL].name, self.per_principal)


def _user(principal: Principal) -> AuthenticatedUser:
    """The SDK's user for a principal: sessions are compared by all it is (name, tenant and scope)."""
    digest = hashlib.sha256(repr(principal).encode()).hexdigest()
    return AuthenticatedUser(AccessToken(token="", client_id=principal.name, scopes=[], subject=digest))


def _first_page(path: str, text: str, limits: Limits) -> str:
    """The file, or its first page and where to read on when it is over the read caps."""
    page = pages.lines(text, max_lines=limits.read_max_lines, max_bytes=limits.read_max_bytes)
    if page.whole:
        return text
    more = f"; read on with read_memory_file(path=\"{path}\", offset={page.next})" if page.next else ""
    return f"{page.text}\n[lines 1-{page.end} of {page.total}{more}]\n"


def _cursor(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        value = int(cursor)
    except ValueError:
        value = -1
    if value < 0:
        raise MCPError(-32602, f"cursor {cursor!r} is not one this server gave; start again without a cursor")
    return value


def serve_stdio(principals: Principals, memories: Memories) -> None:
    """Serve one client over stdin and stdout with the SDK's stdio transport until stdin closes and all is answered."""
    app = server(principals, memories, team=Path.cwd())  # a client starts it in the project's folder
    wire = _Stdio()
    # Ctrl-C, or a client closing the server the polite way (Claude Code sends SIGINT, then SIGTERM 100 ms later):
    # stop at once, as SIGTERM does. Python's KeyboardInterrupt would wait for ever on the thread reading stdin;
    # a write under way is safe either way (a crash leaves the old content or the new).
    with contextlib.suppress(ValueError):  # ValueError: not the main thread, where signals are not ours to set
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    async def main() -> None:
        async with stdio.stdio_server(stdin=wire) as (read, write):  # type: ignore[arg-type]
            wire.out = write
            await app.run(read, wire, app.create_initialization_options())

    anyio.run(main)


REFUSED = "\x00memdir.refused"  # an argument name no schema has: carries the refusal of a malformed call
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}]')  # a JSON string, or a bracket outside one


class _Stdio:
    """stdin for the SDK's stdio transport, and the stream its server writes answers to.

    The transport drops a line it cannot parse without a reply, and the client
    waits for ever: a request whose id can be read at the top of its line
    (however deep the rest) is answered under that id, a tool call with a
    one-line tool error, anything else with a JSON-RPC error. And at the end of
    stdin the SDK cancels what is still running, so the end is passed on only
    once every request read has its answer.
    """

    def __init__(self) -> None:
        wire = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)  # fd 0 reads nothing from now, as under the SDK's own stdin
        os.dup2(null, 0)
        os.close(null)
        self.lines = aiter(anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace")))
        self.owed: Counter[types.RequestId] = Counter()  # ids of requests read and not yet answered
        self.drained: anyio.Event | None = None
        self.out: Any = None  # the SDK's own write stream, set once it runs

    def __aiter__(self) -> _Stdio:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await anext(self.lines)
            except StopAsyncIteration:
                while self.owed:
                    self.drained = anyio.Event()
                    await self.drained.wait()
                raise
            given = await self.take(line)
            if given is not None:
                return given

    async def take(self, line: str) -> str | None:
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError:
            return await self.mend(line)
        if isinstance(message, types.JSONRPCRequest):
            self.owed[coerce_request_id(message.id)] += 1
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            given_up = (message.params or {}).get("requestId")
            if isinstance(given_up, (int, str)) and not isinstance(given_up, bool):
                self.owed.pop(coerce_request_id(given_up), None)  # the SDK never answers a request once it is cancelled
        return line

    async def mend(self, line: str) -> str | None:
        """A line the SDK cannot read: a request it can answer instead, None once answered here, or the line as it is."""
        try:
            message, deep = json.loads(line), False
            surrogate = tools.not_text(message)
        except RecursionError:  # too deep to read whole: its top (id, method, name, envelope) still says who waits for what
            message, deep, surrogate = _shallow(line), True, None
        except ValueError:
            return line  # no JSON: nobody can be told
        ident = message.get("id") if isinstance(message, dict) and "method" in message else None
        if not isinstance(ident, (int, str)) or isinstance(ident, bool) or tools.not_text(ident):
            return line  # a notification, or no request at all: the SDK drops it, and nobody waits for it
        params = message["params"] if isinstance(message.get("params"), dict) else {}
        name, meta = params.get("name"), params.get("_meta")
        problem = ("arguments nest too deeply to be a tool call; send a flat JSON object" if deep else
                   surrogate and f"{tools.not_text(params.get('arguments')) or surrogate}; send UTF-8 text "
                                 "(a JSON \\u escape needs both halves of a pair)")
        if problem and message["method"] == "tools/call" and isinstance(name, str) and not tools.not_text(name):
            keep = {"_meta": meta} if isinstance(meta, dict) and not tools.not_text(meta) else {}  # the stateless envelope
            return await self.take(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",  # (read, and owed)
                                               "params": {"name": name, "arguments": {REFUSED: f"{name}: {problem}"}, **keep}}))
        error = (types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {problem or 'not JSON-RPC'}") if problem
                 else types.ErrorData(code=types.INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 request"))
        await self.out.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=ident, error=error)))
        return None

    async def send(self, item: SessionMessage, /) -> None:
        await self.out.send(item)
        answered = item.message
        if isinstance(answered, (types.JSONRPCResponse, types.JSONRPCError)) and answered.id is not None:
            ident = coerce_request_id(answered.id)
            left = self.owed.pop(ident, 0) - 1
            if left > 0:
                self.owed[ident] = left
            elif not self.owed and self.drained is not None:
                self.drained.set()

    async def aclose(self) -> None:
        await self.out.aclose()

    async def __aenter__(self) -> _Stdio:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _shallow(line: str, depth: int = 6) -> Any:
    """The JSON line with each value nested deeper than `depth` cut to null, or None if that is no JSON either."""
    kept, level, start = [], 0, 0
    for token in _TOKEN.finditer(line):
        if token.group() in ("{", "["):
            level += 1
            if level == depth + 1:
                kept.append(line[start : token.start()] + "null")
        elif token.group() in ("}", "]"):
            if level == depth + 1:
                start = token.end()
            level -= 1
    try:
        return json.loads("".join(kept) + line[start:])
    except (ValueError, RecursionError):
        return None
