"""Time: a file as it was, what changed in a window, retiring a memory, searching the past.

Everything here reads the journal (every change with its content) through
`Memdir.history`, so scopes apply, and writes through `Memdir.apply`, so a
retirement is journaled and undoable like any change.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import model, paths
from ..core.memdir import Op
from ..dates import parse_when, stamp
from ..errors import Conflict, InvalidArgument, NotFound
from ..stores.base import Record

if TYPE_CHECKING:
    from ..core.memdir import Memdir, Op

ARCHIVE = "archive/"
When = str | dt.datetime | dt.date


def read_as_of(md: Memdir, path: str, as_of: When) -> model.Memory:
    """`path` as it was at `as_of` (its content after the last change at or before then)."""
    p = paths.topic_path(path)
    when = stamp(parse_when(as_of, end=True) - dt.timedelta(seconds=1)) if _is_day(as_of) else stamp(parse_when(as_of))
    for rec in md.history(p):
        if rec.op in ("thinned", "forget"):  # nothing older is left
            why = "was forgotten" if rec.op == "forget" else "was thinned by the [history] retention setting"
            raise NotFound(f"{p} as of {when} is gone: its history before {rec.time} {why}", path=p)
        if rec.time > when:
            continue
        if rec.dest == p or (rec.path == p and rec.dest is None and rec.new is not None):
            assert rec.new is not None
            return model.memory(p, rec.new.decode("utf-8", "replace"), rec.new_version or "", md.limits.types)
        break  # deleted, or renamed away
    raise NotFound(f"{p} did not exist at {when}; `memdir log {p}` shows its changes", path=p)


def _is_day(value: When) -> bool:
    """A bare date as `as_of` means the end of that day."""
    if isinstance(value, dt.datetime):
        return False
    return isinstance(value, dt.date) or bool(re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", str(value)))


def changes(md: Memdir, since: When | None = None, until: When | None = None, *, prefix: str = "") -> list[Record]:
    """Journal records with `since <= time < until` touching `prefix`, newest first."""
    lo = None if since is None else stamp(parse_when(since))
    hi = None if until is None else stamp(parse_when(until))
    if lo is not None and hi is not None and hi <= lo:
        raise InvalidArgument(f"until ({hi}) must be after since ({lo}); give a window that is not empty")
    where = paths.folder(prefix)
    out = []
    for rec in md.history():
        if hi is not None and rec.time >= hi:
            continue
        if lo is not None and rec.time < lo:
            break  # newest first: everything after is older
        if rec.path.startswith(where) or (rec.dest or "").startswith(where):
            out.append(rec)
    return out


# ---------------------------------------------------------------- retiring


def archive_path(md: Memdir, path: str, taken: set[str] | None = None) -> str:
    """Where a retired `path` goes: `archive/<path>`, or `-2`, `-3`… when that is taken."""
    base = ARCHIVE + path[:-3]
    candidate, n = base + ".md", 1
    while md.store.get(candidate) is not None or candidate in (taken or set()):
        n += 1
        candidate = f"{base}-{n}.md"
    return candidate


def supersede_op(md: Memdir, path: str, *, by: str | None, reason: str, today: dt.date | None = None,
                 taken: set[str] | None = None) -> Op:
    """The batch op that retires `path`: metadata added, moved under archive/."""
    p = paths.topic_path(path)
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidArgument(f"{p}: say why it is superseded (reason), e.g. 'the launch moved to May'")
    if "\n" in reason.strip():
        raise InvalidArgument(f"{p}: the reason must be one line")
    if p.startswith(ARCHIVE):
        raise Conflict(f"{p} is already retired (it is under {ARCHIVE})", path=p)
    target = None if by is None else paths.topic_path(by)
    if target == p:
        raise InvalidArgument(f"{p} cannot be superseded by itself; name the memory that replaces it")
    cur = md.read(p)
    fields: dict[str, object] = {} if target is None else {"superseded_by": target}
    fields["superseded"] = model.Stamp((today or dt.datetime.now(dt.UTC).date()).isoformat())
    fields["reason"] = " ".join(reason.split())
    text = model.set_fields(cur.text, fields, path=p)  # the rest of a person's frontmatter stays as written
    return Op.rename(p, archive_path(md, p, taken), text=text, expect=cur.version)


def supersede(md: Memdir, path: str, *, by: str | None = None, reason: str) -> model.Memory:
    """Retire `path` without losing it: `superseded_by`, `superseded` and `reason` go into its
    frontmatter and it moves under archive/ (out of the index, still readable and searchable
    with history). `by`, when given, must exist."""
    if by is not None:
        md.read(by)  # the replacement must be there (NotFound otherwise)
    return md.apply([supersede_op(md, path, by=by, reason=reason)])[0]


# ---------------------------------------------------------------- searching the past


@dataclass(frozen=True)
class PastHit:
    """A retired file or an earlier version that matches: where it lives now, and when it was that."""

    path: str
    version: str
    time: str
    kind: str  # retired (a file under archive/) or earlier (a version the journal keeps)
    score: float
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "version": self.version, "time": self.time, "kind": self.kind,
                "score": round(self.score, 4), "snippet": self.snippet}


_TOKEN = re.compile(r"\w+", re.UNICODE)


def _terms(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if len(t) > 1]


def search_history(md: Memdir, query: str, k: int = 10, *, prefix: str = "") -> list[PastHit]:
    """Retired memories and earlier versions of any memory that match `query` (BM25 over the journal).

    Reads the whole journal: meant for "what did we decide about X last
    month", not for every turn. Current versions of live files are left to
    `Memdir.search`.
    """
    if not isinstance(query, str) or not _terms(query):
        raise InvalidArgument(f"query must be words to look for, got {query!r}")
    where = paths.folder(prefix)
    live = {e.path: e.version for e in md.list()}
    docs: dict[tuple[str, str], tuple[str, str, str]] = {}  # (path, version) -> (text, time, kind)
    seen: set[str] = set()  # each body once, where it was last (a retired file before its earlier name)
    for rec in md.history():
        for path, data, version in ((rec.dest or rec.path, rec.new, rec.new_version), (rec.path, rec.old, rec.old_version)):
            if data is None or not path.startswith(where):
                continue
            body = model.parse(data.decode("utf-8", "replace"), strict=False)[1]
            if body in seen:
                continue
            seen.add(body)
            key = (path, version or f"#{rec.seq}")
            if key in docs or live.get(path) == version and not path.startswith(ARCHIVE):
                continue
            kind = "retired" if path.startswith(ARCHIVE) and live.get(path) == version else "earlier"
            docs[key] = (data.decode("utf-8", "replace"), rec.time, kind)
    words = set(_terms(query))
    tfs = {key: Counter(_terms(text)) for key, (text, _, _) in docs.items()}
    n = len(docs) or 1
    avg = sum(sum(tf.values()) for tf in tfs.values()) / n
    df = Counter(w for tf in tfs.values() for w in words if tf[w])
    scored = []
    for key, tf in tfs.items():
        length = sum(tf.values()) or 1
        score = sum(math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) * tf[w] * 2.2 / (tf[w] + 1.2 * (0.25 + 0.75 * length / avg))
                    for w in words if tf[w])
        if score > 0:
            scored.append((score, key))
    scored.sort(key=lambda x: (-x[0], docs[x[1]][1]))
    out = []
    for score, (path, version) in scored[:k]:
        text, time, kind = docs[(path, version)]
        line = max(paths.lines(text) or [""], key=lambda ln: len(words & set(_terms(ln))))
        out.append(PastHit(path, version, time, kind, score, model.clip(line, 200)))
    return out
