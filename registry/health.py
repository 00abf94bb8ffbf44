"""Health endpoints: /healthz (the process answers) and /readyz (its dependencies answer)."""

import hashlib
import logging
import threading
import time
import uuid

from django.core.cache import cache, caches
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from registry.access.shared_cache import SharedRedisCache
from registry.fastpath.lean import LeanAnswer
from registry.fastpath.replicas import replica_aliases, replica_check
from registry.http.problems import problem_response

logger = logging.getLogger(__name__)

# Seconds each dependency has to answer: a readiness probe must itself answer quickly.
READY_TIMEOUT = 3
# A process checks its dependencies at most this often; requests in between (and those
# arriving while a check runs) get the last result, so /readyz, public like every read,
# cannot be used to hammer the database, the cache or the broker.
READY_REUSE_SECONDS = 1.0
_last: dict = {"at": None, "checks": None}
_lock = threading.Lock()
_clock = time.monotonic


HEALTHZ_BODY = b'{"status": "ok"}'
# The validator ConditionalGetMiddleware gives the Django view's answer (an MD5 of it).
HEALTHZ_ETAG = f'"{hashlib.md5(HEALTHZ_BODY, usedforsecurity=False).hexdigest()}"'


def healthz_lean(rest: str, environ) -> LeanAnswer:
    """/healthz on the lean lane (registry.fastpath.lean): the same answer, without Django's
    request machinery (the server's own floor)."""
    return LeanAnswer(HEALTHZ_BODY, [("Content-Type", "application/json")], etag=HEALTHZ_ETAG)


@csrf_exempt  # reads only: 405 for any write, never a CSRF page
@require_safe
def healthz(request) -> JsonResponse:
    """Liveness for load balancers: answers without touching the database."""
    return JsonResponse({"status": "ok"})


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _cache() -> None:
    backend = caches["default"]
    if isinstance(backend, SharedRedisCache):
        backend.check()  # past its breaker: whether Redis answers now
        return
    key = f"readyz:{uuid.uuid4().hex}"
    cache.set(key, "1", timeout=READY_TIMEOUT)
    if cache.get(key) != "1":
        raise RuntimeError("a value written to the cache could not be read back")
    cache.delete(key)


def _broker() -> None:
    from registry.celery import app

    with app.connection_for_write(connect_timeout=READY_TIMEOUT) as conn:
        conn.ensure_connection(max_retries=1, timeout=READY_TIMEOUT)


CHECKS = {"database": _database, "cache": _cache, "broker": _broker}
# Without these the registry cannot serve; without the others (the shared cache: an
# accelerator) it serves, degraded.
REQUIRED = {"database", "broker"}


def _replicas(results: dict[str, str]) -> None:
    """Each read replica (DATABASE_REPLICA_URLS) as ``replicaN``: "ok" while it answers
    within DATABASE_REPLICA_MAX_LAG_SECONDS, else "degraded" (the primary serves its
    reads); its lag in seconds beside the checks (``replicaLagSeconds``)."""
    for alias in replica_aliases():
        state = replica_check(alias)
        results[alias] = "ok" if state.usable() else "degraded"
        lag = None if state.lag_seconds is None else round(state.lag_seconds, 3)
        results.setdefault("lag", {})[alias] = lag


def readiness() -> dict[str, str]:
    """Each dependency: "ok", "unavailable" (required) or "degraded"; why goes to the log,
    never to the answer (it names internal hosts and ports). With read replicas, each
    replica's state and, under "lag", its lag in seconds."""
    results = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # any failure means "not ready", never a 500
            logger.warning("readyz: the %s does not answer: %s: %s", name, type(exc).__name__, exc)
            results[name] = "unavailable" if name in REQUIRED else "degraded"
        else:
            results[name] = "ok"
    _replicas(results)
    return results


def readiness_recent() -> dict[str, str]:
    """readiness(), reused for READY_REUSE_SECONDS within a process."""
    with _lock:
        now = _clock()
        if _last["at"] is None or now - _last["at"] >= READY_REUSE_SECONDS:
            _last["checks"], _last["at"] = readiness(), _clock()
        return dict(_last["checks"])


@csrf_exempt  # reads only: 405 for any write, never a CSRF page
@require_safe
def readyz(request) -> JsonResponse:
    """Readiness: 200 when the database and the job broker answer ("degraded" when the
    shared cache does not); else 503."""
    checks = readiness_recent()
    lag = checks.pop("lag", None)
    extra = {"replicaLagSeconds": lag} if lag is not None else {}
    down = [name for name, result in checks.items() if result == "unavailable"]
    if not down:
        degraded = any(result != "ok" for result in checks.values())
        status = "degraded" if degraded else "ok"
        return JsonResponse({"status": status, "checks": checks, **extra})
    response = problem_response(
        503,
        "not-ready",
        f"The registry cannot serve: no answer from the {', '.join(down)}.",
        checks=checks,
        **extra,
    )
    response["Retry-After"] = "5"
    return response
