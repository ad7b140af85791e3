"""What the web page shows of text: markdown as HTML, diffs, highlighted snippets, the index as sections.

Pure functions of strings and library values, so the page's views stay thin
and these can be tested without a server. Markdown is rendered with raw HTML
turned off (a memory's text is shown, never run) and its links to other
memories made into links of the page.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from .. import paths
from ..core import index as index_mod
from ..errors import MemdirError
from ..recall import links as links_mod
from ..search import text as search_text

MAX_DIFF_LINES = 400  # lines of one diff shown; the rest is counted
_WIKI = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_WORD = re.compile(r"[^\W_]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
WIKI_SCHEME = "memdir-wiki:"


def file_url(path: str) -> str:
    return "/ui/file/" + quote(path, safe="/")


def folder_url(folder: str) -> str:
    return "/?folder=" + quote(folder, safe="/") if folder else "/"


# ---------------------------------------------------------------- markdown


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.add_render_rule("link_open", _link_open)
    return md


def _link_open(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    resolve: Callable[[str], tuple[str | None, bool]] | None = env.get("resolve")
    if resolve is not None:
        url, memory = resolve(href)
        if url is None:
            token.attrSet("href", "#")
            token.attrSet("class", "broken")
            token.attrSet("title", "this link leads to no memory")
        else:
            token.attrSet("href", url)
            if memory:
                token.attrSet("class", "memory")
    if _SCHEME.match(str(token.attrGet("href") or "")):
        token.attrSet("rel", "noopener noreferrer")
    return str(self.renderToken(tokens, idx, options, env))


_RENDERER = _markdown()


def render_markdown(path: str, body: str, first_line: int, found: links_mod.Links | None) -> Markup:
    """The body of `path` as HTML: `[[Name]]` and `[text](x.md)` lead to the memories they name.

    `first_line` is the file line the body starts on (after the frontmatter),
    so wiki links match the `Links` the library found by line.
    """
    wiki: list[str | None] = []
    by_line: dict[tuple[int, str], list[str | None]] = {}
    for link in (found.links if found else ()):
        by_line.setdefault((link.line, link.text), []).append(link.target)
    lines, fenced = body.split("\n"), False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or "[[" not in line:
            continue

        def swap(m: re.Match[str], number: int = first_line + i) -> str:
            inner = m.group(1)
            shown = inner.split("|", 1)[1] if "|" in inner else inner.split("#", 1)[0]
            targets = by_line.get((number, m.group()), [])
            wiki.append(targets.pop(0) if targets else None)
            return f"[{_md_escape(shown.strip() or inner)}](<{WIKI_SCHEME}{len(wiki) - 1}>)"

        lines[i] = _WIKI.sub(swap, line)
    home = paths.parent(path)
    markdown_targets = {link.text: link.target for link in (found.links if found else ()) if not link.text.startswith(("[[", "![["))}

    def resolve(href: str) -> tuple[str | None, bool]:
        if href.startswith(WIKI_SCHEME):
            n = href[len(WIKI_SCHEME):]
            target = wiki[int(n)] if n.isdigit() and int(n) < len(wiki) else None
            return (None, True) if target is None else (file_url(target), True)
        if href.startswith("#") or _SCHEME.match(href):
            return href, False
        dest = unquote(href.split("#", 1)[0].split("?", 1)[0])
        if not dest.lower().endswith(".md"):
            return href, False
        for raw, target in markdown_targets.items():
            if raw.endswith(f"]({href})") or raw.endswith(f"]({dest})") or raw.endswith(f"](<{dest}>)"):
                return (None, True) if target is None else (file_url(target), True)
        joined = dest.lstrip("/") if dest.startswith("/") else posixpath.normpath(posixpath.join(home, dest))
        return file_url(joined), True

    return Markup(_RENDERER.render("\n".join(lines), {"resolve": resolve}))


def _md_escape(text: str) -> str:
    return re.sub(r"([\\\[\]*_`<>])", r"\\\1", text)


# ---------------------------------------------------------------- diffs


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add, del, ctx, hunk
    text: str


@dataclass(frozen=True)
class Diff:
    lines: list[DiffLine]
    added: int
    removed: int
    hidden: int  # lines past MAX_DIFF_LINES, not shown

    @property
    def empty(self) -> bool:
        return not self.lines


def diff(old: bytes | str | None, new: bytes | str | None, context: int = 3) -> Diff:
    """A unified diff of two texts, as lines the page colours (None: no file)."""
    a, b = _text(old).splitlines(), _text(new).splitlines()
    out: list[DiffLine] = []
    added = removed = 0
    for line in difflib.unified_diff(a, b, lineterm="", n=context):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            out.append(DiffLine("hunk", line))
        elif line.startswith("+"):
            added += 1
            out.append(DiffLine("add", line[1:]))
        elif line.startswith("-"):
            removed += 1
            out.append(DiffLine("del", line[1:]))
        else:
            out.append(DiffLine("ctx", line[1:]))
    hidden = max(0, len(out) - MAX_DIFF_LINES)
    return Diff(out[:MAX_DIFF_LINES], added, removed, hidden)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


# ---------------------------------------------------------------- search


def highlight(snippet: str, query: str) -> Markup:
    """The snippet with the words that match the query (by stem, as the index matches; symbols and
    spaceless words as written, the longest first) in <mark>."""
    try:
        wanted = search_text.parse(query)
    except MemdirError:  # an over-long query: the search itself says so
        return Markup(escape(snippet))
    stems = wanted.stems
    needles = sorted(wanted.needles, key=len, reverse=True)
    symbols = "|".join(re.escape(s) for s in needles)
    pattern = re.compile(f"{symbols}|{_WORD.pattern}" if symbols else _WORD.pattern)
    out, at = [], 0
    for m in pattern.finditer(snippet):
        if m.group() in needles or search_text.stem(m.group()) in stems:
            out.append(escape(snippet[at:m.start()]))
            out.append(Markup("<mark>") + escape(m.group()) + Markup("</mark>"))
            at = m.end()
    out.append(escape(snippet[at:]))
    return Markup("").join(out)


# ---------------------------------------------------------------- the index


@dataclass(frozen=True)
class Item:
    title: str
    description: str
    url: str
    folder: bool
    path: str


@dataclass(frozen=True)
class Section:
    title: str
    items: list[Item]


def sections(text: str, folder: str) -> tuple[list[Section], list[str]]:
    """A MEMORY.md text as the home page shows it: (sections in order, lines that are notes, e.g. "… and 12 older")."""
    found, skipped = index_mod.parse(text)
    out: list[Section] = []
    for line in found:
        target = folder + line.path
        is_folder = target.endswith("/" + paths.INDEX_NAME)
        path = target[: -len(paths.INDEX_NAME)] if is_folder else target
        desc = line.description or ""
        title = line.title or path
        item = Item(title, desc, folder_url(path) if is_folder else file_url(path), is_folder, path)
        if not out or out[-1].title != (line.section or ""):
            out.append(Section(line.section or "", []))
        out[-1].items.append(item)
    notes = [raw.strip() for _, raw in skipped if raw.strip() and not raw.startswith("No memories")]
    return out, notes
