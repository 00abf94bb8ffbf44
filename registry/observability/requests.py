"""Every request Django answers: its id (``registry.http.request_ids``), its count and
time in the metrics, by route template (never the path the client sent), with the
database statements it ran and their time, and with
``LOG_REQUESTS`` a log line (``registry.requests``: method, route, status, duration, the
API key's prefix)."""

import logging
import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from registry.http import metrics
from registry.http.request_ids import (
    ENVIRON_KEY,
    HEADER,
    key_prefix,
    request_id,
    request_id_of,
)

requests_log = logging.getLogger("registry.requests")

# A request that matched no route (a 404 of the resolver): one label for all of them.
UNMATCHED = "(unmatched)"


class RequestObservedMiddleware:
    """The outermost middleware: the request's id in the context while it is answered (and
    logged) and in the answer's ``X-Request-Id``; then the request counted."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.logged = settings.LOG_REQUESTS
        # METRICS_ENABLED off: no execute wrapper and nothing counted, the id and log kept.
        self.counted = settings.METRICS_ENABLED

    def __call__(self, request):
        started = time.perf_counter()
        rid = request_id_of(request.META)
        request.META[ENVIRON_KEY] = rid
        # Kept until request_finished (request_id_clear): Django logs an error answer
        # ("Not Found: …") after the middleware returned it.
        request_id.set(rid)
        key_prefix.set("")
        if self.counted:
            counted = StatementsCounted()
            with connections[DEFAULT_DB_ALIAS].execute_wrapper(counted):
                response = self.get_response(request)
        else:
            response = self.get_response(request)
        response[HEADER] = rid
        if not (self.counted or self.logged):
            return response
        match = request.resolver_match
        route = "/" + match.route if match is not None else UNMATCHED
        seconds = time.perf_counter() - started
        if self.counted:
            metrics.http_observe(
                route,
                request.method,
                response.status_code,
                "django",
                seconds,
                counted.statements,
                counted.seconds,
            )
        if self.logged:
            request_logged(request.method, route, response.status_code, seconds)
        return response


class StatementsCounted:
    """A database execute wrapper: how many statements a request ran on the default
    database's connection, and their time."""

    __slots__ = ("seconds", "statements")

    def __init__(self):
        self.statements, self.seconds = 0, 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.statements += 1
            self.seconds += time.perf_counter() - started


def request_logged(method: str, route: str, status: int, seconds: float) -> None:
    """One line per request: the route template, never the path as sent (ids, queries)."""
    method = method if method in metrics.METHODS else "OTHER"
    requests_log.info(
        "%s %s %s %.1f ms",
        method,
        route,
        status,
        seconds * 1000,
        extra={
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
        },
    )


def request_id_clear(**kwargs) -> None:
    """Django's request_finished: the thread works for no request any more."""
    request_id.set("")
