"""The public API is pinned, and the layers import only downwards."""

import ast
from pathlib import Path

import memdir

SRC = Path(memdir.__file__).parent


def test_public_names_are_pinned() -> None:
    assert sorted(memdir.__all__) == [
        "ANY", "Conflict", "Context", "Entry", "Finding", "Forbidden", "Hit", "InvalidArgument", "InvalidMemory",
        "InvalidPath", "LimitExceeded", "Limits", "Links", "Memdir", "MemdirError", "Memory", "NotFound", "Op",
        "RateLimited",
        "Record", "Report", "Scope", "SearchHit", "StoreError", "open", "prompt",
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


def imports(path: Path) -> set[str]:
    """Modules of the memdir package that `path` imports (as dotted names relative to memdir)."""
    tree = ast.parse(path.read_text())
    package = path.relative_to(SRC).parent.parts
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - node.level + 1])
            mod = ".".join(base + ([node.module] if node.module else []))
            found.add(mod)
            if not node.module:
                found.update(".".join(base + [a.name]) for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("memdir.") for a in node.names if a.name.startswith("memdir"))
    return found


def test_stores_know_nothing_of_the_library_above_them() -> None:
    for path in (SRC / "stores").glob("*.py"):
        above = {m for m in imports(path) if m.split(".")[0] in {"memdir", "cli", "index", "importer", "demo", "catalog"}}
        assert not above, (path.name, above)


def test_library_does_not_import_interfaces() -> None:
    library = ["memdir.py", "model.py", "paths.py", "limits.py", "index.py", "catalog.py", "guard.py",
               "capture.py", "diary.py", "timeline.py", "consolidate.py", "summarize.py", "transcripts.py", "dates.py",
               "hooks.py", "context.py", "links.py", "tokens.py", "recall.py", "rollback.py", "pictures.py"]
    library += [str(p.relative_to(SRC)) for p in (SRC / "search").glob("*.py")]
    for name in library:
        assert not {m for m in imports(SRC / name) if m in {"cli", "demo", "importer"}}, name


def test_search_reaches_stores_only_through_their_interface() -> None:
    for path in (SRC / "search").glob("*.py"):
        assert not {m for m in imports(path) if m in {"memdir", "cli", "index", "catalog"}}, path.name
