"""The shared cache in Redis, as an accelerator: when Redis is down or hung, requests go on
without it.

Each Redis call waits at most ``REDIS_TIMEOUT_MS`` (connect and read, no retries); a call
that fails opens a circuit breaker, and for ``REDIS_RETRY_SECONDS`` the process does not ask
Redis again: reads miss, writes are dropped, and the rate limits count in this process
(``registry.access.throttles``). The first call after that asks Redis again. While Redis
does not answer, one log line a minute says so.
"""

import logging
import threading
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

logger = logging.getLogger(__name__)

# What a Redis that is down, hung or unreachable raises.
UNAVAILABLE = (RedisConnectionError, RedisTimeoutError, OSError)
LOG_EVERY_SECONDS = 60.0


class CacheUnavailable(Exception):
    """The shared cache is not asked (its breaker is open) or did not answer."""


@dataclass
class _Breaker:
    open_until: float = 0.0
    logged_at: float = -LOG_EVERY_SECONDS
    lock: threading.Lock = field(default_factory=threading.Lock)


_breakers: dict[str, _Breaker] = {}


class SharedRedisCache(RedisCache):
    """Django's Redis cache with short timeouts and a circuit breaker: never the reason a
    request fails or waits."""

    def __init__(self, server, params):
        options = dict(params.get("OPTIONS") or {})
        timeout = settings.REDIS_TIMEOUT_MS / 1000
        options.setdefault("socket_timeout", timeout)
        options.setdefault("socket_connect_timeout", timeout)
        options.setdefault("retry", Retry(NoBackoff(), 0))  # redis-py retries 3 times by default
        super().__init__(server, {**params, "OPTIONS": options})
        # Django makes a cache object per thread: the breaker is the process's, per server.
        self._breaker = _breakers.setdefault(str(server), _Breaker())

    def available(self) -> bool:
        """Whether to ask Redis now: not while the breaker is open."""
        return time.monotonic() >= self._breaker.open_until

    def failed(self, exc: BaseException) -> None:
        """Redis did not answer: open the breaker, and say so (once a minute)."""
        breaker, now = self._breaker, time.monotonic()
        with breaker.lock:
            breaker.open_until = now + settings.REDIS_RETRY_SECONDS
            if now - breaker.logged_at < LOG_EVERY_SECONDS:
                return
            breaker.logged_at = now
        logger.warning(
            "The shared cache (Redis) does not answer (%s: %s): rate limits count per "
            "process and cached reads are skipped; asking again in %s s.",
            type(exc).__name__,
            exc,
            settings.REDIS_RETRY_SECONDS,
        )

    def call(self, operation, *args, **kwargs):
        """Run a Redis operation, or raise CacheUnavailable (breaker open, or it failed)."""
        if not self.available():
            raise CacheUnavailable("the shared cache's breaker is open")
        try:
            return operation(*args, **kwargs)
        except UNAVAILABLE as exc:
            self.failed(exc)
            raise CacheUnavailable(str(exc)) from exc

    def check(self) -> None:
        """A round trip to Redis whatever the breaker says (readiness); raises if none."""
        self._cache.get_client(write=True).ping()

    def _guarded(self, name: str, default, *args, **kwargs):
        try:
            return self.call(getattr(super(), name), *args, **kwargs)
        except CacheUnavailable:
            return default

    def get(self, key, default=None, version=None):
        return self._guarded("get", default, key, default, version)

    def get_many(self, keys, version=None):
        return self._guarded("get_many", {}, keys, version)

    def has_key(self, key, version=None):
        return self._guarded("has_key", False, key, version)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded("add", False, key, value, timeout, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded("set", None, key, value, timeout, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded("set_many", list(data), data, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded("touch", False, key, timeout, version)

    def delete(self, key, version=None):
        return self._guarded("delete", False, key, version)

    def delete_many(self, keys, version=None):
        return self._guarded("delete_many", None, keys, version)

    def clear(self):
        return self._guarded("clear", False)

    def incr(self, key, delta=1, version=None):
        # No default answer makes sense for a counter: callers count elsewhere.
        return self.call(super().incr, key, delta, version)
