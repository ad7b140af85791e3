"""Peer benchmark: memdir beside the memory tools users would pick instead, on one workload.

    python bench/peers.py               # installs the peers into ~/.cache/memdir-bench on first use
    python bench/peers.py --notes 200   # a smaller run

Peers, each driven through its own public interface:
- memdir in process (`memdir.open`, `write`/`read`/`search`) and over MCP
  stdio (`memdir serve`, the stock `mcp` SDK client, as an agent runs it);
- the MCP reference memory server (`@modelcontextprotocol/server-memory`,
  npm, into the cache folder): a knowledge graph in one JSONL file, over stdio
  with the same client;
- basic-memory (PyPI, needs Python 3.12+, into its own virtual environment in
  the cache folder), over stdio with the same client; skipped with the reason
  when no such Python is found;
- the Anthropic SDK's local filesystem memory tool
  (`BetaLocalFilesystemMemoryTool.call`), in process.

Workload: N notes with frontmatter of the seed types created one by one;
N reads; 100 searches for one word; 200 updates; a restart with the full store
(from starting the process to the first read answered). Each peer gets its own
empty folder. Prints one table: median / p95 in ms per operation and peer,
and each peer's ratio to the fastest median. The rate limit is off. Any failed
operation is printed and the exit code is 1, so a table never hides one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # keep `import mcp` for the SDK
sys.path.insert(0, str(HERE.parent / "src"))

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

import memdir  # noqa: E402

CACHE = Path(os.environ.get("MEMDIR_BENCH_CACHE") or Path.home() / ".cache" / "memdir-bench")
TYPES = ("user", "feedback", "project", "reference")
WORDS = ("harbour", "lantern", "meadow", "quartz", "saffron", "tundra", "velvet", "walnut", "zephyr", "orchid",
         "granite", "juniper", "kestrel", "marble", "nectar", "pebble", "raven", "sequoia", "thistle", "umber")
OPS = ("create", "read", "search", "update", "restart")
SEARCHES, UPDATES, RESTARTS = 100, 200, 3


@dataclass(frozen=True)
class Note:
    i: int
    type: str
    name: str
    description: str
    body: str
    words: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"{self.type}/note-{self.i:04d}.md"

    @property
    def text(self) -> str:
        return (f"---\nname: {self.name}\ndescription: {self.description}\ntype: {self.type}\n---\n{self.body}")


def notes(n: int) -> list[Note]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        kind = TYPES[i % 4]
        words = rng.sample(WORDS, 3)
        lines = [f"Fact {i}: the {words[0]} plan depends on the {words[1]} review.",
                 f"Owner of part {i} is team {words[2]}; next check on 2026-12-{1 + i % 28:02d}.",
                 f"Keyword k{i:04d}x marks this note."]
        out.append(Note(i, kind, f"note {i}", f"{kind} note {i} about {words[0]} and {words[1]}",
                        "\n".join(lines) + "\n", tuple(words)))
    return out


def updated(note: Note, round_: int) -> str:
    return note.body + f"Update {round_}: confirmed on 2026-12-{1 + round_ % 28:02d}.\n"


@dataclass
class Run:
    name: str
    times: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPS})
    failures: list[str] = field(default_factory=list)
    skipped: str = ""


class Peer:
    """One tool under test: async operations that raise on failure."""

    name = ""

    def available(self) -> str:
        """'' when it can run, else why not."""
        return ""

    async def start(self, folder: Path) -> None: ...

    async def create(self, note: Note) -> None: ...

    async def read(self, note: Note) -> None: ...

    async def search(self, word: str) -> None: ...

    async def update(self, note: Note, round_: int) -> None: ...

    async def restart(self, note: Note) -> float:
        """Close, start again on the full store and read one note; ms."""
        raise NotImplementedError

    async def close(self) -> None: ...


# ---------------------------------------------------------------- in process

class MemdirLibrary(Peer):
    name = "memdir (in process)"

    async def start(self, folder: Path) -> None:
        self.folder = folder
        self.md = memdir.open(folder, writes_per_minute=0)

    async def create(self, note: Note) -> None:
        self.md.write(note.path, note.body, name=note.name, description=note.description, type=note.type)

    async def read(self, note: Note) -> None:
        assert self.md.read(note.path).body == note.body or "Update" in self.md.read(note.path).body

    async def search(self, word: str) -> None:
        if not self.md.search(word, k=5):
            raise AssertionError(f"no hit for {word!r}")

    async def update(self, note: Note, round_: int) -> None:
        self.md.write(note.path, updated(note, round_))

    async def restart(self, note: Note) -> float:
        self.md.close()
        code = f"import memdir; memdir.open({str(self.folder)!r}).read({note.path!r})"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        took = (time.perf_counter() - start) * 1000
        self.md = memdir.open(self.folder, writes_per_minute=0)
        return took

    async def close(self) -> None:
        self.md.close()


class AnthropicTool(Peer):
    name = "Anthropic SDK memory tool"

    def available(self) -> str:
        try:
            from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool  # noqa: F401
        except ImportError as e:
            return f"the anthropic package has no BetaLocalFilesystemMemoryTool ({e})"
        return ""

    async def start(self, folder: Path) -> None:
        from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

        self.folder = folder
        self.tool = BetaLocalFilesystemMemoryTool(str(folder))

    def _call(self, **command: Any) -> str:
        out = self.tool.call(command)
        text = out if isinstance(out, str) else json.dumps(out, default=str)
        if text.startswith("Error"):
            raise AssertionError(text)
        return text

    async def create(self, note: Note) -> None:
        self._call(command="create", path=f"/memories/{note.path}", file_text=note.text)

    async def read(self, note: Note) -> None:
        self._call(command="view", path=f"/memories/{note.path}")

    async def update(self, note: Note, round_: int) -> None:
        last = note.body.splitlines()[-1]
        self._call(command="str_replace", path=f"/memories/{note.path}", old_str=last,
                   new_str=f"{last}\nUpdate {round_}: confirmed.")

    async def restart(self, note: Note) -> float:
        code = ("from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool as T; "
                f"T({str(self.folder)!r}).call({{'command': 'view', 'path': '/memories/{note.path}'}})")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        return (time.perf_counter() - start) * 1000


# ---------------------------------------------------------------- over MCP stdio

class McpPeer(Peer):
    """A stdio MCP server driven by the stock SDK client."""

    async def command(self) -> tuple[str, list[str], dict[str, str]]:
        raise NotImplementedError

    async def start(self, folder: Path) -> None:
        self.folder = folder
        await self._connect()

    async def _connect(self) -> None:
        cmd, args, env = await self.command()
        self.errlog = open(self.folder / "server.log", "a")  # the server's own stderr, kept out of the table
        params = StdioServerParameters(command=cmd, args=args, env={**os.environ, **env})
        self.client = Client(stdio_client(params, errlog=self.errlog))
        await self.client.__aenter__()

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        result = await self.client.call_tool(tool, args)
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            raise AssertionError(f"{tool}: {text[:200]}")
        return result

    async def restart(self, note: Note) -> float:
        await self.close()
        start = time.perf_counter()
        await self._connect()
        await self.read(note)
        return (time.perf_counter() - start) * 1000

    async def close(self) -> None:
        try:
            await self.client.__aexit__(None, None, None)
        finally:
            self.errlog.close()


class MemdirMcp(McpPeer):
    name = "memdir (MCP stdio)"

    async def command(self) -> tuple[str, list[str], dict[str, str]]:
        return sys.executable, ["-m", "memdir", "--root", str(self.folder), "serve"], {"MEMDIR_WRITES_PER_MINUTE": "0"}

    async def create(self, note: Note) -> None:
        await self.call("write_memory_file", {"path": note.path, "content": note.text})

    async def read(self, note: Note) -> None:
        await self.call("read_memory_file", {"path": note.path})

    async def search(self, word: str) -> None:
        result = await self.call("search_memory", {"query": word, "k": 5})
        if not (result.structured_content or {}).get("hits"):
            raise AssertionError(f"no hit for {word!r}")

    async def update(self, note: Note, round_: int) -> None:
        text = note.text.replace(note.body, updated(note, round_))
        await self.call("write_memory_file", {"path": note.path, "content": text})


class ReferenceServer(McpPeer):
    name = "MCP reference memory server"
    package = "@modelcontextprotocol/server-memory"

    def bin(self) -> Path:
        return CACHE / "npm" / "node_modules" / ".bin" / "mcp-server-memory"

    def available(self) -> str:
        if shutil.which("npm") is None or shutil.which("node") is None:
            return "node and npm are not installed"
        if not self.bin().exists():
            done = subprocess.run(["npm", "install", "--silent", "--prefix", str(CACHE / "npm"), self.package],
                                  capture_output=True, text=True)
            if done.returncode != 0 or not self.bin().exists():
                return f"npm install {self.package} failed: {done.stderr.strip()[-300:]}"
        return ""

    async def command(self) -> tuple[str, list[str], dict[str, str]]:
        return str(self.bin()), [], {"MEMORY_FILE_PATH": str(self.folder / "memory.jsonl")}

    async def create(self, note: Note) -> None:
        await self.call("create_entities", {"entities": [
            {"name": note.name, "entityType": note.type, "observations": [note.description, *note.body.splitlines()]}]})

    async def read(self, note: Note) -> None:
        result = await self.call("open_nodes", {"names": [note.name]})
        if not (result.structured_content or {}).get("entities"):
            raise AssertionError(f"{note.name} not found")

    async def search(self, word: str) -> None:
        result = await self.call("search_nodes", {"query": word})
        if not (result.structured_content or {}).get("entities"):
            raise AssertionError(f"no hit for {word!r}")

    async def update(self, note: Note, round_: int) -> None:
        await self.call("add_observations", {"observations": [
            {"entityName": note.name, "contents": [f"Update {round_}: confirmed on 2026-12-{1 + round_ % 28:02d}."]}]})


class BasicMemory(McpPeer):
    name = "basic-memory (MCP stdio)"
    package = "basic-memory"

    def venv(self) -> Path:
        return CACHE / "basic-memory"

    def available(self) -> str:
        exe = self.venv() / "bin" / "basic-memory"
        if exe.exists():
            return ""
        python = _python312()
        if python is None:
            return "needs Python 3.12 or newer, and none was found (pyenv, uv, PATH)"
        for step in ([python, "-m", "venv", str(self.venv())],
                     [str(self.venv() / "bin" / "python"), "-m", "pip", "install", "-q", self.package]):
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                return f"{' '.join(step[:3])} failed: {done.stderr.strip()[-300:]}"
        return "" if exe.exists() else "basic-memory installed no basic-memory command"

    async def command(self) -> tuple[str, list[str], dict[str, str]]:
        home = self.folder / "home"
        home.mkdir(exist_ok=True)
        env = {"HOME": str(home), "BASIC_MEMORY_HOME": str(self.folder / "notes"),
               "BASIC_MEMORY_CONFIG_DIR": str(home / ".basic-memory"), "BASIC_MEMORY_LOG_LEVEL": "ERROR",
               "HF_HUB_OFFLINE": "1", "BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED": "false"}
        return str(self.venv() / "bin" / "basic-memory"), ["mcp"], env

    async def create(self, note: Note) -> None:
        await self.call("write_note", {"title": note.name, "content": note.body, "directory": note.type,
                                       "tags": [note.type], "note_type": note.type})

    async def read(self, note: Note) -> None:
        result = await self.call("read_note", {"identifier": f"{note.type}/{note.name.replace(' ', '-')}"})
        text = " ".join(getattr(c, "text", "") for c in result.content)
        if f"k{note.i:04d}x" not in text:
            raise AssertionError(f"{note.name}: read did not return the note ({text[:120]!r})")

    async def search(self, word: str) -> None:
        result = await self.call("search_notes", {"query": word, "search_type": "text"})
        text = " ".join(getattr(c, "text", "") for c in result.content)
        if "note-" not in text and "note " not in text:
            raise AssertionError(f"no hit for {word!r}: {text[:120]!r}")

    async def update(self, note: Note, round_: int) -> None:
        await self.call("write_note", {"title": note.name, "content": updated(note, round_), "directory": note.type,
                                       "tags": [note.type], "note_type": note.type, "overwrite": True})


def _python312() -> str | None:
    """A Python 3.12+ interpreter for basic-memory: pyenv's, uv's, or one on PATH."""
    found = sorted(Path("/root/.pyenv/versions").glob("3.1[2-9]*/bin/python3")) if Path("/root/.pyenv").exists() else []
    pyenv = Path.home() / ".pyenv" / "versions"
    found += sorted(pyenv.glob("3.1[2-9]*/bin/python3")) if pyenv.exists() else []
    if found:
        return str(found[-1])
    if shutil.which("uv"):
        done = subprocess.run(["uv", "python", "find", ">=3.12"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    for name in ("python3.13", "python3.12"):
        if shutil.which(name):
            return shutil.which(name)
    return None


# ---------------------------------------------------------------- driving

async def timed(run: Run, op: str, what: str, action: Callable[[], Awaitable[Any]]) -> None:
    start = time.perf_counter()
    try:
        await action()
    except Exception as e:  # every failure is reported, never hidden in a table
        run.failures.append(f"{run.name}: {op} {what}: {type(e).__name__}: {str(e)[:300]}")
        return
    run.times[op].append((time.perf_counter() - start) * 1000)


async def drive(peer: Peer, folder: Path, n: int) -> Run:
    run = Run(peer.name)
    why = await anyio.to_thread.run_sync(peer.available)
    if why:
        run.skipped = why
        return run
    all_notes = notes(n)
    rng = random.Random(11)
    try:
        await peer.start(folder)
    except Exception as e:
        log = folder / "server.log"
        tail = log.read_text()[-500:] if log.exists() else ""
        run.failures.append(f"{run.name}: start: {type(e).__name__}: {e} {tail}")
        return run
    try:
        for note in all_notes:
            await timed(run, "create", note.path, lambda note=note: peer.create(note))
        for note in rng.choices(all_notes, k=n):
            await timed(run, "read", note.path, lambda note=note: peer.read(note))
        if type(peer).search is not Peer.search:
            for _ in range(SEARCHES):
                word = rng.choice(rng.choice(all_notes).words)  # a word some note holds
                await timed(run, "search", word, lambda word=word: peer.search(word))
        for round_, note in enumerate(rng.choices(all_notes, k=UPDATES)):
            await timed(run, "update", note.path, lambda note=note, round_=round_: peer.update(note, round_))
        for _ in range(RESTARTS):
            note = rng.choice(all_notes)
            start = time.perf_counter()
            try:
                run.times["restart"].append(await peer.restart(note))
            except Exception as e:
                run.failures.append(f"{run.name}: restart: {type(e).__name__}: {str(e)[:300]}")
                run.times["restart"].append((time.perf_counter() - start) * 1000)
                break
    finally:
        try:
            await peer.close()
        except Exception as e:
            run.failures.append(f"{run.name}: close: {type(e).__name__}: {e}")
    return run


def stats(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.95))]


def table(runs: list[Run]) -> str:
    ran = [r for r in runs if not r.skipped]
    out = ["| operation | " + " | ".join(r.name for r in ran) + " |", "|---" * (len(ran) + 1) + "|"]
    for op in OPS:
        medians = {r.name: stats(r.times[op])[0] for r in ran if r.times[op]}
        best = min(medians.values()) if medians else 0.0
        cells = []
        for r in ran:
            if not r.times[op]:
                cells.append("n/a")
                continue
            med, p95 = stats(r.times[op])
            cells.append(f"{med:.2f} / {p95:.2f} ({med / best:.1f}x)")
        out.append(f"| {op} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=1000, help="notes to create and reads to time")
    parser.add_argument("--peers", default="", help="comma-separated subset of: memdir, memdir-mcp, reference, "
                                                   "basic-memory, anthropic")
    args = parser.parse_args()
    every: dict[str, Peer] = {"memdir": MemdirLibrary(), "memdir-mcp": MemdirMcp(), "anthropic": AnthropicTool(),
                              "reference": ReferenceServer(), "basic-memory": BasicMemory()}
    chosen = [every[p] for p in (args.peers.split(",") if args.peers else every)]
    CACHE.mkdir(parents=True, exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, peer in enumerate(chosen):
            print(f"  running {peer.name}...", file=sys.stderr, flush=True)
            folder = Path(tmp) / f"peer{i}"
            folder.mkdir()
            runs.append(anyio.run(drive, peer, folder, args.notes))
    print(f"Memory tools on one workload: {args.notes:,} notes created, {args.notes:,} reads, {SEARCHES} one-word "
          f"searches, {UPDATES} updates, {RESTARTS} restarts with the full store. median / p95 in ms (ratio of the "
          "median to the fastest); n/a: the tool has no such operation\n")
    print(table(runs))
    for r in runs:
        if r.skipped:
            print(f"\nskipped {r.name}: {r.skipped}")
    failures = [f for r in runs for f in r.failures]
    if failures:
        print(f"\n{len(failures)} operations failed:", file=sys.stderr)
        for f in failures[:50]:
            print(f"  {f}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
