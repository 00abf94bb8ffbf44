"""An httpx transport over the safe fetcher, for the SDKs' own clients (a2a-sdk's): each
request they make goes through ``fetch`` (its address checks, deadline and size cap), and
each exchange is recorded, so that a probe can say what the wire showed besides what the
SDK made of it."""

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime

import httpx

from registry.outbound.fetch import FetchError, fetch

# The request headers an SDK's client may set (the fetcher writes Host, User-Agent, Accept,
# Content-Type and the encoding itself).
PASSED_HEADERS = frozenset(
    {"a2a-version", "a2a-extensions", "authorization", "mcp-protocol-version"}
)


@dataclass
class Exchange:
    """One request: its method and URL, the HTTP status that came back (None: none), the
    fetcher's reason when it failed, and the certificate's expiry when it was seen."""

    method: str
    url: str
    status: int | None
    reason: str = ""
    cert_expires_at: datetime | None = None


class _Fetching:
    """Send an httpx client's requests (GET, POST of bytes) through ``fetch``, each within
    ``timeout`` seconds and ``max_bytes``, and none past ``deadline`` (``time.monotonic()``);
    a non-2xx answer comes back as its status. ``_http``: the httpx module of the client
    (httpx, or httpx2 for the mcp SDK), whose requests, answers and errors these are."""

    _http = httpx

    def __init__(
        self, *, timeout: float, deadline: float | None = None, max_bytes: int = 1024 * 1024
    ) -> None:
        self.timeout, self.deadline, self.max_bytes = timeout, deadline, max_bytes
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request):
        http = self._http
        # Neither another method (an MCP session's DELETE) nor a GET of an event stream that
        # stays open (MCP's stream of server messages): the fetcher reads whole answers.
        listens = request.method == "GET" and "text/event-stream" in request.headers.get(
            "accept", ""
        )
        if request.method not in ("GET", "POST") or listens:
            self.exchanges.append(Exchange(request.method, str(request.url), None, "not-sent"))
            return http.Response(405, request=request)
        body = await request.aread()
        timeout = self.timeout
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
            if timeout <= 0:
                self.exchanges.append(Exchange(request.method, str(request.url), None, "timeout"))
                raise http.ReadTimeout("the probe's time ran out", request=request)
        headers = {k: v for k, v in request.headers.items() if k.lower() in PASSED_HEADERS}
        try:
            result = await asyncio.to_thread(
                fetch,
                str(request.url),
                accept_json=False,
                max_bytes=self.max_bytes,
                timeout=timeout,
                json_body=body if request.method == "POST" else None,
                headers=headers,
            )
        except FetchError as exc:
            self.exchanges.append(
                Exchange(request.method, str(request.url), exc.status, exc.reason)
            )
            if exc.reason == "http-status" and exc.status is not None:
                return http.Response(exc.status, request=request)
            if exc.reason == "timeout":
                raise http.ReadTimeout(exc.detail, request=request) from None
            raise http.ConnectError(exc.detail, request=request) from None
        self.exchanges.append(
            Exchange(request.method, str(request.url), result.status, "", result.cert_expires_at)
        )
        return http.Response(
            result.status, headers=dict(result.headers), content=result.body, request=request
        )


class FetcherTransport(_Fetching, httpx.AsyncBaseTransport):
    """For httpx clients (a2a-sdk's)."""


def fetcher_transport_httpx2(**kwargs):
    """The same for the mcp SDK's client, which is on httpx2 (imported here, when asked)."""
    import httpx2

    class Fetcher2(_Fetching, httpx2.AsyncBaseTransport):
        _http = httpx2

    return Fetcher2(**kwargs)
