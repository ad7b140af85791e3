"""Memories and their frontmatter: parsing, rendering, derived fields.

A topic file is optional YAML frontmatter between `---` lines, then a markdown
body. Parsing is strict when memdir writes (a bad file is refused) and lenient
when it reads (a file someone dropped in is still readable and listed).

Writes keep the frontmatter as its writer wrote it: `set_fields` edits only the
lines of the keys it changes (comments, flow style and key order survive), and
`unstamped` hides memdir's own `created`/`updated` lines again.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import InvalidMemory
from .paths import UNPRINTABLE

KNOWN_KEYS = ("name", "description", "type", "tags", "created", "updated")
STAMPS = ("created", "updated")  # the keys memdir itself sets on every write
MAX_DEPTH = 8
MAX_FRONTMATTER_BYTES = 8 * 1024  # name, description, type, tags and a few extras fit many times over
INDEX_DESCRIPTION_CHARS = 150

if TYPE_CHECKING:
    import yaml


class Stamp(str):
    """A date or time kept as text; rendered as a plain (unquoted) YAML scalar."""


class Flow(dict):  # type: ignore[type-arg]
    """A mapping rendered on one line (`{to: X, relationType: y}`): many small records stay short."""


def _represent_list(dumper: Any, data: list[Any]) -> Any:
    """Short lists of plain scalars in flow style (`tags: [a, b]`), anything else as blocks."""
    flow = all(isinstance(x, (str, int, float, bool)) and not isinstance(x, Stamp) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


@functools.cache
def _yaml() -> tuple[Any, Any, Any]:
    """PyYAML, its safe (C) loader and memdir's dumper, loaded with the first frontmatter parsed or
    written: a process that only shows MEMORY.md or a file's text (an MCP read) never pays the ~9 ms."""
    import yaml

    class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
        pass

    Dumper.add_representer(Stamp, lambda d, v: d.represent_scalar("tag:yaml.org,2002:timestamp", str(v)))
    Dumper.add_representer(list, _represent_list)
    Dumper.add_representer(Flow, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))
    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader), Dumper


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

_OPEN = re.compile(r"\ufeff?---[ \t]*\r?\n")  # a byte-order mark (Notepad's UTF-8) stays in front of the block
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.M)
_ALIAS_HINT = re.compile(r"[&*!]")
_SAFE_TAGS = {"!"} | {
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp")
}


def _bounds(text: str, path: str = "") -> tuple[int, int, int] | None:
    """Offsets of the frontmatter: (YAML start, YAML end, body start), or None without one."""
    m = _OPEN.match(text)
    if not m:
        return None
    close = _CLOSE.search(text, m.end())
    if not close:
        where = f"{path}: " if path else ""
        raise InvalidMemory(
            f"{where}frontmatter opened with '---' on line 1 is never closed; end it with a line '---'",
            path=path or None,
        )
    return m.end(), close.start(), close.end()


def split(text: str, *, path: str = "") -> tuple[str | None, str]:
    """Split text into (frontmatter YAML or None, body). Raises on an unclosed block."""
    bounds = _bounds(text, path)
    if bounds is None:
        return None, text
    start, end, body = bounds
    return text[start:end], text[body:]


def head_lines(text: str) -> int:
    """How many lines the frontmatter takes, `---` lines included (0 without one or if unclosed)."""
    try:
        bounds = _bounds(text)
    except InvalidMemory:
        return 0
    if bounds is None:
        return 0
    head = text[: bounds[2]]
    return head.count("\n") + (0 if head.endswith("\n") else 1)


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
    """Parse a frontmatter block with a safe loader; no anchors, aliases or tags.

    One write parses the same block several times (the given text, the stamped
    text, its checks), so results are kept; each caller gets its own copy.
    """
    where = path or "frontmatter"
    size = len(block) if block.isascii() else len(block.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:  # checked before YAML sees it: parsing time stays bounded
        raise InvalidMemory(
            f"{where}: the frontmatter is {size:,} bytes; the limit is {MAX_FRONTMATTER_BYTES:,}: keep name, "
            "description, type and tags short and move the rest into the body",
            path=path or None, limit=MAX_FRONTMATTER_BYTES, actual=size,
        )
    parsed = _parsed(block)
    if parsed is None:  # a refused block: parsed again for an error that names this file
        return _parse_meta(block, path)
    meta, flat = parsed
    return dict(meta) if flat else _copied(meta)


def _copied(value: Any) -> Any:
    """A copy of parsed frontmatter no caller's change reaches (its leaves are immutable)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


@functools.lru_cache(maxsize=128)
def _parsed(block: str) -> tuple[dict[str, Any], bool] | None:
    """A block's frontmatter and whether no value nests; None if refused (only the error names the file)."""
    try:
        meta = _parse_meta(block, "")
    except InvalidMemory:
        return None
    return meta, not any(isinstance(v, (dict, list)) for v in meta.values())


def _parse_meta(block: str, path: str) -> dict[str, Any]:
    """The parse itself, uncached; `path` names the file in its errors."""
    where = path or "frontmatter"
    yaml, loader, _ = _yaml()
    if _ALIAS_HINT.search(block):
        try:
            for event in yaml.parse(block, Loader=loader):
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
            raise _invalid(where, e, path) from None
    try:
        data = yaml.load(block, Loader=loader)
    except yaml.YAMLError as e:
        raise _invalid(where, e, path) from None
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


def _invalid(where: str, e: yaml.YAMLError, path: str) -> InvalidMemory:
    """The error for a block that is not YAML, naming the file line to fix (the block starts on line 2)."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is None:
        return InvalidMemory(f"{where}: frontmatter is not valid YAML ({problem}); fix the YAML between the '---' lines", path=path or None)
    return InvalidMemory(
        f"{where}: frontmatter is not valid YAML at line {mark.line + 2} ({problem}); fix that line between the '---' lines",
        path=path or None,
    )


def parse(text: str, *, path: str = "", strict: bool = True) -> tuple[dict[str, Any], str]:
    """(frontmatter dict, body). Lenient mode reads a block its writer's own parser accepts (`repaired`);
    a block still refused is kept as text: ({}, text)."""
    try:
        block, body = split(text, path=path)
        return (parse_meta(block, path=path) if block is not None else {}), body
    except InvalidMemory:
        if strict:
            raise
        try:
            block, body = split(text, path=path)
            fixed, lines = repaired(block or "")
            if lines:
                return parse_meta(fixed, path=path), body
        except InvalidMemory:
            pass
        return {}, text


_TEMPLATE = re.compile(r"\{\{.*?\}\}|<%.*?%>|\[\[.*?\]\]")  # {{DATE: "x"}}, <% tp.x %>, [[link]]: one token each
_ENTRY = re.compile(r"(?P<indent>[ \t]*(?:- )?)(?P<key>\"[^\"]*\"|'[^']*'|[^\s#\"'-][^:]*?|-[^\s:][^:]*?)"
                    r":(?:(?P<gap>[ \t]+)(?P<value>.*?))?[ \t]*\Z")
_PLAIN_KEY = re.compile(r"[A-Za-z_][\w .-]*\Z")
MAX_REPAIRS = 20  # lines one block may have quoted: a block further from YAML is kept as text


def repaired(block: str) -> tuple[str, list[int]]:
    """A frontmatter block that plain YAML refuses but its writer accepted, with the fewest lines changed.

    Other writers read `key: rest of the line` and take the rest as the value: basic-memory's and
    Claude Code's `title: Decision: Postgres`, `name: "승인" 한 단어`, a Roam export's `author: @ines`
    and `type:[[Book]]`, templates' `date: {{date}}` and `{{DATE: "YYYY"}}-review: x`. Only the lines
    YAML refuses are touched, one at a time where its error points: the value (and a key that is not a
    plain word) put in double quotes, nothing else. Returns the block and the file lines changed (the
    block starts on line 2); ([]) when that does not make it parse, so the caller keeps the block as text.
    """
    if len(block.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:  # quoting only adds: YAML never sees it
        return block, []
    rows = block.split("\n")
    changed: list[int] = []
    problem = _problem(block)
    while problem is not None and len(changed) < MAX_REPAIRS:
        lines, where = problem
        for at in dict.fromkeys(lines + [n - 1 for n in lines]):
            line = _quoted(rows[at]) if 0 <= at < len(rows) and at + 2 not in changed else None
            if line is None:
                continue
            trial = rows[:at] + [line] + rows[at + 1:]
            after = _problem("\n".join(trial))
            if after is None or after[1] != where:  # it parses, or YAML now stops elsewhere (an unrelated line
                # quoted leaves the error as far from the end as it was)
                rows, problem = trial, after
                changed.append(at + 2)
                break
        else:
            return block, []
    if problem is not None or not changed:
        return block, []
    return "\n".join(rows), sorted(changed)


def _problem(block: str) -> tuple[list[int], tuple[int, int]] | None:
    """Where `block` is refused: the 0-based lines to look at (YAML's error and its context, or an anchor,
    alias or tag memdir does not allow) and (stage, characters after the error); None when it parses."""
    yaml, loader, _ = _yaml()
    stage = 0
    try:
        for event in yaml.parse(block, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) or (
                    isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent))
                    and event.tag and event.tag not in _SAFE_TAGS):
                return [event.start_mark.line], (1, len(block) - event.start_mark.index)
        stage = 2
        yaml.load(block, Loader=loader)
        stage = 3
        _parse_meta(block, "")
    except yaml.YAMLError as e:
        marks = [m for m in (getattr(e, "problem_mark", None), getattr(e, "context_mark", None)) if m is not None]
        return [m.line for m in marks], (stage if marks else 0, len(block) - (marks[0].index if marks else 0))
    except (InvalidMemory, RecursionError):
        return [], (3, 0)
    return None


def _quoted(line: str) -> str | None:
    """`key: value` with the value (and a key that is not a plain word) double-quoted; None if it is no entry."""
    masked = _TEMPLATE.sub(lambda m: "x" * len(m.group()), line)  # a colon inside {{...}} does not end the key
    m = _ENTRY.match(masked)
    if m is None:
        m2 = re.match(r"(?P<indent>[ \t]*(?:- )?)(?P<key>[A-Za-z_][\w.-]*):(?P<value>\S.*?)[ \t]*\Z", line)
        if m2 is None:  # not even `key:value` (Roam's `type:[[Book]]`)
            return None
        indent, key, value = m2.group("indent"), m2.group("key"), m2.group("value")
    else:
        indent = line[: m.end("indent")]
        key = line[m.start("key"): m.end("key")].strip()
        value = line[m.start("value"): m.end("value")] if m.group("value") is not None else ""
    if not _PLAIN_KEY.match(key) and not (key[:1] in "\"'" and key[-1:] == key[:1] and len(key) > 1):
        key = _double(key)
    elif not value:
        return None  # a plain key with nothing after it: quoting cannot help
    return f"{indent}{key}: {_double(value)}" if value else f"{indent}{key}:"


def _double(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------- editing in place

_MISSING = object()
_KEY = re.compile(r"(?:\"([\w. -]+)\"|'([\w. -]+)'|([A-Za-z_][\w.-]*))[ \t]*:(?=[ \t\r\n]|$)")
_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def _spans(block: str) -> dict[str, list[tuple[int, int]]]:
    """Where each plain top-level key's lines are in a YAML block: key -> [(start, end)].

    A key's entry is its line plus the lines that continue it (indented, or a
    `- item` of an unindented list); blank lines and comments after it are not
    part of it, so removing or replacing the entry leaves them alone.
    """
    spans: dict[str, list[tuple[int, int]]] = {}
    entry: str | None = None  # the key whose lines are being read
    for m in _LINE.finditer(block):
        line = m.group()
        key = _KEY.match(line)
        if key:
            entry = key.group(1) or key.group(2) or key.group(3)
            spans.setdefault(entry, []).append((m.start(), m.end()))
        elif entry is not None and line.strip() and line[0] in " \t-":
            spans[entry][-1] = (spans[entry][-1][0], m.end())
        elif line.strip():
            entry = None  # a comment or other text at the margin ends the entry
    return spans


def _dump(meta: dict[str, Any], newline: str = "\n") -> str:
    if len(meta) == 1 and isinstance(value := next(iter(meta.values())), Stamp):
        return f"{next(iter(meta))}: {value}{newline}"  # a date is always a plain scalar; the common case, made cheap
    yaml, _, dumper = _yaml()
    text: str = yaml.dump(
        meta, Dumper=dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1 << 16
    )
    return text if newline == "\n" else text.replace("\n", newline)


def set_fields(text: str, changes: dict[str, Any], *, path: str = "") -> str:
    """`text` with top-level frontmatter keys set (a value) or removed (None), editing only their lines.

    A key whose value is already the one asked for is left exactly as written; a
    new key goes before memdir's `created`/`updated` lines (those go last); with
    no frontmatter a block is added. Everything else in the file stays byte for
    byte. Raises `InvalidMemory` (with the line) if the frontmatter is not valid.
    """
    bounds = _bounds(text, path)
    if bounds is None:
        add = {k: v for k, v in changes.items() if v is not None}
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        newline = "\r\n" if text.split("\n", 1)[0].endswith("\r") else "\n"
        return f"{bom}---{newline}{_dump(add, newline)}---{newline}{text[len(bom):]}" if add else text
    start, end, _ = bounds
    block = text[start:end]
    meta = parse_meta(block, path=path)
    todo = {k: v for k, v in changes.items() if (v is None and k in meta) or (v is not None and meta.get(k, _MISSING) != v)}
    if not todo:
        return text
    newline = "\r\n" if text[: start].endswith("\r\n") else "\n"
    spans = _spans(block)
    stamps = [s for k in STAMPS for s, _ in spans.get(k, ())]
    before_stamps = min(stamps) if stamps else len(block)
    edits: list[tuple[int, int, str]] = []
    for key, value in todo.items():
        line = "" if value is None else _dump({key: value}, newline)
        found = spans.get(key)
        if found:
            edits.append((*found[0], line))
            edits += [(a, b, "") for a, b in found[1:]]
        elif line:
            at = len(block) if key in STAMPS else before_stamps
            edits.append((at, at, line))
    out, pos = [], 0
    for a, b, line in sorted(edits, key=lambda e: (e[0], e[1])):
        out += [block[pos:a], line]
        pos = max(pos, b)
    out.append(block[pos:])
    new_block = "".join(out)
    wanted = dict(meta)  # a key already null stays null; None in `changes` removes a key
    for key, value in todo.items():
        if value is None:
            wanted.pop(key, None)
        else:
            wanted[key] = value
    try:
        same = parse_meta(new_block, path=path) == wanted
    except InvalidMemory:
        same = False
    if not same:  # a shape the line edit cannot handle (e.g. a flow mapping): write the block anew
        ordered = {k: wanted[k] for k in meta if k in wanted} | wanted
        new_block = _dump(ordered, newline) if ordered else ""
    return text[:start] + new_block + text[end:]


def unstamped(text: str, keys: tuple[str, ...] = STAMPS) -> str:
    """The text as its writer wrote it: without memdir's `created`/`updated` lines (or other `keys`).

    When those were all the frontmatter held (memdir added the block), the block
    goes too. A file that does not parse is returned as it is.
    """
    try:
        bounds = _bounds(text)
    except InvalidMemory:
        return text
    if bounds is None:
        return text
    start, end, body = bounds
    block = text[start:end]
    spans = _spans(block)
    cuts = sorted(s for k in keys for s in spans.get(k, ()))
    if not cuts:
        return text
    kept, pos = [], 0
    for a, b in cuts:
        kept.append(block[pos:a])
        pos = b
    kept.append(block[pos:])
    rest = "".join(kept)
    return text[body:] if rest == "" else text[:start] + rest + text[end:]


def with_body(text: str, body: str, *, path: str = "") -> str:
    """`text`'s frontmatter lines, exactly as they are, followed by a new body."""
    bounds = _bounds(text, path)
    return body if bounds is None else text[: bounds[2]] + body


def moves_frontmatter(old: str, new: str) -> bool:
    """True if `new` turns the frontmatter of `old` into body text (e.g. text put above its `---`)."""
    try:
        before, _ = split(old)
        after, body = split(new)
    except InvalidMemory:
        return False  # the new text is refused on its own, with its own message
    if before is None or not before.strip():
        return False
    return before in body and (after is None or before not in after)


def render(meta: dict[str, Any], body: str) -> str:
    """The file text for metadata and body; known keys first, then extras as given."""
    if body and not body.endswith("\n"):
        body += "\n"
    if not meta:
        return body
    ordered = {k: meta[k] for k in KNOWN_KEYS if k in meta}
    ordered.update((k, v) for k, v in meta.items() if k not in ordered)
    return f"---\n{_dump(ordered)}---\n{body}"


# ---------------------------------------------------------------- derived fields

_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def derive_description(body: str, name: str = "") -> str:
    """The first heading, else the first non-blank line, trimmed for an index line.

    A heading that only repeats the frontmatter's `name` or `title` (basic-memory
    and Obsidian start every note so) gives way to the first line of text, an
    observation's `[category]` left out."""
    lines = body.split("\n")
    if "#" in body:  # (every search index update asks, so a body without a heading skips the regex)
        for line in lines:
            m = _HEADING.match(line)
            if m and m.group(1):
                if name and m.group(1).strip().casefold() == name.strip().casefold():
                    text = next((t for row in lines if (t := row.strip()) and not _HEADING.match(row)), "")
                    if text:
                        return clip(_OBSERVED.sub("", text.lstrip("-*> ").strip()))
                return clip(m.group(1))
    first = next((stripped for line in lines if (stripped := line.strip())), "")
    return clip(first.lstrip("-*> ").strip())


_OBSERVED = re.compile(r"^\[[^\]]+\]\s+")  # basic-memory's `- [category] text`


def derive_name(path: str) -> str:
    stem = path.rsplit("/", 1)[-1][:-3]
    return stem.replace("-", " ").replace("_", " ").strip() or stem


def clip(text: str, limit: int = INDEX_DESCRIPTION_CHARS) -> str:
    """One line for an index: whitespace runs become one space; control and bidi characters
    (ESC, BEL, NUL, U+202E...) are dropped, so a hand-edited file cannot smuggle them into MEMORY.md."""
    text = " ".join(UNPRINTABLE.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _escape(text: str) -> str:
    """Link text: every bracket escaped, so the link around it still parses."""
    text = " ".join(text.split())
    return text.replace("[", "\\[").replace("]", "\\]") if "[" in text or "]" in text else text


_LINK_START = re.compile(r"\](?=[(\[])")


def _escape_tail(text: str) -> str:
    """A description: only a bracket that would start a link target is escaped (`[2026-11-30 10:40] note` stays)."""
    text = " ".join(text.split())
    return _LINK_START.sub(r"\\]", text) if "]" in text else text


def label(entry: Entry) -> tuple[str, str]:
    """The parts of an index line that do not depend on where the index is: (name, " — description")."""
    desc = clip(entry.description)
    return _escape(entry.name), f" — {_escape_tail(desc)}" if desc else ""



def line_bytes(entry: Entry) -> int:
    """The bytes of `entry`'s index line seen from the root (`- [name](path) — description` and its newline)."""
    name, tail = label(entry)
    return len(name.encode()) + len(tail.encode()) + len(entry.path.encode()) + 9


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)


def tags_of(value: Any) -> tuple[str, ...]:
    """Tags as written: a list, or one string of comma-separated tags; Obsidian's `#` in front is not part of a tag."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(t for t in (t.strip().lstrip("#") for t in value.split(",")) if t)
    if isinstance(value, list):
        return tuple(t for t in (str(t).lstrip("#") for t in value if t is not None) if t)
    return (str(value),)


# ---------------------------------------------------------------- other writers' frontmatter
# Files other tools wrote are read as their writers mean them, never rewritten: Claude Code keeps
# `type` and `modified` under `metadata:` and names files `<type>_<topic>.md`; basic-memory and
# Obsidian say `title`; the MCP memory server says `createdAt`; Obsidian keeps `aliases`.

NAME_KEYS = ("name", "title")
CREATED_KEYS = ("created", "createdAt", "created_at", "date")
UPDATED_KEYS = ("updated", "modified", "updatedAt", "updated_at")
UNTYPED = ("note", "notes", "memory")  # the default type of basic-memory (and a Claude Code node) says no more than none


def dialect(meta: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of `keys` set to a scalar, at the top of the frontmatter or in its `metadata:` block."""
    for where in (meta, meta.get("metadata")):
        if isinstance(where, dict):
            for key in keys:
                value = where.get(key)
                if value not in (None, "") and not isinstance(value, (dict, list)):
                    return value
    return None


def aliases_of(meta: dict[str, Any]) -> tuple[str, ...]:
    """Obsidian's other names of a note (`aliases`: a list or one string), which `[[Alias]]` links use."""
    value = meta.get("aliases", meta.get("alias"))
    if isinstance(value, str):
        value = [value]
    return tuple(str(a).strip() for a in value if a is not None and str(a).strip()) if isinstance(value, list) else ()


def effective_type(meta: dict[str, Any], path: str, types: tuple[str, ...]) -> str | None:
    """The type as its writer meant it: `type` (or Claude Code's `metadata: type:`), compared without case;
    else the top folder or Claude Code's file-name prefix (`feedback_x.md`) when it names a configured type."""
    t = dialect(meta, ("type",))
    if isinstance(t, str) and t.strip() and t.strip().lower() not in UNTYPED:
        return t.strip().lower()
    top = path.split("/", 1)[0] if "/" in path else ""
    if top in types:
        return top
    prefix = path.rsplit("/", 1)[-1].split("_", 1)[0]
    return prefix if "_" in path.rsplit("/", 1)[-1] and prefix in types else None


def memory(path: str, text: str, version: str, types: tuple[str, ...], *, change: str = "") -> Memory:
    meta, body = parse(text, path=path, strict=False)
    name = dialect(meta, NAME_KEYS)
    desc = meta.get("description")
    return Memory(
        path=path,
        name=clip(str(name), 200) if name not in (None, "") else derive_name(path),
        description=clip(str(desc), 1000) if desc not in (None, "") else derive_description(body.lstrip("\ufeff"),
                                                                                               str(name or "")),
        type=effective_type(meta, path, types),
        tags=tags_of(meta.get("tags", meta.get("tag"))),
        created=_text(dialect(meta, CREATED_KEYS)),
        updated=_text(dialect(meta, UPDATED_KEYS)),
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
