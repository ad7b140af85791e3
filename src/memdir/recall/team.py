"""Recall from the team's memory beside the personal one.

A project may keep a memory of its own inside its repository (`team-memory/`,
`remember.projects`), changed through pull requests like code. A hook answers
from the personal memory as always, then asks the same of the team's memory of
the project it runs in (the event's `cwd`), and adds what that gives under a
line saying whose it is. Writes are not routed here: an agent writes to the
memory it was given, and the team's memory changes by `memdir --root @team`
and a pull request, so what the team shares is reviewed first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.memdir import Memdir
from ..core.opening import open as open_memdir
from ..remember import projects

Handler = Callable[[Memdir, dict[str, Any]], "dict[str, Any] | None"]
HEADER = (f"The team's memory of this project ({projects.TEAM_FOLDER}/ in its repository, changed through pull "
          "requests), beside yours:")


def joined(handler: Handler, md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The handler's answer from `md`, with its answer from the project's team memory added, if there is one."""
    mine = handler(md, payload)
    where = payload.get("cwd")
    team = projects.team_folder(Path(where) if isinstance(where, str) and where else Path.cwd())
    root = getattr(md.store, "root", None)
    if team is None or (isinstance(root, Path) and os.path.realpath(root) == os.path.realpath(team)):
        return mine
    with open_memdir(team, create=False, actor=md.actor) as shared:
        theirs = handler(shared, payload)
    return add(mine, theirs)


def add(mine: dict[str, Any] | None, theirs: dict[str, Any] | None) -> dict[str, Any] | None:
    """`mine` with the context of `theirs` after it, under the team's header."""
    spec = (theirs or {}).get("hookSpecificOutput") or {}
    text = spec.get("additionalContext") if isinstance(spec, dict) else None
    if not isinstance(text, str) or not text.strip():
        return mine
    out = dict(mine or {})
    ours = dict(out.get("hookSpecificOutput") or {"hookEventName": spec.get("hookEventName")})
    ours["additionalContext"] = "\n\n".join(x for x in (ours.get("additionalContext"), f"{HEADER}\n{text}") if x)
    out["hookSpecificOutput"] = ours
    return out
