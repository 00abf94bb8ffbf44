"""An httpx transport over the safe fetcher, for the SDKs' own clients (a2a-sdk's): each
request they make goes through ``fetch`` (its address checks, deadline and size cap), and
each exchange is recorded, so that a probe can say what the wire showed besides what the
SDK made of it."""

import asyncio
import time
from dataclasses import dataclass, field
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


@dataclass
class FetcherTransport(httpx.AsyncBaseTransport):
    """Send an httpx client's requests (GET, POST of bytes) through ``fetch``, each within
    ``timeout`` seconds and ``max_bytes``, and none past ``deadline`` (``time.monotonic()``);
    a non-2xx answer comes back as its status."""

    timeout: float
    deadline: float | None = None
    max_bytes: int = 1024 * 1024
    exchanges: list[Exchange] = field(default_factory=list)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        timeout = self.timeout
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - time.monotonic())
            if timeout <= 0:
                self.exchanges.append(Exchange(request.method, str(request.url), None, "timeout"))
                raise httpx.ReadTimeout("the probe's time ran out", request=request)
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
                return httpx.Response(exc.status, request=request)
            if exc.reason == "timeout":
                raise httpx.ReadTimeout(exc.detail, request=request) from None
            raise httpx.ConnectError(exc.detail, request=request) from None
        self.exchanges.append(
            Exchange(request.method, str(request.url), result.status, "", result.cert_expires_at)
        )
        return httpx.Response(
            result.status, headers=result.headers, content=result.body, request=request
        )
