"""`python -m memdir` and the `memdir` command: a hook or a stdio server goes to the resident process when one
runs (faces/resident.py), and everything else to the command line, loaded only then."""

import importlib
import sys

from .faces import resident


def main() -> None:
    code = resident.forward(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    importlib.import_module("memdir.faces.cli").main()


if __name__ == "__main__":
    main()
