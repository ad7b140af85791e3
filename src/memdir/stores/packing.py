"""How the journal keeps past content small: a version as the lines it changed, or compressed.

A journal record holds the content before (`old`) and after (`new`) its change.
Most of the time `old` is the `new` of the record before it for the same file,
and `new` is a small edit of `old`. Packed, a record stores `old` as a
reference to that earlier record (no bytes) and `new` as the lines it changed
against `old`, compressed, or the whole content compressed when that is
smaller. A chain of references is cut every `KEYFRAME` records, so reading any
version decodes a bounded number of records.

A commit packs as it records (`committed`): `old` as a reference to the
record that wrote it (the version the writer read is that record's), `new`
as the lines it changed, deflated with `old` as the dictionary (so the words
of a changed line cost little), or compressed with `old` as zlib's dictionary
when that is smaller: a small edit of a 16 KB file costs about a hundred
bytes. `Store.rewrite` packs again (`pack`: compaction, forgetting,
redaction); a store that drops or replaces a record first repacks the records
that reference it.

Forms are two letters, `old` then `new`, then how many other records a read
of `new` visits: `w` bytes as they are, `z` zlib, `r` (old) the new content
of record `base`, `e` (new) a line delta against this record's old content,
deflated with the old content as its dictionary, `d` the same delta in plain
zlib (journals packed before `e`), `x` (new) zlib with the old content as its
dictionary, `-` no content.
"""

from __future__ import annotations

import difflib
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..errors import StoreError
from .base import Record

RAW = ""  # a record as committed: old and new stored whole
KEYFRAME = 128  # records one read may decode at most (a chain of references is cut after this many)
SMALL = 64  # content this short is stored as it is (zlib's header costs more than it saves)
Row = tuple[Record, str | None, int | None]  # a journal record as stored, its form and its base


@dataclass(frozen=True)
class Packed:
    """A record's stored form: what goes in the journal's `form`, `base`, `old` and `new`."""

    form: str
    base: int | None
    old: bytes | None
    new: bytes | None


def _whole(data: bytes) -> tuple[str, bytes]:
    if len(data) <= SMALL:
        return "w", data
    packed = zlib.compress(data, 9)
    return ("z", packed) if len(packed) < len(data) else ("w", data)


def _ops(base: bytes, data: bytes) -> bytes:
    """`data` as lines copied from `base` and lines inserted."""
    a, b = base.splitlines(keepends=True), data.splitlines(keepends=True)
    out: list[bytes] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag == "equal":
            out.append(b"c%d,%d\n" % (i1, i2 - i1))
        elif j2 > j1:
            chunk = b"".join(b[j1:j2])
            out.append(b"i%d\n" % len(chunk) + chunk)
    return b"".join(out)


def delta(base: bytes, data: bytes) -> bytes:
    """`data` as lines copied from `base` and lines inserted, compressed (`patch` undoes it)."""
    return zlib.compress(_ops(base, data), 9)


def edelta(base: bytes, data: bytes) -> bytes:
    """`delta`'s lines deflated with `base` as the dictionary: the words an inserted line shares with base cost
    little (`epatch` undoes it)."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, base[-32768:])
    return z.compress(_ops(base, data)) + z.flush()


def epatch(base: bytes, packed: bytes) -> bytes:
    z = zlib.decompressobj(-15, zdict=base[-32768:])
    return _patched(base, z.decompress(packed) + z.flush())


def patch(base: bytes, packed: bytes) -> bytes:
    """The content `delta(base, data)` was made from."""
    return _patched(base, zlib.decompress(packed))


def _patched(base: bytes, ops: bytes) -> bytes:
    lines, out, at = base.splitlines(keepends=True), [], 0
    while at < len(ops):
        end = ops.index(b"\n", at)
        head, at = ops[at:end], end + 1
        if head[:1] == b"c":
            start, count = (int(x) for x in head[1:].split(b","))
            out.extend(lines[start : start + count])
        else:
            size = int(head[1:])
            out.append(ops[at : at + size])
            at += size
    return b"".join(out)


def against(base: bytes, data: bytes) -> bytes:
    """`data` compressed with `base` as zlib's dictionary: what it shares with base's last 32 KB costs almost nothing."""
    z = zlib.compressobj(6, zdict=base[-32768:])
    return z.compress(data) + z.flush()


def unagainst(base: bytes, packed: bytes) -> bytes:
    z = zlib.decompressobj(zdict=base[-32768:])
    return z.decompress(packed) + z.flush()


def cost(form: str | None) -> int:
    """How many other records a read of a record's new content visits (from its stored form)."""
    return int(form[2:]) if form and form[2:].isdigit() else 0


def committed(old: bytes | None, new: bytes | None, prev: tuple[int, str | None] | None) -> Packed:
    """How a commit stores a change's content: `old` as a reference to `prev` (the record that wrote it, and its
    form), unless the chain is `KEYFRAME` long; `new` compressed against `old`, or alone when that is smaller."""
    base, old_cost = None, 0
    if old is None:
        old_form, stored_old = "-", None
    elif prev is not None and cost(prev[1]) < KEYFRAME:
        old_form, stored_old, base, old_cost = "r", None, prev[0], cost(prev[1]) + 1
    else:
        old_form, stored_old = _whole(old)
    if new is None:
        return Packed(f"{old_form}-0", base, stored_old, None)
    new_form, stored_new = _whole(new)
    new_cost = 0
    if old is not None and len(new) > SMALL:
        changed = edelta(old, new)
        if len(changed) < len(stored_new):
            new_form, stored_new, new_cost = "e", changed, old_cost
        if len(changed) > len(new) // 16:  # much of it changed: zlib against the old content may do better
            changed = against(old, new)
            if len(changed) < len(stored_new):
                new_form, stored_new, new_cost = "x", changed, old_cost
    return Packed(f"{old_form}{new_form}{new_cost}", base, stored_old, stored_new)


def pack(records: Iterable[Record]) -> dict[int, Packed]:
    """The packed form of each record; references go only to records of the same file among these."""
    chains: dict[str, list[Record]] = {}
    for rec in records:
        chains.setdefault(rec.dest or rec.path, []).append(rec)
    out: dict[int, Packed] = {}
    for chain in chains.values():
        prev: Record | None = None
        cost = 0  # records a read of prev.new decodes
        for rec in sorted(chain, key=lambda r: r.seq):
            base, old_cost = None, 0
            if rec.old is None:
                old_form, old = "-", None
            elif prev is not None and prev.new == rec.old and cost < KEYFRAME:
                old_form, old, base, old_cost = "r", None, prev.seq, cost + 1
            else:
                old_form, old = _whole(rec.old)
            if rec.new is None:
                new_form, new, cost = "-", None, 0
            else:
                new_form, new = _whole(rec.new)
                cost = 0
                if rec.old is not None and len(rec.new) > SMALL:
                    for form, changed in (("x", against(rec.old, rec.new)), ("e", edelta(rec.old, rec.new))):
                        if len(changed) < len(new):
                            new_form, new, cost = form, changed, old_cost
            out[rec.seq] = Packed(f"{old_form}{new_form}{cost}", base, old, new)
            prev = rec
    return out


def _one(form: str, data: bytes | None) -> bytes | None:
    if form == "-" or data is None:
        return None
    if form not in "wz":
        raise StoreError(f"a journal record is stored in form {form!r}, which this memdir does not know: it was "
                         "written by a newer memdir; upgrade this one")
    return zlib.decompress(data) if form == "z" else data


def unpack(rows: Mapping[int, Row],
           fetch: Callable[[set[int]], Mapping[int, Row]]) -> dict[int, Record]:
    """The records of `rows` (seq -> the record as stored, its form and base) with their content decoded;
    `fetch(seqs)` reads other records a reference leads to."""
    have = dict(rows)
    while True:
        missing = {b for _, form, b in have.values() if form and form[0] == "r" and b is not None and b not in have}
        if not missing:
            break
        got = fetch(missing)
        if not set(got) >= missing:
            raise StoreError(f"journal record #{min(missing - set(got))} is referenced but missing; "
                             "run `memdir doctor`")
        have.update(got)
    done: dict[int, tuple[bytes | None, bytes | None]] = {}

    def content(seq: int) -> tuple[bytes | None, bytes | None]:
        trail = []
        at: int | None = seq
        while at is not None and at not in done:  # walk back to a record that decodes alone
            trail.append(at)
            _, form, base = have[at]
            at = base if form and form[0] == "r" else None
        for s in reversed(trail):
            rec, form, base = have[s]
            if not form:
                done[s] = (rec.old, rec.new)
                continue
            old = done[base][1] if form[0] == "r" and base is not None else _one(form[0], rec.old)
            new: bytes | None
            if form[1] in "dex":
                if old is None:
                    raise StoreError(f"journal record #{s} is a change of content it does not have; run `memdir doctor`")
                new = {"d": patch, "e": epatch, "x": unagainst}[form[1]](old, rec.new or b"")
            else:
                new = _one(form[1], rec.new)
            done[s] = (old, new)
        return done[seq]

    out = {}
    for seq, (rec, _, _) in rows.items():
        old, new = content(seq)
        out[seq] = replace(rec, old=old, new=new)
    return out


def references(rows: Iterable[tuple[int, str | None, int | None]]) -> dict[int, int]:
    """seq -> base of the rows that reference another record."""
    return {seq: base for seq, form, base in rows if form and form[0] == "r" and base is not None}



def decoded(rows: Sequence[Row], fetch: Callable[[set[int]], Mapping[int, Row]]) -> list[Record]:
    """The records of `rows`, in their order, with packed content decoded (`fetch` reads referenced records)."""
    if not any(form for _, form, _ in rows):
        return [rec for rec, _, _ in rows]
    by_seq = unpack({rec.seq: row for row in rows for rec in (row[0],)}, fetch)
    return [by_seq[rec.seq] for rec, _, _ in rows]


def plan(edits: Mapping[int, Record | None], dependents: Iterable[Record], newest: int) -> dict[int, Packed | None]:
    """What a rewrite stores for each seq: the edited records packed, or None to drop one, and the records that
    referenced an edited one (`dependents`, decoded before the rewrite) packed again beside them."""
    if edits.get(newest, True) is None:
        raise StoreError(f"cannot drop journal record #{newest}: it is the newest, and a seq must never be given twice")
    full: dict[int, Record | None] = {d.seq: d for d in dependents if d.seq not in edits}
    full.update(edits)
    packed = pack(r for r in full.values() if r is not None)
    return {seq: None if rec is None else packed[seq] for seq, rec in full.items()}
