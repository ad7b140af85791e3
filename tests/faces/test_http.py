"""The HTTP API (/v1): a real server on loopback, called as an app would call it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from openapi_spec_validator import validate
from serving import Browser, Running, Served, call

from memdir import InvalidArgument, RateLimited
from memdir.faces.auth import Memories, Principal, Principals, check_bind, digest, parse_bind
from memdir.faces.cli import main
from memdir.faces.http import Api
from memdir.search import embed

ALICE, BOB, ADMIN = "alice-token-0123456789", "bob-token-0123456789ab", "admin-token-0123456789"
NOTE = {"body": "Launch date: 2026-12-15.\n", "description": "Flock: route planner", "type": "project"}


@pytest.fixture
def server(root: Path) -> Iterator[Running]:
    with Running(root) as s:
        yield s


def test_write_then_read_as_json_and_as_markdown(server: Running) -> None:
    url = f"{server.url}/v1/files/project/flock.md"
    put = call("PUT", url, NOTE)
    assert put.status == 201
    assert put.json == {"path": "project/flock.md", "change": "created", "version": put.json["version"], "lines": 7,
                        "size": put.json["size"]}
    assert put.headers["etag"] == f'"{put.json["version"]}"'

    got = call("GET", url)
    assert got.status == 200 and got.headers["etag"] == put.headers["etag"]
    assert {k: got.json[k] for k in ("path", "description", "type", "body", "version")} == {
        "path": "project/flock.md", "description": "Flock: route planner", "type": "project",
        "body": "Launch date: 2026-12-15.\n", "version": put.json["version"],
    }
    raw = call("GET", url, headers={"Accept": "text/markdown"})
    assert raw.headers["content-type"].startswith("text/markdown")
    assert raw.text == got.json["text"] and raw.text.startswith("---\ndescription: 'Flock: route planner'\n")

    again = call("PUT", url, NOTE)
    assert (again.status, again.json["change"]) == (200, "unchanged")
    replaced = call("PUT", url, "---\ndescription: Flock, moved\n---\nLaunch moved to 2027-01-10.\n")
    assert (replaced.status, replaced.json["change"]) == (200, "updated")
    assert call("GET", url).json["description"] == "Flock, moved"


def test_etags_make_writes_compare_and_swap(server: Running) -> None:
    url = f"{server.url}/v1/files/project/flock.md"
    first = call("PUT", url, NOTE, headers={"If-None-Match": "*"})
    assert first.status == 201
    tag = first.headers["etag"]
    taken = call("PUT", url, NOTE, headers={"If-None-Match": "*"})
    assert taken.status == 412 and taken.error[0] == "Conflict" and "already exists" in taken.error[1]

    second = call("PUT", url, {"body": "Beta users: 40.\n"}, headers={"If-Match": tag})
    assert second.status == 200
    stale = call("PUT", url, {"body": "Lost update.\n"}, headers={"If-Match": tag})
    assert stale.status == 412
    assert stale.error == ("Conflict", f"project/flock.md changed since it was read (version {tag.strip(chr(34))} is now "
                                       f"{second.json['version']}); read it again and retry")
    assert call("GET", url).json["body"] == "Beta users: 40.\n"

    assert call("GET", url, headers={"If-None-Match": second.headers["etag"]}).status == 304
    assert call("DELETE", url, headers={"If-Match": tag}).status == 412
    assert call("PUT", f"{server.url}/v1/files/new.md", NOTE, headers={"If-Match": "*"}).status == 412
    assert call("DELETE", url, headers={"If-Match": second.headers["etag"]}).status == 200


def test_delete_history_and_undo(server: Running) -> None:
    url = f"{server.url}/v1/files/project/flock.md"
    call("PUT", url, NOTE)
    gone = call("DELETE", url)
    assert gone.json == {"path": "project/flock.md", "change": "deleted", "lines": 7, "undo": "POST /v1/undo/project/flock.md"}
    assert call("GET", url).error[0] == "NotFound"
    assert call("GET", url).status == 404
    back = call("POST", f"{server.url}/v1/undo/project/flock.md")
    assert (back.status, back.json["change"]) == (200, "restored")
    assert call("GET", url).json["body"] == NOTE["body"]

    records = call("GET", f"{server.url}/v1/history/project/flock.md").json["records"]
    assert [r["op"] for r in records] == ["undo", "delete", "write"]
    assert {r["actor"] for r in records} == {records[0]["actor"]} and records[0]["actor"].startswith("http:")
    with_content = call("GET", f"{server.url}/v1/history/project/flock.md?limit=1&content=true").json["records"]
    assert len(with_content) == 1 and with_content[0]["new"].endswith(NOTE["body"])
    assert len(call("GET", f"{server.url}/v1/history").json["records"]) == 3


def test_index_and_listing(server: Running) -> None:
    call("PUT", f"{server.url}/v1/files/project/flock.md", NOTE)
    call("PUT", f"{server.url}/v1/files/user/profile.md", {"body": "Prefers metric units.\n", "type": "user"})
    index = call("GET", f"{server.url}/v1/index")
    assert index.json["folder"] == "" and "[flock](project/flock.md) — Flock: route planner" in index.json["text"]
    raw = call("GET", f"{server.url}/v1/index", headers={"Accept": "text/markdown"})
    assert raw.text == index.json["text"]
    assert "profile" not in call("GET", f"{server.url}/v1/index?folder=project/").json["text"]
    listed = call("GET", f"{server.url}/v1/files?folder=user/").json
    assert [f["path"] for f in listed["files"]] == ["user/profile.md"]
    assert [f["path"] for f in call("GET", f"{server.url}/v1/files").json["files"]] == ["project/flock.md", "user/profile.md"]


def test_answers_follow_edits_made_by_hand(server: Running, root: Path) -> None:
    call("PUT", f"{server.url}/v1/files/project/flock.md", NOTE)
    flock = root / "project" / "flock.md"
    flock.write_text(flock.read_text().replace("Flock: route planner", "Flock: route and fuel planner"))
    (root / "project" / "added.md").write_text("# Added in an editor\n")
    deadline = time.monotonic() + 10
    while "Added in an editor" not in call("GET", f"{server.url}/v1/index").json["text"]:
        assert time.monotonic() < deadline, "the server did not see the hand edit"
        time.sleep(0.02)
    assert "route and fuel planner" in call("GET", f"{server.url}/v1/index").json["text"]
    listed = {f["path"]: f for f in call("GET", f"{server.url}/v1/files?folder=project/").json["files"]}
    assert sorted(listed) == ["project/added.md", "project/flock.md"]
    assert call("GET", f"{server.url}/v1/files/project/flock.md").json["version"] == listed["project/flock.md"]["version"]


def test_search(server: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "available", lambda: False)  # the server runs in this process: as without the extra
    call("PUT", f"{server.url}/v1/files/project/flock.md", NOTE)
    found = call("GET", f"{server.url}/v1/search?q=launch&k=5")
    assert found.status == 200
    assert [h["path"] for h in found.json["hits"]] == ["project/flock.md"]
    assert call("GET", f"{server.url}/v1/search?q=").status == 400
    assert call("GET", f"{server.url}/v1/search?q=x&k=0").status == 400
    hit = found.json["hits"][0]
    assert hit["line"] <= hit["end_line"] and "updated" in hit and "type" in hit
    assert call("GET", f"{server.url}/v1/search?q=launch&type=user").json["hits"] == []
    assert call("GET", f"{server.url}/v1/search?q=launch&since=2999-01-01").json["hits"] == []
    assert call("GET", f"{server.url}/v1/search?q=launch&since=soon").status == 400
    refused = call("GET", f"{server.url}/v1/search?q=launch&mode=semantic")
    assert refused.status == 400 and "pip install 'memdir[semantic]'" in refused.json["error"]["message"]
    assert call("GET", f"{server.url}/v1/search?q=" + "x" * 5000).status == 413  # LimitExceeded


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status", "kind"),
    [
        ("GET", "/v1/files/../etc/passwd.md", None, {}, 400, "InvalidPath"),
        ("GET", "/v1/files/project/notes.txt", None, {}, 400, "InvalidPath"),
        ("PUT", "/v1/files/MEMORY.md", NOTE, {}, 400, "InvalidPath"),
        ("PUT", "/v1/files/a.md", {"body": "x\n" * 300}, {}, 413, "LimitExceeded"),
        ("PUT", "/v1/files/a.md", {"body": "x", "type": "gossip"}, {}, 400, "InvalidMemory"),
        ("PUT", "/v1/files/a.md", {"text": "x"}, {}, 400, "BadRequest"),
        ("PUT", "/v1/files/a.md", {"body": 3}, {}, 400, "BadRequest"),
        ("PUT", "/v1/files/a.md", b"{not json", {"Content-Type": "application/json"}, 400, "BadRequest"),
        ("PUT", "/v1/files/a.md", b"x", {"Content-Type": "application/xml"}, 415, "UnsupportedMediaType"),
        ("PUT", "/v1/files/a.md", b"x" * (1024 * 1024 + 1), {"Content-Type": "text/markdown"}, 413, "LimitExceeded"),
        ("PUT", "/v1/files/a.md", {"body": "key: AKIAIOSFODNN7EXAMPLE\n"}, {}, 400, "InvalidMemory"),
        ("PUT", "/v1/files/a.md", NOTE, {"If-Match": 'W/"abc"'}, 400, "BadRequest"),
        ("DELETE", "/v1/files/a.md", None, {}, 404, "NotFound"),
        ("POST", "/v1/undo/a.md", None, {}, 404, "NotFound"),
        ("GET", "/v1/history?limit=0", None, {}, 400, "BadRequest"),
        ("GET", "/v1/nothing", None, {}, 404, "NotFound"),
        ("POST", "/v1/index", None, {}, 405, "MethodNotAllowed"),
    ],
)
def test_refusals_are_json_with_a_fitting_status(
    server: Running, method: str, path: str, body: object, headers: dict[str, str], status: int, kind: str
) -> None:
    reply = call(method, server.url + path, body, headers)
    assert (reply.status, reply.error[0]) == (status, kind), reply.body
    assert "\n" not in reply.error[1]


def test_the_secret_guard_refuses_credentials_without_echoing_them(server: Running) -> None:
    reply = call("PUT", f"{server.url}/v1/files/a.md", {"body": "key: AKIAIOSFODNN7EXAMPLE\n"})
    assert reply.status == 400
    assert "memories must not hold credentials" in reply.error[1] and "AKIA" not in reply.error[1]
    assert call("GET", f"{server.url}/v1/files/a.md").status == 404


def test_writes_are_rate_limited_per_tenant(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_WRITES_PER_MINUTE", "2")
    with Running(root) as s:
        assert [call("PUT", f"{s.url}/v1/files/n{i}.md", {"body": "x"}).status for i in range(2)] == [201, 201]
        limited = call("PUT", f"{s.url}/v1/files/n2.md", {"body": "x"})
        assert limited.status == 429 and limited.error[0] == "RateLimited"
        assert 1 <= int(limited.headers["retry-after"]) <= 30
        assert "more than 2 writes per minute" in limited.error[1]


def test_the_rate_limit_message_and_retry_after_agree(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_WRITES_PER_MINUTE", "1")
    with Running(root) as s:
        assert call("PUT", f"{s.url}/v1/files/a.md", {"body": "x"}).status == 201
        limited = call("PUT", f"{s.url}/v1/files/b.md", {"body": "x"})
        seconds = int(limited.headers["retry-after"])
        assert limited.status == 429 and f"wait {seconds}s" in limited.error[1]


def test_oauth_metadata_probes_get_404_not_401(root: Path) -> None:
    """MCP clients probe /.well-known/oauth-protected-resource before using a token; 401 there confuses them."""
    principals = Principals(Principal("default"))
    principals.add_token(ALICE)
    with Running(root, principals) as s:
        probe = call("GET", f"{s.url}/.well-known/oauth-protected-resource")
        assert probe.status == 404 and "bearer token, not OAuth" in probe.error[1]
        assert call("GET", f"{s.url}/v1/index").status == 401


def test_a_read_does_not_report_a_change(server: Running) -> None:
    call("PUT", f"{server.url}/v1/files/a.md", {"body": "x"})
    assert "change" not in call("GET", f"{server.url}/v1/files/a.md").json


def test_the_agent_default_is_sixty_writes_a_minute(root: Path) -> None:
    memories = Memories(root, transport="http")
    try:
        md = memories.of(Principal("default"))
        started, written = time.monotonic(), 0
        with pytest.raises(RateLimited, match="more than 60 writes per minute"):
            for written in range(200):
                md.write(f"n{written}.md", "x")
        elapsed = time.monotonic() - started  # the bucket refills one write a second while these run
        assert 60 <= written <= 60 + elapsed + 1
        assert not (root / f"n{written}.md").exists() and len(md.list()) == written
    finally:
        memories.close()


# ---------------------------------------------------------------- auth and scopes


def household(tmp_path: Path) -> Principals:
    auth = tmp_path / "auth.toml"
    auth.write_text(f"""
[tokens.alice]
token = "{ALICE}"
scope-read = ["household/"]
scope-write = ["people/alice/"]

[tokens.bob]
token_sha256 = "{digest(BOB).hex()}"
scope-read = ["household/"]
scope-write = ["people/bob/"]

[tokens.admin]
token = "{ADMIN}"
""")
    principals = Principals(Principal("default"))
    principals.load(auth)
    return principals


def test_a_token_is_required_when_configured(root: Path) -> None:
    principals = Principals(Principal("default"))
    principals.add_token(ADMIN)
    with Running(root, principals) as s:
        missing = call("GET", f"{s.url}/v1/index")
        assert missing.status == 401 and missing.headers["www-authenticate"].startswith("Bearer")
        assert missing.error == ("Unauthorized", "this server needs a bearer token: send the header 'Authorization: Bearer <token>'")
        assert call("GET", f"{s.url}/v1/index", token=ALICE).status == 401
        assert call("GET", f"{s.url}/v1/index", headers={"Authorization": f"Basic {ADMIN}"}).status == 401
        assert call("GET", f"{s.url}/openapi.json").status == 401
        assert call("GET", f"{s.url}/v1/index", token=ADMIN).status == 200


def test_tokens_map_to_scoped_principals(root: Path, tmp_path: Path) -> None:
    with Running(root, household(tmp_path)) as s:
        files = f"{s.url}/v1/files"
        assert call("PUT", f"{files}/household/groceries.md", NOTE, token=ADMIN).status == 201
        assert call("PUT", f"{files}/people/bob/gifts.md", {"body": "A bike for alice.\n"}, token=BOB).status == 201
        assert call("PUT", f"{files}/people/alice/health.md", {"body": "Penicillin allergy.\n"}, token=ALICE).status == 201

        hidden = call("GET", f"{files}/people/bob/gifts.md", token=ALICE)
        assert hidden.status == 404 and hidden.error[0] == "NotFound"  # not 403: a scope does not reveal what exists
        outside = call("PUT", f"{files}/people/bob/gifts.md", {"body": "x"}, token=ALICE)
        assert outside.status == 403 and outside.error[0] == "Forbidden"
        assert call("PUT", f"{files}/household/groceries.md", {"body": "x"}, token=ALICE).status == 403
        assert call("DELETE", f"{files}/people/bob/gifts.md", token=ALICE).status == 403

        assert [f["path"] for f in call("GET", files, token=ALICE).json["files"]] == [
            "household/groceries.md", "people/alice/health.md"]
        assert "bob" not in call("GET", f"{s.url}/v1/index", token=ALICE).json["text"]
        assert call("GET", f"{s.url}/v1/history/people/bob/gifts.md", token=ALICE).json["records"] == []
        assert call("GET", f"{files}/people/bob/gifts.md", token=ADMIN).status == 200

        actors = {r["path"]: r["actor"] for r in call("GET", f"{s.url}/v1/history", token=ADMIN).json["records"]}
        assert actors == {"household/groceries.md": "http:admin", "people/bob/gifts.md": "http:bob",
                          "people/alice/health.md": "http:alice"}


def test_a_loopback_server_refuses_foreign_host_names(server: Running) -> None:
    reply = call("GET", f"{server.url}/v1/index", headers={"Host": "attacker.example"})
    assert reply.status == 421
    assert call("GET", f"{server.url}/v1/index", headers={"Host": "localhost"}).status == 200


EVIL = {"Origin": "https://evil.example"}


@pytest.mark.parametrize("token", [None, ADMIN])
def test_a_web_page_of_another_site_cannot_change_memory(root: Path, token: str | None) -> None:
    principals = Principals(Principal("default"))
    if token:
        principals.add_token(token)
    with Running(root, principals) as s:
        url = f"{s.url}/v1/files/a.md"
        assert call("PUT", url, {"body": "first\n"}, token=token).status == 201
        assert call("PUT", url, {"body": "second\n"}, token=token).status == 200
        before = (root / "a.md").read_text()
        attempts = [  # what a page's fetch() can send, no-cors or not, and the headers a browser adds
            call("POST", f"{s.url}/v1/undo/a.md", "", headers={**EVIL, "Content-Type": "text/plain"}, token=token),
            call("POST", f"{s.url}/v1/undo/a.md", headers=EVIL, token=token),
            call("DELETE", url, headers=EVIL, token=token),
            call("PUT", url, {"body": "evil\n"}, headers=EVIL, token=token),
            call("DELETE", url, headers={"Sec-Fetch-Site": "cross-site"}, token=token),
            call("DELETE", url, headers={"Sec-Fetch-Site": "same-site"}, token=token),
            call("DELETE", url, headers={"Origin": "null"}, token=token),
            call("DELETE", url, headers={"Origin": "http://localhost:1"}, token=token),
            call("POST", f"{s.url}/v1/undo/a.md", "x=1", headers={"Content-Type": "application/x-www-form-urlencoded"}, token=token),
            call("POST", f"{s.url}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=EVIL, token=token),
        ]
        for reply in attempts:
            assert reply.status == 403 and reply.error[0] == "Forbidden", reply.body
            assert reply.error[1].startswith("cross-site request refused: ")
        assert (root / "a.md").read_text() == before
        assert [r["op"] for r in call("GET", f"{s.url}/v1/history", token=token).json["records"]] == ["write", "write"]

        assert call("GET", url, headers=EVIL, token=token).status == 200  # a read: the browser keeps the answer from the page
        own = s.url.removeprefix("http://")
        assert call("POST", f"{s.url}/v1/undo/a.md", headers={"Origin": f"http://{own}", "Sec-Fetch-Site": "same-origin"},
                    token=token).status == 200  # this server's own page
        assert call("POST", f"{s.url}/v1/undo/a.md", token=token).status == 200  # curl, scripts, SDKs
        assert (root / "a.md").read_text() == before


def test_binding_beyond_loopback_needs_a_token(root: Path) -> None:
    open_door = Principals(Principal("default"))
    with pytest.raises(InvalidArgument, match="refusing to serve on 0.0.0.0 without a token"):
        check_bind("0.0.0.0", open_door)
    check_bind("127.0.0.1", open_door)
    check_bind("::1", open_door)
    guarded = Principals(Principal("default"))
    guarded.add_token(ADMIN)
    check_bind("0.0.0.0", guarded)

    result = CliRunner().invoke(main, ["--root", str(root), "serve", "--http", "0.0.0.0:0"])
    assert result.exit_code == 1
    assert result.output.startswith("error: refusing to serve on 0.0.0.0 without a token")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[tokens.a]\ntoken = "short"\n', "the token is 5 characters; use at least 16"),
        (f'[tokens.a]\ntoken = "{ALICE}"\ncolour = "red"\n', "unknown key 'colour'"),
        (f'[tokens.a]\ntoken = "{ALICE}"\n[tokens.b]\ntoken = "{ALICE}"\n', "b has the same token as a"),
        ('[tokens.a]\ntoken_sha256 = "abc"\n', "token_sha256 must be 64 hex digits"),
        (f'[tokens.a]\ntoken = "{ALICE}"\nscope-read = "household/"\n', "scope-read must be a list"),
        (f'[tokens.a]\ntoken = "{ALICE}"\ntenant = "Not OK"\n', "tenant 'Not OK' is not valid"),
        ("[people]\n", "expected only [tokens.NAME] tables"),
        (f'[tokens.default]\ntoken = "{ALICE}"\n', "name 'default' is not usable"),
        (f'[tokens."a b"]\ntoken = "{ALICE}"\n', "name 'a b' is not usable"),
        ("tokens = [", "is not valid TOML"),
    ],
)
def test_auth_file_mistakes_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    auth = tmp_path / "auth.toml"
    auth.write_text(text)
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        Principals(Principal("default")).load(auth)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("8765", ("127.0.0.1", 8765)), ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9000", ("::1", 9000)),
     ("localhost:1", ("localhost", 1))],
)
def test_bind_addresses(value: str, expected: tuple[str, int]) -> None:
    assert parse_bind(value) == expected


def test_a_bad_bind_address_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="expected \\[HOST:\\]PORT"):
        parse_bind("localhost:http")


def test_context(server: Running) -> None:
    call("PUT", f"{server.url}/v1/files/project/flock.md", NOTE)
    call("PUT", f"{server.url}/v1/files/feedback/no-dark.md", {"body": "Never dark themes.\n", "type": "feedback"})
    got = call("GET", f"{server.url}/v1/context?q=launch+date&budget=600&include=project/&include=nope.md")
    assert got.status == 200 and got.json["budget"] == 600 and got.json["tokens"] <= 600
    assert [(i["path"], i["layer"]) for i in got.json["included"]] == [
        ("feedback/no-dark.md", 1), ("MEMORY.md", 1), ("project/flock.md", 2)]
    assert [(d["path"], d["reason"]) for d in got.json["dropped"]] == [
        ("nope.md", "not found"), ("project/flock.md", "already in context (in included folder project/)")]
    raw = call("GET", f"{server.url}/v1/context", headers={"Accept": "text/markdown"})
    assert raw.headers["content-type"].startswith("text/markdown") and raw.text.startswith("Recalled memory, ")
    bad = call("GET", f"{server.url}/v1/context?budget=20")
    assert bad.status == 400 and bad.error == ("BadRequest", "budget='20' is not valid; use a whole number from 100 to 100000")


# ---------------------------------------------------------------- OpenAPI


def test_openapi_document_is_valid_and_matches_the_routes(server: Running) -> None:
    doc = call("GET", f"{server.url}/openapi.json").json
    validate(doc)
    assert doc["openapi"].startswith("3.1")
    documented = {(path, method.upper()) for path, item in doc["paths"].items() for method in item if method != "parameters"}
    served = {
        (route.path.replace("{path:path}", "{path}"), method)
        for route in Api(Memories(".", transport="http")).routes()
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert documented == served


def test_keep_alive_requests_are_not_held_back_by_nagle(server: Running) -> None:
    """The listening socket is TCP by number, so asyncio sets TCP_NODELAY on each connection (else ~40 ms a request)."""
    import http.client
    import socket
    import time

    from memdir.faces.http import listen

    sock = listen("127.0.0.1", 0)
    assert sock.proto == socket.IPPROTO_TCP
    sock.close()
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]))
    start = time.perf_counter()
    for _ in range(10):
        conn.request("GET", "/v1/index")
        assert conn.getresponse().read()
    conn.close()
    assert time.perf_counter() - start < 0.3  # with Nagle and delayed ACKs: over 0.4 s


def test_serve_reports_a_bad_auth_file_in_one_line(root: Path, tmp_path: Path) -> None:
    auth = tmp_path / "auth.toml"
    auth.write_text('[tokens.alice]\ntoken = "short"\n')
    result = CliRunner().invoke(main, ["--root", str(root), "serve", "--http", "127.0.0.1:0", "--auth", str(auth)])
    assert result.exit_code == 1
    assert result.output == f"error: auth file {str(auth)!r} [tokens.alice]: the token is 5 characters; use at least 16 random characters, e.g. from python -c 'import secrets; print(secrets.token_urlsafe(32))'\n"


def test_tokens_can_name_tenants(root: Path, tmp_path: Path) -> None:
    auth = tmp_path / "auth.toml"
    auth.write_text(f'[tokens.home]\ntoken = "{ALICE}"\ntenant = "home"\n\n[tokens.work]\ntoken = "{BOB}"\ntenant = "work"\n')
    principals = Principals(Principal("default"))
    principals.load(auth)
    with Running(root, principals) as s:
        assert call("PUT", f"{s.url}/v1/files/project/flock.md", NOTE, token=ALICE).status == 201
        assert call("GET", f"{s.url}/v1/files/project/flock.md", token=BOB).status == 404
        assert call("GET", f"{s.url}/v1/files", token=BOB).json["files"] == []
    assert (root / "tenants" / "home" / "project" / "flock.md").exists()
    assert not (root / "tenants" / "work" / "project").exists()


def test_docs_config_snippets_parse(tmp_path: Path) -> None:
    """The JSON and TOML blocks of the docs are valid, and the auth file example loads."""
    import json
    import tomllib

    docs = Path(__file__).resolve().parents[2] / "docs"
    readme = "\n".join(page.read_text() for page in sorted(docs.glob("*.md")))
    blocks = re.findall(r"```(json|toml)\n(.*?)```", readme, re.S)
    assert {kind for kind, _ in blocks} == {"json", "toml"}
    for kind, body in blocks:
        data = json.loads(body) if kind == "json" else tomllib.loads(body)
        if "hooks" in data:
            continue  # the Claude Code hooks snippet: tests/test_hooks.py
        if kind == "json":
            assert data["mcpServers"]["memdir"]["args"] == ["--root", "/path/to/memory", "serve"]
        elif "semantic" in data:
            from memdir.search.semantic import Settings

            assert Settings.of(data["semantic"]).private == ("people/",)
        elif "diary" in data:
            from memdir.remember.diary import Retention

            assert Retention.load(data["diary"], environ={}) == Retention(sessions=7)
        elif "sync" in data or "history" in data:  # memdir.toml tables: read by the module that reads each
            import memdir
            from memdir.core.history import Retention
            from memdir.remember import gitsync

            folder = tmp_path / next(iter(data))
            folder.mkdir()
            (folder / "memdir.toml").write_text(body)
            with memdir.open(folder) as md:
                if "sync" in data:
                    assert gitsync.settings(md) == {"auto": True, "pull_timeout": 2, "push_timeout": 60}
                else:
                    assert Retention.load(md.store, environ={}) == Retention(days=30, versions=10)
        elif "summarizer" in data:  # the agent CLI as the summariser (docs/remembering.md)
            from memdir.remember.summarize import AgentCLI, load

            assert isinstance(load(data["summarizer"], {}), AgentCLI)
        elif "tokens" in data:
            (tmp_path / "auth.toml").write_text(body)
            principals = Principals(Principal("default"))
            principals.load(tmp_path / "auth.toml")
            assert principals.authenticate("Bearer a long random string") == Principal(
                "alice", "home", ("household/",), ("people/alice/",))
        else:
            assert data["mcp_servers"]["memdir"]["args"] == ["--root", "/path/to/memory", "serve"]


def test_answers_match_the_documented_schemas(server: Running) -> None:
    """Each JSON answer validates against the schema /openapi.json gives for its route and status."""
    from jsonschema import Draft202012Validator

    doc = call("GET", f"{server.url}/openapi.json").json

    def check(route: str, method: str, reply: object) -> None:
        assert hasattr(reply, "status") and hasattr(reply, "json")
        spec = doc["paths"][route][method]["responses"][str(reply.status)]
        schema = {**spec["content"]["application/json"]["schema"], "components": doc["components"]}
        Draft202012Validator(schema).validate(reply.json)

    files = f"{server.url}/v1/files"
    check("/v1/files/{path}", "put", call("PUT", f"{files}/project/flock.md", NOTE))
    check("/v1/files/{path}", "put", call("PUT", f"{files}/project/flock.md", NOTE))
    check("/v1/files/{path}", "put", call("PUT", f"{files}/project/flock.md", NOTE, headers={"If-Match": '"x"'}))
    check("/v1/files/{path}", "get", call("GET", f"{files}/project/flock.md"))
    check("/v1/files/{path}", "get", call("GET", f"{files}/nope.md"))
    check("/v1/files", "get", call("GET", files))
    check("/v1/index", "get", call("GET", f"{server.url}/v1/index"))
    check("/v1/search", "get", call("GET", f"{server.url}/v1/search?q=launch"))
    check("/v1/context", "get", call("GET", f"{server.url}/v1/context?q=launch&include=project/"))
    check("/v1/context", "get", call("GET", f"{server.url}/v1/context?budget=5"))
    check("/v1/history/{path}", "get", call("GET", f"{server.url}/v1/history/project/flock.md?content=true"))
    check("/v1/files/{path}", "delete", call("DELETE", f"{files}/project/flock.md"))
    check("/v1/undo/{path}", "post", call("POST", f"{server.url}/v1/undo/project/flock.md"))
    check("/v1/history", "get", call("GET", f"{server.url}/v1/history"))
    talk = [{"role": "user", "content": "Our launch date is 2026-12-15."}, {"role": "assistant", "content": "Noted."}]
    check("/v1/sessions", "post", call("POST", f"{server.url}/v1/sessions", {"session_id": "s1", "transcript": talk}))
    check("/v1/sessions", "post", call("POST", f"{server.url}/v1/sessions", {"session_id": "s1", "transcript": talk}))
    check("/v1/sessions", "post", call("POST", f"{server.url}/v1/sessions", {"session_id": "s2", "transcript": 7}))


# ---------------------------------------------------------------- malformed input: one line, 400, the server goes on


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"body": "x\\ud800"}', "body holds a lone surrogate ('\\ud800' at character 2), which is not text"),
        (b'{"body": "x", "description": "\\udfff"}', "description holds a lone surrogate"),
        (b'{"body": "x", "tags": ["ok", "\\ud83d"]}', "tags.1 holds a lone surrogate"),
        (b"[" * 100_000, "the body nests too deeply to be a write"),
        (b'{"body": ' + b"[" * 50_000 + b"}", "the body nests too deeply to be a write"),
        (b"\xff\xfe{}", "the body is not UTF-8 (byte 0)"),
    ],
)
def test_malformed_json_is_a_one_line_400(server: Running, body: bytes, message: str) -> None:
    reply = call("PUT", f"{server.url}/v1/files/a.md", body, headers={"Content-Type": "application/json"})
    assert reply.status == 400 and reply.error[0] == "BadRequest" and message in reply.error[1]
    assert "\n" not in reply.error[1]
    assert call("GET", f"{server.url}/v1/files/a.md").status == 404
    assert call("GET", f"{server.url}/v1/index").status == 200  # still serving


def test_a_client_slow_to_send_its_headers_is_cut_off(root: Path) -> None:
    import socket
    import time

    with Running(root, header_timeout=0.5) as s:
        port = int(s.url.rsplit(":", 1)[1])
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET /v1/index HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        slow.settimeout(5)
        closed = False
        while time.monotonic() - started < 4:  # a header line every 0.2 s: each byte arrives, the request never ends
            try:
                slow.sendall(b"X-Slow: 1\r\n")
            except OSError:
                closed = True
                break
            time.sleep(0.2)
        if not closed:
            slow.settimeout(1)
            closed = slow.recv(1) == b""
        assert closed and time.monotonic() - started < 3
        slow.close()
        assert call("GET", f"{s.url}/v1/index").status == 200  # a normal client is served as before


def test_wrong_tokens_are_throttled_per_client_on_the_api_and_the_page(root: Path) -> None:
    from memdir.faces.auth import FAILURES, WINDOW

    def api(client: str, token: str) -> tuple[int, dict[str, str], bytes]:
        got = call("GET", srv.url + "/v1/index", token=token, headers={"X-Forwarded-For": f"198.51.100.9, {client}"})
        return got.status, got.headers, got.body

    def login(client: str, token: str) -> int:
        form = b"token=" + token.encode() + b"&csrf=x"
        return call("POST", srv.url + "/ui/login", form, headers={
            "X-Forwarded-For": client, "Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"}).status

    wrong = "wrong-token-0123456789"
    with Served(root, "--trusted-proxy", "127.0.0.1", env={"MEMDIR_TOKEN": ALICE}) as srv:
        assert [api("203.0.113.7", wrong)[0] for _ in range(FAILURES)] == [401] * FAILURES
        blocked, right = api("203.0.113.7", wrong), api("203.0.113.7", ALICE)
        assert blocked[0] == right[0] == 429 and blocked[2] == right[2]  # the right token too: nothing to learn
        assert 0 < int(blocked[1]["retry-after"]) <= WINDOW
        assert b"wrong tokens from this address" in blocked[2] and b"valid" not in blocked[2]
        assert login("203.0.113.7", ALICE) == 429  # one count for the page and the API
        assert api("203.0.113.8", ALICE)[0] == 200  # another client is not held up
        page = Browser(srv.url, {"X-Forwarded-For": "2001:db8:1:2::5"})  # wrong tokens at the login form count too
        page.get("/ui/login")
        assert [page.post("/ui/login", {"token": wrong})[0] for _ in range(FAILURES)] == [401] * FAILURES
        assert page.post("/ui/login", {"token": ALICE})[0] == 429
        assert api("2001:db8:1:2::99", ALICE)[0] == 429  # one IPv6 host's /64 is one client
    with Served(root, env={"MEMDIR_TOKEN": ALICE}) as srv:  # no proxy trusted: a forwarded address is not believed
        statuses = [api(f"203.0.113.{i}", wrong)[0] for i in range(FAILURES + 1)]
        assert statuses == [401] * FAILURES + [429]

