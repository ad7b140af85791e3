"""Suite 4, isolation: no answer for one principal ever holds another's path or content, on any backend or face.

A world is two tenants, each with files in random folders (every file's
path and content carry a unique token), some renamed across folders and some
deleted, and principals with random scopes. For every principal, every face
(the Python view, the tools, the Anthropic memory tool, MCP, HTTP, and the
CLI for whole tenants) is asked everything it can be asked: listings, every
index, every path of the world (its own tenant's and the other's), searches
and greps for every token, history with content, undo of hidden paths. No
answer, error text included, may contain a token or path the principal
cannot read; and a hidden path that exists is refused exactly like one that
does not. Worlds are drawn by hypothesis: 2 per backend in `make test`, 20 in
soak. In `make test`, PostgreSQL and S3 get one world and the Python face
only (the other faces reach the store through the same calls, and their
servers are slow); soak runs every face on all four.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import Backend
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving import Running, call
from tally import SOAK, scale, tally, tried  # noqa: F401 - tally is an autouse fixture

import memdir
from memdir import MemdirError
from memdir.faces import tools
from memdir.faces.anthropic import MemdirMemoryTool
from memdir.faces.auth import Principal, Principals
from memdir.faces.cli import main

_worlds = itertools.count()
_slow_worlds: Counter[str] = Counter()
FOLDERS = ["household/", "people/alice/", "people/bob/", "work/", "work/secret/", "notes/"]


@dataclass
class File:
    tenant: str
    paths: list[str]  # every path it had, the current one last (None-free); deleted files keep theirs
    token: str
    deleted: bool = False


@dataclass
class World:
    tenants: list[str]
    files: list[File] = field(default_factory=list)

    def seen_by(self, tenant: str, read: tuple[str, ...] | None) -> tuple[set[str], set[str]]:
        """(strings this principal may see, strings it must never see): tokens and paths."""
        ok: set[str] = set()
        never: set[str] = set()
        for f in self.files:
            visible = [p for p in f.paths if f.tenant == tenant and (read is None or p.startswith(read))]
            if visible:
                ok.add(f.token)
                ok.update(visible)
            never.update(p for p in f.paths if p not in visible)
            if not visible:
                never.add(f.token)
        return ok, never - ok


def build(backend: Backend, rng: random.Random, tag: str) -> World:
    world = World([f"{tag}a", f"{tag}b"])
    for tenant in world.tenants:
        with backend.open(tenant) as md:
            for i in range(rng.randint(5, 9)):
                token = f"tok{rng.getrandbits(40):010x}"
                path = f"{rng.choice(FOLDERS)}f{i}-{token[3:9]}.md"
                md.write(path, f"Fact {token} for {tenant}.\n", description=f"about {token}")
                f = File(tenant, [path], token)
                world.files.append(f)
                roll = rng.random()
                if roll < 0.3:  # moved to another folder, maybe out of someone's scope
                    dest = f"{rng.choice(FOLDERS)}moved{i}-{rng.getrandbits(24):06x}.md"
                    md.rename(path, dest)
                    f.paths.append(dest)
                elif roll < 0.45:
                    md.delete(path)
                    f.deleted = True
    return world


def principals(world: World, rng: random.Random) -> list[Principal]:
    out = []
    for n, tenant in enumerate(world.tenants):
        out.append(Principal(f"whole{n}", tenant))
        for k in range(2):
            read = tuple(rng.sample(FOLDERS, rng.randint(1, 2)))
            write = tuple(p for p in read if rng.random() < 0.5)
            out.append(Principal(f"p{n}{k}", tenant, read, write))
    return out


def readable(p: Principal) -> tuple[str, ...] | None:
    if not p.scoped:
        return None
    prefixes = sorted({*(p.read or ()), *(p.write or ())})
    return tuple(q for q in prefixes if not any(q != r and q.startswith(r) for r in prefixes))


def check(answer: Any, never: set[str], where: str, asked: tuple[str, ...] = ()) -> None:
    """No string of `never` in the answer, except what the caller itself asked about (an echo is no leak)."""
    tried("answers checked")
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str, ensure_ascii=False)
    leaked = sorted(s for s in never if s in text and not any(s in a for a in asked))
    assert not leaked, f"{where} leaked {leaked[:3]}: {text[:300]}"


def ask_python(md: memdir.Memdir, world: World, never: set[str], where: str) -> None:
    def plain(x: Any) -> Any:
        if isinstance(x, list):
            return [plain(y) for y in x]
        if hasattr(x, "to_dict"):
            try:
                return x.to_dict(content=True)
            except TypeError:
                return x.to_dict()
        return x

    def safe(fn: Any, *args: Any, **kw: Any) -> Any:
        try:
            return plain(fn(*args, **kw))
        except MemdirError as e:
            return f"{type(e).__name__}: {e.message} {e.path}"

    check(safe(md.list), never, where)
    for folder in ["", *FOLDERS]:
        check(safe(md.index, folder), never, where)
    check(safe(md.history), never, where)
    for f in world.files:
        check(safe(md.search, f.token), never, where, (f.token,))
        check(safe(md.grep, f.token, fixed=True), never, where, (f.token,))
        for p in f.paths:
            check(safe(md.read, p), never, where, (p,))
            check(safe(md.history, p), never, where, (p,))


def refusals_match(md: memdir.Memdir, world: World, tenant: str, read: tuple[str, ...] | None, where: str) -> None:
    """A hidden path that exists gets the same refusal as one that never did, for reads, history and undo."""
    if read is None:
        return
    for f in world.files:
        path = f.paths[-1]
        if f.tenant != tenant or path.startswith(read) or f.deleted:
            continue
        ghost = path.rsplit("/", 1)[0] + "/never-written.md"
        for name, fn in (("read", md.read), ("undo", md.undo), ("history", md.history)):
            answers = []
            for target in (path, ghost):
                try:
                    answers.append(repr(fn(target)).replace(target, "P"))
                except MemdirError as e:
                    answers.append(f"{type(e).__name__}: {e.message.replace(target, 'P')}")
            tried("existence probes")
            assert answers[0] == answers[1], f"{where}: {name} tells a hidden file from a missing one: {answers}"


def ask_tools(md: memdir.Memdir, world: World, never: set[str], where: str) -> None:
    session = tools.Session(md)
    calls: list[tuple[str, dict[str, Any]]] = [("list_memory_files", {}), ("read_memory_index", {})]
    calls += [("read_memory_index", {"folder": f}) for f in FOLDERS] + [("list_memory_files", {"folder": f}) for f in FOLDERS]
    for f in world.files:
        calls.append(("search_memory", {"query": f.token}))
        calls += [("read_memory_file", {"path": p}) for p in f.paths]
        calls += [("undo_memory_change", {"path": p}) for p in f.paths if p in never]
    for name, args in calls:
        result = session.handle(name, args)
        asked = tuple(str(v) for v in args.values())
        check(result.text, never, f"{where} {name}", asked)
        check(result.data, never, f"{where} {name}", asked)
    memory_tool = MemdirMemoryTool(md)
    views = ["/memories", *[f"/memories/{f.rstrip('/')}" for f in FOLDERS], "/memories/MEMORY.md"]
    views += [f"/memories/{p}" for f in world.files for p in f.paths]
    for path in views:
        try:
            out = memory_tool.call({"command": "view", "path": path})
        except Exception as e:  # the SDK's ToolError carries the refusal text
            out = str(e)
        check(out, never, f"{where} memory tool view {path}", (path,))


async def ask_mcp(backend: Backend, p: Principal, world: World, never: set[str], where: str) -> None:
    from mcp import Client

    from memdir.faces import mcp
    from memdir.faces.auth import Memories

    memories = Memories(backend.location, transport="mcp")
    try:
        async with Client(mcp.server(Principals(p), memories)) as client:  # type: ignore[arg-type]
            check((await client.list_resources()).model_dump(), never, f"{where} mcp resources")
            check((await client.read_resource("memdir://index")).model_dump(), never, f"{where} mcp index")
            for f in world.files:
                result = await client.call_tool("search_memory", {"query": f.token})
                check(result.model_dump(), never, f"{where} mcp search", (f.token,))
                for path in f.paths:
                    try:
                        got: Any = (await client.read_resource(f"memdir://file/{path}")).model_dump()
                    except Exception as e:
                        got = str(e)
                    check(got, never, f"{where} mcp resource {path}", (path,))
                    check((await client.call_tool("read_memory_file", {"path": path})).model_dump(), never,
                          f"{where} mcp read", (path,))
    finally:
        memories.close()


def ask_http(base: str, token: str, world: World, never: set[str], where: str) -> None:
    urls = [f"{base}/v1/files", f"{base}/v1/index", f"{base}/v1/history?content=true&limit=1000"]
    urls += [f"{base}/v1/index?folder={f}" for f in FOLDERS] + [f"{base}/v1/files?folder={f}" for f in FOLDERS]
    for f in world.files:
        urls.append(f"{base}/v1/search?q={f.token}")
        for p in f.paths:
            urls += [f"{base}/v1/files/{p}", f"{base}/v1/history/{p}?content=true"]
    for url in urls:
        reply = call("GET", url, token=token)
        assert reply.status < 500, (url, reply.body[:200])
        check(reply.body.decode(), never, f"{where} GET {url}", (url,))
    for f in world.files:
        for p in f.paths:
            if p in never:
                reply = call("POST", f"{base}/v1/undo/{p}", token=token)
                check(reply.body.decode(), never, f"{where} POST undo {p}", (p,))


def ask_cli(backend: Backend, tenant: str, world: World, never: set[str], where: str) -> None:
    runner = CliRunner()
    base = ["--root", backend.location, "--tenant", backend.tenant(tenant) or ""]
    commands = [["ls", "--json"], ["index"], ["log", "--json", "--patch", "-n", "1000"]]
    commands += [["search", f.token] for f in world.files] + [["grep", "-F", f.token] for f in world.files]
    commands += [["read", p] for f in world.files for p in f.paths]
    for args in commands:
        result = runner.invoke(main, [*base, *args])
        assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
        check(result.stdout + result.stderr, never, f"{where} cli {' '.join(args)}", tuple(args))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@given(seed=st.integers(0, 2**32))
@settings(max_examples=scale(2, 20), deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_no_principal_sees_another_s_paths_or_content(backend: Backend, tmp_path: Path, seed: int) -> None:
    import anyio

    every_face = SOAK or backend.name in ("fs", "sqlite")
    if not every_face and _slow_worlds[backend.name]:
        return  # one world on PostgreSQL and S3 in the short form
    _slow_worlds[backend.name] += 1
    rng = random.Random(seed)
    tag = f"w{next(_worlds)}s{seed % 100_000}"
    world = build(backend, rng, tag)
    everyone = principals(world, rng)
    tried("worlds")
    auth = tmp_path / f"auth-{tag}.toml"
    tokens = {p.name: f"token-{p.name}-{rng.getrandbits(64):016x}" for p in everyone}
    lines = []
    for p in everyone:
        lines += [f"[tokens.{p.name}]", f'token = "{tokens[p.name]}"', f'tenant = "{backend.tenant(p.tenant)}"']
        if p.scoped:
            lines += [f"scope-read = {json.dumps(list(p.read or ()))}", f"scope-write = {json.dumps(list(p.write or ()))}"]
    auth.write_text("\n".join(lines) + "\n")
    served = Principals(Principal("default", backend.tenant(world.tenants[0]), (), ()))
    served.load(auth)
    with Running(backend.location, served) as server:
        for p in everyone:
            tried("principals")
            read = readable(p)
            _, never = world.seen_by(p.tenant or "", read)
            where = f"{backend.name} {p}"
            with backend.open(p.tenant) as whole:
                md = whole if read is None else whole.scope(read=p.read or (), write=p.write or ())
                ask_python(md, world, never, f"{where} python")
                refusals_match(md, world, p.tenant or "", read, f"{where} python")
                if every_face:
                    ask_tools(md, world, never, f"{where} tools")
            if every_face:  # the other faces reach the store as the Python face does; on the slow servers, soak only
                ask_http(server.url, tokens[p.name], world, never, f"{where} http")
                real = Principal(p.name, backend.tenant(p.tenant), p.read, p.write)
                anyio.run(ask_mcp, backend, real, world, never, where)
                if not p.scoped:
                    ask_cli(backend, p.tenant or "", world, never, f"{where} cli")


def test_the_default_tenant_sees_no_named_tenant(backend: Backend) -> None:
    with backend.open("acme") as acme:
        acme.write("notes/plan.md", "ACME-ONLY plan\n", description="acme plan")
    with backend.open() as default:
        answers = [default.list(), default.index(), default.search("plan"), default.grep("ACME")]
        check(json.dumps([[getattr(x, "path", x) for x in a] if isinstance(a, list) else a for a in answers]),
              {"ACME-ONLY", "notes/plan.md", "acme plan"}, f"{backend.name} default tenant")
        with pytest.raises(MemdirError):
            default.write("tenants/acme/notes/plan.md", "overwritten\n")

