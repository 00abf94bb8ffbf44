"""Rate limits on the shared cache: reads per key or client IP, writes per key.

Fixed windows counted with one atomic ``incr`` per request: constant work whatever the
rate (DRF's default keeps and re-stores the timestamp of every request in the window).
"""

import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from registry.auth import Principal

_parse_rate = SimpleRateThrottle.parse_rate


def window_allows(scope: str, ident: str, rate: str) -> float | None:
    """Count one request; None if allowed, else the seconds until the window ends."""
    limit, duration = _parse_rate(None, rate)
    now = time.time()
    window = int(now // duration)
    key = f"throttle:{scope}:{ident}:{window}"
    cache.add(key, 0, timeout=duration + 1)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=duration + 1)
        count = 1
    if count <= limit:
        return None
    return max(1.0, (window + 1) * duration - now)


def client_ip(request, num_proxies: int | None = None) -> str:
    """The client address: REMOTE_ADDR, or the trusted proxies' X-Forwarded-For entry."""
    num_proxies = settings.TRUSTED_PROXY_COUNT if num_proxies is None else num_proxies
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if forwarded and num_proxies:
        addresses = [a.strip() for a in forwarded.split(",")]
        return addresses[-min(num_proxies, len(addresses))]
    return request.META.get("REMOTE_ADDR", "")


class _RegistryThrottle(BaseThrottle):
    scope = ""
    setting_name = ""
    methods_safe = True

    def allow_request(self, request, view) -> bool:
        if (request.method in SAFE_METHODS) != self.methods_safe:
            return True
        if isinstance(request.user, Principal):
            ident = f"key:{request.user.key.pk}"
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
