"""Who wrote each file, and whether its text may change another file.

Consolidation retires, merges into and rewrites files on the strength of other
files; a principal allowed to write only `agent/` must not be able to retire a
person's feedback by writing a near-copy or an opposite twin of it in its own
folder. `Authority` reads the journal (who wrote what: every actor that wrote,
edited, moved or restored a file since it was last created) and the scopes it is
given (who may write where), and answers one question: could every author of
this file have written that one?

An actor's scope comes from `scopes` when given; otherwise an actor may write
what the journal shows it wrote, and nothing else, unless it is `trusted` (the
person running the consolidation, whose own memory it is). Edits made outside
memdir (journaled as `external`) come from someone with the files in hand, who
could have written anything. When in doubt the answer is no: the action is held
for a person to review, never applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..core.scope import Scope
from ..stores.base import Record

OUTSIDE = "(edited outside memdir)"
UNKNOWN = "(no journal record)"


@dataclass(frozen=True)
class Authority:
    """The authors of each live file, and the scopes and trust that say where each may write."""

    authors: Mapping[str, frozenset[str]]
    scopes: Mapping[str, Scope]
    trusted: frozenset[str]

    @classmethod
    def of(cls, records: Iterable[Record], *, scopes: Mapping[str, Scope] | None = None,
           trusted: Iterable[str] = ()) -> Authority:
        """From journal records (any order): each file's authors along its renames, reset when it is deleted."""
        authors: dict[str, set[str]] = {}
        for rec in sorted(records, key=lambda r: r.seq):
            who = OUTSIDE if rec.op == "external" else rec.actor
            if rec.dest:  # a move keeps the text's authors and adds the mover
                authors[rec.dest] = authors.pop(rec.path, set()) | {who}
            elif rec.new is None and rec.new_version is None:
                authors.pop(rec.path, None)
            else:
                authors.setdefault(rec.path, set()).add(who)
        return cls({p: frozenset(a) for p, a in authors.items()}, dict(scopes or {}), frozenset(trusted) | {OUTSIDE})

    def of_file(self, path: str) -> frozenset[str]:
        return self.authors.get(path) or frozenset({UNKNOWN})

    def may_write(self, actor: str, path: str) -> bool:
        """Whether `actor` could have written `path` itself."""
        scope = self.scopes.get(actor)
        if scope is not None:
            return scope.can_write(path)
        return actor in self.trusted or actor in self.authors.get(path, ())

    def refusal(self, source: str, target: str, authors: Iterable[str] | None = None) -> str | None:
        """Why `source`'s text may not retire or change `target`; None when every author of it could write `target`.

        `authors` stands for the file's own when its text came from elsewhere too (a diary from its sessions).
        """
        for actor in sorted(self.of_file(source) if authors is None else set(authors)):
            if not self.may_write(actor, target):
                return f"{source} was written by {actor}, who may not write {target}"
        return None
