"""The vector index: chunks with line ranges, content-addressed embedding, rebuilds, privacy, prefixes."""

from pathlib import Path

import pytest

from memdir import model
from memdir.search import calibration
from memdir.search.vectors import Chunk, VectorIndex, chunks
from memdir.testing import FakeEmbedder

CALIBRATION = {t for pairs in (calibration.PAIRS, calibration.NEAR) for pair in pairs for t in pair}  # what a new index embeds once to measure its floor

TEXT = """---
name: garden
---
# Garden

Tomatoes need sun.
They also need water.

- plant basil in May
- prune the roses
  every spring

```
not a list:
- inside a fence
```
Last line.
"""


def mem(path: str, text: str, version: str = "v1") -> model.Memory:
    return model.memory(path, text, version, ())


def test_a_file_is_cut_into_paragraphs_and_list_items_with_their_lines() -> None:
    assert chunks(mem("garden.md", TEXT)) == [
        Chunk("garden.md", 4, 7, "# Garden\nTomatoes need sun.\nThey also need water."),
        Chunk("garden.md", 9, 9, "- plant basil in May"),
        Chunk("garden.md", 10, 11, "- prune the roses\n  every spring"),
        Chunk("garden.md", 13, 16, "```\nnot a list:\n- inside a fence\n```"),
        Chunk("garden.md", 17, 17, "Last line."),
    ]
    assert TEXT.splitlines()[9 - 1] == "- plant basil in May"


def index(tmp_path: Path, emb: FakeEmbedder, **kw: object) -> VectorIndex:
    return VectorIndex(emb, tmp_path / "vectors.sqlite3", **kw)  # type: ignore[arg-type]


FILES = {
    "notes/a.md": "The red apple tree in the orchard.\n\nWe picked pears too.\n",
    "notes/b.md": "Bikes need oil on the chain.\n",
    "people/alice/health.md": "Alice is allergic to apple pollen.\n",
}


def test_search_ranks_files_by_their_best_chunk_and_gives_its_lines(tmp_path: Path) -> None:
    vi = index(tmp_path, FakeEmbedder())
    vi.update([(p, mem(p, t)) for p, t in FILES.items()], seq=3)
    top = vi.search("picked pears", 2, [""])
    assert [(p, a, b) for p, _, a, b in top][0] == ("notes/a.md", 3, 3)
    assert len(top) == 2 and top[0][1] > top[1][1]
    assert vi.seq == 3 and vi.model == "fake-64" and vi.dim == 64


def test_a_prefix_is_part_of_the_query_not_a_filter_afterwards(tmp_path: Path) -> None:
    vi = index(tmp_path, FakeEmbedder())
    vi.update([(p, mem(p, t)) for p, t in FILES.items()])
    # The best match overall is in people/; limited to notes/, k=1 still returns a notes/ file.
    assert vi.search("Alice allergic apple pollen", 1, [""])[0][0] == "people/alice/health.md"
    assert [h[0] for h in vi.search("Alice allergic apple pollen", 1, ["notes/"])] == ["notes/a.md"]
    assert vi.search("apple", 5, ["other/"]) == []
    assert set(vi.scores(FakeEmbedder().embed(["apple"])[0], ["notes/", "people/"])) == set(FILES)


def test_unchanged_text_is_never_embedded_twice(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    vi = index(tmp_path, emb)
    vi.update([(p, mem(p, t)) for p, t in FILES.items()])
    assert len([t for t in emb.texts if t not in CALIBRATION]) == 4 and vi.counters.embedded == 4
    assert vi.floor == calibration.floor(FakeEmbedder().embed)  # measured with the first vectors, and kept
    vi.close()
    # A rebuild from scratch (new process, same store): every vector is found by its content hash.
    again = FakeEmbedder()
    vi = index(tmp_path, again)
    vi.update([(p, mem(p, t, "v2")) for p, t in FILES.items()])
    assert again.texts == [] and vi.counters.reused == 4
    # An edit re-embeds only the paragraph that changed; a rename re-embeds nothing.
    vi.update([("notes/a.md", mem("notes/a.md", FILES["notes/a.md"].replace("pears", "plums"), "v3"))])
    vi.update([("notes/b.md", None), ("notes/c.md", mem("notes/c.md", FILES["notes/b.md"]))])
    assert again.texts == ["We picked plums too."]
    assert [h[0] for h in vi.search("oil chain", 1, [""])] == ["notes/c.md"]
    assert vi.prune() == 1  # the vector of "We picked pears too." is no longer used


def test_another_model_or_dimension_rebuilds_instead_of_failing(tmp_path: Path) -> None:
    vi = index(tmp_path, FakeEmbedder(64))
    vi.update([(p, mem(p, t)) for p, t in FILES.items()], seq=3)
    vi.close()
    other = FakeEmbedder(16, model="other-16")
    vi = index(tmp_path, other)
    assert vi.counters.rebuilds == 1 and len(vi) == 0 and vi.seq == 0
    vi.update([(p, mem(p, t)) for p, t in FILES.items()], seq=3)
    assert len([t for t in other.texts if t not in CALIBRATION]) == 4 and vi.dim == 16
    assert vi.search("Bikes need oil on the chain.", 1, [""])[0][0] == "notes/b.md"


def test_an_endpoint_that_changes_dimension_under_the_same_model_name_rebuilds(tmp_path: Path) -> None:
    vi = index(tmp_path, FakeEmbedder(64, model="served"))
    vi.update([(p, mem(p, t)) for p, t in FILES.items()], seq=3)
    vi.embedder = FakeEmbedder(32, model="served")
    vi.update([("notes/d.md", mem("notes/d.md", "A new note about kites.\n"))], seq=4)
    assert vi.counters.rebuilds == 1 and vi.dim == 32
    assert vi.seq == 0  # the next sync re-reads every file
    assert [h[0] for h in vi.search("kites", 5, [""])] == ["notes/d.md"]


def test_private_prefixes_are_never_embedded(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    vi = index(tmp_path, emb, private=("people/",))
    vi.update([(p, mem(p, t)) for p, t in FILES.items()])
    assert not any("Alice" in t for t in emb.texts)
    assert "people/alice/health.md" not in vi.versions()


@pytest.mark.parametrize("where", ["memory", "file"])
def test_the_index_works_in_memory_or_in_a_file(tmp_path: Path, where: str) -> None:
    vi = VectorIndex(FakeEmbedder(), None if where == "memory" else tmp_path / "v" / "x.sqlite3")
    vi.update([("a.md", mem("a.md", "kites and wind\n"))])
    assert vi.search("wind", 1, [""])[0][0] == "a.md"
    assert vi.text("a.md", 1) == "kites and wind"
