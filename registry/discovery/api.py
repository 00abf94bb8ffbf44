"""Discovery's HTTP API: ``GET /discover/agents`` and ``/agents`` (filters, text search,
sorts, facet counts, keyset cursors, the change feed), and ``POST /agents``, a native
registration answered with the agent's JSON."""

from django.db import transaction
from django.http import HttpResponse
from django.utils.http import http_date
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access.idempotency import idempotent
from registry.agents import selectors, services
from registry.agents.api import agent_response, owner_for
from registry.agents.serializers import AgentInputSerializer, AgentSerializer
from registry.agents.visibility import (
    agent_visibility_change,
    reader_scope,
    sees_restricted,
    visibility_input,
)
from registry.discovery import cache as discovery_cache
from registry.discovery import discover as discovery
from registry.discovery import planner
from registry.discovery.filters import agent_filterset
from registry.discovery.lean import next_link, page_body
from registry.discovery.listings import listings_read
from registry.discovery.pagination import cursor_key
from registry.discovery.query import query_parse
from registry.discovery.search import unlisted_searched
from registry.http.params import limit_schema
from registry.signals import writes_batched


class AgentPageSerializer(serializers.Serializer):
    results = AgentSerializer(many=True)
    next = serializers.URLField(allow_null=True)
    sort = serializers.CharField()
    facets = serializers.DictField(required=False)
    facetsExact = serializers.BooleanField(
        required=False,
        help_text="false: the facet counts are estimates from a uniform sample of the "
        "matching agents (more matched than DISCOVERY_FACET_EXACT).",
    )
    deleted = serializers.ListField(child=serializers.DictField(), required=False)


class DiscoverAgentsView(APIView):
    """Find agents: filters, text search, sort, facet counts, keyset cursors, change feed.

    With ``updated_since`` the listing is a change feed for mirrors: agents changed since
    then, oldest change first, and ``deleted``: the agents deleted in the same span.
    """

    filter_backends = [DjangoFilterBackend]  # for the OpenAPI schema's query parameters
    prefiltered = False  # True when get_queryset is itself a selection of agents
    filters_left_out: frozenset[str] = frozenset()  # filters that mean nothing here

    @property
    def filterset_class(self):
        return agent_filterset(self.filters_left_out)

    restricted = False  # the caller may read agents that are not publicly listed

    def get_queryset(self):
        if self.restricted:  # the public agents and those restricted to the caller
            return selectors.agent_readable_queryset(self.request.user)
        return selectors.agent_discoverable_queryset()

    @extend_schema(
        parameters=[
            OpenApiParameter("sort", str, enum=["relevance", "recent", "name", "trust"]),
            OpenApiParameter(
                "collapse",
                str,
                enum=["true", "false"],
                description="true (default): one agent listed more than once (the same card "
                "or interface under other owners) shows as its canonical copy only; false: "
                "every copy (each names its canonical copy in duplicateOf).",
            ),
            OpenApiParameter(
                "mode",
                str,
                enum=["hybrid", "semantic", "keyword"],
                description="How q finds and ranks: hybrid (default; by words and by meaning, "
                "fused), semantic (by meaning alone) or keyword (by words alone).",
            ),
            OpenApiParameter("facets", str, description="Comma-separated facet names."),
            OpenApiParameter("updated_since", OpenApiTypes.DATETIME),
            OpenApiParameter(
                "limit", limit_schema(), description="Agents per page, 1 to 100 (default 20)."
            ),
            OpenApiParameter("cursor", str),
        ],
        filters=True,
        responses=AgentPageSerializer,
    )
    def get(self, request: Request) -> Response:
        self.restricted = sees_restricted(request.user)
        # Such a caller's words search the unlisted agents' too (registry.discovery.search).
        with unlisted_searched(self.restricted):
            return self._discover(request)

    def _discover(self, request: Request) -> HttpResponse:
        params, scope = request.query_params, type(self).__name__
        # A caller who may read restricted agents (registry.agents.visibility) has pages of
        # its own, cached under what decides them (its owner, groups and role); everyone
        # else shares the public pages (and the lean lane's).
        if self.restricted:
            scope = f"{scope}:{reader_scope(request.user)}"
        # Parsed and checked once: every path below takes the query (a 400 naming the field).
        query = query_parse(params, without=self.filters_left_out)

        def agents():
            return discovery.query_agents(query, self.get_queryset(), self.filters_left_out)

        plan = planner.plan(query, agents, prefiltered=self.prefiltered)
        # The page's keys and facet counts, from the cache where exact (at the current data
        # generation); the page's stored listings (registry/discovery/listings.py), joined as bytes.
        page, sort, read = discovery_cache.page_cached(
            scope, query, plan.find, listings_read, plan.candidates
        )
        body = {"next": self._next_link(request, page.next_cursor), "sort": sort}
        if query.facets:
            body["facets"], body["facetsExact"] = discovery_cache.facet_counts_cached(
                read.generation,
                scope,
                params,
                lambda: discovery.facet_source(plan.agents(), query, prefiltered=self.prefiltered),
                list(query.facets),
            )
        if query.since is not None:
            # Each page's span starts where the previous one ended (its cursor), so every
            # tombstone is in exactly one page.
            start = cursor_key(query.cursor, "updated") if query.cursor else query.since
            end = cursor_key(page.next_cursor, "updated") if page.next_cursor else None
            reader = request.user if self.restricted else None
            body["deleted"] = discovery.deleted_between(start, end, reader)
        response = HttpResponse(page_body(read, body), content_type="application/json")
        if read.last_change is not None:
            response["Last-Modified"] = http_date(read.last_change.timestamp())
        return response

    def _next_link(self, request: Request, cursor: str | None) -> str | None:
        return next_link(request, request.query_params, cursor)


@extend_schema_view(get=extend_schema(operation_id="agents_list"))
class AgentListView(DiscoverAgentsView):
    """List agents (as /discover/agents does) or register one natively."""

    @extend_schema(request=AgentInputSerializer, responses={201: AgentSerializer})
    @idempotent
    def post(self, request: Request) -> Response:
        payload = AgentInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        asked = visibility_input(payload.validated_data)  # checked before anything is written
        # One write (its events once, with its visibility): never readable by others.
        with transaction.atomic(), writes_batched():
            agent = services.agent_create(
                owner=owner_for(request, payload.validated_data.get("owner")),
                data=payload.to_input(),
            )
            agent_visibility_change(agent=agent, asked=asked, created=True)
        return agent_response(request, agent.id, 201, Location=f"/agents/{agent.id}")
