"""The public API is pinned (the layers: test_layers.py)."""

from pathlib import Path

import memdir

SRC = Path(memdir.__file__).parent


def test_public_names_are_pinned() -> None:
    assert sorted(memdir.__all__) == [
        "ANY", "Conflict", "Context", "Database", "Entry", "Finding", "Forbidden", "Hit", "InvalidArgument", "InvalidMemory",
        "InvalidPath", "LimitExceeded", "Limits", "Links", "Memdir", "MemdirError", "Memory", "NotFound", "Op",
        "RateLimited", "Record", "Report", "Scope", "SearchHit", "StoreError", "ToolResult", "ToolSession",
        "anthropic_tools", "capture", "changes", "connect", "context", "drop_tenant", "forget", "git_sync",
        "handle_tool", "links", "open", "openai_tools", "prompt", "read_as_of", "redact", "remember_feedback",
        "supersede",
    ]
    for name in memdir.__all__:
        assert getattr(memdir, name) is not None


def test_nothing_public_outside_all() -> None:
    """`dir(memdir)` shows the API and the package's modules, not what __init__ happened to import."""
    import types

    stray = [n for n in dir(memdir) if not n.startswith("_") and n not in memdir.__all__
             and not isinstance(getattr(memdir, n), types.ModuleType)]
    assert stray == []


def test_every_error_is_a_memdir_error() -> None:
    for name in memdir.__all__:
        obj = getattr(memdir, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, memdir.MemdirError)


def test_typed_package_marker() -> None:
    assert (SRC / "py.typed").exists()
