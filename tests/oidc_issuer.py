"""A local OpenID Connect issuer for the tests: an HTTPS test site (``tests.https_server``,
trusted through the test CA) serving a discovery document and its JWKS, minting tokens with
a test RSA key, and a small authorization endpoint with a token endpoint (authorization
code with PKCE) for the admin's sign-in.

Use it from a test module with::

    pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]

``oidc_issuer.mint(sub="ci", repository_owner="octo-org")`` is a token of the issuer,
accepted by the registry as ``oidc_issuer.configure()`` set it up (``OIDC_ISSUERS``).
"""

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.https_server import LocalServer, ReceivedRequest, Route

AUDIENCE = "https://registry.test"
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="session")
def oidc_keys() -> dict[str, rsa.RSAPrivateKey]:
    """Two RSA keys made once a run: ``k1`` published from the start, ``k2`` not."""
    return {kid: rsa.generate_private_key(public_exponent=65537, key_size=2048) for kid in "12"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class LocalIssuer:
    server: LocalServer
    keys: dict[str, rsa.RSAPrivateKey]
    published: list[str] = field(default_factory=lambda: ["k1"])
    # The sign-ins the authorization endpoint will hand out, by code.
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The claims of the next sign-in at the authorization endpoint.
    next_claims: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.url("")

    def key(self, kid: str) -> rsa.RSAPrivateKey:
        return self.keys[kid.removeprefix("k")]

    def publish(self, *kids: str) -> None:
        """Serve the discovery document and a JWKS holding these keys."""
        self.published = list(kids)
        jwks = {
            "keys": [
                {
                    **jwt.algorithms.RSAAlgorithm.to_jwk(self.key(kid).public_key(), as_dict=True),
                    "kid": kid,
                    "use": "sig",
                    "alg": "RS256",
                }
                for kid in kids
            ]
        }
        discovery = {
            "issuer": self.url,
            "jwks_uri": self.server.url("/jwks"),
            "authorization_endpoint": self.server.url("/authorize"),
            "token_endpoint": self.server.url("/token"),
            "id_token_signing_alg_values_supported": ["RS256"],
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        }
        self.server.json("/.well-known/openid-configuration", json.dumps(discovery).encode())
        self.server.json("/jwks", json.dumps(jwks).encode())

    def jwks_fetches(self) -> int:
        return sum(1 for r in self.server.requests if r.path == "/jwks")

    def claims(self, **claims: Any) -> dict[str, Any]:
        now = int(time.time())
        base = {"iss": self.url, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 300}
        base.update(claims)
        return {name: value for name, value in base.items() if value is not None}

    def mint(self, *, kid: str = "k1", alg: str = "RS256", **claims: Any) -> str:
        """A token signed with the key ``kid`` (a claim given None is left out)."""
        return jwt.encode(self.claims(**claims), self.key(kid), algorithm=alg, headers={"kid": kid})

    def mint_unsigned(self, **claims: Any) -> str:
        """A token with ``alg: none`` and no signature."""
        header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "k1"}).encode())
        return f"{header}.{_b64(json.dumps(self.claims(**claims)).encode())}."

    def mint_hmac_with_public_key(self, **claims: Any) -> str:
        """HS256, its secret the issuer's RSA public key as PEM: the key-confusion attack."""
        pem = (
            self.key("k1")
            .public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
        body = _b64(json.dumps(self.claims(**claims)).encode())
        signature = hmac.new(pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
        return f"{header}.{body}.{_b64(signature)}"

    def configure(self, settings, **members: Any) -> dict[str, Any]:
        """Accept this issuer's tokens (``OIDC_ISSUERS``), members as OIDC_ISSUERS has them."""
        issuer = {
            "issuer": self.url,
            "audience": AUDIENCE,
            "owner": "idp:{sub}",
            "groups": None,
            "adminGroups": (),
            "algorithms": ("RS256",),
            "claims": {},
        }
        issuer.update(members)
        settings.OIDC_ISSUERS = (issuer,)
        return issuer

    def _authorize(self, request: ReceivedRequest) -> Route:
        """Sign in at once as ``next_claims``: back to the client with a code."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(request.path).query).items()}
        code = secrets.token_urlsafe(16)
        self.codes[code] = {"query": query, "claims": dict(self.next_claims)}
        location = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query["state"]})
        return Route(302, {"Location": location})

    def _token(self, request: ReceivedRequest) -> Route:
        """The code exchanged for an ID token, when the PKCE verifier matches."""
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        sign_in = self.codes.pop(form.get("code", ""), None)
        if sign_in is None:
            return Route(400, JSON, b'{"error": "invalid_grant"}')
        query = sign_in["query"]
        challenge = _b64(hashlib.sha256(form.get("code_verifier", "").encode()).digest())
        if query.get("code_challenge_method") != "S256" or challenge != query.get("code_challenge"):
            return Route(400, JSON, b'{"error": "invalid_grant", "error_description": "pkce"}')
        claims = {"aud": query["client_id"], "nonce": query.get("nonce"), **sign_in["claims"]}
        body = {
            "access_token": secrets.token_urlsafe(16),
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": self.mint(**claims),
        }
        return Route(200, JSON, json.dumps(body).encode())

    def serve_sign_in(self) -> None:
        """Answer the authorization and token endpoints (the admin's sign-in)."""
        self.server.routes["/authorize"] = self._authorize
        self.server.routes["POST /token"] = self._token


@pytest.fixture
def oidc_issuer(https_server, ca_bundle, oidc_keys, settings) -> LocalIssuer:
    """The issuer, its keys published, trusted by the safe fetcher; the registry accepts
    its tokens for ``AUDIENCE`` as the owner ``idp:<sub>`` (``configure`` changes that)."""
    from registry.access.tokens import keys_forget

    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.FETCH_ALLOW_HTTP_HOSTS = []
    settings.OIDC_KEYS_REFETCH_SECONDS = 60
    issuer = LocalIssuer(https_server, oidc_keys)
    issuer.publish("k1")
    issuer.configure(settings)
    keys_forget()
    yield issuer
    keys_forget()
