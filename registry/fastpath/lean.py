"""The lean lane: the hottest reads (and the heartbeat, the hottest write) answered
straight from WSGI, before Django's request machinery.

A card fetch or a health check needs none of what Django builds per request (the request
object, URL resolution, sessions, authentication, CSRF, messages, a dozen middleware): it
is a lookup and a write. ``LeanApplication`` wraps the Django WSGI application; a GET or
HEAD whose path starts with a registered prefix (``registry.extensions.register_lean_route``)
goes to that route's handler, which answers with a ``LeanAnswer`` or ``None``. ``None``
sends the request on to Django, unchanged: the lane takes only the ordinary case and every
other case (an unknown id, a bad Host, a client over its rate limit, an HTTP request where
HTTPS is required, ``If-Match`` preconditions) gets Django's full answer. A POST route
(``LeanRoute.method``) works the same way (every handler gets the path's rest and the
environ); its answer is a plain 200 (nothing conditional, no read limit: the handler
counts its own).

What the lane keeps of the middleware, so that its answers equal Django's
(``tests/registry/fastpath/test_lean.py`` compares them header for header):

- the Host check against ``ALLOWED_HOSTS``;
- the per-client read limit (``registry.access.throttles``, the same counters: shared between
  workers with ``REDIS_URL``);
- the security headers of ``SecurityMiddleware`` and ``XFrameOptionsMiddleware``
  (nosniff, referrer and opener policies, frame denial, HSTS on HTTPS);
- conditional GET (``If-None-Match``, else ``If-Modified-Since``) as
  ``ConditionalGetMiddleware`` answers it: a 304 with the validators (a GET's only);
- HEAD: the headers of the GET without its body;
- the request id (``registry.http.request_ids``: ``X-Request-Id``, echoed, or a new one, left
  in the environ for Django when the lane declines) and the request's count in the metrics,
  ``lane="lean"``, by the route's prefix.

The database connection is Django's own (per thread): closed at once after a database
error, and when obsolete (``CONN_MAX_AGE``) as Django closes it at the end of a request,
looked at once a second rather than after every request.
"""

import io
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.http.request import split_domain_port, validate_host
from django.utils.http import parse_etags, parse_http_date_safe

from registry import extensions
from registry.access.throttles import READ_COUNTED, read_wait
from registry.extensions import LeanRoute
from registry.fastpath.replicas import (
    read_alias_for,
    reads_from,
    replica_aliases,
    replica_failed,
)
from registry.http import metrics
from registry.http.request_ids import (
    ENVIRON_KEY,
    META_KEY,
    WELL_FORMED,
    request_id,
    request_id_new,
)

logger = logging.getLogger(__name__)

# Headers kept on a 304 besides the validators, as ``django.utils.cache._not_modified``.
_NOT_MODIFIED_KEEP = ("Cache-Control", "Content-Location", "Expires", "Vary")


@dataclass
class LeanAnswer:
    """A 200 with ``body``; ``headers`` besides the validators and the security headers."""

    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)
    etag: str | None = None  # quoted, as sent
    last_modified: str | None = None  # an HTTP date, as sent


def security_headers(secure: bool) -> list[tuple[str, str]]:
    """What SecurityMiddleware and XFrameOptionsMiddleware add to a JSON answer."""
    headers = []
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append(("X-Content-Type-Options", "nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        policy = settings.SECURE_REFERRER_POLICY
        headers.append(("Referrer-Policy", policy if isinstance(policy, str) else ",".join(policy)))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append(("Cross-Origin-Opener-Policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY))
    headers.append(("X-Frame-Options", settings.X_FRAME_OPTIONS))
    if secure and settings.SECURE_HSTS_SECONDS:
        hsts = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
            hsts += "; includeSubDomains"
        if settings.SECURE_HSTS_PRELOAD:
            hsts += "; preload"
        headers.append(("Strict-Transport-Security", hsts))
    return headers


def not_modified(environ, answer: LeanAnswer) -> bool:
    """ConditionalGetMiddleware's question: is the client's copy current? (Never for a
    HEAD: the middleware leaves HEAD answers as they are.)"""
    if environ["REQUEST_METHOD"] != "GET":
        return False
    if_none_match = environ.get("HTTP_IF_NONE_MATCH")
    if if_none_match is not None:
        if answer.etag is None:
            return False
        etags = parse_etags(if_none_match)
        if "*" in etags:
            return True
        target = answer.etag.removeprefix("W/")
        return any(tag.removeprefix("W/") == target for tag in etags)
    if_modified_since = environ.get("HTTP_IF_MODIFIED_SINCE")
    if if_modified_since is not None and answer.last_modified is not None:
        since = parse_http_date_safe(if_modified_since)
        modified = parse_http_date_safe(answer.last_modified)
        return since is not None and modified is not None and modified <= since
    return False


# How often the lane looks after its connections (below): a broken one is closed at
# once (DatabaseError), so what is left to check is their age, counted in seconds.
HOUSEKEEPING_SECONDS = 1.0
_housekeeping = threading.local()


def json_body(environ, max_bytes: int, charsets: tuple[str, ...] | None = None) -> bytes | None:
    """A POST route's JSON body, or None when the lane should leave the request to its view
    (another media type or charset, no length or one over ``max_bytes``). The body is put
    back as ``wsgi.input`` so the view reads it again if the lane declines after all."""
    media = (environ.get("CONTENT_TYPE") or "").split(";", 1)
    if media[0].strip().lower() != "application/json":
        return None
    if charsets is not None and len(media) > 1 and media[1].strip().lower() not in charsets:
        return None
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    if not 0 < length <= max_bytes:
        return None
    raw = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(raw)
    environ["CONTENT_LENGTH"] = str(len(raw))
    return raw


def _close_connections_if_done() -> None:
    """What Django's request_finished does for the connections this thread used, at most
    once a ``HOUSEKEEPING_SECONDS``: close them when obsolete (``CONN_MAX_AGE``) or
    unusable after an error. (One inside a transaction is not the lane's: the lane opens
    none. Only a test's is.)"""
    now = time.monotonic()
    if now < getattr(_housekeeping, "next", 0.0):
        return
    _housekeeping.next = now + HOUSEKEEPING_SECONDS
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


class LeanApplication:
    """Django's WSGI application behind the lean lane (``registry.wsgi``). The settings it
    needs are read once, here: they do not change in a running process."""

    def __init__(self, django_application: Callable):
        self.django_application = django_application
        # Per method, longest prefix first; read once: the stores are closed.
        routes = sorted(
            extensions.lean_routes.read(), key=lambda route: len(route.prefix), reverse=True
        )
        reads = [route for route in routes if route.method == "GET"]
        writes = [route for route in routes if route.method == "POST"]
        self.routes = {"GET": reads, "HEAD": reads, "POST": writes}
        self.headers = {secure: security_headers(secure) for secure in (False, True)}
        # A 304 as Django's middleware order makes it: the frame option is gone with the
        # body (ConditionalGetMiddleware keeps the validators), the others come after.
        self.headers_304 = {
            secure: [h for h in headers if h[0] != "X-Frame-Options"]
            for secure, headers in self.headers.items()
        }
        self.ssl_redirect = settings.SECURE_SSL_REDIRECT
        self.redirect_exempt = [re.compile(r) for r in settings.SECURE_REDIRECT_EXEMPT]
        self.proxy_ssl_header = settings.SECURE_PROXY_SSL_HEADER
        self.forwarded_host = settings.USE_X_FORWARDED_HOST
        self.allowed_hosts = list(settings.ALLOWED_HOSTS)
        self.hosts_seen: dict[str, bool] = {}
        self.replicas = bool(replica_aliases())
        self.counted = settings.METRICS_ENABLED

    def __call__(self, environ, start_response):
        routes = self.routes.get(environ.get("REQUEST_METHOD"))
        if routes:
            path = environ.get("PATH_INFO", "")
            for route in routes:
                if path.startswith(route.prefix):
                    rest = path[len(route.prefix) :]
                    if route.exact and rest:
                        break
                    started = time.perf_counter()
                    # The request's id (registry.http.request_ids), kept in the environ for
                    # Django if the lane declines.
                    rid = environ.get(META_KEY)
                    if not rid or not WELL_FORMED.fullmatch(rid):
                        rid = request_id_new()
                    environ[ENVIRON_KEY] = rid
                    token = request_id.set(rid)
                    try:
                        answer = self.answer(environ, route, path, rest)
                    except Exception:  # never the server's HTML 500: Django answers instead
                        logger.exception("The lean lane failed on %s; Django answers it.", path)
                        answer = None
                    finally:
                        request_id.reset(token)
                    if answer is not None:
                        sent = self.send(environ, start_response, answer, rid)
                        if self.counted:
                            metrics.http_observe(
                                route.prefix,
                                environ["REQUEST_METHOD"],
                                200 if sent[0] else 304,
                                "lean",
                                time.perf_counter() - started,
                            )
                        return sent[1]
                    break
        return self.django_application(environ, start_response)

    def answer(self, environ, route: LeanRoute, path: str, rest: str) -> LeanAnswer | None:
        if route.anonymous and ("HTTP_AUTHORIZATION" in environ or "HTTP_X_API_KEY" in environ):
            return None
        if not self.allowed(environ, path, read_limited=route.read_limited):
            return None
        alias = DEFAULT_DB_ALIAS
        if self.replicas and route.database and route.method == "GET":
            alias = read_alias_for(environ, path)
        try:
            with reads_from(alias):
                return route.handler(rest, environ)
        except DatabaseError:
            # A broken or closed connection: let Django's request (which reconnects, and
            # answers a problem if the database is down) take it; a replica that failed is
            # looked at again first.
            replica_failed(alias)
            for connection in connections.all(initialized_only=True):
                if not connection.in_atomic_block:
                    connection.close()
            return None
        finally:
            if route.database:
                _close_connections_if_done()

    def allowed(self, environ, path: str, *, read_limited: bool) -> bool:
        """Whether the lane may answer this request at all: otherwise Django does, with
        its redirect, 400, 412 or 429. A read it counts is counted once (READ_COUNTED)."""
        if "HTTP_IF_MATCH" in environ or "HTTP_IF_UNMODIFIED_SINCE" in environ:
            return False
        if self.ssl_redirect and not self.secure(environ):
            exempt = path.lstrip("/")
            if not any(pattern.search(exempt) for pattern in self.redirect_exempt):
                return False
        if not self.host_allowed(environ):
            return False
        if not read_limited:
            return True
        environ[READ_COUNTED] = wait = read_wait(environ)
        return wait is None

    def secure(self, environ) -> bool:
        if self.proxy_ssl_header:
            header, value = self.proxy_ssl_header
            forwarded = environ.get(header)
            if forwarded is not None:
                return forwarded.split(",", 1)[0].strip() == value
        return environ.get("wsgi.url_scheme") == "https"

    def host_allowed(self, environ) -> bool:
        if self.forwarded_host and "HTTP_X_FORWARDED_HOST" in environ:
            host = environ["HTTP_X_FORWARDED_HOST"]
        else:
            host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
        allowed = self.hosts_seen.get(host)
        if allowed is None:
            domain, _port = split_domain_port(host)
            allowed = bool(domain) and validate_host(domain, self.allowed_hosts)
            if len(self.hosts_seen) < 64:  # clients choose the Host: remember a few only
                self.hosts_seen[host] = allowed
        return allowed

    def send(
        self, environ, start_response, answer: LeanAnswer, rid: str
    ) -> tuple[bool, Iterable[bytes]]:
        """Whether the answer is a 200 (else a 304), and its body."""
        secure = self.secure(environ)
        rid_header = ("X-Request-Id", rid)
        if environ["REQUEST_METHOD"] == "POST":  # no validators, nothing conditional
            length = ("Content-Length", str(len(answer.body)))
            start_response("200 OK", [*answer.headers, *self.headers[secure], length, rid_header])
            return True, [answer.body]
        validators = []
        if answer.etag is not None:
            validators.append(("ETag", answer.etag))
        if answer.last_modified is not None:
            validators.append(("Last-Modified", answer.last_modified))
        if not_modified(environ, answer):
            kept = [(k, v) for k, v in answer.headers if k in _NOT_MODIFIED_KEEP]
            start_response(
                "304 Not Modified", [*kept, *validators, *self.headers_304[secure], rid_header]
            )
            return False, [b""]
        length = ("Content-Length", str(len(answer.body)))
        start_response(
            "200 OK", [*answer.headers, *validators, *self.headers[secure], length, rid_header]
        )
        return True, [b"" if environ["REQUEST_METHOD"] == "HEAD" else answer.body]
