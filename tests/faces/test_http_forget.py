"""Forgetting over HTTP: only a principal given the right may (never by default, never an agent's tools), and a
server lets go of a tenant dropped in another process at its next request."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import Backend
from serving import Running, call

import memdir
from memdir.faces.auth import Memories, Principal, Principals
from memdir.faces.bearer import Verifier
from memdir.faces.tools import TOOLS

KEEPER, AGENT, SCOPED = "keeper-token-0123456789", "agent-token-0123456789a", "scoped-token-0123456789"
SECRET = b"a-shared-secret-of-at-least-32-bytes!!"


def principals(tmp_path: Path) -> Principals:
    auth = tmp_path / "auth.toml"
    auth.write_text(f"""
[tokens.keeper]
token = "{KEEPER}"
forget = true

[tokens.agent]
token = "{AGENT}"

[tokens.scoped]
token = "{SCOPED}"
scope-read = ["people/"]
scope-write = ["people/bob/"]
forget = true
""")
    found = Principals(Principal("default"))
    found.load(auth)
    return found


def test_only_a_principal_given_the_right_may_forget(root: Path, tmp_path: Path) -> None:
    with memdir.open(root) as md:
        md.write("people/bob/locker.md", "Bob's locker code is 4471.\n", description="bob")
        md.write("people/bob/locker.md", "Bob's locker code is 4472.\n")
        md.write("people/carol.md", "Carol's code is 4471 too.\n")
    with Running(root, principals(tmp_path)) as s:
        url = f"{s.url}/v1/forget"
        refused = call("POST", url, {"path": "people/bob/locker.md"}, token=AGENT)
        assert refused.status == 403 and "may not forget" in refused.error[1]
        assert call("GET", f"{s.url}/v1/files/people/bob/locker.md", token=AGENT).status == 200
        planned = call("POST", url, {"path": "people/bob/locker.md", "dry_run": True}, token=SCOPED)
        assert (planned.status, planned.json["records"], planned.json["done"]) == (200, 2, False)
        assert call("POST", url, {"path": "people/carol.md"}, token=SCOPED).status == 403  # outside its writes
        done = call("POST", url, {"path": "people/bob/locker.md"}, token=SCOPED)
        assert done.status == 200 and done.json["done"] and done.json["paths"] == ["people/bob/locker.md"]
        assert call("GET", f"{s.url}/v1/files/people/bob/locker.md", token=KEEPER).status == 404
        ops = [r["op"] for r in call("GET", f"{s.url}/v1/history/people/bob/locker.md", token=KEEPER).json["records"]]
        assert ops == ["forget"]
        assert call("POST", url, {"text": "4471"}, token=SCOPED).status == 403  # redaction needs the whole tenant
        seen = call("POST", url, {"text": "4471", "dry_run": True}, token=KEEPER).json
        assert (seen["found"], seen["done"]) == (2, False)  # carol's file and its journal record
        assert call("POST", url, {"text": "4471"}, token=KEEPER).json["done"]
        assert "4471" not in call("GET", f"{s.url}/v1/files/people/carol.md", token=KEEPER).json["body"]
        for bad in ({"path": "a.md", "text": "x"}, {"colour": "red"}, {"path": 3}, ["a.md"]):
            assert call("POST", url, bad, token=KEEPER).status == 400, bad
    assert not any("forget" in t.name for t in TOOLS)  # agents' tools never forget


def test_a_scoped_forget_that_is_refused_names_no_path_outside_the_scope(root: Path, tmp_path: Path) -> None:
    with memdir.open(root) as md:  # bob's review began in hr/, which the scoped principal cannot see
        md.write("hr/reviews/bob-2026.md", "Bob's salary review: 8812.\n")
        md.rename("hr/reviews/bob-2026.md", "people/bob/review.md")
        md.write("people/carol.md", "Carol's notes.\n")
        md.rename("people/carol.md", "people/bob/carol.md")  # another name it may read but not write
    with Running(root, principals(tmp_path)) as s:
        url = f"{s.url}/v1/forget"
        for body in ({"path": "people/bob/review.md"}, {"path": "people/bob/review.md", "dry_run": True}):
            refused = call("POST", url, body, token=SCOPED)
            assert refused.status == 403 and "people/bob/review.md" in refused.error[1], refused.json
            assert "hr/" not in str(refused.json) and "bob-2026" not in str(refused.json)
        refused = call("POST", url, {"path": "people/bob/carol.md"}, token=SCOPED)
        assert refused.status == 403 and "people/carol.md" in refused.error[1]  # it may read that name
        # a path outside its writes gets the same answer whether or not it ever existed
        outside = [call("POST", url, {"path": p, "dry_run": True}, token=SCOPED) for p in
                   ("hr/reviews/bob-2026.md", "hr/reviews/nobody.md")]
        assert [r.status for r in outside] == [403, 403]
        assert outside[0].error[1].replace("bob-2026", "nobody") == outside[1].error[1]
        assert call("GET", f"{s.url}/v1/files/people/bob/review.md", token=KEEPER).status == 200  # nothing went
        assert call("POST", url, {"path": "people/bob/review.md"}, token=KEEPER).json["paths"] == [
            "hr/reviews/bob-2026.md", "people/bob/review.md"]


def test_the_right_to_forget_in_the_auth_file_and_a_jwt_scope(tmp_path: Path) -> None:
    found = {p.name: p.forget for p in principals(tmp_path).all}
    assert found == {"default": False, "keeper": True, "agent": False, "scoped": True}
    auth = tmp_path / "bad.toml"
    auth.write_text(f'[tokens.a]\ntoken = "{KEEPER}"\nforget = "yes"\n')
    with pytest.raises(memdir.InvalidArgument, match="forget must be true or false"):
        Principals(Principal("default")).load(auth)
    import jwt

    verifier = Verifier(audience="memdir", secret=SECRET)
    claims = {"sub": "ops", "tenant": "acme", "aud": "memdir", "exp": int(time.time()) + 300}
    assert verifier.principal(jwt.encode({**claims, "scope": "memdir:forget"}, SECRET)) == Principal(
        "jwt:ops", "acme", forget=True)
    assert verifier.principal(jwt.encode({**claims, "scope": "memdir:write:notes/ memdir:forget"}, SECRET)) == Principal(
        "jwt:ops", "acme", (), ("notes/",), True)
    assert not verifier.principal(jwt.encode({**claims, "scope": "memdir:write"}, SECRET)).forget  # type: ignore[union-attr]


def test_a_server_lets_go_of_a_tenant_dropped_in_another_process(backend: Backend) -> None:
    memories = Memories(backend.location, transport="http", watch=False)
    memories.recheck = 0.0  # look at every request (a server looks at most once a second)
    tenant = backend.tenant("acme") or "acme"
    alice = Principal("alice", tenant)
    try:
        md = memories.of(alice)
        md.write("notes/plan.md", "the acme plan\n")
        assert [e.path for e in memories.of(alice).list()] == ["notes/plan.md"]
        dropped = subprocess.run([sys.executable, "-m", "memdir", "db", "drop-tenant", backend.location, tenant, "--yes"],
                                 capture_output=True, text=True)
        assert dropped.returncode == 0, dropped.stderr
        again = memories.of(alice)
        assert again is not md and again.list() == [] and again.history() == []
        again.write("notes/new.md", "a new start\n")  # the tenant begins again, from nothing
        assert [r.path for r in memories.of(alice).history()] == ["notes/new.md"]
    finally:
        memories.close()
