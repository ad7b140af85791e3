"""Upkeep that keeps a memory small and current: a reviewable plan, applied through the normal write path.

`plan(md)` finds duplicate memories (the same fact under two names),
memories that contradict each other on the same subject, learnings in the
diary that belong in an existing topic file, and topic files near their size
limit that have headings to split by. Each action carries the exact batch of
writes it would make (with the versions it read), so `apply(md, plan)` either
does what was reviewed or reports a conflict when a file changed meanwhile;
everything is journaled and undoable. No action changes a file on the strength
of a file whose author could not have written it (`authority.Authority`: the
journal says who wrote what, scopes say who may write where): such an action is
`held`, shown for review and never applied. `stale(md, code=DIR)` lists memories past
their `expires` date and memories naming files, functions or make/npm targets
a code folder no longer has.

The tests are word-set comparisons, not a model: cheap, deterministic, and
tuned to propose little rather than much (a person reviews the plan).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import model, paths
from ..core.memdir import Op
from ..core.scope import Scope
from ..errors import Conflict, MemdirError, NotFound
from . import notes, timeline
from .authority import Authority
from .capture import negative, similarity, subject
from .summarize import words

if TYPE_CHECKING:
    from ..core.memdir import Memdir, Op

SKIP = ("sessions/", "diary/", "archive/")
DIARIES = ("diary/", "archive/diary/")
DUPLICATE = 0.8
SAME_SUBJECT = 0.6
BELONGS = 0.5
SPLIT_AT = 0.8  # of max_lines / max_bytes


@dataclass
class Action:
    """One proposed change: kind merge, supersede, update or split, the files involved, and its batch."""

    kind: str
    paths: tuple[str, ...]
    detail: str
    ops: list[Op] = field(default_factory=list, repr=False)
    status: str = "proposed"  # proposed, held (an author could not write what it would change), done or conflict

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "paths": list(self.paths), "detail": self.detail, "status": self.status,
                "changes": [{"op": o.kind, "path": o.path, **({"to": o.dest} if o.dest else {})} for o in self.ops]}


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"actions": [a.to_dict() for a in self.actions]}

    def summary(self) -> str:
        if not self.actions:
            return "nothing to consolidate"
        return "\n".join(f"{a.status}\t{a.kind}\t{', '.join(a.paths)}\t{a.detail}" for a in self.actions)


def _topics(md: Memdir) -> list[model.Memory]:
    out = []
    for e in md.list():
        if e.path.startswith(SKIP):
            continue
        try:
            out.append(md.read(e.path))
        except MemdirError:
            continue
    return out


def _text_words(m: model.Memory) -> set[str]:
    return set(words(f"{m.description} {m.body}"))


def _headline(m: model.Memory) -> str:
    first = next((ln.strip() for ln in paths.lines(m.body) if ln.strip() and not ln.startswith(("#", "**"))), "")
    return f"{m.description} {first}"


def plan(md: Memdir, *, today: dt.date | None = None, scopes: Mapping[str, Scope] | None = None,
         trusted: Iterable[str] = ()) -> Plan:
    """What consolidation would do now; nothing is written.

    `scopes` says where journal actors may write and `trusted` names actors who may write anywhere
    (the one running this always may); an actor named in neither may write only the files it wrote.
    """
    today = today or dt.datetime.now(dt.UTC).date()
    topics = _topics(md)
    out = Plan()
    gone: set[str] = set()
    taken: set[str] = set()
    last: dict[str, int] = {}
    records = md.history()
    for rec in records:  # newest first: the seq of each file's latest change
        last.setdefault(rec.dest or rec.path, rec.seq)
    who = Authority.of(records, scopes=scopes, trusted=[md.actor, *trusted])
    ordered = sorted(topics, key=lambda m: (last.get(m.path, 0), m.path), reverse=True)  # newest first
    for i, keep in enumerate(ordered):
        if keep.path in gone:
            continue
        for other in ordered[i + 1:]:
            if other.path in gone or (keep.type or "") != (other.type or ""):
                continue
            if similarity(_text_words(keep), _text_words(other)) >= DUPLICATE:
                action = _merge(md, keep, other, today, taken)
                why = who.refusal(keep.path, other.path) or (who.refusal(other.path, keep.path) if len(action.ops) > 1 else None)
            elif similarity(subject(_headline(keep)), subject(_headline(other))) >= SAME_SUBJECT \
                    and negative(_headline(keep)) != negative(_headline(other)):
                action = Action("supersede", (other.path, keep.path),
                                f"says the opposite of the newer {keep.path}; retire it")
                why = who.refusal(keep.path, other.path)
                if why is None:
                    op = timeline.supersede_op(md, other.path, by=keep.path, today=today, taken=taken,
                                               reason=f"contradicted by the newer {keep.path}")
                    action.ops.append(op)
            else:
                continue
            if why is not None:  # shown for a person to judge; its file stays live and may pair with another
                out.actions.append(_held(action, why))
                continue
            out.actions.append(action)
            taken.update(o.dest for o in action.ops if o.dest)
            gone.add(other.path)
    live = [m for m in topics if m.path not in gone]
    out.actions += _learnings(md, live, who)
    out.actions += [a for m in live if (a := _split(md, m)) is not None]
    return out


def _held(action: Action, why: str) -> Action:
    """The action with no changes, saying why it may not be applied."""
    return Action(action.kind, action.paths, f"{action.detail}; held: {why}, so it is not applied (review it by hand)",
                  status="held")


def _merge(md: Memdir, keep: model.Memory, other: model.Memory, today: dt.date, taken: set[str]) -> Action:
    """Keep the newer file, add the lines only the other one has, retire the other."""
    have = {ln.strip() for ln in paths.lines(keep.body)}
    extra = [ln for ln in paths.lines(other.body) if ln.strip() and ln.strip() not in have]
    ops: list[Op] = []
    if extra:  # appended to the text, so the frontmatter stays as its author wrote it
        ops.append(Op.write(keep.path, _appended(keep.text, extra), expect=keep.version))
    ops.append(timeline.supersede_op(md, other.path, by=keep.path, today=today, taken=taken,
                                     reason=f"duplicate of {keep.path}, merged into it"))
    return Action("merge", (other.path, keep.path), f"the same fact as {keep.path}; merge into it and retire the copy", ops)


def _learnings(md: Memdir, topics: list[model.Memory], who: Authority) -> list[Action]:
    """Diary learnings that match a topic file's subject but are not in it yet: add them there
    (only from a diary file whose authors could write the topic file)."""
    adds: dict[str, list[str]] = {}
    memo: dict[str, frozenset[str]] = {}
    memo_sessions: dict[str, list[str]] = {}
    for folder in DIARIES:
        for e in md.list(folder):
            try:
                d = md.read(e.path)
            except MemdirError:
                continue
            origins = _origins(md, who, d, memo)
            for item in d.meta.get("learned") or ():
                item = str(item)
                mine = set(words(notes.sources_of(notes.count_of(item)[0])[0]))
                if len(mine) < 2:
                    continue
                best, score = None, 0.0
                for m in topics:
                    theirs = set(words(f"{m.name} {m.description}"))
                    s = len(mine & theirs) / len(mine)
                    if s > score:
                        best, score = m, s
                plain, sources = notes.sources_of(notes.count_of(item)[0])
                if best is None or score < BELONGS or _key(plain) in _key(best.body) \
                        or who.refusal(e.path, best.path, origins):
                    continue
                sources = sources or _diary_sessions(md, d, memo_sessions)  # an older diary's item: its sessions
                line = "- " + notes.with_sources(f"{plain.rstrip(' .')}, from the diary of {d.meta.get('first') or e.path}",
                                                 sources)
                if line not in adds.setdefault(best.path, []):
                    adds[best.path].append(line)
    out = []
    by_path = {m.path: m for m in topics}
    for path, lines in sorted(adds.items()):
        m = by_path[path]
        text = _appended(m.text, lines)
        out.append(Action("update", (path,), f"add {len(lines)} learning(s) from the diary", [Op.write(path, text, expect=m.version)]))
    return out


def _diary_sessions(md: Memdir, d: model.Memory, memo: dict[str, list[str]]) -> list[str]:
    """The sessions a diary file rests on: a daily's `sessions`, a week's or month's those of what it folded."""
    if d.path in memo:
        return memo[d.path]
    memo[d.path] = out = [str(x) for x in d.meta.get("sessions") or ()]  # a loop of `folded` names ends here
    for name in d.meta.get("folded") or ():
        try:
            inner = md.read(f"archive/diary/{name}.md")
        except MemdirError:
            continue
        out += [x for x in _diary_sessions(md, inner, memo) if x not in out]
    return out


@dataclass(frozen=True)
class Learning:
    """A learning a memory holds and the sessions it came from: a line of a topic file, or a diary's item."""

    path: str
    line: int  # of the topic file's body, or the item's place in the diary's `learned` (from 1)
    text: str
    sessions: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text, "sessions": list(self.sessions)}


def learnings(md: Memdir) -> list[Learning]:
    """Every learning that names the sessions it came from: the lines consolidation carried into topic files, and
    the `learned` items of the diary (and its archive)."""
    out = []
    for e in md.list():
        if e.path.startswith(("sessions/", "archive/sessions/")):
            continue
        try:
            m = md.read(e.path)
        except MemdirError:
            continue
        if e.path.startswith(DIARIES):
            items = [(i, str(x)) for i, x in enumerate(m.meta.get("learned") or (), 1)]
        else:
            items = [(i, ln) for i, ln in enumerate(paths.lines(m.body), 1) if ln.lstrip().startswith("- ")]
        for number, text in items:
            sessions = notes.sessions_of(text.strip())
            if sessions:
                out.append(Learning(e.path, number, text.strip(), tuple(sessions)))
    return out


def resting_on(md: Memdir, session: str) -> list[Learning]:
    """The learnings that rest on `session` alone (no other session says them): what forgetting it would leave
    without a source."""
    return [x for x in learnings(md) if x.sessions == (session,)]


def _origins(md: Memdir, who: Authority, d: model.Memory, memo: dict[str, frozenset[str]]) -> frozenset[str]:
    """Everyone whose text a diary file holds: its authors, and those of the sessions and diaries it folded."""
    if d.path in memo:
        return memo[d.path]
    memo[d.path] = out = who.of_file(d.path)  # a loop of `folded` names ends here
    for name in d.meta.get("folded") or ():
        for source in (f"archive/sessions/{name}.md", f"archive/diary/{name}.md"):
            if source not in who.authors:
                continue
            if source.startswith("archive/diary/"):
                try:
                    out |= _origins(md, who, md.read(source), memo)
                except MemdirError:
                    out |= who.of_file(source)
            else:
                out |= who.of_file(source)
    memo[d.path] = out
    return out


def _appended(text: str, lines: list[str]) -> str:
    """`text` with `lines` added as a new paragraph at the end (the frontmatter untouched)."""
    return text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"


def _key(text: str) -> str:
    return " ".join(words(text))


_H2 = re.compile(r"^##\s+(.+?)\s*#*\s*$")
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$")


def _sections(body: str, heading: re.Pattern[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The lines before the first `heading`, and each heading's title with the lines under it (not in code)."""
    sections: list[tuple[str, list[str]]] = []
    intro: list[str] = []
    fenced = False
    for line in paths.lines(body):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        h = None if fenced else heading.match(line)
        if h:
            sections.append((h.group(1), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            intro.append(line)
    return intro, sections


def _split(md: Memdir, m: model.Memory) -> Action | None:
    """A file near (or, kept whole, past) its size limit with `##` sections, else `#` ones: one sub-topic file
    per section, the original an overview."""
    if m.lines < SPLIT_AT * md.limits.max_lines and m.size < SPLIT_AT * md.limits.max_bytes:
        return None
    intro, sections = _sections(m.body, _H2)
    if len(sections) < 2:
        intro, sections = _sections(m.body, _H1)
    if len(sections) < 2:
        return None
    base = m.path[:-3] + "/"
    ops: list[Op] = []
    links = []
    used: set[str] = set()
    for title, lines in sections:
        slug = "-".join(re.findall(r"[a-z0-9]+", title.lower()))[:60] or "part"
        path, n = paths.topic_path(f"{base}{slug}.md"), 1
        while path in used or md.store.get(path) is not None:
            n += 1
            path = f"{base}{slug}-{n}.md"
        used.add(path)
        meta = {"name": model.clip(f"{m.name}: {title}", md.limits.max_name),
                "description": model.clip(f"{title} (split from {m.path})", md.limits.max_description),
                **({"type": m.type} if m.type else {}), **({"tags": list(m.tags)} if m.tags else {})}
        ops.append(Op.write(path, model.render(meta, "\n".join(lines).strip("\n") + "\n"), expect=None))
        links.append(f"- [{title}]({path[len(paths.parent(m.path)):]})")
    meta, _ = model.parse(m.text, path=m.path, strict=False)
    overview = "\n".join(intro).strip("\n")
    body = (overview + "\n\n" if overview else "") + "Split into sub-topics:\n\n" + "\n".join(links) + "\n"
    ops.insert(0, Op.write(m.path, model.render(meta, body), expect=m.version))
    return Action("split", (m.path,), f"{m.lines} lines, {m.size} bytes: split into {len(sections)} files under {base}", ops)


def apply(md: Memdir, p: Plan) -> Plan:
    """Carry out each action as one batch; an action whose files changed since the plan is reported, not forced,
    and a held one is left alone."""
    for a in p.actions:
        if a.status != "proposed":
            continue
        try:
            md.apply(a.ops)
            a.status = "done"
        except (Conflict, NotFound) as e:
            a.status = "conflict"
            a.detail += f" (not applied: {e.message}; plan again)"
    return p


# ---------------------------------------------------------------- stale memories


@dataclass(frozen=True)
class Stale:
    path: str
    kind: str  # expired, missing-file, missing-symbol, missing-command
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "kind": self.kind, "detail": self.detail}


_CODE_SPAN = re.compile(r"`([^`\n]{2,200})`")
_FILE = re.compile(r"^[\w./-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|rb|java|kt|c|h|cc|cpp|hpp|cs|swift|php|sh|toml|json|ya?ml|cfg|ini|sql|md|txt|lock|mk)$")
_SYMBOL = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\(\)?\)?$|^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(.*\)$")
_IGNORED = {"node_modules", ".git", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", "dist", "build"}


@dataclass
class _Code:
    root: Path
    files: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    text: str = ""
    make: set[str] = field(default_factory=set)
    npm: set[str] = field(default_factory=set)

    @classmethod
    def scan(cls, root: Path) -> _Code:
        code = cls(root)
        chunks = []
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if any(part in _IGNORED for part in rel.parts) or not path.is_file():
                continue
            code.files.add(rel.as_posix())
            code.names.add(path.name)
            if path.stat().st_size <= 1_000_000:
                try:
                    chunks.append(path.read_text(encoding="utf-8"))
                except (UnicodeDecodeError, OSError):
                    continue
        code.text = "\n".join(chunks)
        makefile = root / "Makefile"
        if makefile.is_file():
            code.make = set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", makefile.read_text(errors="replace"), re.M))
        package = root / "package.json"
        if package.is_file():
            try:
                code.npm = set((json.loads(package.read_text()).get("scripts") or {}).keys())
            except (json.JSONDecodeError, AttributeError):
                pass
        return code

    def check(self, ref: str) -> tuple[str, str] | None:
        """(kind, detail) when `ref` names something this code does not have."""
        ref = ref.strip()
        words_ = ref.split()
        if len(words_) >= 2 and words_[0] == "make" and self.make:
            return None if words_[1] in self.make else ("missing-command", f"`{ref}`: no target {words_[1]!r} in the Makefile")
        if len(words_) >= 3 and words_[:2] == ["npm", "run"] and self.npm:
            return None if words_[2] in self.npm else ("missing-command", f"`{ref}`: no script {words_[2]!r} in package.json")
        if len(words_) != 1:
            return None
        if _FILE.match(ref) and ("/" in ref or "." in ref):
            rel = ref.removeprefix("./")
            if rel in self.files or ("/" not in rel and rel in self.names):
                return None
            return "missing-file", f"`{ref}` is not in {self.root}"
        m = _SYMBOL.match(ref)
        if m:
            name = (m.group(1) or m.group(2)).rsplit(".", 1)[-1]
            if re.search(rf"\b(?:def|class|function|func|fn|const|let|var)\s+{re.escape(name)}\b", self.text):
                return None
            if re.search(rf"\b{re.escape(name)}\s*[=:(]", self.text):
                return None
            return "missing-symbol", f"`{ref}`: {name} is defined nowhere in {self.root}"
        return None


def stale(md: Memdir, *, code: str | Path | None = None, today: dt.date | None = None) -> list[Stale]:
    """Memories past their `expires` date, and (with `code`) memories naming what the code no longer has."""
    today = today or dt.datetime.now(dt.UTC).date()
    scanned = None if code is None else _Code.scan(Path(code))
    out: list[Stale] = []
    for e in md.list():
        if e.path.startswith("archive/"):
            continue
        try:
            m = md.read(e.path)
        except MemdirError:
            continue
        expires = m.meta.get("expires")
        if expires:
            try:
                when = dt.date.fromisoformat(str(expires)[:10])
            except ValueError:
                out.append(Stale(m.path, "expired", f"expires {expires!r} is not a date such as 2026-03-05"))
            else:
                if when < today:
                    out.append(Stale(m.path, "expired", f"expired {when.isoformat()}"))
        if scanned is None or m.path.startswith(("sessions/", "diary/")):
            continue
        seen: set[str] = set()
        for ref in _CODE_SPAN.findall(m.body):
            if ref in seen:
                continue
            seen.add(ref)
            problem = scanned.check(ref)
            if problem is not None:
                out.append(Stale(m.path, *problem))
    return out
