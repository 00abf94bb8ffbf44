"""RFC 9457 problem details: every error response of the registry is one of these."""

import logging
import sys
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from rest_framework import exceptions
from rest_framework.response import Response

from registry import extensions
from registry.http.jsonutil import Problem
from registry.http.request_ids import request_id

logger = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_BASE = "/problems/"

# The core's problem types, with the sentence that documents each at /problems/<slug>;
# protocol apps register theirs (registry.extensions.register_problem_type).
PROBLEM_TYPES = {
    "validation-error": "The request was understood but a field is invalid; see errors[].",
    "malformed-request": "The body is not a JSON object the endpoint can read.",
    "not-authenticated": "The request needs an API key: Authorization: Bearer <key> (or a "
    "token from an accepted identity provider), and the one it sent is not valid or missing.",
    "issuer-unavailable": "The token's identity provider did not give its keys (discovery "
    "document or JWKS): the token was neither accepted nor refused. Retry after Retry-After "
    "seconds.",
    "forbidden": "The API key may not change this resource.",
    "not-found": "There is no such resource.",
    "retired": "The agent was retired: no longer served or discovered; its versions stay.",
    "blocked": "The registry's blocklist refuses this write (its owner, an endpoint's domain, "
    "host or URL, or the card); the detail says why.",
    "scan-refused": "The registry's scanners refuse what the write would store (a rule whose "
    "verdict is block); errors[] lists each finding with its path.",
    "unlisted": "The agent is not publicly listed: it awaits the moderators' review, was "
    "rejected, or is quarantined. Its owner and admins still read it through the API.",
    "transfer-pending": "The agent has a pending ownership transfer: cancel it first.",
    "transfer-closed": "The ownership transfer was accepted, cancelled or expired already.",
    "domain-claimed": "Another owner has proven the domain is theirs: they register from it.",
    "claim-expired": "The domain claim expired unverified: make a new one.",
    "claim-unproven": "The domain publishes neither the claim's file nor its DNS TXT record.",
    "payload-too-large": "The request body is larger than the registry accepts.",
    "method-not-allowed": "The endpoint does not support this HTTP method.",
    "unsupported-media-type": "The endpoint reads JSON bodies only.",
    "throttled": "Too many requests; retry after the number of seconds in Retry-After.",
    "fetch-failed": "The registry could not fetch a document from the given address.",
    "server-error": "The registry failed to handle the request.",
    "key-inactive": "The API key is revoked or expired: it cannot be rotated.",
    "not-ready": "A dependency (database, cache or job broker) does not answer; see checks.",
    "timeout": "The answer took longer than the registry waits (an A2A or MCP request).",
    "service-unavailable": "The registry's database does not answer: a passing outage, not "
    "a fault of the request. Retry after Retry-After seconds (with the same Idempotency-Key "
    "for a registration).",
    "semantic-unavailable": "Search by meaning (mode=semantic) is unavailable: its embedding "
    "service does not answer. mode=keyword searches by words.",
    "idempotency-key-reused": "This Idempotency-Key was used with another request (another "
    "body, method or path) by the same API key: use a new key for a new request.",
    "idempotency-in-progress": "A request with this Idempotency-Key is still being handled: "
    "retry after Retry-After seconds to get its answer.",
    "conflict": "The agent changed under the request (it moved to another owner, or its card "
    "changed while it was verified); nothing was changed.",
    "precondition-failed": "The resource changed since the ETag sent in If-Match was read; "
    "nothing was changed. Read it again and retry.",
}

# How long a client should wait before retrying when the database does not answer.
RETRY_AFTER_SECONDS = 5


def database_unavailable(exc: BaseException) -> bool:
    """Whether an exception says the database does not answer (down, restarting, the
    connection broken): a passing outage rather than a fault of the request."""
    return isinstance(exc, OperationalError | InterfaceError)


def unavailable_problem() -> dict[str, Any]:
    return problem_body(
        503,
        "service-unavailable",
        f"The registry's database does not answer; retry in {RETRY_AFTER_SECONDS} seconds.",
    )


def unavailable_response(request, exc: BaseException) -> JsonResponse:
    """The 503 of a request the database failed (logged once, without a traceback)."""
    logger.warning(
        "%s %s: the database does not answer (%s: %s)",
        getattr(request, "method", "?"),
        getattr(request, "path", "?"),
        type(exc).__name__,
        str(exc).strip()[:200],
    )
    response = JsonResponse(unavailable_problem(), status=503, content_type=PROBLEM_CONTENT_TYPE)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def problem_description(slug: str) -> str | None:
    return PROBLEM_TYPES.get(slug) or extensions.problem_types.get(slug)


class ProblemError(exceptions.APIException):
    """An error the API reports as a problem of a given type, with optional field errors."""

    def __init__(
        self,
        status_code: int,
        slug: str,
        detail: str,
        errors: list[Problem] | None = None,
        *,
        retry_after: int | None = None,
        **extra: Any,
    ):
        super().__init__(detail)
        self.retry_after = retry_after  # seconds, sent as Retry-After
        self.status_code = status_code
        self.slug = slug
        self.problem_detail = detail
        self.errors = errors or []
        self.extra = extra


def problem_body(
    status_code: int,
    slug: str,
    detail: str,
    errors: list[Problem] | None = None,
    title: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": f"{PROBLEM_BASE}{slug}",
        "title": title or HTTPStatus(status_code).phrase,
        "status": status_code,
        "detail": detail,
    }
    if errors:
        body["errors"] = [p.as_dict() for p in errors]
    body.update(extra)
    rid = request_id.get()
    if rid:  # the request's (or job's) id, to find its log lines
        body["requestId"] = rid
    return body


def problem_response(status_code: int, slug: str, detail: str, **kwargs: Any) -> JsonResponse:
    """A problem response for plain Django views (outside DRF)."""
    return JsonResponse(
        problem_body(status_code, slug, detail, **kwargs),
        status=status_code,
        content_type=PROBLEM_CONTENT_TYPE,
        json_dumps_params={"ensure_ascii": False},
    )


def serializer_errors(errors: Any, path: str = "") -> list[Problem]:
    """Flatten DRF serializer errors into paths like ``endpoints[0].transport``."""
    problems: list[Problem] = []
    if isinstance(errors, dict):
        for key, value in errors.items():
            if key == "non_field_errors":
                problems.extend(serializer_errors(value, path))
            elif isinstance(key, int):
                problems.extend(serializer_errors(value, f"{path}[{key}]"))
            else:
                sub = f"{path}.{key}" if path else str(key)
                problems.extend(serializer_errors(value, sub))
    elif isinstance(errors, list):
        if all(isinstance(item, str) for item in errors):
            problems.extend(Problem(path or "(body)", str(item)) for item in errors)
        else:
            for index, item in enumerate(errors):
                if item:
                    problems.extend(serializer_errors(item, f"{path}[{index}]"))
    elif errors:
        problems.append(Problem(path or "(body)", str(errors)))
    return problems


_SLUGS = {
    exceptions.NotAuthenticated: "not-authenticated",
    exceptions.AuthenticationFailed: "not-authenticated",
    exceptions.PermissionDenied: "forbidden",
    exceptions.NotFound: "not-found",
    exceptions.MethodNotAllowed: "method-not-allowed",
    exceptions.UnsupportedMediaType: "unsupported-media-type",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "malformed-request",
    exceptions.ValidationError: "validation-error",
}


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's exception handler, answering with problem+json."""
    headers: dict[str, str] = {}
    if isinstance(exc, Http404):
        exc = exceptions.NotFound("There is no such resource.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = ProblemError(413, "payload-too-large", "The request body is too large.")
    body = exception_problem(exc)
    if body is None:
        return None
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        headers["Retry-After"] = str(int(exc.wait + 0.999))
    elif database_unavailable(exc):
        return unavailable_response(context.get("request"), exc)
    elif isinstance(exc, ProblemError) and exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        headers["WWW-Authenticate"] = auth_header
    response = Response(body, status=body["status"], headers=headers)
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def exception_problem(exc: Exception) -> dict[str, Any] | None:
    """The problem body of an API exception (None for any other): what the HTTP API
    answers, and what the A2A and MCP faces report in their own envelopes."""
    if isinstance(exc, ProblemError):
        body = problem_body(exc.status_code, exc.slug, exc.problem_detail, exc.errors, **exc.extra)
    elif isinstance(exc, exceptions.ValidationError):
        problems = serializer_errors(exc.detail)
        body = problem_body(
            400,
            "validation-error",
            "; ".join(f"{p.path}: {p.message}" for p in problems[:3])
            + (" …" if len(problems) > 3 else ""),
            problems,
        )
    elif database_unavailable(exc):
        body = unavailable_problem()
    elif isinstance(exc, exceptions.APIException):
        slug = next((s for cls, s in _SLUGS.items() if isinstance(exc, cls)), "error")
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        body = problem_body(exc.status_code, slug, str(detail))
    else:
        return None
    return body


def problem_type_view(request, slug: str) -> JsonResponse:
    description = problem_description(slug)
    if description is None:
        return problem_response(404, "not-found", f"There is no problem type '{slug}'.")
    return JsonResponse({"type": f"{PROBLEM_BASE}{slug}", "description": description})


def handler404(request, exception=None) -> HttpResponse:
    # A browser (it asks for text/html by name) gets a page; API clients get the problem.
    if "text/html" in request.headers.get("Accept", ""):
        context = {"registry_name": settings.REGISTRY_NAME, "path": request.path}
        return page_answer(render(request, "404.html", context, status=404))
    return problem_response(404, "not-found", f"There is nothing at {request.path}.")


def handler500(request) -> JsonResponse:
    exc = sys.exc_info()[1]  # set: Django calls this while handling the exception
    if exc is not None and database_unavailable(exc):
        return unavailable_response(request, exc)
    return problem_response(500, "server-error", "The registry failed to handle the request.")


def handler400(request, exception=None) -> JsonResponse:
    return problem_response(400, "malformed-request", "The request could not be read.")


def handler403(request, exception=None) -> JsonResponse:
    return problem_response(403, "forbidden", "Access denied.")


# Errors Django answers with its own HTML: DEBUG's 404 page, a plain view's 405, the CSRF
# failure page. The admin's pages stay HTML.
_DJANGO_ERRORS = {
    403: ("forbidden", "Access denied."),
    404: ("not-found", "There is nothing at {path}."),
    405: ("method-not-allowed", "{method} is not allowed on {path}."),
}
HTML_PREFIXES = ("/admin/", "/static/")


def page_answer(response: HttpResponse) -> HttpResponse:
    """Mark an HTML error page made for people (the pages' 404, 400, 429): the fallback
    below leaves it as it is."""
    response.page_answer = True
    return response


class ProblemFallbackMiddleware:
    """Every error outside the admin is problem+json, including those Django answers
    itself in HTML (DEBUG's 404s, 405s of plain views, CSRF failures)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def process_exception(self, request, exception):
        # Before DEBUG's technical page or handler500: a database outage is a 503 anywhere.
        if database_unavailable(exception):
            return unavailable_response(request, exception)
        return None

    def process_view(self, request, view_func, view_args, view_kwargs):
        """A method the route's API view does not take is a 405 with ``Allow`` whoever asks:
        answered before the view authenticates, checks permissions or counts the request
        (DRF does those first, so a write method without a key would be a 401)."""
        view_class = getattr(view_func, "cls", None)  # DRF's as_view() sets it
        if view_class is None:
            return None
        allowed = [
            name.upper()
            for name in view_class.http_method_names
            if hasattr(view_class, name) or (name == "head" and hasattr(view_class, "get"))
        ]
        if request.method in allowed:
            return None
        problem = problem_response(
            405, "method-not-allowed", f'Method "{request.method}" not allowed.'
        )
        problem["Allow"] = ", ".join(allowed)
        return problem

    def __call__(self, request):
        response = self.get_response(request)
        known = _DJANGO_ERRORS.get(response.status_code)
        if (
            known is None
            or response.streaming
            or request.path.startswith(HTML_PREFIXES)
            or getattr(response, "page_answer", False)
            or (
                response.get("Content-Type", "").startswith(("application/", "text/plain"))
                and response.content
            )
        ):
            return response
        slug, detail = known
        problem = problem_response(
            response.status_code, slug, detail.format(path=request.path, method=request.method)
        )
        if response.has_header("Allow"):
            problem["Allow"] = response["Allow"]
        return problem
