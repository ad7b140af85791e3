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

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from .auth import PRINCIPAL, Memories, Principal, Principals

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from . import tools

INDEX_URI = "memdir://index"
FILE_PREFIX = "memdir://file/"
FILE_TEMPLATE = FILE_PREFIX + "{path}"
PROMPT_NAME = "memory_conventions"
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
PAGE = 500  # resources per resources/list page

logger = logging.getLogger(__name__)


class Sessions:
    """Finds the caller's principal and its `tools.Session` for one request."""

    def __init__(self, principals: Principals, memories: Memories) -> None:
        self.principals = principals
        self.memories = memories
        self.shared: dict[Any, tools.Session] = {}

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

        from . import tools

        principal = self.principal(ctx)
        connection = getattr(ctx.session, "_connection", None)  # the SDK keeps it private; its .state is public
        state = self.shared
        if connection is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            state = connection.state
        key = ("memdir.session", principal)
        found = state.get(key)
        if found is None:
            found = state[key] = tools.Session(self.memories.of(principal))
        return found


def server(principals: Principals, memories: Memories) -> Server[Any]:
    """A low-level MCP `Server` for the principals; run it over stdio (`run_stdio`) or HTTP (`memdir.http`)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError

    from . import __version__, tools
    from .errors import MemdirError

    sessions = Sessions(principals, memories)
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
        try:
            if params.name in readers:  # sub-millisecond: a thread hop would cost more than the call
                result = session.handle(params.name, arguments)
            else:  # a write waits for fsync: keep the event loop free for other clients
                result = await anyio.to_thread.run_sync(session.handle, params.name, arguments)
        except Exception as e:  # a bug, not a refusal: still a tool error, so the agent loop goes on
            logger.exception("tool %s failed", params.name)
            result = tools.Result(f"{params.name} failed inside memdir ({type(e).__name__}: {e}); this is a bug", is_error=True)
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
                text = memory.text
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
        "memdir",
        version=__version__,
        title="memdir",
        description="Memory made of plain markdown files: an index, topic files, a journal with undo",
        instructions=tools.prompt(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


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


def run_stdio(app: Server[Any]) -> None:
    """Serve one client over stdin and stdout until it closes them."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await app.run(read, write, app.create_initialization_options())

    anyio.run(main)
