"""The native HTTP API: one view per resource, thin over services and selectors."""

from django.http import HttpResponse
from django.utils import timezone
from django.utils.http import http_date
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import discovery, discovery_cache, facets, liveness, selectors, services
from registry.auth import owner_choose, principal_may_change
from registry.concurrency import agent_etag, if_match_agent
from registry.discovery_lean import next_link, page_body
from registry.filters import agent_filterset
from registry.heartbeats import heartbeat_fast
from registry.jsonutil import Problem
from registry.listings import listings_read
from registry.models import Agent, Endpoint, ProbeResult
from registry.pagination import cursor_key, limit_parse, params_check
from registry.problems import ProblemError
from registry.serializers import (
    LIVENESS_SCHEMA,
    PROBE_CATEGORIES,
    UPTIME_SCHEMA,
    AgentInputSerializer,
    AgentSerializer,
    EndpointInputSerializer,
    EndpointSerializer,
    capability_input,
    endpoint_input,
    liveness_shown,
)
from registry.throttles import HeartbeatThrottle


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


def agent_response(request: Request, agent_id, status_code: int = 200, **headers) -> Response:
    """The agent's JSON, with its ETag (registry.concurrency: for If-Match on writes)."""
    agent = selectors.agent_get(str(agent_id))
    body = AgentSerializer(agent, context={"request": request}).data
    liveness = [(e["id"], e["liveness"]) for e in body["endpoints"]]
    headers = {"ETag": agent_etag(agent, liveness), **headers}
    return Response(body, status=status_code, headers=headers)


def owner_for(request: Request, requested: str | None) -> str:
    """The owner of a new agent: the key's owner; admin keys may name another."""
    return owner_choose(request.user, requested)


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

    def get_queryset(self):
        return selectors.agent_queryset()

    @extend_schema(
        parameters=[
            OpenApiParameter("sort", str, enum=["relevance", "recent", "name"]),
            OpenApiParameter("facets", str, description="Comma-separated facet names."),
            OpenApiParameter("updated_since", OpenApiTypes.DATETIME),
            OpenApiParameter("limit", int, description="Agents per page, 1 to 100 (default 20)."),
            OpenApiParameter("cursor", str),
        ],
        filters=True,
        responses=AgentPageSerializer,
    )
    def get(self, request: Request) -> Response:
        params, scope = request.query_params, type(self).__name__
        filtered = []  # the filtered agents, once needed

        def agents():
            if not filtered:
                filterset_class = self.filterset_class
                params_check(params, discovery.DISCOVERY_PARAMS | set(filterset_class.base_filters))
                filtered.append(
                    discovery.agents_filter(params, self.get_queryset(), filterset_class)
                )
            return filtered[0]

        def find():
            page, sort, _ = discovery.discover(
                agents(), params, full_rows=None, prefiltered=self.prefiltered
            )
            return page, sort

        # The page's keys and facet counts, from the cache where exact (at the current data
        # generation); the page's stored listings (registry/listings.py), joined as bytes.
        def candidates(count: int):
            return discovery.live_candidates(agents(), params, count, prefiltered=self.prefiltered)

        page, sort, read = discovery_cache.page_cached(
            scope, params, find, listings_read, candidates
        )
        since = discovery.since_parse(params.get("updated_since"))
        body = {"next": self._next_link(request, page.next_cursor), "sort": sort}
        names = facets.facets_parse(params.get("facets"))
        if names:
            body["facets"], body["facetsExact"] = discovery_cache.facet_counts_cached(
                read.generation,
                scope,
                params,
                lambda: discovery.facet_source(agents(), params, prefiltered=self.prefiltered),
                names,
            )
        if since is not None:
            # Each page's span starts where the previous one ended (its cursor), so every
            # tombstone is in exactly one page.
            cursor = request.query_params.get("cursor")
            start = cursor_key(cursor, "updated") if cursor else since
            end = cursor_key(page.next_cursor, "updated") if page.next_cursor else None
            body["deleted"] = discovery.deleted_between(start, end)
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
    def post(self, request: Request) -> Response:
        payload = AgentInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        agent = services.agent_create(
            owner=owner_for(request, payload.validated_data.get("owner")),
            data=payload.to_input(),
        )
        return agent_response(request, agent.id, 201, Location=f"/agents/{agent.id}")


class AgentDetailView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(responses=AgentSerializer)
    def get(self, request: Request, agent_id: str) -> Response:
        return agent_response(request, agent_id)

    @extend_schema(request=AgentInputSerializer, responses=AgentSerializer)
    def put(self, request: Request, agent_id: str) -> Response:
        return self._update(request, agent_id, partial=False)

    @extend_schema(request=AgentInputSerializer, responses=AgentSerializer)
    def patch(self, request: Request, agent_id: str) -> Response:
        return self._update(request, agent_id, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get(agent_id)
        principal_may_change(request, agent.owner)
        services.agent_delete(agent=agent, precondition=_if_match(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _update(self, request: Request, agent_id: str, *, partial: bool) -> Response:
        agent = selectors.agent_get(agent_id)
        principal_may_change(request, agent.owner)
        payload = AgentInputSerializer(data=request.data, partial=partial)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        owner = data.get("owner")
        if owner is not None and owner != agent.owner and not request.user.is_admin:
            raise ProblemError(
                403,
                "forbidden",
                "Only an admin key may move an agent to another owner.",
                [Problem("owner", "may be changed by admin keys only")],
            )
        if partial:
            changes = {k: data[k] for k in ("name", "description", "version") if k in data}
            if "capabilities" in data:
                changes["capabilities"] = [capability_input(c) for c in data["capabilities"]]
            if "endpoints" in data:
                changes["endpoints"] = [endpoint_input(e) for e in data["endpoints"]]
        else:
            full = payload.to_input()
            changes = {
                "name": full.name,
                "description": full.description,
                "version": full.version,
                "capabilities": full.capabilities,
                "endpoints": full.endpoints,
            }
        services.agent_update(agent=agent, owner=owner, precondition=_if_match(request), **changes)
        return agent_response(request, agent.id)


def _if_match(request: Request):
    return if_match_agent(request.META.get("HTTP_IF_MATCH"))


class EndpointListView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(request=EndpointInputSerializer, responses={201: EndpointSerializer})
    def post(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get(agent_id)
        principal_may_change(request, agent.owner)
        payload = EndpointInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.to_input()
        if agent.endpoints.filter(name=data.name).exists():
            raise ProblemError(
                409,
                "validation-error",
                f"Agent {agent.id} already has an endpoint '{data.name}'.",
                [Problem("name", "an endpoint of this agent already has this name")],
            )
        endpoint = services.endpoint_add(agent=agent, data=data)
        body = EndpointSerializer(endpoint, context={"request": request}).data
        return Response(
            body, status=201, headers={"Location": f"/agents/{agent.id}/endpoints/{endpoint.id}"}
        )


class EndpointDetailView(APIView):
    @extend_schema(responses=EndpointSerializer)
    def get(self, request: Request, agent_id: str, endpoint_id: str) -> Response:
        agent = selectors.agent_get(agent_id)
        endpoint = selectors.endpoint_get(agent, endpoint_id)
        return Response(EndpointSerializer(endpoint, context={"request": request}).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, agent_id: str, endpoint_id: str) -> Response:
        agent = selectors.agent_get(agent_id)
        principal_may_change(request, agent.owner)
        endpoint = selectors.endpoint_get(agent, endpoint_id)
        services.endpoint_remove(endpoint=endpoint)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_field(LIVENESS_SCHEMA)
class LivenessField(serializers.JSONField):
    def to_representation(self, value: dict) -> dict:
        return liveness_shown(value)


class LivenessSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    liveness = LivenessField()


class AgentHeartbeatSerializer(serializers.Serializer):
    agentId = serializers.UUIDField()
    live = serializers.BooleanField()
    endpoints = LivenessSerializer(many=True)


PROBE_FIELDS = ("last_probe_at", "last_probe_ok", "last_probe_category")


def _signs_of_life(request: Request, agent_id: str, endpoint_id: str | None) -> list[dict]:
    """Record a heartbeat of one endpoint of the agent, or of all of them: the owner's (or
    an admin's) key; one read (owner, graces), one UPDATE. Their liveness now."""
    agent_pk = selectors.parse_uuid(agent_id)
    rows = Endpoint.objects.filter(agent_id=agent_pk)
    if endpoint_id is not None:
        rows = rows.filter(pk=selectors.parse_uuid(endpoint_id, "endpoint"))
    found = list(
        rows.select_related("agent").only(
            "pk", "agent_id", "liveness_grace", *PROBE_FIELDS, "agent__owner"
        )
    )
    if not found:
        if not Agent.objects.filter(pk=agent_pk).exists():
            raise ProblemError(404, "not-found", f"There is no agent {agent_id}.")
        which = f" {endpoint_id}" if endpoint_id is not None else "s"
        raise ProblemError(404, "not-found", f"Agent {agent_id} has no endpoint{which}.")
    owner = found[0].agent.owner
    principal_may_change(request, owner)
    now = timezone.now()
    liveness.endpoints_heartbeat(Endpoint.objects.filter(pk__in=[e.pk for e in found]), now)
    answers = []
    for endpoint in found:
        endpoint.last_alive_at, endpoint.alive_until = now, now + endpoint.liveness_grace
        endpoint.checked_by = liveness.HEARTBEAT
        answers.append({"id": endpoint.pk, "liveness": liveness.endpoint_liveness(endpoint, now)})
    return answers


class EndpointHeartbeatView(APIView):
    """A heartbeat (Persistent) or renewal (Ephemeral) of one endpoint: either path works for
    either model. The hottest write: no audit entry, no card rebuilt, updatedAt untouched."""

    throttle_classes = [HeartbeatThrottle]

    def dispatch(self, request, *args, **kwargs):
        if request.method == "POST":
            fast = heartbeat_fast(request, kwargs["agent_id"], kwargs["endpoint_id"])
            if fast is not None:
                return fast
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(request=None, responses=LivenessSerializer)
    def post(self, request: Request, agent_id: str, endpoint_id: str) -> Response:
        [body] = _signs_of_life(request, agent_id, endpoint_id)
        return Response(LivenessSerializer(body).data)


class AgentHeartbeatView(APIView):
    """A heartbeat of every endpoint of the agent."""

    throttle_classes = [HeartbeatThrottle]

    def dispatch(self, request, *args, **kwargs):
        if request.method == "POST":
            fast = heartbeat_fast(request, kwargs["agent_id"], None)
            if fast is not None:
                return fast
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(request=None, responses=AgentHeartbeatSerializer)
    def post(self, request: Request, agent_id: str) -> Response:
        endpoints = _signs_of_life(request, agent_id, None)
        body = {"agentId": agent_id, "live": True, "endpoints": endpoints}
        return Response(AgentHeartbeatSerializer(body).data)


class ProbeSerializer(serializers.Serializer):
    endpointId = serializers.UUIDField(source="endpoint_id")
    at = serializers.DateTimeField()
    up = serializers.BooleanField(source="ok")
    category = serializers.ChoiceField(choices=PROBE_CATEGORIES)
    status = serializers.IntegerField(source="status_code", allow_null=True)
    latencyMs = serializers.IntegerField(source="latency_ms", allow_null=True)
    detail = serializers.CharField()
    cardDigest = serializers.CharField(source="card_digest", allow_blank=True)
    cardChanged = serializers.BooleanField(source="card_changed")


@extend_schema_field(UPTIME_SCHEMA)
class UptimeField(serializers.JSONField):
    pass


class AgentLivenessSerializer(serializers.Serializer):
    agentId = serializers.UUIDField()
    live = serializers.BooleanField()
    uptime = UptimeField(allow_null=True)
    probes = ProbeSerializer(many=True)


class AgentLivenessView(APIView):
    """The agent's recent probe history, newest first (a week at the most)."""

    @extend_schema(
        parameters=[OpenApiParameter("limit", int, description="Probes to list, 1 to 500.")],
        responses=AgentLivenessSerializer,
    )
    def get(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get(agent_id)
        params_check(request.query_params, {"limit"})
        limit = limit_parse(request.query_params.get("limit"), default=100, most=500)
        probes = ProbeResult.objects.filter(agent=agent).order_by("-at", "-id")[:limit]
        now = timezone.now()
        body = {
            "agentId": agent.id,
            "live": liveness.agent_live(agent, now),
            "uptime": liveness.agent_uptime(agent),
            "probes": probes,
        }
        return Response(AgentLivenessSerializer(body).data)
