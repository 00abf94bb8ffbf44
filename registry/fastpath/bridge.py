"""Serve an ASGI application (a protocol SDK's server) from a Django view.

The protocol SDKs (a2a-sdk, mcp) ship their servers as ASGI applications; the registry
serves them from its own Django views, on the same port, middleware and database
connection as every other request: the view hands the request to the SDK's application
as an ASGI ``http`` scope (``async_to_sync``: the SDK's database calls, through
``sync_to_async``, run back in the request's thread) and returns what it answered. The
answer is read whole, so these views serve no open-ended event streams (an answer still
open after ``ANSWER_SECONDS`` ends as a 504).
"""

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse

from registry.access.throttles import read_limited
from registry.http.jsonutil import JSONInputError, strict_loads
from registry.http.problems import problem_response

ASGIApp = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Any]
# The longest an answer may take (a registration by domain fetches for up to
# FETCH_TOTAL_TIMEOUT, twice at most): past it the request ends with a 504 problem.
ANSWER_SECONDS = 120
# Headers the Django response sets itself.
HOP_HEADERS = {"content-length", "transfer-encoding", "connection"}


def request_refusal(request: HttpRequest, *, post_to: str | None) -> HttpResponse | None:
    """What every protocol endpoint refuses before its SDK sees the request, as a problem:
    beyond the read limit (429), another method than POST when ``post_to`` names where
    requests go (405), a body over the size limit (413). None for a request to hand on."""
    limited = read_limited(request)
    if limited is not None:
        return limited
    if post_to is not None and request.method != "POST":
        response = problem_response(405, "method-not-allowed", f"Requests are POSTed to {post_to}.")
        response["Allow"] = "POST"
        return response
    try:
        request.body  # noqa: B018  (read now: over DATA_UPLOAD_MAX_MEMORY_SIZE it raises)
    except RequestDataTooBig:
        return problem_response(413, "payload-too-large", "The request body is too large.")
    return None


def json_body_problem(request: HttpRequest) -> str | None:
    """Why a request's body is not JSON the registry accepts anywhere (registry.http.jsonutil's
    rules: UTF-8, no duplicate keys, NaN, NUL or lone surrogates, REGISTRY_MAX_JSON_DEPTH),
    or None (also for no body): checked before an SDK parses it, with laxer rules."""
    if not request.body:
        return None
    try:
        strict_loads(request.body, max_depth=settings.REGISTRY_MAX_JSON_DEPTH)
    except JSONInputError as exc:
        return str(exc)
    return None


def asgi_scope(request: HttpRequest) -> dict:
    headers = [
        (name[5:].replace("_", "-").lower().encode("latin-1"), str(value).encode("latin-1"))
        for name, value in request.META.items()
        if name.startswith("HTTP_")
    ]
    for name, header in (("CONTENT_TYPE", b"content-type"), ("CONTENT_LENGTH", b"content-length")):
        if request.META.get(name):
            headers.append((header, str(request.META[name]).encode("latin-1")))
    host = request.get_host().rsplit(":", 1)[0]
    port = int(request.get_port() or (443 if request.is_secure() else 80))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path_info,
        "raw_path": request.path_info.encode(),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": "",
        "headers": headers,
        "server": (host, port),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "state": {},
    }


async def asgi_call(app: ASGIApp, scope: dict, body: bytes) -> tuple[int, list, bytes]:
    """Run one request through ``app``; returns the status, headers and whole body."""
    answered = anyio.Event()
    received = False
    status, headers, chunks = 500, [], []

    async def receive() -> dict:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client "disconnects" once the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                answered.set()

    with anyio.move_on_after(ANSWER_SECONDS):
        await app(scope, receive, send)
    if not answered.is_set():  # an open-ended answer (an event stream) or a stuck one
        return 504, [], b""
    return status, headers, b"".join(chunks)


def asgi_response(app: ASGIApp, request: HttpRequest, scope: dict | None = None) -> HttpResponse:
    status, headers, body = async_to_sync(asgi_call)(
        app, scope or asgi_scope(request), request.body
    )
    return response_of(status, headers, body)


def response_of(status: int, headers: list, body: bytes) -> HttpResponse:
    """What ``asgi_call`` returned, as a Django response."""
    if status == 504 and not headers:
        return problem_response(504, "timeout", "The answer took too long.")
    response = HttpResponse(body, status=status)
    for name, value in headers:
        name = name.decode("latin-1")
        if name.lower() not in HOP_HEADERS:
            response[name] = value.decode("latin-1")
    return response
