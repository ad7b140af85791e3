"""The `memdir` command line: a thin layer over `Memdir`, one module per group of commands.

Each command calls one library method with the same argument names and turns
a `MemdirError` into one line on stderr and exit code 1 (2 is a usage error).
Each group module hands its commands to the main group with `register(main)`.
"""

from . import files, remember, repair, serving
from .base import main

for group in (files, repair, serving, remember):
    group.register(main)

__all__ = ["main"]
