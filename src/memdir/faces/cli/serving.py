"""Commands that serve a memory: serve (MCP over stdio or HTTP, the API and the page), ui, watch, demo."""

from __future__ import annotations

import json
import os
import sys
import threading

import click

from ...remember.watch import Watcher
from ..auth import Memories, Principal, Principals, Proxies, check_bind, parse_bind, read_token_file
from ..demo import run, scratch
from ..settings import Settings
from .base import Context


@click.command()
@click.argument("folder", required=False)
@click.pass_obj
def demo(obj: Context, folder: str | None) -> None:
    """A guided tour: builds a sample memory in a scratch folder, one labelled CLI step at a time.

    The tour never touches your memory: it runs in a new temporary folder
    (printed at the start), or in FOLDER (or --root) if that is empty or new.
    """
    run(scratch(folder or (obj.root if obj.root_given else None)))


@click.command()
@click.option("--http", "bind", metavar="[HOST:]PORT",
              help="Serve over HTTP instead of stdio: MCP at /mcp, the HTTP API at /v1. HOST defaults to 127.0.0.1.")
@click.option("--tenant", "serve_tenant", default=None, help="Tenant to serve (overrides the global --tenant).")
@click.option("--scope-read", multiple=True, metavar="PREFIX",
              help="A folder the agent may read; repeat for several. With any --scope-* option it sees nothing else.")
@click.option("--scope-write", multiple=True, metavar="PREFIX",
              help="A folder the agent may write (and read); repeat for several. Without it a scoped agent only reads.")
@click.option("--token", envvar="MEMDIR_TOKEN", default=None,
              help="With --http: require 'Authorization: Bearer TOKEN' on every request. Env: MEMDIR_TOKEN "
                   "(safer than the command line, which other users can see).")
@click.option("--token-file", type=click.Path(dir_okay=False), default=None, help="With --http: read the token from FILE.")
@click.option("--auth", "auth_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="With --http: a TOML file of principals, one [tokens.NAME] table each with token (or token_sha256), "
                   "and optional tenant, scope-read, scope-write.")
@click.option("--trusted-proxy", "trusted_proxies", multiple=True, metavar="ADDRESS", envvar="MEMDIR_TRUSTED_PROXY",
              help="With --http: a reverse proxy (IP address or network, e.g. 127.0.0.1 or 10.0.0.0/8; repeat for several) "
                   "whose Forwarded / X-Forwarded-For / X-Forwarded-Proto headers are believed: the client address "
                   "wrong tokens count against, and https for the page's Secure cookie. Default: none. "
                   "Env: MEMDIR_TRUSTED_PROXY (space-separated).")
@click.option("--open", "open_page", is_flag=True, help="With --http: open the web page in the browser once serving.")
@click.option("--jwt-secret-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="With --http: accept JWT bearer tokens signed (HS256/384/512) with the secret in FILE.")
@click.option("--jwt-jwks", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="With --http: accept JWT bearer tokens signed by a public key of the JWKS file FILE.")
@click.option("--jwt-audience", default=None, metavar="AUD", help="The audience (aud) every JWT must name; required with JWTs.")
@click.option("--jwt-issuer", default=None, metavar="ISS", help="The issuer (iss) every JWT must name, if given.")
@click.option("--jwt-claims", default="", metavar="KEY=CLAIM,...",
              help="Which claims name the tenant, principal and scopes (default tenant=tenant,principal=sub,scopes=scope). "
                   "Scopes memdir reads: memdir:read[:PREFIX] and memdir:write[:PREFIX] (no PREFIX: the whole tenant); "
                   "none: the whole tenant; any other memdir... scope refuses the token.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="With --http: serve from this many processes over one socket (uvicorn workers).")
@click.pass_context
def serve(
    ctx: click.Context,
    bind: str | None,
    serve_tenant: str | None,
    scope_read: tuple[str, ...],
    scope_write: tuple[str, ...],
    token: str | None,
    token_file: str | None,
    auth_file: str | None,
    trusted_proxies: tuple[str, ...] = (),
    open_page: bool = False,
    jwt_secret_file: str | None = None,
    jwt_jwks: str | None = None,
    jwt_audience: str | None = None,
    jwt_issuer: str | None = None,
    jwt_claims: str = "",
    workers: int = 1,
) -> None:
    """Serve the memory to an agent over MCP (stdio, or HTTP with --http).

    Writes are limited to 60 per minute per tenant unless memdir.toml or
    MEMDIR_WRITES_PER_MINUTE says otherwise. Binding --http beyond loopback
    needs a token.

    \b
    Claude Code:  claude mcp add --transport stdio memdir -- memdir --root /path/to/memory serve
    Over HTTP:    memdir serve --http 8765
                  claude mcp add --transport http memdir http://127.0.0.1:8765/mcp
    HTTP API:     curl http://127.0.0.1:8765/v1/index
    Web page:     http://127.0.0.1:8765/ in a browser (`memdir ui` opens it)
    Operations:   /healthz, /readyz (no token), /metrics (Prometheus, behind the token)
    """
    obj: Context = ctx.obj
    scoped = bool(scope_read or scope_write)
    default = Principal("default", obj.tenant_name(serve_tenant),
                        scope_read if scoped else None, scope_write if scoped else None)
    principals = Principals(default)
    if bind is None:
        given = [f"--{n.replace('_', '-')}" for n in ("token", "token_file", "auth_file", "jwt_secret_file", "jwt_jwks",
                                                    "jwt_audience", "jwt_issuer", "jwt_claims", "workers")
                 if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE]
        if ctx.get_parameter_source("trusted_proxies") == click.core.ParameterSource.COMMANDLINE:
            given.append("--trusted-proxy")
        if open_page:
            given.append("--open")
        if given:
            raise click.UsageError(f"{', '.join(given)} apply to --http only; stdio is private to the client that started it")
    else:
        if token and token_file:
            raise click.UsageError("give one token: --token (or MEMDIR_TOKEN) or --token-file, not both")
        if token_file:
            token = read_token_file(token_file)
        host, port = parse_bind(bind)
        settings = Settings(root=os.fspath(obj.root), tenant=default.tenant, scope_read=scope_read, scope_write=scope_write,
                            token=token, auth_file=auth_file, jwt_secret_file=jwt_secret_file, jwt_jwks=jwt_jwks,
                            jwt_audience=jwt_audience, jwt_issuer=jwt_issuer, jwt_claims=jwt_claims,
                            trusted_proxies=trusted_proxies, host=host)
        principals = settings.principals()  # the same the workers build, JWTs included
        check_bind(host, principals)
    Proxies(trusted_proxies)  # a bad --trusted-proxy fails here
    # An MCP client reads a stdio server's stderr as its errors (Claude Code logs every line as [ERROR]):
    # the banner is for a person who started it at a terminal.
    person = bind is not None or sys.stdin.isatty()
    obj.prepare_root(say=person)
    memories = Memories(obj.root, transport="mcp" if bind is None else "http")
    try:
        for principal in principals.all:  # open them all now, so a bad tenant or scope fails at start
            memories.of(principal)
        from .. import mcp

        if bind is None and person:
            click.echo(f"memdir: serving {os.path.abspath(obj.root)} over MCP on stdin/stdout (an MCP client runs this)", err=True)
        if bind is None:
            mcp.serve_stdio(principals, memories)
        else:
            from .. import asgi, http

            def started(url: str) -> str:
                if open_page:  # in a thread: a terminal browser runs until it quits, and the server must answer it
                    threading.Thread(target=_open_browser, args=(url + "/",), daemon=True).start()
                return http.banner(url, os.path.abspath(obj.root), principals.required)

            sock = http.listen(host, port)
            if workers > 1:
                memories.close()  # each worker opens its own
                asgi.run_workers(settings, sock, workers, started)
            else:
                app, _ = asgi.build(settings, memories)
                http.run(app, sock, started)
    finally:
        if bind is not None:
            click.echo(f"memdir: stopped; {_held(memories)}", err=True)
        memories.close()


def _held(memories: Memories) -> str:
    stats = memories.stats()
    return (f"held {stats['open']} memories open (the most {stats['max_open']}), opened {stats['opened']}, "
            f"evicted {stats['evicted']}")


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except Exception:  # noqa: BLE001 - no browser is not a reason to stop serving
        opened = False
    if not opened:
        click.echo(f"memdir: no web browser found here; open {url} in one", err=True)


@click.command()
@click.option("--http", "bind", metavar="[HOST:]PORT", default="127.0.0.1:0", show_default=True,
              help="Where to serve (port 0 picks a free one).")
@click.pass_context
def ui(ctx: click.Context, bind: str) -> None:
    """Open the web page: read, search, edit and undo the memory in a browser.

    Serves like `memdir serve --http` (MCP and the HTTP API too) on loopback and
    opens the page in the web browser; Ctrl-C stops. With a token or an auth
    file, use `memdir serve --http PORT --token-file FILE --open`.
    """
    ctx.invoke(serve, bind=bind, open_page=True)




@click.command("watch")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per change: path, and whether it is now changed or deleted.")
@click.pass_obj
def watch(obj: Context, as_json: bool) -> None:
    """Follow edits made to the memory folder by hand or by other tools until Ctrl-C.

    Each added, changed or deleted topic file is journaled as an `external`
    change (so `memdir undo` works on it) and MEMORY.md, `ls` and search
    follow at once. `memdir serve` does the same by itself; run this when
    nothing else keeps the memory open. Exit codes: 0 on Ctrl-C, 1 when the
    memory is not a folder or watchfiles is missing.
    """

    md = obj.memdir()

    def show(changed: list[str]) -> None:
        for path in changed:
            kind = "changed" if md.list(path) else "deleted"
            click.echo(json.dumps({"path": path, "change": kind}) if as_json else f"{kind} {path}")

    watcher = Watcher(md, on_change=show)
    click.echo(f"memdir: watching {watcher.root} (Ctrl-C to stop)", err=True)
    with watcher:
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


def register(main: click.Group) -> None:
    for command in (demo, serve, ui, watch):
        main.add_command(command)
