"""The real agent CLIs, installed once from npm at pinned versions into a cache folder shared by every run.

`python tests/clients/clients.py` installs them (what `make test` does first); a test asks `binary(name)`.
The cache is $MEMDIR_CLIENTS, else ~/.cache/memdir-clients: one folder per name and version, so a new pin
installs beside the old one and a run never downloads what a run before it installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PINNED = {  # the npm package and version of each client, and its command
    "claude": ("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
}


def cache() -> Path:
    return Path(os.environ.get("MEMDIR_CLIENTS") or Path.home() / ".cache" / "memdir-clients")


def binary(name: str) -> Path:
    package, version, command = PINNED[name]
    return cache() / f"{name}-{version}" / "node_modules" / ".bin" / command


def install(name: str) -> Path:
    """Install the pinned client unless it is there; its path. RuntimeError with npm's words if npm fails."""
    found = binary(name)
    if found.exists():
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: `apt-get install nodejs npm` (make test does it)")
    package, version, _ = PINNED[name]
    folder = found.parents[2]
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), f"{package}@{version}"],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0 or not found.exists():
        raise RuntimeError(f"npm install {package}@{version} failed: {done.stderr.strip()[-500:]}")
    return found


if __name__ == "__main__":
    for client in PINNED:
        print(f"{client}: {install(client)}", file=sys.stderr)
