"""The web page for the people whose memory it is: read, search, edit, see what changed, undo.

`memdir serve --http` serves it at `/` (for a browser; API clients asking `/`
for JSON still get JSON) and under `/ui/`. It is server-rendered HTML (Jinja
templates in `templates/`, CSS and a little plain JavaScript in `static/`), a
thin layer like the API: each view calls the `Memdir` of the request's
principal, and the library's refusals are shown in its own words.

Who may use it is who may use the API: the server's default principal when it
has no tokens, else the principal of a token given once in a login form. A
login starts a session: an HttpOnly, SameSite=Strict cookie naming it, kept by
the server (shared by its workers; a restart logs everyone out; `sessions`
keeps strangers' sessions apart from logged-in ones, and ends one a JWT made
when the token expires). A wrong token, at the login form or in a
bearer header, counts against the client's address in the server's throttle,
which answers 429 once there were too many. Every state change is a form
POST carrying the session's CSRF token, on top of `http.Guard`'s check that
the request comes from this server's own origin. Changes are journaled as
`web:<principal>`, so the feed tells a person's edits from an agent's.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import hmac
import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs, quote

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from .. import dates, errors, model, paths
from ..core import limits as limits_mod
from ..core import reconcile
from ..core.memdir import Memdir, Op
from ..core.opening import default_actor
from ..recall import links as links_mod
from ..remember import rollback
from ..stores.base import Record
from . import conflicts, forgetting, pictures
from . import text as webtext
from .sessions import Session, Sessions

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

logger = logging.getLogger(__name__)
COOKIE = "memdir_session"
MAX_FORM = 1024 * 1024  # bytes of a form at most (a memory is far smaller)


def _dump(principal: Any) -> str:
    """A principal as text a session keeps (the server's `Principal` is a dataclass of strings and tuples)."""
    fields = dataclasses.asdict(principal) if dataclasses.is_dataclass(principal) and not isinstance(principal, type) \
        else principal
    return json.dumps(fields, sort_keys=True)
FEED_PAGE = 50
HISTORY_LIMIT = 200
JOURNAL_SCAN = 5000  # journal records the feed reads at most per request
STATIC = {"memdir.css": "text/css; charset=utf-8", "memdir.js": "text/javascript; charset=utf-8"}
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",  # memories are private: no copies in shared caches or the back button's
}
SINCE = {"": "any time", "today": "today", "24h": "last 24 hours", "7d": "last 7 days", "30d": "last 30 days"}


# ---------------------------------------------------------------- what the server hands the page


class Principal(Protocol):
    """Who a request is (the server's `Principal`): hashable, with a name for the journal."""

    @property
    def name(self) -> str: ...

    def __hash__(self) -> int: ...


class Principals(Protocol):
    """The server's callers: whether a token is required, whose a bearer header is, and when its credential ends."""

    @property
    def required(self) -> bool: ...

    @property
    def default(self) -> Any: ...

    def authenticate(self, authorization: str | None) -> Any: ...

    def expires(self, authorization: str | None) -> float | None: ...


class Memories(Protocol):
    """The server's open memories: one per principal."""

    def of(self, principal: Any) -> Memdir: ...


class Throttle(Protocol):
    """The server's count of wrong tokens per client address (`auth.Throttle`)."""

    def wait(self, client: str) -> float: ...

    def failed(self, client: str) -> None: ...


class _Unthrottled:
    def wait(self, client: str) -> float:
        return 0.0

    def failed(self, client: str) -> None:
        pass


# ---------------------------------------------------------------- one request


class Redirect(Exception):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


@dataclass
class View:
    """What a view needs: the request, its session and principal, the form, and the memory."""

    page: Page
    request: Request
    session: Session
    principal: Principal
    form: dict[str, list[str]]
    md: Memdir

    def arg(self, name: str, default: str = "") -> str:
        values = self.form.get(name)
        if values:
            return values[0]
        return self.request.query_params.get(name, default)

    def args(self, name: str) -> list[str]:
        return self.form.get(name) or self.request.query_params.getlist(name)

    def render(self, template: str, status: int = 200, **values: Any) -> Response:
        return self.page.render(template, self, status, **values)

    def flash(self, message: str, kind: str = "ok", undo: int | None = None) -> None:
        self.session.flash.append({"message": message, "kind": kind, "undo": undo})

    def back(self, default: str = "/") -> str:
        """Where to go after a POST: the form's `next`, if it is a path of this site."""
        return local(self.arg("next"), default)


Handler = Callable[[View], Response]
_LOCAL = re.compile(r"/(?:[^/\\\s\x00-\x1f\x7f][^\\\s\x00-\x1f\x7f]*)?")


def _client(request: Request) -> str:
    """The client's address (the server put a trusted proxy's forwarded one there), for the throttle."""
    return request.client.host if request.client else ""


def local(url: str, default: str = "/") -> str:
    """`url` if it is a path on this site (never `//host`, a backslash or a control character a browser drops)."""
    return url if _LOCAL.fullmatch(url) else default


class Page:
    """The web page as an ASGI app; `http.Guard` hands it the requests it `owns`."""

    def __init__(self, principals: Principals, memories: Memories, throttle: Throttle | None = None, *,
                 shared: str | None = None) -> None:
        """`shared`: the folder the processes of one server share (`serve --workers N`): the sessions live there."""
        self.principals = principals
        self.memories = memories
        self.throttle = throttle or _Unthrottled()
        self.sessions = Sessions(None if shared is None else Path(shared) / "sessions.db", dump=_dump, load=self._load)
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader("memdir.web", "templates"),
            autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
        )
        self.env.filters["u"] = lambda s: quote(str(s), safe="/")
        self.env.globals.update(file_url=webtext.file_url, folder_url=webtext.folder_url, since_choices=SINCE)
        get, post = ("GET", "HEAD"), ("POST",)
        self.app = Starlette(routes=[
            self._route("/", home, get),
            self._route("/ui/list", listing, get),
            self._route("/ui/file/{path:path}", show, get),
            self._route("/ui/file/{path:path}", save, post),
            self._route("/ui/edit/{path:path}", edit, get),
            self._route("/ui/new", new, get),
            self._route("/ui/new", create, post),
            self._route("/ui/delete/{path:path}", delete, post),
            self._route("/ui/rename/{path:path}", rename, post),
            self._route("/ui/forget/{path:path}", forgetting.ask, get),
            self._route("/ui/forget/{path:path}", forgetting.forget, post),
            self._route("/ui/search", search, get),
            self._route("/ui/changes", changes, get),
            self._route("/ui/history/{path:path}", history, get),
            self._route("/ui/undo", undo, post),
            self._route("/ui/restore/{path:path}", restore, post),
            self._route("/ui/pictures", pictures_view, get),
            self._route("/ui/conflicts", conflicts.listed, get),
            self._route("/ui/conflicts", conflicts.settle, post),
            Route("/ui/login", self._login, methods=["GET", "HEAD", "POST"]),
            Route("/ui/logout", self._logout, methods=["POST"]),
            Route("/ui/static/{name}", self._static, methods=["GET", "HEAD"]),
        ])
        self.app.add_exception_handler(HTTPException, self._http_error)

    @staticmethod
    def owns(path: str, headers: dict[str, str]) -> bool:
        """The page's requests: everything under /ui/, and / when a browser asks for HTML."""
        return path.startswith("/ui/") or (path == "/" and "text/html" in headers.get("accept", ""))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    # ------------------------------------------------------------ plumbing

    def memdir(self, principal: Principal) -> Memdir:
        """The principal's memory (as the API has it, written as a person writes), journaling as `web:<name>`.

        Asked of `memories` on every request, never kept here: the server closes the memories it lets go of
        (its least recently used), and one it opens again is a new one."""
        md = copy.copy(self.memories.of(principal).as_person())  # a person's saves keep long files whole
        md.actor = f"web:{principal.name if principal.name != 'default' else default_actor()}"  # as capture does
        return md

    def _load(self, text: str) -> Any:
        """A principal `_dump` wrote (by this process or another worker of the server)."""
        data = json.loads(text)
        if not isinstance(data, dict):
            return data
        return type(self.principals.default)(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})

    def _route(self, path: str, handler: Handler, methods: tuple[str, ...]) -> Route:
        async def run(request: Request) -> Response:
            return await self._run(request, handler)

        run.__name__ = handler.__name__
        return Route(path, run, methods=list(methods))

    async def _run(self, request: Request, handler: Handler) -> Response:
        session = self.sessions.get(request.cookies.get(COOKIE))
        principal = None if session is None else session.principal
        header = request.headers.get("authorization")
        if principal is None and (header or not self.principals.required):
            if header and self.principals.required:
                wait = self.throttle.wait(_client(request))
                if wait:
                    return self._too_many(request, wait)
            principal = self.principals.authenticate(header)
            if principal is None:
                self.throttle.failed(_client(request))
        if principal is None:
            if request.method in ("GET", "HEAD"):
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return self._headers(RedirectResponse("/ui/login?next=" + quote(target, safe=""), 303))
            return self._page_error(request, 401, "log in first: this server needs a token")
        fresh = session is None or session.principal != principal
        if fresh:
            proven = bool(header and self.principals.required)
            session = self.sessions.new(principal, proven=proven,
                                        until=self.principals.expires(header) if proven else None)
        assert session is not None
        form: dict[str, list[str]] = {}
        if request.method == "POST":
            try:
                form = await self._form(request)
            except ValueError as e:
                return self._page_error(request, 400, str(e))
            token = (form.get("csrf") or [""])[0]
            if fresh or not hmac.compare_digest(token.encode(), session.csrf.encode()):
                return self._page_error(request, 403, "this form is stale or did not come from this page "
                                        "(its security token does not match); reload the page and try again")
        view = View(self, request, session, principal, form, self.memdir(principal))
        try:
            response = await run_in_threadpool(handler, view)
        except Redirect as r:
            response = RedirectResponse(r.url, 303)
        except errors.MemdirError as e:
            response = await run_in_threadpool(view.render, "error.html", errors.status_of(e), message=e.message,
                                               title=type(e).__name__)
        except Exception as e:  # a bug or a failing backend: one line on the page, the trace in the log
            logger.exception("%s %s failed", request.method, request.url.path)
            response = self._page_error(request, 500, f"{request.method} {request.url.path} failed inside memdir "
                                        f"({type(e).__name__}); this is a bug: retry once, then report it")
        self.sessions.save(session)  # the messages the next page shows
        if fresh:
            self._cookie(response, request, session.id)
        return self._headers(response)

    @staticmethod
    async def _form(request: Request) -> dict[str, list[str]]:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise ValueError(f"the page's forms send application/x-www-form-urlencoded, not {kind or 'nothing'}")
        size, chunks = 0, []
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_FORM:
                raise ValueError(f"the form is over {MAX_FORM:,} bytes; memories are far smaller")
            chunks.append(chunk)
        try:
            text = b"".join(chunks).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("the form is not UTF-8; send UTF-8 text") from None
        return parse_qs(text, keep_blank_values=True, max_num_fields=2000)

    @staticmethod
    def _cookie(response: Response, request: Request, sid: str) -> None:
        response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/",
                            secure=request.url.scheme == "https")

    @staticmethod
    def _headers(response: Response) -> Response:
        for k, v in HEADERS.items():
            response.headers.setdefault(k, v)
        return response

    def render(self, template: str, view: View | None, status: int = 200, **values: Any) -> Response:
        flashes: list[dict[str, Any]] = []
        if view is not None:
            flashes, view.session.flash = view.session.flash, []
        html = self.env.get_template(template).render(
            view=view, csrf=view.session.csrf if view else "", principal=view.principal if view else None,
            login=self.principals.required, flashes=flashes, here=view.request.url.path if view else "", me=view.md.actor if view else "",
            **values)
        return HTMLResponse(html, status_code=status)

    def _page_error(self, request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        html = self.env.get_template("error.html").render(
            view=None, csrf="", principal=None, login=self.principals.required, flashes=[], here=request.url.path, me="",
            message=message, title={400: "Bad request", 401: "Log in", 403: "Refused", 404: "Not found", 429: "Slow down",
                                    500: "Something broke"}.get(status, "Error"))
        return self._headers(HTMLResponse(html, status_code=status, headers=headers))

    def _too_many(self, request: Request, wait: float) -> Response:
        seconds = max(1, math.ceil(wait))
        return self._page_error(request, 429, f"too many wrong tokens from this address; wait {seconds} s and try again",
                                {"Retry-After": str(seconds)})

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = f"nothing at {request.url.path}; the home page lists the memories" if exc.status_code == 404 \
            else f"{request.method} is not served on {request.url.path}"
        return self._page_error(request, exc.status_code, message)

    async def _static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return self._page_error(request, 404, f"no static file {name}")
        data = resources.files("memdir.web").joinpath("static", name).read_bytes()
        headers = {**HEADERS, "Cache-Control": "public, max-age=3600"}
        return Response(data, media_type=STATIC[name], headers=headers)

    # ------------------------------------------------------------ login

    async def _login(self, request: Request) -> Response:
        session = self.sessions.get(request.cookies.get(COOKIE))
        fresh = session is None
        if session is None:
            session = self.sessions.new(None, proven=False)
        nxt = request.query_params.get("next", "/")
        error, status = "", 200
        if request.method == "POST":
            wait = self.throttle.wait(_client(request))
            if wait:  # before the token is looked at: a blocked client learns nothing of it
                return self._too_many(request, wait)
            try:
                form = await self._form(request)
            except ValueError as e:
                return self._page_error(request, 400, str(e))
            nxt = (form.get("next") or ["/"])[0]
            token = (form.get("token") or [""])[0].strip()
            if fresh or not hmac.compare_digest((form.get("csrf") or [""])[0].encode(), session.csrf.encode()):
                error, status = "this form is stale; it was reloaded, log in again", 403
            else:
                principal = self.principals.authenticate(f"Bearer {token}") if token else None
                if principal is None or not self.principals.required:
                    if token and self.principals.required:
                        self.throttle.failed(_client(request))
                    error, status = ("the token is not valid for this server; check the token you were given"
                                     if token else "give the token you were given for this server"), 401
                else:
                    self.sessions.drop(session.id)  # a new id on login: a session id seen before it is worth nothing
                    session = self.sessions.new(principal, proven=True, until=self.principals.expires(f"Bearer {token}"))
                    moved = RedirectResponse(local(nxt), 303)
                    self._cookie(moved, request, session.id)
                    return self._headers(moved)
        html = self.env.get_template("login.html").render(
            view=None, csrf=session.csrf, principal=None, login=self.principals.required, flashes=[],
            here=request.url.path, me="", next=nxt, error=error, needed=self.principals.required)
        response = HTMLResponse(html, status_code=status)
        if fresh or request.method == "POST":
            self._cookie(response, request, session.id)
        return self._headers(response)

    async def _logout(self, request: Request) -> Response:
        session = self.sessions.get(request.cookies.get(COOKIE))
        form = await self._form(request)
        if session is None or not hmac.compare_digest((form.get("csrf") or [""])[0].encode(), session.csrf.encode()):
            return self._page_error(request, 403, "this form is stale; reload the page and try again")
        self.sessions.drop(session.id)
        response = RedirectResponse("/ui/login" if self.principals.required else "/", 303)
        response.delete_cookie(COOKIE, path="/")
        return self._headers(response)


# ---------------------------------------------------------------- reading


def home(v: View) -> Response:
    folder = paths.folder(v.arg("folder"))
    text = v.md.index(folder)
    sections, notes = webtext.sections(text, folder)
    return v.render("home.html", folder=folder, sections=sections, notes=notes, count=v.md.count(folder),
                    crumbs=_crumbs(folder))


def listing(v: View) -> Response:
    folder = paths.folder(v.arg("folder"))
    entries = v.md.list(folder)
    offset = max(0, _number(v.arg("offset"), 0))
    page = entries[offset:offset + 200]
    return v.render("list.html", folder=folder, entries=page, total=len(entries), offset=offset,
                    crumbs=_crumbs(folder))


def show(v: View) -> Response:
    m = v.md.read(v.request.path_params["path"])
    found = links_mod.of(v.md, m.path)
    first = m.text.count("\n", 0, len(m.text) - len(m.body)) + 1
    html = webtext.render_markdown(m.path, m.body, first, found)
    extra = {k: val for k, val in m.meta.items() if k not in model.KNOWN_KEYS}
    flags = reconcile.problems(m, v.md.limits)  # what a person broke by hand, in the words a write refuses it with
    long = limits_mod.over(m.text, v.md.limits)
    if long is not None:
        flags.append(f"{long}: {reconcile.SPLIT_HINT}")
    return v.render("file.html", m=m, html=html, links=found, extra=extra, types=_types(v.md, m.type),
                    crumbs=_crumbs(paths.parent(m.path)), limits=v.md.limits, flags=flags,
                    may_forget=forgetting.allowed(v.principal))


def edit(v: View) -> Response:
    m = v.md.read(v.request.path_params["path"])
    return v.render("edit.html", m=m, path=m.path, version=m.version, values=_values_of(m), types=_types(v.md, m.type),
                    error="", conflict=None, creating=False, crumbs=_crumbs(paths.parent(m.path)))


def new(v: View) -> Response:
    folder = paths.folder(v.arg("folder"))
    values = {"path": folder, "name": "", "description": "", "type": "", "tags": "", "body": ""}
    return v.render("edit.html", m=None, path="", version="", values=values, types=_types(v.md, None), error="",
                    conflict=None, creating=True, crumbs=_crumbs(folder))


def search(v: View) -> Response:
    query = v.arg("q").strip()
    kinds = [t for t in v.args("type") if t]
    folder = v.arg("folder")
    hits, error = [], ""
    if query:
        try:
            hits = v.md.search(query, k=30, prefix=folder, types=kinds)
        except errors.MemdirError as e:
            error = e.message
    shown = [(h, webtext.highlight(h.snippet, query)) for h in hits if h.sure]
    weaker = [(h, webtext.highlight(h.snippet, query)) for h in hits if not h.sure]  # ranked, but may not answer
    return v.render("search.html", query=query, hits=shown, weaker=weaker, error=error, kinds=kinds, folder=folder,
                    types=_types(v.md, None), status=400 if error else 200)


# ---------------------------------------------------------------- writing


def _values_of(m: Any) -> dict[str, str]:
    meta = m.meta
    return {"path": m.path, "name": str(meta.get("name") or ""), "description": str(meta.get("description") or ""),
            "type": str(meta.get("type") or ""), "tags": ", ".join(m.tags), "body": m.body}


def _values_from(v: View, path: str) -> dict[str, str]:
    values = {k: v.arg(k) for k in ("name", "description", "type", "tags")} | {"path": path}
    return values | {"body": _textarea(v.arg("body"))}


def _textarea(text: str) -> str:
    """What a text editor would save: browsers send a textarea's lines joined by CRLF and without the last newline."""
    text = text.replace("\r\n", "\n")
    return text if not text or text.endswith("\n") else text + "\n"


def _tags(text: str) -> list[str]:
    return [t.strip() for t in text.replace("\n", ",").split(",") if t.strip()]


def save(v: View) -> Response:
    """The edit form and the file view's frontmatter form: `write` with the version read as `expect`."""
    path = paths.topic_path(v.request.path_params["path"])
    version = v.arg("version")
    values = _values_from(v, path)
    metadata_only = "body" not in v.form
    try:
        body = v.md.read(path).body if metadata_only else values["body"]
        m = v.md.write(path, body, name=values["name"], description=values["description"], type=values["type"],
                       tags=_tags(values["tags"]), expect=version or None, absolute_dates=False)  # a hand edit
    except errors.Conflict as e:
        if metadata_only:
            v.flash(e.message, "error")
            raise Redirect(webtext.file_url(path)) from None
        return _conflict(v, path, version, values, e)
    except errors.MemdirError as e:
        if metadata_only:
            v.flash(e.message, "error")
            raise Redirect(webtext.file_url(path)) from None
        return v.render("edit.html", errors.status_of(e), m=None, path=path,
                        version=version, values=values, types=_types(v.md, values["type"]), error=e.message,
                        conflict=None, creating=False, crumbs=_crumbs(paths.parent(path)))
    v.flash(f"Saved {m.path}." if m.change != "unchanged" else f"No change to {m.path}: it already says that.")
    raise Redirect(webtext.file_url(m.path))


def _conflict(v: View, path: str, version: str, values: dict[str, str], e: errors.Conflict) -> Response:
    """Someone wrote the file since it was read: show what they changed and keep what this person typed."""
    try:
        now = v.md.read(path)
    except errors.NotFound:
        now = None
    base = next((r.new for r in v.md.history(path, limit=HISTORY_LIMIT) if r.new_version == version), None)
    conflict = {
        "message": e.message,
        "theirs": None if base is None else webtext.diff(base, None if now is None else now.text),
        "mine": webtext.diff(None if now is None else now.body, values["body"]),
        "now": now,
    }
    return v.render("edit.html", 409, m=now, path=path, version=now.version if now else "", values=values,
                    types=_types(v.md, values["type"]), error="", conflict=conflict, creating=False,
                    crumbs=_crumbs(paths.parent(path)))


def create(v: View) -> Response:
    raw = v.arg("path").strip()
    values = _values_from(v, raw)
    path = raw if raw.lower().endswith(".md") or not raw or raw.endswith("/") else raw + ".md"
    try:
        m = v.md.write(path, values["body"], name=values["name"], description=values["description"],
                       type=values["type"], tags=_tags(values["tags"]), expect=None, absolute_dates=False)
    except errors.MemdirError as e:
        return v.render("edit.html", errors.status_of(e), m=None, path="", version="", values=values,
                        types=_types(v.md, values["type"]), error=e.message, conflict=None, creating=True,
                        crumbs=_crumbs(paths.parent(raw) if "/" in raw else ""))
    v.flash(f"Created {m.path}.")
    raise Redirect(webtext.file_url(m.path))


def delete(v: View) -> Response:
    path = paths.topic_path(v.request.path_params["path"])
    try:
        m = v.md.delete(path, expect=v.arg("version") or None)
    except errors.MemdirError as e:
        v.flash(e.message, "error")
        raise Redirect(webtext.file_url(path)) from None
    seq = v.md.history(m.path, limit=1)[0].seq
    v.flash(f"Deleted {m.path}.", undo=seq)
    raise Redirect(webtext.folder_url(paths.parent(m.path)))


def rename(v: View) -> Response:
    path = paths.topic_path(v.request.path_params["path"])
    dest = v.arg("dest").strip()
    if dest and not dest.lower().endswith(".md"):
        dest += ".md"
    try:
        m = v.md.rename(path, dest, expect=v.arg("version") or None)
    except errors.MemdirError as e:
        v.flash(e.message, "error")
        raise Redirect(webtext.file_url(path)) from None
    seq = v.md.history(m.path, limit=1)[0].seq
    v.flash(f"Renamed {path} to {m.path}.", undo=seq)
    raise Redirect(webtext.file_url(m.path))


# ---------------------------------------------------------------- what changed


@dataclass(frozen=True)
class Change:
    """One journal record as the feed shows it."""

    rec: Record
    diff: webtext.Diff
    later: Record | None  # a newer change to the same file (so this one cannot be undone alone)

    @property
    def where(self) -> str:
        return self.rec.dest or self.rec.path


def _changes_of(md: Memdir, records: list[Record]) -> list[Change]:
    newest: dict[str, Record] = {}
    for path in {p for r in records for p in (r.path, r.dest) if p}:
        top = md.history(path, limit=1)
        if top:
            newest[path] = top[0]
    out = []
    for r in records:
        later = next((newest[p] for p in (r.path, r.dest) if p and p in newest and newest[p].seq != r.seq), None)
        out.append(Change(r, webtext.diff(r.old, r.new), later))
    return out


def _since(value: str) -> str | None:
    """The first journal time a `since` choice lets in (stamps compare as text)."""
    if not value:
        return None
    if value == "today":
        return dt.datetime.now(dt.UTC).date().isoformat()
    return dates.stamp(dates.parse_when(value))


def changes(v: View) -> Response:
    """The feed: the newest changes (at most `JOURNAL_SCAN` are read), filtered by actor, time and path."""
    actor, since, prefix = v.arg("actor"), v.arg("since"), v.arg("path")
    before = _number(v.arg("before"), 0)
    filtered = bool(actor or since or prefix)
    lo, where = _since(since), paths.folder(prefix) if prefix and not prefix.endswith(".md") else prefix
    scanned = v.md.history(limit=JOURNAL_SCAN if filtered or before else FEED_PAGE + 1)
    records = [r for r in scanned if (not actor or r.actor == actor) and (lo is None or r.time >= lo)
               and (not where or r.path.startswith(where) or (r.dest or "").startswith(where))]
    selection = [r.seq for r in records]
    if before:
        records = [r for r in records if r.seq < before]
    page = records[:FEED_PAGE]
    actors = sorted({r.actor for r in v.md.history(limit=1000)} | ({actor} if actor else set()))
    return v.render("changes.html", items=_changes_of(v.md, page), actor=actor, since=since, prefix=prefix,
                    actors=actors, filtered=filtered, selection=selection[:rollback.MAX_SELECTION],
                    too_many=len(selection) > rollback.MAX_SELECTION,
                    more=page[-1].seq if len(records) > FEED_PAGE else None, query=v.request.url.query,
                    capped=len(scanned) == JOURNAL_SCAN, scan=JOURNAL_SCAN)


def history(v: View) -> Response:
    path = paths.topic_path(v.request.path_params["path"])
    records = v.md.history(path, limit=HISTORY_LIMIT)
    if not records:
        raise errors.NotFound(f"{path} has no journaled changes", path=path)
    states = [(r, _state_after(r, path)) for r in records]
    versions = [(r, text) for r, text in states if text is not None]
    by_seq = {r.seq: text for r, text in states}
    b = _number(v.arg("b"), versions[0][0].seq if versions else 0)
    a = _number(v.arg("a"), versions[1][0].seq if len(versions) > 1 else 0)
    compared = None
    if a in by_seq or b in by_seq:
        compared = webtext.diff(by_seq.get(a), by_seq.get(b))
    try:
        current = v.md.read(path).version
    except errors.NotFound:
        current = ""
    return v.render("history.html", path=path, items=_changes_of(v.md, records), a=a, b=b, compared=compared,
                    states=by_seq, current=current, crumbs=_crumbs(paths.parent(path)))


def _state_after(rec: Record, path: str) -> bytes | None:
    """The content `path` had right after the change `rec` (None: no file there)."""
    if rec.dest is not None and rec.path == path and rec.dest != path:
        return None
    return rec.new


def undo(v: View) -> Response:
    """One change (the feed's and the history's Undo) or a selection (the feed's filter): `rollback.undo`."""
    seqs = [_number(s, 0) for s in v.args("seq")]
    try:
        done = rollback.undo(v.md, [s for s in seqs if s > 0])
    except errors.MemdirError as e:
        v.flash(e.message, "error")
        raise Redirect(v.back("/ui/changes")) from None
    what = ", ".join(f"{m.path} ({m.change})" for m in done[:5]) + (f" and {len(done) - 5} more" if len(done) > 5 else "")
    count = f"{len(seqs)} changes" if len(seqs) > 1 else f"change #{seqs[0]}"
    v.flash(f"Undid {count}: {what}." if done else f"Undid {count}: nothing needed to change.")
    raise Redirect(v.back("/ui/changes"))


def restore(v: View) -> Response:
    """Make a file say again what it said after one of its changes (a write, so it is undoable too)."""
    path = paths.topic_path(v.request.path_params["path"])
    seq = _number(v.arg("seq"), 0)
    rec = next((r for r in v.md.history(path, limit=HISTORY_LIMIT) if r.seq == seq), None)
    text = None if rec is None else _state_after(rec, path)
    if text is None:
        v.flash(f"change #{seq} left no content at {path} to restore; pick a version listed with Restore", "error")
        raise Redirect("/ui/history/" + quote(path, safe="/"))
    try:
        v.md.apply([Op.write(path, text.decode("utf-8"), expect=v.arg("version") or None)])
    except errors.MemdirError as e:
        v.flash(e.message, "error")
        raise Redirect("/ui/history/" + quote(path, safe="/")) from None
    v.flash(f"Restored {path} as it was after change #{seq}.")
    raise Redirect(webtext.file_url(path))


# ---------------------------------------------------------------- pictures


def pictures_view(v: View) -> Response:
    health = pictures.capture_health(v.md)
    return v.render("pictures.html", activity=pictures.activity(v.md), size=pictures.size(v.md), health=health,
                    diary=pictures.diary_timeline(v.md))


# ---------------------------------------------------------------- helpers


def _number(text: str, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def _types(md: Memdir, current: str | None) -> list[str]:
    kinds = list(md.limits.types)
    if current and current not in kinds:
        kinds.append(current)
    return kinds


def _crumbs(folder: str) -> list[tuple[str, str]]:
    """(label, url) from the root down to `folder`."""
    out = [("memory", "/")]
    parts = [p for p in folder.split("/") if p]
    for i, part in enumerate(parts):
        out.append((part, webtext.folder_url("/".join(parts[: i + 1]) + "/")))
    return out
