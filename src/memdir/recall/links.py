"""Links between memories: `[[Name]]` and `[text](relative.md)`, Obsidian's two conventions.

The graph is derived data, like the search index: built from the files on
first use, then kept current by following the store's catalog changes with a
cursor of its own (only changed files are read again). One graph serves every
view of a store; what a scoped view is shown is filtered by its scope.

A link is parsed when its file is written and resolved when asked, against the
names that exist then, so a link to a memory written later starts working, and
a moved memory is still found:

- `[[X]]` (also `[[X|shown]]`, `[[X\\|shown]]` inside a table, `[[X#heading]]`,
  `![[X]]`) names a memory by its file name without `.md`, by its `name`,
  `title` or basic-memory `permalink`, or by one of its Obsidian `aliases`, compared without case, with
  spaces, `-` and `_` alike; `[[folder/x]]` is a path from the memory root.
  When several memories match, the one in the linking file's folder wins, then
  the shortest path (Obsidian's rule). An embed or link of an attachment
  (`![[plan.png|300]]`, `[[map.canvas]]`) is no link to a memory. A
  basic-memory relation line (`- implements [[X]]`) gives its link a `relation`.
- `[text](../project/x.md)` is a path relative to the linking file; when
  nothing is there any more, the file name is looked up as a `[[name]]` would be.

Renames therefore leave links working without rewriting any other file: a
rename never touches files the renamer did not name (which a scoped principal
may not even be allowed to write), and moves made by hand are covered the same
way. What breaks is a link to a file whose name changed and that no other name
matches; `reconcile` reports those.

The graph also remembers two facts of each file that context selects by and
the catalog does not hold in a form it can query cheaply: its type and whether
its frontmatter says `pinned: true`.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import threading
import unicodedata
import weakref
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote

from .. import model, paths
from ..errors import MemdirError
from ..util import gc_paused

if TYPE_CHECKING:
    from ..core.memdir import Memdir
    from ..model import Entry

_WIKI = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_MARKDOWN = re.compile(r"(?<!!)\[([^\[\]\n]*)\]\(\s*(<[^<>\n]+>|[^()\s]+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_SEPARATORS = re.compile(r"[\s_-]+")
SNAPSHOT = "links.json"
SNAPSHOT_FORMAT = 3  # 3: Claude Code's metadata.pinned counts
ATTACHMENTS = frozenset(  # what Obsidian embeds or links besides notes: no memory, so never a broken link
    "png jpg jpeg gif bmp svg webp avif heic tif tiff ico pdf mp3 wav m4a ogg oga flac 3gp webm mp4 mov mkv ogv "
    "canvas base csv tsv txt json xml html htm zip docx xlsx pptx odt ods epub".split())
_RELATION = re.compile(r"[ \t]*[-*][ \t]+([A-Za-z_][\w-]*)[ \t]+(?=\[\[)")
_TARGET_END = re.compile(r"\\?\||#|\^")
SAVE_EVERY = 200  # a long-running process saves the snapshot again after this many changes


def name_key(text: str) -> str:
    """How names compare: no case, spaces, '-' and '_' all alike ("No dark themes" = "no-dark-themes"), and one
    spelling of an accent (a link typed composed finds a file macOS named decomposed)."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return _SEPARATORS.sub("-", text.strip().lower()).strip("-")


CLAUDE_TYPES = ("user", "feedback", "project", "reference")  # Claude Code names files `<type>_<topic>.md`


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


class _Raw(NamedTuple):
    """A link as written: what it names (a path and/or a name key) and where (a tuple: a snapshot
    of 100,000 files builds its links in a blink)."""

    text: str
    line: int
    path: str | None  # a path from the root, for [[a/b]] and [x](rel.md)
    name: str  # the name key to look up
    relation: str | None = None  # basic-memory's `- relates_to [[X]]`: the kind of link


@dataclass(frozen=True)
class Link:
    """One link in a file: its text, its line, and the memory it leads to (None: broken)."""

    text: str
    line: int
    target: str | None
    relation: str | None = None  # what a basic-memory relation line names it (`- implements [[X]]`)

    def to_dict(self) -> dict[str, Any]:
        out = {"text": self.text, "line": self.line, "target": self.target}
        return out | {"relation": self.relation} if self.relation else out


@dataclass(frozen=True)
class Links:
    """A file's outgoing links (in file order) and the files that link to it."""

    path: str
    links: tuple[Link, ...]
    backlinks: tuple[str, ...]

    @property
    def broken(self) -> tuple[Link, ...]:
        return tuple(link for link in self.links if link.target is None)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "links": [x.to_dict() for x in self.links], "backlinks": list(self.backlinks)}


def parse(path: str, text: str) -> tuple[list[_Raw], bool, tuple[str, ...]]:
    """The links of a file's body (not in code), whether its frontmatter pins it, and the other names
    links may use for it (a `title` beside its `name`, Obsidian's `aliases`)."""
    try:
        block, body = model.split(text)
    except MemdirError:  # an unclosed frontmatter block: all of it is body
        block, body = None, text
    pinned = False
    aliases: tuple[str, ...] = ()
    if block is not None and any(k in block for k in ("pinned", "alias", "title", "permalink")):
        meta, _ = model.parse(text, strict=False)
        claude = meta.get("metadata")  # Claude Code's block: `metadata: {pinned: true}`
        pinned = meta.get("pinned") is True or (isinstance(claude, dict) and claude.get("pinned") is True)
        others = [meta.get("title"), str(meta.get("permalink") or "").rsplit("/", 1)[-1]]  # basic-memory's names
        aliases = model.aliases_of(meta) + tuple(str(x) for x in others if isinstance(x, (str, int, float)) and x != "")
    if "[" not in body:
        return [], pinned, aliases
    offset = text.count("\n", 0, len(text) - len(body))
    home = paths.parent(path)
    out: list[_Raw] = []
    fenced = False
    for number, line in enumerate(body.split("\n"), offset + 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or "[" not in line:
            continue
        line = _CODE_SPAN.sub(lambda m: " " * len(m.group()), line)
        found = [(m.start(), _wiki(m.group(), m.group(1), number)) for m in _WIKI.finditer(line)]
        typed = _RELATION.match(line)
        if typed and found and found[0][0] == typed.end() and found[0][1] is not None:
            found[0] = (found[0][0], found[0][1]._replace(relation=typed.group(1)))
        found += [(m.start(), _markdown(m.group(), m.group(2), home, number)) for m in _MARKDOWN.finditer(line)]
        out += [raw for _, raw in sorted(found, key=lambda f: f[0]) if raw is not None]
    return out, pinned, aliases


def _wiki(text: str, inner: str, line: int) -> _Raw | None:
    target = _TARGET_END.split(inner, 1)[0].strip()
    if not target:
        return None  # [[#heading]]: a place in the same file
    if "." in target and target.rsplit(".", 1)[1].lower() in ATTACHMENTS:
        return None  # an attachment, not a memory
    if "/" in target or target.lower().endswith(".md"):
        full = target if target.lower().endswith(".md") else target + ".md"
        return _Raw(text, line, _normal(full.lstrip("/")), name_key(_stem(full)))
    return _Raw(text, line, None, name_key(target))


_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}\Z")
_TEMPLATE = re.compile(r"<%|\{\{")


def _a_file(text: str) -> bool:
    """Whether a `[[link]]` as written names a file with an extension other than `.md` (no note), or is a
    template's placeholder."""
    m = _WIKI.fullmatch(text)
    if m is None:
        return False
    target = _TARGET_END.split(m.group(1), 1)[0].strip()
    if _TEMPLATE.search(target):
        return True  # a template's placeholder (`[[<% tp.date.yesterday() %>]]`, `[[{{date}}]]`): no link yet
    ext = _EXTENSION.search(target)
    return ext is not None and ext.group().lower() != ".md"


def _markdown(text: str, dest: str, home: str, line: int) -> _Raw | None:
    dest = dest.strip("<>").strip()
    if not dest or dest.startswith("#") or _SCHEME.match(dest):
        return None  # a place in this file, or a URL
    dest = unquote(dest.split("#", 1)[0].split("?", 1)[0])
    if not dest.lower().endswith(".md"):
        return None  # not a memory
    joined = dest.lstrip("/") if dest.startswith("/") else posixpath.normpath(posixpath.join(home, dest))
    return _Raw(text, line, _normal(joined), name_key(_stem(dest)))


def _normal(path: str) -> str | None:
    try:
        return paths.topic_path(path)
    except MemdirError:
        return None  # outside the memory, or not a topic path: can only match by name


class _Node(NamedTuple):
    name: str
    type: str | None
    updated: str
    pinned: bool
    raws: tuple[_Raw, ...]
    aliases: tuple[str, ...] = ()


def _keys(path: str, node: _Node) -> set[str]:
    """The name keys a link may use for the file at `path`: its file name (a Claude Code `<type>_<topic>.md`
    by its topic too), name and other names."""
    stem = _stem(path)
    kind, _, topic = stem.partition("_")
    topics = {name_key(topic)} if topic and (kind in CLAUDE_TYPES or kind == node.type) else set()
    return {name_key(stem), name_key(node.name)} | topics | {name_key(a) for a in node.aliases}


def _refs(node: _Node) -> set[str]:
    return {r.path for r in node.raws if r.path} | {r.name for r in node.raws}


class Graph:
    """The links, types and pins of every file of one store, following its catalog changes.

    On a folder store the graph is also saved in `.memdir/links.json` with the
    catalog seq it reflects, so a new process (a hook runs in one per prompt)
    loads it and reads only the files changed since, instead of every file.
    The name and link indexes are built on the first question that needs them.
    """

    def __init__(self, snapshot: Path | None = None) -> None:
        self._lock = threading.RLock()
        self.snapshot = snapshot
        self._reset()

    def _reset(self) -> None:
        self.seq = 0
        self.nodes: dict[str, _Node] = {}
        self.types: dict[str | None, set[str]] = defaultdict(set)
        self.pinned: set[str] = set()
        self._indexed = False
        self._names: dict[str, set[str]] = defaultdict(set)  # name key -> paths with that stem or name
        self._refs: dict[str, set[str]] = defaultdict(set)  # path or name key -> files whose links use it
        self._newest: dict[int, list[str]] = {}  # id of a path set -> its paths, newest first
        self._saved = 0  # the seq of the snapshot on disk
        self._caught_up = False  # synced at least once in this process

    # -------------------------------------------------------- upkeep

    def sync(self, md: Memdir) -> Graph:
        """Catch up with the store: read again only the files changed since the last call."""
        store = md.store
        with self._lock:
            if not self.seq and self.snapshot is not None:
                self._load()
                newest = store.journal(limit=1)
                if self.seq > (newest[0].seq if newest else 0):  # saved from another journal: start over
                    self._reset()
            seq, changes = store.changes(self.seq)
            latest: dict[str, Entry | None] = dict(changes)
            for path, entry in latest.items():
                self._drop(path)
                if entry is None:
                    continue
                blob = store.get(path)
                if blob is None:
                    continue
                try:
                    raws, pinned, aliases = parse(path, blob.data.decode("utf-8"))
                except UnicodeDecodeError:  # not text: reconcile reports it
                    raws, pinned, aliases = [], False, ()
                self._put(path, _Node(entry.name, entry.type, entry.updated or "", pinned, tuple(raws), aliases))
            self.seq = seq
            # Save on the first catch-up in this process (a hook's process lives for one call), then now and then.
            if self.snapshot is not None and latest and (not self._caught_up or seq - self._saved >= SAVE_EVERY):
                self._save()
            self._caught_up = True
        return self

    def _put(self, path: str, node: _Node) -> None:
        self.nodes[path] = node
        self.types[node.type].add(path)
        if node.pinned:
            self.pinned.add(path)
        if self._indexed:
            self._index_one(path, node, add=True)
        self._newest.clear()

    def _drop(self, path: str) -> None:
        node = self.nodes.pop(path, None)
        if node is None:
            return
        self.types[node.type].discard(path)
        self.pinned.discard(path)
        if self._indexed:
            self._index_one(path, node, add=False)
        self._newest.clear()

    def _index_one(self, path: str, node: _Node, add: bool) -> None:
        for key in _keys(path, node):
            (self._names[key].add if add else self._names[key].discard)(path)
        for ref in _refs(node):
            (self._refs[ref].add if add else self._refs[ref].discard)(path)

    def _index(self) -> None:
        if not self._indexed:
            for path, node in self.nodes.items():
                self._index_one(path, node, add=True)
            self._indexed = True

    def _load(self) -> None:
        assert self.snapshot is not None
        try:
            with gc_paused():  # and the decoded JSON is let go before the collector runs again
                data = json.loads(self.snapshot.read_bytes())
                if data.get("format") != SNAPSHOT_FORMAT:
                    return
                nodes, types, pins = self.nodes, self.types, self.pinned  # what `_put` does, without its call per file
                for path, (name, kind, updated, pinned, raws, aliases) in data["nodes"].items():
                    nodes[path] = _Node(name, kind, updated, pinned, tuple(_Raw(*r) for r in raws) if raws else (),
                                        tuple(aliases))
                    types[kind].add(path)
                    if pinned:
                        pins.add(path)
                seq = int(data["seq"])
                del data
            self.seq = self._saved = seq
        except (OSError, ValueError, TypeError, KeyError):  # missing or damaged: rebuilt from the files
            self._reset()

    def _save(self) -> None:
        assert self.snapshot is not None
        nodes = {p: [n.name, n.type, n.updated, n.pinned, [list(r) for r in n.raws], n.aliases]
                 for p, n in self.nodes.items()}
        data = json.dumps({"format": SNAPSHOT_FORMAT, "seq": self.seq, "nodes": nodes}, ensure_ascii=False)
        tmp = self.snapshot.with_name(f"{self.snapshot.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_text(data, encoding="utf-8")
            os.replace(tmp, self.snapshot)  # readers see the old or the new snapshot, never half of one
            self._saved = self.seq
        except OSError:
            tmp.unlink(missing_ok=True)  # a read-only folder: the graph works, new processes rebuild it

    # -------------------------------------------------------- questions

    def newest(self, found: set[str]) -> list[str]:
        """The paths of `found` (one of this graph's sets), newest first (cached until a change)."""
        with self._lock:
            got = self._newest.get(id(found))
            if got is None:
                nodes = self.nodes
                keyed = sorted([(nodes[p].updated, p) for p in found], reverse=True)  # tuples: no key call per path
                got = self._newest[id(found)] = [p for _, p in keyed]
            return got

    def resolve(self, raw: _Raw, source: str) -> str | None:
        """The memory a link leads to now, or None."""
        if raw.path is not None and raw.path in self.nodes:
            return raw.path
        self._index()
        found = self._names.get(raw.name)
        if not found:
            return None
        home = paths.parent(source)
        return min(found, key=lambda p: (paths.parent(p) != home, p.count("/"), len(p), p))

    def links(self, path: str) -> list[Link]:
        with self._lock:
            node = self.nodes.get(path)
            return [] if node is None else [Link(r.text, r.line, self.resolve(r, path), r.relation) for r in node.raws]

    def backlinks(self, path: str) -> set[str]:
        with self._lock:
            node = self.nodes.get(path)
            if node is None:
                return set()
            self._index()
            sources: set[str] = set()
            for key in {path} | _keys(path, node):
                sources |= self._refs.get(key, set())
            return {s for s in sources - {path}
                    if any(self.resolve(r, s) == path for r in self.nodes[s].raws)}

    def broken(self) -> list[tuple[str, Link]]:
        """Links that lead to no memory, but those naming a file of another kind (`[[contract.mdenc]]`, a PDF):
        memdir keeps only notes, so such a file is no memory it could find."""
        with self._lock:
            return [(p, link) for p in sorted(self.nodes) for link in self.links(p)
                    if link.target is None and not _a_file(link.text)]


_graphs: weakref.WeakKeyDictionary[Any, Graph] = weakref.WeakKeyDictionary()
_graphs_lock = threading.Lock()


def graph(md: Memdir) -> Graph:
    """The link graph of `md`'s store, caught up with its latest changes."""
    with _graphs_lock:
        g = _graphs.get(md.store)
        if g is None:
            internal = getattr(md.store, "internal", None)  # a folder store's .memdir/
            g = _graphs[md.store] = Graph(internal / SNAPSHOT if isinstance(internal, Path) and internal.is_dir() else None)
    return g.sync(md)


def _visible(md: Memdir, paths_: Iterable[str]) -> list[str]:
    scope = md.principal
    return sorted(p for p in paths_ if scope is None or scope.can_read(p))


def of(md: Memdir, path: str, text: str | None = None) -> Links:
    """The links and backlinks of one file, as this view may see them (`text`: the file as this view just read it)."""
    if text is None:
        path, text, _ = md.read_text(path)  # NotFound when missing or outside the scope
    g = graph(md)
    found = g.links(path) if path in g.nodes else [Link(r.text, r.line, g.resolve(r, path), r.relation)
                                                   for r in parse(path, text)[0]]
    scope = md.principal
    shown = tuple(x for x in found if x.target is None or scope is None or scope.can_read(x.target))
    return Links(path, shown, tuple(_visible(md, g.backlinks(path))))


def broken(md: Memdir) -> list[tuple[str, str]]:
    """(path, what is wrong) for every link that leads nowhere, for reconcile."""
    return [(path, f"line {link.line}: {link.text} leads to no memory; fix the link or write the memory it names")
            for path, link in graph(md).broken()]
