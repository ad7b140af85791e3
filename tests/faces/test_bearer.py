"""JWT bearer tokens a SaaS issues: secret or JWKS, claims named as configured, expiry and audience checked."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from conftest import Backend
from cryptography.hazmat.primitives.asymmetric import rsa
from serving import Running, call

import memdir
from memdir import InvalidArgument
from memdir.faces.auth import Principal, Principals
from memdir.faces.bearer import Claims, Verifier

SECRET = b"a-shared-secret-of-at-least-32-bytes!!"


def token(claims: dict[str, Any], key: Any = SECRET, algorithm: str = "HS256", **headers: Any) -> str:
    base = {"sub": "alice@acme.example", "tenant": "acme", "aud": "memdir", "exp": int(time.time()) + 300}
    return jwt.encode({**base, **claims}, key, algorithm=algorithm, headers=headers or None)


@pytest.fixture
def verifier() -> Verifier:
    return Verifier(audience="memdir", secret=SECRET)


def test_a_valid_token_names_tenant_principal_and_scopes(verifier: Verifier) -> None:
    assert verifier.principal(token({})) == Principal("jwt:alice@acme.example", "acme")
    scoped = verifier.principal(token({"scope": "openid memdir:read:household/ memdir:write:people/alice/"}))
    assert scoped == Principal("jwt:alice@acme.example", "acme", ("household/",), ("people/alice/",))
    listed = verifier.principal(token({"scope": ["memdir:read:notes/"]}))
    assert listed == Principal("jwt:alice@acme.example", "acme", ("notes/",), ())


@pytest.mark.parametrize("claims", [
    {"exp": int(time.time()) - 3600},  # expired
    {"aud": "another-service"},  # for someone else
    {"tenant": "Not A Tenant"},  # a tenant memdir cannot name
    {"tenant": None},  # no tenant
    {"sub": "bad name with spaces"},
    {"sub": "default"},  # the server's own principal
    {"nbf": int(time.time()) + 3600},  # not yet valid
    {"scope": 42},
    {"tenant": "default"},  # where SQLite, PostgreSQL and S3 keep the memory without a tenant
    {"tenant": "acme\n"},  # a trailing newline (a pattern ending in $ let it in)
    {"sub": "alice\n"},
], ids=["expired", "audience", "tenant", "no-tenant", "principal", "default", "not-yet", "scope-type", "default-tenant",
        "tenant-newline", "principal-newline"])
def test_tokens_with_a_bad_claim_are_refused(verifier: Verifier, claims: dict[str, Any]) -> None:
    assert verifier.principal(token({k: v for k, v in claims.items()})) is None


def test_tokens_without_exp_or_aud_or_with_another_key_or_alg_none_are_refused(verifier: Verifier) -> None:
    no_exp = jwt.encode({"sub": "a", "tenant": "acme", "aud": "memdir"}, SECRET, algorithm="HS256")
    no_aud = jwt.encode({"sub": "a", "tenant": "acme", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    other_key = token({}, key=b"another-secret-of-at-least-32-bytes-long")
    unsigned = jwt.encode({"sub": "a", "tenant": "acme", "aud": "memdir", "exp": int(time.time()) + 60}, None,
                          algorithm="none")
    for bad in (no_exp, no_aud, other_key, unsigned, "not.a.token", token({})[:-4] + "AAAA"):
        assert verifier.principal(bad) is None, bad


def test_claim_names_and_the_issuer_are_configurable() -> None:
    v = Verifier(audience="memdir", secret=SECRET, issuer="https://auth.acme.example",
                 claims=Claims.parse("tenant=org_id, principal=email, scopes=permissions"))
    good = token({"org_id": "globex", "email": "bob@globex.example", "permissions": ["memdir:write:bob/"],
                  "iss": "https://auth.acme.example"})
    assert v.principal(good) == Principal("jwt:bob@globex.example", "globex", (), ("bob/",))
    assert v.principal(token({"org_id": "globex", "email": "bob@globex.example", "iss": "https://evil.example"})) is None
    with pytest.raises(InvalidArgument, match="expected KEY=CLAIM pairs"):
        Claims.parse("tenant")


def test_a_jwks_file_verifies_tokens_signed_by_its_keys(tmp_path: Path) -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]}))
    v = Verifier(audience="memdir", jwks=str(tmp_path / "jwks.json"))
    assert v.principal(token({}, key=private, algorithm="RS256", kid="k1")) == Principal("jwt:alice@acme.example", "acme")
    assert v.principal(token({}, key=private, algorithm="RS256", kid="k2")) is None  # a key it does not hold
    # The public key used as an HMAC secret (the classic confusion attack) is refused.
    assert v.principal(_hs256_by_hand({"kid": "k1"}, json.dumps(public).encode())) is None


def _hs256_by_hand(header: dict[str, Any], key: bytes) -> str:
    """A token PyJWT itself would refuse to make: HS256 keyed with a public key."""
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    claims = {"sub": "mallory", "tenant": "acme", "aud": "memdir", "exp": int(time.time()) + 300}
    signed = b64(json.dumps({"alg": "HS256", "typ": "JWT", **header}).encode()) + "." + b64(json.dumps(claims).encode())
    return signed + "." + b64(hmac.new(key, signed.encode(), hashlib.sha256).digest())


def test_a_verifier_refuses_to_start_without_what_it_needs(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="give one key for JWTs"):
        Verifier(audience="memdir")
    with pytest.raises(InvalidArgument, match="need an audience"):
        Verifier(audience="", secret=SECRET)
    with pytest.raises(InvalidArgument, match="the JWT secret is 5 bytes; use at least 32"):
        Verifier(audience="memdir", secret=b"short")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InvalidArgument, match="holds no usable key"):
        Verifier(audience="memdir", jwks=str(tmp_path / "bad.json"))


def test_the_server_serves_each_token_its_tenant_and_refuses_alike_whatever_failed(tmp_path: Path) -> None:
    principals = Principals(Principal("default"))
    principals.add_token("a-static-token-for-the-operator")
    principals.verifier = Verifier(audience="memdir", secret=SECRET)
    with Running(tmp_path / "memory", principals) as s:
        acme = token({"tenant": "acme", "scope": "memdir:write:notes/"})
        globex = token({"tenant": "globex", "sub": "carol"})
        assert call("PUT", f"{s.url}/v1/files/notes/a.md", {"body": "acme's note"}, token=acme).status == 201
        assert call("PUT", f"{s.url}/v1/files/other.md", {"body": "x"}, token=acme).status == 403  # outside its scope
        assert call("GET", f"{s.url}/v1/files", token=globex).json["files"] == []
        assert call("GET", f"{s.url}/v1/files/notes/a.md", token=globex).status == 404
        assert (tmp_path / "memory" / "tenants" / "acme" / "notes" / "a.md").exists()
        assert call("GET", f"{s.url}/v1/index", token="a-static-token-for-the-operator").status == 200
        refusals = {call("GET", f"{s.url}/v1/index", token=t).body
                    for t in (token({"exp": int(time.time()) - 60}), token({"aud": "x"}), token({}, key=b"k" * 40),
                              "garbage-garbage-garbage")}
        assert len(refusals) == 1  # one line, the same whichever part failed
        assert b"the bearer token is not valid for this server" in refusals.pop()


def test_no_token_reaches_the_memory_without_a_tenant_on_any_backend(backend: Backend) -> None:
    """The operator's, the CLI's and the hooks' memory (no tenant) is stored as the tenant `default` on SQLite,
    PostgreSQL and S3: a JWT naming that tenant is refused like any bad token, on a folder too."""
    note = f"{backend.ns}-operator.md"
    with memdir.open(backend.location) as md:
        md.write(note, "the operator's own note\n")
    principals = Principals(Principal("default"))
    principals.add_token("a-static-token-for-the-operator")
    principals.verifier = Verifier(audience="memdir", secret=SECRET)
    with Running(backend.location, principals) as s:
        assert call("GET", f"{s.url}/v1/files/{note}", token="a-static-token-for-the-operator").status == 200
        claimed = call("GET", f"{s.url}/v1/files/{note}", token=token({"tenant": "default"}))
        assert claimed.status == 401 and b"the bearer token is not valid for this server" in claimed.body
        other = backend.tenant("acme")
        assert call("GET", f"{s.url}/v1/files/{note}", token=token({"tenant": other})).status == 404
    with memdir.open(backend.location) as md:  # the memory without a tenant opens as it did
        assert md.read(note).body == "the operator's own note\n"


@pytest.mark.parametrize("scope", ["memdir:admin", "memdir:wirte:notes/", "memdir:read:", "MEMDIR:WRITE:notes/",
                                   "memdir", "openid memdir:write:notes/ memdir:delete:notes/"])
def test_a_scope_in_memdir_s_namespace_it_cannot_read_refuses_the_token(verifier: Verifier, scope: str) -> None:
    assert verifier.principal(token({"scope": scope})) is None  # before: the whole tenant, writes included


def test_memdir_read_alone_reads_the_whole_tenant_and_writes_nothing(tmp_path: Path) -> None:
    principals = Principals(Principal("default"))
    principals.verifier = Verifier(audience="memdir", secret=SECRET)
    reader, writer = token({"scope": "openid memdir:read"}), token({"scope": ["memdir:write"]})
    assert principals.verifier.principal(reader) == Principal("jwt:alice@acme.example", "acme", ("",), ())
    with Running(tmp_path / "memory", principals) as s:
        assert call("PUT", f"{s.url}/v1/files/notes/a.md", {"body": "a note"}, token=writer).status == 201
        assert call("GET", f"{s.url}/v1/files/notes/a.md", token=reader).status == 200
        refused = call("PUT", f"{s.url}/v1/files/notes/a.md", {"body": "changed"}, token=reader)
        assert refused.status == 403 and refused.error[0] == "Forbidden"
        assert call("GET", f"{s.url}/v1/files/notes/a.md", token=reader).json["body"] == "a note"


def test_a_jwks_file_with_a_private_key_or_a_secret_is_refused_at_start(tmp_path: Path) -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    whole = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private))  # d, p, q...: the private key itself
    (tmp_path / "private.json").write_text(json.dumps({"keys": [{**whole, "kid": "k1", "alg": "RS256"}]}))
    with pytest.raises(InvalidArgument, match=r"holds a private key \(kid 'k1'\); a JWKS file gives the public keys only"):
        Verifier(audience="memdir", jwks=str(tmp_path / "private.json"))
    (tmp_path / "oct.json").write_text(json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0",
                                                            "kid": "h1", "alg": "HS256"}]}))
    with pytest.raises(InvalidArgument, match=r"holds a shared secret \(kty oct\)"):
        Verifier(audience="memdir", jwks=str(tmp_path / "oct.json"))
