"""The web page in a real browser: Debian's Chromium, driven by Playwright (never a downloaded browser).

One browser for the module, one fresh context (cookies, theme, width) per
scenario. Each scenario clicks through what a person does and checks the
files on disk afterwards; axe-core (vendored in tests/web/, MPL-2.0) checks
every page for serious accessibility problems, contrast included, in light
and dark mode. `make test` installs chromium when it is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REQUIRE_SERVICES
from serving import Running

import memdir
from memdir.faces.auth import Principal, Principals

CHROMIUM = os.environ.get("MEMDIR_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
AXE = Path(__file__).parent / "axe.min.js"
TOKEN = "browser-test-token-0123456789"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        reason = f"no Chromium at {CHROMIUM} (apt-get install chromium; `make test` does)"
        if REQUIRE_SERVICES:
            pytest.fail(f"MEMDIR_TEST_SERVICES=require but {reason}", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    md = memdir.open(tmp_path / "mem", actor="alice")
    md.write("project/flock.md", "Flock launches on 2026-12-15.\n\nPayments: see [[stripe webhooks]].\n",
             type="project", description="Flock: route planner; launch on 2026-12-15")
    md.write("reference/stripe-webhooks.md", "Webhooks are signed; retries last 3 days.\n", type="reference",
             name="stripe webhooks", description="Stripe webhooks: verify signatures")
    md.close()
    return tmp_path / "mem"


def page_of(browser: Any, scheme: str = "light", viewport: dict[str, int] | None = None) -> Any:
    ctx = browser.new_context(color_scheme=scheme, viewport=viewport or {"width": 1280, "height": 800},
                              bypass_csp=True)  # so axe can be injected; the page itself never needs it
    page = ctx.new_page()
    page.set_default_timeout(10_000)
    page.on("dialog", lambda dialog: dialog.accept())  # the confirmations of delete and undo-all
    return page


def axe(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now (WCAG 2 A/AA rules)."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice']}});
        return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
            .map(v => `${v.id}: ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`);
    }""")
    return list(found)


def test_a_person_creates_edits_searches_and_deletes(browser: Any, root: Path) -> None:
    with Running(root) as srv:
        page = page_of(browser)
        page.goto(srv.url + "/")
        assert page.locator("h2", has_text="Project").is_visible()
        page.click("text=New memory")
        page.fill("#path", "user/tea")
        page.select_option("#type", "user")
        page.fill("#description", "Alice drinks green tea")
        page.fill("#body", "Green, **no sugar**. Goes with [[Flock]] planning.")
        page.click("button:has-text('Create')")
        assert page.url == srv.url + "/ui/file/user/tea.md"
        assert page.locator(".flash").inner_text().startswith("Created user/tea.md.")
        assert page.locator(".markdown strong").inner_text() == "no sugar"
        assert page.locator(".markdown a.memory").get_attribute("href") == "/ui/file/project/flock.md"

        page.click("text=Edit")
        page.fill("#body", "Green, no sugar, 80 °C.")
        page.click("button:has-text('Save')")
        assert "Saved user/tea.md." in page.locator(".flash").inner_text()
        assert (root / "user" / "tea.md").read_text().endswith("Green, no sugar, 80 °C.\n")

        page.keyboard.press("/")  # the search box, from the keyboard
        page.keyboard.type("planner launch")
        page.keyboard.press("Enter")
        page.wait_for_url(srv.url + "/ui/search?q=planner+launch")
        first = page.locator(".hits li").first
        assert first.locator(".hit-title").inner_text() == "flock"
        assert [m.inner_text() for m in first.locator("mark").all()] == ["launches"]  # by stem, as the index matches

        page.goto(srv.url + "/ui/file/user/tea.md")
        page.click("button:has-text('Delete')")
        assert page.url == srv.url + "/?folder=user/"
        assert not (root / "user" / "tea.md").exists()
        page.locator(".flash").get_by_role("button", name="Undo").click()
        assert (root / "user" / "tea.md").read_text().endswith("Green, no sugar, 80 °C.\n")
        md = memdir.open(root)
        assert [r.op for r in md.history("user/tea.md")] == ["undo", "delete", "write", "write"]
        assert {r.actor for r in md.history("user/tea.md")} == {md.history("user/tea.md")[0].actor}
        assert md.history("user/tea.md")[0].actor.startswith("web:")
        md.close()
        page.context.close()


def test_a_concurrent_agent_write_is_a_conflict_never_an_overwrite(browser: Any, root: Path) -> None:
    with Running(root) as srv:
        page = page_of(browser)
        page.goto(srv.url + "/ui/edit/project/flock.md")
        page.fill("#body", "Flock launches on 2026-12-15.\n\nPayments: see [[stripe webhooks]].\nBudget: 40k.")
        agent = memdir.open(root, actor="mcp:claude")
        agent.edit("project/flock.md", "2026-12-15.", "2026-12-01 (moved up).")
        page.click("button:has-text('Save')")
        conflict = page.locator(".conflict")
        assert conflict.locator("h2").inner_text() == "Someone else changed this file while you were editing"
        assert "changed since it was read" in conflict.inner_text()
        assert any("2026-12-01 (moved up)" in t for t in conflict.locator(".diff").first.locator(".add").all_inner_texts())
        assert page.locator("#body").input_value().endswith("Budget: 40k.\n")  # what the person typed is kept
        assert "2026-12-01 (moved up)" in agent.read("project/flock.md").body  # nothing was overwritten
        assert axe(page) == []
        page.click("button:has-text('Save mine over theirs')")  # a choice made with both versions in view
        assert agent.read("project/flock.md").body.endswith("Budget: 40k.\n")
        agent.close()
        page.context.close()


@pytest.fixture
def ticking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write a second after the one before: what a slow machine does, now on every run."""
    import datetime as dt
    import itertools

    from memdir import model

    start, seconds = dt.datetime.now(dt.UTC).replace(microsecond=0), itertools.count()
    monkeypatch.setattr(model, "now_stamp",
                        lambda: model.Stamp((start + dt.timedelta(seconds=next(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")))


def test_undo_from_the_feed_from_a_selection_and_from_a_history(browser: Any, root: Path, ticking: None) -> None:
    agent = memdir.open(root, actor="mcp:claude")
    agent.write("project/flock.md", "Flock launches on 2026-11-01.\n")
    agent.write("reference/guess.md", "An agent's guess.\n")
    agent.write("reference/guess.md", "An agent's second guess.\n")
    with Running(root) as srv:
        page = page_of(browser)
        page.goto(srv.url + "/ui/changes")
        newest = page.locator(".change").first
        assert "mcp:claude" in newest.inner_text() and "reference/guess.md" in newest.inner_text()
        newest.locator("summary").click()
        assert newest.locator(".diff .add").last.inner_text().strip().endswith("An agent's second guess.")  # (and `updated`, when the second ticked between the writes)
        assert "changed again in" in page.locator(".change").nth(1).inner_text()  # no lone undo of an older change
        newest.get_by_role("button", name="Undo").click()
        assert "Undid change" in page.locator(".flash").inner_text()
        assert agent.read("reference/guess.md").body == "An agent's guess.\n"

        page.select_option("#actor", "mcp:claude")
        page.select_option("#since", "today")
        page.click("button:has-text('Show')")
        page.locator(".selection button").click()  # everything this agent wrote today: but the person changed guess.md since
        assert page.locator(".flash.error").inner_text().startswith("reference/guess.md was changed again by web:")
        assert agent.read("project/flock.md").body == "Flock launches on 2026-11-01.\n"  # so nothing was undone
        page.fill("#cpath", "project/")
        page.click("button:has-text('Show')")
        page.locator(".selection button").click()  # what it wrote under project/ today
        assert "Undid change" in page.locator(".flash").inner_text()
        assert agent.read("project/flock.md").body.startswith("Flock launches on 2026-12-15.")

        page.goto(srv.url + "/ui/history/project/flock.md")
        rows = page.locator("tbody tr")
        assert rows.count() == 3  # alice's write, the agent's, and the undo of the selection
        page.check("input[name=a] >> nth=2")
        page.check("input[name=b] >> nth=1")
        page.click("button:has-text('Compare')")
        compared = page.locator("#compared-title + .diff")
        # Any line of each side, not the first: when a second ticked between the two writes, their `updated:`
        # lines differ too and come first (the test then depended on the clock).
        assert any("Flock launches on 2026-12-15." in t for t in compared.locator(".del").all_inner_texts())
        assert any("Flock launches on 2026-11-01." in t for t in compared.locator(".add").all_inner_texts())
        page.get_by_role("button", name="Undo change").click()  # the newest change, from the history
        assert agent.read("project/flock.md").body == "Flock launches on 2026-11-01.\n"
        agent.close()
        page.context.close()


def test_log_in_and_out_with_a_token(browser: Any, root: Path) -> None:
    principals = Principals(Principal("default"))
    principals.add_token(TOKEN)
    with Running(root, principals) as srv:
        page = page_of(browser, "dark", PHONE)
        page.goto(srv.url + "/ui/file/project/flock.md")
        assert page.url.startswith(srv.url + "/ui/login")
        assert axe(page) == []
        page.fill("#token", "not-the-token-0123456789")
        page.click("button:has-text('Log in')")
        assert page.locator("[role=alert]").inner_text() == "the token is not valid for this server; check the token you were given"
        page.fill("#token", TOKEN)
        page.click("button:has-text('Log in')")
        assert page.url == srv.url + "/ui/file/project/flock.md"
        [cookie] = page.context.cookies()
        assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
        page.click("text=Log out")
        assert page.url == srv.url + "/ui/login"
        page.goto(srv.url + "/")
        assert page.url.startswith(srv.url + "/ui/login")
        page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_passes_axe_and_works_from_the_keyboard(browser: Any, root: Path, scheme: str) -> None:
    md = memdir.open(root, actor="mcp:claude")
    md.write("diary/2026-11-29.md", "A day of importer work.\n", type="diary", description="A day of importer work.")
    memdir.capture(md, "s1", [{"role": "user", "content": "Plan the importer"}, {"role": "assistant", "content": "Three steps."}])
    md.close()
    pages = ["/", "/ui/list", "/ui/file/project/flock.md", "/ui/edit/project/flock.md", "/ui/new",
             "/ui/search?q=launch", "/ui/changes", "/ui/history/project/flock.md", "/ui/pictures", "/ui/conflicts",
             "/ui/nothing-here"]
    with Running(root) as srv:
        page = page_of(browser, scheme, PHONE if scheme == "dark" else None)
        problems = {}
        for url in pages:
            page.goto(srv.url + url)
            found = axe(page)
            if found:
                problems[url] = found
        assert problems == {}
        page.goto(srv.url + "/")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to content"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "main"
        page.context.close()


def test_the_accessibility_check_itself_finds_problems(browser: Any) -> None:
    """So an empty list above means the pages are clean, not that axe did not run."""
    page = page_of(browser)
    page.set_content('<html lang="en"><title>t</title><main><input><p class="x">faint</p></main></html>')
    page.add_style_tag(content=".x { color: #bbb; background: #fff; }")
    assert sorted(v.split(":")[0] for v in axe(page)) == ["color-contrast", "label"]
    page.context.close()
