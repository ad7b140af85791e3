"""Two machines doing anything in any order, syncing now and then: in the end both hold the same folder, and
nothing either wrote is lost unless that machine itself removed it.

Every write brings a token of its own; a token a machine's own write, edit, rename,
delete or hand edit took out of that machine's folder is "removed" (a sync never
counts). After a last round of syncs, every token not removed is somewhere in the
folder, a conflict's other version included, and both folders are byte for byte
equal. Drawn by hypothesis: 6 runs in `make test`, 60 under MEMDIR_SOAK.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from gitmachines import bare, files, isolate
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import memdir
from memdir.remember import gitsync, merging

SOAK = os.environ.get("MEMDIR_SOAK") == "1"
NAMES = ["a.md", "notes/b.md", "项目/笔记.md", "메모/오늘.md", "notes/c d.md"]
TOKEN = re.compile(r"tok\d+x")

side = st.sampled_from(["a", "b"])
name = st.sampled_from(NAMES)
step = st.one_of(
    st.tuples(st.just("write"), side, name),
    st.tuples(st.just("append"), side, name),
    st.tuples(st.just("edit"), side, name),
    st.tuples(st.just("rename"), side, name, name),
    st.tuples(st.just("delete"), side, name),
    st.tuples(st.just("hand"), side, name),
    st.tuples(st.just("sync"), side),
    st.tuples(st.just("sync"), side),
)


def tokens(root: Path) -> set[str]:
    """The tokens in the memories (an index's lines quote descriptions: they are not where a token is kept)."""
    return {t for path, data in files(root).items() if not path.endswith("MEMORY.md")
            for t in TOKEN.findall(data.decode("utf-8", "replace"))}


@pytest.fixture(autouse=True)
def _git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(tmp_path / "home", monkeypatch.setenv)


@settings(max_examples=60 if SOAK else 6, deadline=None, derandomize=not SOAK,
          phases=list(Phase) if SOAK else [Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(step, min_size=4, max_size=24))
def test_any_interleaving_ends_equal_and_loses_nothing(steps: list[tuple[str, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        remote = bare(Path(tmp) / "remote.git")
        mds = {s: memdir.open(Path(tmp) / s, actor=f"cli:{s}") for s in ("a", "b")}
        roots = {s: Path(tmp) / s for s in mds}
        try:
            mds["a"].write("seed.md", "tok0x seed\n", description="seed")
            gitsync.init(mds["a"], str(remote))
            gitsync.init(mds["b"], str(remote))
            written, removed = {"tok0x"}, set()
            for n, (kind, who, *args) in enumerate(steps, 1):
                md, root, token = mds[who], roots[who], f"tok{n}x"
                before = tokens(root)
                if kind == "sync":
                    gitsync.git_sync(md)
                    continue
                path = args[0]
                exists = (root / path).is_file()
                if kind == "write":
                    md.write(path, f"{token} written on {who}\n", description=f"file {path}")
                elif kind == "append":
                    md.append(path, f"{token} appended on {who}")
                elif kind == "edit" and exists:
                    body = md.read(path).body
                    old = TOKEN.search(body)
                    if old is None:
                        continue
                    md.edit(path, old.group(), token)
                elif kind == "rename" and exists and not (root / args[1]).exists() and path != args[1]:
                    md.rename(path, args[1])
                elif kind == "delete" and exists:
                    md.delete(path)
                elif kind == "hand":
                    (root / path).parent.mkdir(parents=True, exist_ok=True)
                    (root / path).write_bytes(f"hand edit {token}\r\n".encode())
                else:
                    continue
                if TOKEN.search(token) and kind in ("write", "append", "edit", "hand"):
                    written.add(token)
                removed |= before - tokens(root)
            for who in ("a", "b", "a"):
                gitsync.git_sync(mds[who])
            final = tokens(roots["a"])
            assert written - removed <= final, f"lost: {sorted(written - removed - final)}"
            assert files(roots["a"]) == files(roots["b"])
            for md in mds.values():
                assert md.reconcile().clean, md.reconcile().findings
                for pair in merging.conflicts(md):
                    assert md.read(pair.other).meta["conflict"] == pair.path
        finally:
            for md in mds.values():
                md.close()
