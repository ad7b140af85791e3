"""What a git sync leaves for a person on the page: the conflicts it kept as two memories, and a sync that failed.

`/ui/conflicts` shows each memory beside the other machine's version of it (their difference) and settles one
with a button (`merging.resolve`: keep mine, or keep theirs); the state of the last sync (when, whether its
push went, the error that stopped it, the commits waiting) stands above. Kept apart from `page` so the page's
module stays the page's; it takes the view as the small protocol below.
"""

from __future__ import annotations

from typing import Any, Protocol

from starlette.responses import RedirectResponse, Response

from ..core.memdir import Memdir
from ..remember import gitsync, merging
from . import text as webtext


class _View(Protocol):
    md: Memdir

    def arg(self, name: str, default: str = "") -> str: ...

    def render(self, template: str, status: int = 200, **values: Any) -> Response: ...

    def flash(self, message: str, kind: str = "ok", undo: int | None = None) -> None: ...


def listed(v: _View) -> Response:
    items = []
    for pair in merging.conflicts(v.md):
        mine = v.md.read_text(pair.path)[1] if v.md.entries([pair.path]) else None
        theirs = v.md.read_text(pair.other)[1]
        items.append({"pair": pair, "diff": webtext.diff(mine, theirs)})
    return v.render("conflicts.html", items=items, state=gitsync.status(v.md))


def settle(v: _View) -> Response:
    keep = v.arg("keep")
    pair = merging.resolve(v.md, v.arg("other"), keep)
    v.flash(f"Kept {'your' if keep == 'mine' else 'the other'} version of {pair.path}; {pair.other} is gone "
            "(undo brings it back).")
    return RedirectResponse("/ui/conflicts", 303)
