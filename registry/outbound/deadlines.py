"""Time limits of outbound fetches: one deadline over each whole exchange, and one budget
over all the fetches an incoming request makes.

A fetch's deadline (``FETCH_TOTAL_TIMEOUT`` from its start, or the end of the request's
budget if that comes first) bounds every step of it: the DNS lookup (``getaddrinfo`` in a
small pool of threads, given up on at the deadline), the TCP connect, the TLS handshake,
each read and write of headers and body. A server that trickles one header line a second
is cut off at the deadline like one that stalls.

``FetchBudgetMiddleware`` gives each incoming request ``FETCH_REQUEST_BUDGET`` seconds for
all its fetches together (registration by domain makes up to three, plus one per key set),
well under the web server's worker timeout, so no request can hold a worker for longer.
Background jobs have no request budget: each fetch has its own deadline.
"""

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextvars import ContextVar
from typing import Any

import httpcore
from django.conf import settings

_budget_end: ContextVar[float | None] = ContextVar("fetch_budget_end", default=None)
# Lookups that outlive their deadline keep their thread until the system resolver gives up;
# a small pool bounds how many, and a full pool fails new lookups at their deadline.
_resolvers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="fetch-dns")


class BudgetExhausted(Exception):
    """The request's time for fetches ran out before this fetch began."""


def fetch_deadline() -> float:
    """The monotonic time by which a fetch starting now must be over."""
    deadline = time.monotonic() + settings.FETCH_TOTAL_TIMEOUT
    budget_end = _budget_end.get()
    if budget_end is not None:
        if budget_end <= time.monotonic():
            raise BudgetExhausted
        deadline = min(deadline, budget_end)
    return deadline


class FetchBudgetMiddleware:
    """Every incoming request: FETCH_REQUEST_BUDGET seconds for all its fetches."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _budget_end.set(time.monotonic() + settings.FETCH_REQUEST_BUDGET)
        try:
            return self.get_response(request)
        finally:
            _budget_end.reset(token)


def remaining(deadline: float) -> float:
    return deadline - time.monotonic()


def _within(timeout: float | None, deadline: float, error: type[Exception]) -> float:
    left = remaining(deadline)
    if left <= 0:
        raise error("the fetch's time limit ran out")
    return left if timeout is None else min(timeout, left)


def getaddrinfo(host: str, port: int, deadline: float) -> list[Any]:
    """``socket.getaddrinfo`` given up on at the deadline (raises TimeoutError)."""
    left = remaining(deadline)
    if left <= 0:
        raise TimeoutError
    future = _resolvers.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        return future.result(timeout=left)
    except FutureTimeout:
        future.cancel()
        raise TimeoutError from None


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the deadline, whatever the peer does
    (each read's own timeout still applies, clamped to what is left)."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: float):
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _within(timeout, self._deadline, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _within(timeout, self._deadline, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _within(timeout, self._deadline, httpcore.ConnectTimeout)
        tls = self._stream.start_tls(ssl_context, server_hostname, timeout)
        return DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


def connect_timeout(timeout: float | None, deadline: float) -> float:
    return _within(timeout, deadline, httpcore.ConnectTimeout)
