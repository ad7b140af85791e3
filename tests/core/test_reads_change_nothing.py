"""A read changes nothing: whatever memdir did not write, it keeps. And a MEMORY.md someone else keeps survives.

Opening a folder and running any command that does not write leaves every byte outside `.memdir/` as it
was, on folders memdir never opened (generated, and a Claude Code memory folder written from its docs).
A write rewrites only memdir's marked region of a hand-kept MEMORY.md.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memdir
from memdir.core import index
from memdir.faces.cli import main

TERN = Path(__file__).resolve().parents[1] / "data" / "real" / "claude-code" / "memory" / "tern"
READS = [["ls"], ["index"], ["read", "{file}"], ["search", "release"], ["grep", "the"], ["log"], ["stats"],
         ["doctor"], ["reconcile"], ["context", "release"], ["links", "{file}"], ["sessions"]]
HOOKS = [{"hook_event_name": "SessionStart", "session_id": "s", "cwd": "/tmp", "source": "startup"},
         {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/tmp", "prompt": "how do we release?"}]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside .memdir/ with its bytes and mode (and every folder, as None)."""
    out: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".memdir":
            continue
        out[str(rel)] = (path.read_bytes() if path.is_file() else b"<folder>", path.stat().st_mode)
    return out


def run_reads(root: Path, file: str) -> None:
    """Every read command, in process, and the two recall hooks."""
    runner = CliRunner()
    for argv in READS:
        result = runner.invoke(main, ["--root", str(root), *[a.replace("{file}", file) for a in argv]])
        assert result.exit_code in (0, 1), (argv, result.output, result.exception)
    for payload in HOOKS:
        result = runner.invoke(main, ["--root", str(root), "hook", "claude-code"], input=json.dumps(payload))
        assert result.exit_code == 0, (payload, result.output)


def test_reads_of_a_claude_code_memory_folder_change_no_byte(tmp_path: Path) -> None:
    root = tmp_path / "tern"
    shutil.copytree(TERN, root)
    before = snapshot(root)
    run_reads(root, "release_checklist.md")
    assert snapshot(root) == before
    with memdir.open(root) as md:  # and a server reading through the library: the same
        md.index(), md.list(), md.search("pydantic"), memdir.context(md, "pydantic"), md.sync()
    assert snapshot(root) == before


def test_a_read_in_a_fresh_process_changes_no_byte(tmp_path: Path) -> None:
    root = tmp_path / "tern"
    shutil.copytree(TERN, root)
    before = snapshot(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    for argv in (["ls"], ["index"], ["search", "release"], ["doctor"]):
        subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), *argv], env=env, capture_output=True)
    for payload in HOOKS:
        subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "hook", "claude-code"],
                       input=json.dumps(payload), env=env, capture_output=True, text=True, check=True)
    assert snapshot(root) == before


_NAME = st.text(alphabet="abcdefghij-", min_size=1, max_size=8).filter(lambda s: not s.startswith("-"))
_BODY = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=200)
_FRONT = st.sampled_from(["", "---\nname: x\ndescription: a note\ntype: feedback\n---\n",
                          "---\ntitle: Note: with a colon\ntype: note\n---\n", "---\nmetadata:\n  type: user\n---\n",
                          "---\nbroken: [\n---\n", "---\nname: unclosed\n"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.tuples(st.sampled_from(["", "notes/", "a/b/"]), _NAME, _FRONT, _BODY), min_size=1, max_size=8),
       kept=st.one_of(st.none(), _BODY))
def test_reads_of_any_folder_change_no_byte(tmp_path_factory: object, files: list[tuple[str, str, str, str]],
                                            kept: str | None) -> None:
    root = tmp_path_factory.mktemp("hand")  # type: ignore[attr-defined]
    for folder, name, front, body in files:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / f"{name}.md").write_text(front + body)
    if kept is not None:
        (root / "MEMORY.md").write_text(kept)
    before = snapshot(root)
    run_reads(root, f"{files[0][0]}{files[0][1]}.md")
    assert snapshot(root) == before


# ---------------------------------------------------------------- a MEMORY.md someone else keeps


def test_a_write_keeps_every_byte_of_a_hand_kept_index_and_rewrites_only_its_region(tmp_path: Path) -> None:
    root = tmp_path / "tern"
    shutil.copytree(TERN, root)
    hand = (TERN / "MEMORY.md").read_text()
    with memdir.open(root) as md:
        md.write("project/new.md", "A new fact.\n", description="written through memdir")
    first = (root / "MEMORY.md").read_text()
    assert first.startswith(hand) and index.BEGIN in first and "written through memdir" in first
    # the person adds a note above the region; memdir's next write keeps it, in its place
    (root / "MEMORY.md").write_text(first.replace(index.BEGIN, "A note added by hand.\n" + index.BEGIN))
    with memdir.open(root) as md:
        md.write("project/new.md", "Changed.\n", description="changed through memdir")
        text = (root / "MEMORY.md").read_text()
        assert text.startswith(hand + "A note added by hand.\n" + index.BEGIN)
        assert "changed through memdir" in text and "written through memdir" not in text
        assert text == md.index()
        assert [(f.kind, f.path) for f in md.reconcile().findings] == [("invalid", "feedback_sentry_scrubber.md")]


def test_the_generated_part_makes_room_for_a_long_hand_kept_part(tmp_path: Path) -> None:
    root = tmp_path / "m"
    with memdir.open(root, writes_per_minute=0) as md:
        md.apply([memdir.Op.write(f"f{i // 20}/n{i}.md", f"fact {i}\n") for i in range(200)])
    hand = "".join(f"- a note kept by hand, line {i}\n" for i in range(150))
    (root / "MEMORY.md").write_text(hand)
    with memdir.open(root) as md:
        md.write("f0/n0.md", "changed\n")
        text = (root / "MEMORY.md").read_text()
    assert text.startswith(hand)
    assert len(text.splitlines()) <= 200  # the whole file stays in what Claude Code loads
    assert "## Folders" in index.generated(text)  # the generated part collapsed into folder links
    longer = "".join(f"- a longer note, line {i}\n" for i in range(400))
    (root / "MEMORY.md").write_text(longer)
    with memdir.open(root) as md:
        md.write("f0/n1.md", "changed\n")
        text = (root / "MEMORY.md").read_text()
    assert text.startswith(longer)  # the hand-kept part is never cut
    assert 0 < len(index.generated(text).splitlines()) <= index.MIN_LINES


def test_an_index_nothing_links_any_more_keeps_its_hand_kept_part(tmp_path: Path) -> None:
    root = tmp_path / "m"
    small = {"index_max_lines": 8, "index_max_bytes": 900}
    with memdir.open(root, writes_per_minute=0, **small) as md:
        md.apply([memdir.Op.write(f"big/n{i}.md", f"fact {i}\n") for i in range(12)])
    sub = root / "big" / "MEMORY.md"
    assert sub.exists()  # the collapsed folder's own index
    sub.write_text("Notes about big/ kept by hand.\n" + sub.read_text())
    with memdir.open(root, writes_per_minute=0, **small) as md:
        md.apply([memdir.Op.delete(f"big/n{i}.md") for i in range(12)])
    assert sub.read_text() == "Notes about big/ kept by hand.\n"


def test_memdirs_own_index_is_written_as_before(tmp_path: Path) -> None:
    """A memory nobody else writes MEMORY.md in keeps the plain index: no region markers."""
    with memdir.open(tmp_path / "m") as md:
        md.write("a.md", "x\n", description="one")
        md.write("b.md", "y\n", description="two")
    text = (tmp_path / "m" / "MEMORY.md").read_text()
    assert text.startswith("# Memory Index\n") and index.BEGIN not in text


def test_a_folder_memdir_never_wrote_is_healthy_and_its_index_waits_for_the_first_write(tmp_path: Path) -> None:
    """A folder kept by hand, read for the first time: its index is a notice, not a problem (a read may not
    write it); once memdir wrote its region, a stale one is a problem again."""
    root = tmp_path / "tern"
    shutil.copytree(TERN, root)
    (root / "feedback_sentry_scrubber.md").unlink()  # the corpus's one file broken by hand
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(root), "doctor", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["healthy"] and [n["kind"] for n in report["notices"]] == ["unindexed"]
    assert runner.invoke(main, ["--root", str(root), "reconcile"]).exit_code == 0
    with memdir.open(root) as md:
        md.write("user/pager.md", "Pages go to the on-call phone.\n", description="who gets paged")
        assert index.BEGIN in (root / "MEMORY.md").read_text()
        assert md.reconcile().findings == []
    text = (root / "MEMORY.md").read_text()
    (root / "MEMORY.md").write_text(text.replace("who gets paged", "someone's edit inside the region"))
    out = runner.invoke(main, ["--root", str(root), "doctor", "--json"])
    assert out.exit_code == 1 and [p["kind"] for p in json.loads(out.stdout)["problems"]] == ["index"]
