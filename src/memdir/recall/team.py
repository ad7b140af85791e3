"""The team's memory beside the personal one: recall reads both, and `team/PATH` names the team's.

A project may keep a memory of its own inside its repository (`team-memory/`,
`remember.projects`), changed through pull requests like code. The faces that
run in the project's folder (the CLI, MCP over stdio, the hooks) reach it
beside the personal memory, as Claude Code lays out its own shared memory: a
`team/` folder beside the private files. So a path under `team/` is the team's
memory (`team/feedback/reviews.md` is its `feedback/reviews.md`): a write there
lands in the team's memory through its own `Memdir`, a read or search shows its
files with that prefix, and everything else is the personal memory's. Where the
project keeps no team memory, a `team/` folder already in the personal memory
(Claude Code's own layout) stays an ordinary folder, and otherwise a write
there is refused with how to set one up. The hooks answer from the personal
memory, then ask the same of the team's (`joined`) under a line saying whose
it is; `Team` is what the CLI and the MCP tools route through.
"""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import paths, tokens
from ..core.memdir import Memdir
from ..core.opening import open as open_memdir
from ..errors import InvalidArgument, MemdirError
from ..remember import projects
from ..remember.gitrepo import top_of
from ..search import SearchHit
from . import context as context_mod

Handler = Callable[[Memdir, dict[str, Any]], "dict[str, Any] | None"]
PREFIX = "team/"  # a path under it is the team's memory (Claude Code's team/ beside its private memory)
HEADER = (f"The team's memory of this project ({projects.TEAM_FOLDER}/ in its repository, changed through pull "
          f"requests; its paths start with {PREFIX}), beside yours:")
_OPENING = re.compile(r"^<(memory-\d+) ", re.M)  # the first block of a fenced context names its tag


def inner(path: str, *, folder: bool = False) -> str | None:
    """The team memory's own path (or folder) that `path` names when it is under `team/`; else None."""
    try:
        normal = paths.folder(path) if folder else paths.topic_path(path)
    except MemdirError:
        return None  # the memory it goes to refuses it in its own words
    return normal[len(PREFIX):] if normal.startswith(PREFIX) else None


def relabel(text: str) -> str:
    """A fenced context of the team's memory with every block's path under `team/`, so each can be read by it.

    The fence's tag is a nonce no memory holds in any form, so only memdir's own block openings match."""
    found = _OPENING.search(text)
    if found is None:
        return text
    return re.sub(rf'^<{found.group(1)} path="', f'<{found.group(1)} path="{PREFIX}', text, flags=re.M)


def search(mine: Memdir, theirs: Memdir | None, query: str, *, k: int, **options: Any) -> list[tuple[SearchHit, bool]]:
    """The hits of both memories, each with whether it is the team's (its path under `team/`): each memory's in its
    own order, the surer first where they meet (scores of two indexes do not compare), `k` at most."""
    hits = [(h, False) for h in mine.search(query, k=k, **options)]
    if theirs is None:
        return hits
    shared = [(replace(h, path=PREFIX + h.path), True) for h in theirs.search(query, k=k, **options)]
    return list(heapq.merge(hits, shared, key=lambda x: (not x[0].sure, -x[0].confidence)))[:k]


def context(mine: Memdir, theirs: Memdir | None, query: str | None, *, budget: int,
            include: Iterable[str] = ()) -> context_mod.Context:
    """The context of both memories: yours, then the team's under `HEADER` (its paths under `team/`), which takes
    a third of the budget at most (none when a third cannot hold the smallest context) and leaves the rest to yours."""
    wanted = list(include)
    head = tokens.default().count(f"\n\n{HEADER}\n")
    if theirs is None or budget // 3 - head < context_mod.MIN_BUDGET:
        return context_mod.build(mine, query, budget=budget, include=wanted)
    ours = [x for w in wanted if (x := inner(w, folder=not w.endswith(".md"))) is not None]
    shared = context_mod.build(theirs, query, budget=budget // 3 - head, include=ours)
    rest = [w for w in wanted if inner(w, folder=not w.endswith(".md")) is None]
    own = context_mod.build(mine, query, budget=budget - (shared.tokens + head if shared.text else 0), include=rest)
    if not shared.text:
        return own
    return replace(own, text="\n\n".join(x for x in (own.text, f"{HEADER}\n{relabel(shared.text)}") if x),
                   tokens=own.tokens + shared.tokens + head, budget=budget,
                   included=own.included + tuple(replace(i, path=PREFIX + i.path) for i in shared.included),
                   dropped=own.dropped + tuple(replace(d, path=d.path and PREFIX + d.path) for d in shared.dropped))


def _root(md: Memdir) -> str | None:
    root = getattr(md.store, "root", None)
    return os.path.realpath(root) if isinstance(root, Path) else None


class Team:
    """The team's memory of the project a local face runs in (`where`), opened when first needed and kept.

    `mine` is the personal memory, or how to open it (a command that writes only the team's opens no
    personal memory). A personal memory that is itself the team's has no team memory beside it."""

    def __init__(self, mine: Memdir | Callable[[], Memdir], where: Path | None = None, *, actor: str,
                 agent: bool = False, root: Path | None = None) -> None:
        self._mine = mine
        self.where = where or Path.cwd()
        self.actor = actor
        self.agent = agent  # a model drives it: the agents' limits bind the team's memory too
        self.root = os.path.realpath(root) if root is not None else None  # the personal memory's folder, if one
        self._folder: Path | None = None
        self._md: Memdir | None = None  # the team's memory as the face uses it (a view, for an agent)
        self._opened: Memdir | None = None  # ... and as opened, which closing closes
        self.itself = False  # the personal memory is the team's (`--root @team`): team/ is a folder of it

    def mine(self) -> Memdir:
        if not isinstance(self._mine, Memdir):
            self._mine = self._mine()
        return self._mine

    def memory(self) -> Memdir | None:
        """The team's memory, if the project keeps one (a git pull's new files are journaled on first use)."""
        if self._md is not None and self._folder is not None and self._folder.is_dir():
            return self._md
        self.close()
        folder = projects.team_folder(self.where)
        if folder is None:
            return None
        mine = self.root if self.root is not None else (_root(self._mine) if isinstance(self._mine, Memdir) else None)
        self.itself = mine is not None and mine == os.path.realpath(folder)
        if self.itself:
            return None
        md = open_memdir(folder, create=False, actor=self.actor)
        self._opened = md
        md.sync()
        self._folder, self._md = folder, md.for_agent() if self.agent else md
        return self._md

    def target(self, path: str, *, folder: bool = False, mine: Memdir | None = None) -> tuple[Memdir, str, str]:
        """The memory `path` is in, the path inside it, and the prefix that shows it ("team/" or "");
        `mine` is the personal memory as the caller holds it now (a view of it)."""
        rest = inner(path, folder=folder)
        if rest is None:
            return mine or self.mine(), path, ""
        team = self.memory()
        if team is not None:
            return team, rest, PREFIX
        if self.itself:
            return mine or self.mine(), path, ""
        try:
            mine = mine or self.mine()
        except MemdirError:  # no personal memory yet, so no team/ folder in it either
            raise InvalidArgument(self.missing(path)) from None
        if _has(mine, PREFIX):  # Claude Code's own team/ folder, kept in this memory: an ordinary folder
            return mine, path, ""
        raise InvalidArgument(self.missing(path))

    def missing(self, path: str) -> str:
        """The refusal of a `team/` path where the project keeps no team memory: what to do instead."""
        top = top_of(self.where)
        mine = "or write it without team/ to keep it in your own memory"
        if top is None:
            return (f"{path} is in the team's memory of a project, and {self.where} is in no git repository; run this "
                    f"in the project's folder, {mine}")
        return (f"{path} is in the team's memory of this project, and {top} keeps none; set one up with "
                f"`memdir --root @team init` in the project (then commit {projects.TEAM_FOLDER}/), {mine}")

    def close(self) -> None:
        md, self._opened, self._md, self._folder = self._opened, None, None, None
        if md is not None:
            md.close()


def _has(md: Memdir, folder: str) -> bool:
    try:
        return bool(md.list(folder))
    except MemdirError:
        return False


def joined(handler: Handler, md: Memdir, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The handler's answer from `md`, with its answer from the project's team memory added, if there is one."""
    mine = handler(md, payload)
    where = payload.get("cwd")
    team = projects.team_folder(Path(where) if isinstance(where, str) and where else Path.cwd())
    root = _root(md)
    if team is None or root == os.path.realpath(team):
        return mine
    with open_memdir(team, create=False, actor=md.actor) as shared:
        shared.sync()  # what a git pull brought is journaled first, so the search finds it (10 ms at 300 files)
        theirs = handler(shared, payload)
    return add(mine, theirs)


def add(mine: dict[str, Any] | None, theirs: dict[str, Any] | None) -> dict[str, Any] | None:
    """`mine` with the context of `theirs` after it, under the team's header, its paths under `team/`."""
    spec = (theirs or {}).get("hookSpecificOutput") or {}
    text = spec.get("additionalContext") if isinstance(spec, dict) else None
    if not isinstance(text, str) or not text.strip():
        return mine
    out = dict(mine or {})
    ours = dict(out.get("hookSpecificOutput") or {"hookEventName": spec.get("hookEventName")})
    ours["additionalContext"] = "\n\n".join(x for x in (ours.get("additionalContext"), f"{HEADER}\n{relabel(text)}") if x)
    out["hookSpecificOutput"] = ours
    return out
