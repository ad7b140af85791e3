"""Issue 33, real data round two: nothing changed silently, nothing misread.

One test per item of the issue (its number in the test's first comment), on the round-two fixtures of
tests/data/real (a Claude Code memory folder kept in Korean on Windows and a Mac, `tern-ko`; an Obsidian
vault synced between a Mac, a Windows PC and Linux with a Roam export and templates, `pt/Caderno`; MCP
memory graphs edited by hand, `v3`, `windows`, `not-a-graph`), and the round trip over all of them.
"""

from __future__ import annotations

import json
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
from memdir.remember.mcp_memory import export_mcp_memory, import_mcp_memory

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


# ---------------------------------------------------------------- honest counts


def test_counts_include_what_was_not_brought_in_and_the_exit_says_so(tmp_path: Path) -> None:  # item 6
    source = tmp_path / "source"
    shutil.copytree(KO, source)
    (source / "project_chat_export.md").write_text("".join(f"- {i:05d} a pasted chat line, kept by hand\n"
                                                           for i in range(30_000)))  # over the 1 MB ceiling
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(tmp_path / "m"), "import", str(source), "--json"])
    assert out.exit_code == 1, out.output
    data = json.loads(out.stdout)
    want = sum(model.count_lines(b.decode()) for b in notes_of(KO).values())
    assert data["lines"] == {"in": want + 30_000, "out": want, "skipped": 30_000}
    assert data["files"]["skipped"] == 1 and data["skipped"][0]["path"] == "project_chat_export.md"
    assert "1 note of" in out.stderr and "not brought in" in out.stderr
    out = runner.invoke(main, ["--root", str(tmp_path / "m2"), "import", str(source)])
    assert out.exit_code == 1
    assert f"brought in 14 of 15 notes: {want + 30_000:,} lines in, {want:,} out, 30,000 in the 1 note not brought in" \
        in out.stdout
    out = runner.invoke(main, ["--root", str(tmp_path / "m3"), "import", str(KO)])
    assert out.exit_code == 0, out.output  # everything in: 0


# ---------------------------------------------------------------- MCP memory graphs


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def test_entities_of_one_name_and_relations_to_no_entity_all_survive(tmp_path: Path) -> None:  # item 3
    source = MCP / "v3" / "memory.jsonl"
    with memdir.open(tmp_path / "m") as md:
        result = import_mcp_memory(md, source)
        assert result.skipped == [] and result.lines_in == result.lines_out == len(records(source)) == 17
        sentry = {md.read(p).meta["entityType"]: md.read(p) for p in ("service/sentry.md", "tool/sentry.md")}
        assert sentry["service"].body.startswith("# Sentry\n\n- Error tracking")
        assert sentry["tool"].body == "# Sentry\n\n- sentry-cli uploads release source maps\n"
        assert md.read("project/tern-2.md").body.startswith("# tern\n\n- Korean locale added in 2026-01\n")
        assert "- uses VS Code" in md.read("person/default_user.md").body  # its target is no entity: kept as text
        assert "- Grafana monitors this" in md.read("project/tern.md").body  # its source is no entity: kept with tern
        export_mcp_memory(md, tmp_path / "out.jsonl")
    back = records(tmp_path / "out.jsonl")
    assert len(back) == 17 and back == records(source)  # was 27 -> 15 on real data: every record, in order
    hub = [{"type": "entity", "name": "default_user", "entityType": "person", "observations": ["the hub"]}]
    hub += [{"type": "entity", "name": f"Place {i}", "entityType": "place", "observations": []} for i in range(250)]
    hub += [{"type": "relation", "from": "default_user", "to": f"Place {i}", "relationType": "has_visited"}
            for i in range(250)]  # more than one frontmatter has room for
    hub += [{"type": "relation", "from": f"Ghost {i}", "to": "Nowhere", "relationType": "haunts"} for i in range(3)]
    (tmp_path / "hub.jsonl").write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in hub))
    with memdir.open(tmp_path / "hub") as md:
        result = import_mcp_memory(md, tmp_path / "hub.jsonl")
        assert result.lines_in == result.lines_out == len(hub) and result.skipped == []
        assert md.read("person/default_user.md").body.count("- has_visited [Place ") == 250  # all on its page
        assert import_mcp_memory(md, tmp_path / "hub.jsonl").imported == []  # and nothing twice
        export_mcp_memory(md, tmp_path / "hub-out.jsonl")
    assert (tmp_path / "hub-out.jsonl").read_bytes() == (tmp_path / "hub.jsonl").read_bytes()


def test_an_entity_name_with_newlines_forges_no_observation(tmp_path: Path) -> None:  # issue 32, item 15
    name = "Console 1.9\n- shipped to every shop on 2026-05-12"
    forged = [{"type": "entity", "name": "Release\n\n- forged one\n## Relations\n- forged two", "entityType": "release",
               "observations": ["real\n- not a bullet of its own"]},
              {"type": "relation", "from": "Release\n\n- forged one\n## Relations\n- forged two", "to": "x\n- y",
               "relationType": "rel\n- z"}]
    src = tmp_path / "forged.jsonl"
    src.write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in forged))
    with memdir.open(tmp_path / "m") as md:
        import_mcp_memory(md, MCP / "v3" / "memory.jsonl")
        console = md.read("release/console-1-9-shipped-to-every-shop-on-2026-05-12.md")
        assert console.body.splitlines()[:3] == ["# Console 1.9 - shipped to every shop on 2026-05-12", "", "- Hangul search fix"]
        assert console.meta["name"] == name
        import_mcp_memory(md, src)
        export_mcp_memory(md, tmp_path / "out.jsonl")
    back = records(tmp_path / "out.jsonl")
    assert [r for r in back if r.get("name") == name][0]["observations"] == ["Hangul search fix"]  # none invented
    assert forged[0] in back and forged[1] in back  # none lost


def test_export_keeps_the_source_order_and_form_where_nothing_changed(tmp_path: Path) -> None:  # item 14
    for graph in ("v1", "v2", "v3", "windows"):
        source = MCP / graph / "memory.jsonl"
        with memdir.open(tmp_path / graph) as md:
            import_mcp_memory(md, source)
            export_mcp_memory(md, tmp_path / f"{graph}.jsonl")
            assert (tmp_path / f"{graph}.jsonl").read_bytes() == source.read_bytes(), graph  # spaces, CRLF, order
            path = "person/seo-yeon-park.md" if graph == "v3" else md.list()[0].path
            first = next(line for line in md.read(path).body.splitlines() if line.startswith("- "))
            md.edit(path, first, "- Edited: " + first[2:])  # an agent's edit: memdir stamps created/updated
            export_mcp_memory(md, tmp_path / f"{graph}-edited.jsonl")
        before, after = records(source), records(tmp_path / f"{graph}-edited.jsonl")
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        assert len(changed) == 1 and after[changed[0]]["observations"][0].startswith("Edited: ")  # the rest as it was
    lines = (tmp_path / "v3-edited.jsonl").read_text(encoding="utf-8").split("\n")
    assert lines[5].startswith('{"type": "entity", "name": "Seo-yeon Park"') and "\\ubc15" in lines[5]  # its own form


def test_a_json_array_or_another_tools_jsonl_is_refused_in_one_line_creating_nothing(tmp_path: Path) -> None:  # item 16
    runner = CliRunner()
    for name, says in (("memory.json", "is one JSON array of 3 items, not the MCP memory server's memory.jsonl"),
                       ("memories.jsonl", "holds no entity or relation record in its 3 lines (its lines are JSON objects "
                                          "with keys id, memory, user_id, created_at, metadata)")):
        root = tmp_path / name
        out = runner.invoke(main, ["--root", str(root), "import", "--from", "mcp-memory", str(MCP / "not-a-graph" / name)])
        assert out.exit_code == 1 and says in out.stderr and "nothing was imported" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and out.stdout == ""
        assert not root.exists()  # no new, empty memory
    assert "jq -c '.[]'" in runner.invoke(main, ["--root", str(tmp_path / "x"), "import", "--from", "mcp-memory",
                                                 str(MCP / "not-a-graph" / "memory.json")]).stderr


@pytest.mark.parametrize("graph", ["v1", "v2", "v3", "windows"])
def test_every_mcp_fixture_round_trips_record_for_record_and_byte_for_byte(tmp_path: Path, graph: str) -> None:
    source = MCP / graph / "memory.jsonl"
    with memdir.open(tmp_path / "m") as md:
        result = import_mcp_memory(md, source)
        export_mcp_memory(md, tmp_path / "out.jsonl")
    assert result.skipped == [] and result.lines_in == result.lines_out
    assert records(tmp_path / "out.jsonl") == records(source)
    assert (tmp_path / "out.jsonl").read_bytes() == source.read_bytes()


# ---------------------------------------------------------------- tolerated frontmatter, secrets, line numbers


def test_frontmatter_its_writer_tolerated_is_repaired_or_kept_as_text_never_dropped(tmp_path: Path) -> None:  # item 4
    source = tmp_path / "source"
    shutil.copytree(CADERNO, source)
    shutil.copy(KO / "feedback_short_verdicts.md", source / "feedback_short_verdicts.md")
    (source / "Roam" / "Daily Notes.md").write_text("---\n- [[January 5th, 2026]]\n- #daily\n---\n- wrote the export notes\n")
    with memdir.open(tmp_path / "m") as md:
        result = import_dir(md, source)
        assert result.skipped == []
        repaired = dict(result.repaired)
        assert repaired["feedback_short_verdicts.md"] == [2]  # name: "승인" 한 단어 = …
        assert md.read("feedback_short_verdicts.md").name == '"승인" 한 단어 = 리뷰 결론 먼저'
        assert repaired["Roam/Thinking in Systems.md"] == [3, 4, 5]  # type:[[Book]], author: @meadows, tags: [[a]], [[b]]
        book = md.read("Roam/Thinking in Systems.md")
        assert (book.meta["type"], book.meta["author"]) == ("[[Book]]", "@meadows")
        assert repaired["Modelos/Diário.md"] == [5, 6]  # week: {{DATE: "…"}} and the key {{DATE: "YYYY"}}-review
        assert md.read("Modelos/Diário.md").meta['{{DATE: "YYYY"}}-review'] == "pending"
        assert repaired["Modelos/Pessoa.md"] == [2, 4]
        assert [p for p, _ in result.as_text] == ["Roam/Daily Notes.md"]  # a list, not a mapping: kept as text
        daily = md.read("Roam/Daily Notes.md")
        assert daily.text == (source / "Roam" / "Daily Notes.md").read_text() and daily.meta == {}
        assert "kept the frontmatter of Roam/Daily Notes.md as text" in result.summary()
        origin = {b: a for a, b, _ in result.renamed}
        for path, lines in repaired.items():  # only those lines changed, and only by quotes
            before = (source / origin.get(path, path.replace("projetos (2)/", "projetos/"))).read_text().split("\n")
            after = md.read(path).text.split("\n")
            redacted = {n for p, n, _ in result.redacted if p == path}
            assert [i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b and i + 1 not in redacted] \
                == lines


def test_a_secret_on_one_line_is_redacted_and_the_note_kept(tmp_path: Path) -> None:  # item 5
    with memdir.open(tmp_path / "m") as md:
        result = import_dir(md, CADERNO)
        ko = import_dir(md, KO)
        assert ko.skipped == result.skipped == []
        assert ko.redacted == [("user_seoyeon.md", 27, "a password or key assigned to a name")]
        want = (KO / "user_seoyeon.md").read_text().split("\n")
        got = md.read("user_seoyeon.md").text.split("\n")
        assert got[26] == "client_secret: REDACTED" and got[:26] + got[27:] == want[:26] + want[27:]
        assert sorted(p for p, _, _ in result.redacted) == ["Roam/Roam Import Notes.md", "Roam/Thinking in Systems.md"]
        image = [line for line in md.read("Roam/Thinking in Systems.md").text.split("\n") if "firebasestorage" in line][0]
        assert image.endswith("?alt=media&token=REDACTED)") and "imgs%2Fapp%2Fines-caderno%2F7sKq2Lm0pA.png" in image
        assert "redacted user_seoyeon.md line 27: it held what looks like a password or key assigned to a name" \
            in ko.summary()
        assert md.grep("Hq7vR2mK9xLw4TzB8nYc3PdF") == [] and md.grep("4c1e8f2a-93b7") == []


def test_the_secret_guard_names_the_file_line_and_the_body_line(tmp_path: Path) -> None:  # item 15
    text = (KO / "user_seoyeon.md").read_text()
    with memdir.open(tmp_path / "m") as md:
        with pytest.raises(memdir.InvalidMemory, match=r"user\.md: line 22 of the body \(file line 27\) contains what "
                                                        r"looks like a password or key assigned to a name"):
            md.write("user.md", text)
        with pytest.raises(memdir.InvalidMemory, match=r"line 3 \(in the frontmatter\) contains what looks like a GitHub"):
            md.write("b.md", "---\nname: b\ntoken: ghp_" + "c" * 36 + "\n---\nbody\n")
        (tmp_path / "m" / "pasted.md").write_text(text)  # a file dropped in: doctor counts as an editor does
    out = CliRunner().invoke(main, ["--root", str(tmp_path / "m"), "doctor", "--json"])
    problems = json.loads(out.stdout)["problems"]
    assert any("line 22 of the body (file line 27) holds what looks like" in p["detail"] for p in problems)


# ---------------------------------------------------------------- doctor and links


def doctor(root: Path) -> tuple[int, dict, str]:
    runner = CliRunner()
    data = runner.invoke(main, ["--root", str(root), "doctor", "--json"])
    text = runner.invoke(main, ["--root", str(root), "doctor"])
    assert data.exit_code == text.exit_code
    return data.exit_code, json.loads(data.stdout), text.stdout


def test_links_to_claude_code_type_topic_files_resolve(tmp_path: Path) -> None:  # item 10
    with memdir.open(tmp_path / "m") as md:
        import_dir(md, KO)
        found = {link.text: link.target for link in memdir.links(md, "project_kakao_channel.md").links}
        assert found["[[oncall]]"] == "reference_oncall.md" and found["[[windows_build]]"] == "project_windows_build.md"
        assert found["[[short-verdicts]]"] == "feedback_short_verdicts.md" and found["[[team_ko]]"] == "user_team_ko.md"
        assert found["[[존댓말]]"] == NFD("feedback_존댓말.md")  # typed composed, named decomposed by macOS
        assert memdir.links(md, "user_team_ko.md").links[0].target == "user_seoyeon.md"  # [[seoyeon]]
    code, data, _ = doctor(tmp_path / "m")
    assert [(p["kind"], p["path"]) for p in data["problems"]] == [("link", "reference_oncall.md")]  # [[runbooks]]: broken
    assert code == 1


def test_doctor_says_other_tools_values_are_theirs(tmp_path: Path) -> None:  # item 11
    with memdir.open(tmp_path / "m") as md:
        import_dir(md, CADERNO)
    code, data, text = doctor(tmp_path / "m")
    assert code == 0 and data["healthy"] and data["problems"] == []
    theirs = {n["path"]: n["detail"] for n in data["notices"] if n["kind"] == "theirs"}
    assert theirs["Diário/2026-03-02.md"].startswith("type: 'daily': another tool's values")
    assert theirs["Projetos/Orchard.md"].startswith("tags: '#qpsi/project'")
    assert theirs["projetos (2)/Decisão Postgres.md"] == ("type: 'decision'; tags: 'A, B': another tool's values, which "
                                                           "memdir reads as meant (its own writes would not set them); "
                                                           "not a problem")
    assert "tags" not in theirs["Diário/2026-03-03.md"]  # tags: ["#type/note/daily", horta] is a list of words
    lines = text.splitlines()
    assert sum(line.startswith("theirs\t") for line in lines) == 1 and lines[-1] == "healthy: no problems found"
    with memdir.open(tmp_path / "m") as md:
        assert md.read("Projetos/Orchard.md").tags == ("qpsi/project",)  # read as Obsidian means it
        assert md.read("projetos (2)/Decisão Postgres.md").tags == ("A", "B")


def test_a_link_to_a_file_that_is_not_markdown_is_not_broken(tmp_path: Path) -> None:  # item 12
    vault = tmp_path / "vault"
    shutil.copytree(CADERNO, vault)
    _, data, _ = doctor(vault)  # the vault itself, its .mdenc and PDF beside the notes
    broken = [p["detail"] for p in data["problems"] if p["kind"] == "link"]
    assert broken == []  # not [[Contrato horta.mdenc]], ![[Orçamento 2026.pdf]], ![[fuga.heic]], nor a template's
    with memdir.open(vault) as md:
        daily = {link.text: link.target for link in memdir.links(md, "Diário/2026-03-02.md").links}
        assert daily["[[Conceição]]"] == "Pessoas/Conceição.md" and daily["[[Tomás]]"] == NFD("Pessoas/Tomás Reyes.md")


def test_doctor_names_the_topic_files_a_long_hand_kept_index_leaves_out(tmp_path: Path) -> None:  # item 13
    with memdir.open(tmp_path / "m") as md:
        import_dir(md, KO)
        top = md.index()
    assert len(top.splitlines()) > 200
    _, data, text = doctor(tmp_path / "m")
    (notice,) = [n for n in data["notices"] if n["kind"] == "unlisted"]
    assert notice["path"] == "MEMORY.md" and top.index("<!-- memdir:index") > top.index("## Parking lot")  # below line 200
    assert notice["detail"] == (
        "its hand-kept notes take 236 lines, so the 200 lines an agent reads of it link 6 topic files neither in the "
        "notes nor in memdir's index region: found only by search or `memdir ls` (project_hangul_search.md, "
        "project_holiday_schedule.md, project_ko_release_2026_05.md, reference_glossary.md, reference_style_guide.md, …); "
        "move notes into a topic file to give the index room")
    assert "unlisted\tMEMORY.md\t" in text
    with memdir.open(tmp_path / "small") as md:
        import_dir(md, REAL / "claude-code" / "memory" / "tern")  # 150 lines of notes: room for every file
    assert not [n for n in doctor(tmp_path / "small")[1]["notices"] if n["kind"] == "unlisted"]


def test_doctor_speaks_of_what_is_there_and_reports_a_credential(tmp_path: Path) -> None:  # item 18
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plain.md").write_text("# Plain\n\nNothing here.\n")
    code, data, _ = doctor(folder)
    assert code == 0
    assert [n["detail"] for n in data["notices"] if n["kind"] == "unindexed"] == [
        "there is no MEMORY.md yet: the first write adds it, or run `memdir reconcile --fix`"]
    shutil.copy(KO / "user_seoyeon.md", folder / "pasted.md")
    code, data, text = doctor(folder)
    assert code == 1 and "healthy" not in text
    assert [(p["kind"], p["path"]) for p in data["problems"]] == [("new", "pasted.md"), ("invalid", "pasted.md")]
    assert data["problems"][1]["detail"].startswith("pasted.md: line 22 of the body (file line 27) holds what looks "
                                                     "like a password or key assigned to a name")


# ---------------------------------------------------------------- unclear messages


def test_capturing_a_subagent_transcript_alone_says_what_to_do(tmp_path: Path) -> None:  # item 17
    sub = next((REAL / "claude-code" / "transcripts").rglob("agent-*.jsonl"))
    out = CliRunner().invoke(main, ["--root", str(tmp_path / "m"), "capture", sub.stem, str(sub)])
    assert "None" not in out.stdout
    assert out.stdout.startswith(f"skipped: {sub.stem} is a subagent's transcript, which capture folds into its parent "
                                 "session's record; capture the parent session's transcript instead")


def test_context_attributes_are_not_html_escaped(tmp_path: Path) -> None:  # item 19
    with memdir.open(tmp_path / "m") as md:
        md.write("feedback/claude.md", "Keep answers short.\n", name="My (Claude's) rules & habits", type="feedback")
        text = memdir.context(md).text
    assert 'name="My (Claude\'s) rules &amp; habits"' in text and "&#x27;" not in text  # only what XML needs
