"""Memories and their frontmatter: parsing, rendering, derived fields.

A topic file is optional YAML frontmatter between `---` lines, then a markdown
body. Parsing is strict when memdir writes (a bad file is refused) and lenient
when it reads (a file someone dropped in is still readable and listed).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import yaml

from .errors import InvalidMemory
from .paths import UNPRINTABLE

KNOWN_KEYS = ("name", "description", "type", "tags", "created", "updated")
MAX_DEPTH = 8
MAX_FRONTMATTER_BYTES = 8 * 1024  # name, description, type, tags and a few extras fit many times over
INDEX_DESCRIPTION_CHARS = 150

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Stamp(str):
    """A date or time kept as text; rendered as a plain (unquoted) YAML scalar."""


class _Dumper(_BaseDumper):  # type: ignore[misc,valid-type]
    pass


def _represent_list(dumper: Any, data: list[Any]) -> Any:
    """Short lists of plain scalars in flow style (`tags: [a, b]`), anything else as blocks."""
    flow = all(isinstance(x, (str, int, float, bool)) and not isinstance(x, Stamp) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(Stamp, lambda d, v: d.represent_scalar("tag:yaml.org,2002:timestamp", str(v)))
_Dumper.add_representer(list, _represent_list)


@dataclass(frozen=True)
class Memory:
    """One topic file as read (or as just written).

    `name` and `description` are the effective values: from the frontmatter,
    else derived from the file name and the body. `meta` is the frontmatter as
    written. `change` is set on write results: created, updated or unchanged.
    """

    path: str
    name: str
    description: str
    type: str | None
    tags: tuple[str, ...]
    created: str | None
    updated: str | None
    body: str
    text: str
    version: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    change: str = ""

    @property
    def lines(self) -> int:
        return count_lines(self.text)

    @property
    def size(self) -> int:
        return len(self.text.encode())

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tags"] = list(self.tags)
        out["lines"] = self.lines
        out["size"] = self.size
        if not self.change:
            del out["change"]  # a plain read changed nothing
        return out


@dataclass(frozen=True)
class Entry:
    """What the catalog knows of one topic file: enough to list and index it."""

    path: str
    name: str
    description: str
    type: str | None
    tags: tuple[str, ...]
    created: str | None
    updated: str | None
    size: int
    lines: int
    version: str

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)  # asdict's deep copy costs more than the rest of a catalog row
        out["tags"] = list(self.tags)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Entry:
        return cls(**{**d, "tags": tuple(d.get("tags") or ())})


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def now_stamp() -> Stamp:
    return Stamp(dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))


# ---------------------------------------------------------------- parsing

_OPEN = re.compile(r"---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.M)
_ALIAS_HINT = re.compile(r"[&*!]")
_SAFE_TAGS = {"!"} | {
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp")
}


def split(text: str, *, path: str = "") -> tuple[str | None, str]:
    """Split text into (frontmatter YAML or None, body). Raises on an unclosed block."""
    m = _OPEN.match(text)
    if not m:
        return None, text
    close = _CLOSE.search(text, m.end())
    if not close:
        where = f"{path}: " if path else ""
        raise InvalidMemory(
            f"{where}frontmatter opened with '---' on line 1 is never closed; end it with a line '---'",
            path=path or None,
        )
    return text[m.end() : close.start()], text[close.end() :]


def _normalise(value: Any, depth: int, path: str) -> Any:
    if depth > MAX_DEPTH:
        raise InvalidMemory(f"{path}: frontmatter nests deeper than {MAX_DEPTH} levels; flatten it", path=path)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() == dt.timedelta(0):
            return Stamp(value.strftime("%Y-%m-%dT%H:%M:%SZ"))
        return Stamp(value.isoformat())
    if isinstance(value, dt.date):
        return Stamp(value.isoformat())
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list):
        return [_normalise(v, depth + 1, path) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidMemory(f"{path}: frontmatter key {k!r} is not a string; quote it", path=path)
            out[k] = _normalise(v, depth + 1, path)
        return out
    raise InvalidMemory(
        f"{path}: frontmatter value of type {type(value).__name__} is not allowed; use strings, numbers, lists and maps",
        path=path,
    )


def parse_meta(block: str, *, path: str = "") -> dict[str, Any]:
    """Parse a frontmatter block with a safe loader; no anchors, aliases or tags."""
    where = path or "frontmatter"
    size = len(block) if block.isascii() else len(block.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:  # checked before YAML sees it: parsing time stays bounded
        raise InvalidMemory(
            f"{where}: the frontmatter is {size:,} bytes; the limit is {MAX_FRONTMATTER_BYTES:,}: keep name, "
            "description, type and tags short and move the rest into the body",
            path=path or None, limit=MAX_FRONTMATTER_BYTES, actual=size,
        )
    if _ALIAS_HINT.search(block):
        try:
            for event in yaml.parse(block, Loader=_Loader):
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                    raise InvalidMemory(
                        f"{where}: YAML anchors and aliases are not allowed in frontmatter; write values out",
                        path=path or None,
                    )
                if isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                    if event.tag and event.tag not in _SAFE_TAGS:
                        raise InvalidMemory(
                            f"{where}: YAML tag {event.tag!r} is not allowed in frontmatter; remove it",
                            path=path or None,
                        )
        except yaml.YAMLError as e:
            raise InvalidMemory(f"{where}: frontmatter is not valid YAML ({_yaml_reason(e)}); fix the YAML between the '---' lines", path=path or None) from None
    try:
        data = yaml.load(block, Loader=_Loader)
    except yaml.YAMLError as e:
        raise InvalidMemory(f"{where}: frontmatter is not valid YAML ({_yaml_reason(e)}); fix the YAML between the '---' lines", path=path or None) from None
    except RecursionError:
        raise InvalidMemory(f"{where}: frontmatter nests too deeply; flatten it", path=path or None) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidMemory(
            f"{where}: frontmatter must be a mapping of keys to values, got {type(data).__name__}",
            path=path or None,
        )
    try:
        result: dict[str, Any] = _normalise(data, 0, where)
    except RecursionError:
        raise InvalidMemory(f"{where}: frontmatter nests too deeply; flatten it", path=path or None) from None
    return result


def _yaml_reason(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        return f"{problem} at line {mark.line + 1}"
    return str(problem)


def parse(text: str, *, path: str = "", strict: bool = True) -> tuple[dict[str, Any], str]:
    """(frontmatter dict, body). Lenient mode returns ({}, text) for a broken block."""
    try:
        block, body = split(text, path=path)
        return (parse_meta(block, path=path) if block is not None else {}), body
    except InvalidMemory:
        if strict:
            raise
        return {}, text


def render(meta: dict[str, Any], body: str) -> str:
    """The file text for metadata and body; known keys first, then extras as given."""
    if body and not body.endswith("\n"):
        body += "\n"
    if not meta:
        return body
    ordered = {k: meta[k] for k in KNOWN_KEYS if k in meta}
    ordered.update((k, v) for k, v in meta.items() if k not in ordered)
    block = yaml.dump(
        ordered, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1 << 16
    )
    return f"---\n{block}---\n{body}"


# ---------------------------------------------------------------- derived fields

_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def derive_description(body: str) -> str:
    """The first heading, else the first non-blank line, trimmed for an index line."""
    first = ""
    for line in body.split("\n"):
        m = _HEADING.match(line)
        if m and m.group(1):
            return clip(m.group(1))
        if not first and line.strip():
            first = line.strip()
    return clip(first.lstrip("-*> ").strip())


def derive_name(path: str) -> str:
    stem = path.rsplit("/", 1)[-1][:-3]
    return stem.replace("-", " ").replace("_", " ").strip() or stem


def clip(text: str, limit: int = INDEX_DESCRIPTION_CHARS) -> str:
    """One line for an index: whitespace runs become one space; control and bidi characters
    (ESC, BEL, NUL, U+202E...) are dropped, so a hand-edited file cannot smuggle them into MEMORY.md."""
    text = " ".join(UNPRINTABLE.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)


def tags_of(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if isinstance(value, list):
        return tuple(str(t) for t in value if t is not None and str(t) != "")
    return (str(value),)


def effective_type(meta: dict[str, Any], path: str, types: tuple[str, ...]) -> str | None:
    """The frontmatter type, else the top folder when it names a configured type."""
    t = meta.get("type")
    if isinstance(t, str) and t:
        return t
    top = path.split("/", 1)[0] if "/" in path else ""
    return top if top in types else None


def memory(path: str, text: str, version: str, types: tuple[str, ...], *, change: str = "") -> Memory:
    meta, body = parse(text, path=path, strict=False)
    name = meta.get("name")
    desc = meta.get("description")
    return Memory(
        path=path,
        name=clip(str(name), 200) if name not in (None, "") else derive_name(path),
        description=clip(str(desc), 1000) if desc not in (None, "") else derive_description(body),
        type=effective_type(meta, path, types),
        tags=tags_of(meta.get("tags")),
        created=_text(meta.get("created")),
        updated=_text(meta.get("updated")),
        body=body,
        text=text,
        version=version,
        meta=meta,
        change=change,
    )


def entry_of(m: Memory) -> Entry:
    return Entry(
        path=m.path,
        name=m.name,
        description=m.description,
        type=m.type,
        tags=m.tags,
        created=m.created,
        updated=m.updated,
        size=m.size,
        lines=m.lines,
        version=m.version,
    )
