"""`memdir import`: bring in memories kept by other systems.

Each importer writes through `Memdir.write` (so every limit, the secret guard
and the journal apply), never overwrites unless asked, and reports what it
imported and what it could not, with the reason.

- claude-code (`import_dir`): a folder of topic files. Files are copied with
  their relative paths. The folder's MEMORY.md (if any) fills in what the
  files lack: link lines `- [title](file.md) — desc` and pipe lines
  `- path | description #category`; a `## Section` heading or a `#category`
  that names a configured type becomes the type.
- mcp-memory (`import_mcp_memory`): the knowledge-graph JSONL of the reference
  MCP memory server; one topic file per entity.
- basic-memory (`import_basic_memory`): a folder of basic-memory notes.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import model, paths
from ..core import index
from ..core.memdir import ANY, Memdir
from ..errors import InvalidArgument, MemdirError
from ..paths import INDEX_NAME


@dataclass
class ImportResult:
    imported: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    unmapped: list[tuple[int, str]] = field(default_factory=list)  # index lines not understood
    dangling: list[str] = field(default_factory=list)  # index lines naming files that are not there
    notes: list[str] = field(default_factory=list)  # anything else that was not carried over, in one line each

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "unchanged": self.unchanged,
            "skipped": [{"path": p, "why": w} for p, w in self.skipped],
            "unmapped_index_lines": [{"line": n, "text": t} for n, t in self.unmapped],
            "index_lines_without_file": self.dangling,
            "notes": self.notes,
        }

    def summary(self) -> str:
        n = len(self.imported)
        out = [f"imported {n} file{'' if n == 1 else 's'}" + (f", {len(self.unchanged)} unchanged" if self.unchanged else "")]
        for path, why in self.skipped:
            out.append(f"skipped {path}: {why}")
        for number, text in self.unmapped:
            out.append(f"could not map MEMORY.md line {number}: {text.strip()}")
        for path in self.dangling:
            out.append(f"MEMORY.md names {path}, which is not in the folder")
        out.extend(self.notes)
        return "\n".join(out)

    def _write(self, md: Memdir, path: str, text: str, overwrite: bool, source: str, **meta: Any) -> None:
        """Write one file through memdir and record the outcome under `source` (what the user knows it as)."""
        try:
            m = md.write(path, text, expect=ANY if overwrite else None, **meta)
        except MemdirError as e:
            why = e.message
            if why.startswith(path + " already exists"):
                why = "already in the memory (use --overwrite to replace it)"
            self.skipped.append((source, why))
            return
        (self.unchanged if m.change == "unchanged" else self.imported).append(path)


def _inside(root: Path, rel: str) -> bool:
    """Whether `rel` really lies in `root`: a symlink may point anywhere (~/.netrc), and is not followed out."""
    real, top = os.path.realpath(root / rel), os.path.realpath(root)
    return real.startswith(top + os.sep)


def _linked_folders(folder: str, dirs: list[str], rel: str, result: ImportResult) -> list[str]:
    """The folders to walk; symlinked ones are reported as skipped (the walk never follows them)."""
    keep = []
    for d in sorted(d for d in dirs if not d.startswith(".")):
        if os.path.islink(os.path.join(folder, d)):
            result.skipped.append((d if rel == "." else f"{rel}/{d}", "a symlinked folder; import does not follow folder links"))
        else:
            keep.append(d)
    return keep


def _load(root: Path, rel: str, result: ImportResult) -> tuple[str, str, dict[str, Any], str] | None:
    """(memdir path, text, frontmatter, body) of one source file, or None with the reason in `result`."""
    if not _inside(root, rel):
        result.skipped.append((rel, "a symlink leading out of the source folder; not followed"))
        return None
    try:
        path = paths.topic_path(rel)
        text = (root / rel).read_text(encoding="utf-8")
        meta, body = model.parse(text, path=path, strict=True)
    except UnicodeDecodeError:
        result.skipped.append((rel, "not UTF-8 text"))
        return None
    except MemdirError as e:
        result.skipped.append((rel, e.message))
        return None
    return path, text, meta, body


def _source_files(source: Path, result: ImportResult) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(source):
        rel = Path(folder).relative_to(source).as_posix()
        dirs[:] = _linked_folders(folder, dirs, rel, result)
        for name in sorted(files):
            if name.endswith(".md") and name != INDEX_NAME and not name.startswith("."):
                found.append(name if rel == "." else f"{rel}/{name}")
    return found


def import_dir(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import every topic file under `source`; report what could not be imported and why."""
    root = Path(source)
    result = ImportResult()
    hints: dict[str, index.IndexLine] = {}
    index_file = root / INDEX_NAME
    if index_file.is_file() and _inside(root, INDEX_NAME):
        lines, result.unmapped = index.parse(index_file.read_text(encoding="utf-8", errors="replace"))
        for item in lines:
            hints[item.path.lstrip("./")] = item
    files = _source_files(root, result)
    present = set(files)
    result.dangling = sorted(p for p in hints if p not in present)
    for rel in files:
        loaded = _load(root, rel, result)
        if loaded is None:
            continue
        path, text, meta, _ = loaded
        extra: dict[str, Any] = {}
        hint = hints.get(rel)
        if hint is not None:
            if not meta.get("description") and hint.description:
                extra["description"] = model.clip(hint.description, md.limits.max_description)
            if not meta.get("name") and hint.title and hint.title != rel and hint.title != rel.rsplit("/", 1)[-1]:
                extra["name"] = model.clip(hint.title, md.limits.max_name)
            if not meta.get("type"):
                for candidate in (hint.category, (hint.section or "").strip().lower()):
                    if candidate and candidate.lower() in md.limits.types:
                        extra["type"] = candidate.lower()
                        break
                else:
                    if hint.category:
                        extra["tags"] = list(model.tags_of(meta.get("tags"))) + [hint.category]
        result._write(md, path, text, overwrite, rel, **extra)
    return result


# ---------------------------------------------------------------- shared helpers


def slug(text: str) -> str:
    """A file-name-safe form of a name: lowercase words joined by '-' ('John Smith' -> 'john-smith')."""
    words = re.findall(r"\w+", text.lower())
    return "-".join(words)[:80].strip("-_") or "untitled"


def _link(src: str, dst: str) -> str:
    """The relative markdown link target from file `src` to file `dst`."""
    return posixpath.relpath(dst, posixpath.dirname(src) or ".")


# ---------------------------------------------------------------- mcp-memory


@dataclass
class _Entity:
    name: str
    kind: str
    observations: list[str]
    line: int
    path: str = ""


def import_mcp_memory(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import the reference MCP memory server's knowledge graph (JSONL: entities and relations).

    Each entity becomes `<entity type>/<name>.md`: its observations as bullet
    lines and its relations, both ways, as links to the other entities' files.
    """
    result = ImportResult()
    entities: dict[str, _Entity] = {}
    relations: list[tuple[str, str, str]] = []
    try:
        text = Path(source).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InvalidArgument(f"{source} is not UTF-8 text (byte {err.start}); give the server's memory.jsonl file") from None
    for number, raw in enumerate(paths.lines(text), 1):
        if not raw.strip():
            continue
        where = f"line {number}"
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as err:
            result.skipped.append((where, f"not valid JSON ({err.msg})"))
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
            kind_text = etype if isinstance(etype, str) and etype.strip() else "entity"
            if name in entities:  # the server never writes two, but merged files might
                known = entities[name].observations
                known.extend(o for o in obs if o not in known)
                result.notes.append(f"line {number}: entity {name!r} appears again; its observations were merged")
            else:
                entities[name] = _Entity(name, kind_text, list(obs), number)
        elif kind == "relation":
            parts = [item.get(k) for k in ("from", "relationType", "to")]
            if not all(isinstance(p, str) and p for p in parts):
                result.skipped.append((where, "relation needs from, to and relationType"))
                continue
            relations.append((parts[0], parts[1], parts[2]))
        else:
            result.skipped.append((where, f"unknown record type {kind!r}; expected 'entity' or 'relation'"))
    taken: set[str] = set()
    for ent in entities.values():
        base = f"{slug(ent.kind)}/{slug(ent.name)}"
        path, n = base + ".md", 2
        while path in taken:
            path, n = f"{base}-{n}.md", n + 1
        taken.add(path)
        ent.path = path
    outgoing: dict[str, list[str]] = {}
    incoming: dict[str, list[str]] = {}
    for a, rel, b in dict.fromkeys(relations):
        src, dst = entities.get(a), entities.get(b)
        if src is None or dst is None:
            missing = a if src is None else b
            result.notes.append(f"relation {a} {rel} {b} not imported: no entity named {missing!r}")
            continue
        outgoing.setdefault(a, []).append(f"- {rel} [{_label(b)}]({_link(src.path, dst.path)})")
        incoming.setdefault(b, []).append(f"- [{_label(a)}]({_link(dst.path, src.path)}) {rel} this")
    for ent in entities.values():
        lines = [f"# {ent.name}", ""] + [f"- {o}" for o in ent.observations]
        if ent.name in outgoing:
            lines += ["", "## Relations"] + outgoing[ent.name]
        if ent.name in incoming:
            lines += ["", "## Referenced by"] + incoming[ent.name]
        first = ent.observations[0] if ent.observations else ent.kind
        meta: dict[str, Any] = {
            "name": model.clip(ent.name, md.limits.max_name),
            "description": model.clip(f"{ent.kind}: {first}", md.limits.max_description),
            "tags": [ent.kind],
        }
        if ent.kind.lower() in md.limits.types:
            meta["type"] = ent.kind.lower()
        result._write(md, ent.path, "\n".join(lines) + "\n", overwrite, f"entity {ent.name!r} (line {ent.line})", **meta)
    return result


def _label(name: str) -> str:
    return name.replace("[", "\\[").replace("]", "\\]")


# ---------------------------------------------------------------- basic-memory

_WIKI = re.compile(r"\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]")
_OBSERVATION = re.compile(r"^\s*[-*]\s+\[(?P<category>[^\]]+)\]\s+(?P<text>.+)$")
_HASHTAG = re.compile(r"(?:^|\s)#([\w/-]+)")


def import_basic_memory(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import a folder of basic-memory notes, keeping their text.

    Frontmatter `title` becomes the name, `tags` (and the `#tags` of
    observations) the tags, `type` the type when it is one of memdir's (else a
    tag), `permalink` and custom keys stay as they are. The description is the
    first observation or line of prose. `[[Wiki links]]` that name no note in
    the folder are reported.
    """
    root = Path(source)
    result = ImportResult()
    notes: list[tuple[str, dict[str, Any], str]] = []
    for folder, dirs, files in os.walk(root):
        rel_dir = Path(folder).relative_to(root).as_posix()
        dirs[:] = _linked_folders(folder, dirs, rel_dir, result)
        for name in sorted(files):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if name.startswith("."):
                continue
            if not name.endswith(".md"):
                result.skipped.append((rel, "not a markdown note; memdir keeps .md files only"))
                continue
            loaded = _load(root, rel, result)
            if loaded is not None:
                path, _, meta, body = loaded
                notes.append((path, meta, body))
    known = set()
    for path, meta, _ in notes:
        stem = path.rsplit("/", 1)[-1][:-3]
        known |= {stem.lower(), str(meta.get("title", stem)).lower(), str(meta.get("permalink", "")).lower()}
    for path, meta, body in notes:
        out = dict(meta)
        title = out.pop("title", None)
        if isinstance(title, str) and title.strip():
            out["name"] = model.clip(title, md.limits.max_name)
        tags = list(model.tags_of(out.get("tags")))
        kind = out.pop("type", None)
        if isinstance(kind, str) and kind.lower() in md.limits.types:
            out["type"] = kind.lower()
        elif isinstance(kind, str) and kind and kind.lower() != "note":
            tags.append(kind)
        description = None
        for line in paths.lines(body):
            obs = _OBSERVATION.match(line)
            if obs:
                tags += _HASHTAG.findall(obs.group("text"))
                description = description or obs.group("text")
            elif description is None and line.strip() and not line.lstrip().startswith(("#", "- ", "* ")):
                description = line.strip()
        tags = [t.lstrip("#") for t in tags if t.lstrip("#")]
        if tags:
            out["tags"] = list(dict.fromkeys(tags))
        if description and not out.get("description"):
            out["description"] = model.clip(description, md.limits.max_description)
        for target in dict.fromkeys(_WIKI.findall(body)):
            if target.strip().lower() not in known and slug(target) not in known:
                result.notes.append(f"{path}: [[{target}]] names no note in {root}; the link is kept as text")
        result._write(md, path, model.render(out, body), overwrite, path)
    return result
