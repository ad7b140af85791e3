"""What `memdir serve --http` was asked for, as data a worker process can rebuild the server from.

`memdir serve --workers N` writes it to `MEMDIR_SERVE_CONFIG` (JSON) for the
worker processes uvicorn starts, each of which calls
`memdir.faces.asgi:create_app`; another process manager (gunicorn with
uvicorn's worker class) can set the same variable, or only `MEMDIR_URL`,
`MEMDIR_TENANT` and `MEMDIR_TOKEN`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import InvalidArgument
from .auth import Principal, Principals, read_token_file
from .bearer import Claims, Verifier

ENV = "MEMDIR_SERVE_CONFIG"


@dataclass(frozen=True)
class Settings:
    root: str
    tenant: str | None = None
    scope_read: tuple[str, ...] = ()
    scope_write: tuple[str, ...] = ()
    token: str | None = None
    auth_file: str | None = None
    jwt_secret_file: str | None = None
    jwt_jwks: str | None = None
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    jwt_claims: str = ""
    trusted_proxies: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    shared: str | None = None  # the private folder the workers of one server share (the page's sessions, wrong tokens)

    @property
    def jwt(self) -> bool:
        return bool(self.jwt_secret_file or self.jwt_jwks)

    def principals(self) -> Principals:
        """The default principal, its token, the auth file's principals and the JWT verifier, as configured."""
        scoped = bool(self.scope_read or self.scope_write)
        principals = Principals(Principal("default", self.tenant, self.scope_read if scoped else None,
                                          self.scope_write if scoped else None))
        if self.token:
            principals.add_token(self.token)
        if self.auth_file:
            principals.load(self.auth_file)
        if self.jwt:
            secret = None
            if self.jwt_secret_file:
                try:
                    secret = Path(self.jwt_secret_file).read_bytes().strip()
                except OSError as e:
                    raise InvalidArgument(f"JWT secret file {self.jwt_secret_file!r} cannot be read ({e.strerror})") from None
            principals.verifier = Verifier(audience=self.jwt_audience or "", secret=secret, jwks=self.jwt_jwks,
                                           issuer=self.jwt_issuer, claims=Claims.parse(self.jwt_claims))
        elif self.jwt_audience or self.jwt_issuer or self.jwt_claims:
            raise InvalidArgument("--jwt-audience, --jwt-issuer and --jwt-claims need --jwt-secret-file or --jwt-jwks")
        return principals

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> Settings:
        raw = os.environ.get(ENV)
        if raw:
            data = json.loads(raw)
            for key in ("scope_read", "scope_write", "trusted_proxies"):
                data[key] = tuple(data.get(key) or ())
            return cls(**data)
        token = os.environ.get("MEMDIR_TOKEN")
        token_file = os.environ.get("MEMDIR_TOKEN_FILE")
        if token_file:
            token = read_token_file(token_file)
        return cls(root=os.environ.get("MEMDIR_URL") or "memory", tenant=os.environ.get("MEMDIR_TENANT") or None,
                   token=token, host=os.environ.get("MEMDIR_HOST") or "127.0.0.1")
