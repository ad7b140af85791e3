"""Commands on files: create a memory, write, read, list, find, show the history, undo."""

from __future__ import annotations

import difflib
import heapq
import json
import sys
from dataclasses import replace
from typing import Any

import click

from ... import pages
from ...core.limits import Limits
from ...core.memdir import ANY
from ...errors import InvalidArgument
from ...paths import topic_path
from ...recall import links as links_mod
from ...recall import team
from ...remember import timeline
from ...remember.timeline import search_history
from ...search import SearchHit, semantic_layer
from ...stores.locations import CONFIG_FILE
from .base import LS_PAGE, Context, emit, json_option, read_stdin

# ---------------------------------------------------------------- setup


@click.command()
@click.argument("folder", required=False)
@click.pass_obj
def init(obj: Context, folder: str | None) -> None:
    """Create a memory folder (default: --root) with a commented memdir.toml."""
    if folder:
        obj.root = folder
    obj.prepare_root(parents=True)
    md = obj.memdir(create=True)
    root = getattr(md.store, "root", None)
    if root is not None and not (root / CONFIG_FILE).exists():
        defaults = Limits()
        lines = ["# memdir settings; uncomment to change. Env MEMDIR_<NAME> and open() keywords override these."]
        for name in Limits.names():
            value = getattr(defaults, name)
            shown = json.dumps(list(value)) if isinstance(value, tuple) else json.dumps(value)
            lines.append(f"# {name} = {shown}")
        (root / CONFIG_FILE).write_text("\n".join(lines) + "\n")
    md.reconcile(fix=True)  # writes MEMORY.md, and catalogues any files already there
    click.echo(f"memory ready at {root or obj.root}")


# ---------------------------------------------------------------- files


@click.command()
@click.argument("path")
@click.option("--body", "-b", help="The body (markdown, may start with frontmatter). Default: read stdin.")
@click.option("--name", help="Short name shown in the index.")
@click.option("--description", "-d", help="One line: what this memory is for (shown in the index).")
@click.option("--type", "-t", "kind", help="user, feedback, project, reference, session or diary (or a type set in memdir.toml).")
@click.option("--tag", "tags", multiple=True, help="A tag; repeat for several.")
@click.option("--expect", metavar="VERSION", help="Only write if the file still has this version.")
@click.option("--new", "must_be_new", is_flag=True, help="Only write if the file does not exist yet.")
@click.option("--keep-dates", is_flag=True, help="Keep relative dates as written (default: 'next Thursday' gets its date added).")
@json_option
@click.pass_obj
def write(
    obj: Context,
    path: str,
    body: str | None,
    name: str | None,
    description: str | None,
    kind: str | None,
    tags: tuple[str, ...],
    expect: str | None,
    must_be_new: bool,
    keep_dates: bool,
    as_json: bool,
) -> None:
    """Write (fully replace) the topic file PATH.

    Metadata you omit keeps its previous value; pass an empty string to clear it.

    \b
    memdir write feedback/no-dark-themes.md -t feedback \\
        -d "NEVER use dark themes in generated UI" --body "Never propose dark themes."
    """
    topic_path(path)  # a bad path is refused before a new memory folder is made for it
    if body is None:
        if sys.stdin.isatty():
            raise click.UsageError("give the body with --body, or pipe it on stdin")
        body = read_stdin()
    elif body and not body.endswith("\n"):
        body += "\n"  # a shell argument cannot end in a newline; a file should (stdin is stored as given)

    expected: Any = ANY
    if must_be_new and expect:
        raise click.UsageError("--new and --expect cannot be used together")
    if must_be_new:
        expected = None
    elif expect:
        expected = expect
    md, inner, prefix = obj.at(path, create=True)
    m = md.write(
        inner, body, name=name, description=description, type=kind, tags=list(tags) if tags else None, expect=expected,
        absolute_dates=not keep_dates,
    )
    shown = prefix + m.path
    if as_json:
        emit({"path": shown, "change": m.change, "version": m.version, "lines": m.lines, "size": m.size})
    else:
        click.echo(f"{m.change} {shown} ({m.lines} lines, version {m.version})")


@click.command()
@click.argument("path")
@click.option("--as-of", metavar="WHEN", help="The file as it was then: a date (end of that day), a time, or an age (7d).")
@json_option
@click.pass_obj
def read(obj: Context, path: str, as_of: str | None, as_json: bool) -> None:
    """Print the topic file PATH (as it was at --as-of); team/PATH is the team's memory's PATH."""
    md, path, prefix = obj.at(path)
    if as_json:
        emit((md.read(path) if as_of is None else timeline.read_as_of(md, path, as_of)).to_dict()
             | ({"path": prefix + topic_path(path)} if prefix else {}))
        return
    # without --as-of: the file as it is, no frontmatter parse (nor PyYAML's import)
    text = md.read_text(path)[1] if as_of is None else timeline.read_as_of(md, path, as_of).text
    click.echo(text, nl=not text.endswith("\n"))


@click.command()
@click.argument("path")
@click.option("--expect", metavar="VERSION", help="Only delete if the file still has this version.")
@json_option
@click.pass_obj
def rm(obj: Context, path: str, expect: str | None, as_json: bool) -> None:
    """Delete the topic file PATH (undo brings it back)."""
    md, path, prefix = obj.at(path)
    m = md.delete(path, expect=expect if expect else ANY)
    if as_json:
        emit({"path": prefix + m.path, "change": "deleted", "lines": m.lines})
    else:
        click.echo(f"deleted {prefix}{m.path} ({m.lines} lines); undo with: memdir undo {prefix}{m.path}")


@click.command()
@click.argument("old")
@click.argument("new")
@click.option("--expect", metavar="VERSION", help="Only rename if OLD still has this version.")
@json_option
@click.pass_obj
def mv(obj: Context, old: str, new: str, expect: str | None, as_json: bool) -> None:
    """Rename the topic file OLD to NEW."""
    md, inner, prefix = obj.at(old)
    _, new_inner, there_prefix = obj.at(new) if not prefix or team.inner(new) is not None else (md, new, "")
    if prefix != there_prefix:
        raise InvalidArgument(f"{old if prefix else new} is in the team's memory and {new if prefix else old} in "
                               "yours; mv stays in one memory: write the file at its new path, then rm the old one")
    m = md.rename(inner, new_inner, expect=expect if expect else ANY)
    if as_json:
        emit({"path": prefix + m.path, "from": old, "change": "renamed", "version": m.version})
    else:
        click.echo(f"renamed {old} to {prefix}{m.path}")


# ---------------------------------------------------------------- looking


@click.command("ls")
@click.argument("prefix", required=False, default="")
@click.option("--limit", "-n", type=click.IntRange(min=0), default=LS_PAGE, show_default=True,
              help="List at most this many files (0: all of them).")
@click.option("--offset", type=click.IntRange(min=1), default=1, help="Start at this file (1-based), for the next page.")
@json_option
@click.pass_obj
def ls(obj: Context, prefix: str, limit: int, offset: int, as_json: bool) -> None:
    """List topic files under PREFIX (a folder): path, type, updated, lines, description.

    In a project that keeps a team memory, its files follow yours (paths under
    team/; PREFIX team/ lists only theirs). A long listing stops after --limit
    files and says on stderr how to list on.
    """
    entries = [replace(e, path=shown + e.path) for md, inner, shown in obj.spread(prefix, fresh=True) for e in md.list(inner)]
    page = pages.items(entries, offset, max_items=limit or len(entries) or 1, max_bytes=1 << 62, size=lambda e: 0)
    if as_json:
        emit([e.to_dict() for e in page.items])
    else:
        for e in page.items:
            updated = (e.updated or "")[:10]
            click.echo(f"{e.path}\t{e.type or '-'}\t{updated}\t{e.lines} lines\t{e.description}")
    if not entries:
        click.echo(f"no memories under {prefix or 'the root'}", err=True)
    elif page.next is not None:
        again = " ".join(["memdir ls", *([prefix] if prefix else []), f"--offset {page.next}"])
        click.echo(f"… {page.total - page.end:,} more of {page.total:,}; list on with `{again}` (or --limit 0 for all)",
                   err=True)


@click.command()
@click.argument("folder", required=False, default="")
@json_option
@click.pass_obj
def index(obj: Context, folder: str, as_json: bool) -> None:
    """Print MEMORY.md, the generated index (of FOLDER if given)."""
    text = obj.current().index(folder)
    if as_json:
        emit({"folder": folder, "text": text})
    else:
        click.echo(text, nl=False)


@click.command()
@click.argument("pattern")
@click.option("--prefix", default="", help="Only search under this folder.")
@click.option("--case-sensitive", "-s", is_flag=True, help="Match case exactly (default: ignore case).")
@click.option("--fixed", "-F", is_flag=True, help="PATTERN is a plain string, not a regular expression.")
@json_option
@click.pass_obj
def grep(obj: Context, pattern: str, prefix: str, case_sensitive: bool, fixed: bool, as_json: bool) -> None:
    """Print lines matching PATTERN (a regular expression) as path:line:text.

    In a project that keeps a team memory, its files are searched too (paths
    under team/). Exit code 0 when something matched, 1 when nothing did (as grep).
    """
    hits = [replace(h, path=shown + h.path) for md, inner, shown in obj.spread(prefix)
            for h in md.grep(pattern, prefix=inner, ignore_case=not case_sensitive, fixed=fixed)]
    if as_json:
        emit([h.to_dict() for h in hits])
        sys.exit(0 if hits else 1)
    for h in hits:
        click.echo(f"{h.path}:{h.line}:{h.text}")
    if not hits:
        click.echo("no matches", err=True)
        sys.exit(1)  # grep's convention: 1 when nothing matched


@click.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many files at most.")
@click.option("--mode", type=click.Choice(["auto", "lexical", "semantic", "hybrid"]), default="auto", show_default=True,
              help="lexical: full text (BM25); semantic and hybrid need the memdir[semantic] extra; auto picks.")
@click.option("--prefix", default="", help="Only search under this folder.")
@click.option("--type", "types", multiple=True, help="Only files of this type (repeat for several).")
@click.option("--since", default=None, metavar="DATE", help="Only files updated on or after DATE (2026-03-05).")
@click.option("--history", is_flag=True, help="Search retired memories and earlier versions instead (from the journal).")
@click.option("--explain", is_flag=True,
              help="Show what scored each hit (per-field BM25, feedback, neighbours, the share of the query it holds, "
                   "cosine, the history penalty), why a hit is not sure, and the candidates just below the top k.")
@json_option
@click.pass_obj
def search(obj: Context, query: str, k: int, mode: str, prefix: str, types: tuple[str, ...], since: str | None,
           history: bool, explain: bool, as_json: bool) -> None:
    """Rank topic files by QUERY, best first; prints path:line:best matching line.

    The line and the paragraph after it are the part to read first (--json
    gives line and end_line, name, type, updated, the score and the
    confidence). Every file the index matches is ranked; those search is not
    sure answer the query (they hold little of it) come after a line that
    says so. Records of past work (sessions/, diary/, archive/) rank below
    topic files unless the query asks about the past ("last time"). In a project
    that keeps a team memory, its files are searched too (paths under team/),
    unless --prefix, --explain or --history is given.

    Exit code 0 when a file answers the query (a sure hit), 1 when none does
    (weaker matches may still be printed), 2 on a wrong option.

    \b
    memdir search "when does flock launch"
    memdir search deploy --type feedback --since 2026-01-01 --json
    memdir search --history "launch date"     # what we thought before
    """
    if history:
        past = search_history(obj.memdir(), query, k, prefix=prefix)
        if as_json:
            emit([h.to_dict() for h in past])
        for p in [] if as_json else past:
            click.echo(f"{p.path}@{p.version}\t{p.time}\t{p.kind}\t{p.snippet}")
        if not past and not as_json:
            click.echo("no matches", err=True)
        sys.exit(0 if past else 1)
    left: list[SearchHit] = []
    if explain:
        explained = obj.current().explain(query, k=k, mode=mode, prefix=prefix, types=types, since=since)
        hits, left = explained.hits, explained.left_out
    elif prefix:
        hits = obj.current().search(query, k=k, mode=mode, prefix=prefix, types=types, since=since)
    else:  # in a project, the team's memory too (its paths under team/)
        md = obj.current()
        hits = [h for h, _ in team.search(md, obj.team(), query, k=k, mode=mode, types=types, since=since)]
    answered = any(h.sure for h in hits)
    if as_json:
        emit(explained.to_dict() if explain else [h.to_dict() for h in hits])
        sys.exit(0 if answered else 1)

    def show(h: SearchHit) -> None:
        click.echo(f"{h.path}:{h.line}:{h.snippet}")
        if explain:
            click.echo(f"    {why(h)}")

    for h in [h for h in hits if h.sure]:
        show(h)
    weaker = [h for h in hits if not h.sure]
    if weaker:
        click.echo(f"-- {'weaker matches' if answered else 'no file answers this for sure; weaker matches'}, "
                   "which may not answer it:")
    for h in weaker:
        show(h)
    if left:
        click.echo(f"-- left out, below the top {k}:")
    for h in left:
        show(h)
    if not hits:
        click.echo("no matches", err=True)
    sys.exit(0 if answered else 1)


def why(h: SearchHit) -> str:
    """One line of what scored a hit (`--explain`)."""
    s = h.signals
    parts = [f"{'sure' if h.sure else 'not sure'} {h.confidence:.2f}", f"score {h.score:.4g}"]
    if s is None:
        return " · ".join(parts)
    if s.bm25:
        fields = ", ".join(f"{name} {value:.3g}" for name, value in (s.fields or {}).items() if value)
        parts.append(f"bm25 {s.bm25:.3g}" + (f" ({fields})" if fields else ""))
    if s.cover is not None and not s.why:  # an unsure hit's why says it
        parts.append(f"holds {s.cover:.0%} of the query")
    if s.cosine is not None:
        parts.append(f"cosine {s.cosine:.2f}")
    parts += [f"{label} +{value:.3g}" for label, value in (("feedback", s.feedback), ("neighbours", s.neighbours))
              if value]
    if s.lender and s.neighbours:
        parts[-1] += f" from {s.lender}"
    if s.people and s.people != 1.0:
        parts.append(f"names a person ×{s.people:g}")
    if s.history != 1.0:
        parts.append(f"a record of past work ×{s.history:g}")
    if s.why:
        parts.append(s.why)
    return " · ".join(parts)


@click.command()
@click.option("--semantic", "vectors", is_flag=True,
              help="also build the vector index now (memdir[semantic]); `auto` search uses it once it exists")
@json_option
@click.pass_obj
def reindex(obj: Context, vectors: bool, as_json: bool) -> None:
    """Rebuild the search index from the files (it is derived: nothing is lost).

    The index is kept current by every write and caught up after changes by
    other processes; rebuild it after restoring a backup or if search looks
    wrong. `--semantic` also embeds what the vector index lacks (every file
    the first time; a memory in Chinese, Japanese, Korean or Thai gets the
    multilingual model's vectors too), so that `auto` search, the default of
    `search_memory`, can add meaning to words. Progress goes to stderr.
    """
    import time

    started = time.perf_counter()
    md = obj.memdir()
    layer = semantic_layer("hybrid") if vectors else None  # the extra is missing: say so before any work
    total = len(md.list())
    embedded = 0
    with click.progressbar(length=max(total, 1), label="indexing", file=sys.stderr,
                           hidden=as_json or total < 1000) as bar:
        done = [0]

        def progress(count: int, _of: int) -> None:
            bar.update(count - done[0])
            done[0] = count

        files = md.reindex(progress)
    if layer is not None:
        with click.progressbar(length=max(total, 1), label="embedding", file=sys.stderr,
                               hidden=as_json or total < 100) as bar:
            done[0] = 0
            embedded = layer.reindex(md, progress=progress)["embedded"]
    took = time.perf_counter() - started
    if as_json:
        emit({"files": files, "seconds": round(took, 3), **({"embedded": embedded} if vectors else {})})
    else:
        click.echo(f"indexed {files} files in {took:.1f}s" + (f"; {embedded} new passages embedded" if vectors else ""))


@click.command()
@click.argument("query", required=False)
@click.option("--budget", "-b", type=click.IntRange(min=100), default=2000, show_default=True,
              help="Tokens the context may take at most.")
@click.option("--include", "-i", multiple=True, metavar="PATH",
              help="A file or folder to include (layer 2); repeat for several.")
@json_option
@click.pass_obj
def context(obj: Context, query: str | None, budget: int, include: tuple[str, ...], as_json: bool) -> None:
    """Print what an agent should see at the start of a turn, within a token budget.

    Layer 1: pinned files, feedback memories and the index; layer 2: --include
    files and folders, their neighbours, user memories and linked files; layer 3:
    lines of the files that best match QUERY. Lower layers are dropped first. In a
    project that keeps a team memory, its context follows, its paths under team/.
    The account of what was included and dropped goes to stderr (or --json).

    \b
    memdir context "when does flock launch?" --budget 800
    """
    ctx = team.context(obj.memdir(), obj.team(), query, budget=budget, include=include)
    if as_json:
        emit(ctx.to_dict())
        return
    click.echo(ctx.text, nl=False)
    for item in ctx.included:
        shown = f" lines {item.lines[0]}-{item.lines[1]}" if item.lines else ""
        click.echo(f"included\tlayer {item.layer}\t{item.tokens} tokens\t{item.path}{shown} ({item.why})", err=True)
    for d in ctx.dropped:
        click.echo(f"dropped\tlayer {d.layer}\t{d.path or '-'} ({d.why}): {d.reason}", err=True)
    click.echo(f"{ctx.tokens} of {ctx.budget} tokens ({ctx.tokenizer}{'' if ctx.exact else ', estimated'})", err=True)


@click.command()
@click.argument("path")
@json_option
@click.pass_obj
def links(obj: Context, path: str, as_json: bool) -> None:
    """Show the links in PATH ([[Name]] and [text](file.md)) and the files that link to it."""
    got = links_mod.of(obj.memdir(), path)
    if as_json:
        emit(got.to_dict())
        return
    click.echo("links:")
    for link in got.links:
        click.echo(f"  {link.text} -> {link.target or '(broken)'} (line {link.line})")
    click.echo("backlinks:")
    for source in got.backlinks:
        click.echo(f"  {source}")


@click.command()
@click.argument("path", required=False)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True, help="How many records.")
@click.option("--patch", "-p", is_flag=True, help="Show each change as a diff.")
@click.option("--since", metavar="WHEN", help="Only changes since a date (2026-11-01), a time or an age (7d, 12h).")
@click.option("--until", metavar="WHEN", help="Only changes before this date, time or age.")
@json_option
@click.pass_obj
def log(obj: Context, path: str | None, limit: int, patch: bool, since: str | None, until: str | None, as_json: bool) -> None:
    """Show the journal (of PATH, or of a folder ending in /, if given), newest first.

    In a project that keeps a team memory, its changes are shown too (paths
    under team/; each memory numbers its own changes)."""
    folder = not path or path.endswith("/")
    journals = []
    for md, inner, shown in obj.spread(path or "") if folder else [obj.at(path or "")]:
        windowed = since or until or (folder and path)
        got = timeline.changes(md, since, until, prefix=inner) if windowed else md.history(inner or None, limit=limit)
        journals.append([replace(r, path=shown + r.path, dest=r.dest and shown + r.dest) for r in got])
    records = list(heapq.merge(*journals, key=lambda r: r.time, reverse=True))[:limit]
    if as_json:
        emit([r.to_dict(content=patch) for r in records])
        return
    for r in records:
        where = f"{r.path} -> {r.dest}" if r.dest else r.path
        extra = f" (undoes #{r.undoes})" if r.undoes else ""
        click.echo(f"#{r.seq}  {r.time}  {r.actor}  {r.op} {where}{extra}  {r.old_version or '-'} -> {r.new_version or '-'}")
        if patch:
            old = [] if r.old is None else r.old.decode("utf-8", "replace").splitlines(keepends=True)
            new = [] if r.new is None else r.new.decode("utf-8", "replace").splitlines(keepends=True)
            diff = difflib.unified_diff(old, new, fromfile=f"a/{r.path}", tofile=f"b/{r.dest or r.path}")
            click.echo("".join(diff), nl=False)
    if not records:
        click.echo("no changes journaled yet", err=True)


def register(main: click.Group) -> None:
    for command in (init, write, read, rm, mv, ls, index, grep, search, reindex, context, links, log):
        main.add_command(command)
