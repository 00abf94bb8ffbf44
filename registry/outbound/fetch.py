"""The one way the registry makes outbound HTTP requests.

Every hop resolves its host once, refuses non-public addresses and connects to
exactly the addresses it checked, so a DNS answer cannot change between the
check and the connection. TLS is always verified; time and size are capped;
redirects are followed by hand so that each target passes the same checks.
"""

import json
import ssl
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpcore
import httpx
from django.conf import settings

from registry.http.jsonutil import JSONInputError, strict_loads
from registry.http.tracing import span, trace_inject
from registry.outbound import deadlines
from registry.outbound.addresses import (
    DEFAULT_PORTS,
    PinnedBackend,
    Target,
    ca_bundle_hint,
    host_is_local,
    host_name,
    host_setting,
    is_public_address,
    setting_hint,
)
from registry.outbound.tls import cert_expiry, ssl_context

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class FetchError(Exception):
    """A fetch that was refused or failed.

    ``reason`` is a short machine code (``blocked-address``, ``timeout``, ...),
    ``detail`` a sentence for people, ``url`` the URL that failed (after any
    redirects) and ``status`` the HTTP status when ``reason`` is ``http-status``.
    """

    def __init__(self, reason: str, url: str, detail: str, *, status: int | None = None):
        super().__init__(detail)
        self.reason = reason
        self.url = url
        self.detail = detail
        self.status = status


@dataclass(frozen=True)
class FetchResult:
    url: str
    status: int
    headers: httpx.Headers
    body: bytes
    # When the server's TLS certificate expires (its notAfter), as the handshake saw it.
    cert_expires_at: datetime | None = None

    def json(self) -> Any:
        try:
            return strict_loads(
                self.body, max_depth=getattr(settings, "REGISTRY_MAX_JSON_DEPTH", 64)
            )
        except JSONInputError as exc:
            raise FetchError(
                "invalid-json",
                self.url,
                f"The response from {self.url} is not valid JSON: {exc.detail}.",
            ) from None


def fetch(
    url: str,
    *,
    accept_json: bool = True,
    max_bytes: int | None = None,
    timeout: float | None = None,
    max_redirects: int | None = None,
    cross_origin_redirects: bool = False,
    json_body: Any = None,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> FetchResult:
    """GET ``url`` safely and return the final 2xx response, or raise FetchError.

    With ``json_body``, POST it as JSON instead (a probe's protocol call; bytes are sent as
    they are, as ``content_type``: a signed webhook, a form); a POST follows no redirect.
    ``headers`` are sent besides the fetcher's own (conditional requests: If-None-Match,
    If-Modified-Since; a 304 answer raises FetchError with status 304).

    ``timeout`` replaces both the connect and the read timeout for this call.
    Redirects to another origin are refused unless ``cross_origin_redirects``
    (AID: clients must not follow them automatically).
    """
    if max_bytes is None:
        max_bytes = getattr(settings, "FETCH_MAX_BYTES", 1024 * 1024)
    if max_redirects is None:
        max_redirects = getattr(settings, "FETCH_MAX_REDIRECTS", 3)
    connect_timeout = getattr(settings, "FETCH_CONNECT_TIMEOUT", 5) if timeout is None else timeout
    read_timeout = getattr(settings, "FETCH_READ_TIMEOUT", 10) if timeout is None else timeout
    # Per-read timeouts alone would let a server drip one byte at a time for hours: one
    # deadline bounds the whole exchange, and the incoming request's budget all its fetches.
    try:
        deadline = deadlines.fetch_deadline()
    except deadlines.BudgetExhausted:
        raise FetchError(
            "timeout", url, f"{url} was not fetched: this request's time for fetches ran out."
        ) from None

    target = _target(url, deadline)
    redirects = 0
    while True:
        with span(
            "POST" if json_body is not None else "GET",
            "client",
            **{"server.address": target.url.host},
        ):
            sent = dict(headers or {})
            trace_inject(sent)
            result = _exchange(
                target,
                body=_json_bytes(json_body),
                content_type=content_type,
                extra_headers=sent,
                accept_json=accept_json,
                max_bytes=max_bytes,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                deadline=deadline,
            )
        if result.status not in REDIRECT_STATUSES:
            return result
        if json_body is not None:
            raise FetchError(
                "http-status",
                result.url,
                f"{result.url} answered with HTTP status {result.status}.",
                status=result.status,
            )
        redirects += 1
        if redirects > max_redirects:
            raise FetchError(
                "too-many-redirects",
                result.url,
                f"{url} redirected more than {max_redirects} times.",
            )
        try:
            location = target.url.join(result.headers["location"])
        except httpx.InvalidURL as exc:
            raise FetchError(
                "invalid-url", result.url, f"{result.url} redirected to an invalid URL ({exc})."
            ) from None
        if not cross_origin_redirects and _origin(location) != _origin(target.url):
            raise FetchError(
                "cross-origin-redirect",
                str(location),
                f"{result.url} redirected to another origin, {location}, which is not followed.",
            )
        target = _target(str(location), deadline)


def _json_bytes(body: Any) -> bytes | None:
    return body if body is None or isinstance(body, bytes) else json.dumps(body).encode()


def url_check(url: str) -> None:
    """Raise FetchError if ``url`` may not be fetched (scheme, host, its addresses): the
    checks of ``fetch``, made ahead (a webhook subscription's URL), fetching nothing."""
    _target(url, deadlines.fetch_deadline())


def fetch_json(url: str, **kwargs: Any) -> tuple[FetchResult, Any]:
    """fetch() and decode the body as strict JSON."""
    result = fetch(url, **kwargs)
    return result, result.json()


# The longest URL fetched (and stored as where a document came from).
URL_MAX_CHARS = 2048


def _target(url: str, deadline: float) -> Target:
    """Parse, check and resolve one URL; raise FetchError if it may not be fetched."""
    if len(url) > URL_MAX_CHARS:
        raise FetchError(
            "invalid-url",
            url[:200],
            f"A URL longer than {URL_MAX_CHARS} characters was not fetched.",
        )
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise FetchError("invalid-url", url, f"{url} is not a valid URL ({exc}).") from None
    if not parsed.scheme:
        raise FetchError("invalid-url", url, f"{url} is not an absolute URL.")
    host = parsed.raw_host.decode("ascii")
    name = host_name(host)
    if parsed.scheme != "https" and not (
        parsed.scheme == "http" and name in host_setting("FETCH_ALLOW_HTTP_HOSTS")
    ):
        hint = ""
        if parsed.scheme == "http":
            hint = setting_hint("FETCH_ALLOW_HTTP_HOSTS", name, also_private=host_is_local(name))
        raise FetchError(
            "scheme-not-allowed",
            url,
            f"{url} was not fetched: only https URLs are allowed.{hint}",
        )
    if not host:
        raise FetchError("invalid-url", url, f"{url} has no host.")
    if parsed.userinfo:
        raise FetchError("invalid-url", url, f"{url} was not fetched: it carries credentials.")
    port = parsed.port or DEFAULT_PORTS[parsed.scheme]
    addresses = _resolve(host, port, url, deadline)
    if name not in host_setting("FETCH_ALLOWED_HOSTS"):
        for address in addresses:
            if not is_public_address(address):
                raise FetchError(
                    "blocked-address",
                    url,
                    f"{url} was not fetched: its host resolves to {address}, "
                    "which is not a public address." + setting_hint("FETCH_ALLOWED_HOSTS", name),
                )
    return Target(url=parsed, host=host, port=port, addresses=addresses)


def target_checked(url: str, deadline: float) -> Target:
    """``url`` parsed, checked and resolved as a fetch of it would be (a gRPC channel's
    target: registry/outbound/channels.py); FetchError when it may not be reached."""
    return _target(url, deadline)


def _resolve(host: str, port: int, url: str, deadline: float) -> tuple[str, ...]:
    try:
        infos = deadlines.getaddrinfo(host, port, deadline)
    except TimeoutError:
        raise FetchError(
            "dns-failure", url, f"{url} was not fetched: its host was not resolved in time."
        ) from None
    except (OSError, UnicodeError) as exc:
        raise FetchError(
            "dns-failure", url, f"{url} was not fetched: its host could not be resolved ({exc})."
        ) from None
    addresses = tuple(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise FetchError("dns-failure", url, f"{url} was not fetched: its host has no address.")
    return addresses


def _exchange(
    target: Target,
    *,
    body: bytes | None,
    content_type: str = "application/json",
    extra_headers: dict[str, str] | None = None,
    accept_json: bool,
    max_bytes: int,
    connect_timeout: float,
    read_timeout: float,
    deadline: float,
) -> FetchResult:
    """One GET (or POST of ``body``) on a checked target. Redirects come back unread; other
    non-2xx raise."""
    url = str(target.url)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchError("timeout", url, f"{url} was not fetched: the time limit ran out.")
    timeouts = {
        "connect": min(connect_timeout, remaining),
        "read": min(read_timeout, remaining),
        "write": min(read_timeout, remaining),
        "pool": min(connect_timeout, remaining),
    }
    request_url = httpcore.URL(
        scheme=target.url.raw_scheme,
        host=target.url.raw_host,
        port=target.port,
        target=target.url.raw_path,
    )
    request_headers = [
        (b"Host", target.url.netloc),
        (b"User-Agent", user_agent().encode()),
        (b"Accept", b"application/json" if accept_json else b"*/*"),
        (b"Accept-Encoding", b"identity"),
    ]
    if body is not None:
        request_headers.append((b"Content-Type", content_type.encode("ascii")))
    own = {name.lower() for name, _ in request_headers}
    for name, value in (extra_headers or {}).items():
        if name.lower().encode() not in own:
            request_headers.append((name.encode("ascii"), value.encode("latin-1")))
    try:
        with (
            httpcore.ConnectionPool(
                ssl_context=ssl_context(getattr(settings, "FETCH_CA_BUNDLE", None)),
                network_backend=PinnedBackend(target, deadline),
            ) as pool,
            pool.stream(
                "GET" if body is None else "POST",
                request_url,
                headers=request_headers,
                content=body,
                extensions={"timeout": timeouts},
            ) as response,
        ):
            headers = httpx.Headers(response.headers)
            if response.status in REDIRECT_STATUSES and "location" in headers:
                return FetchResult(url=url, status=response.status, headers=headers, body=b"")
            if not 200 <= response.status < 300:
                raise FetchError(
                    "http-status",
                    url,
                    f"{url} answered with HTTP status {response.status}.",
                    status=response.status,
                )
            content_type = headers.get("content-type", "")
            if accept_json and not _is_json_media_type(content_type):
                raise FetchError(
                    "not-json",
                    url,
                    f"{url} answered with content type {content_type or '(none)'!r}, not JSON.",
                )
            too_large = FetchError(
                "too-large", url, f"The response from {url} is larger than {max_bytes} bytes."
            )
            if _content_length(headers) > max_bytes:
                raise too_large
            body = bytearray()
            for chunk in response.iter_stream():
                body += chunk[: max_bytes + 1 - len(body)]
                if len(body) > max_bytes:
                    raise too_large
                if time.monotonic() > deadline:
                    raise FetchError(
                        "timeout", url, f"{url} was not fetched: the time limit ran out."
                    )
            return FetchResult(
                url=url,
                status=response.status,
                headers=headers,
                body=bytes(body),
                cert_expires_at=cert_expiry(response),
            )
    except httpcore.TimeoutException:
        raise FetchError("timeout", url, f"{url} did not answer in time.") from None
    except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
        raise _connection_error(exc, url) from None


def _connection_error(exc: Exception, url: str) -> FetchError:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            hint = ca_bundle_hint() if isinstance(cause, ssl.SSLCertVerificationError) else ""
            return FetchError(
                "tls-error",
                url,
                f"{url} was not fetched: the TLS connection failed ({cause}){hint}.",
            )
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, httpcore.ProtocolError):
        return FetchError(
            "protocol-error", url, f"{url} answered with a malformed HTTP response ({exc})."
        )
    return FetchError("connect-failed", url, f"The connection to {url} failed ({exc}).")


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (
        url.scheme,
        host_name(url.raw_host.decode("ascii")),
        url.port or DEFAULT_PORTS.get(url.scheme),
    )


def _is_json_media_type(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


def _content_length(headers: httpx.Headers) -> int:
    try:
        return int(headers.get("content-length", "0"))
    except ValueError:
        return 0


def user_agent() -> str:
    """The User-Agent of every outbound request: the registry and its base URL."""
    version = getattr(settings, "REGISTRY_VERSION", "1.0")
    base_url = getattr(settings, "REGISTRY_BASE_URL", "")
    return f"a2a-registry/{version} (+{base_url})" if base_url else f"a2a-registry/{version}"
