"""The resident process itself (`faces/resident.py` says why): the command line imported once, a child per command.

`python -m memdir.faces.cli.resident SOCKET` holds a lock beside the socket (a second one started at once exits),
imports the command line, the hooks and the MCP server, then binds the socket and, for each connection of a
process of this user, forks: the child takes the command's stdin, stdout and stderr, its folder, environment and
umask, runs `memdir ARGS...` and sends back its exit code, while the resident waits for the next. The resident is
single-threaded when it forks, and has opened no memory: each child opens its own, as a command would.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import io
import logging
import marshal
import os
import resource
import signal
import socket
import struct
import sys
import time
import traceback
from typing import Any, NoReturn

from .. import resident
from . import base, hooks, serving

MAX_REQUEST = 4 << 20  # bytes: arguments and environment
WARM = ("yaml",)  # what memdir imports on first use that a child would otherwise import each time (a write's YAML)


class Resident:
    def __init__(self, where: str) -> None:
        self.where = where
        self.lock = open(where.removesuffix(".sock") + ".lock", "a")  # noqa: SIM115 - held for the process's life
        fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: another one runs
        for group in (hooks, serving):
            group.register(base.main)
        try:
            from .. import mcp  # noqa: F401 - the MCP SDK, when installed: what `serve` spends its start on
        except ImportError:
            pass
        for name in WARM:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        self.stamp = resident.stamp()
        staged = f"{where}.{os.getpid()}"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(staged)
        self.listener.listen(64)
        os.replace(staged, where)  # a command connects to a resident that is ready, or to none
        with open(where.removesuffix(".sock") + ".pid", "w") as f:
            f.write(str(os.getpid()))

    def run(self, idle: float) -> None:
        """Serve until `idle` seconds pass without a command, a changed memdir or SIGTERM."""
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        self.listener.settimeout(idle)
        try:
            while True:
                try:
                    conn, _ = self.listener.accept()
                except TimeoutError:
                    return
                with conn:
                    if not self.take(conn):
                        return
        finally:
            self.close()

    def close(self) -> None:
        stem = self.where.removesuffix(".sock")
        for path in (self.where, stem + ".pid", stem + ".lock"):  # the socket first: while the lock is held,
            with contextlib.suppress(OSError):  # no other resident can have bound it
                os.unlink(path)
        self.listener.close()

    def take(self, conn: socket.socket) -> bool:
        """Fork a child for one command; False if this resident must stop (its files changed)."""
        conn.settimeout(10)
        fds: list[int] = []
        try:
            if hasattr(socket, "SO_PEERCRED"):
                uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
                if uid != os.getuid():
                    return True
            head, fds, _, _ = socket.recv_fds(conn, resident.SIZE, 3)
            if len(head) != resident.SIZE or len(fds) != 3:
                return True
            size = int.from_bytes(head, "big")
            if size > MAX_REQUEST:
                return True
            request = marshal.loads(resident.exactly(conn, size))
            if resident.stamp() != self.stamp:
                conn.sendall(resident.REFUSED.to_bytes(resident.SIZE, "big"))
                return False
            if os.fork() == 0:
                self.child(conn, fds, request)
            return True
        except (OSError, ValueError, EOFError, TypeError):
            return True
        finally:
            for fd in fds:
                os.close(fd)  # the command's streams stay open in the child only: its reader sees their end

    def child(self, conn: socket.socket, fds: list[int], request: dict[str, Any]) -> NoReturn:
        code = 1
        try:
            for number in (signal.SIGCHLD, signal.SIGTERM):
                signal.signal(number, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self.listener.close()
            self.lock.close()
            for i, fd in enumerate(fds):
                os.dup2(fd, i)
            conn.settimeout(None)
            conn.sendall(os.getpid().to_bytes(resident.SIZE, "big", signed=True))  # from here the command is this child's: it never runs twice
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            os.umask(request["umask"])
            for name, limit in request["limits"].items():
                with contextlib.suppress(ValueError, OSError):  # a hard limit above the resident's: its own holds
                    resource.setrlimit(getattr(resource, name), limit)
            time.tzset()
            sys.stdin, sys.stdout, sys.stderr = (_stream(i, *request["encodings"][i]) for i in range(3))
            sys.argv = [request["argv0"], *request["argv"]]
            code = _main(request["argv"])
        except BaseException:  # noqa: BLE001 - the command's own process would have printed it and exited 1
            with contextlib.suppress(BaseException):
                traceback.print_exc()
        finally:
            for done in (logging.shutdown, sys.stdout.flush, sys.stderr.flush,
                         lambda: conn.sendall(bytes([code & 0xFF]))):
                with contextlib.suppress(BaseException):
                    done()
            os._exit(code & 0xFF)


def _main(argv: list[str]) -> int:
    """`memdir ARGS...` as its own process runs it: the exit code, a message printed as sys.exit prints it."""
    try:
        base.main.main(args=argv, prog_name="memdir")
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    return 0


def _stream(fd: int, encoding: str, errors: str) -> io.TextIOWrapper:
    """A text stream over the command's fd, as its own interpreter set it up (line-buffered on a terminal)."""
    binary = open(fd, "rb" if fd == 0 else "wb", closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(binary, encoding=encoding, errors=errors, line_buffering=fd != 0 and os.isatty(fd),
                            write_through=fd == 2)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m memdir.faces.cli.resident SOCKET (memdir starts it itself)", file=sys.stderr)
        return 2
    os.chdir("/")
    try:
        server = Resident(argv[0])
    except OSError:
        return 0  # another resident holds the lock, or the folder is gone: nothing to do
    server.run(resident.idle())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
