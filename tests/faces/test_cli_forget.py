"""`memdir forget` and `memdir db drop-tenant`: they say what goes and that it cannot be undone, and ask first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir import model
from memdir.faces.cli import main


def run(root: Path, *args: str, code: int = 0, input: str | None = None) -> tuple[str, str]:
    result = CliRunner().invoke(main, ["--root", str(root), *args], input=input)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result.stdout, result.stderr


def test_forget_shows_the_plan_and_needs_yes_without_a_terminal(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("people/bob.md", "Bob's locker is 4471.\n", description="bob")
        md.write("people/bob.md", "Bob's locker is 4472.\n")
        md.rename("people/bob.md", "people/robert.md")
    out, err = run(root, "forget", "people/robert.md", code=1)
    assert "forget people/robert.md: 2 name(s), 3 journal record(s)" in err and "cannot be undone" in err
    assert "pass --yes" in err
    assert (root / "people" / "robert.md").exists()
    out, _ = run(root, "forget", "people/robert.md", "--dry-run")
    assert "  people/bob.md\n  people/robert.md" in out
    out, _ = run(root, "forget", "people/robert.md", "--yes", "--json")
    assert json.loads(out)["paths"] == ["people/bob.md", "people/robert.md"] and json.loads(out)["done"]
    assert not (root / "people" / "robert.md").exists()
    assert b"4471" not in (root / ".memdir" / "memdir.db").read_bytes()
    _, err = run(root, "undo", "people/robert.md", code=1)
    assert "was forgotten by" in err
    out, _ = run(root, "log", "people/bob.md")
    assert "forget" in out


def test_forget_text_reports_where_it_was(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "the code is 8812-xq and 8812-xq\n")
        md.write("b.md", "nothing\n")
    out, _ = run(root, "forget", "--text", "8812-XQ", "-i", "--dry-run")
    assert out == "4 match(es) would be redacted: 1 file(s), 1 journal record(s)\n  a.md: 2\n  journal #1: 2\n"
    out, _ = run(root, "forget", "--text", "8812-xq", input="y\n", code=1)  # no terminal: --yes is needed
    out, _ = run(root, "forget", "--text", "8812-xq", "--yes")
    assert "redacted" in out and (root / "a.md").read_text().endswith("the code is [redacted] and [redacted]\n")
    out, _ = run(root, "forget", "--text", "8812-xq", "--yes")
    assert out == "not found: nothing to redact\n"
    _, err = run(root, "forget", code=1)
    assert "give a PATH" in err
    _, err = run(root, "forget", "--pattern", "(", "--yes", code=1)
    assert "not a valid expression" in err


def test_drop_tenant_from_the_command_line(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'm.db'}"
    for tenant in ("acme", "globex"):
        with memdir.open(url, tenant=tenant) as md:
            md.write("a.md", f"{tenant} secret 99172\n")
    run(tmp_path, "db", "drop-tenant", url, "acme", code=1)
    out, _ = run(tmp_path, "db", "drop-tenant", url, "acme", "--yes")
    assert "deleted" in out
    with memdir.open(url, tenant="acme") as md:
        assert md.list() == []
    with memdir.open(url, tenant="globex") as md:
        assert md.read("a.md").body == "globex secret 99172\n"
    _, err = run(tmp_path, "db", "drop-tenant", url, "acme", "--yes", code=1)
    assert "holds nothing" in err


def test_compact_shows_what_would_go_and_asks_for_a_narrower_retention(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with memdir.open(root) as md, monkeypatch.context() as m:
        m.setattr(model, "now_stamp", lambda: model.Stamp("2020-01-01T00:00:00Z"))  # long before today
        for i in range(5):
            md.write("notes/일지.md", f"version {i}: 회의는 월요일\r\n")
        md.write("other.md", "once\n")
    out, _ = run(root, "compact", "--dry-run")  # the defaults: every version of the last 30 days stays
    assert out.startswith("history kept 30 days, then each file's newest 10: 0 version(s) of 0 file(s) would go")
    out, _ = run(root, "compact", "--days", "0", "--versions", "1", "--dry-run", "--json")
    planned = json.loads(out)
    assert (planned["files"], planned["done"], planned["days"], planned["versions"]) == ({"notes/일지.md": 3}, False, 0, 1)
    _, err = run(root, "compact", "--days", "0", "--versions", "1", code=1)  # no terminal: --yes is needed
    assert "cannot be brought back" in err and "pass --yes" in err
    with memdir.open(root) as md:
        assert len(md.history("notes/일지.md")) == 5
    out, _ = run(root, "compact", "--days", "0", "--versions", "1", "--yes")
    assert "3 version(s) of 1 file(s) dropped" in out and "  notes/일지.md: 3" in out
    with memdir.open(root) as md:
        assert [r.op for r in md.history("notes/일지.md")] == ["write", "write", "thinned"]
        assert md.read("notes/일지.md").body == "version 4: 회의는 월요일\r\n" and md.reconcile().clean
    out, _ = run(root, "compact")  # the settings drop nothing more, and ask nothing
    assert "0 version(s) of 0 file(s) dropped" in out


def test_forget_names_the_memories_it_was_merged_into(root: Path) -> None:
    from memdir.remember import timeline

    with memdir.open(root) as md:
        md.write("people/bob.md", "Bob's locker is 4471.\r\n", description="bob")
        md.write("people/robert.md", "Robert (Bob): locker 4471, likes tea.\n", description="robert")
        timeline.supersede(md, "people/bob.md", by="people/robert.md", reason="the same person, merged")
    out, _ = run(root, "forget", "people/bob.md", "--dry-run", "--json")
    assert json.loads(out)["elsewhere"] == ["people/robert.md"]
    out, _ = run(root, "forget", "people/bob.md", "--yes")
    assert "merged or superseded into people/robert.md, which stays" in out and "memdir forget --text" in out
    assert (root / "people" / "robert.md").exists()
