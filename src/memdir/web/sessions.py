"""The page's sessions: in groups no stranger can empty, ending when their credential does.

A session is proven when a credential made it (a token at the login form, a
bearer header) or when it came back with its cookie (a browser of this site:
the cookie is SameSite=Strict). Sessions nobody has proven yet (the login
form's, or a first page of a server without tokens) wait apart, at most
`MAX_PENDING` of them and for an hour at most, the oldest going first; so
anonymous requests, however many, only push out each other. Each principal
keeps its own `MAX_PER_PRINCIPAL` proven sessions, so one principal's logins
never push out another's. Idle sessions expire, every session ends
`SESSION_MAX` after it began, and one a JWT made ends when the token expires.

They live in a SQLite database: in memory for one process, or a file the
processes of `memdir serve --workers N` share (in the private folder `serve`
makes), so a request any worker answers finds its session and CSRF token.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SESSION_IDLE = 12 * 3600  # seconds a proven session lasts unused
SESSION_MAX = 7 * 24 * 3600  # seconds a session lasts at most, used or not
PENDING_IDLE = 3600  # seconds a session nobody has proven lasts unused
MAX_PENDING = 1_000  # sessions nobody has proven; the oldest go first past this
MAX_PER_PRINCIPAL = 100  # proven sessions of one principal; its own oldest go first past this
_PENDING = ""  # the group of sessions nobody has proven
_SCHEMA = """CREATE TABLE IF NOT EXISTS sessions(
    id TEXT PRIMARY KEY, grp TEXT NOT NULL, principal TEXT, csrf TEXT NOT NULL, made REAL NOT NULL,
    seen REAL NOT NULL, until REAL, used INTEGER NOT NULL, flash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_by_group ON sessions(grp, used)"""


@dataclass
class Session:
    id: str
    principal: Any  # the server's principal (hashable), or None: not logged in yet (the login form's own session)
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    flash: list[dict[str, Any]] = field(default_factory=list)


class Sessions:
    """Sessions by id: pending ones apart and bounded, proven ones bounded per principal.

    `path`: the database the processes of one server share (None: this process's own, in memory).
    `dump`/`load` turn a principal into text and back (JSON by default)."""

    def __init__(self, path: str | Path | None = None, *, max_pending: int = MAX_PENDING,
                 per_principal: int = MAX_PER_PRINCIPAL, clock: Callable[[], float] = time.time,
                 dump: Callable[[Any], str] = json.dumps, load: Callable[[str], Any] = json.loads) -> None:
        self.max_pending, self.per_principal, self.clock = max_pending, per_principal, clock
        self.dump, self.load = dump, load
        self._db = sqlite3.connect(":memory:" if path is None else str(path), timeout=30, check_same_thread=False,
                                   isolation_level=None)
        self._lock = threading.Lock()  # one connection: its statements one at a time
        with self._lock:
            if path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)

    def new(self, principal: Any, *, proven: bool, until: float | None = None) -> Session:
        """A new session for `principal` (None before a login); `proven` when a credential made it, which
        ends at `until` (a time, as `clock` tells it) if it does before `SESSION_MAX`."""
        s = Session(secrets.token_urlsafe(32), principal)
        now = self.clock()
        group = self.dump(principal) if proven and principal is not None else _PENDING
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(used), 0) + 1 FROM sessions), '[]')",
                (s.id, group, None if principal is None else self.dump(principal), s.csrf, now, now, until))
            self._trim(group)
        return s

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        now = self.clock()
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute("SELECT grp, principal, csrf, made, seen, until, flash FROM sessions WHERE id = ?",
                                   (sid,)).fetchone()
            if row is None:
                return None
            group, principal, csrf, made, seen, until, flash = row
            idle = PENDING_IDLE if group == _PENDING else SESSION_IDLE
            if now - seen > idle or now - made >= SESSION_MAX or (until is not None and now >= until):
                self._db.execute("DELETE FROM sessions WHERE id = ?", (sid,))
                return None
            if group == _PENDING and principal is not None:  # back with its cookie: a browser of this site
                group = principal
            self._db.execute("UPDATE sessions SET seen = ?, grp = ?, used = (SELECT MAX(used) + 1 FROM sessions) "
                             "WHERE id = ?", (now, group, sid))
            self._trim(group)
        return Session(sid, None if principal is None else self.load(principal), csrf, json.loads(flash))

    def save(self, s: Session) -> None:
        """Keep what a request changed in the session (the messages the next page shows)."""
        with self._lock, self._db:
            self._db.execute("UPDATE sessions SET flash = ? WHERE id = ?", (json.dumps(s.flash), s.id))

    def drop(self, sid: str) -> None:
        with self._lock, self._db:
            self._db.execute("DELETE FROM sessions WHERE id = ?", (sid,))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM sessions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _trim(self, group: str) -> None:
        """The group's least recently used sessions past its cap, gone (inside the caller's transaction)."""
        cap = self.max_pending if group == _PENDING else self.per_principal
        self._db.execute("DELETE FROM sessions WHERE grp = ? AND id NOT IN "
                         "(SELECT id FROM sessions WHERE grp = ? ORDER BY used DESC LIMIT ?)", (group, group, cap))
