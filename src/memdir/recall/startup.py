"""SessionStart: the context a Claude Code session begins with, chosen on purpose.

In this order, within `BUDGET` characters (what Claude Code passes on whole as
a hook's `additionalContext`; a longer one reaches the model as a preview):

1. pinned memories: frontmatter `pinned: true`, or Claude Code's
   `metadata: {pinned: true}` (its memories that apply to every session);
2. feedback memories, the most recently written or used first (memdir's
   `updated`, Claude Code's `metadata.modified`, or the last time a prompt's
   recall brought it in: `used`; undated ones after, by path);
3. the index as Claude Code reads MEMORY.md: its first 200 lines, whole lines
   only, then `team/MEMORY.md` (Claude Code's shared team memory) the same way.
   The generated part drops a line for a file the hand-kept part already links,
   and session records are one line that counts them: titles of past sessions
   are history, and never crowd out what the memory knows.

The index keeps `INDEX_SHARE` of the budget when it needs it, so fifty
feedback memories cannot push it out. What did not fit is counted in one last
line that says how to reach it.

A session is not shown again what its conversation still holds. `claude --resume` starts the same session anew,
and its conversation holds what earlier starts gave; a compaction replaces the conversation with a summary, so
its start gets the whole context again. What each start showed (each file's version, the index lines, the fence
tag it used) is kept in the user's cache folder under the session's id; a resume adds only the files new or
changed since, and the index lines that are new, or nothing (what was left out for room then is not pressed in
now), counting only the starts whose tag the transcript holds after its last compaction (a compaction whose
context never reached the conversation, as when `/compact` ended the process, leaves none: the whole again).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import mmap
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..core.index import BEGIN, END
from ..errors import MemdirError, NotFound
from ..model import split
from ..remember import fence
from . import links
from .context import HEADER, Shown, _attrs, _render

if TYPE_CHECKING:
    from ..core.memdir import Memdir

BUDGET = 10_000  # characters (about 2,500 tokens): Claude Code's limit for a hook's context passed on whole
INDEX_LINES = 200  # what Claude Code reads of a MEMORY.md
INDEX_SHARE = 0.4  # of the budget, kept for the index when it needs that much
TEAM = "team/"  # Claude Code's team memory: its own MEMORY.md beside the private one
SESSIONS = "sessions/"
KEPT_STARTS = 20  # starts of one session remembered
COMPACTED = b'"compact_boundary"'  # the line Claude Code's transcript gets where a compaction replaced the conversation
KEPT_FOR = dt.timedelta(days=30)
USES = 2000  # files whose last use by a prompt's recall is kept  # records of what a session was shown, kept this long after its last start
CLOSING = 160  # room for the line that counts what was left out
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@dataclass
class _Plan:
    budget: int
    used: int = 0
    blocks: list[tuple[dict[str, str], str]] = field(default_factory=list)
    seen: dict[str, str] = field(default_factory=dict)  # path -> version of every file weighed, shown or left out
    left: dict[str, int] = field(default_factory=dict)  # what did not fit, by kind
    tried: dict[str, tuple[dict[str, str], str, int]] = field(default_factory=dict)  # a file that did not fit yet

    def take(self, attrs: dict[str, str], content: str, limit: int | None = None, cost: int | None = None) -> bool:
        cost = len(_render(attrs, content, "memory-" + fence.PLACEHOLDER)) + 1 if cost is None else cost
        if self.used + cost > (self.budget if limit is None else limit):
            return False
        self.blocks.append((attrs, content))
        self.used += cost
        return True


def context(md: Memdir, session: str | None, *, source: str = "startup", index: bool = True,
            budget: int = BUDGET, now: dt.datetime | None = None, transcript: Path | None = None) -> str:
    """The SessionStart text for `session` (empty when there is nothing to add); `transcript`, Claude Code's,
    says which earlier starts a resumed conversation still holds."""
    graph = links.graph(md)
    if not graph.nodes if md.principal is None else not md.count():
        return ""  # an empty memory: nothing to say, and no index of nothing
    starts = _recall(md, session)
    before = _held(starts, transcript) if source == "resume" else None
    plan = _Plan(budget - len(HEADER.format(day="2026-01-01", tag="memory-" + fence.PLACEHOLDER)) - CLOSING)
    index_lines = _index_lines(md, any(p.startswith(TEAM) for p in graph.nodes)) if index else []
    fresh = index_lines if before is None else [x for x in index_lines if x not in before.get("lines", ())]
    reserve = min(int(budget * INDEX_SHARE), sum(len(x) + 1 for x in fresh) + 80)
    pinned = _newest(md, graph, graph.pinned)
    feedback = [p for p in _newest(md, graph, graph.types.get("feedback", set())) if p not in graph.pinned]
    rest: list[tuple[str, str]] = []
    for why, found in (("pinned", pinned), ("feedback", feedback)):
        for path in found:
            if not _file(md, graph, plan, path, why, before, limit=plan.budget - reserve):
                rest.append((why, path))
    _index(plan, fresh)
    for why, path in rest:  # room the index did not need
        if not _file(md, graph, plan, path, why, before, limit=None):
            plan.left[why] = plan.left.get(why, 0) + 1
    text, tag = _assemble(plan, now)
    if session and tag:
        weighed = {**(before or {}).get("files", {}), **plan.seen}
        lines = sorted({*(before or {}).get("lines", ()), *index_lines})
        _remember(md, session, [*starts, {"tag": tag, "files": weighed, "lines": lines}][-KEPT_STARTS:], now)
    return text


def _newest(md: Memdir, graph: links.Graph, found: set[str]) -> list[str]:
    """Dated first, the most recently written or used first; undated after, by path; only what the principal may
    read. Dates compare as ISO text (a day before its own times)."""
    nodes, uses = graph.nodes, _uses(md)
    when = {p: max(nodes[p].updated or "", uses.get(p, "")) for p in found}
    dated = sorted((p for p in found if when[p]), key=lambda p: when[p], reverse=True)
    ordered = dated + sorted(p for p in found if not when[p])
    scope = md.principal
    return ordered if scope is None else [p for p in ordered if scope.can_read(p)]


def _file(md: Memdir, graph: links.Graph, plan: _Plan, path: str, why: str, before: dict[str, Any] | None,
          limit: int | None) -> bool:
    """Show a whole file if it fits (True), or say it did not (False); one already shown unchanged is done.
    A file that did not fit is kept as read, for the room the index leaves."""
    if path in plan.tried:
        attrs, content, cost = plan.tried[path]
        return plan.take(attrs, content, limit, cost)
    node = graph.nodes.get(path)
    try:
        path, text, version = md.read_text(path)  # the graph's name, type and date: no frontmatter parsed
    except NotFound:
        return True
    plan.seen[path] = version
    if before is not None and before.get("files", {}).get(path) == version:
        return True  # weighed before: the conversation has it, or it was left out for room then
    try:
        body = split(text, path=path)[1]
    except MemdirError:  # an unclosed block: all of it is body, as a lenient read has it
        body = text
    m = Shown(path, node.name if node else path, node.type if node else None, (node.updated if node else None) or None,
              body, text)
    attrs, content = {**_attrs(m), **({"pinned": "true"} if why == "pinned" else {})}, m.body.strip("\n")
    cost = len(_render(attrs, content, "memory-" + fence.PLACEHOLDER)) + 1
    if plan.take(attrs, content, limit, cost):
        return True
    plan.tried[path] = (attrs, content, cost)
    return False


def _index_lines(md: Memdir, team: bool) -> list[str]:
    """MEMORY.md as Claude Code reads it (its first 200 lines), then team/MEMORY.md's: the generated part
    without a file the kept part links, session records counted in one line."""
    out: list[str] = []
    for folder in ("", *([TEAM] if team else [])):
        try:
            text = md.index(folder)
        except NotFound:
            continue
        lines = text.split("\n")[:INDEX_LINES]
        kept = _kept_links(lines)
        sessions = 0
        chosen: list[str] = []
        for line in lines:
            targets = _LINK.findall(line)
            if targets and all(_from_root(t, folder).startswith(SESSIONS) for t in targets):
                sessions += 1
                continue
            if targets and kept and line not in kept[1] and all(t in kept[0] for t in targets):
                continue  # the hand-kept part already points there
            chosen.append(line)
        while chosen and not chosen[-1].strip():
            chosen.pop()
        if sessions:
            chosen.append(f"- {sessions} session records under {folder}{SESSIONS} (search_memory finds them)")
        if folder and chosen:
            chosen.insert(0, f"<!-- {folder}MEMORY.md -->")
        out += chosen
    return out


def _from_root(target: str, folder: str) -> str:
    """A link target of `folder`'s MEMORY.md as a path from the memory's root."""
    return folder + target.removeprefix("./")


def _kept_links(lines: list[str]) -> tuple[set[str], set[str]] | None:
    """The link targets and lines of the hand-kept part of a MEMORY.md (outside memdir's region), or None."""
    if BEGIN not in lines:
        return None
    inside, targets, kept = False, set(), set()
    for line in lines:
        if line == BEGIN:
            inside = True
        elif line == END:
            inside = False
        elif not inside:
            kept.add(line)
            targets.update(_LINK.findall(line))
    return targets, kept


def _index(plan: _Plan, lines: list[str]) -> None:
    if not lines:
        return
    room = plan.budget - plan.used - len(_render({"path": paths.INDEX_NAME, "type": "index"}, "",
                                                 "memory-" + fence.PLACEHOLDER)) - 2
    size, keep = 0, 0
    for line in lines:
        if size + len(line) + 1 > room:
            break
        size += len(line) + 1
        keep += 1
    if not keep or not plan.take({"path": paths.INDEX_NAME, "type": "index"}, "\n".join(lines[:keep])):
        keep = 0
    if len(lines) > keep:
        plan.left["index lines"] = len(lines) - keep


def _assemble(plan: _Plan, now: dt.datetime | None) -> tuple[str, str]:
    """The text and the fence tag it uses ("" and "" when there is nothing to show)."""
    if not plan.blocks:
        return "", ""
    day = (now or dt.datetime.now(dt.UTC)).date().isoformat()
    tag = "memory-" + fence.nonce(*(f"{a}\n{c}" for a, c in plan.blocks))
    parts = [HEADER.format(day=day, tag=tag), *(_render(a, c, tag) for a, c in plan.blocks)]
    if plan.left:
        counted = ", ".join(f"{plan.left[kind]} {kind}" for kind in ("pinned", "feedback", "index lines") if kind in plan.left)
        parts.append(f"Left out for room: {counted} (read_memory_index and search_memory reach them).")
    return "\n".join(parts) + "\n", tag


# ---------------------------------------------------------------- what a session was shown


def _folder(md: Memdir) -> Path:
    """This memory's (and principal's) records in the user's cache folder: never in the memory, as a read
    changes nothing there."""
    return paths.user_cache() / "startup" / hashlib.sha256(f"{md.store.key}\0{md.principal!r}".encode()).hexdigest()[:16]


def _record(md: Memdir, session: str) -> Path:
    return _folder(md) / f"{hashlib.sha256(session.encode()).hexdigest()[:24]}.json"


def used(md: Memdir, found: list[str], now: dt.datetime | None = None) -> None:
    """Note that a prompt's recall brought these files in (best effort, last use kept per file, USES at most):
    what orders feedback "by how recently written or used"."""
    if not found:
        return
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    uses = {**_uses(md), **dict.fromkeys(found, stamp)}
    kept = dict(sorted(uses.items(), key=lambda x: x[1], reverse=True)[:USES])
    _write(_folder(md) / "uses.json", kept)


def _uses(md: Memdir) -> dict[str, str]:
    try:
        data = json.loads((_folder(md) / "uses.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def _recall(md: Memdir, session: str | None) -> list[dict[str, Any]]:
    """What the session's earlier starts showed, oldest first."""
    if not session:
        return []
    try:
        data = json.loads(_record(md, session).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    starts = data.get("starts") if isinstance(data, dict) else None
    return [x for x in starts if isinstance(x, dict) and isinstance(x.get("tag"), str)] if isinstance(starts, list) else []


def _held(starts: list[dict[str, Any]], transcript: Path | None) -> dict[str, Any] | None:
    """What the conversation holds: the files and index lines of the starts whose fence tag the transcript has after
    its last compaction (all of them when the transcript cannot be read); None when it holds none."""
    if transcript is not None:
        try:
            with transcript.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                after = data.rfind(COMPACTED) + 1
                starts = [x for x in starts if data.find(x["tag"].encode(), after) >= 0]
        except (OSError, ValueError):  # no transcript, or an empty one (mmap refuses it)
            pass
    if not starts:
        return None
    files: dict[str, str] = {}
    lines: set[str] = set()
    for start in starts:
        files.update(start.get("files") or {})
        lines.update(start.get("lines") or ())
    return {"files": files, "lines": sorted(lines)}


def _remember(md: Memdir, session: str, starts: list[dict[str, Any]], now: dt.datetime | None) -> None:
    """Keep what the session was shown (best effort: a read-only cache costs a resume its repeat, nothing else)."""
    path = _record(md, session)
    if not _write(path, {"starts": starts}):
        return
    cutoff = ((now or dt.datetime.now(dt.UTC)) - KEPT_FOR).timestamp()
    for old in path.parent.glob("*.json"):
        try:
            if old.name != "uses.json" and old.stat().st_mtime < cutoff:
                old.unlink(missing_ok=True)
        except OSError:
            pass


def _write(path: Path, data: dict[str, Any]) -> bool:
    """Replace a cache file in one rename (a reader sees the old or the new); False if the cache is not writable."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return False
    return True
