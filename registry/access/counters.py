"""Request counters: fixed windows counted with one atomic ``incr`` per request, constant
work whatever the rate (DRF's default keeps and re-stores the timestamp of every request in
the window). In the shared cache (Redis) when it answers, else in this process
(``registry.access.shared_cache``)."""

import functools
import threading
import time

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from rest_framework.throttling import SimpleRateThrottle

from registry.access.shared_cache import CacheUnavailable, SharedRedisCache
from registry.http.metrics import rate_limited

_parse_rate = SimpleRateThrottle.parse_rate


@functools.lru_cache(maxsize=32)
def _rate(rate: str) -> tuple[int, int]:
    return _parse_rate(None, rate)


_local_counts: dict[str, list] = {}
_local_lock = threading.Lock()
_local_purge = {"at": 0.0}


def _local_count(key: str, expires: float, amount: int = 1) -> int:
    """A counter in this process (the per-process cache's case, without its pickling)."""
    with _local_lock:
        entry = _local_counts.get(key)
        if entry is None:
            now = time.time()
            if now - _local_purge["at"] > 1.0:  # the ended windows go, once a second
                _local_purge["at"] = now
                for stale in [k for k, (_, end) in _local_counts.items() if end < now]:
                    del _local_counts[stale]
            entry = _local_counts[key] = [0, expires]
        entry[0] += amount
        return entry[0]


def counters_clear() -> None:
    """Forget this process's counters (tests start each with none, as with the cache)."""
    with _local_lock:
        _local_counts.clear()
    _auth_blocked.clear()


def _redis_count(key: str, timeout: int, amount: int = 1) -> int:
    """One round trip to the shared Redis: count, and give a new window its expiry.
    (Django's ``incr`` asks whether the key exists first: two round trips a request.)"""
    backend = caches["default"]
    client = backend._cache.get_client(key, write=True)
    full_key = backend.make_and_validate_key(key)
    pipe = client.pipeline(transaction=False)
    pipe.incr(full_key, amount)
    pipe.expire(full_key, timeout, nx=True)
    count, _ = pipe.execute()
    return count


def window_allows(scope: str, ident: str, rate: str, amount: int = 1) -> float | None:
    """Count one request (or ``amount`` units of work); None if allowed, else the seconds
    until the window ends."""
    limit, duration = _rate(rate)
    now = time.time()
    window = int(now // duration)
    key = f"throttle:{scope}:{ident}:{window}"
    backend = caches["default"]
    if isinstance(backend, LocMemCache):  # this process's own counters anyway
        count = _local_count(key, now + duration + 1, amount)
    elif isinstance(backend, SharedRedisCache):
        try:
            count = backend.call(_redis_count, key, duration + 1, amount)
        except CacheUnavailable:  # Redis down or hung: count here until it answers
            count = _local_count(key, now + duration + 1, amount)
    elif isinstance(backend, RedisCache):
        count = _redis_count(key, duration + 1, amount)
    else:
        try:  # one cache operation for every request of a window but its first
            count = cache.incr(key, amount)
        except ValueError:  # the window's first request (or its key expired)
            added = cache.add(key, amount, timeout=duration + 1)
            count = amount if added else cache.incr(key, amount)
    if count <= limit:
        return None
    rate_limited.labels(scope).inc()
    return max(1.0, (window + 1) * duration - now)


def client_ip_of(meta, num_proxies: int | None = None) -> str:
    """The client address of a request's META (or WSGI environ): REMOTE_ADDR, or the
    trusted proxies' X-Forwarded-For entry."""
    num_proxies = settings.TRUSTED_PROXY_COUNT if num_proxies is None else num_proxies
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if forwarded and num_proxies:
        addresses = [a.strip() for a in forwarded.split(",")]
        return addresses[-min(num_proxies, len(addresses))]
    return meta.get("REMOTE_ADDR", "")


def client_ip(request, num_proxies: int | None = None) -> str:
    return client_ip_of(request.META, num_proxies)


# Clients whose failed authentications passed RATE_LIMIT_AUTH_FAILURES, in this process:
# the address and when its window ends. Looked at before a key is looked up, so a client
# guessing keys costs a dictionary lookup, not statements (each process learns it from the
# shared count at its own first failure past the limit).
_auth_blocked: dict[str, float] = {}


def auth_failure_wait(meta) -> float | None:
    """The seconds this client must wait before its keys are looked at again, or None."""
    if not _auth_blocked:
        return None
    ident = client_ip_of(meta)
    until = _auth_blocked.get(ident)
    if until is None:
        return None
    wait = until - time.time()
    if wait > 0:
        return wait
    _auth_blocked.pop(ident, None)
    return None


def auth_failure_count(meta) -> float | None:
    """Count one failed authentication of this client; None while under the limit, else
    the seconds until its window ends (and the client is refused until then)."""
    ident = client_ip_of(meta)
    wait = window_allows("auth-failure", f"ip:{ident}", settings.RATE_LIMIT_AUTH_FAILURES)
    if wait is not None:
        if len(_auth_blocked) > 10_000:  # many addresses at once: forget the oldest
            _auth_blocked.clear()
        _auth_blocked[ident] = time.time() + wait
    return wait
