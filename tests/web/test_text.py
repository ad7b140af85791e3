"""What the web page shows of text: markdown with memory links, diffs, highlighted snippets, the index as sections."""

from __future__ import annotations

from pathlib import Path

import memdir
from memdir.web import text as webtext


def test_markdown_links_lead_to_memories_and_raw_html_is_text(tmp_path: Path) -> None:
    md = memdir.open(tmp_path)
    md.write("reference/stripe-webhooks.md", "Signed.\n", name="stripe webhooks")
    body = ("See [[Stripe Webhooks|the webhooks]], [[nowhere]] and [the hooks](../reference/stripe-webhooks.md).\n\n"
            "<b>bold?</b> [site](https://example.org)\n\n```\n[[not a link]]\n```\n")
    md.write("project/flock.md", body)
    m = md.read("project/flock.md")
    html = webtext.render_markdown(m.path, m.body, m.text.count("\n", 0, len(m.text) - len(m.body)) + 1, memdir.links(md, m.path))
    assert '<a href="/ui/file/reference/stripe-webhooks.md" class="memory">the webhooks</a>' in html
    assert '<a href="#" class="broken" title="this link leads to no memory">nowhere</a>' in html
    assert '<a href="/ui/file/reference/stripe-webhooks.md" class="memory">the hooks</a>' in html
    assert '<a href="https://example.org" rel="noopener noreferrer">site</a>' in html
    assert "&lt;b&gt;bold?&lt;/b&gt;" in html and "<b>" not in html
    assert "<code>[[not a link]]\n</code>" in html


def test_snippets_mark_the_words_that_matched_by_stem() -> None:
    shown = webtext.highlight("Launches <soon>: the launch of Flock", "launch flock")
    assert str(shown) == "<mark>Launches</mark> &lt;soon&gt;: the <mark>launch</mark> of <mark>Flock</mark>"


def test_snippets_mark_japanese_words_as_written() -> None:
    shown = webtext.highlight("由美さんは魚が好き。由美も。", "由美さん")
    assert str(shown) == "<mark>由美さん</mark>は魚が好き。<mark>由美</mark>も。"


def test_diffs_count_lines_and_know_a_missing_file() -> None:
    d = webtext.diff(None, "a\nb\n")
    assert (d.added, d.removed, [x.kind for x in d.lines]) == (2, 0, ["hunk", "add", "add"])
    assert webtext.diff(b"same\n", "same\n").empty


def test_the_index_becomes_sections_with_folder_links_and_notes() -> None:
    text = ("# Memory Index\n\n## Project\n- [flock](project/flock.md) — Flock: the launch\n\n## Folders\n"
            "- [sessions/](sessions/MEMORY.md) — 40 memories (session 40)\n\n"
            "… and 3 older files in the root not shown here; list them with list_memory_files() or `memdir ls`\n")
    sections, notes = webtext.sections(text, "")
    assert [(s.title, [(i.title, i.url, i.folder) for i in s.items]) for s in sections] == [
        ("Project", [("flock", "/ui/file/project/flock.md", False)]),
        ("Folders", [("sessions/", "/?folder=sessions/", True)]),
    ]
    assert notes == [text.splitlines()[-1]]
