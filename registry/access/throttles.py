"""Rate limits: reads per key or client IP, writes per key, heartbeats per key, fetches
(counted by ``registry.access.counters``)."""

from django.conf import settings
from django.http import HttpResponse
from rest_framework.exceptions import Throttled
from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import BaseThrottle

from registry.access.auth import Principal, api_key_hash, raw_api_key
from registry.access.counters import (  # noqa: F401 (the counters' users import them here)
    client_ip,
    client_ip_of,
    counters_clear,
    window_allows,
)
from registry.http.problems import problem_response

# The WSGI environ key where the lean lane (registry.fastpath.lean) leaves the outcome of the read
# limit it already counted, so that a request it passes on to Django is not counted twice.
# Clients cannot set it: their headers arrive as HTTP_* keys.
READ_COUNTED = "registry.read_wait"


def read_wait(meta) -> float | None:
    """Count one read of this client (unless the lean lane did); None while under the
    limit, else the seconds until the window ends."""
    if READ_COUNTED in meta:
        return meta[READ_COUNTED]
    return window_allows("read", f"ip:{client_ip_of(meta)}", settings.RATE_LIMIT_READ)


class _RegistryThrottle(BaseThrottle):
    scope = ""
    setting_name = ""
    methods_safe = True

    def allow_request(self, request, view) -> bool:
        if (request.method in SAFE_METHODS) != self.methods_safe:
            return True
        if isinstance(request.user, Principal):
            ident = request.user.ident
        elif self.scope == "read" and READ_COUNTED in request.META:
            self._wait = request.META[READ_COUNTED]  # counted by the lean lane
            return self._wait is None
        else:
            ident = f"ip:{client_ip(request)}"
        self._wait = window_allows(self.scope, ident, getattr(settings, self.setting_name))
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class ReadThrottle(_RegistryThrottle):
    scope = "read"
    setting_name = "RATE_LIMIT_READ"
    methods_safe = True


class WriteThrottle(_RegistryThrottle):
    scope = "write"
    setting_name = "RATE_LIMIT_WRITE"
    methods_safe = False


def heartbeat_ident(key_hash: str) -> str:
    """The rate-limit identity of a heartbeat: its key's hash (all the fast path knows)."""
    return f"key-hash:{key_hash[:32]}"


# The WSGI environ key where the heartbeat's limit, once counted (by the lean lane or the
# view's fast path), leaves its outcome: a request passed on is not counted again.
HEARTBEAT_COUNTED = "registry.heartbeat_wait"


def heartbeat_wait(meta, key_hash: str) -> float | None:
    """Count one heartbeat of this key (once a request); None while under
    RATE_LIMIT_HEARTBEAT, else the seconds until the window ends."""
    if HEARTBEAT_COUNTED in meta:
        return meta[HEARTBEAT_COUNTED]
    ident = heartbeat_ident(key_hash)
    meta[HEARTBEAT_COUNTED] = wait = window_allows(
        "heartbeat", ident, settings.RATE_LIMIT_HEARTBEAT
    )
    return wait


class HeartbeatThrottle(BaseThrottle):
    """Heartbeats and renewals, per key: an owner's many agents each send one every
    interval, far more than the general write limit allows (registry.liveness.heartbeats counts
    in the same window)."""

    def allow_request(self, request, view) -> bool:
        user = request.user
        if isinstance(user, Principal) and user.token is not None:
            # a token's identity, not the token: each new token counts in the same window
            self._wait = heartbeat_wait(request.META, user.token.scope_hash)
            return self._wait is None
        try:
            key_hash = api_key_hash(raw_api_key(request))
        except ValueError:
            ident = f"ip:{client_ip(request)}"
            self._wait = window_allows("heartbeat", ident, settings.RATE_LIMIT_HEARTBEAT)
        else:
            self._wait = heartbeat_wait(request.META, key_hash)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


def fetch_rate_wait(who) -> float | None:
    """Count a request that makes the registry fetch from the network: per API key
    (RATE_LIMIT_FETCH), or per client IP without one (RATE_LIMIT_FETCH_ANON, stricter).
    ``who``: the request, or the principal of one that came another way (A2A, MCP).
    None if allowed, else the seconds to wait."""
    user = who if isinstance(who, Principal) else getattr(who, "user", None)
    if isinstance(user, Principal):
        return window_allows("fetch", user.ident, settings.RATE_LIMIT_FETCH)
    return window_allows("fetch-anon", f"ip:{client_ip(who)}", settings.RATE_LIMIT_FETCH_ANON)


def fetch_rate_check(who) -> None:
    """fetch_rate_wait, as a 429 problem."""
    wait = fetch_rate_wait(who)
    if wait is not None:
        raise Throttled(
            wait, detail="Too many requests that fetch from the network; try again later."
        )


def read_limited(request) -> HttpResponse | None:
    """The per-client read limit of the plain (non-DRF) views: card reads, the A2A and MCP
    endpoints. None while under it, else the 429 problem with Retry-After."""
    wait = read_wait(request.META)
    if wait is None:
        return None
    response = problem_response(429, "throttled", "Too many requests.")
    response["Retry-After"] = str(int(wait + 0.999))
    return response
