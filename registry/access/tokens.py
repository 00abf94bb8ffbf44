"""Tokens from identity providers (``OIDC_ISSUERS``): a JWT verified with PyJWT against its
issuer's keys, mapped to the registry owner, scope and groups it acts as.

The keys come from the issuer's discovery document and its ``jwks_uri``, both through the
safe fetcher, kept OIDC_KEYS_CACHE_SECONDS per process and fetched again for a token whose
``kid`` they lack, at most once every OIDC_KEYS_REFETCH_SECONDS. A refusal says why in
words a client can act on (expired, another audience, an issuer not accepted here) and
never which part of a signature failed."""

from __future__ import annotations

import hashlib
import string
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework import exceptions

from registry.http.problems import ProblemError
from registry.outbound.fetch import FetchError, fetch

if TYPE_CHECKING:
    import jwt

# A token longer than this is refused unread (real ones are a few kilobytes).
TOKEN_MAX_CHARS = 16 * 1024
# The most groups a token may carry, and the longest group name kept.
GROUPS_MAX = 200
GROUP_MAX_CHARS = 200
OWNER_MAX_CHARS = 200
DOCUMENT_MAX_BYTES = 256 * 1024
REFUSED = "The token is not valid."


class TokenRefused(exceptions.AuthenticationFailed):
    """A token that does not sign anyone in: 401 saying why."""


class IssuerUnavailable(ProblemError):
    """The issuer's keys could not be read: 503, the token neither accepted nor refused."""

    def __init__(self) -> None:
        super().__init__(
            503,
            "issuer-unavailable",
            "The token's issuer could not be reached for its keys; try again later.",
            retry_after=30,
        )


@dataclass(frozen=True)
class TokenIdentity:
    """Who a verified token names: its issuer and subject, and the owner, scope and groups
    it acts as."""

    issuer: str
    subject: str
    owner: str
    admin: bool
    groups: tuple[str, ...]
    expires_at: int
    token_hash: str

    @property
    def scope_hash(self) -> str:
        """The token's stand-in for a key's hash (tasks, relay tasks, counters): one per
        issuer, owner and scope, so a new token of the same identity finds its tasks."""
        scope = "admin" if self.admin else "agent"
        text = f"oidc\n{self.issuer}\n{self.owner}\n{scope}"
        return hashlib.sha256(text.encode()).hexdigest()


def looks_like_token(raw: str) -> bool:
    """Whether a bearer value is a JWT (three base64url parts), not an API key."""
    return raw.count(".") == 2 and raw.startswith("eyJ")


def issuer_config(issuer: str) -> dict | None:
    for item in settings.OIDC_ISSUERS:
        if item["issuer"] == issuer:
            return item
    return None


@dataclass
class _Keys:
    fetched_at: float
    discovery: dict
    keys: dict[str, jwt.PyJWK]
    # Fetched again for an unknown kid (not again for another until a while has passed).
    refetched: bool = False


_keys: dict[str, _Keys] = {}
# When each issuer last failed to give its keys: not asked again for a while.
_failed_at: dict[str, float] = {}
_keys_lock = threading.Lock()


def _document(url: str) -> dict:
    try:
        document = fetch(url, max_bytes=DOCUMENT_MAX_BYTES).json()
    except FetchError as exc:
        raise IssuerUnavailable() from exc
    if not isinstance(document, dict):
        raise IssuerUnavailable()
    return document


def _keys_fetch(issuer: str) -> tuple[dict, dict[str, jwt.PyJWK]]:
    import jwt

    discovery = _document(issuer.rstrip("/") + "/.well-known/openid-configuration")
    jwks_uri = discovery.get("jwks_uri")
    # OpenID Connect Discovery: the document names the issuer it was fetched for.
    if discovery.get("issuer") != issuer or not isinstance(jwks_uri, str):
        raise IssuerUnavailable()
    document = _document(jwks_uri)
    keys = {}
    for item in document.get("keys") or []:
        if not isinstance(item, dict) or item.get("use", "sig") != "sig":
            continue
        if item.get("kty") == "oct" or not isinstance(item.get("kid"), str):
            continue
        try:
            keys[item["kid"]] = jwt.PyJWK(item)
        except jwt.PyJWTError:
            continue  # a key of a type or curve this registry cannot use
    return discovery, keys


def _kept(issuer: str, kid: str | None = None) -> _Keys:
    """The issuer's kept discovery document and keys: fetched when none are kept or they
    are old, and fetched again once for an unknown ``kid`` (at most once every
    OIDC_KEYS_REFETCH_SECONDS: a stream of made-up kids costs the issuer nothing)."""
    now = time.monotonic()
    kept = _keys.get(issuer)
    if kept is not None and now - kept.fetched_at < settings.OIDC_KEYS_CACHE_SECONDS:
        if kid is None or kid in kept.keys:
            return kept
        if kept.refetched and now - kept.fetched_at < settings.OIDC_KEYS_REFETCH_SECONDS:
            return kept
    with _keys_lock:
        current = _keys.get(issuer)
        if current is not None and current is not kept:
            return current  # another thread fetched them meanwhile
        failed = _failed_at.get(issuer)
        if failed is not None and now - failed < settings.OIDC_KEYS_REFETCH_SECONDS:
            if current is None:
                raise IssuerUnavailable()
            return current
        try:
            discovery, keys = _keys_fetch(issuer)
        except IssuerUnavailable:
            _failed_at[issuer] = time.monotonic()
            if current is None:
                raise
            return current  # the kept keys serve until the issuer answers
        refetched = kept is not None and kid is not None and kid not in kept.keys
        fetched = _Keys(time.monotonic(), discovery, keys, refetched=refetched)
        _failed_at.pop(issuer, None)
        _keys[issuer] = fetched
    return fetched


def issuer_discovery(issuer: str) -> dict:
    """The issuer's discovery document (kept as its keys are)."""
    return _kept(issuer).discovery


def keys_forget() -> None:
    """Forget every kept key (tests; a deployment that rotated keys in a hurry restarts)."""
    _keys.clear()
    _failed_at.clear()


def token_unverified(raw: str) -> tuple[dict, dict]:
    import jwt

    try:
        header = jwt.get_unverified_header(raw)
        claims = jwt.decode(raw, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise TokenRefused(REFUSED) from None
    return header, claims


def _claim_text(claims: dict, name: str) -> str:
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise TokenRefused(f"The token has no claim '{name}' to name its owner with.")
    return str(value)


def _owner(config: dict, claims: dict) -> str:
    # The template's fields are plain claim names (the settings refuse any other).
    fields = [name for _, name, _, _ in string.Formatter().parse(config["owner"]) if name]
    values = {name: _claim_text(claims, name) for name in fields}
    owner = config["owner"].format(**values)
    if len(owner) > OWNER_MAX_CHARS:
        raise TokenRefused("The token's owner is longer than an owner may be.")
    return owner


def _groups(config: dict, claims: dict) -> tuple[str, ...]:
    name = config["groups"]
    if name is None or claims.get(name) is None:
        return ()
    value = claims[name]
    values = [value] if isinstance(value, str) else value
    if (
        not isinstance(values, list)
        or len(values) > GROUPS_MAX
        or not all(isinstance(g, str) and 0 < len(g) <= GROUP_MAX_CHARS for g in values)
    ):
        raise TokenRefused(f"The token's claim '{name}' must be a list of group names.")
    return tuple(sorted(set(values)))


def token_verify(raw: str) -> TokenIdentity:
    """The identity of a token from a configured issuer; TokenRefused (401) saying why,
    IssuerUnavailable (503) when its issuer's keys cannot be read."""
    if len(raw) > TOKEN_MAX_CHARS:
        raise TokenRefused("The token is longer than a token may be.")
    header, unverified = token_unverified(raw)
    issuer = unverified.get("iss")
    config = issuer_config(issuer) if isinstance(issuer, str) else None
    if config is None:
        raise TokenRefused("The token's issuer is not accepted here.")
    claims = claims_verify(raw, header, config)
    longest = settings.OIDC_TOKEN_MAX_LIFETIME_SECONDS
    # int(): PyJWT has read both as int() does (a numeric string passes too).
    if longest and int(claims["exp"]) - int(claims["iat"]) > longest:
        raise TokenRefused("The token lives longer than this registry accepts.")
    for name, accepted in config.get("claims", {}).items():
        if claims.get(name) not in accepted:
            raise TokenRefused(f"The token's claim '{name}' is not one this registry accepts.")
    groups = _groups(config, claims)
    return TokenIdentity(
        issuer=config["issuer"],
        subject=str(claims["sub"])[:200],
        owner=_owner(config, claims),
        admin=bool(set(groups) & set(config["adminGroups"])),
        groups=groups,
        expires_at=int(claims["exp"]),
        token_hash=hashlib.sha256(raw.encode()).hexdigest(),
    )


def claims_verify(raw: str, header: dict, config: dict) -> dict:
    """A token's claims, its signature checked with its issuer's key (of the issuer's
    algorithms only) and its ``iss``, ``aud``, ``exp``, ``nbf`` and ``iat`` with a small
    leeway; TokenRefused saying why."""
    import jwt

    algorithm = header.get("alg")
    if algorithm not in config["algorithms"]:
        raise TokenRefused(REFUSED)
    kid = header.get("kid")
    key = _kept(config["issuer"], kid).keys.get(kid) if isinstance(kid, str) else None
    if key is None:
        raise TokenRefused("The token is signed with a key its issuer does not publish.")
    try:
        claims = jwt.decode(
            raw,
            key,
            algorithms=[algorithm],
            audience=config["audience"],
            issuer=config["issuer"],
            leeway=settings.OIDC_LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
        )
    except jwt.ExpiredSignatureError:
        raise TokenRefused("The token expired.") from None
    except jwt.InvalidAudienceError:
        raise TokenRefused("The token is for another audience.") from None
    except jwt.ImmatureSignatureError:
        raise TokenRefused("The token is not valid yet.") from None
    except jwt.MissingRequiredClaimError as exc:
        raise TokenRefused(f"The token has no claim '{exc.claim}'.") from None
    except jwt.PyJWTError:
        raise TokenRefused(REFUSED) from None
    return claims
