"""Issue 33, real data round two: nothing changed silently, nothing misread.

One test per item of the issue (its number in the test's first comment), on the round-two fixtures of
tests/data/real (a Claude Code memory folder kept in Korean on Windows and a Mac, `tern-ko`; an Obsidian
vault synced between a Mac, a Windows PC and Linux with a Roam export and templates, `pt/Caderno`; MCP
memory graphs edited by hand, `v3`, `windows`, `not-a-graph`), and the round trip over all of them.
"""

from __future__ import annotations

import os
import shutil
import threading
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir import model
from memdir.faces.cli import main
from memdir.remember.export import export_dir
from memdir.remember.importer import import_basic_memory, import_dir

REAL = Path(__file__).parent / "data" / "real"
KO = REAL / "claude-code" / "memory" / "tern-ko"
CADERNO = REAL / "obsidian" / "pt" / "Caderno"
MCP = REAL / "mcp-memory"
NFD, NFC = (lambda s: unicodedata.normalize("NFD", s)), (lambda s: unicodedata.normalize("NFC", s))


def notes_of(root: Path) -> dict[str, bytes]:
    """Every markdown note under `root` (hidden folders left out), by its path as bytes allow."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if not any(part.startswith(".") for part in p.relative_to(root).parts)}


# ---------------------------------------------------------------- changed or lost without a word


def test_windows_line_endings_stay_crlf_and_every_line_is_counted(tmp_path: Path) -> None:  # item 1
    source = KO / "project_windows_build.md"
    raw = source.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") > 20
    with memdir.open(tmp_path / "m") as md:
        result = import_dir(md, KO)
        assert md.read_text("project_windows_build.md")[1].encode() == raw
        assert (tmp_path / "m" / "project_windows_build.md").read_bytes() == raw
        built = md.read("project_windows_build.md")
        assert built.type == "project" and built.name == "Windows build of the agent console"  # its CRLF block is read
        assert result.lines_in == result.lines_out == sum(model.count_lines(b.decode()) for b in notes_of(KO).values())
        assert "line" not in " ".join(w for _, w in result.converted)  # nothing converted


def test_nfd_names_keep_their_bytes_and_a_normalisation_twin_is_renamed_with_a_word(tmp_path: Path) -> None:  # item 2
    tomas = NFD("Pessoas/Tomás Reyes.md")
    assert (CADERNO / tomas).is_file() and not (CADERNO / NFC(tomas)).exists()
    with memdir.open(tmp_path / "m") as md:
        result = import_dir(md, CADERNO)
        assert (tmp_path / "m" / tomas).read_bytes() == (CADERNO / tomas).read_bytes()  # the name's bytes too
        assert md.read(NFC(tomas)).path == tomas  # typed composed, it is still found
        twin = "Pessoas/Conceição (2).md"
        assert (NFD("Pessoas/Conceição.md"), NFD(twin),
                "Pessoas/Conceição.md is already there and differs only by Unicode normalisation (one spells an accent "
                "as a separate character, as macOS writes names; most file systems take them for one)") in result.renamed
        assert md.read("Pessoas/Conceição.md").text.encode() == (CADERNO / "Pessoas/Conceição.md").read_bytes()
        assert md.read(NFD(twin)).text.encode() == (CADERNO / NFD("Pessoas/Conceição.md")).read_bytes()
        assert not any("already in the memory" in why for _, why in result.skipped)  # the advice that destroyed one
        assert f"renamed '{NFD('Pessoas/Conceição.md')}' to '{NFD(twin)}'" in result.summary()


def test_case_clashing_folders_and_a_leading_space_are_renamed_and_said(tmp_path: Path) -> None:  # item 7
    with memdir.open(tmp_path / "m") as md:
        result = import_dir(md, CADERNO)
        assert result.skipped == []
        assert ("projetos/", "projetos (2)/", "Projetos/ is already there and differs only by case (most file "
                "systems take them for one)") in result.renamed
        assert (" Rascunho.md", "Rascunho.md", "its name starts or ends with a space, which memdir's paths may not") \
            in result.renamed
        assert md.read("projetos (2)/Decisão Postgres.md").name == "Decisão: Postgres em vez de SQLite"
        assert md.read("Rascunho.md").text.encode() == (CADERNO / " Rascunho.md").read_bytes()
        again = import_dir(md, CADERNO)  # the same names again: nothing new, nothing twice
        assert again.imported == [] and again.skipped == [] and len(again.unchanged) == len(result.imported)


def test_a_fifo_named_md_is_left_out_without_blocking(tmp_path: Path) -> None:  # issue 32, item 19
    source = tmp_path / "source"
    shutil.copytree(KO, source)
    os.mkfifo(source / "project_pipe.md")
    for run, name in ((import_dir, "claude-code"), (import_dir, "obsidian"), (import_basic_memory, "basic-memory")):
        done: list[object] = []
        with memdir.open(tmp_path / name) as md:
            worker = threading.Thread(target=lambda: done.append(run(md, source)), daemon=True)  # noqa: B023
            worker.start()
            worker.join(120)  # a hang guard, not a speed check: a blocked open never returns
            assert done, f"{name}: the import blocked on the FIFO"
            result = done[0]
            assert ("project_pipe.md", "not a regular file (a FIFO, socket or device named *.md); not read") \
                in result.left_out  # type: ignore[attr-defined]
            assert len(result.imported) == 14  # type: ignore[attr-defined]
    out = CliRunner().invoke(main, ["--root", str(tmp_path / "cli"), "import", "--from", "mcp-memory",
                                    str(source / "project_pipe.md")])
    assert out.exit_code == 2 and "reads a JSONL file" in out.output


# ---------------------------------------------------------------- misread


def test_a_byte_order_mark_does_not_hide_the_frontmatter(tmp_path: Path) -> None:  # item 8
    raw = (KO / "reference_oncall.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf---\n")
    with memdir.open(tmp_path / "m") as md:
        import_dir(md, KO)
        oncall = md.read("reference_oncall.md")
        assert (oncall.type, oncall.name) == ("reference", "On-call for the Korean channel")
        assert oncall.description.startswith("Who answers pages") and oncall.updated == "2026-02-19T01:30:00Z"
        assert oncall.text.encode() == raw  # the mark stays
        edited = md.edit("reference_oncall.md", "answers within 15 minutes", "answers within 10 minutes")
        assert edited.text.startswith("\ufeff---\n") and edited.meta["metadata"]["type"] == "reference"
        listed = md.write("Entrada/nota.md", "\ufeffsem frontmatter\n", description="nota")  # memdir adds a block
        assert listed.text.startswith("\ufeff---\n") and listed.description == "nota"


def test_names_differing_only_by_normalisation_read_their_own_text(tmp_path: Path) -> None:  # item 9
    vault = tmp_path / "vault"
    shutil.copytree(CADERNO, vault)
    composed, decomposed = "Pessoas/Conceição.md", NFD("Pessoas/Conceição.md")
    with memdir.open(vault) as md:  # the vault itself, as a memory
        assert md.read(composed).text.encode() == (vault / composed).read_bytes()
        assert md.read(decomposed).text.encode() == (vault / decomposed).read_bytes()
        assert md.read(composed).text != md.read(decomposed).text
        assert {composed, decomposed} <= {e.path for e in md.list()}
        md.write("Pessoas/Zoë.md", "x\n")
        with pytest.raises(memdir.InvalidPath, match="differs only by case or Unicode normalisation"):
            md.write(NFD("Pessoas/Zoë.md"), "y\n")  # a new name may not clash, in either spelling


# ---------------------------------------------------------------- the round trip


@pytest.mark.parametrize("source", [KO, CADERNO, REAL / "claude-code" / "memory" / "tern", REAL / "basic-memory" / "notes",
                                    REAL / "obsidian" / "en" / "Homebase", REAL / "obsidian" / "ja" / "はるとのノート"],
                         ids=["tern-ko", "caderno", "tern", "basic-memory", "obsidian-en", "obsidian-ja"])
def test_every_folder_fixture_round_trips_byte_for_byte_but_what_the_report_names(tmp_path: Path, source: Path) -> None:
    with memdir.open(tmp_path / "m") as md:
        result = import_dir(md, source)
        export_dir(md, tmp_path / "out")
    assert result.skipped == [] and result.lines_in == result.lines_out
    renamed = {a: b for a, b, _ in result.renamed if not a.endswith("/")}
    folders = [(a, b) for a, b, _ in result.renamed if a.endswith("/")]
    said = {p for p, _ in result.repaired} | {p for p, _, _ in result.redacted}
    back, want = notes_of(tmp_path / "out"), notes_of(source)
    for rel, data in want.items():
        dest = renamed.get(rel, rel)
        for a, b in folders:
            dest = b + dest[len(a):] if dest.startswith(a) else dest
        if rel.rsplit("/", 1)[-1] == "MEMORY.md":
            dest = dest[: -len("MEMORY.md")] + "MEMORY.md"
        assert dest in back, rel
        assert back[dest] == data or dest in said, dest  # byte for byte, or the report says what changed
    assert len(back) == len(want)
