"""The framework pages' examples (docs/frameworks/), run as a user would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

PAGES = Path(__file__).resolve().parents[2] / "docs" / "frameworks"


def run_docs_example(page: Path, tmp_path: Path, block: int = 0) -> list[str]:
    """The page's Python block (the first, or the `block`-th), run as a user would: its own process, no network
    (any attempt fails at a dead proxy)."""
    code = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)[block]
    assert len(code.strip().splitlines()) < 30
    (tmp_path / "example.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH", "LANGCHAIN", "OPENAI", "ANTHROPIC"))}
    env |= {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
