"""Links between memories: parsing, resolution by path and by name, backlinks, renames, scopes, reconcile."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir import NotFound
from memdir.faces.cli import main
from memdir.recall import links
from memdir.recall.links import Link, Links, name_key, parse


def test_parse_finds_both_kinds_in_order_and_skips_code_urls_and_images() -> None:
    text = (
        "---\nname: plan\npinned: true\n---\n"
        "See [[Flock launch]] and [the notes](../reference/stripe.md#retries).\n"
        "Also [[people/alice|Alice]], [[No dark themes#Why]] and ![[diagram]].\n"
        "Not links: [site](https://example.com/x.md), ![img](pic.md), [[#here]], `[[in code]]`, [txt](notes.txt)\n"
        "```\n[[in a fence]]\n```\n"
        "[spaced](<../my notes/a b.md>) [escaped](../my%20notes/c.md)\n"
    )
    raws, pinned, _ = parse("project/flock.md", text)
    assert pinned
    assert [(r.text, r.line) for r in raws] == [
        ("[[Flock launch]]", 5), ("[the notes](../reference/stripe.md#retries)", 5),
        ("[[people/alice|Alice]]", 6), ("[[No dark themes#Why]]", 6), ("![[diagram]]", 6),
        ("[spaced](<../my notes/a b.md>)", 11), ("[escaped](../my%20notes/c.md)", 11),
    ]
    assert [r.path for r in raws] == [None, "reference/stripe.md", "people/alice.md", None, None,
                                      "my notes/a b.md", "my notes/c.md"]
    assert [r.name for r in raws][:4] == ["flock-launch", "stripe", "alice", "no-dark-themes"]
    assert parse("a.md", "---\npinned: yes please\n---\nbody\n") == ([], False, ())
    assert parse("a.md", "---\nunclosed [[x]]\n")[0][0].name == "x"  # a broken frontmatter is body


def test_names_compare_without_case_and_separators() -> None:
    assert name_key("No dark themes") == name_key("no-dark-themes") == name_key("NO_DARK  themes") == "no-dark-themes"


def test_links_resolve_by_path_and_by_name_and_list_backlinks(md: memdir.Memdir) -> None:
    md.write("project/flock.md", "Plan. See [[No dark themes]], [stripe](../reference/stripe.md) and [[nowhere]].\n",
             name="flock launch")
    line = md.read("project/flock.md").text.splitlines().index(md.read("project/flock.md").body.strip()) + 1
    md.write("feedback/no-dark-themes.md", "Never.\n", name="no dark themes")
    md.write("reference/stripe.md", "Webhooks. Back to [[Flock Launch]].\n")
    got = memdir.links(md, "project/flock.md")
    assert got == Links("project/flock.md", (
        Link("[[No dark themes]]", line, "feedback/no-dark-themes.md"),
        Link("[stripe](../reference/stripe.md)", line, "reference/stripe.md"),
        Link("[[nowhere]]", line, None),
    ), ("reference/stripe.md",))
    assert got.broken == (Link("[[nowhere]]", line, None),)
    assert memdir.links(md, "feedback/no-dark-themes.md").backlinks == ("project/flock.md",)
    md.write("nowhere.md", "Now it exists.\n")  # a link to a memory written later starts working
    assert memdir.links(md, "project/flock.md").links[2].target == "nowhere.md"
    assert memdir.links(md, "nowhere.md").backlinks == ("project/flock.md",)


def test_the_closest_of_several_same_named_memories_wins(md: memdir.Memdir) -> None:
    md.write("a/notes.md", "A.\n")
    md.write("b/c/notes.md", "C.\n")
    md.write("b/notes.md", "B.\n")
    md.write("b/c/index.md", "[[notes]]\n")  # same folder first
    md.write("x/y.md", "[[notes]]\n")  # else the shortest path, then alphabetical
    assert memdir.links(md, "b/c/index.md").links[0].target == "b/c/notes.md"
    assert memdir.links(md, "x/y.md").links[0].target == "a/notes.md"


def test_renames_and_moves_keep_links_working(md: memdir.Memdir) -> None:
    md.write("project/flock.md", "[[stripe]] and [notes](../reference/stripe.md) and [[Payments]]\n")
    md.write("reference/stripe.md", "Webhooks.\n", name="payments")
    md.rename("reference/stripe.md", "archive/2026/stripe.md")  # moved: same file name
    assert [x.target for x in memdir.links(md, "project/flock.md").links] == ["archive/2026/stripe.md"] * 3
    md.rename("archive/2026/stripe.md", "archive/billing.md")  # renamed: only its name still matches
    assert [x.target for x in memdir.links(md, "project/flock.md").links] == [None, None, "archive/billing.md"]
    assert memdir.links(md, "archive/billing.md").backlinks == ("project/flock.md",)
    assert md.read("project/flock.md").version == md.history("project/flock.md")[0].new_version  # never rewritten
    md.undo("archive/billing.md")
    assert [x.target for x in memdir.links(md, "project/flock.md").links] == ["archive/2026/stripe.md"] * 3
    md.delete("archive/2026/stripe.md")
    assert memdir.links(md, "project/flock.md").broken == memdir.links(md, "project/flock.md").links


def test_links_follow_changes_made_by_another_handle(root: object) -> None:
    with memdir.open(root) as one, memdir.open(root) as two:  # type: ignore[arg-type]
        one.write("a.md", "[[b]]\n")
        assert memdir.links(one, "a.md").links[0].target is None
        two.write("b.md", "B.\n")
        assert memdir.links(one, "a.md").links[0].target == "b.md"
        assert memdir.links(one, "b.md").backlinks == ("a.md",)


def test_a_scope_sees_only_links_it_may_read(md: memdir.Memdir) -> None:
    md.write("shared/plan.md", "[[diary]] [[shared notes]] [[ghost]]\n")
    md.write("people/alice/diary.md", "Private. [[plan]]\n")
    md.write("shared/shared-notes.md", "Notes. [[plan]]\n")
    bob = md.scope(read=["shared/"])
    got = memdir.links(bob, "shared/plan.md")
    assert [(x.text, x.target) for x in got.links] == [("[[shared notes]]", "shared/shared-notes.md"), ("[[ghost]]", None)]
    assert got.backlinks == ("shared/shared-notes.md",)
    assert memdir.links(md, "shared/plan.md").backlinks == ("people/alice/diary.md", "shared/shared-notes.md")
    try:
        memdir.links(bob, "people/alice/diary.md")
    except NotFound:
        pass
    else:
        raise AssertionError("a scope must not read links of a file it cannot see")


def test_reconcile_and_doctor_report_broken_links_without_calling_the_memory_unclean(
        root: object, md: memdir.Memdir) -> None:
    md.write("project/flock.md", "---\nname: flock\n---\nTitle\n\nSee [[nowhere]] and [x](gone.md).\n")
    assert md.read("project/flock.md").text.splitlines()[7] == "See [[nowhere]] and [x](gone.md)."
    assert links.broken(md) == [
        ("project/flock.md", "line 8: [[nowhere]] leads to no memory; fix the link or write the memory it names"),
        ("project/flock.md", "line 8: [x](gone.md) leads to no memory; fix the link or write the memory it names"),
    ]
    assert md.reconcile().clean  # a link to a note not written yet is normal (Obsidian users do it on purpose)
    run = CliRunner().invoke(main, ["--root", str(root), "reconcile", "--json"])
    assert run.exit_code == 0, run.output
    assert [(f["kind"], f["path"]) for f in json.loads(run.output)["findings"]] == [("link", "project/flock.md")] * 2


def test_cli_links(root: object, md: memdir.Memdir) -> None:
    md.write("a.md", "---\nname: a\n---\n[[b]] [[c]]\n")
    md.write("b.md", "[[a]]\n")
    run = CliRunner().invoke(main, ["--root", str(root), "links", "a.md"])
    assert run.exit_code == 0, run.output
    assert run.output == "links:\n  [[b]] -> b.md (line 6)\n  [[c]] -> (broken) (line 6)\nbacklinks:\n  b.md\n"
    run = CliRunner().invoke(main, ["--root", str(root), "links", "a.md", "--json"])
    assert json.loads(run.output) == {"path": "a.md", "links": [
        {"text": "[[b]]", "line": 6, "target": "b.md"}, {"text": "[[c]]", "line": 6, "target": None}],
        "backlinks": ["b.md"]}
    run = CliRunner().invoke(main, ["--root", str(root), "links", "zz.md"])
    assert (run.exit_code, run.output) == (1, "error: zz.md does not exist; MEMORY.md lists the memories that do\n")


def test_a_new_process_loads_the_saved_graph_and_reads_only_what_changed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with memdir.open(root) as first:
        for i in range(30):
            first.write(f"notes/n{i}.md", f"Note {i}, see [[n{i + 1}]].\n")
        first.write("pin.md", "---\npinned: true\n---\nAlways.\n")
        assert links.graph(first).pinned == {"pin.md"}
        assert (root / ".memdir" / "links.json").is_file()
        first.write("notes/late.md", "Written after the snapshot: [[n3]].\n")
    with memdir.open(root) as second:  # another handle, as a new process would open it
        read: list[str] = []
        real = second.store.get
        monkeypatch.setattr(second.store, "get", lambda path: read.append(path) or real(path))
        g = links.graph(second)
        assert read == ["notes/late.md"]
        assert g.pinned == {"pin.md"} and len(g.nodes) == 32
        assert memdir.links(second, "notes/n3.md").backlinks == ("notes/late.md", "notes/n2.md")


def test_a_damaged_or_foreign_snapshot_is_rebuilt_from_the_files(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "[[b]]\n")
        md.write("b.md", "B.\n")
    snapshot = root / ".memdir" / "links.json"
    for junk in ("not json", '{"format": 1, "seq": 99999, "nodes": {}}', '{"format": 1, "seq": 1, "nodes": {"x.md": 3}}'):
        snapshot.write_text(junk)
        with memdir.open(root) as md:
            assert memdir.links(md, "b.md").backlinks == ("a.md",)
            assert set(links.graph(md).nodes) == {"a.md", "b.md"}


def test_each_new_process_saves_what_it_caught_up_with(root: Path) -> None:
    with memdir.open(root) as md:
        md.write("a.md", "[[b]]\n")
        links.graph(md)
    saved = json.loads((root / ".memdir" / "links.json").read_text())["seq"]
    with memdir.open(root) as md:
        md.write("b.md", "B.\n")
    with memdir.open(root) as md:  # one change since the snapshot: saved again, so the next process reads nothing
        links.graph(md)
    assert json.loads((root / ".memdir" / "links.json").read_text())["seq"] > saved


def test_obsidian_and_basic_memory_links_resolve_as_their_writers_mean_them(root: Path) -> None:
    # Written by hand, as Obsidian and basic-memory leave files: nothing is rewritten for memdir.
    (root / "Household" / "Recipes").mkdir(parents=True)
    (root / "attachments").mkdir()
    (root / "Household" / "Recipes" / "Kanelbullar.md").write_text(
        "---\naliases:\n  - Cinnamon buns\n  - kanelbulle\n---\n# Kanelbullar\n")
    (root / "Work.md").write_text("---\naliases: Alpha\n---\nThe project.\n")
    (root / "Decision- Postgres over SQLite.md").write_text(
        "---\ntitle: Decision: Postgres over SQLite\ntype: note\npermalink: orchard/pg-decision\n---\nDecided.\n")
    (root / "attachments" / "floorplan.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "Home.md").write_text(
        "See [[Cinnamon buns|the buns]], [[Alpha]] and [[kanelbulle#Dough]].\n"
        "| what | note |\n|---|---|\n| buns | [[Kanelbullar\\|recipe]] |\n"
        "![[floorplan.png|300]] ![[lease-2025.pdf]] [[Project map.canvas]] ![[Work]]\n"
        "- relates_to [[Decision: Postgres over SQLite]]\n"  # by its title, which YAML alone refuses
        "Also [[pg-decision]].\n")  # by its permalink
    with memdir.open(root) as md:
        got = memdir.links(md, "Home.md")
        assert [(x.text, x.target) for x in got.links] == [
            ("[[Cinnamon buns|the buns]]", "Household/Recipes/Kanelbullar.md"),
            ("[[Alpha]]", "Work.md"),
            ("[[kanelbulle#Dough]]", "Household/Recipes/Kanelbullar.md"),
            ("[[Kanelbullar\\|recipe]]", "Household/Recipes/Kanelbullar.md"),
            ("![[Work]]", "Work.md"),  # an embedded note is a link; embedded attachments are not
            ("[[Decision: Postgres over SQLite]]", "Decision- Postgres over SQLite.md"),
            ("[[pg-decision]]", "Decision- Postgres over SQLite.md"),
        ]
        assert [x.relation for x in got.links] == [None] * 5 + ["relates_to", None]  # basic-memory's relation line
        assert got.links[-2].to_dict()["relation"] == "relates_to" and "relation" not in got.links[0].to_dict()
        assert memdir.links(md, "Household/Recipes/Kanelbullar.md").backlinks == ("Home.md",)
        assert links.broken(md) == []
        assert md.read("Decision- Postgres over SQLite.md").name == "Decision: Postgres over SQLite"


def test_the_obsidian_vaults_of_the_corpus_have_no_broken_links_but_the_ones_written_broken(tmp_path: Path) -> None:
    real = Path(__file__).parents[1] / "data" / "real" / "obsidian"
    found = {}
    for vault in (real / "en" / "Homebase", real / "ja" / "はるとのノート"):
        copy = tmp_path / vault.name
        shutil.copytree(vault, copy)
        with memdir.open(copy) as md:
            found[vault.name] = sorted(detail.split(": ", 1)[1].split(" leads")[0] for _, detail in links.broken(md))
    assert found == {"Homebase": ["[[Haruto]]"],  # the README names the links that lead nowhere on purpose
                     "はるとのノート": ["[[味噌汁|マルタの保管庫のメモ]]", "[[鮭のホイル焼き\\|ホイル焼き]]"]}
