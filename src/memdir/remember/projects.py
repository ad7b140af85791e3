"""A project's memory by the repository's identity, not its path; and the team's memory inside the project.

A project is known by its repository: the URL of its remote (origin, else its
only remote), spelled one way whatever the clone used (`git@host:o/r.git`,
`https://host/o/r`, `ssh://git@host/o/r.git` are one project), else its
first commit, which every clone, worktree and copy of it shares. A remote that
is a path on this disk is not an identity (a clone of a clone would differ
from the clone it came from), so such a repository is known by its first
commit too. The identity names a tenant of the personal memory (`tenant_of`),
so the same project cloned at two paths, on two machines or in two worktrees
reaches the same memory: `memdir --tenant @project` (and the hooks and the
server, which run in the project's folder) find it from the working folder,
and `memdir sync` of the personal memory carries it to every machine.

The team's memory is a memory folder inside the project's own repository
(`team-memory/` at its top): reviewed in pull requests like code, shared by
the project's own commits, never by memdir's sync of anyone's personal memory.
Its MEMORY.md files are generated, so they are never merged as text: the
`.gitattributes` memdir writes there when it sets the folder up (`set_up_team`)
merges them by union (both sides' lines, no conflict to settle in a pull
request), and memdir renders them again at its next write or `reconcile --fix`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgument
from .gitrepo import Repo, top_of

BY_PROJECT = "@project"  # the tenant that names the project of the working folder
TEAM = "@team"  # the location that names the team's memory of the project of the working folder
TEAM_FOLDER = "team-memory"  # the team's memory, at the top of the project's repository
ATTRIBUTES = (  # the team memory's .gitattributes: a generated index is rendered again, never merged by hand
    "# memdir: MEMORY.md is generated from the memories beside it; a merge keeps both sides' lines (no conflict)",
    "# and memdir renders it again at its next write (`memdir --root @team reconcile --fix`)",
    "MEMORY.md merge=union linguist-generated=true",
)
_SCP = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d+)?(?P<path>/.*)?$", re.I)


@dataclass(frozen=True)
class Identity:
    """What a project is known by: `kind` "remote" (the URL, spelled one way) or "first commit" (its hash)."""

    kind: str
    value: str
    top: Path  # this clone's work tree (not part of the identity)

    @property
    def tenant(self) -> str:
        return tenant_of(self)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "value": self.value, "tenant": self.tenant, "top": str(self.top)}


def normal_url(url: str) -> str | None:
    """A remote's URL as `host/owner/name` (lower-case host, no user, port, scheme or `.git`), or None for a
    remote that is a path on this disk (file://, /srv/x.git, ../x)."""
    url = url.strip()
    m = _URL.match(url)
    if m and m.group("scheme").lower() != "file":
        host, path = m.group("host"), m.group("path") or ""
    elif not m and (s := _SCP.match(url)) and not url.startswith(("/", ".", "~")):
        host, path = s.group("host"), s.group("path")
    else:
        return None
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host.lower()}/{path}" if path else None


def identity(folder: Path) -> Identity:
    """The identity of the project whose repository holds `folder` (a worktree's is its repository's)."""
    top = top_of(folder)
    if top is None:
        raise InvalidArgument(f"{folder} is not inside a git repository, so it names no project; run this in a "
                              "project's folder, or name the tenant yourself (--tenant NAME)")
    repo = Repo(top)
    remotes = repo.out("remote").split()
    chosen = "origin" if "origin" in remotes else remotes[0] if len(remotes) == 1 else None
    if chosen is not None:
        url = normal_url(repo.out("remote", "get-url", chosen))
        if url is not None:
            return Identity("remote", url, top)
    roots = repo.run("rev-list", "--max-parents=0", "HEAD", check=False).stdout.decode().split()
    if not roots:
        raise InvalidArgument(f"the repository at {top} has no remote and no commit yet, so nothing names its project "
                              "on another machine; commit once (or add its remote), then try again")
    return Identity("first commit", min(roots), top)


def tenant_of(ident: Identity) -> str:
    """The tenant of the personal memory that holds the project's memory: readable, and unique by a digest."""
    digest = hashlib.blake2b(f"{ident.kind}:{ident.value}".encode(), digest_size=5).hexdigest()
    if ident.kind == "first commit":
        return f"project-{ident.value[:12]}"
    words = re.sub(r"[^a-z0-9]+", "-", "/".join(ident.value.lower().split("/")[-2:])).strip("-")
    return f"{words[:40].strip('-') or 'project'}-{digest}"


def tenant_for(folder: Path) -> str:
    """The tenant `--tenant @project` means in `folder`."""
    return identity(folder).tenant


def team_root(folder: Path) -> Path:
    """Where the team's memory of the project holding `folder` is (or goes): `team-memory/` at the repository's top."""
    top = top_of(folder)
    if top is None:
        raise InvalidArgument(f"{folder} is not inside a git repository, so it has no team memory; run this in a "
                              "project's folder, or name the memory with --root")
    return top / TEAM_FOLDER


def team_folder(folder: Path) -> Path | None:
    """The team's memory of the project whose repository holds `folder`, if the project keeps one."""
    where = folder.absolute()
    if not any((p / TEAM_FOLDER).is_dir() for p in {where, *where.parents, where.resolve(), *where.resolve().parents}):
        return None  # the repository's top is one of these: no need to ask git (a process each hook) where it is
    top = top_of(folder)
    if top is None:
        return None
    team = top / TEAM_FOLDER
    return team if team.is_dir() else None


def set_up_team(root: Path) -> None:
    """Give a team memory folder its `.gitattributes` lines (those it has stay, and so does everything else)."""
    path = root / ".gitattributes"
    try:
        have = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"{path} cannot be read ({e}); fix or remove it, then try again") from None
    add = [line for line in ATTRIBUTES if line not in have.splitlines()]
    if add:
        with path.open("a", encoding="utf-8") as f:
            f.write(("" if not have or have.endswith("\n") else "\n") + "\n".join(add) + "\n")
