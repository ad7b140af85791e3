"""Scopes: what one principal may read and write inside a tenant.

A scope is two lists of folder prefixes. Everything a scoped view does is
filtered by them: reads, listings, indexes, grep and search see only the
readable prefixes (what may be written may also be read), and writes outside
the writable ones fail with `Forbidden`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import paths
from ..errors import Forbidden


def _prefixes(raw: Iterable[str] | str) -> tuple[str, ...]:
    """Normal folder prefixes, outermost only."""
    if isinstance(raw, str):
        raw = [raw]
    out = sorted({paths.folder(p) for p in raw})
    # A prefix inside another adds nothing: keep the outermost ones.
    return tuple(p for p in out if not any(p != q and p.startswith(q) for q in out))


@dataclass(frozen=True)
class Scope:
    read: tuple[str, ...]
    write: tuple[str, ...]

    @classmethod
    def of(cls, read: Iterable[str] | str = (), write: Iterable[str] | str = ()) -> Scope:
        w = _prefixes(write)
        r = _prefixes([*_prefixes(read), *w])
        return cls(read=r, write=w)

    def can_read(self, path: str) -> bool:
        return any(path.startswith(p) for p in self.read)

    def can_write(self, path: str) -> bool:
        return any(path.startswith(p) for p in self.write)

    def check_write(self, path: str) -> None:
        if not self.can_write(path):
            allowed = ", ".join(p or "(the root)" for p in self.write) or "nothing"
            raise Forbidden(
                f"{path} is outside what this principal may write ({allowed}); write under one of those folders",
                path=path,
            )

    def narrow(self, inner: Scope) -> Scope:
        """The intersection with `inner`: a view of a view never sees more than its parent."""

        def meet(mine: tuple[str, ...], theirs: tuple[str, ...]) -> list[str]:
            out = []
            for p in theirs:
                for q in mine:
                    if p.startswith(q):
                        out.append(p)
                    elif q.startswith(p):
                        out.append(q)
            return out

        write = meet(self.write, inner.write)
        return Scope(read=_prefixes(meet(self.read, inner.read) + write), write=_prefixes(write))

    def describe(self) -> str:
        return f"read {', '.join(p or '/' for p in self.read) or 'nothing'}; write {', '.join(p or '/' for p in self.write) or 'nothing'}"
