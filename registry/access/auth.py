"""API keys (``Authorization: Bearer <key>`` or ``X-Api-Key: <key>``) and tokens from
identity providers (``Authorization: Bearer <JWT>``, ``registry.access.tokens``); reads are
public."""

import hashlib
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from registry.access.audit import audit_actor
from registry.access.counters import auth_failure_count, auth_failure_wait
from registry.access.models import ApiKey
from registry.access.signins import token_signin_record
from registry.access.tokens import TokenIdentity, TokenRefused, looks_like_token, token_verify
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError

KEY_PREFIX = "rk_"


def api_key_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def raw_api_key(request) -> str:
    """The API key a request carries (``X-Api-Key``, or ``Authorization: Bearer``), or "";
    ValueError for an Authorization header of another form."""
    return raw_api_key_of(request.META)


def raw_api_key_of(meta) -> str:
    """raw_api_key from a request's META (or a WSGI environ)."""
    raw = meta.get("HTTP_X_API_KEY", "").strip()
    header = meta.get("HTTP_AUTHORIZATION", "").strip()
    if not raw and header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ValueError("not a bearer token")
        raw = value.strip()
    return raw


def api_key_generate() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: the owner named by its API key, or by its token from an
    identity provider (which acts as a key of that owner and scope)."""

    key: ApiKey | None = None
    token: TokenIdentity | None = None

    is_authenticated = True
    is_anonymous = False

    @property
    def owner(self) -> str:
        return self.key.owner if self.key is not None else self.token.owner

    @property
    def is_admin(self) -> bool:
        return self.key.is_admin if self.key is not None else self.token.admin

    @property
    def groups(self) -> tuple[str, ...]:
        """The caller's groups: a token's group claim, or those an admin gave the key."""
        return self.token.groups if self.token is not None else tuple(self.key.groups or ())

    @property
    def ident(self) -> str:
        """Whom the rate limits count: the key, or the token's issuer, owner and scope."""
        return f"key:{self.key.pk}" if self.key is not None else f"token:{self.token.scope_hash}"

    def may_change(self, owner: str) -> bool:
        return self.is_admin or owner == self.owner

    def may_manage(self, key: ApiKey) -> bool:
        """Whether this key may read, rotate or revoke ``key``: an admin key any key; any
        other its owner's keys of its own scope or lower (never an admin key: rotating one
        would hand out more than this key holds)."""
        return self.is_admin or (key.owner == self.owner and not key.is_admin)


class KeyExpired(exceptions.AuthenticationFailed):
    """An API key past its expiry: refused, saying when it expired."""

    def __init__(self, expires_at):
        super().__init__(f"The API key expired at {expires_at.isoformat()}.")


def principal_for_key(raw: str) -> Principal | None:
    """The principal of a raw API key (None when unknown or revoked, KeyExpired when past
    its expiry) or of a token from a configured identity provider (TokenRefused, a 401
    saying why, when it is not valid); sets the audit actor.

    The one credential check of every way in: the HTTP API, A2A and MCP."""
    if settings.OIDC_ISSUERS and looks_like_token(raw):
        return principal_for_token(raw)
    key = (
        ApiKey.objects.filter(key_hash=api_key_hash(raw), revoked_at__isnull=True)
        .only("id", "owner", "scope", "prefix", "last_used_at", "expires_at", "groups")
        .first()
    )
    if key is None:
        return None
    now = timezone.now()
    if key.expires_at is not None and key.expires_at <= now:
        raise KeyExpired(key.expires_at)
    audit_actor.set((key.owner, key.prefix))
    # Recording use at most once a minute keeps reads from turning into writes.
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return Principal(key)


def principal_for_token(raw: str) -> Principal:
    identity = token_verify(raw)
    audit_actor.set((identity.owner, TOKEN_ACTOR_PREFIX))
    token_signin_record(identity)
    return Principal(token=identity)


# The audit log's key prefix of a write made with a token.
TOKEN_ACTOR_PREFIX = "oidc"


def credential_scope(raw: str) -> str:
    """Whose a task is, from the bearer value that made it: an API key's hash, a valid
    token's identity (``TokenIdentity.scope_hash``: the same for each new token of that
    identity), else the value's own hash (its tasks are no one else's)."""
    if settings.OIDC_ISSUERS and looks_like_token(raw):
        try:
            return token_verify(raw).scope_hash
        except exceptions.APIException:
            pass
    return api_key_hash(raw)


def bearer_key(header: str) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` header value, or None."""
    scheme, _, value = (header or "").strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def auth_failures_check(meta) -> None:
    """429 for a client whose failed authentications passed the limit."""
    wait = auth_failure_wait(meta)
    if wait is not None:
        raise exceptions.Throttled(wait, detail=AUTH_FAILURES_DETAIL)


def auth_failed(meta, message: str) -> exceptions.APIException:
    """The 401 of a failed authentication, counted: a 429 past the limit."""
    wait = auth_failure_count(meta)
    if wait is not None:
        return exceptions.Throttled(wait, detail=AUTH_FAILURES_DETAIL)
    return exceptions.AuthenticationFailed(message)


AUTH_FAILURES_DETAIL = "Too many failed authentications from this address; try again later."


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        try:
            raw = raw_api_key(request)
        except ValueError:
            auth_failures_check(request.META)
            raise auth_failed(
                request.META, "The Authorization header must be 'Bearer <api key>'."
            ) from None
        if not raw:
            return None
        auth_failures_check(request.META)
        try:
            principal = principal_for_key(raw)
        except TokenRefused as exc:
            raise auth_failed(request.META, str(exc.detail)) from None
        if principal is None:
            raise auth_failed(request.META, "The API key is not valid.")
        return principal, principal.key or principal.token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="registry"'


class ReadOnlyOrApiKey(permissions.BasePermission):
    """Safe methods are public; every write needs a valid API key."""

    message = "This request needs an API key: 'Authorization: Bearer <key>' or 'X-Api-Key'."

    def has_permission(self, request, view) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return isinstance(request.user, Principal)


def principal_may_change(request, owner: str) -> None:
    """Raise 403 unless the request's key owns the resource or is an admin key."""
    user = request.user
    if not isinstance(user, Principal) or not user.may_change(owner):
        raise exceptions.PermissionDenied(
            "Only the API key that owns this agent, or an admin key, may change it."
        )


def owner_choose(principal: Principal, requested: str | None) -> str:
    """The owner of a new agent: the key's owner; admin keys may name another."""
    if requested and requested != principal.owner:
        if not principal.is_admin:
            raise ProblemError(
                403,
                "forbidden",
                "Only an admin key may register an agent for another owner.",
                [Problem("owner", "may be set by admin keys only")],
            )
        return requested
    return principal.owner
