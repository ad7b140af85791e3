"""The reference MCP memory server's knowledge graph (`memory.jsonl`), both ways, record for record.

`import_mcp_memory` makes one topic file per entity record, `<entity type>/<name>.md`:
its observations as bullet lines, its relations both ways as links to the
other entities' files. The frontmatter keeps what the graph says and the
body does not: `entityType`, every other field of the record as written
(`createdAt`, `version`, a fork's `importance`, `tags`…), the outgoing
relations with their own fields (`relations:`), and where and how each record
stood in the file (`jsonl:`: its line, and its spacing, key order and line end
where they are not the server's). Every record the server's `loadGraph` keeps
is kept: two entities of one name (of two types, or written twice) are two
files; a relation whose source is no entity is kept in its target's file (or,
when neither end is an entity, in `mcp-relations.md`). Re-importing an updated
graph merges: new observations and relations are added (nothing twice), the
record's fields take their new values, and what the new graph no longer holds
stays and is reported. A file that is no such graph (a JSON array, another
tool's JSONL) is refused in one line before anything is created.

`export_mcp_memory` writes the graph back in the server's own format, from
every memory whose frontmatter has `entityType` (or relations of their own):
records in their source order and form where nothing changed, new ones after
them as the server writes them (JSON with no spaces, no newline after the last).
"""

from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

from .. import model, paths
from ..core.memdir import Memdir
from ..core.ops import Op
from ..errors import InvalidArgument, MemdirError
from . import intake
from .importer import ImportResult, slug

RELATIONS = "## Relations"
REFERENCED = "## Referenced by"
OWN = ("type", "name", "entityType", "observations")  # an entity record's own fields; the others are kept as written
EDGE = ("type", "from", "to", "relationType")
PLACE = "jsonl"  # the frontmatter key (and edge key) that says where and how a record stood in the source
LOOSE = "mcp-relations.md"  # relations between names none of which is an entity
NOT_ENTITY = "not an entity (its frontmatter has no entityType)"
WHAT = "the MCP memory server's memory.jsonl (one JSON record per line)"


@dataclass
class _Entity:
    name: str
    kind: str
    observations: list[str]
    extra: dict[str, Any]
    line: int
    place: int | str | None
    path: str = ""
    out: list[dict[str, Any]] = field(default_factory=list)  # {relationType, to, ...its own fields, jsonl}
    incoming: list[tuple[str, str]] = field(default_factory=list)  # (from, relationType)


@dataclass
class Graph:
    """A memory.jsonl as read: its entity records in order, its relation records in order, and what was not."""

    entities: list[_Entity] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    lines: int = 0  # its non-blank lines


def _one_line(text: str) -> str:
    """A name or type as one line of a body: a newline in it must not start a line of its own there."""
    return model.clip(text, 1 << 20) or "?"


def _link(src: str, dst: str) -> str:
    """The relative markdown link target from file `src` to file `dst`."""
    target = posixpath.relpath(dst, posixpath.dirname(src) or ".")
    return f"<{target}>" if " " in target or "(" in target or ")" in target else target


def _label(name: str) -> str:
    return _one_line(name).replace("[", "\\[").replace("]", "\\]")


def _compact(line: int, form: dict[str, Any]) -> int | str:
    """A record's place as the frontmatter keeps it: its line, and its form as JSON when it is not the server's."""
    return line if not form else f"{line} {json.dumps(form, ensure_ascii=False, separators=(',', ':'))}"


def _unpacked(place: Any) -> tuple[int | None, dict[str, Any]]:
    """(line, form) of a place as `_compact` wrote it; (None, {}) for anything else."""
    if isinstance(place, int) and not isinstance(place, bool):
        return place, {}
    if isinstance(place, str):
        head, _, rest = place.partition(" ")
        try:
            form = json.loads(rest) if rest else {}
            return int(head), form if isinstance(form, dict) else {}
        except ValueError:
            pass
    return None, {}


def _form(item: dict[str, Any], raw: str, default: list[str], end: str, last: bool) -> dict[str, Any]:
    """How the line of `item` was written, where that differs from the server's form (`default` key order,
    JSON with no spaces, non-ASCII as is, a newline after it but the last): what export needs to write it
    back alike."""
    form: dict[str, Any] = {}
    if list(item) != default:
        form["keys"] = list(item)
    body = raw[:-1] if raw.endswith("\r") else raw
    for spaced in (False, True):
        for ascii_ in (False, True):
            if json.dumps(item, ensure_ascii=ascii_, separators=(", ", ": ") if spaced else (",", ":")) == body:
                form.update({"spaced": True} if spaced else {})
                form.update({"ascii": True} if ascii_ else {})
                break
        else:
            continue
        break
    else:
        form["raw"] = body  # spacing no json.dumps gives: the line itself, used while the record is unchanged
    if raw.endswith("\r"):
        end = "\r" + end
    if end != ("" if last else "\n"):
        form["end"] = end
    return form


def read_graph(source: str | os.PathLike[str]) -> Graph:
    """The records of a memory.jsonl; `InvalidArgument` in one line when it is no such graph."""
    data = intake.source_text(source, WHAT)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise InvalidArgument(f"{source} is not UTF-8 text (byte {err.start}); give {WHAT}") from None
    _whole(source, text)
    graph = Graph()
    rows = text.split("\n")
    last = max((i for i, r in enumerate(rows) if r.strip()), default=-1)
    for i, raw in enumerate(rows):
        if not raw.strip():
            continue
        graph.lines += 1
        number, where = i + 1, f"line {i + 1}"
        after = next((j for j in range(i + 1, len(rows)) if rows[j].strip()), len(rows))
        if after < len(rows):  # what stands between this record and the next: its newline, and blank lines
            end = "\n" + "".join(r + "\n" for r in rows[i + 1: after])
        else:  # the last record: what the file ends with
            end = "".join("\n" + r for r in rows[i + 1:])
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, RecursionError) as err:
            graph.skipped.append((where, f"not valid JSON ({getattr(err, 'msg', 'nested too deeply')})"))
            continue
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "entity":
            name, etype, obs = item.get("name"), item.get("entityType"), item.get("observations", [])
            if not isinstance(name, str) or not name.strip():
                graph.skipped.append((where, "entity without a name"))
                continue
            if not isinstance(obs, list) or not all(isinstance(o, str) for o in obs):
                graph.skipped.append((where, f"entity {name!r}: observations must be a list of strings"))
                continue
            extra = {k: v for k, v in item.items() if k not in OWN}
            rendered = [k for k in model.KNOWN_KEYS if k in extra] + [k for k in extra if k not in model.KNOWN_KEYS]
            default = list(OWN) + [k for k in rendered if k not in _GENERATED]  # as the file's frontmatter orders them
            place = _compact(number, _form(item, raw, default, end, i == last))
            graph.entities.append(_Entity(name, etype if isinstance(etype, str) else "", list(obs), extra, number, place))
        elif kind == "relation":
            parts = [item.get(k) for k in ("from", "relationType", "to")]
            if not all(isinstance(p, str) and p for p in parts):
                graph.skipped.append((where, "relation needs from, to and relationType"))
                continue
            default = list(EDGE) + [k for k in item if k not in EDGE]
            graph.relations.append({**item, PLACE: _compact(number, _form(item, raw, default, end, i == last))})
        else:
            graph.skipped.append((where, f"unknown record type {kind!r}; expected 'entity' or 'relation'"))
    if graph.lines and not graph.entities and not graph.relations:
        keys = _keys_of(rows)
        found = f"its lines are JSON objects with keys {keys}" if keys else "none of its lines is a JSON object"
        raise InvalidArgument(f"{source} holds no entity or relation record in its {graph.lines:,} lines ({found}): "
                              f"it is not {WHAT}; nothing was imported")
    return graph


def _whole(source: str | os.PathLike[str], text: str) -> None:
    """Refuse, in one line, a file that is one JSON value over many lines (an array, a graph object)."""
    head = text.lstrip()[:1]
    if head not in ("[", "{") or "\n" not in text.strip():
        return
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return  # one record per line (or broken lines): read line by line
    if isinstance(value, list):
        records = sum(isinstance(v, dict) and v.get("type") in ("entity", "relation") for v in value)
        hint = (f"; its {records:,} entity and relation records can be written one per line with "
                f"`jq -c '.[]' {source}`") if records else ""
        raise InvalidArgument(f"{source} is one JSON array of {len(value):,} items, not {WHAT}{hint}; nothing was imported")
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:5])
        raise InvalidArgument(f"{source} is one JSON object over many lines (keys {keys}), not {WHAT}; nothing was imported")


def _keys_of(rows: list[str]) -> str:
    for raw in rows:
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(item, dict):
            return ", ".join(list(item)[:5])
    return ""


_GENERATED = ("name", "description", "type", "entityType", "relations", PLACE, *model.STAMPS)  # keys memdir writes


def _edge(rel: dict[str, Any], owner: str) -> dict[str, Any]:
    """A relation as a file's frontmatter keeps it: type and target first, its source when it is not the
    file's entity, then its own fields and its place in the source."""
    head = {"relationType": rel["relationType"], "to": rel["to"]}
    if rel["from"] != owner:
        head["from"] = rel["from"]
    return model.Flow(head | {k: v for k, v in rel.items() if k not in EDGE})


def _place(md: Memdir, ent: _Entity, taken: set[str]) -> model.Memory | None:
    """Where the entity lives: the file an earlier import made for it, else the first free path."""
    base = f"{slug(ent.kind or 'entity')}/{slug(ent.name)}"
    n = 1
    while True:
        path = base + ".md" if n == 1 else f"{base}-{n}.md"
        n += 1
        if path in taken:
            continue
        try:
            m = md.read(path)
        except MemdirError:
            ent.path = path
            taken.add(path)
            return None
        if m.meta.get("entityType") == ent.kind and m.meta.get("name") == ent.name:
            ent.path = path
            taken.add(path)
            return m


def _meta(ent: _Entity, types: tuple[str, ...], max_description: int) -> dict[str, Any]:
    """An entity file's frontmatter: name, description and type for memdir, then the graph's own fields."""
    first = ent.observations[0] if ent.observations else ent.kind
    meta: dict[str, Any] = {"name": ent.name}
    if "description" not in ent.extra:
        meta["description"] = model.clip(f"{ent.kind}: {first}" if ent.kind else first, max_description)
    if ent.kind.lower() in types:
        meta["type"] = ent.kind.lower()
    meta["entityType"] = ent.kind
    meta.update(ent.extra)
    if ent.out:
        meta["relations"] = ent.out
    if ent.place is not None:
        meta[PLACE] = ent.place
    return meta


def _bullet(observation: str) -> str:
    """An observation as a bullet; one with several lines goes on indented below (so it comes back whole)."""
    return "- " + "\n  ".join(observation.split("\n"))


def _body(ent: _Entity, entities: dict[str, _Entity]) -> str:
    lines = [f"# {_one_line(ent.name)}", ""] + [_bullet(o) for o in ent.observations]
    if ent.out:
        lines += ["", RELATIONS] + [_out_line(ent, e, entities) for e in ent.out]
    if ent.incoming:
        lines += ["", REFERENCED] + [_in_line(ent, a, rel, entities) for a, rel in ent.incoming]
    return "\n".join(lines) + "\n"


def _out_line(ent: _Entity, edge: dict[str, Any], entities: dict[str, _Entity]) -> str:
    source = edge.get("from", ent.name)
    target = entities.get(edge["to"])
    shown = f"[{_label(edge['to'])}]({_link(ent.path, target.path)})" if target is not None else _label(edge["to"])
    if source != ent.name:  # a relation whose source is no entity, kept here
        return f"- {_label(source)} {_one_line(edge['relationType'])} {'this' if target is ent else shown}"
    return f"- {_one_line(edge['relationType'])} {shown}"


def _in_line(ent: _Entity, source: str, rel: str, entities: dict[str, _Entity]) -> str:
    return f"- [{_label(source)}]({_link(ent.path, entities[source].path)}) {_one_line(rel)} this"


def _observations(body: str) -> list[str]:
    """The bullet lines under an entity file's title, up to its first `##` section."""
    found: list[str] = []
    for line in body.split("\n"):
        if line.startswith("## "):
            break
        if line.startswith("- "):
            found.append(line[2:])
        elif line.startswith("  ") and found:
            found[-1] += "\n" + line[2:]
    return found


def _insert(body: str, heading: str | None, new: list[str]) -> str:
    """`body` with `new` lines added at the end of a section (`heading`; None: the observations)."""
    if not new:
        return body
    rows = body.split("\n")
    if heading is None:
        start, stop = 0, next((i for i, r in enumerate(rows) if r.startswith("## ")), len(rows))
    elif heading in rows:
        start = rows.index(heading) + 1
        stop = next((i for i in range(start, len(rows)) if rows[i].startswith("## ")), len(rows))
    else:
        while rows and rows[-1] == "":
            rows.pop()
        return "\n".join(rows + ["", heading, *new]) + "\n"
    at = stop
    while at > start and rows[at - 1].strip() == "":
        at -= 1
    if heading is None and not any(r.startswith("- ") for r in rows[start:at]):
        at = stop if stop < len(rows) else at  # no bullet yet: after the title
    rows[at:at] = new
    return "\n".join(rows)


def _key(edge: dict[str, Any], owner: str = "") -> tuple[Any, Any, Any]:
    return edge.get("from", owner), edge.get("relationType"), edge.get("to")


def _merged(old: model.Memory, ent: _Entity, entities: dict[str, _Entity], result: ImportResult,
            guard: bool) -> tuple[str, dict[str, Any]]:
    """The file an earlier import made with what the graph adds to its body, and the frontmatter fields to set;
    what the graph dropped stays and is reported."""
    body = old.body
    have = _observations(body)
    seen = [intake.redacted(o)[0] if guard else o for o in ent.observations]  # as the file holds them
    body = _insert(body, None, [_bullet(o) for o, c in zip(ent.observations, seen, strict=True) if c not in have])
    gone = [o for o in have if o not in seen]
    if gone:
        result.notes.append(f"{ent.path}: kept {len(gone)} observation{'' if len(gone) == 1 else 's'} the new graph "
                            "no longer has; delete them by hand if they are wrong")
    edges: list[dict[str, Any]] = [model.Flow(e) for e in old.meta.get("relations") or [] if isinstance(e, dict)]
    keys = {_key(e): i for i, e in enumerate(edges)}
    added = []
    for edge in ent.out:
        if _key(edge) in keys:
            edges[keys[_key(edge)]] = edge
        else:
            edges.append(edge)
            added.append(_out_line(ent, edge, entities))
    for e in edges:
        if _key(e) not in {_key(x) for x in ent.out}:
            result.notes.append(f"{ent.path}: kept the relation {e.get('from', ent.name)} {e.get('relationType')} "
                                f"{e.get('to')}, which the new graph no longer has")
    body = _insert(body, RELATIONS, [x for x in added if x not in paths.lines(body)])  # (a page lists those kept elsewhere)
    lines = [_in_line(ent, a, rel, entities) for a, rel in ent.incoming]
    body = _insert(body, REFERENCED, [x for x in lines if x not in paths.lines(body)])
    ent.out = edges
    changes = {k: v for k, v in _meta(ent, (), 1000).items() if k not in ("description", "type")}
    return model.with_body(old.text, body), changes


def import_mcp_memory(md: Memdir, source: str | os.PathLike[str] | Graph, *, overwrite: bool = False) -> ImportResult:
    """Import (or merge in again) the reference MCP memory server's knowledge graph, every record of it."""
    result = ImportResult(unit="record")
    graph = source if isinstance(source, Graph) else read_graph(source)
    result.lines_in = graph.lines
    for where, why in graph.skipped:
        result.skip(where, why, 1)
    first: dict[str, _Entity] = {}
    for ent in graph.entities:
        first.setdefault(ent.name, ent)  # the one the server's find() answers for the name
    taken: set[str] = set()
    existing = [(ent, _place(md, ent, taken)) for ent in graph.entities]
    held: list[dict[str, Any]] = []  # relations no entity's file keeps: between names that are no entity, or too many
    for rel in graph.relations:
        a, b = first.get(rel["from"]), first.get(rel["to"])
        if a is not None:
            a.out.append(_edge(rel, a.name))
            if b is not None:
                b.incoming.append((a.name, rel["relationType"]))
        elif b is not None:
            b.out.append(_edge(rel, b.name))  # its source is no entity: kept with its target, `from` written out
        else:
            held.append(_edge(rel, ""))
    for ent, old in existing:
        held += _land(md, ent, old, first, result, overwrite)
    if held:
        _hold(md, held, first, result)
    dangling = [r for r in graph.relations if r["from"] not in first or r["to"] not in first]
    if dangling:
        result.notes.append(f"kept {len(dangling)} relation{'' if len(dangling) == 1 else 's'} naming no entity at one "
                            "end or both (the server keeps them too): " + "; ".join(
                                f"{r['from']} {r['relationType']} {r['to']}" for r in dangling[:5])
                            + ("…" if len(dangling) > 5 else ""))
    return result


def _fitting(meta: dict[str, Any]) -> int:
    """How many of `meta`'s relations fit in one frontmatter (it has a size limit; the body has none)."""
    edges = meta.get("relations") or []
    room = model.MAX_FRONTMATTER_BYTES * 3 // 4 - len(model.render({k: v for k, v in meta.items() if k != "relations"},
                                                                    "").encode())
    for n, edge in enumerate(edges):
        room -= len(model.render({"x": [edge]}, "").encode())
        if room < 0:
            return n
    return len(edges)


def _land(md: Memdir, ent: _Entity, old: model.Memory | None, entities: dict[str, _Entity], result: ImportResult,
          overwrite: bool) -> list[dict[str, Any]]:
    """Write one entity's file; returns the relations its frontmatter has no room for (kept elsewhere, and
    listed on its page all the same)."""
    where = f"entity {ent.name!r} (line {ent.line})"
    mine = {_key(e, ent.name) for e in ent.out}  # this graph's relations, counted where they land
    if old is not None and not overwrite:
        body, changes = _merged(old, ent, entities, result, md.limits.secret_guard)
    else:
        body, changes = _body(ent, entities), {}
    meta = _meta(ent, md.limits.types, md.limits.max_description)
    fit = _fitting(meta)
    spilled = [model.Flow({**e, "from": ent.name}) if "from" not in e else e for e in ent.out[fit:]]
    ent.out = ent.out[:fit]
    if changes:
        changes["relations"] = ent.out or None
        text = model.set_fields(body, changes, path=old.path if old is not None else "")
    else:
        text = model.render(_meta(ent, md.limits.types, md.limits.max_description), body)
    records = (1 if ent.place is not None else 0) + sum(_key(e, ent.name) in mine for e in ent.out)
    _write(md, ent, old, text, where, result, records)
    return spilled


def _write(md: Memdir, ent: _Entity, old: model.Memory | None, text: str, where: str, result: ImportResult,
           records: int) -> None:
    if md.limits.secret_guard:
        text, found = intake.redacted(text)
        result.redacted += [(ent.path, n, kind) for n, kind in found]
    if old is not None and old.text == text:
        result.landed(ent.path, "unchanged", records, records)
        return
    try:
        md.apply([Op.write(ent.path, text, expect=None if old is None else old.version, as_written=True)])
    except MemdirError as e:
        result.skip(where, e.message, records)
        return
    result.landed(ent.path, "imported" if old is None else "merged", records, records)


def _hold(md: Memdir, edges: list[dict[str, Any]], entities: dict[str, _Entity], result: ImportResult) -> None:
    """Keep relations no entity's frontmatter holds in `mcp-relations.md` (and `-2`, `-3`… as each fills)."""
    olds: list[model.Memory] = []
    while True:
        try:
            olds.append(md.read(LOOSE if not olds else LOOSE.replace(".md", f"-{len(olds) + 1}.md")))
        except MemdirError:
            break
    kept: list[dict[str, Any]] = [model.Flow(e) for m in olds for e in m.meta.get("relations") or [] if isinstance(e, dict)]
    new = [e for e in edges if _key(e) not in {_key(k) for k in kept}]  # every edge here has its `from`
    pending = kept + new
    n = 0
    while pending:
        holder = _Entity("Relations no entity's page keeps", "", [], {}, 0, None,
                         path=LOOSE if n == 0 else LOOSE.replace(".md", f"-{n + 1}.md"))
        meta: dict[str, Any] = {"name": holder.name, "description": "relations of the MCP memory graph: between names "
                                "that are no entity, or more than an entity's page has room for", "relations": pending}
        fit = max(1, _fitting(meta))
        holder.out, pending = pending[:fit], pending[fit:]
        meta["relations"] = holder.out
        lines = "\n".join(_out_line(holder, e, entities) for e in holder.out)
        mine = {_key(e) for e in edges}  # this graph's relations: what it counts
        fresh = sum(1 for e in holder.out if _key(e) in mine)
        _write(md, holder, olds[n] if n < len(olds) else None, model.render(meta, f"# {holder.name}\n\n{lines}\n"),
               "relations no entity's page keeps", result, fresh)
        n += 1


# ---------------------------------------------------------------- export


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


@dataclass
class ExportResult:
    entities: int = 0
    relations: int = 0
    left_out: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"entities": self.entities, "relations": self.relations,
                "left_out": [{"path": p, "why": w} for p, w in self.left_out]}

    def summary(self) -> str:
        head = f"exported {_count(self.entities, 'entity', 'entities')} and {_count(self.relations, 'relation')}"
        plain = [p for p, w in self.left_out if w == NOT_ENTITY]
        if plain:
            head += f"; left out {_count(len(plain), 'memory', 'memories')} with no entityType"
        return "\n".join([head] + [f"left out {p}: {w}" for p, w in self.left_out if w != NOT_ENTITY])


@dataclass
class _Line:
    """One record as export writes it: where it goes and its text."""

    order: tuple[int, int, int]
    text: str
    end: str | None  # what follows it in the source (None: the server's newline)


def _shaped(record: dict[str, Any], place: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The record in its source's key order, and its line as the source wrote it (the server's form if new)."""
    keys = place.get("keys")
    if isinstance(keys, list):
        record = {k: record[k] for k in keys if k in record} | {k: v for k, v in record.items() if k not in keys}
    raw = place.get("raw")
    if isinstance(raw, str):
        try:
            if json.loads(raw) == record:
                return record, raw
        except (json.JSONDecodeError, RecursionError):
            pass
    spaced = (", ", ": ") if place.get("spaced") else (",", ":")
    return record, json.dumps(record, ensure_ascii=bool(place.get("ascii")), separators=spaced)


def _placed(record: dict[str, Any], place: Any, kind: int, seq: int) -> _Line:
    line, form = _unpacked(place)
    _, text = _shaped(record, form)
    end = form.get("end") if isinstance(form.get("end"), str) else None
    order = (0, line, 0) if line is not None else (1, kind, seq)
    return _Line(order, text, end)


def graph(md: Memdir) -> tuple[list[dict[str, Any]], ExportResult]:
    """The knowledge-graph records of the memories that have an `entityType` (and the relations memdir keeps for
    names that are no entity), in the source's order and key order."""
    lines, result = _lines(md)
    return [json.loads(x.text) for x in lines], result


def _lines(md: Memdir) -> tuple[list[_Line], ExportResult]:
    result = ExportResult()
    out: list[_Line] = []
    for entry in md.list():
        try:
            m = md.read(entry.path)
        except MemdirError as e:
            result.left_out.append((entry.path, e.message))
            continue
        kind = m.meta.get("entityType")
        edges = [e for e in m.meta.get("relations") or [] if isinstance(e, dict)]
        if not isinstance(kind, str) and not (edges and all(isinstance(e.get("from"), str) for e in edges)):
            result.left_out.append((entry.path, NOT_ENTITY))
            continue
        name = str(m.meta.get("name") or m.name)
        if isinstance(kind, str):
            record: dict[str, Any] = {"type": "entity", "name": name, "entityType": kind,
                                      "observations": _observations(m.body)}
            own = _own(m.meta)
            record.update((k, v) for k, v in m.meta.items() if k not in _GENERATED or k in own)
            out.append(_placed(record, m.meta.get(PLACE), 0, len(out)))
            result.entities += 1
        for edge in edges:
            if isinstance(edge.get("to"), str) and isinstance(edge.get("relationType"), str):
                rel = {"type": "relation", "from": edge.get("from", name), "to": edge["to"],
                       "relationType": edge["relationType"],
                       **{k: v for k, v in edge.items() if k not in (*EDGE, PLACE)}}
                out.append(_placed(rel, edge.get(PLACE), 1, len(out)))
                result.relations += 1
    out.sort(key=lambda x: x.order)
    return out, result


def _own(meta: dict[str, Any]) -> set[str]:
    """Fields the source record had under a name memdir also writes (a fork's own `description`)."""
    keys = _unpacked(meta.get(PLACE))[1].get("keys")
    return {k for k in keys if k not in OWN} if isinstance(keys, list) else set()


def export_mcp_memory(md: Memdir, destination: str | os.PathLike[str]) -> ExportResult:
    """Write the memory's graph as a memory.jsonl the reference server loads: records in the source's order and
    form, new ones after them as the server writes them (no newline after the last)."""
    lines, result = _lines(md)
    text = "".join(x.text + (x.end if x.end is not None else "\n" if i < len(lines) - 1 else "")
                   for i, x in enumerate(lines))
    try:
        with open(destination, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        raise InvalidArgument(f"cannot write {destination} ({e.strerror or e}); give a file path you may write") from None
    return result
