"""Google ADK's `BaseMemoryService` over a `Memdir`: what an ADK agent remembers, as markdown files.

    import memdir
    from google.adk.runners import Runner
    from memdir.adapters.adk import MemdirMemoryService

    memory = MemdirMemoryService(memdir.open("memory"))
    runner = Runner(agent=agent, app_name="app", session_service=sessions, memory_service=memory)
    await memory.add_session_to_memory(session)          # after a conversation; again as it grows
    (await memory.search_memory(app_name="app", user_id="u1", query="short answers")).memories

Or by URI, as `adk web --memory_service_uri memdir:/path/to/memory` takes it:
`register()` adds the `memdir:` scheme to ADK's service registry (call it in
the agents folder's `services.py`), and `services.yaml` can name
`memdir.adapters.adk.MemdirMemoryService` as a memory class. The URI is
`memdir:` and a memdir location: `memdir:/abs/folder`, `memdir:///abs/folder`,
`memdir:postgresql://app@host/db`, `memdir:s3://bucket/prefix`.

Each `(app_name, user_id)` is a folder, `adk/<app>/<user>/` (under `folder`):

    adk/<app>/<user>/conversations/<session>/<event>.md   one file per event with text (what search returns)
    adk/<app>/<user>/memories/<id>.md                       what add_memory wrote (and files a person adds)
    sessions/<stamp>-<digest>.md                            the session record memdir's capture keeps

A name that is not plain (`a-z`, `0-9`, `-`, `_`, 64 at most) is named by its
slug, a `.` and 8 hex digits of its SHA-256, so ids that differ only by case
never share a file; the ids themselves are kept in the frontmatter.

Semantics, as ADK's own `InMemoryMemoryService` keeps them
(`tests/adapters/test_adk.py` runs both on generated sequences):
`add_session_to_memory` replaces what memory holds of that session (adding it
again as it grows rewrites only the new events, one commit); `add_events_to_memory`
adds a delta, deduplicated by event id (`session_id=None` is the session
`__unknown_session_id__`); `delete_memory(memory_id=...)` deletes the event or
memory with that id, in every session of the user, and an event deleted this
way (or whose file a person deleted) is not brought back by the session being
added again. Every change is journaled: `memdir log` shows it, `memdir undo`
takes it back. After each change to a session its record is captured again
(`memdir.capture` with the session id `adk:<app>/<user>/<session>`, each id as
its folder is named), so the
same session is one record and a deleted event leaves the record too.

`search_memory` is memdir's search (`mode=`, auto by default) in the user's folder, best first, at most
`max_results` (10, as ADK's own) entries and `max_chars` characters of text
(PreloadMemoryTool puts every entry in the prompt, unasked, so only hits search is sure of come back:
a file that only shares words with the best hits, ranked by the feedback query, is left out). An event comes back as it
came in (id, author, timestamp, its text as one part); any other file as its
body, with its path as the id.

Left out: parts that are not text (function calls and responses, files) are
not kept, as ADK's own search never matches them; `delete_memories` is not in
ADK 2.13.0. Text that holds a credential is redacted, as capture does, and an
event past memdir's limits (200 lines, 25 KB) is cut, the frontmatter saying so.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from .. import model, paths, search
from ..core.memdir import Memdir
from ..core.opening import open as open_memdir
from ..core.ops import Op
from ..errors import InvalidArgument, MemdirError
from ..model import Memory
from ..remember import capture as capturing
from ..remember.transcripts import redact

if TYPE_CHECKING:
    from google.adk.cli.service_registry import ServiceRegistry
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

__all__ = ["MemdirMemoryService", "register"]

BLOCK = "adk"  # the frontmatter key holding an event's or a memory's ids
UNKNOWN_SESSION = "__unknown_session_id__"  # where ADK's own service puts events added without a session id
REPLACED = "adk-session"  # the journal actor of deletions that only follow a session as it was added again
MAX_RESULTS = 10
MAX_CHARS = 8000
_PLAIN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_SLUG = re.compile(r"[^a-z0-9]+")


def _name(value: str) -> str:
    """A file or folder name for an id: itself when plain, else its slug, '.' and a digest (never two ids one name)."""
    if _PLAIN.fullmatch(value) and value != "memory":  # MEMORY.md is the index, in any case
        return value
    slug = _SLUG.sub("-", value.lower()).strip("-")[:40] or "id"
    return f"{slug}.{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def _text(content: types.Content | None) -> str:
    """The text parts of a content, as ADK's memory search reads them."""
    if content is None or not content.parts:
        return ""
    return " ".join(part.text for part in content.parts if part.text)


def _timestamp(ts: float) -> str:
    """As ADK formats a memory's timestamp (local time, ISO 8601)."""
    return dt.datetime.fromtimestamp(ts).isoformat()


def location_of(uri: str) -> str:
    """'memdir:/abs', 'memdir:///abs', 'memdir:postgresql://...' -> the memdir location after the scheme."""
    scheme, sep, rest = uri.partition(":")
    if not sep or scheme != "memdir" or not rest:
        raise InvalidArgument(f"{uri!r} is not a memdir URI; give memdir: and a location, e.g. memdir:/path/to/memory")
    return rest[2:] if rest.startswith("//") else rest


class MemdirMemoryService(BaseMemoryService):
    """ADK's `BaseMemoryService` on a `Memdir` (any backend), one folder per `(app_name, user_id)` under `folder`.

    Give `md`, or `uri` (`memdir:<location>`, as ADK's service registry and
    `services.yaml` pass it; other keywords they pass are ignored). The memory
    is used as given: open it with `agent=True` if a model drives the writes.
    """

    def __init__(self, md: Memdir | None = None, *, uri: str | None = None, folder: str = "adk/",
                 max_results: int = MAX_RESULTS, max_chars: int = MAX_CHARS, mode: str = "auto",
                 **_registry: Any) -> None:
        if (md is None) == (uri is None):
            raise InvalidArgument("give a memory (md) or a memdir: URI, not both or neither")
        self.md = md if md is not None else open_memdir(location_of(uri or ""))
        self.folder = paths.folder(folder)
        self.max_results = max_results
        self.max_chars = max_chars
        if mode not in search.MODES:
            raise InvalidArgument(f"mode must be one of {', '.join(search.MODES)}; got {mode!r}")
        self.mode = mode  # memdir's search mode: auto is lexical unless the semantic layer has vectors

    # ------------------------------------------------------------ layout

    def user_folder(self, app_name: str, user_id: str) -> str:
        """Where one user of one app keeps memory: `adk/<app>/<user>/`."""
        for label, value in (("app_name", app_name), ("user_id", user_id)):
            if not isinstance(value, str) or not value:
                raise InvalidArgument(f"{label} must be non-empty text, got {value!r}")
        return f"{self.folder}{_name(app_name)}/{_name(user_id)}/"

    def _session_folder(self, app_name: str, user_id: str, session_id: str) -> str:
        return f"{self.user_folder(app_name, user_id)}conversations/{_name(session_id)}/"

    @staticmethod
    def record_id(app_name: str, user_id: str, session_id: str) -> str:
        """The session id memdir's capture keeps the session's record under: each id as its folder's name
        (`_name`: one name per id, never a `/`), so app `a/b` with user `c` and app `a` with user `b/c` are
        two records (the ids as given, `adk:a/b/c/...`, were one)."""
        return f"adk:{_name(app_name)}/{_name(user_id)}/{_name(session_id)}"

    # ------------------------------------------------------------ the interface

    async def add_session_to_memory(self, session: Session) -> None:
        """Memory holds the session as it is now: new events added, changed ones rewritten, gone ones removed."""
        await asyncio.to_thread(self._add, session.app_name, session.user_id, session.id, session.events, True)

    async def add_events_to_memory(self, *, app_name: str, user_id: str, events: Sequence[Event],
                                   session_id: str | None = None,
                                   custom_metadata: Mapping[str, object] | None = None) -> None:
        """A delta: events whose id the session already holds are skipped."""
        await asyncio.to_thread(self._add, app_name, user_id, session_id or UNKNOWN_SESSION, events, False)

    async def add_memory(self, *, app_name: str, user_id: str, memories: Sequence[MemoryEntry],
                         custom_metadata: Mapping[str, object] | None = None) -> None:
        """Each entry a topic file under `memories/` (its id, or a digest of its text, names it); one commit."""
        await asyncio.to_thread(self._add_memories, app_name, user_id, memories, dict(custom_metadata or {}))

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        return await asyncio.to_thread(self._search, app_name, user_id, query)

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        """Delete the event or memory with this id in every session of the user (journaled, undoable)."""
        if memory_id:
            await asyncio.to_thread(self._delete, app_name, user_id, memory_id)

    # ------------------------------------------------------------ writing

    def _event_text(self, event: Event) -> tuple[str, dict[str, Any]]:
        """The event's file: frontmatter with its ids, and its text (redacted, cut to the limits)."""
        text = redact(_text(event.content))
        limits = self.md.limits
        cut = len(text)
        lines = text.split("\n")
        if len(lines) > limits.max_lines - 20:
            text = "\n".join(lines[: limits.max_lines - 20])
        budget = limits.max_bytes - 2000
        if len(text.encode()) > budget:
            text = text.encode()[:budget].decode("utf-8", "ignore")
        block: dict[str, Any] = {"event": event.id, "author": event.author,
                                 "role": (event.content.role if event.content else None) or "user",
                                 "timestamp": event.timestamp}
        if event.invocation_id:
            block["invocation"] = event.invocation_id
        if len(text) < cut:
            block["cut"] = f"{cut - len(text)} characters past memdir's limits"
        return text, block

    def _render(self, session_id: str, event: Event) -> str:
        text, block = self._event_text(event)
        when = dt.datetime.fromtimestamp(event.timestamp, dt.UTC)
        meta = {"name": model.clip(f"{event.author or 'event'} {when:%Y-%m-%d %H:%M:%S}", self.md.limits.max_name),
                "type": "session", BLOCK: {"session": session_id, **block}}
        return model.render(meta, text + "\n")

    def _forgotten(self, path: str) -> bool:
        """An event deleted by `delete_memory` or by a person, not by a session added again without it."""
        last = self.md.history(path, limit=1)
        return bool(last) and last[0].op == "delete" and last[0].actor != REPLACED

    def _add(self, app_name: str, user_id: str, session_id: str, events: Sequence[Event], whole: bool) -> None:
        folder = self._session_folder(app_name, user_id, session_id)
        held = {e.path for e in self.md.list(folder)}
        wanted: dict[str, str] = {}
        kept: set[str] = set()
        for event in events:
            path = f"{folder}{_name(event.id)}.md"
            if not _text(event.content) or path in wanted:
                continue
            if path in held:  # an event memory holds stays as it is (a person's correction of it too)
                kept.add(path)
            elif not self._forgotten(path):
                wanted[path] = self._render(session_id, event)
        ops = [Op.write(p, text) for p, text in wanted.items()]
        gone = sorted(held - kept) if whole else []
        if not ops and not gone:
            return
        if ops:
            self.md.apply(ops)
        if gone:
            self._as(REPLACED).apply([Op.delete(p) for p in gone])
        self._capture(app_name, user_id, session_id)

    def _as(self, actor: str) -> Memdir:
        view = copy.copy(self.md)
        view.actor = actor
        return view

    def _events(self, folder: str) -> list[Memory]:
        """A session's events as memory holds them, in time order."""
        got = [self.md.read(e.path) for e in self.md.list(folder)]
        return sorted(got, key=lambda m: (float(_block(m).get("timestamp") or 0), m.path))

    def _capture(self, app_name: str, user_id: str, session_id: str) -> None:
        """The session's record, captured again from the events memory holds (removed when none is left)."""
        sid = self.record_id(app_name, user_id, session_id)
        events = self._events(self._session_folder(app_name, user_id, session_id))
        before = f"adk:{app_name}/{user_id}/{session_id}"  # the id records had before it was one per session
        if before != sid and capturing.find(self.md, sid) is None and (old := capturing.find(self.md, before)):
            self.md.delete(old)  # captured again below under the id that is this session's alone
        if not events:
            if (path := capturing.find(self.md, sid)) is not None:
                self.md.delete(path)
            return
        messages = [{"role": "user" if _block(m).get("author") == "user" else "assistant", "content": _body(m)}
                    for m in events]
        at = dt.datetime.fromtimestamp(float(_block(events[-1]).get("timestamp") or 0), dt.UTC)
        capturing.capture(self.md, sid, messages, at=at, event="adk")

    def _add_memories(self, app_name: str, user_id: str, memories: Sequence[MemoryEntry],
                      custom_metadata: dict[str, object]) -> None:
        folder = self.user_folder(app_name, user_id) + "memories/"
        ops = []
        for entry in memories:
            text = redact(_text(entry.content))
            if not text.strip():
                raise InvalidArgument(f"memory {entry.id or '(no id)'} has no text; memdir keeps the text parts of a memory")
            mid = entry.id or "m-" + hashlib.sha256(text.encode()).hexdigest()[:16]
            block: dict[str, Any] = {"memory": mid}
            if entry.author:
                block["author"] = entry.author
            if entry.timestamp:
                block["timestamp"] = entry.timestamp
            if entry.content.role:
                block["role"] = entry.content.role
            if meta := {**custom_metadata, **entry.custom_metadata}:
                block["metadata"] = meta
            ops.append(Op.write(f"{folder}{_name(mid)}.md", model.render({BLOCK: block}, text + "\n")))
        if ops:
            self.md.apply(ops)

    def _delete(self, app_name: str, user_id: str, memory_id: str) -> None:
        user = self.user_folder(app_name, user_id)
        name = f"/{_name(memory_id)}.md"
        found, sessions = [], {}
        for e in self.md.list(user):
            if e.path.endswith(name):
                block = _block(self.md.read(e.path))
                held = block.get("event", block.get("memory"))
                if held == memory_id or (held is None and e.path.endswith(f"/{memory_id}.md")):
                    found.append(e.path)
                    if isinstance(block.get("session"), str) and "event" in block:
                        sessions[e.path] = block["session"]
        if not found:
            return
        self.md.apply([Op.delete(p) for p in found])
        for session in sorted({s for p in found if (s := sessions.get(p)) is not None}):
            self._capture(app_name, user_id, session)

    # ------------------------------------------------------------ reading

    def _search(self, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        folder = self.user_folder(app_name, user_id)
        out: list[MemoryEntry] = []
        left = self.max_chars
        for hit in self.md.search(query, k=self.max_results, prefix=folder, mode=self.mode):
            if not hit.sure:
                continue
            try:
                m = self.md.read(hit.path)
            except MemdirError:
                continue  # gone since the index saw it
            entry = _entry(m)
            size = len(_text(entry.content))
            if out and size > left:
                break
            if size > left:
                entry.content.parts = [types.Part(text=_text(entry.content)[:left])]
            out.append(entry)
            left -= size
        return SearchMemoryResponse(memories=out)


def _block(m: Memory) -> dict[str, Any]:
    got = m.meta.get(BLOCK)
    return got if isinstance(got, dict) else {}


def _body(m: Memory) -> str:
    return m.body[:-1] if m.body.endswith("\n") else m.body


def _entry(m: Memory) -> MemoryEntry:
    """A file as ADK's search returns a memory: an event as it came in, any other file as its body."""
    block = _block(m)
    ts = block.get("timestamp")
    when = _timestamp(ts) if isinstance(ts, (int, float)) else (ts if isinstance(ts, str) else m.updated)
    role = block.get("role") if isinstance(block.get("role"), str) else None
    meta = block.get("metadata")
    return MemoryEntry(
        id=str(block.get("event") or block.get("memory") or m.path),
        content=types.Content(role=role, parts=[types.Part(text=_body(m))]),
        author=block.get("author") if isinstance(block.get("author"), str) else None,
        timestamp=when,
        custom_metadata=dict(meta) if isinstance(meta, dict) else {},
    )


def register(registry: ServiceRegistry | None = None, scheme: str = "memdir") -> None:
    """Add `memdir:<location>` to ADK's service registry (`adk web --memory_service_uri memdir:/path/to/memory`)."""
    if registry is None:
        from google.adk.cli.service_registry import get_service_registry  # ADK's CLI: loaded only to register

        registry = get_service_registry()

    def factory(uri: str, **kwargs: Any) -> MemdirMemoryService:
        return MemdirMemoryService(uri=uri.replace(f"{scheme}:", "memdir:", 1))

    registry.register_memory_service(scheme, factory)
