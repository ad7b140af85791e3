"""The `memdir` command line: a thin layer over `Memdir`.

Each command calls one library method with the same argument names and turns
a `MemdirError` into one line on stderr and exit code 1 (2 is a usage error).
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from .. import Memdir, MemdirError
from .. import open as open_memdir
from ..core.limits import CONFIG_FILE, Limits
from ..stores.locations import folder_of, scheme_of

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_ROOT = "memory"
LS_PAGE = 1000  # files `memdir ls` prints before it says how to list on


class Context:
    def __init__(self, root: str, tenant: str | None, *, root_given: bool = False, agent: bool = False) -> None:
        self.root = root
        self.tenant = tenant
        self.root_given = root_given  # --root or MEMDIR_URL/MEMDIR_ROOT was given, not the default
        self.agent = agent  # a model runs this command: the agents' limits
        self._md: Memdir | None = None

    def memdir(self, create: bool = False, **options: Any) -> Memdir:
        if self._md is None:
            if create:
                self.prepare_root()
            options.setdefault("actor", _actor())
            options.setdefault("agent", self.agent)
            self._md = open_memdir(self.root, tenant=self.tenant, create=create, **options)
        return self._md

    def current(self) -> Memdir:
        """The memory with edits made by hand since the last command caught up (a stat check per file)."""
        md = self.memdir()
        md.sync()
        return md

    def prepare_root(self, *, parents: bool = False) -> None:
        """Before a command creates a memory folder: refuse a likely typo, and say so when one is made.

        A folder is created only when its parent exists (`memdir init` makes
        the parents too), so `--root ~/typo-memroy` does not silently start an
        empty memory somewhere unexpected.
        """
        if scheme_of(self.root) != "file":
            return
        folder = folder_of(self.root)
        if folder.is_dir():
            return
        if folder.exists():
            raise MemdirError(f"--root {self.root} is a file, not a memory folder; give a folder")
        if not parents and not folder.absolute().parent.is_dir():
            raise MemdirError(
                f"no memory at {self.root}, and its parent folder {folder.absolute().parent} does not exist either; "
                f"check the path, or create it with `memdir init {self.root}`"
            )
        folder.mkdir(parents=True)
        click.echo(f"memdir: created a new memory at {folder.absolute()}", err=True)

    def close(self) -> None:
        md, self._md = self._md, None
        if md is not None:
            md.close()


def _actor() -> str:
    from ..core.opening import default_actor as base

    return os.environ.get("MEMDIR_ACTOR") or f"cli:{base()}"


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def read_stdin() -> str:
    """All of stdin as UTF-8 text; anything else is refused in one line, never decoded by guesswork."""
    stream = getattr(sys.stdin, "buffer", None)
    data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"stdin is not UTF-8 text (byte {e.start} is {data[e.start:e.start + 1]!r}); convert it, e.g. with iconv -t utf-8")


def emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")(f)


def _set_global(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        obj = ctx.ensure_object(Context)
        setattr(obj, str(param.name), value)
        obj.root_given = obj.root_given or param.name == "root"


def _global_options(command: click.Command) -> None:
    """Let `--root` and `--tenant` also follow the command (`memdir ls --root X`), listed in its --help."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _global_options(sub)
        return
    taken = {opt for p in command.params for opt in getattr(p, "opts", [])}
    if "--root" not in taken:
        command.params.append(click.Option(
            ["--root"], metavar="LOCATION", expose_value=False, callback=_set_global, is_eager=True,
            help="The memory (a folder or a URL); the same as `memdir --root LOCATION COMMAND`.",
        ))
    if "--tenant" not in taken:
        command.params.append(click.Option(
            ["--tenant"], expose_value=False, callback=_set_global, is_eager=True,
            help="Tenant id inside the memory; the same as `memdir --tenant T COMMAND`.",
        ))


class Group(click.Group):
    """Turns MemdirError (and what the system refuses: a file as --root, a read-only folder,
    text that is not UTF-8) into one line on stderr and exit code 1; global options work after
    the command too."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _global_options(cmd)
        super().add_command(cmd, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List each command with its whole first sentence, wrapped, never cut with '...'."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemdirError as e:
            fail(str(e))
        except OSError as e:
            where = f" ({e.filename})" if e.filename else ""
            fail(f"the system refused: {e.strerror or type(e).__name__}{where}; check --root and its permissions")
        except UnicodeError as e:
            fail(f"an argument is not valid UTF-8 text ({getattr(e, 'reason', e)}); pass UTF-8 text")
        finally:
            obj = ctx.obj
            if isinstance(obj, Context):
                obj.close()


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    envvar=["MEMDIR_URL", "MEMDIR_ROOT"],
    default=DEFAULT_ROOT,
    show_default=True,
    metavar="LOCATION",
    help="The memory: a folder, or a sqlite:///file.db, postgresql://user@host/db or s3://bucket/prefix URL. "
    "Env: MEMDIR_URL (or MEMDIR_ROOT).",
)
@click.option("--tenant", envvar="MEMDIR_TENANT", default=None, help="Tenant id inside the memory. Env: MEMDIR_TENANT.")
@click.option("--agent", is_flag=True, envvar="MEMDIR_AGENT",
              help="A model runs this command: use the agent limits (60 writes a minute per tenant unless "
                   "writes_per_minute is set). Env: MEMDIR_AGENT=1.")
@click.version_option(package_name="memdir")
@click.pass_context
def main(ctx: click.Context, root: str, tenant: str | None, agent: bool) -> None:
    """memdir: memory for AI agents made of plain markdown files.

    Topic files with YAML frontmatter live in a folder; MEMORY.md is the
    generated index an agent reads every turn; every change is journaled and
    can be undone. Start with `memdir demo` for a guided tour.

    Exit codes: 0 ok; 1 refused or failed (one line on stderr; also what the
    system refuses: a file as --root, a read-only folder, input that is not
    UTF-8), nothing matched (grep, search) or something to repair
    (reconcile); 2 usage.
    --root and --tenant go before or after the command.
    """
    ctx.obj = Context(root, tenant, root_given=ctx.get_parameter_source("root") != click.core.ParameterSource.DEFAULT,
                      agent=agent)


# ---------------------------------------------------------------- setup


@main.command()
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


@main.command()
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
    from ..paths import topic_path

    topic_path(path)  # a bad path is refused before a new memory folder is made for it
    if body is None:
        if sys.stdin.isatty():
            raise click.UsageError("give the body with --body, or pipe it on stdin")
        body = read_stdin()
    elif body and not body.endswith("\n"):
        body += "\n"  # a shell argument cannot end in a newline; a file should (stdin is stored as given)
    from ..core.memdir import ANY

    expected: Any = ANY
    if must_be_new and expect:
        raise click.UsageError("--new and --expect cannot be used together")
    if must_be_new:
        expected = None
    elif expect:
        expected = expect
    m = obj.memdir(create=True).write(
        path, body, name=name, description=description, type=kind, tags=list(tags) if tags else None, expect=expected,
        absolute_dates=not keep_dates,
    )
    if as_json:
        emit({"path": m.path, "change": m.change, "version": m.version, "lines": m.lines, "size": m.size})
    else:
        click.echo(f"{m.change} {m.path} ({m.lines} lines, version {m.version})")


@main.command()
@click.argument("path")
@click.option("--as-of", metavar="WHEN", help="The file as it was then: a date (end of that day), a time, or an age (7d).")
@json_option
@click.pass_obj
def read(obj: Context, path: str, as_of: str | None, as_json: bool) -> None:
    """Print the topic file PATH (as it was at --as-of)."""
    if as_json:
        emit(obj.memdir().read(path, as_of=as_of).to_dict())
        return
    md = obj.memdir()  # without --as-of: the file as it is, no frontmatter parse (nor PyYAML's import)
    text = md.read(path, as_of=as_of).text if as_of is not None else md.read_text(path)[1]
    click.echo(text, nl=not text.endswith("\n"))


@main.command()
@click.argument("path")
@click.option("--expect", metavar="VERSION", help="Only delete if the file still has this version.")
@json_option
@click.pass_obj
def rm(obj: Context, path: str, expect: str | None, as_json: bool) -> None:
    """Delete the topic file PATH (undo brings it back)."""
    from ..core.memdir import ANY

    m = obj.memdir().delete(path, expect=expect if expect else ANY)
    if as_json:
        emit({"path": m.path, "change": "deleted", "lines": m.lines})
    else:
        click.echo(f"deleted {m.path} ({m.lines} lines); undo with: memdir undo {m.path}")


@main.command()
@click.argument("old")
@click.argument("new")
@click.option("--expect", metavar="VERSION", help="Only rename if OLD still has this version.")
@json_option
@click.pass_obj
def mv(obj: Context, old: str, new: str, expect: str | None, as_json: bool) -> None:
    """Rename the topic file OLD to NEW."""
    from ..core.memdir import ANY

    m = obj.memdir().rename(old, new, expect=expect if expect else ANY)
    if as_json:
        emit({"path": m.path, "from": old, "change": "renamed", "version": m.version})
    else:
        click.echo(f"renamed {old} to {m.path}")


# ---------------------------------------------------------------- looking


@main.command("ls")
@click.argument("prefix", required=False, default="")
@click.option("--limit", "-n", type=click.IntRange(min=0), default=LS_PAGE, show_default=True,
              help="List at most this many files (0: all of them).")
@click.option("--offset", type=click.IntRange(min=1), default=1, help="Start at this file (1-based), for the next page.")
@json_option
@click.pass_obj
def ls(obj: Context, prefix: str, limit: int, offset: int, as_json: bool) -> None:
    """List topic files under PREFIX (a folder): path, type, updated, lines, description.

    A long listing stops after --limit files and says on stderr how to list on.
    """
    from .. import pages

    entries = obj.current().list(prefix)
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


@main.command()
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


@main.command()
@click.argument("pattern")
@click.option("--prefix", default="", help="Only search under this folder.")
@click.option("--case-sensitive", "-s", is_flag=True, help="Match case exactly (default: ignore case).")
@click.option("--fixed", "-F", is_flag=True, help="PATTERN is a plain string, not a regular expression.")
@json_option
@click.pass_obj
def grep(obj: Context, pattern: str, prefix: str, case_sensitive: bool, fixed: bool, as_json: bool) -> None:
    """Print lines matching PATTERN (a regular expression) as path:line:text.

    Exit code 0 when something matched, 1 when nothing did (as grep).
    """
    hits = obj.memdir().grep(pattern, prefix=prefix, ignore_case=not case_sensitive, fixed=fixed)
    if as_json:
        emit([h.to_dict() for h in hits])
        sys.exit(0 if hits else 1)
    for h in hits:
        click.echo(f"{h.path}:{h.line}:{h.text}")
    if not hits:
        click.echo("no matches", err=True)
        sys.exit(1)  # grep's convention: 1 when nothing matched


@main.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many files at most.")
@click.option("--mode", type=click.Choice(["auto", "lexical", "semantic", "hybrid"]), default="auto", show_default=True,
              help="lexical: full text (BM25); semantic and hybrid need the memdir[semantic] extra; auto picks.")
@click.option("--prefix", default="", help="Only search under this folder.")
@click.option("--type", "types", multiple=True, help="Only files of this type (repeat for several).")
@click.option("--since", default=None, metavar="DATE", help="Only files updated on or after DATE (2026-03-05).")
@click.option("--history", is_flag=True, help="Search retired memories and earlier versions instead (from the journal).")
@json_option
@click.pass_obj
def search(obj: Context, query: str, k: int, mode: str, prefix: str, types: tuple[str, ...], since: str | None,
           history: bool, as_json: bool) -> None:
    """Rank topic files by the words of QUERY, best first; prints path:line:best matching line.

    The line and the paragraph after it are the part to read first (--json
    gives line and end_line, name, type, updated and the score).

    \b
    memdir search "when does flock launch"
    memdir search deploy --type feedback --since 2026-01-01 --json
    memdir search --history "launch date"     # what we thought before
    """
    if history:
        from ..remember.timeline import search_history

        past = search_history(obj.memdir(), query, k, prefix=prefix)
        if as_json:
            emit([h.to_dict() for h in past])
        for p in [] if as_json else past:
            click.echo(f"{p.path}@{p.version}\t{p.time}\t{p.kind}\t{p.snippet}")
        if not past and not as_json:
            click.echo("no matches", err=True)
        sys.exit(0 if past else 1)
    hits = obj.current().search(query, k=k, mode=mode, prefix=prefix, types=types, since=since)
    if as_json:
        emit([h.to_dict() for h in hits])
        sys.exit(0 if hits else 1)
    for h in hits:
        click.echo(f"{h.path}:{h.line}:{h.snippet}")
    if not hits:
        click.echo("no matches", err=True)
        sys.exit(1)


@main.command()
@json_option
@click.pass_obj
def reindex(obj: Context, as_json: bool) -> None:
    """Rebuild the search index from the files (it is derived: nothing is lost).

    The index is kept current by every write and caught up after changes by
    other processes; rebuild it after restoring a backup or if search looks
    wrong. Progress goes to stderr.
    """
    import time

    started = time.perf_counter()
    md = obj.memdir()
    total = len(md.list())
    with click.progressbar(length=max(total, 1), label="indexing", file=sys.stderr,
                           hidden=as_json or total < 1000) as bar:
        done = [0]

        def progress(count: int, _of: int) -> None:
            bar.update(count - done[0])
            done[0] = count

        files = md.reindex(progress)
    took = time.perf_counter() - started
    if as_json:
        emit({"files": files, "seconds": round(took, 3)})
    else:
        click.echo(f"indexed {files} files in {took:.1f}s")


@main.command()
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
    lines of the files that best match QUERY. Lower layers are dropped first.
    The account of what was included and dropped goes to stderr (or --json).

    \b
    memdir context "when does flock launch?" --budget 800
    """
    ctx = obj.memdir().context(query, budget=budget, include=include)
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


@main.command()
@click.argument("path")
@json_option
@click.pass_obj
def links(obj: Context, path: str, as_json: bool) -> None:
    """Show the links in PATH ([[Name]] and [text](file.md)) and the files that link to it."""
    got = obj.memdir().links(path)
    if as_json:
        emit(got.to_dict())
        return
    click.echo("links:")
    for link in got.links:
        click.echo(f"  {link.text} -> {link.target or '(broken)'} (line {link.line})")
    click.echo("backlinks:")
    for source in got.backlinks:
        click.echo(f"  {source}")


@main.command()
@click.argument("path", required=False)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True, help="How many records.")
@click.option("--patch", "-p", is_flag=True, help="Show each change as a diff.")
@click.option("--since", metavar="WHEN", help="Only changes since a date (2026-11-01), a time or an age (7d, 12h).")
@click.option("--until", metavar="WHEN", help="Only changes before this date, time or age.")
@json_option
@click.pass_obj
def log(obj: Context, path: str | None, limit: int, patch: bool, since: str | None, until: str | None, as_json: bool) -> None:
    """Show the journal (of PATH, or of a folder ending in /, if given), newest first."""
    md = obj.memdir()
    if since or until or (path and path.endswith("/")):
        records = md.changes(since, until, prefix=path or "")[:limit]
    else:
        records = md.history(path, limit=limit)
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


# ---------------------------------------------------------------- repair


@main.command()
@click.argument("path")
@json_option
@click.pass_obj
def undo(obj: Context, path: str, as_json: bool) -> None:
    """Revert the last change to PATH, as a new change (undo again to redo)."""
    m = obj.memdir().undo(path)
    if as_json:
        emit({"path": m.path, "change": m.change, "version": m.version})
    else:
        click.echo(f"{m.change} {m.path}" + (f" (version {m.version})" if m.change != "deleted" else ""))


@main.command()
@click.option("--fix", is_flag=True, help="Repair what was found (catalog, journal, MEMORY.md).")
@json_option
@click.pass_obj
def reconcile(obj: Context, fix: bool, as_json: bool) -> None:
    """Check the files against the catalog and the index; with --fix, repair them.

    Picks up files added, edited or removed by hand (journaled as 'external'),
    rebuilds a stale MEMORY.md, and reports files that break the limits.
    Exit code 0 when everything agrees (or --fix repaired it), 1 when something
    differs, or after --fix still needs a person (a file over the limits).
    """
    report = obj.memdir().reconcile(fix=fix)
    if as_json:
        emit(report.to_dict())
    else:
        for f in report.findings:
            click.echo(f"{f.kind}\t{f.path or '-'}\t{f.detail}")
        if report.clean:
            click.echo("clean: files, catalog and index agree")
        elif not fix:
            click.echo("run `memdir reconcile --fix` to repair", err=True)
    if not report.clean and (not fix or any(f.kind in ("invalid", "quarantined") for f in report.findings)):
        sys.exit(1)  # like `git diff --exit-code`: 1 when something differs (or, after --fix, still needs a person)


@main.command()
@json_option
@click.pass_obj
def doctor(obj: Context, as_json: bool) -> None:
    """Check the memory and print every problem; exit 1 if there is any (0 when healthy).

    Reports records recovery had to quarantine (kept in .memdir/quarantine/),
    files changed outside memdir, files that break the limits, and a stale
    MEMORY.md. Changes nothing: `memdir reconcile --fix` repairs what it can.
    """
    report = obj.memdir().reconcile()
    problems = [f for f in report.findings if f.kind != "repaired"]
    if as_json:
        emit({"healthy": not problems, "problems": [f.to_dict() for f in problems]})
    else:
        for f in problems:
            click.echo(f"{f.kind}\t{f.path or '-'}\t{f.detail}")
        click.echo(f"{len(problems)} problem{'' if len(problems) == 1 else 's'} found" if problems else "healthy: no problems found")
    if problems:
        sys.exit(1)


@main.command("import")
@click.argument("source", type=click.Path(exists=True))
@click.option(
    "--from", "kind", type=click.Choice(["claude-code", "mcp-memory", "basic-memory"]), default="claude-code",
    show_default=True, help="What SOURCE is: a memory folder, the MCP memory server's JSONL file, or basic-memory notes.",
)
@click.option("--overwrite", is_flag=True, help="Replace files that already exist in the memory.")
@json_option
@click.pass_obj
def import_(obj: Context, source: str, kind: str, overwrite: bool, as_json: bool) -> None:
    """Bring in memories from another system; reports what it imported and what it could not.

    \b
    claude-code   a memory folder (e.g. ~/.claude/projects/<project>/memory);
                  its MEMORY.md lines fill in missing descriptions and types
    mcp-memory    the reference MCP memory server's memory.jsonl: one file per entity
    basic-memory  a basic-memory folder of notes (observations, relations, tags)
    """
    from ..remember import importer

    is_file = os.path.isfile(source)
    if is_file != (kind == "mcp-memory"):
        want = "a JSONL file" if kind == "mcp-memory" else "a folder"
        raise click.BadParameter(f"--from {kind} reads {want}; {source} is not one", param_hint="SOURCE")
    run = {"claude-code": importer.import_dir, "mcp-memory": importer.import_mcp_memory,
           "basic-memory": importer.import_basic_memory}[kind]
    result = run(obj.memdir(create=True), source, overwrite=overwrite)
    if as_json:
        emit(result.to_dict())
        return
    click.echo(result.summary())


# ---------------------------------------------------------------- backends


@main.command("copy")
@click.argument("source")
@click.argument("destination")
@click.option("--tenant", "tenant", default=None, help="The tenant to copy (default: the global --tenant).")
@json_option
@click.pass_obj
def copy_cmd(obj: Context, source: str, destination: str, tenant: str | None, as_json: bool) -> None:
    """Copy a whole tenant (files, catalog, journal) from SOURCE to DESTINATION, any two locations.

    Resumable: run it again after an interruption. Verified: file counts and
    SHA-256 hashes of both sides are compared at the end. Progress goes to stderr.

    \b
    memdir copy memory sqlite:///memory.db --tenant acme
    """
    from ..remember.copy import copy_tenant

    def progress(what: str, done: int, total: int) -> None:
        if total:
            click.echo(f"copy: {what} {done}/{total}", err=True)

    report = copy_tenant(source, destination, tenant or obj.tenant, progress=progress)
    if as_json:
        emit(report.to_dict())
    else:
        click.echo(report.summary())
    if not report.verified:
        fail(f"the copy in {destination} does not match {source}; run the copy again")


@main.group(cls=Group)
def db() -> None:
    """Schemas of sqlite:// and postgresql:// locations."""


@db.command("migrate")
@click.argument("url", required=False)
@click.option("--check", is_flag=True, help="Only report pending migrations (exit 1 if any); never writes.")
@click.option("--grant", metavar="ROLE", help="PostgreSQL: let ROLE (what memdir connects as) use the tables.")
@json_option
@click.pass_obj
def db_migrate(obj: Context, url: str | None, check: bool, grant: str | None, as_json: bool) -> None:
    """Create or upgrade memdir's tables at URL (default: --root); safe to run again.

    Run it as the database owner. On PostgreSQL, memdir itself must connect as
    another role (row-level security binds it); --grant ROLE gives that role
    what it needs.
    """
    from ..stores.locations import migrate

    report = migrate(url or obj.root, check=check, grant=grant)
    if as_json:
        emit(report.to_dict())
    elif check:
        click.echo(f"pending: {', '.join(report.pending)}" if report.pending else f"up to date: {report.location}")
    else:
        done = f"applied {', '.join(report.applied)}" if report.applied else "already up to date"
        click.echo(f"{report.location}: {done}" + (f"; granted to {report.granted}" if report.granted else ""))
    if check and report.pending:
        sys.exit(1)


@main.command()
@click.argument("folder", required=False)
@click.pass_obj
def demo(obj: Context, folder: str | None) -> None:
    """A guided tour: builds a sample memory in a scratch folder, one labelled CLI step at a time.

    The tour never touches your memory: it runs in a new temporary folder
    (printed at the start), or in FOLDER (or --root) if that is empty or new.
    """
    from .demo import run, scratch

    run(scratch(folder or (obj.root if obj.root_given else None)))


@main.command()
@click.option("--http", "bind", metavar="[HOST:]PORT",
              help="Serve over HTTP instead of stdio: MCP at /mcp, the HTTP API at /v1. HOST defaults to 127.0.0.1.")
@click.option("--tenant", "serve_tenant", default=None, help="Tenant to serve (overrides the global --tenant).")
@click.option("--scope-read", multiple=True, metavar="PREFIX",
              help="A folder the agent may read; repeat for several. With any --scope-* option it sees nothing else.")
@click.option("--scope-write", multiple=True, metavar="PREFIX",
              help="A folder the agent may write (and read); repeat for several. Without it a scoped agent only reads.")
@click.option("--token", envvar="MEMDIR_TOKEN", default=None,
              help="With --http: require 'Authorization: Bearer TOKEN' on every request. Env: MEMDIR_TOKEN "
                   "(safer than the command line, which other users can see).")
@click.option("--token-file", type=click.Path(dir_okay=False), default=None, help="With --http: read the token from FILE.")
@click.option("--auth", "auth_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="With --http: a TOML file of principals, one [tokens.NAME] table each with token (or token_sha256), "
                   "and optional tenant, scope-read, scope-write.")
@click.option("--open", "open_page", is_flag=True, help="With --http: open the web page in the browser once serving.")
@click.pass_context
def serve(
    ctx: click.Context,
    bind: str | None,
    serve_tenant: str | None,
    scope_read: tuple[str, ...],
    scope_write: tuple[str, ...],
    token: str | None,
    token_file: str | None,
    auth_file: str | None,
    open_page: bool = False,
) -> None:
    """Serve the memory to an agent over MCP (stdio, or HTTP with --http).

    Writes are limited to 60 per minute per tenant unless memdir.toml or
    MEMDIR_WRITES_PER_MINUTE says otherwise. Binding --http beyond loopback
    needs a token.

    \b
    Claude Code:  claude mcp add --transport stdio memdir -- memdir --root /path/to/memory serve
    Over HTTP:    memdir serve --http 8765
                  claude mcp add --transport http memdir http://127.0.0.1:8765/mcp
    HTTP API:     curl http://127.0.0.1:8765/v1/index
    Web page:     http://127.0.0.1:8765/ in a browser (`memdir ui` opens it)
    """
    from .auth import Memories, Principal, Principals, check_bind, parse_bind, read_token_file

    obj: Context = ctx.obj
    scoped = bool(scope_read or scope_write)
    default = Principal("default", serve_tenant or obj.tenant,
                        scope_read if scoped else None, scope_write if scoped else None)
    principals = Principals(default)
    if bind is None:
        given = [f"--{n.replace('_', '-')}" for n in ("token", "token_file", "auth_file")
                 if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE]
        if open_page:
            given.append("--open")
        if given:
            raise click.UsageError(f"{', '.join(given)} apply to --http only; stdio is private to the client that started it")
    else:
        if token and token_file:
            raise click.UsageError("give one token: --token (or MEMDIR_TOKEN) or --token-file, not both")
        if token_file:
            token = read_token_file(token_file)
        if token:
            principals.add_token(token, "--token-file" if token_file else "--token")
        if auth_file:
            principals.load(auth_file)
        host, port = parse_bind(bind)
        check_bind(host, principals)
    obj.prepare_root()
    memories = Memories(obj.root, transport="mcp" if bind is None else "http")
    try:
        for principal in principals.all:  # open them all now, so a bad tenant or scope fails at start
            memories.of(principal)
        from . import mcp

        if bind is None:
            click.echo(f"memdir: serving {os.path.abspath(obj.root)} over MCP on stdin/stdout (an MCP client runs this)", err=True)
            mcp.serve_stdio(principals, memories)
        else:
            from . import http

            def started(url: str) -> str:
                if open_page:  # in a thread: a terminal browser runs until it quits, and the server must answer it
                    threading.Thread(target=_open_browser, args=(url + "/",), daemon=True).start()
                return http.banner(url, os.path.abspath(obj.root), principals.required)

            app = mcp.server(principals, memories)
            sock = http.listen(host, port)
            http.run(http.build(principals, memories, host=host, mcp=app), sock, started)
    finally:
        memories.close()


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except Exception:  # noqa: BLE001 - no browser is not a reason to stop serving
        opened = False
    if not opened:
        click.echo(f"memdir: no web browser found here; open {url} in one", err=True)


@main.command()
@click.option("--http", "bind", metavar="[HOST:]PORT", default="127.0.0.1:0", show_default=True,
              help="Where to serve (port 0 picks a free one).")
@click.pass_context
def ui(ctx: click.Context, bind: str) -> None:
    """Open the web page: read, search, edit and undo the memory in a browser.

    Serves like `memdir serve --http` (MCP and the HTTP API too) on loopback and
    opens the page in the web browser; Ctrl-C stops. With a token or an auth
    file, use `memdir serve --http PORT --token-file FILE --open`.
    """
    ctx.invoke(serve, bind=bind, open_page=True)


from ..remember.watch import watch_command  # noqa: E402 - registered last, in its own module
from . import cli_remember as cli_capture  # noqa: E402 - commands of their own module, registered on the group above

for _command in cli_capture.COMMANDS:
    main.add_command(_command)
main.add_command(watch_command)

if __name__ == "__main__":  # pragma: no cover
    main()
