"""Undo a selection of journaled changes ("everything this agent wrote today") in one commit.

`Memdir.undo(path)` takes back the latest change of one file. A selection is
several changes, possibly several to the same file, possibly a rename. Undoing
it puts every file the selection touched back as it was just before the
selection's first change to that file, in one `Memdir.apply` batch: all the
files go back, or none do, and the batch is journaled (and undoable) like any
change.

When a change outside the selection touched one of those files later, the
selection is refused, naming that change. Undoing "newest first" through it
would also throw away work nobody selected (another agent's or a person's
later edit), which memdir never does silently; the caller can widen the
selection to include it, or leave that file out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..core.memdir import Op
from ..errors import Conflict, InvalidArgument, NotFound
from ..stores.base import Record

if TYPE_CHECKING:
    from ..core.memdir import Memdir, Op
    from ..model import Memory

MAX_SELECTION = 1000  # changes one undo takes back at most


def selected(md: Memdir, seqs: Iterable[int]) -> list[Record]:
    """The journal records with these numbers that this view can see, newest first; `NotFound` for any other."""
    wanted = set(seqs)
    if not wanted:
        raise InvalidArgument("no changes selected; pick the changes to undo")
    if len(wanted) > MAX_SELECTION:
        raise InvalidArgument(f"{len(wanted)} changes selected; undo at most {MAX_SELECTION} at once")
    low = min(wanted)
    newest = md.history(limit=1)
    span = newest[0].seq - low + 1 if newest else 0  # no more records than seqs from `low` on: read only those
    found = []
    for rec in md.history(limit=max(1, span)):  # newest first
        if rec.seq < low:
            break
        if rec.seq in wanted:
            found.append(rec)
    missing = sorted(wanted - {r.seq for r in found})
    if missing:
        raise NotFound(f"change #{missing[0]} is not in the journal this principal can see; reload the list of changes")
    return found


def plan(md: Memdir, records: list[Record]) -> list[Op]:
    """The batch that puts every file the records touched back as it was before the first of them.

    Refuses (`Conflict`) when a change that is not among `records` touched one
    of those files after the first selected change to it.
    """
    gone = [r for r in records if r.op in ("thinned", "forget")]
    if gone:
        raise Conflict(f"change #{gone[0].seq} to {gone[0].path} cannot be undone: its content is gone "
                       f"({'forgotten' if gone[0].op == 'forget' else 'thinned by the [history] retention setting'})",
                       path=gone[0].path)
    chosen = {r.seq for r in records}
    first: dict[str, Record] = {}
    for rec in sorted(records, key=lambda r: r.seq):
        for path in (rec.path, rec.dest):
            if path is not None and path not in first:
                first[path] = rec
    ops: list[Op] = []
    for path, rec in sorted(first.items()):
        later = md.history(path)  # newest first: every change whose path or destination is `path`
        foreign = [r for r in later if r.seq > rec.seq and r.seq not in chosen]
        if foreign:
            other = foreign[-1]
            raise Conflict(
                f"{path} was changed again by {other.actor} at {other.time} (change #{other.seq}) after the changes "
                f"selected; undo that change too, or leave {path} out", path=path)
        before = rec.old if rec.path == path else None  # a move's destination did not exist before it
        now = _left(later[0], path)
        if before is None and now is not None:
            ops.append(Op.delete(path, expect=now))
        elif before is not None:
            ops.append(Op.write(path, before.decode("utf-8"), expect=now))
    return ops


def _left(rec: Record, path: str) -> str | None:
    """The version of `path` that the change `rec` left (None: no file there)."""
    if rec.dest is not None and rec.path == path and rec.dest != path:
        return None  # moved away
    return rec.new_version


def undo(md: Memdir, seqs: Iterable[int]) -> list[Memory]:
    """Undo the changes numbered `seqs` (see the module docstring); returns what each file became.

    One change that is still the latest of its file is undone by `Memdir.undo`
    (the bytes come back exactly, journaled as an undo); anything larger is one
    `Memdir.apply` batch.
    """
    records = selected(md, seqs)
    if len(records) == 1:
        rec = records[0]
        path = rec.dest or rec.path
        if all(md.history(p, limit=1)[0].seq == rec.seq for p in {rec.path, path}):
            return [md.undo(path)]
    return md.apply(plan(md, records))
