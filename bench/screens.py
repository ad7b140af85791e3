"""Screenshots of the web page, light and dark, desktop and phone: `python bench/screens.py [OUT]`.

Seeds a sample memory with two weeks of changes by a person and two agents
(the journal's clock is set back while seeding, so the activity picture has
days to show), a diary and captured sessions, serves it with a token like
`memdir serve --http` does, logs in through the form and saves one PNG per
page, theme and width under bench/screens/ (the README links them). Needs the
system's Chromium (/usr/bin/chromium; `make test` installs it) and the dev
extra's Playwright. Run it on demand, not in the tests.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import memdir
from memdir import model
from memdir.faces import http
from memdir.faces.auth import Memories, Principal, Principals

CHROMIUM = os.environ.get("MEMDIR_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
TOKEN = "screens-token-0123456789abcdef"
SIZES = {"desktop": {"width": 1200, "height": 800}, "phone": {"width": 390, "height": 844}}
MAX_HEIGHT = {"desktop": 1000, "phone": 1400}
TODAY = dt.datetime.now(dt.UTC).replace(microsecond=0)

PROFILE = """# Alice

Data engineer at a logistics company. Prefers Python, short answers, and examples over theory.

- Works from Lisbon (UTC+0); standups at 09:30.
- Reviews pull requests in the afternoon.
"""
FLOCK = """# Flock

Route planner for delivery vans. Launch date: **2026-12-15**.

## Stack

- PostgreSQL 16, FastAPI, React
- Payments through Stripe: see [[stripe webhooks]]
- Owner: [Alice](../user/profile.md)

## Open questions

1. Do vans share depots across cities?
2. Which map tiles can we cache offline?
"""


@contextmanager
def clock(when: dt.datetime) -> Iterator[None]:
    """Journal records made inside are dated `when` (seeding only: memdir itself always uses now)."""
    real = model.now_stamp
    model.now_stamp = lambda: model.Stamp(when.strftime("%Y-%m-%dT%H:%M:%SZ"))  # type: ignore[assignment]
    try:
        yield
    finally:
        model.now_stamp = real  # type: ignore[assignment]


def at(back: int, hour: int) -> dt.datetime:
    """`back` days ago at `hour` UTC, but never later than a few minutes ago."""
    day = (TODAY - dt.timedelta(days=back)).replace(hour=hour, minute=7, second=0)
    return min(day, TODAY - dt.timedelta(minutes=30 - hour))


def seed(root: str) -> None:
    """Two weeks of changes, made in time order (so the journal's order and its clock agree)."""
    person = memdir.open(root, actor="alice")
    claude = memdir.open(root, actor="mcp:claude-code")
    bot = memdir.open(root, actor="http:support-bot")
    steps: list[tuple[dt.datetime, Any]] = []

    def step(when: dt.datetime, action: Any) -> None:
        steps.append((when, action))

    step(at(13, 8), lambda: person.write("user/profile.md", PROFILE, type="user",
                                         description="Alice: data engineer, prefers Python and short answers"))
    step(at(13, 8), lambda: person.write(
        "feedback/no-dark-themes.md", "Never propose dark themes.\n\n**Why:** the user corrected this twice.\n"
        "**How to apply:** any UI, slide or chart the agent generates.\n",
        type="feedback", description="NEVER use dark themes in generated UI; user finds them unreadable"))
    step(at(13, 8), lambda: claude.write(
        "reference/stripe-webhooks.md", "Stripe signs every webhook; verify with the endpoint secret.\n"
        "Failed deliveries are retried for up to 3 days.\n", type="reference", name="stripe webhooks",
        description="Stripe webhooks: verify signatures, retry for 3 days"))
    step(at(13, 8), lambda: claude.write("project/standups.md", "# Standups\n\n", type="project",
                                         description="Daily standup notes for Flock"))
    for back in range(13, -1, -1):
        day = TODAY - dt.timedelta(days=back)
        step(at(back, 9), lambda n=14 - back: claude.append("project/standups.md", f"Shipped part {n} of the depot importer."))
        if back % 3 == 0:
            step(at(back, 11), lambda: bot.append("reference/support-faq.md",
                                                  "A customer asked about refunds; pointed to the policy page."))
        if back % 4 == 1:
            step(at(back, 12), lambda n=14 - back: person.append(
                "user/reading-log.md", f"Finished chapter {n} of Designing Data-Intensive Applications."))
        if back % 2 == 0:
            step(at(back, 10), lambda b=back: memdir.capture(claude, f"session-{b}", [
                {"role": "user", "content": f"Plan part {14 - b} of the depot importer"},
                {"role": "assistant", "content": "Split it into parse, validate and load steps."}], at=at(b, 10)))
        if 0 < back < 7:
            text = f"Worked on part {14 - back} of Flock's depot importer; support questions were about refunds."
            step(at(back, 13), lambda d=day, t=text: person.write(f"diary/{d:%Y-%m-%d}.md", t + "\n", type="diary",
                                                                  description=t))
    week = (TODAY - dt.timedelta(days=7)).isocalendar()
    summary = "A week of importer work; refunds were the top support topic."
    step(at(1, 14), lambda: memdir.capture(claude, "broken-hook", [], at=at(1, 14)))
    step(at(1, 14), lambda: person.write(f"diary/{week.year}-W{week.week:02d}.md", summary + "\n", type="diary",
                                         description=summary))
    step(at(2, 15), lambda: claude.write("project/flock.md", FLOCK.replace("2026-12-15", "2026-12-01"), type="project",
                                         description="Flock: route planner; launch on 2026-12-01", tags=["launch", "vans"]))
    step(at(2, 15), lambda: claude.write("feedback/tests-first.md", "Start every bug fix with a failing test.\n",
                                         type="feedback", description="Write the failing test before the fix"))
    step(at(0, 10), lambda: person.write("project/flock.md", FLOCK, type="project",
                                         description="Flock: route planner; launch on 2026-12-15", tags=["launch", "vans"]))
    step(TODAY, lambda: claude.write(
        "project/flock-risks.md", "Risks for the [[Flock]] launch: depot data is late; Stripe keys rotate on 2026-12-10.\n",
        type="project", description="Flock launch risks"))
    for when, action in sorted(steps, key=lambda s: s[0]):  # stable: same-time steps keep their order
        with clock(when):
            action()
    for md in (person, claude, bot):
        md.close()


class Server:
    def __init__(self, root: str) -> None:
        import uvicorn

        principals = Principals(Principal("default"))
        principals.add_token(TOKEN)
        self.memories = Memories(root, transport="http", watch=False)
        app = http.build(principals, self.memories, host="127.0.0.1")
        sock = http.listen("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.server = uvicorn.Server(http.config(app))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.memories.close()


def shoot(page: Any, out: Path, name: str, size: str) -> None:
    height = min(page.evaluate("document.documentElement.scrollHeight"), MAX_HEIGHT[size])
    page.screenshot(path=str(out / f"{name}.png"), clip={"x": 0, "y": 0, "width": SIZES[size]["width"], "height": height},
                    full_page=True)


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    root = tempfile.mkdtemp(prefix="memdir-screens-")
    seed(root)
    server = Server(root)
    agent = memdir.open(root, actor="mcp:claude-code")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for scheme in ("light", "dark"):
                for size in SIZES:
                    ctx = browser.new_context(viewport=SIZES[size], color_scheme=scheme)
                    page = ctx.new_page()
                    tag = f"{size}-{scheme}"
                    page.goto(server.url + "/")
                    shoot(page, out, f"login-{tag}", size)
                    page.fill("#token", TOKEN)
                    page.click("button[type=submit]")
                    page.wait_for_url(server.url + "/")
                    shoot(page, out, f"home-{tag}", size)
                    page.goto(server.url + "/ui/file/project/flock.md")
                    shoot(page, out, f"file-{tag}", size)
                    page.goto(server.url + "/ui/search?q=launch+date")
                    shoot(page, out, f"search-{tag}", size)
                    page.goto(server.url + "/ui/changes")
                    page.locator("details").first.evaluate("d => d.open = true")
                    shoot(page, out, f"changes-{tag}", size)
                    page.goto(server.url + "/ui/history/project/flock.md")
                    shoot(page, out, f"history-{tag}", size)
                    page.goto(server.url + "/ui/pictures")
                    shoot(page, out, f"pictures-{tag}", size)
                    page.goto(server.url + "/ui/edit/project/flock-risks.md")
                    body = page.locator("#body")
                    body.fill(body.input_value() + "\nAlso: the SMS provider's contract ends in January.\n")
                    agent.append("project/flock-risks.md", "Depot data arrived; one risk fewer.")
                    page.click("text=Save")
                    shoot(page, out, f"conflict-{tag}", size)
                    ctx.close()
            browser.close()
    finally:
        agent.close()
        server.stop()
    total = sum(f.stat().st_size for f in out.glob("*.png"))
    print(f"{len(list(out.glob('*.png')))} screenshots in {out} ({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("out", nargs="?", type=Path, default=Path(__file__).parent / "screens",
                        help="the folder the PNGs go to (default: bench/screens/)")
    main(parser.parse_args().out)
