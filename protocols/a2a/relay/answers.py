"""What the relay answers besides the SDK's answers: refusals before the SDK reads a request
(the forwarded headers' size), and the SDK's internal error turned into what the bindings
say for a call refused a waiting place or not taken by the broker (a problem, or a JSON-RPC
error with ``data.retryAfter``; ``Retry-After`` either way)."""

import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from protocols.a2a.relay.broker import forwarded_headers
from protocols.a2a.relay.waits import WaitRefused
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError, problem_response


def _unavailable_response(response: HttpResponse, reason: str, *, rest: bool) -> HttpResponse:
    """The SDK's internal error for a request the broker did not take, as the bindings
    say to retry: a 503 problem, or the JSON-RPC error with ``data.retryAfter``."""
    retry_after = settings.QUEUE_RELAY_RETRY_AFTER_SECONDS
    if rest:
        response = problem_response(503, "queue-unavailable", f"{reason} Retry later.")
    else:
        body = json.loads(response.content)
        body["error"]["data"] = {"retryAfter": retry_after}
        response = HttpResponse(json.dumps(body), content_type="application/json")
    response["Retry-After"] = str(retry_after)
    return response


def _refused_response(response: HttpResponse, refused: WaitRefused, *, rest: bool) -> HttpResponse:
    """A call refused for want of a waiting place: a 503 (429: the client's limit) problem
    naming the limit, or the JSON-RPC error with ``data.retryAfter`` and ``data.limit``."""
    if rest:
        response = problem_response(refused.status, refused.slug, refused.detail)
    else:
        body = json.loads(response.content)
        body["error"]["message"] = refused.detail
        body["error"]["data"] = {"retryAfter": refused.retry_after, "limit": refused.limit}
        response = HttpResponse(json.dumps(body), content_type="application/json")
    response["Retry-After"] = str(refused.retry_after)
    return response


def relay_outcome(handler, response: HttpResponse, *, rest: bool) -> HttpResponse:
    """The SDK's answer, but for a call refused or not taken by the broker."""
    if handler.refused is not None:
        return _refused_response(response, handler.refused, rest=rest)
    if handler.unavailable is not None:
        return _unavailable_response(response, handler.unavailable, rest=rest)
    return response


def forwarded_headers_check(request: HttpRequest) -> None:
    """The headers the agent would get held to QUEUE_RELAY_HEADER_MAX_BYTES each and
    QUEUE_RELAY_HEADERS_MAX_BYTES in all (their names and values): past the broker's frame
    size a message breaks its connection. ProblemError (400) naming the header past one."""
    headers = forwarded_headers({k.lower(): v for k, v in request.headers.items()})
    each, total = settings.QUEUE_RELAY_HEADER_MAX_BYTES, settings.QUEUE_RELAY_HEADERS_MAX_BYTES
    size = 0
    for name, value in headers.items():
        length = len(name.encode()) + len(value.encode())
        size += length
        if length > each:
            limit = f"is {length} bytes, past QUEUE_RELAY_HEADER_MAX_BYTES ({each})"
        elif size > total:
            limit = f"brings the forwarded headers past QUEUE_RELAY_HEADERS_MAX_BYTES ({total})"
        else:
            continue
        raise ProblemError(
            400,
            "validation-error",
            f"The header {name} {limit}: nothing was sent to the agent.",
            [Problem(f"headers.{name}", limit)],
        )


def relay_problem(exc: ProblemError) -> HttpResponse:
    return problem_response(
        exc.status_code, exc.slug, exc.problem_detail, errors=exc.errors or None
    )
