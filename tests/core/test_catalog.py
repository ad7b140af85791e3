import random

import pytest

from memdir import model
from memdir.core.catalog import Catalog


def _entries(seed: int, n: int) -> list[model.Entry]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        path = f"{rng.choice(['', 'a/', 'a/b/', 'c/'])}{rng.choice(['x/', 'y/', ''])}n{rng.randrange(n // 4)}.md"
        out.append(model.Entry(path, f"note {i}", f"about [{i}]", rng.choice(["user", "project", None]), (), None,
                               f"2026-01-{rng.randrange(1, 29):02d}", 10, 1, f"v{i}"))
    return out


def _state(cat: Catalog) -> dict[str, tuple[object, ...]]:
    return {name: tuple(getattr(node, slot) for slot in node.__slots__) for name, node in cat.folders.items()}


@pytest.mark.parametrize("seed", range(4))
def test_loading_at_once_gives_the_totals_of_one_change_at_a_time(seed: int) -> None:
    entries = _entries(seed, 800)  # repeated paths too: the last entry wins
    one_by_one, at_once = Catalog(), Catalog()
    for entry in entries:
        one_by_one.put(entry)
    at_once.load(entries)
    assert at_once.entries == one_by_one.entries and at_once.labels == one_by_one.labels
    assert _state(at_once) == _state(one_by_one)
    for entry in entries[::3]:  # and a loaded catalog keeps its totals under later changes
        one_by_one.remove(entry.path)
        at_once.remove(entry.path)
    assert _state(at_once) == _state(one_by_one)


def test_subfolders_are_ranked_largest_first_as_counts_change() -> None:
    cat = Catalog()
    for folder, n in (("a/", 3), ("b/", 5), ("c/", 1)):
        for i in range(n):
            cat.put(model.Entry(f"{folder}{i}.md", "n", "d", None, (), None, None, 1, 1, "v"))
    assert cat.folders[""].ranked == [(-5, "b/"), (-3, "a/"), (-1, "c/")]
    for i in range(3):
        cat.remove(f"b/{i}.md")
    cat.remove("c/0.md")
    assert cat.folders[""].ranked == [(-3, "a/"), (-2, "b/")]
