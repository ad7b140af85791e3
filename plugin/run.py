"""memdir as the Claude Code plugin runs it: its own environment, set up on first use, then `memdir`.

`python3 run.py ARGS...` runs `memdir --root <memory> ARGS...` from a virtual
environment in the plugin's data folder (${CLAUDE_PLUGIN_DATA}/venv), made on
first use with `pip install` of this checkout and its MCP extra (1 min 49 s
measured on a busy 2-core machine, 19 s of it CPU; nothing is needed
beforehand but Python 3.11+ and the package index). A new
plugin version installs again; two processes starting at once (the MCP server
and the first SessionStart hook) take turns on a lock, so one installs.

The memory is the plugin's `memory` option (default ~/.claude/memdir). Its
`claude_memory` option keeps one memory, not two: "off" (the default) sets
`autoMemoryEnabled: false` in ~/.claude/settings.json, "shared" sets
`autoMemoryDirectory` to the memory folder there (and SessionStart leaves out
the MEMORY.md Claude Code then shows itself). Only that one key is written,
once, through a symlinked file, the file as it was kept as settings.json.bak.

MEMDIR_PLUGIN_PYTHON names an interpreter that already has memdir (a
developer's checkout, the test suite): no environment is made.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent  # the plugin root is the repository: pyproject.toml and src/
DEFAULT_MEMORY = "~/.claude/memdir"


def option(name: str, default: str) -> str:
    """A plugin option: Claude Code hands hooks CLAUDE_PLUGIN_OPTION_<KEY>, the MCP config our MEMDIR_PLUGIN_<KEY>."""
    for key in (f"MEMDIR_PLUGIN_{name.upper()}", f"CLAUDE_PLUGIN_OPTION_{name.upper()}", f"CLAUDE_PLUGIN_OPTION_{name}"):
        value = os.environ.get(key, "")
        if value and not value.startswith("${"):
            return value
    return default


def stamp() -> str:
    """What the environment was installed from: a new plugin version (or checkout) installs again."""
    digest = zlib.crc32((SOURCE / "pyproject.toml").read_bytes())
    for path in sorted((SOURCE / "src").rglob("*.py")):
        digest = zlib.crc32(str(path.relative_to(SOURCE)).encode() + str(path.stat().st_size).encode(), digest)
    return f"crc32-{digest:08x}"


def python() -> str:
    """The interpreter with memdir installed: made in the plugin's data folder on first use."""
    given = os.environ.get("MEMDIR_PLUGIN_PYTHON")
    if given:
        return given
    data = Path(option("data", "") or os.environ.get("CLAUDE_PLUGIN_DATA") or Path.home() / ".cache" / "memdir-plugin")
    env = data / "venv"
    exe = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    done = env / ".installed"
    want = stamp()
    if done.exists() and done.read_text() == want:
        return str(exe)
    data.mkdir(parents=True, exist_ok=True)
    with open(data / ".install.lock", "w") as lock:
        _lock(lock)
        if not (done.exists() and done.read_text() == want):  # another process may have done it meanwhile
            print("memdir: setting up its environment (first use, one to two minutes)...", file=sys.stderr)
            import subprocess  # here, not at the top: a hook pays for what it runs (and Claude Code waits for it)
            import venv

            if not exe.exists():
                venv.create(env, with_pip=True)
            subprocess.run([str(exe), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{SOURCE}[mcp]"],
                           check=True, stdout=sys.stderr)
            done.write_text(want)
    return str(exe)


def _lock(f: object) -> None:
    try:
        import fcntl

        fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # type: ignore[attr-defined]
    except ImportError:  # Windows: msvcrt locks a byte range
        import msvcrt

        msvcrt.locking(f.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]


def one_memory(mode: str, memory: str) -> None:
    """Claude Code's own auto memory off, or pointed at this memory: one key of ~/.claude/settings.json."""
    settings = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "settings.json"
    try:
        text = settings.read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else {}
    except FileNotFoundError:
        text, data = "", {}
    except (OSError, ValueError):
        return  # not ours to repair; the user sees their own file as it is
    if not isinstance(data, dict):
        return
    if mode == "shared":
        if data.get("autoMemoryDirectory") == memory:
            return
        data["autoMemoryDirectory"] = memory
    elif data.get("autoMemoryEnabled") is False or mode != "off":
        return
    else:
        data["autoMemoryEnabled"] = False
    target = settings.resolve() if settings.is_symlink() else settings
    target.parent.mkdir(parents=True, exist_ok=True)
    if text:
        backup = settings.with_name(settings.name + ".bak")
        tmp = backup.with_name(backup.name + f".{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, backup)
    tmp = target.with_name(f".{target.name}.memdir-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, target)


def main(args: list[str]) -> int:
    memory = os.path.abspath(os.path.expanduser(option("memory", DEFAULT_MEMORY)))
    mode = option("claude_memory", "off")
    exe = python()
    command = [exe, "-m", "memdir", "--root", memory, *args]
    if args[:2] == ["hook", "claude-code"]:
        Path(memory).parent.mkdir(parents=True, exist_ok=True)
        if mode in ("off", "shared"):
            one_memory(mode, memory)
        if mode == "shared":
            command.append("--no-index")
    elif args[:1] == ["serve"]:
        Path(memory).parent.mkdir(parents=True, exist_ok=True)
    if os.name == "nt":
        import subprocess

        return subprocess.run(command).returncode
    os.execv(exe, command)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
