"""The web page over real HTTP (no browser): sessions, CSRF, login, conflicts, errors in the library's words.

The scenarios a person clicks through run in Chromium in test_web_browser.py;
these pin what a browser cannot show well: status codes, cookies, headers,
and what a forged or stale request gets.
"""

from __future__ import annotations

import getpass
import http.client
import http.cookiejar
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from serving import Browser, Running, Served, call

import memdir
from memdir.faces.auth import Principal, Principals
from memdir.web.sessions import MAX_PENDING

TOKEN = "web-test-token-0123456789"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    md = memdir.open(tmp_path / "mem")
    md.write("project/flock.md", "Flock launches on 2026-12-15; see [[stripe webhooks]].\n", type="project",
             description="Flock: the launch")
    md.write("reference/stripe-webhooks.md", "Webhooks are signed.\n", type="reference", name="stripe webhooks")
    md.close()
    return tmp_path / "mem"


def test_a_browser_gets_the_page_and_an_api_client_still_gets_json(root: Path) -> None:
    with Running(root) as srv:
        status, _, html = Browser(srv.url).get("/")
        assert status == 200
        assert '<h2 id="sec-1">Project</h2>' in html and 'href="/ui/file/project/flock.md">flock</a>' in html
        assert call("GET", srv.url + "/").json["api"] == "/v1"


def test_every_page_answers_with_the_security_headers(root: Path) -> None:
    with Running(root) as srv:
        r = call("GET", srv.url + "/ui/file/project/flock.md", headers={"Accept": "text/html"})
        assert r.status == 200
        assert "default-src 'none'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["cache-control"] == "no-store"
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie


def test_a_form_without_the_session_token_changes_nothing(root: Path) -> None:
    with Running(root) as srv:
        b = Browser(srv.url)
        b.get("/ui/new")
        status, _, html = b.post("/ui/new", {"path": "x.md", "body": "forged"}, csrf=False)
        assert status == 403 and "security token does not match" in html
        status, _, html = b.post("/ui/new", {"path": "x.md", "body": "forged", "csrf": "guessed"})
        assert status == 403
        other = Browser(srv.url)  # a token from another session is worth nothing here
        other.get("/ui/new")
        status, _, _ = b.post("/ui/new", {"path": "x.md", "body": "forged", "csrf": other.csrf})
        assert status == 403
        assert call("GET", srv.url + "/v1/files/x.md").status == 404


def test_a_form_posted_from_another_site_is_refused_before_the_page_sees_it(root: Path) -> None:
    with Running(root) as srv:
        b = Browser(srv.url)
        b.get("/ui/new")
        status, _, body = b.post("/ui/new", {"path": "x.md", "body": "forged"},
                                 headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"})
        assert status == 403 and "cross-site request refused" in body
        assert call("GET", srv.url + "/v1/files/x.md").status == 404


def test_create_edit_and_delete_are_journaled_as_the_person(root: Path) -> None:
    with Running(root) as srv:
        b = Browser(srv.url)
        b.get("/ui/new?folder=user/")
        status, url, html = b.post("/ui/new", {"path": "user/tea", "name": "", "description": "Alice drinks tea",
                                               "type": "user", "tags": "drinks, mornings", "body": "Green, no sugar."})
        assert (status, url) == (200, srv.url + "/ui/file/user/tea.md")
        assert "Created user/tea.md." in html and "<p>Green, no sugar.</p>" in html
        version = re.search(r'name="version" value="([^"]+)"', html)
        assert version is not None
        status, _, html = b.post("/ui/file/user/tea.md", {"version": version.group(1), "name": "tea",
                                                          "description": "Alice drinks green tea", "type": "user",
                                                          "tags": "drinks", "body": "Green, no sugar,\r\n80 °C."})
        assert status == 200 and "Saved user/tea.md." in html
        md = memdir.open(root)
        m = md.read("user/tea.md")  # saved as an editor saves a textarea: LF lines, a last newline
        assert (m.name, m.description, m.tags, m.body) == ("tea", "Alice drinks green tea", ("drinks",), "Green, no sugar,\n80 °C.\n")
        assert {r.actor for r in md.history("user/tea.md")} == {f"web:{getpass.getuser()}"}
        status, url, html = b.post("/ui/delete/user/tea.md", {"version": m.version})
        assert url == srv.url + "/?folder=user/" and "Deleted user/tea.md." in html
        assert not (root / "user" / "tea.md").exists()
        md.close()


def test_saving_over_a_concurrent_agent_write_is_a_conflict_with_both_diffs(root: Path) -> None:
    with Running(root) as srv:
        b = Browser(srv.url)
        _, _, html = b.get("/ui/edit/project/flock.md")
        version = re.search(r'name="version" value="([^"]+)"', html)
        assert version is not None
        agent = memdir.open(root, actor="mcp:claude")
        agent.edit("project/flock.md", "2026-12-15", "2026-12-01")
        status, _, html = b.post("/ui/file/project/flock.md", {
            "version": version.group(1), "name": "", "description": "Flock: the launch", "type": "project",
            "tags": "", "body": "Flock launches on 2026-12-15; see [[stripe webhooks]].\nMine."})
        assert status == 409
        assert "changed since it was read" in html and "Someone else changed this file" in html
        assert '<span class="del"><span class="sign" aria-hidden="true">-</span><span class="visually-hidden">removed: </span>' \
               "Flock launches on 2026-12-15" in html  # what they changed
        assert "Mine." in html  # what this person typed is kept
        assert agent.read("project/flock.md").body == "Flock launches on 2026-12-01; see [[stripe webhooks]].\n"
        agent.close()


def test_the_library_refusals_appear_in_its_own_words(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "memdir.toml").write_text("max_file_bytes = 30000\n")
    with Running(root) as srv:
        b = Browser(srv.url)
        b.get("/ui/new")
        md = memdir.open(root)
        with pytest.raises(memdir.LimitExceeded) as e:
            md.write("big.md", "line\n" * 7000)
        status, _, html = b.post("/ui/new", {"path": "big.md", "body": "line\n" * 7000})
        assert status == 413 and e.value.message.replace("'", "&#39;") in html
        status, _, html = b.post("/ui/new", {"path": "long.md", "body": "line\n" * 500})  # a person's: kept whole
        assert status in (200, 303) and md.read("long.md").body == "line\n" * 500
        status, _, html = b.post("/ui/new", {"path": "project/flock.md", "body": "again"})
        assert status == 409 and "project/flock.md already exists" in html
        status, _, html = b.get("/ui/search?q=" + "+".join(f"word{i}" for i in range(70)))
        assert status == 400 and "over the limit of 64" in html
        md.close()


def test_the_search_page_lists_what_answers_and_says_when_nothing_does(root: Path) -> None:
    with Running(root) as srv:
        b = Browser(srv.url)
        status, _, html = b.get("/ui/search?q=flock+launch+date")
        assert status == 200 and "1 file answers" in html and 'href="/ui/file/project/flock.md"' in html
        assert re.search(r"· <span [^>]*>\d+% sure</span>", html)  # how sure, beside each hit
        status, _, html = b.get("/ui/search?q=android+app+launch+date")  # flock holds "launch date", not the app
        assert status == 200 and "No file answers" in html and "Weaker matches" in html
        assert html.index("Weaker matches") < html.index('href="/ui/file/project/flock.md"')
        status, _, html = b.get("/ui/search?q=zebra+crossing")
        assert status == 200 and "No file matches" in html and 'class="hit-title"' not in html


def test_markdown_is_shown_never_run(root: Path) -> None:
    md = memdir.open(root)
    md.write("x.md", '<script>alert(1)</script>\n\n[click](javascript:alert(1)) <img src=x onerror=alert(1)>\n')
    md.close()
    with Running(root) as srv:
        _, _, html = Browser(srv.url).get("/ui/file/x.md")
        assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert 'href="javascript:' not in html and "<img src=x" not in html


def test_with_a_token_every_page_needs_a_login(root: Path) -> None:
    principals = Principals(Principal("default"))
    principals.add_token(TOKEN)
    with Running(root, principals) as srv:
        b = Browser(srv.url)
        status, url, html = b.get("/ui/file/project/flock.md")
        assert url == srv.url + "/ui/login?next=%2Fui%2Ffile%2Fproject%2Fflock.md" and 'id="token"' in html
        assert "Flock" not in html
        status, _, html = b.post("/ui/login", {"token": "wrong-token-0123456789", "next": "/ui/file/project/flock.md"})
        assert status == 401 and "the token is not valid for this server" in html
        before = b.cookie().value
        status, url, html = b.post("/ui/login", {"token": TOKEN, "next": "/ui/file/project/flock.md"})
        assert (status, url) == (200, srv.url + "/ui/file/project/flock.md") and "Flock launches" in html
        assert b.cookie().value != before  # a new session id at login
        status, _, _ = b.post("/ui/logout", {})
        status, url, _ = b.get("/")
        assert url.startswith(srv.url + "/ui/login")
        assert call("GET", srv.url + "/ui/file/project/flock.md", headers={"Accept": "text/html"},
                    token=TOKEN).status == 200  # a bearer token works too, as on the API


def test_a_scoped_principal_sees_and_writes_only_its_folders(root: Path) -> None:
    principals = Principals(Principal("alice", None, ("project/",), ("project/",)))
    with Running(root, principals) as srv:
        b = Browser(srv.url)
        _, _, html = b.get("/")
        assert "flock" in html and "stripe" not in html
        status, _, html = b.get("/ui/file/reference/stripe-webhooks.md")
        assert status == 404
        b.get("/ui/new")
        status, _, html = b.post("/ui/new", {"path": "reference/x.md", "body": "outside"})
        assert status == 403 and "reference/x.md is outside what this principal may write (project/)" in html
        assert not (root / "reference" / "x.md").exists()


def test_memdir_ui_serves_the_page_and_opens_it_in_the_browser(root: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    env = {**os.environ, "BROWSER": f"{sys.executable} -c \"import sys; open('{opened}', 'w').write(sys.argv[1])\" %s"}
    proc = subprocess.Popen([sys.executable, "-m", "memdir", "--root", str(root), "ui"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 20
        while not (opened.exists() and opened.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        url = opened.read_text()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url)
        assert "Flock: the launch" in call("GET", url, headers={"Accept": "text/html"}).text
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_version_from_the_history_can_be_restored_and_the_feed_filters(root: Path) -> None:
    agent = memdir.open(root, actor="mcp:claude")
    agent.write("project/flock.md", "Flock launches on 2026-11-01.\n")
    with Running(root) as srv:
        b = Browser(srv.url)
        _, _, html = b.get("/ui/history/project/flock.md")
        [first, second] = [int(s) for s in re.findall(r'name="a" value="(\d+)"', html)][::-1]
        assert f"From the version after #{first} to the version after #{second}" in html
        version = agent.read("project/flock.md").version
        status, url, html = b.post("/ui/restore/project/flock.md", {"seq": str(first), "version": version})
        assert url == srv.url + "/ui/file/project/flock.md" and f"as it was after change #{first}" in html
        assert agent.read("project/flock.md").body.startswith("Flock launches on 2026-12-15;")
        status, _, html = b.post("/ui/restore/project/flock.md", {"seq": str(first), "version": version})
        assert "changed since it was read" in html  # a stale page restores nothing
        _, _, html = b.get("/ui/changes?actor=mcp%3Aclaude&since=today")
        assert re.findall(r'<span class="seq">#(\d+)</span>', html) == [str(second)]
        _, _, html = b.get("/ui/changes?path=reference")
        assert "reference/stripe-webhooks.md" in html and "project/flock.md</a>" not in html
    agent.close()


def test_after_a_form_the_page_goes_only_to_its_own_paths() -> None:
    from memdir.web.page import local

    assert [local(u) for u in ["/ui/changes?actor=a", "//evil.example", "/\t/evil.example", "/\\evil", "https://x"]] == [
        "/ui/changes?actor=a", "/", "/", "/", "/"]


def test_a_flood_of_anonymous_logins_pushes_out_no_logged_in_session(root: Path) -> None:
    with Served(root, env={"MEMDIR_TOKEN": TOKEN}) as srv:
        b = Browser(srv.url)
        b.get("/ui/login")
        status, url, _ = b.post("/ui/login", {"token": TOKEN, "next": "/"})
        assert (status, url) == (200, srv.url + "/")
        port = int(srv.url.rsplit(":", 1)[1])
        statuses: list[int] = []

        def stranger(n: int) -> None:  # no cookie kept: every request opens a new login session
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for _ in range(n):
                conn.request("GET", "/ui/login", headers={"Accept": "text/html"})
                answer = conn.getresponse()
                answer.read()
                statuses.append(answer.status)
            conn.close()

        each = MAX_PENDING // 2 + 1  # twice as many strangers as pending sessions are kept: the first ones are pushed out
        threads = [threading.Thread(target=stranger, args=(each,)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(statuses) == 4 * each > 2 * MAX_PENDING and set(statuses) == {200}
        status, url, html = b.get("/ui/file/project/flock.md")
        assert (status, url) == (200, srv.url + "/ui/file/project/flock.md") and "Flock launches" in html
        status, _, _ = b.post("/ui/logout", {})  # the session's form token still holds too
        assert b.get("/")[1].startswith(srv.url + "/ui/login")


def test_the_cookie_is_secure_behind_a_trusted_tls_proxy_only(root: Path) -> None:
    def cookie(url: str, headers: dict[str, str]) -> str:
        answer = call("GET", url + "/ui/login", headers={"Accept": "text/html", **headers})
        assert answer.status == 200
        return answer.headers["set-cookie"]

    https = [{"X-Forwarded-Proto": "https"}, {"Forwarded": 'for="[2001:db8::7]:4711";proto=https'}]
    with Served(root, env={"MEMDIR_TOKEN": TOKEN}) as srv:  # no proxy trusted: the headers are anyone's to send
        assert all("secure" not in cookie(srv.url, h).lower() for h in [{}, *https])
    with Served(root, "--trusted-proxy", "127.0.0.1", env={"MEMDIR_TOKEN": TOKEN}) as srv:
        assert all("; secure" in cookie(srv.url, h).lower() for h in https)
        assert "secure" not in cookie(srv.url, {}).lower()  # the proxy's own plain http
        assert "secure" not in cookie(srv.url, {"X-Forwarded-Proto": "http"}).lower()
    with Served(root, "--trusted-proxy", "10.0.0.0/8", env={"MEMDIR_TOKEN": TOKEN}) as srv:  # another proxy
        assert all("secure" not in cookie(srv.url, h).lower() for h in https)


def test_text_a_person_saves_on_the_page_keeps_its_relative_dates(root: Path) -> None:
    with Running(root) as srv:
        b = Browser(srv.url)
        b.get("/ui/new?folder=user/")
        status, _, html = b.post("/ui/new", {"path": "user/trip", "name": "", "description": "", "type": "user",
                                            "tags": "", "body": "We booked it a few weeks ago; we leave next Friday."})
        assert status == 200 and "Created user/trip.md." in html
        with memdir.open(root) as md:  # a hand edit is kept as written (issue 21, item 13)
            assert md.read("user/trip.md").body == "We booked it a few weeks ago; we leave next Friday.\n"


def test_the_page_flags_a_long_file_and_frontmatter_broken_by_hand(root: Path) -> None:
    (root / "checklist.md").write_text("# Release\n" + "".join(f"- step {i}\n" for i in range(260)))
    text = (root / "project" / "flock.md").read_text()
    (root / "project" / "flock.md").write_text(text.replace("type: project", "type: project: launch"))
    with Running(root) as srv:
        b = Browser(srv.url)
        status, _, html = b.get("/ui/file/checklist.md")
        assert status == 200 and "261 lines, over the 200 an agent may write: kept whole;" in html
        status, _, html = b.get("/ui/file/project/flock.md")
        assert status == 200 and "project/flock.md: frontmatter is not valid YAML at line " in html
        assert "frontmatter is not valid YAML" not in b.get("/ui/file/reference/stripe-webhooks.md")[2]
        md = srv.memories.of(Principal("default"))
        deadline = time.monotonic() + 10
        while not md.history("project/flock.md")[0].op == "external":  # the server's watcher journals the edit
            assert time.monotonic() < deadline, "the hand edit was never journaled"
            md.sync(["project/flock.md"])
        assert md.history("project/flock.md")[0].actor == f"external:{getpass.getuser()}"  # not the server's
        assert md.actor.startswith("http:")


# ---------------------------------------------------------------- the third hardening round

JWT_SECRET = b"a-shared-secret-of-at-least-32-bytes!!"


def test_a_session_a_jwt_made_ends_when_the_token_does(root: Path) -> None:
    import jwt

    from memdir.faces.bearer import Verifier

    principals = Principals(Principal("default"))
    principals.verifier = Verifier(audience="memdir", secret=JWT_SECRET)
    exp = int(time.time()) + 300
    token = jwt.encode({"sub": "alice", "tenant": "acme", "aud": "memdir", "exp": exp}, JWT_SECRET, algorithm="HS256")
    with Running(root, principals) as srv:
        b = Browser(srv.url)
        b.get("/ui/login")
        status, url, _ = b.post("/ui/login", {"token": token, "next": "/ui/list"})
        assert (status, url) == (200, srv.url + "/ui/list")
        sessions = srv.server.config.app.page.sessions
        sessions.clock = lambda: exp - 1.0  # the token still holds
        assert b.get("/ui/list")[1] == srv.url + "/ui/list"
        sessions.clock = lambda: exp + 1.0  # it has expired: so has the session (before: 12 h after its last use)
        assert b.get("/ui/list")[1].startswith(srv.url + "/ui/login")


def test_the_page_goes_on_after_the_server_closed_the_memory_it_used(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    from memdir.faces import auth

    monkeypatch.setattr(auth, "MAX_OPEN", 1)  # one memory open: each new principal closes the last one's
    monkeypatch.setattr(auth, "RETIRE_SECONDS", 0.0)
    principals = Principals(Principal("default"))
    tokens = {name: f"{name}-token-0123456789" for name in ("alice", "bob", "carol")}
    for name, token in tokens.items():
        principals.add(auth.digest(token), Principal(name, name), "test")
    with Running(tmp_path / "served", principals) as srv:
        b = Browser(srv.url)
        b.get("/ui/login")
        b.post("/ui/login", {"token": tokens["alice"], "next": "/ui/list"})
        assert b.get("/ui/new")[0] == 200
        for name in ("bob", "carol"):  # alice's memory is let go of, then closed
            assert call("GET", f"{srv.url}/v1/files", token=tokens[name]).status == 200
        status, url, html = b.post("/ui/new", {"path": "notes/after.md", "body": "written after the eviction"})
        assert status == 200 and "notes/after.md" in url, html  # before: 503 until the server restarted
        assert (tmp_path / "served" / "tenants" / "alice" / "notes" / "after.md").exists()


def test_the_page_works_whichever_worker_answers(root: Path) -> None:
    """`serve --workers 2`: the session, its CSRF token and its messages are the server's, not one worker's."""
    with Served(root, "--workers", "2", env={"MEMDIR_HEADER_TIMEOUT": "10"}) as srv:
        pids: set[int] = set()
        deadline = time.monotonic() + 300
        while len(pids) < 2:  # workers start after the banner: a request sent before may time out while they import
            assert time.monotonic() < deadline, "the workers never started"
            try:
                pids.add(call("GET", f"{srv.url}/healthz").json["pid"])
            except OSError:
                pass
        b = Browser(srv.url)
        assert b.get("/ui/new")[0] == 200  # the form holds the CSRF token
        answers = [b.post("/ui/new", {"path": f"notes/n{i}.md", "body": f"note {i}"})[0] for i in range(12)]
    assert answers == [200] * 12  # before: a form posted to the worker that did not make the session was 403
    assert sorted(p.name for p in (root / "notes").iterdir()) == sorted(f"n{i}.md" for i in range(12))


def test_forgetting_from_the_page_takes_the_right_and_a_confirmation_that_it_cannot_be_undone(root: Path) -> None:
    from memdir.faces.auth import digest

    keeper, agent = "keeper-page-token-0123456789", "agent-page-token-01234567890"
    principals = Principals(Principal("default"))
    principals.add(digest(keeper), Principal("keeper", forget=True), "test")
    principals.add(digest(agent), Principal("agent"), "test")
    with memdir.open(root) as md:
        md.write("project/flock.md", "Flock launches on 2026-12-15; the vault code is 4471.\n")
    with Running(root, principals) as srv:
        b = Browser(srv.url)
        b.get("/ui/login")
        b.post("/ui/login", {"token": agent, "next": "/ui/file/project/flock.md"})
        _, _, html = b.get("/ui/file/project/flock.md")
        assert "Forget for good" not in html  # no right, no button
        status, _, html = b.get("/ui/forget/project/flock.md")
        assert status == 403 and "may not forget" in html
        status, _, html = b.post("/ui/forget/project/flock.md", {"confirm": "cannot-be-undone"})
        assert status == 403 and (root / "project" / "flock.md").exists()

        b = Browser(srv.url)
        b.get("/ui/login")
        b.post("/ui/login", {"token": keeper, "next": "/ui/file/project/flock.md"})
        _, _, html = b.get("/ui/file/project/flock.md")
        assert 'href="/ui/forget/project/flock.md"' in html
        status, _, html = b.get("/ui/forget/project/flock.md")
        assert status == 200 and "This cannot be undone" in html and "<code>project/flock.md</code>" in html
        assert "2 journal records of its content" in html  # the fixture's write and the one above
        status, _, html = b.post("/ui/forget/project/flock.md", {})  # the box not ticked
        assert status == 400 and "nothing was forgotten" in html and (root / "project" / "flock.md").exists()
        status, url, html = b.post("/ui/forget/project/flock.md", {"confirm": "cannot-be-undone"}, csrf=False)
        assert status == 403 and (root / "project" / "flock.md").exists()  # a forged form changes nothing
        b.get("/ui/forget/project/flock.md")
        status, url, html = b.post("/ui/forget/project/flock.md", {"confirm": "cannot-be-undone"})
        assert (status, url) == (200, srv.url + "/")  # its folder is empty now
        assert "Forgot project/flock.md for good" in html and "cannot be undone" in html
    assert not (root / "project" / "flock.md").exists()
    with memdir.open(root) as md:
        [rec] = md.history("project/flock.md")
        assert (rec.op, rec.actor, rec.old, rec.new) == ("forget", "web:keeper", None, None)
        assert not any(b"4471" in (r.old or b"") + (r.new or b"") for r in md.history())
