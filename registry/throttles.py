"""Rate limits on the shared cache: reads per key or client IP, writes per key."""

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import SimpleRateThrottle

from registry.auth import Principal


class _RegistryThrottle(SimpleRateThrottle):
    setting_name = ""

    def get_rate(self):
        # Read at request time so the rate follows settings (and tests can change it).
        return getattr(settings, self.setting_name)

    def allow_request(self, request, view):
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def wait(self):
        """Seconds until the oldest request in the window expires (DRF's estimate may be None)."""
        if not self.history:
            return float(self.duration)
        return max(1.0, self.duration - (self.now - self.history[-1]))

    def ident_for(self, request) -> str:
        if isinstance(request.user, Principal):
            return f"key:{request.user.key.pk}"
        return f"ip:{self.get_ident(request)}"


class ReadThrottle(_RegistryThrottle):
    scope = "read"
    setting_name = "RATE_LIMIT_READ"

    def get_cache_key(self, request, view):
        if request.method not in SAFE_METHODS:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.ident_for(request)}


class WriteThrottle(_RegistryThrottle):
    scope = "write"
    setting_name = "RATE_LIMIT_WRITE"

    def get_cache_key(self, request, view):
        if request.method in SAFE_METHODS:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.ident_for(request)}
