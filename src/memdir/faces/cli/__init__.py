"""The `memdir` command line: a thin layer over `Memdir`, one module per group of commands.

Each command calls one library method with the same argument names and turns
a `MemdirError` into one line on stderr and exit code 1 (2 is a usage error).
Each group module hands its commands to the main group with `register(main)`,
when one of them is first asked for (`COMMANDS`): a command loads its own
group and not the others.
"""

from .base import main

COMMANDS = {  # the group module of each command; tests/faces/test_cli.py checks it against what each registers
    "files": ("init", "write", "read", "rm", "mv", "ls", "index", "grep", "search", "reindex", "context", "links", "log"),
    "repair": ("undo", "reconcile", "doctor", "import", "export", "copy", "db"),
    "serving": ("demo", "serve", "ui", "watch"),
    "remember": ("capture", "sessions", "rollup", "consolidate", "check", "stats", "feedback", "supersede"),
    "hooks": ("hook",),
    "sync": ("sync", "conflicts", "project"),
    "forgetting": ("forget", "compact"),
}
main.lazy.update({name: f"{__name__}.{group}" for group, names in COMMANDS.items() for name in names})

__all__ = ["COMMANDS", "main"]
