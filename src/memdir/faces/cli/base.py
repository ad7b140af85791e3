"""The `memdir` command line: a thin layer over `Memdir`.

Each command calls one library method with the same argument names and turns
a `MemdirError` into one line on stderr and exit code 1 (2 is a usage error).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from ...core.memdir import Memdir
from ...core.opening import default_actor as base
from ...core.opening import open as open_memdir
from ...errors import MemdirError
from ...recall import team
from ...recall.team import Team
from ...remember import projects
from ...stores.locations import folder_of, scheme_of

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
        self._team: Team | None = None
        self.is_team = False  # --root is the team's memory itself (@team)

    def memdir(self, create: bool = False, **options: Any) -> Memdir:
        if self._md is None:
            if create:
                self.prepare_root()
            self.resolve_team()
            options.setdefault("actor", _actor())
            options.setdefault("agent", self.agent)
            self._md = open_memdir(self.root, tenant=self.tenant_name(), create=create, **options)
        return self._md

    def resolve_team(self) -> bool:
        """Whether --root is @team, the team's memory of the project this runs in: then it names its folder."""
        if self.root != projects.TEAM:
            return False
        self.root = str(projects.team_root(Path.cwd()))
        self.is_team = True
        return True

    def at(self, path: str, *, create: bool = False, folder: bool = False) -> tuple[Memdir, str, str]:
        """The memory PATH (a file, or a `folder`) is in, the path inside it and the prefix that shows it:
        `team/PATH` is the PATH of the team's memory of the project this runs in (`recall.team`), anything else
        this memory's."""
        self.resolve_team()
        if self.is_team or team.inner(path, folder=folder) is None:
            return self.memdir(create=create), path, ""
        return self._shared().target(path, folder=folder)

    def spread(self, folder: str = "", *, fresh: bool = False) -> list[tuple[Memdir, str, str]]:
        """The memories a look under `folder` covers, as `at` gives them: under `team/`, the team's alone; at the
        root, this one and then the team's of the project this runs in, if it keeps one (`fresh`: this one with
        edits made by hand caught up, as `current`)."""
        if folder and team.inner(folder, folder=True) is not None:
            return [self.at(folder, folder=True)]
        theirs = None if folder else self.team()
        mine = self.current() if fresh else self.memdir()
        return [(mine, folder, "")] + ([(theirs, "", team.PREFIX)] if theirs is not None else [])

    def team(self) -> Memdir | None:
        """The team's memory of the project this runs in, beside this one (none for --root @team itself)."""
        self.resolve_team()
        return None if self.is_team else self._shared().memory()

    def _shared(self) -> Team:
        if self._team is None:
            mine = folder_of(self.root) if scheme_of(self.root) == "file" else None
            self._team = Team(self.memdir, actor=_actor(), agent=self.agent, root=mine)  # a team/ path creates no memory
        return self._team

    def tenant_name(self, given: str | None = None) -> str | None:
        """The tenant `given` (else --tenant) names: @project is the tenant of the project this runs in."""
        tenant = given or self.tenant
        return projects.tenant_for(Path.cwd()) if tenant == projects.BY_PROJECT else tenant

    def current(self) -> Memdir:
        """The memory with edits made by hand since the last command caught up (a stat check per file)."""
        md = self.memdir()
        md.sync()
        return md

    def prepare_root(self, *, parents: bool = False, say: bool = True) -> None:
        """Before a command creates a memory folder: refuse a likely typo, and say so when one is made.

        A folder is created only when its parent exists (`memdir init` makes
        the parents too), so `--root ~/typo-memroy` does not silently start an
        empty memory somewhere unexpected.
        """
        if self.resolve_team() or self.is_team:  # a team memory made here gets its .gitattributes too
            folder_of(self.root).mkdir(exist_ok=True)
            projects.set_up_team(folder_of(self.root))
            return
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
        if say:
            click.echo(f"memdir: created a new memory at {folder.absolute()}", err=True)

    def close(self) -> None:
        shared, self._team = self._team, None
        if shared is not None:
            shared.close()
        md, self._md = self._md, None
        if md is not None:
            md.close()


def _actor() -> str:
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, str] = {}  # command -> the module that registers it, imported when it is asked for

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _global_options(cmd)
        super().add_command(cmd, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A command, its group's module loaded on first use (click's lazy subcommands): a command loads its
        own module and not the others', so a hook (a new process per event) pays for what it runs."""
        where = self.lazy.get(cmd_name)
        if where is not None and cmd_name not in self.commands:
            importlib.import_module(where).register(self)
        return super().get_command(ctx, cmd_name)

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
            result = super().invoke(ctx)
            sys.stdout.flush()  # here, where a reader that went away is caught, not at the interpreter's exit
            return result
        except BrokenPipeError:  # `memdir log | head -1`: the reader has what it wanted; end quietly, as cat does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
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
    help="The memory: a folder, or a sqlite:///file.db, postgresql://user@host/db or s3://bucket/prefix URL; @team is "
    "the team's memory of the project this runs in (team-memory/ in its repository). Env: MEMDIR_URL (or MEMDIR_ROOT).",
)
@click.option("--tenant", envvar="MEMDIR_TENANT", default=None,
              help="Tenant id inside the memory; @project is the tenant of the project this runs in, known by its "
                   "repository (its remote, else its first commit), the same at any path and on any machine. "
                   "Env: MEMDIR_TENANT.")
@click.option("--agent", is_flag=True, envvar="MEMDIR_AGENT",
              help="A model runs this command: use the agent limits (files of max_lines and max_bytes, 60 "
                   "writes a minute per tenant unless writes_per_minute is set; a person's files are kept whole up "
                   "to max_file_bytes). Env: MEMDIR_AGENT=1.")
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
