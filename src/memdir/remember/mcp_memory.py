"""The reference MCP memory server's knowledge graph (`memory.jsonl`), both ways.

`import_mcp_memory` makes one topic file per entity, `<entity type>/<name>.md`:
its observations as bullet lines, its relations both ways as links to the
other entities' files. The frontmatter keeps what the graph says and the
body does not: `entityType`, every other field of the entity record as
written (`createdAt`, `version`, a fork's `importance`, `tags`…) and the
outgoing relations with their own fields (`relations:`). Re-importing an
updated graph merges: new observations and relations are added to the files
(nothing twice), the record's fields take their new values, and what the
new graph no longer holds stays and is reported.

`export_mcp_memory` writes the graph back in the server's own format (one
JSON record per line: entities, then relations; the server's `loadGraph`
reads it), from every memory whose frontmatter has `entityType`: an import
followed by an export gives the same records, up to their order.
"""

from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import model, paths
from ..core.memdir import Memdir
from ..core.ops import Op
from ..errors import InvalidArgument, MemdirError
from .importer import ImportResult, slug

RELATIONS = "## Relations"
REFERENCED = "## Referenced by"
OWN = ("type", "name", "entityType", "observations")  # an entity record's own fields; the others are kept as written
EDGE = ("type", "from", "to", "relationType")
NOT_ENTITY = "not an entity (its frontmatter has no entityType)"


@dataclass
class _Entity:
    name: str
    kind: str
    observations: list[str]
    extra: dict[str, Any]
    line: int
    path: str = ""
    out: list[dict[str, Any]] = field(default_factory=list)  # {relationType, to, ...its own fields}
    incoming: list[tuple[str, str]] = field(default_factory=list)  # (from, relationType)


def _link(src: str, dst: str) -> str:
    """The relative markdown link target from file `src` to file `dst`."""
    target = posixpath.relpath(dst, posixpath.dirname(src) or ".")
    return f"<{target}>" if " " in target or "(" in target or ")" in target else target


def _label(name: str) -> str:
    return name.replace("[", "\\[").replace("]", "\\]")


def _read(source: str | os.PathLike[str], result: ImportResult) -> tuple[dict[str, _Entity], list[dict[str, Any]]]:
    """The entities and relations of a memory.jsonl; lines that are not records are reported."""
    try:
        text = Path(source).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InvalidArgument(f"{source} is not UTF-8 text (byte {err.start}); give the server's memory.jsonl file") from None
    entities: dict[str, _Entity] = {}
    relations: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for number, raw in enumerate(paths.lines(text), 1):
        if not raw.strip():
            continue
        where = f"line {number}"
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, RecursionError) as err:
            result.skipped.append((where, f"not valid JSON ({getattr(err, 'msg', 'nested too deeply')})"))
            continue
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "entity":
            name, etype, obs = item.get("name"), item.get("entityType"), item.get("observations", [])
            if not isinstance(name, str) or not name.strip():
                result.skipped.append((where, "entity without a name"))
                continue
            if not isinstance(obs, list) or not all(isinstance(o, str) for o in obs):
                result.skipped.append((where, f"entity {name!r}: observations must be a list of strings"))
                continue
            extra = {k: v for k, v in item.items() if k not in OWN}
            if name in entities:  # the server never writes two, but merged files might
                known = entities[name].observations
                known.extend(o for o in obs if o not in known)
                entities[name].extra.update(extra)
                result.notes.append(f"line {number}: entity {name!r} appears again; its observations were merged")
            else:
                entities[name] = _Entity(name, etype if isinstance(etype, str) else "", list(obs), extra, number)
            result.files_in += 1
            result.lines_in += 1
        elif kind == "relation":
            parts = [item.get(k) for k in ("from", "relationType", "to")]
            if not all(isinstance(p, str) and p for p in parts):
                result.skipped.append((where, "relation needs from, to and relationType"))
                continue
            key = (item["from"], item["relationType"], item["to"])
            if key not in seen:
                seen.add(key)
                relations.append(item)
            result.files_in += 1
            result.lines_in += 1
        else:
            result.skipped.append((where, f"unknown record type {kind!r}; expected 'entity' or 'relation'"))
    return entities, relations


def _edge(rel: dict[str, Any]) -> dict[str, Any]:
    """A relation as its source entity's frontmatter keeps it: type and target first, then its own fields."""
    return {"relationType": rel["relationType"], "to": rel["to"], **{k: v for k, v in rel.items() if k not in EDGE}}


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
    return meta


def _bullet(observation: str) -> str:
    """An observation as a bullet; one with several lines goes on indented below (so it comes back whole)."""
    return "- " + "\n  ".join(observation.split("\n"))


def _body(ent: _Entity, entities: dict[str, _Entity]) -> str:
    lines = [f"# {ent.name}", ""] + [_bullet(o) for o in ent.observations]
    if ent.out:
        lines += ["", RELATIONS] + [_out_line(ent, e, entities) for e in ent.out]
    if ent.incoming:
        lines += ["", REFERENCED] + [_in_line(ent, a, rel, entities) for a, rel in ent.incoming]
    return "\n".join(lines) + "\n"


def _out_line(ent: _Entity, edge: dict[str, Any], entities: dict[str, _Entity]) -> str:
    return f"- {edge['relationType']} [{_label(edge['to'])}]({_link(ent.path, entities[edge['to']].path)})"


def _in_line(ent: _Entity, source: str, rel: str, entities: dict[str, _Entity]) -> str:
    return f"- [{_label(source)}]({_link(ent.path, entities[source].path)}) {rel} this"


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


def _merged(old: model.Memory, ent: _Entity, entities: dict[str, _Entity], result: ImportResult) -> str:
    """The file an earlier import made, with what the graph adds; what the graph dropped stays and is reported."""
    body = old.body
    have = _observations(body)
    body = _insert(body, None, [_bullet(o) for o in ent.observations if o not in have])
    gone = [o for o in have if o not in ent.observations]
    if gone:
        result.notes.append(f"{ent.path}: kept {len(gone)} observation{'' if len(gone) == 1 else 's'} the new graph "
                            "no longer has; delete them by hand if they are wrong")
    edges = [e for e in old.meta.get("relations") or [] if isinstance(e, dict)]
    keys = {(e.get("relationType"), e.get("to")): i for i, e in enumerate(edges)}
    added = []
    for edge in ent.out:
        k = (edge["relationType"], edge["to"])
        if k in keys:
            edges[keys[k]] = edge
        else:
            edges.append(edge)
            added.append(_out_line(ent, edge, entities))
    for e in edges:
        if (e.get("relationType"), e.get("to")) not in {(x["relationType"], x["to"]) for x in ent.out}:
            result.notes.append(f"{ent.path}: kept the relation {ent.name} {e.get('relationType')} {e.get('to')}, "
                                "which the new graph no longer has")
    body = _insert(body, RELATIONS, added)
    lines = [_in_line(ent, a, rel, entities) for a, rel in ent.incoming]
    body = _insert(body, REFERENCED, [x for x in lines if x not in paths.lines(body)])
    ent.out = edges
    changes = {k: v for k, v in _meta(ent, (), 1000).items() if k not in ("description", "type")}
    text = model.with_body(old.text, body)
    return model.set_fields(text, changes, path=old.path)


def import_mcp_memory(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import (or merge in again) the reference MCP memory server's knowledge graph."""
    result = ImportResult(unit="record")
    entities, relations = _read(source, result)
    taken: set[str] = set()
    existing = {name: _place(md, ent, taken) for name, ent in entities.items()}
    for rel in relations:
        a, b = rel["from"], rel["to"]
        if a not in entities or b not in entities:
            missing = a if a not in entities else b
            result.files_in -= 1
            result.lines_in -= 1
            result.skipped.append((f"relation {a} {rel['relationType']} {b}", f"no entity named {missing!r}"))
            continue
        entities[a].out.append(_edge(rel))
        entities[b].incoming.append((a, rel["relationType"]))
    for name, ent in entities.items():
        old = existing[name]
        where = f"entity {name!r} (line {ent.line})"
        if old is not None and not overwrite:
            text = _merged(old, ent, entities, result)
        else:
            text = model.render(_meta(ent, md.limits.types, md.limits.max_description), _body(ent, entities))
        if old is not None and old.text == text:
            result.unchanged.append(ent.path)
            continue
        try:
            md.apply([Op.write(ent.path, text, expect=None if old is None else old.version, as_written=True)])
        except MemdirError as e:
            result.skipped.append((where, e.message))
            continue
        (result.imported if old is None else result.merged).append(ent.path)
    result.lines_out = result.lines_in - sum(1 for p, _ in result.skipped if p.startswith("entity "))
    return result


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


def graph(md: Memdir) -> tuple[list[dict[str, Any]], ExportResult]:
    """The knowledge-graph records of the memories that have an `entityType`, in the server's field order."""
    result = ExportResult()
    entities: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    for entry in md.list():
        try:
            m = md.read(entry.path)
        except MemdirError as e:
            result.left_out.append((entry.path, e.message))
            continue
        kind = m.meta.get("entityType")
        if not isinstance(kind, str):
            result.left_out.append((entry.path, NOT_ENTITY))
            continue
        name = str(m.meta.get("name") or m.name)
        record: dict[str, Any] = {"type": "entity", "name": name, "entityType": kind,
                                  "observations": _observations(m.body)}
        generated = ("name", "description", "type", "entityType", "relations", *model.STAMPS)
        record.update((k, v) for k, v in m.meta.items() if k not in generated)
        entities.append(record)
        for edge in m.meta.get("relations") or []:
            if isinstance(edge, dict) and isinstance(edge.get("to"), str) and isinstance(edge.get("relationType"), str):
                relations.append({"type": "relation", "from": name, "to": edge["to"],
                                  "relationType": edge["relationType"],
                                  **{k: v for k, v in edge.items() if k not in EDGE}})
    result.entities, result.relations = len(entities), len(relations)
    return entities + relations, result


def export_mcp_memory(md: Memdir, destination: str | os.PathLike[str]) -> ExportResult:
    """Write the memory's entities as a memory.jsonl the reference server loads (it joins lines with no final newline)."""
    records, result = graph(md)
    text = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    try:
        Path(destination).write_text(text, encoding="utf-8")
    except OSError as e:
        raise InvalidArgument(f"cannot write {destination} ({e.strerror or e}); give a file path you may write") from None
    return result
