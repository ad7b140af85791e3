"""The resident process: where a hook or `memdir serve` over stdio hands its work, so it answers in milliseconds.

Claude Code starts a new process for each hook event and for its MCP server, and waits for it. Such a process
spends nearly all its time importing: memdir about 0.2 s of CPU, the MCP SDK 0.6 s more, where a hook's own work
takes about 10 ms. So a command of those kinds (`hook claude-code`, `serve` with no other option) first looks for
a resident process: one that imported the command line, the hooks and the MCP server once
(`faces/cli/resident.py`) and waits on a Unix socket in a private folder. The command hands it its stdin, stdout
and stderr (SCM_RIGHTS), its arguments, environment, folder, umask and resource limits; the resident forks a
child that runs the command as the command line would, on those very streams, while the command waits for the
child's exit code and passes it a signal it gets (Claude Code stops its MCP server with SIGINT). When none
answers, the command runs in its own process, as it would without it, and a hook starts one in the background
(a server does not: a script's or a test's MCP client would leave one behind for nothing).

A resident is one per interpreter, memdir's files and the variables read at import (`IMPORTED`); one whose
files changed since it started refuses (the command runs in its own process) and exits. It exits after
MEMDIR_RESIDENT seconds without a command (default 1800); MEMDIR_RESIDENT=off keeps every command in its own
process. POSIX only (fork, SCM_RIGHTS): elsewhere every command runs in its own process.

This module imports nothing of memdir's and, of the standard library, the C modules under `socket` and `signal`
(whose Python wrappers import enum, selectors and more, which would double what a served command costs): it is
all such a command loads. The request travels as `marshal` data, both ends being the same interpreter.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C module has no stubs
import _socket
import marshal
import os
import resource
import stat
import sys
import zlib

IDLE = 1800.0  # seconds a resident waits for a command before it exits
SERVED = (["hook", "claude-code"], ["hook", "claude-code", "--no-index"], ["serve"])  # after --root and --tenant
IMPORTED = ("MEMDIR_MAX_OPEN", "MEMDIR_MCP_SESSIONS")  # variables a module the resident imports reads at import (tests/faces/test_resident)
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this memdir's package folder
SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)  # passed on to the child (SIGINT first: see forward)
LIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE")  # the command's, in its child
REFUSED = 0  # the pid a resident answers when it will not run the command (its files changed)
SIZE = 4  # bytes of a length or a pid, big-endian: the request's length, then the request; the child's pid first,
# its exit code (one byte) last


def enabled() -> bool:
    setting = os.environ.get("MEMDIR_RESIDENT", "").strip().lower()
    return (setting not in ("0", "off", "no", "false") and os.name == "posix" and hasattr(_socket, "SCM_RIGHTS")
            and hasattr(os, "fork"))


def idle() -> float:
    """Seconds without a command before the resident exits (MEMDIR_RESIDENT, when a number)."""
    try:
        return max(0.1, float(os.environ.get("MEMDIR_RESIDENT", "")))
    except ValueError:
        return IDLE


def served(argv: list[str]) -> bool:
    """Whether the resident runs this command: a hook, or a stdio server, with only --root and --tenant beside."""
    return command(argv) in SERVED


def command(argv: list[str]) -> list[str]:
    """The command and its own options: the arguments without --root and --tenant."""
    rest, i = [], 0
    while i < len(argv):
        if argv[i] in ("--root", "--tenant") and i + 1 < len(argv):
            i += 2
            continue
        if not argv[i].startswith(("--root=", "--tenant=")):
            rest.append(argv[i])
        i += 1
    return rest


def folder() -> str:
    """The private folder the sockets are in: $XDG_RUNTIME_DIR/memdir, else memdir-<uid> in the temporary folder."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    return os.path.join(base, "memdir") if base else os.path.join(os.environ.get("TMPDIR") or "/tmp", f"memdir-{os.getuid()}")


def address() -> str:
    """The socket of the resident for this interpreter, this memdir and the variables read at import."""
    key = "\0".join([sys.executable, PACKAGE, os.environ.get("PYTHONPATH", ""),
                     *(f"{name}={os.environ.get(name, '')}" for name in IMPORTED)])
    digest = f"{zlib.crc32(key.encode()):08x}{zlib.adler32(key.encode()):08x}"
    return os.path.join(folder(), f"{digest}.sock")


def private(path: str) -> bool:
    """Make the folder if need be; True only if it is a real folder of this user that nobody else may enter."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def stamp() -> str:
    """What the resident's code is: every file of memdir's package and its folder's neighbours (an install) by
    size and time. A resident whose stamp changed since it started refuses the command and exits."""
    parts = []
    for top, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(top, name))
                parts.append(f"{top}/{name}:{st.st_size}:{st.st_mtime_ns}")
    parts.append(str(os.stat(os.path.dirname(PACKAGE)).st_mtime_ns))  # site-packages: an install or upgrade
    return f"{zlib.crc32(chr(10).join(parts).encode()):08x}"


def forward(argv: list[str]) -> int | None:
    """Run the command in the resident process: its exit code, or None if it must run here (then a hook starts a
    resident for the next one, where there is none)."""
    if not served(argv) or not enabled():
        return None
    where = address()
    if not private(os.path.dirname(where)):
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(where)
    except OSError:
        conn.close()
        if command(argv)[0] == "hook":  # a hook starts one; a server only uses one (an SDK's or a test's server leaves nothing)
            start(where)
        return None
    passed: list[int] = []  # the signals the command got: passed on to the child once it runs
    child: list[int] = []
    for number in SIGNALS:
        _signal.signal(number, lambda number, _frame: _tell(child, number, passed))
    try:
        try:
            mask = os.umask(0)
            os.umask(mask)
            request = marshal.dumps({"argv": argv, "argv0": sys.argv[0] if sys.argv else "memdir",
                                     "env": dict(os.environ), "cwd": os.getcwd(), "umask": mask,
                                     "limits": {n: resource.getrlimit(getattr(resource, n)) for n in LIMITS
                                                if hasattr(resource, n)},
                                     "encodings": [(s.encoding, s.errors) for s in (sys.stdin, sys.stdout, sys.stderr)]})
            fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # three C ints
            conn.sendmsg([len(request).to_bytes(SIZE, "big")], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
            conn.sendall(request)
            pid = int.from_bytes(exactly(conn, SIZE), "big", signed=True)
        except (OSError, ValueError, AttributeError):
            pid = REFUSED  # the resident has not run it (a child runs only a whole request): run it here
        if pid == REFUSED:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)
            for number in SIGNALS[1:]:
                _signal.signal(number, _signal.SIG_DFL)
            if passed:
                os.kill(os.getpid(), passed[-1])
            return None
        child.append(pid)
        if passed:
            _tell(child, passed[-1], passed)
        try:
            code = conn.recv(1)
        except OSError:
            code = b""
    finally:
        conn.close()
    if not code and passed:  # the child died of the signal passed on: so does the command, as its own process would
        _signal.signal(passed[-1], _signal.SIG_DFL)
        os.kill(os.getpid(), passed[-1])
    return code[0] if code else 1  # no code: the child was killed


def _tell(child: list[int], number: int, passed: list[int]) -> None:
    passed.append(number)
    if child:
        try:
            os.kill(child[0], number)
        except OSError:
            pass


def exactly(conn: _socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            raise ValueError("the resident closed the connection")
        data += more
    return data


def start(where: str) -> None:
    """Start a resident in the background, in a session of its own; two started at once: one stays, one exits."""
    null = os.devnull
    try:
        os.posix_spawn(sys.executable, [sys.executable, "-m", "memdir.faces.cli.resident", where], os.environ,
                       file_actions=[(os.POSIX_SPAWN_OPEN, fd, null, os.O_RDWR, 0) for fd in (0, 1, 2)], setsid=True)
    except (OSError, AttributeError, TypeError):
        pass  # no resident: every command runs in its own process, as it would without one
