"""The layers: each folder imports only the folders below it, and no modules import each other in a loop.

Every import counts: at the top of a file, inside a function, under `TYPE_CHECKING`.
"""

import ast
from pathlib import Path

import memdir

SRC = Path(memdir.__file__).parent
TESTS = Path(__file__).resolve().parent
RANKS = {  # a folder may import the folders of lower rank, and modules of its own folder
    "": 9,  # the package's face: __init__, __main__, testing
    "faces": 8, "web": 7, "adapters": 6, "recall": 5, "remember": 4, "core": 3, "search": 2, "stores": 1,
}
GROUND = {"errors", "model", "paths", "dates", "tokens", "pages", "util", "version"}  # rank 0: what every layer stands on


def module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module(p) for p in SRC.rglob("*.py")}  # "" is the package's __init__


def imports(path: Path) -> set[str]:
    """Modules of the memdir package that `path` imports anywhere in it (dotted, relative to memdir)."""
    package = path.relative_to(SRC).parent.parts
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - node.level + 1])
            mod = ".".join(base + ([node.module] if node.module else []))
            subs = {f"{mod}.{a.name}".lstrip(".") for a in node.names}
            found.update(subs)
            if not subs <= MODULES:  # names from a module (not only its submodules): the module itself
                found.add(mod)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "memdir":
            found.add(node.module.removeprefix("memdir").lstrip("."))
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("memdir.") for a in node.names if a.name.startswith("memdir."))
    return {m for m in found if m in MODULES}


def rank(mod: str) -> int:
    """A module's rank: its folder's, 0 for the ground modules, the top for the package's face."""
    if mod in GROUND:
        return 0
    return RANKS.get(mod.split(".")[0], RANKS[""])


GRAPH = {module(p): imports(p) for p in SRC.rglob("*.py")}


def test_every_module_has_a_place() -> None:
    stray = {m for m in GRAPH if m not in GROUND and m.split(".")[0] not in RANKS and m not in {"", "__main__", "testing"}}
    assert stray == set(), "give each a folder, or add it to GROUND if every layer stands on it"


def test_each_folder_imports_only_the_folders_below_it() -> None:
    upward = sorted((m, i) for m, found in GRAPH.items() for i in found
                    if rank(i) > rank(m) or (rank(i) == rank(m) not in (0, RANKS[""]) and i.split(".")[0] != m.split(".")[0]))
    assert upward == []


def test_no_module_imports_itself_back() -> None:
    """No cycles, however long: a depth-first walk of the import graph finds no back edge."""
    cycles = []
    state: dict[str, int] = {}

    def visit(mod: str, trail: list[str]) -> None:
        state[mod] = 1
        for dep in sorted(GRAPH.get(mod, ())):
            if dep == mod or mod.startswith(dep + "."):
                continue  # a module's own package (its __init__) runs first by import, not by a loop
            if state.get(dep) == 1:
                cycles.append(trail[trail.index(dep):] + [dep] if dep in trail else [mod, dep])
            elif dep not in state:
                visit(dep, trail + [dep])
        state[mod] = 2

    for mod in sorted(GRAPH):
        if mod not in state:
            visit(mod, [mod])
    assert cycles == []


def test_no_module_is_over_800_lines() -> None:
    long = {module(p): n for p in SRC.rglob("*.py") if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}


def test_the_design_stays_a_read_of_at_most_400_lines() -> None:
    """DESIGN.md is the architecture one reads whole; reference detail goes to docs/internals.md."""
    design = SRC.parent.parent / "DESIGN.md"
    assert len(design.read_text().splitlines()) <= 400
    assert "docs/internals.md" in design.read_text()  # where what was moved out is


LAZY = {  # what brings in a heavy optional dependency loads on first use
    ("faces.cli.serving", "faces.mcp"), ("faces.cli.serving", "faces.http"),  # the MCP SDK, starlette: `serve` only
    ("faces.cli.serving", "faces.asgi"),  # starlette, prometheus_client: `serve --http` only
    ("faces.cli.resident", "faces.mcp"),  # the MCP SDK, where it is installed: the resident process loads it once
    ("faces.http", "faces.mcp"),  # the MCP SDK: only an app that serves /mcp (not the page or the API alone)
    ("stores.locations", "stores.postgres"), ("stores.locations", "stores.s3"),  # psycopg, boto3: with their URLs
    ("remember.diary", "stores.postgres"), ("remember.diary", "stores.s3"),
}


def test_the_package_own_imports_sit_at_the_top() -> None:
    """Where a cycle cannot hide; only a module that brings in a heavy optional dependency may wait for its use."""
    inside = set()
    for path in SRC.rglob("*.py"):
        package = path.relative_to(SRC).parent.parts
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom) and node.level:
                        base = ".".join(package[: len(package) - node.level + 1])
                        for alias in node.names:
                            target = ".".join(p for p in (base, node.module or "", alias.name) if p)
                            inside.add((module(path), target if target in MODULES else target.rsplit(".", 1)[0]))
    assert inside - LAZY == set()


def test_no_two_test_modules_share_a_name() -> None:
    """pytest imports test modules and conftest files by their base name (rootdir mode): two of one name stop a
    whole run, or (a second conftest.py) take the place of the module others import as `conftest`."""
    names: dict[str, list[str]] = {}
    for path in [*TESTS.rglob("test_*.py"), *TESTS.rglob("conftest.py")]:
        names.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}
