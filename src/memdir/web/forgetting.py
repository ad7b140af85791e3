"""Forgetting a memory for good from the page (`remember.forget.erase`), behind a confirmation.

Only a principal given the right may, as over the API (`POST /v1/forget`: `forget = true` in the auth
file, the JWT scope `memdir:forget`); the server's default principal has it only when the operator gave
it. `/ui/forget/<path>` shows what goes (every name the memory had, the roll-ups made from it, its
journal records, the memories its text was merged into, which stay) and says that it cannot be undone;
the erasure happens only on a POST carrying the session's CSRF token and the box ticked that says so.
Kept apart from `page` so the page's module stays the page's; it takes the view as the small protocol below.
"""

from __future__ import annotations

from typing import Any, Protocol

from starlette.responses import RedirectResponse

from .. import paths
from ..core.memdir import Memdir
from ..errors import Forbidden
from ..remember import forget as forget_mod
from . import text as webtext

CONFIRM = "cannot-be-undone"  # the value of the box a person ticks


class _View(Protocol):
    md: Memdir
    principal: Any
    request: Any

    def arg(self, name: str, default: str = "") -> str: ...

    def render(self, template: str, status: int = 200, **values: Any) -> Any: ...

    def flash(self, message: str, kind: str = "ok", undo: int | None = None) -> None: ...


def allowed(principal: Any) -> bool:
    """Whether `principal` was given the right to forget (the server's `Principal.forget`)."""
    return getattr(principal, "forget", False) is True


def _path(v: _View) -> str:
    path = paths.topic_path(v.request.path_params["path"])
    if not allowed(v.principal):
        raise Forbidden(f"principal {v.principal.name!r} may not forget; the operator grants it (forget = true in "
                        "the auth file, or the JWT scope memdir:forget)", path=path)
    return path


def ask(v: _View) -> Any:
    """What forgetting the memory takes, the warning, and the form that does it."""
    path = _path(v)
    erasure, _ = forget_mod.plan(v.md, path)
    return v.render("forget.html", erasure=erasure, path=path, confirm=CONFIRM, error="")


def forget(v: _View) -> Any:
    path = _path(v)
    if v.arg("confirm") != CONFIRM:
        erasure, _ = forget_mod.plan(v.md, path)
        return v.render("forget.html", 400, erasure=erasure, path=path, confirm=CONFIRM,
                        error="Tick the box that says you understand this cannot be undone; nothing was forgotten.")
    done = forget_mod.erase(v.md, path)
    names = len(done.paths)
    v.flash(f"Forgot {path} for good: {names} name{'s' if names != 1 else ''} and {done.records} journal "
            f"record{'s' if done.records != 1 else ''} erased. This cannot be undone."
            + (f" Its text may also be in {', '.join(done.elsewhere)}, which stay{'s' if len(done.elsewhere) == 1 else ''}."
               if done.elsewhere else ""))
    folder = paths.parent(path)
    return RedirectResponse(webtext.folder_url(folder) if v.md.count(folder) else "/", 303)  # a folder left empty: home
