"""The MCP server: memdir's tool set, the index and topic files as resources, the conventions as a prompt.

Built on the official `mcp` SDK's low-level `Server` (the `memdir[mcp]`
extra), because the tools are data (`memdir.tools.TOOLS`: JSON Schema and
annotations), not Python signatures for the SDK to derive schemas from. Each
tool call goes to a `tools.Session`, which never raises: a refusal comes back
as a tool result with `isError` and the one-line message as its text.

One `tools.Session` (what the model has read in this conversation) per MCP
connection and principal; connections of the 2026-07-28 protocol, which have
no connection state, share one session per principal (over stdio, one
process is one client). Read-only tools run on the event loop (they take well
under a millisecond); writes, which wait for fsync, run in a worker thread.

The SDK is imported only when a server is built, so `memdir --help` stays fast.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from .. import pages
from ..core.limits import Limits
from .auth import PRINCIPAL, Memories, Principal, Principals

if TYPE_CHECKING:

    from mcp.server.lowlevel.server import Server

    from . import mcp_start, tools

INDEX_URI = "memdir://index"
FILE_PREFIX = "memdir://file/"
FILE_TEMPLATE = FILE_PREFIX + "{path}"
PROMPT_NAME = "memory_conventions"
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
PAGE = 500  # resources per resources/list page
NAME = "memdir"
DESCRIPTION = "Memory made of plain markdown files: an index, topic files, a journal with undo"

logger = logging.getLogger(__name__)


class Sessions:
    """Finds the caller's principal and its `tools.Session` for one request."""

    def __init__(self, principals: Principals, memories: Memories, *, one_connection: bool = False) -> None:
        self.principals = principals
        self.memories = memories
        self.shared: dict[Any, tools.Session] = {}
        # Over stdio there is one connection: its sessions live here, where the fast path (`mcp_start`) finds them too.
        self.connection: dict[Any, tools.Session] | None = {} if one_connection else None

    def principal(self, ctx: Any) -> Principal:
        request = ctx.request
        if request is None:  # stdio, or in process
            return self.principals.default
        principal = getattr(request, "scope", {}).get(PRINCIPAL)
        if not isinstance(principal, Principal):  # the HTTP guard always sets it; refuse rather than guess
            from mcp.shared.exceptions import MCPError

            raise MCPError(-32600, "no authenticated principal for this request")
        return principal

    def session(self, ctx: Any) -> tools.Session:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS


        principal = self.principal(ctx)
        connection = getattr(ctx.session, "_connection", None)  # the SDK keeps it private; its .state is public
        state = self.shared
        if connection is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            state = connection.state if self.connection is None else self.connection
        return self._of(state, principal)

    def stdio(self, modern: bool) -> tools.Session:
        """The session of the stdio client (the default principal), as `session` finds it for the SDK."""
        state = self.shared if modern or self.connection is None else self.connection
        return self._of(state, self.principals.default)

    def _of(self, state: dict[Any, tools.Session], principal: Principal) -> tools.Session:
        from . import tools

        key = ("memdir.session", principal)
        found = state.get(key)
        if found is None:
            found = state[key] = tools.Session(self.memories.of(principal))
        return found


def server_info() -> dict[str, str]:
    """The `serverInfo` of this server as the SDK writes it (the stateless protocol stamps it on every result)."""
    from .. import __version__

    return {"name": NAME, "title": NAME, "version": __version__, "description": DESCRIPTION}


def call(session: tools.Session, name: str, arguments: dict[str, Any]) -> tools.Result:
    """One tool call, for the SDK's handler and the stdio fast path alike: never raises."""
    from . import tools

    refused = arguments.get(REFUSED)
    if isinstance(refused, str):  # a call the transport could not read whole (see _Answerable)
        return tools.Result(refused, is_error=True)
    try:
        return session.handle(name, arguments)
    except Exception as e:  # a bug, not a refusal: still a tool error, so the agent loop goes on
        logger.exception("tool %s failed", name)
        return tools.Result(f"{name} failed inside memdir ({type(e).__name__}: {e}); this is a bug", is_error=True)


def wire_result(result: tools.Result, stamp: dict[str, str]) -> dict[str, Any]:
    """A `CallToolResult` of the 2026-07-28 protocol as the SDK writes it, built without the SDK."""
    body: dict[str, Any] = {"content": [{"text": result.text, "type": "text"}], "isError": result.is_error,
                            "resultType": "complete"}
    if result.data is not None:
        body["structuredContent"] = result.data
    body["_meta"] = {"io.modelcontextprotocol/serverInfo": dict(stamp)}
    return body


def legacy_result(result: tools.Result, version: str) -> dict[str, Any]:
    """A `CallToolResult` of an older protocol version, shaped by the SDK's own per-version serializer."""
    import mcp_types as types
    from mcp_types import methods

    dumped = types.CallToolResult(
        content=[types.TextContent(type="text", text=result.text)], structured_content=result.data,
        is_error=result.is_error,
    ).model_dump(by_alias=True, mode="json", exclude_none=True)
    shaped: dict[str, Any] = methods.serialize_server_result("tools/call", version, dumped)
    return shaped


def legacy_shape(result: tools.Result, version: str) -> dict[str, Any] | None:
    """`legacy_result` without the SDK, or None for a result it might shape otherwise (NaN, an odd type or string).

    The stdio wire uses it before the SDK has loaded, and only for a version
    whose serializer agreed with it on probes at an earlier start (`mcp_start.Wire.witness`).
    """
    if not _plain(result.text) or (result.data is not None and not _plain(result.data)):
        return None
    body: dict[str, Any] = {"content": [{"text": result.text, "type": "text"}], "isError": result.is_error}
    if result.data is not None:
        body["structuredContent"] = result.data
    return body


def _plain(value: Any) -> bool:
    """JSON whose every value the SDK's serializer writes as it is: no NaN or infinity, no lone surrogates, string keys."""
    if value is None or type(value) in (bool, int):
        return True
    if type(value) is float:
        return value - value == 0  # finite (the SDK writes NaN and infinity as null)
    if type(value) is str:
        return value.isascii() or not any("\ud800" <= c <= "\udfff" for c in value)
    if type(value) is list:
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(k) and _plain(v) for k, v in value.items())
    return False


def server(principals: Principals, memories: Memories, sessions: Sessions | None = None) -> Server[Any]:
    """A low-level MCP `Server` for the principals; run it over stdio (`serve_stdio`) or HTTP (`memdir.http`)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError

    from .. import __version__
    from ..errors import MemdirError
    from . import tools

    sessions = sessions or Sessions(principals, memories)
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

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = sessions.session(ctx)
        arguments = params.arguments or {}
        if params.name in readers or isinstance(arguments.get(REFUSED), str):  # a thread hop would cost more
            result = call(session, params.name, arguments)
        else:  # a write waits for fsync: keep the event loop free for other clients
            result = await anyio.to_thread.run_sync(call, session, params.name, arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            structured_content=result.data,
            is_error=result.is_error,
        )

    index = types.Resource(uri=INDEX_URI, name="MEMORY.md", title="Memory index", mime_type="text/markdown",
                           description="The index of every memory file: read it first")

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        md = memories.of(sessions.principal(ctx))
        start = _cursor(params.cursor if params else None)
        entries = await anyio.to_thread.run_sync(md.list)
        total = len(entries) + 1  # the index, then every file
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
        md = memories.of(sessions.principal(ctx))
        uri = str(params.uri)
        try:
            if uri == INDEX_URI:
                text = md.index()
            elif uri.startswith(FILE_PREFIX):
                memory = md.read(unquote(uri[len(FILE_PREFIX) :]))
                sessions.session(ctx).seen.add(memory.path)  # the model has it now: overwriting it is no surprise
                text = _first_page(memory.path, memory.text, md.limits)
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
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


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
        from mcp.shared.exceptions import MCPError

        raise MCPError(-32602, f"cursor {cursor!r} is not one this server gave; start again without a cursor")
    return value


def serve_stdio(principals: Principals, memories: Memories) -> None:
    """Serve one client over stdin and stdout: tool calls answered from the first moment (`mcp_start`), the rest by the SDK."""
    from . import mcp_start

    sessions = Sessions(principals, memories, one_connection=True)
    mcp_start.serve(sessions, lambda: server(principals, memories, sessions), run_stdio)


def run_stdio(app: Server[Any], wire: mcp_start.Wire) -> None:
    """Serve the lines the fast path leaves to the SDK until stdin closes."""
    import anyio
    from mcp.server import stdio

    from . import mcp_start

    async def main() -> None:
        async with stdio.stdio_server(stdin=_Answerable(wire), stdout=mcp_start.Out(wire)) as (read, write):  # type: ignore[arg-type]
            await app.run(read, write, app.create_initialization_options())

    anyio.run(main)


_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')
_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z_]{1,64})"')


def _head(line: str) -> dict[str, Any] | None:
    """The id, method and tool name of a request too deep to parse, read from its first kilobyte."""
    head = line[:1024]
    found = _ID.search(head)
    if found is None:
        return None
    name = _NAME.search(head)
    return {"id": json.loads(found.group(1)), "method": "tools/call" if '"tools/call"' in head else "",
            "params": {"name": name.group(1) if name else None, "arguments": {}}}


REFUSED = "\x00memdir.refused"  # an argument name no schema has: carries the refusal of a malformed call


class _Answerable:
    """stdin lines for the SDK's stdio transport, so that every request gets an answer.

    The SDK drops a line it cannot parse without a reply, and the client waits
    for ever. A request whose JSON Python can still read (a lone surrogate, which
    the SDK's parser refuses) is passed on with its arguments replaced by the
    refusal, so the tool answers with a one-line error; any other request
    becomes a call to a method that does not exist, so the client gets an error
    with its id. The connection goes on either way.
    """

    def __init__(self, wire: mcp_start.Wire) -> None:
        self.wire = wire

    def __aiter__(self) -> _Answerable:
        return self

    async def __anext__(self) -> str:
        line = await self.wire.next_line()
        if line is None:
            raise StopAsyncIteration
        line = _answerable(line)
        self.wire.given(line)
        return line


def _answerable(line: str) -> str:
    """The line as it came, or a request the SDK can read that answers the malformed one."""
    import mcp_types as types

    from . import tools

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return line
    except Exception:
        pass
    try:
        message = json.loads(line)
        problem = None
    except RecursionError:  # too deep to read: its head still says who is waiting for what
        message, problem = _head(line), "arguments nest too deeply to be a tool call; send a flat JSON object"
    except ValueError:
        message = None
    if not isinstance(message, dict) or "id" not in message or not isinstance(message["id"], (int, str)):
        return line  # a notification or no JSON-RPC at all: the SDK logs it, nobody waits for it
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    name = params.get("name") if isinstance(params, dict) else None
    if problem is None and arguments is not None and tools.not_text(arguments):
        problem = f"{tools.not_text(arguments)}; send UTF-8 text (a JSON \\u escape needs both halves of a pair)"
    if message.get("method") == "tools/call" and isinstance(name, str) and problem and not tools.not_text(name):
        meta = params.get("_meta") if isinstance(params, dict) else None
        keep = {"_meta": meta} if isinstance(meta, dict) and not tools.not_text(meta) else {}  # the stateless envelope
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "method": "tools/call",
                           "params": {"name": name, "arguments": {REFUSED: f"{name}: {problem}"}, **keep}})
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "method": "memdir/malformed-request"})
