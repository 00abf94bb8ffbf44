"""Liveness's HTTP API: heartbeats of an endpoint or of every endpoint of an agent (their
fast path: registry.liveness.heartbeats), and an agent's probe history and uptime."""

from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access.auth import principal_may_change
from registry.access.throttles import HeartbeatThrottle
from registry.agents import liveness_state, selectors
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import (
    LIVENESS_SCHEMA,
    PROBE_CATEGORIES,
    UPTIME_SCHEMA,
    liveness_shown,
)
from registry.agents.visibility import VISIBILITY_FIELDS, may_read
from registry.http.inputs import ChoiceField
from registry.http.params import limit_parse, limit_schema, params_check, parse_uuid
from registry.http.problems import ProblemError
from registry.liveness.heartbeats import heartbeat_fast
from registry.liveness.models import ProbeResult
from registry.liveness.services import endpoints_heartbeat
from registry.signals import endpoints_liveness_written


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


def _retired(agent: Agent) -> ProblemError:
    """A retired agent's heartbeat: refused, and the agent stays retired (nothing changes)."""
    when = agent.status_changed_at.isoformat().replace("+00:00", "Z")
    return ProblemError(
        410,
        "retired",
        f"Agent {agent.pk} was retired on {when}: it takes no heartbeats. Register a new "
        "agent instead.",
        retiredAt=when,
    )


def _signs_of_life(request: Request, agent_id: str, endpoint_id: str | None) -> list[dict]:
    """Record a heartbeat of one endpoint of the agent, or of all of them: the owner's (or
    an admin's) key; one read (owner, graces), one UPDATE, and in its transaction the
    liveness status changes it made (an endpoint revived). Their liveness now."""
    agent_pk = parse_uuid(agent_id)
    rows = Endpoint.objects.filter(agent_id=agent_pk)
    if endpoint_id is not None:
        rows = rows.filter(pk=parse_uuid(endpoint_id, "endpoint"))
    found = list(
        rows.select_related("agent").only(
            "pk",
            "agent_id",
            "liveness_grace",
            *PROBE_FIELDS,
            "agent__owner",
            "agent__status",
            "agent__status_changed_at",
            *(f"agent__{name}" for name in VISIBILITY_FIELDS),
        )
    )
    if not found:
        if not Agent.objects.filter(pk=agent_pk).exists():
            raise ProblemError(404, "not-found", f"There is no agent {agent_id}.")
        which = f" {endpoint_id}" if endpoint_id is not None else "s"
        raise ProblemError(404, "not-found", f"Agent {agent_id} has no endpoint{which}.")
    agent = found[0].agent
    if agent.visibility != Agent.Visibility.PUBLIC and not may_read(request.user, agent):
        raise ProblemError(404, "not-found", f"There is no agent {agent_id}.")
    principal_may_change(request, agent.owner)
    if agent.status == Agent.Status.RETIRED:
        raise _retired(agent)
    now = timezone.now()
    ids = [e.pk for e in found]
    with transaction.atomic(
        savepoint=False
    ):  # a revived endpoint's event commits with its heartbeat
        endpoints_heartbeat(Endpoint.objects.filter(pk__in=ids), now)
        endpoints_liveness_written.send(sender=None, endpoint_ids=ids)
    answers = []
    for endpoint in found:
        endpoint.last_alive_at, endpoint.alive_until = now, now + endpoint.liveness_grace
        endpoint.checked_by = liveness_state.HEARTBEAT
        answers.append(
            {"id": endpoint.pk, "liveness": liveness_state.endpoint_liveness(endpoint, now)}
        )
    return answers


class EndpointHeartbeatView(APIView):
    """A heartbeat (Persistent) or renewal (Ephemeral) of one endpoint: either path works for
    either model. The hottest write: no audit entry, no card rebuilt, updatedAt untouched."""

    throttle_classes = [HeartbeatThrottle]
    extra_problems = {"POST": {410}}  # a retired agent's heartbeat: 410 Gone

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
    extra_problems = {"POST": {410}}  # a retired agent's heartbeat: 410 Gone

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
    category = ChoiceField(choices=PROBE_CATEGORIES)
    status = serializers.IntegerField(source="status_code", allow_null=True)
    latencyMs = serializers.IntegerField(source="latency_ms", allow_null=True)
    detail = serializers.CharField()
    cardDigest = serializers.CharField(source="card_digest", allow_blank=True)
    cardChanged = serializers.BooleanField(source="card_changed")
    check = serializers.CharField(
        source="task_check",
        allow_blank=True,
        help_text="Empty for the liveness probe; else the task probe's check: card, tls, "
        "binding, wellFormed, taskLifecycle or auth (up: it passed).",
    )
    certExpiresAt = serializers.DateTimeField(source="cert_expires_at", allow_null=True)


@extend_schema_field(UPTIME_SCHEMA)
class UptimeField(serializers.JSONField):
    pass


class AgentLivenessSerializer(serializers.Serializer):
    agentId = serializers.UUIDField()
    live = serializers.BooleanField()
    uptime = UptimeField(allow_null=True)
    probes = ProbeSerializer(many=True)


class AgentLivenessView(APIView):
    """The agent's recent probe history, newest first (TRUST_HISTORY_DAYS at the most)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("limit", limit_schema(500), description="Probes to list, 1 to 500.")
        ],
        responses=AgentLivenessSerializer,
    )
    def get(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get_shown(agent_id, request.user)
        params_check(request.query_params, {"limit"})
        limit = limit_parse(request.query_params.get("limit"), default=100, most=500)
        probes = ProbeResult.objects.filter(agent=agent).order_by("-at", "-id")[:limit]
        now = timezone.now()
        body = {
            "agentId": agent.id,
            "live": liveness_state.agent_live(agent, now),
            "uptime": liveness_state.agent_uptime(agent),
            "probes": probes,
        }
        return Response(AgentLivenessSerializer(body).data)
