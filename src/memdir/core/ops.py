"""Changes as data: `Op` (one write, delete or rename of a batch) and the planner that checks each.

Every write method of `Memdir` comes here: it builds the op (a write's text
merged with the frontmatter it keeps, an edit's replacement, an append's
line), and `Planner.plan` checks it as its single-file method does (paths,
scope, the version expected, limits, schema, secrets, where the path may go)
and turns it into the store `Change` that carries the journal record and the
catalog entry. The planner runs under the store's lock; nothing is written
until `Memdir` commits every change of a batch at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .. import model, paths
from ..errors import Conflict, Forbidden, InvalidArgument, InvalidPath, NotFound, RateLimited
from ..model import Memory
from ..stores.base import Blob, Change, Record, Store
from . import guard
from . import limits as limits_mod
from .catalog import Catalog
from .limits import Limits
from .scope import Scope

CLEARS: tuple[object, ...] = ("", None, [])  # a keyword set to one of these removes the key


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()
"""`expect=ANY` (the default): write whatever version is there."""


@dataclass(frozen=True)
class Op:
    """One change in a batch for `Memdir.apply`: use `Op.write`, `Op.delete` or `Op.rename`."""

    kind: str
    path: str
    text: str | None = None
    dest: str | None = None
    expect: Any = ANY
    as_written: bool = False  # the text lands byte for byte: no created/updated lines, no schema (an import)

    @classmethod
    def write(cls, path: str, text: str, *, expect: Any = ANY, as_written: bool = False) -> Op:
        """Create or replace `path` with `text` (frontmatter and body).

        `as_written`: the text is another writer's (an import, a file a person
        wrote), kept byte for byte: memdir adds no `created`/`updated` lines (the
        file's own dates stand) and checks no schema of its keys (another tool's
        `type: Person` or `tags: a, b` stay); YAML, size and secrets still hold.
        """
        return cls("write", path, text, expect=expect, as_written=as_written)

    @classmethod
    def delete(cls, path: str, *, expect: Any = ANY) -> Op:
        return cls("delete", path, expect=expect)

    @classmethod
    def rename(cls, path: str, dest: str, *, text: str | None = None, expect: Any = ANY) -> Op:
        """Move `path` to `dest` (which must not exist), optionally with new text."""
        return cls("rename", path, text, dest, expect)


def version_of(blob: Blob | None) -> str | None:
    """What `expect=` names for a file read as `blob` (None: it did not exist)."""
    return None if blob is None else blob.version


@dataclass
class Planner:
    """Checks ops against what is stored now and turns them into changes (hold the store's lock)."""

    store: Store
    limits: Limits
    actor: str
    scope: Scope | None
    memory: Callable[[str, Blob, str], Memory]  # the parsed file, cached while its version holds
    agent: bool = True  # a model writes: the agent's size limits bind (else only the ceiling: limits.check_size)
    now: str = field(default_factory=lambda: model.now_stamp())  # looked up at each call (tests set the clock)
    seen: set[str] = field(default_factory=set)

    def plan(self, op: Op) -> tuple[Change | None, Memory]:
        """The change one op makes (None: nothing to do), and the file it leaves."""
        if op.kind not in ("write", "delete", "rename"):
            raise InvalidArgument(f"op kind {op.kind!r} is not write, delete or rename")
        p = paths.topic_path(op.path)
        dst = None if op.dest is None else paths.topic_path(op.dest)
        if dst == p:
            raise InvalidArgument(f"cannot rename {p} to itself; give a different new path")
        for target in (p, dst):
            if target is not None and target in self.seen:
                raise InvalidArgument(f"{target} appears twice in one batch; merge the changes to it into one")
            if target is not None:
                self.seen.add(target)
        self.writable(*[x for x in (p, dst) if x])
        if dst is not None and self.limits.secret_guard:
            guard.check_path(dst)
        cur = self.store.get(p)
        if op.kind != "write" and cur is None:
            raise NotFound(f"{p} does not exist; nothing to {op.kind}", path=p)
        check_expect(p, cur, op.expect)
        if op.kind == "delete":
            assert cur is not None
            return self._change("delete", p, None, cur), self.memory(p, cur, "deleted")
        if dst is not None and self.store.get(dst) is not None:
            raise Conflict(f"{dst} already exists; pick another name or delete it first", path=dst)
        target = dst or p
        if op.text is None:
            assert cur is not None
            data = cur.data
        else:
            if not isinstance(op.text, str):
                raise InvalidArgument(f"{target}: text must be text, got {type(op.text).__name__}")
            bound(target, op.text, self.limits, agent=self.agent)
            old_meta: dict[str, Any] = {}
            if cur is not None:
                old_meta, _ = model.parse(cur.data.decode("utf-8", "replace"), path=p, strict=False)
            if op.as_written:
                text = self.as_written(target, cur if dst is None else None, op.text)
            else:
                text = self.stamp(target, cur if dst is None else None, old_meta, op.text)
            if text is None:
                assert cur is not None
                return None, self.memory(p, cur, "unchanged")
            data = text.encode()
        mem = model.memory(target, data.decode("utf-8", "replace"), "", self.limits.types)
        if dst is not None:
            assert cur is not None
            return self._change("rename", p, data, cur, mem, dest=dst), replace(mem, change="renamed")
        return self._change("write", p, data, cur, mem), replace(mem, change="created" if cur is None else "updated")

    def undo(self, path: str) -> tuple[Change, str, str]:
        """The change that reverts the last journaled change to `path`: (change, its target, what it does)."""
        records = self.store.journal(path, limit=1)
        if not records:
            raise NotFound(f"{path} has no journaled change to undo", path=path)
        rec = records[0]
        if rec.op == "forget":
            raise NotFound(f"{path} was forgotten by {rec.actor} at {rec.time}; nothing of it is left to bring back", path=path)
        other = rec.dest if rec.path == path else rec.path
        if other is not None and self.scope is not None and not self.scope.can_write(other):
            raise Forbidden(f"cannot undo the last change to {path}: it moved the file across the edge of what this "
                            "principal may write; ask someone who may write both places", path=path)
        if rec.dest is not None:  # a rename: move it back
            cur = self.store.get(rec.dest)
            _check_undo(rec, rec.dest, cur)
            if self.store.get(rec.path) is not None:
                raise Conflict(f"cannot undo the rename: {rec.path} exists again; move or delete it first", path=rec.path)
            assert cur is not None
            change = Change(op="undo", path=rec.dest, dest=rec.path, data=cur.data, expect=cur.version, old=cur.data,
                            entry=model.entry_of(self.memory(rec.path, cur, "")), actor=self.actor, time=self.now, undoes=rec.seq)
            return change, rec.path, "restored"
        cur = self.store.get(path)
        _check_undo(rec, path, cur)
        restored = None if rec.old is None else model.entry_of(self.memory(path, Blob(rec.old, ""), ""))
        change = Change(op="undo", path=path, data=rec.old, expect=version_of(cur), old=None if cur is None else cur.data,
                        entry=restored, actor=self.actor, time=self.now, undoes=rec.seq)
        return change, path, "restored" if rec.old is not None else "deleted"

    def stamp(self, path: str, cur: Blob | None, old_meta: dict[str, Any], text: str) -> str | None:
        """`text` with memdir's `created` (kept from the old file) and `updated` lines set, then checked.

        memdir changes only its own lines, so everything a person wrote in the
        frontmatter stays byte for byte. None when nothing but the `updated`
        line would change from `cur`.
        """
        meta, _ = model.parse(text, path=path, strict=True)
        created = old_meta.get("created") or meta.get("created") or self.now
        given = text
        text = model.set_fields(text, {"created": created, "updated": self.now}, path=path)
        if cur is not None:
            old = cur.data.decode("utf-8", "replace")
            if model.unstamped(text, ("updated",)) == model.unstamped(old, ("updated",)):
                return None
        meta = {k: v for k, v in meta.items() if not (k in model.KNOWN_KEYS and v in CLEARS)}  # empty means unset
        # The schema binds the keys this write sets: another tool's `type: Person` or `tags: a, b` that the
        # file already holds (an import, a hand edit) stays and does not stop an edit of the body.
        meta = {k: v for k, v in meta.items() if k not in old_meta or old_meta[k] != v}
        validate(path, {**meta, "created": created, "updated": self.now}, text, self.limits, agent=self.agent,
                 added=model.head_lines(text) - model.head_lines(given))
        return text

    def as_written(self, path: str, cur: Blob | None, text: str) -> str | None:
        """`text` checked as another writer's file: size and secrets; None when it is there already. Frontmatter
        memdir cannot read (YAML it refuses) lands as written and is read as text, as on any read."""
        meta, body = model.parse(text, path=path, strict=False)
        if cur is not None and cur.data == text.encode():
            return None
        limits_mod.check_size(text, path, self.limits, agent=self.agent)
        if self.limits.secret_guard:
            guard.check(text, path, head_lines=text.count("\n", 0, len(text) - len(body)), meta=meta)
        return text

    def writable(self, *targets: str) -> None:
        """Refuse a path outside what this principal may write, directly or through a symlink."""
        if self.scope is not None:
            for path in targets:
                self.scope.check_write(path)
                if not self.scope.can_write(self.store.resolve(path)):
                    raise Forbidden(
                        f"{path} leads through a symlink outside what this principal may write; write elsewhere", path=path
                    )

    def _change(self, op: str, path: str, data: bytes | None, cur: Blob | None, mem: Memory | None = None,
                dest: str | None = None) -> Change:
        return Change(op=op, path=path, dest=dest, data=data, expect=version_of(cur),
                      old=None if cur is None else cur.data, entry=None if mem is None else model.entry_of(mem),
                      actor=self.actor, time=self.now)


def check_expect(path: str, cur: Blob | None, expect: Any) -> None:
    """Refuse a change whose `expect` (None: must not exist; a version: must still be it) does not hold."""
    if expect is ANY:
        return
    if expect is None and cur is not None:
        raise Conflict(f"{path} already exists (version {cur.version}); read it first, or write with its version", path=path)
    if expect is not None:
        if cur is None:
            raise Conflict(f"{path} does not exist (expected version {expect}); it was deleted or renamed", path=path)
        if cur.version != expect:
            raise Conflict(
                f"{path} changed since it was read (version {expect} is now {cur.version}); read it again and retry",
                path=path,
            )


def _check_undo(rec: Record, path: str, cur: Blob | None) -> None:
    """Refuse to undo a change the file moved on from (the same bytes under a new stat, a copy, did not)."""
    if version_of(cur) != rec.new_version and (cur is None or rec.new is None or cur.data != rec.new):
        raise Conflict(
            f"{path} changed since journal change #{rec.seq} (outside memdir?); read it and write what you want instead",
            path=path,
        )


def validate(path: str, meta: dict[str, Any], text: str, limits: Limits, *, agent: bool = True, added: int = 0) -> None:
    """Schema, size (by who writes: `limits.check_size`) and secrets: what a file must pass to be written."""
    limits_mod.check_meta(meta, path, limits)
    limits_mod.check_size(text, path, limits, agent=agent)
    if limits.secret_guard:
        _, body = model.split(text, path=path)
        guard.check(text, path, head_lines=text.count("\n", 0, len(text) - len(body)), meta=meta, added=added)


def bound(path: str, text: str, limits: Limits, *, agent: bool = True) -> None:
    """Refuse text over the size limit before anything parses it (the exact check follows the merge)."""
    if len(text) > (limits.max_bytes if agent else limits_mod.ceiling(limits)):
        limits_mod.check_size(text, path, limits, agent=agent)


def take(store: Store, path: str, limits: Limits) -> None:
    """One write from the tenant's rate bucket, which the store keeps for every process and host."""
    rate = limits.writes_per_minute
    if rate:
        wait = store.take(rate)
        if wait:
            wait = float(max(1, math.ceil(wait)))  # whole seconds, as Retry-After
            raise RateLimited(
                f"{path}: more than {rate} writes per minute for this memory; wait {wait:.0f}s, "
                "and batch related facts into one file",
                retry_after=wait,
                limit=rate,
            )


def places(change: Change) -> bool:
    """Whether a change puts a file at a path that may not exist yet (so `check_place` has a say)."""
    return not (change.record_only or change.data is None or (change.dest is None and change.expect is not None))


def check_place(change: Change, cat: Catalog) -> None:
    """Refuse a new path that makes a file a folder (or a folder a file), or differs from a neighbour only by case
    or normalisation."""
    target = change.target
    parts = target.split("/")
    for i, part in enumerate(parts):
        base = "".join(p + "/" for p in parts[:i])
        here = base + part
        last = i == len(parts) - 1
        if not last and cat.is_file(here):
            raise InvalidPath(f"path {target!r} puts a file under {here!r}, which is a file, not a folder; pick another path",
                              path=target)
        if last and cat.is_folder(here + "/"):
            raise InvalidPath(f"path {target!r} is a folder of topic files; pick another name", path=target)
        if cat.is_file(here) if last else cat.is_folder(here + "/"):
            continue  # an existing name is itself
        clash = cat.clash(base, part)
        if clash is not None:
            raise InvalidPath(
                f"path {target!r}: {base + clash!r} already exists and differs only by case or Unicode normalisation; use that exact name or pick another",
                path=target,
            )
