"""The page's sessions: kept in this process, in groups no stranger can empty.

A session is proven when a credential made it (a token at the login form, a
bearer header) or when it came back with its cookie (a browser of this site:
the cookie is SameSite=Strict). Sessions nobody has proven yet (the login
form's, or a first page of a server without tokens) wait apart, at most
`MAX_PENDING` of them and for an hour at most, the oldest going first; so
anonymous requests, however many, only push out each other. Each principal
keeps its own `MAX_PER_PRINCIPAL` proven sessions, so one principal's logins
never push out another's. Idle sessions expire.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

SESSION_IDLE = 12 * 3600  # seconds a proven session lasts unused
PENDING_IDLE = 3600  # seconds a session nobody has proven lasts unused
MAX_PENDING = 1_000  # sessions nobody has proven; the oldest go first past this
MAX_PER_PRINCIPAL = 100  # proven sessions of one principal; its own oldest go first past this
_PENDING = object()  # the group of sessions nobody has proven


@dataclass
class Session:
    id: str
    principal: Any  # the server's principal (hashable), or None: not logged in yet (the login form's own session)
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    seen: float = field(default_factory=time.monotonic)
    flash: list[dict[str, Any]] = field(default_factory=list)


class Sessions:
    """Sessions by id, in memory: pending ones apart and bounded, proven ones bounded per principal."""

    def __init__(self, *, max_pending: int = MAX_PENDING, per_principal: int = MAX_PER_PRINCIPAL) -> None:
        self.max_pending, self.per_principal = max_pending, per_principal
        self._groups: dict[Hashable, OrderedDict[str, Session]] = {}  # oldest first in each
        self._group_of: dict[str, Hashable] = {}
        self._lock = threading.Lock()

    def new(self, principal: Any, *, proven: bool) -> Session:
        """A new session for `principal` (None before a login); `proven` when a credential made it."""
        s = Session(secrets.token_urlsafe(32), principal)
        with self._lock:
            self._add(principal if proven and principal is not None else _PENDING, s)
        return s

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        now = time.monotonic()
        with self._lock:
            key = self._group_of.get(sid)
            if key is None:
                return None
            group = self._groups[key]
            s = group[sid]
            if now - s.seen > (PENDING_IDLE if key is _PENDING else SESSION_IDLE):
                self._remove(sid)
                return None
            s.seen = now
            if key is _PENDING and s.principal is not None:  # back with its cookie: a browser of this site
                self._remove(sid)
                self._add(s.principal, s)
            else:
                group.move_to_end(sid)
            return s

    def drop(self, sid: str) -> None:
        with self._lock:
            if sid in self._group_of:
                self._remove(sid)

    def __len__(self) -> int:
        return len(self._group_of)

    def _add(self, key: Hashable, s: Session) -> None:
        group = self._groups.setdefault(key, OrderedDict())
        group[s.id] = s
        self._group_of[s.id] = key
        cap = self.max_pending if key is _PENDING else self.per_principal
        while len(group) > cap:
            old, _ = group.popitem(last=False)
            del self._group_of[old]

    def _remove(self, sid: str) -> None:
        key = self._group_of.pop(sid)
        group = self._groups[key]
        del group[sid]
        if not group:
            del self._groups[key]
