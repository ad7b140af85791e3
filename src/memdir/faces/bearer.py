"""Bearer tokens a SaaS issues: JWTs verified with a shared secret (HS256/384/512) or a JWKS file of public keys.

A token's claims say who is calling: the tenant (claim `tenant` by default),
the principal (`sub`) and the scopes (`scope`: a space-separated string or a
list). Scopes that memdir reads are `memdir:read:PREFIX` and
`memdir:write:PREFIX` (a write prefix may be read too), and `memdir:read` and
`memdir:write` for the whole tenant; a token with none of them gets the whole
tenant, one with any gets only what they say (`memdir:forget` adds the right
to erase and redact for good, which no token has without it), scopes of other services are
ignored, and a token with a scope in memdir's namespace that is none of these
(`memdir:admin`, a typo) is refused: a scope memdir cannot read never widens
what a token may do. A JWKS file may hold public keys only. Every token must carry `exp` and the
configured `aud`, and `iss` when one is configured; `nbf` and `iat` are
checked when present (with `leeway` seconds for clocks apart).

A refused token gets the same one line as a wrong static token: the caller
learns nothing of which part failed; the reason is logged at debug level for
the operator. PyJWT is the `memdir[jwt]` extra, imported when a server is
configured with it.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument, MemdirError
from ..stores.locations import check_tenant
from .auth import NAME, Principal

log = logging.getLogger(__name__)
HMAC = ["HS256", "HS384", "HS512"]
PUBLIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
MIN_SECRET_BYTES = 32  # RFC 7518 3.2: an HS256 key at least as long as the hash
_SCOPE = re.compile(r"memdir:(read|write)(?::([^\s:][^\s]*))?")  # the scopes memdir reads; PREFIX checked by Scope


@dataclass(frozen=True)
class Claims:
    """Which claims name the tenant, the principal and the scopes (`--jwt-claims tenant=org,principal=sub`)."""

    tenant: str = "tenant"
    principal: str = "sub"
    scopes: str = "scope"

    @classmethod
    def parse(cls, text: str) -> Claims:
        names: dict[str, str] = {}
        for item in (p.strip() for p in text.split(",") if p.strip()):
            key, sep, value = item.partition("=")
            if not sep or key.strip() not in ("tenant", "principal", "scopes") or not value.strip():
                raise InvalidArgument(
                    f"--jwt-claims {text!r}: expected KEY=CLAIM pairs with keys tenant, principal, scopes, "
                    "e.g. tenant=org_id,principal=sub,scopes=permissions"
                )
            names[key.strip()] = value.strip()
        return cls(**names)


def _jwt() -> Any:
    try:
        import jwt
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise InvalidArgument("JWT bearer tokens need PyJWT; install it with: pip install 'memdir[jwt]'") from None
    return jwt


class Verifier:
    """Checks a JWT and names its principal; `principal(token)` is None for any token it does not accept."""

    def __init__(self, *, audience: str, secret: bytes | None = None, jwks: str | None = None,
                 issuer: str | None = None, claims: Claims | None = None, leeway: float = 30.0) -> None:
        jwt = _jwt()
        if (secret is None) == (jwks is None):
            raise InvalidArgument("give one key for JWTs: --jwt-secret-file (a shared secret) or --jwt-jwks (public keys)")
        if not audience:
            raise InvalidArgument("JWTs need an audience to be checked against: pass --jwt-audience (e.g. memdir)")
        self.audience, self.issuer, self.claims, self.leeway = audience, issuer, claims or Claims(), leeway
        self._secret = secret
        self._keys: dict[str | None, Any] = {}
        if secret is not None and len(secret) < MIN_SECRET_BYTES:
            raise InvalidArgument(
                f"the JWT secret is {len(secret)} bytes; use at least {MIN_SECRET_BYTES} random bytes (HS256 needs them)"
            )
        if jwks is not None:
            try:
                keys = jwt.PyJWKSet.from_json(Path(jwks).read_text(encoding="utf-8")).keys
            except OSError as e:
                raise InvalidArgument(f"JWKS file {jwks!r} cannot be read ({e.strerror}); give a JSON file with a keys list") from None
            except (jwt.PyJWKSetError, jwt.InvalidKeyError, json.JSONDecodeError, ValueError) as e:
                raise InvalidArgument(f"JWKS file {jwks!r} holds no usable key ({e}); give public keys as RFC 7517 JSON") from None
            for k in keys:
                if k.key_type == "oct" or hasattr(k.key, "private_bytes"):
                    what = "a shared secret (kty oct)" if k.key_type == "oct" else "a private key"
                    raise InvalidArgument(
                        f"JWKS file {jwks!r} holds {what} (kid {k.key_id!r}); a JWKS file gives the public keys only "
                        "(a shared secret goes in --jwt-secret-file): remove it, and keep private keys off the server"
                    )
            self._keys = {k.key_id: k for k in keys}

    def principal(self, token: str) -> Principal | None:
        claims = self._claims(token)
        if claims is None:
            return None
        try:
            return self._principal(claims)
        except (MemdirError, ValueError, TypeError) as e:
            log.debug("JWT refused: %s", e)  # for the operator only; the caller gets one line that says nothing of it
            return None

    def _claims(self, token: str) -> dict[str, Any] | None:
        """The claims of a token whose signature, `exp`, `aud` (and `iss`) hold, else None."""
        jwt = _jwt()
        try:
            if self._secret is not None:
                key: Any = self._secret
                algorithms = HMAC
            else:
                kid = jwt.get_unverified_header(token).get("kid")
                found = self._keys.get(kid) if kid is not None or len(self._keys) != 1 else next(iter(self._keys.values()))
                if found is None:
                    raise jwt.InvalidKeyError(f"no key with kid {kid!r}")
                key, algorithms = found, [a for a in PUBLIC if a == getattr(found, "algorithm_name", a)]
            claims: dict[str, Any] = jwt.decode(token, key, algorithms=algorithms, audience=self.audience,
                                                issuer=self.issuer, leeway=self.leeway, options={"require": ["exp", "aud"]})
            return claims
        except (jwt.PyJWTError, ValueError, TypeError) as e:
            log.debug("JWT refused: %s", e)  # for the operator only; the caller gets one line that says nothing of it
            return None

    def expires(self, token: str) -> float | None:
        """The `exp` of a token this verifier accepts (seconds since the epoch), else None."""
        claims = self._claims(token)
        return None if claims is None else float(claims["exp"])

    def _principal(self, claims: dict[str, Any]) -> Principal:
        name, tenant = claims.get(self.claims.principal), claims.get(self.claims.tenant)
        if not isinstance(name, str) or not NAME.match(name) or name == "default":
            raise ValueError(f"claim {self.claims.principal!r} is not a usable principal name: {name!r}")
        if not isinstance(tenant, str):
            raise ValueError(f"claim {self.claims.tenant!r} names no tenant")
        check_tenant(tenant)
        raw = claims.get(self.claims.scopes, [])
        scopes = raw.split() if isinstance(raw, str) else raw
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise ValueError(f"claim {self.claims.scopes!r} is neither a string nor a list of strings")
        granted: dict[str, list[str]] = {"read": [], "write": []}
        forget = "memdir:forget" in scopes
        for scope in scopes:
            if not scope.lower().startswith("memdir") or scope == "memdir:forget":
                continue  # another service's scope, or the right to forget
            found = _SCOPE.fullmatch(scope)
            if found is None:
                raise ValueError(f"scope {scope!r} is not one memdir reads (memdir:read[:PREFIX], memdir:write[:PREFIX], memdir:forget)")
            granted[found.group(1)].append(found.group(2) or "")  # no prefix: the whole tenant
        if not granted["read"] and not granted["write"]:
            return Principal(f"jwt:{name}", tenant, forget=forget)
        return Principal(f"jwt:{name}", tenant, tuple(granted["read"]), tuple(granted["write"]), forget)
