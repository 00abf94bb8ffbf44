"""The ARD registry API under ``<REGISTRY_BASE_URL>/ard`` (v0.9 §7): ``POST /ard/search``,
``POST /ard/explore``, ``GET /ard/agents``, ``GET /ard/agents/{identifier}``, and the crawl
sources (``POST /ard/sources``, ``GET /ard/sources/<id>``).

Errors carry ARD's ``{errorCode, message}`` beside the RFC 9457 members."""

import uuid

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from protocols.ard.catalog.entries import dumps
from protocols.ard.catalog.query import (
    explore_parse,
    invalid,
    list_filter_parse,
    offset_parse,
    offset_token,
    order_parse,
    search_parse,
)
from protocols.ard.catalog.services import source_add
from protocols.ard.crawl.fetch import source_target
from protocols.ard.crawl.tasks import ard_source_crawl_task
from protocols.ard.models import CatalogSource
from protocols.ard.search import selectors
from protocols.ard.search.search import search_body
from registry.access.auth import Principal
from registry.access.idempotency import idempotent
from registry.access.throttles import ReadThrottle, fetch_rate_check
from registry.http.params import limit_schema, params_check
from registry.http.problems import ProblemError

ERROR_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "INVALID_ARGUMENT",
    415: "INVALID_ARGUMENT",
    429: "RATE_LIMIT_EXCEEDED",
}


class SearchThrottle(ReadThrottle):
    """A search is a read, though it is a POST: the per-client read limit applies."""

    methods_safe = False


class ArdView(APIView):
    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        if isinstance(response.data, dict):
            response.data.setdefault(
                "errorCode", ERROR_CODES.get(response.status_code, "INTERNAL_ERROR")
            )
            response.data.setdefault("message", response.data.get("detail", ""))
        return response


def _body(request: Request) -> dict:
    if not isinstance(request.data, dict):
        raise invalid("", "The request body must be a JSON object")
    return request.data


def _json(raw: bytes) -> HttpResponse:
    return HttpResponse(raw, content_type="application/json")


class SearchView(ArdView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = [SearchThrottle]

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={200: OpenApiTypes.OBJECT},
        description="ARD search: {query: {text, filter, mode}, federation, pageSize, pageToken} → "
        "{results: [entry + score + source], referrals?, pageToken?}.",
    )
    def post(self, request: Request) -> HttpResponse:
        body = _body(request)
        return _json(search_body(search_parse(body), body["query"]))


class ExploreView(ArdView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = [SearchThrottle]

    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        query, facets = explore_parse(_body(request))
        return Response({"resultType": "facets", "facets": selectors.explore(query, facets)})


class AgentsView(ArdView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "filter",
                str,
                description="Clauses joined by AND, e.g. type = 'application/a2a-agent-card+json' "
                "AND updatedAfter > '2026-01-01T00:00:00Z'",
            ),
            OpenApiParameter(
                "orderBy", str, description="displayName, updatedAt or createdAt, then ASC or DESC."
            ),
            OpenApiParameter("pageSize", limit_schema(), description="1 to 100 (default 20)."),
            OpenApiParameter("pageToken", str),
        ],
        operation_id="ard_agents_list",
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> HttpResponse:
        params = request.query_params
        params_check(params, {"filter", "orderBy", "pageSize", "pageToken"})
        raw_size = params.get("pageSize") or "20"
        if not raw_size.isdigit() or not 1 <= int(raw_size) <= 100:
            raise invalid("pageSize", "must be an integer from 1 to 100")
        offset = offset_parse(params.get("pageToken"))
        items, total, more = selectors.browse(
            list_filter_parse(params.get("filter")),
            order_parse(params.get("orderBy")),
            offset,
            int(raw_size),
        )
        tail = {"total": total}
        if more:
            tail["pageToken"] = offset_token(offset + len(items))
        return _json(b'{"items":[' + b",".join(items) + b"]," + dumps(tail)[1:])


class AgentView(ArdView):
    @extend_schema(operation_id="ard_agent_retrieve", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, identifier: str) -> HttpResponse:
        if "\x00" in identifier:  # no entry has one, and PostgreSQL refuses it in a query
            raise invalid("identifier", "contains a NUL character (U+0000)")
        body = selectors.entry_by_identifier(identifier)
        if body is None:
            raise ProblemError(
                404, "not-found", f"No listed entry has the identifier {identifier!r}."
            )
        return _json(body)


NULLABLE_STRING = {"type": "string", "nullable": True}
SOURCE = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "url": NULLABLE_STRING,
        "domain": NULLABLE_STRING,
        "status": {"type": "string", "enum": ["pending", "ok", "failed"]},
        "catalogUrl": NULLABLE_STRING,
        "crawledAt": {**NULLABLE_STRING, "format": "date-time"},
        "nextCrawlAt": {**NULLABLE_STRING, "format": "date-time"},
        "report": {"type": "object", "nullable": True},
    },
    "required": ["id", "url", "domain", "status", "catalogUrl", "crawledAt", "nextCrawlAt"],
}
# Either a catalog's URL or a domain (its well-known catalog), nothing else.
SOURCE_REQUEST = {
    "oneOf": [
        {
            "type": "object",
            "properties": {"url": {"type": "string", "maxLength": 2048, "pattern": "^https://"}},
            "required": ["url"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"domain": {"type": "string", "minLength": 1}},
            "required": ["domain"],
            "additionalProperties": False,
        },
    ]
}


def source_document(source: CatalogSource) -> dict:
    return {
        "id": str(source.id),
        "url": source.url or None,
        "domain": source.domain or None,
        "status": source.status,
        "catalogUrl": source.catalog_url or None,
        "crawledAt": source.crawled_at.isoformat() if source.crawled_at else None,
        "nextCrawlAt": source.next_crawl_at.isoformat() if source.next_crawl_at else None,
        "report": source.report or None,
    }


class SourcesView(ArdView):
    @extend_schema(request={"application/json": SOURCE_REQUEST}, responses={202: SOURCE})
    @idempotent
    def post(self, request: Request) -> Response:
        principal = request.user
        if not isinstance(principal, Principal) or not principal.is_admin:
            raise exceptions.PermissionDenied("Only an admin key may add a catalog to crawl.")
        body = _body(request)
        url, domain = source_target(body)
        fetch_rate_check(request)
        source = source_add(owner=principal.owner, url=url, domain=domain)
        ard_source_crawl_task.delay(str(source.id))
        source.refresh_from_db()
        location = f"/ard/sources/{source.id}"
        return Response(source_document(source), status=202, headers={"Location": location})


class SourceView(ArdView):
    @extend_schema(responses={200: SOURCE})
    def get(self, request: Request, source_id: str) -> Response:
        try:
            pk = uuid.UUID(source_id)
        except ValueError:
            pk = None
        source = CatalogSource.objects.filter(pk=pk).first() if pk else None
        if source is None:
            raise ProblemError(404, "not-found", f"There is no catalog source {source_id}.")
        return Response(source_document(source))
