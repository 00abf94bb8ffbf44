"""The agents' HTTP API: read, replace, change and delete an agent; add, read and remove
its endpoints. Thin views over the services and selectors. (Listing and registering at
``/agents`` is discovery's: registry.discovery.api.)"""

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access.auth import Principal, owner_choose, principal_may_change
from registry.access.idempotency import idempotent
from registry.agents import lifecycle, selectors, services
from registry.agents.concurrency import agent_etag, if_match_agent
from registry.agents.holds import pending_shown
from registry.agents.models import Agent
from registry.agents.serializers import (
    AgentInputSerializer,
    AgentSerializer,
    EndpointInputSerializer,
    EndpointSerializer,
    capability_input,
    endpoint_input,
)
from registry.agents.visibility import agent_visibility_change, visibility_input
from registry.http.inputs import InputSerializer
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError


def agent_response(request: Request, agent_id, status_code: int = 200, **headers) -> Response:
    """The agent's JSON, with its ETag (registry.agents.concurrency: for If-Match on writes).
    A retired agent's is its owner's and the admins' only; others get 410."""
    agent = selectors.agent_get_shown(str(agent_id), request.user)
    if agent.status == Agent.Status.RETIRED:
        user = request.user
        if not (isinstance(user, Principal) and user.may_change(agent.owner)):
            when = agent.status_changed_at.isoformat().replace("+00:00", "Z")
            raise ProblemError(410, "retired", f"Agent {agent.id} was retired on {when}.")
    body = AgentSerializer(agent, context={"request": request}).data
    user = request.user
    if isinstance(user, Principal) and user.may_change(agent.owner):
        # A change waiting for review (registry.agents.holds): its owner's and the admins'.
        pending = pending_shown(agent)
        if pending is not None:
            body["pendingChange"] = pending
    liveness = [(e["id"], e["liveness"]) for e in body["endpoints"]]
    headers = {"ETag": agent_etag(agent, liveness), **headers}
    return Response(body, status=status_code, headers=headers)


def owner_for(request: Request, requested: str | None) -> str:
    """The owner of a new agent: the key's owner; admin keys may name another."""
    return owner_choose(request.user, requested)


class AgentDetailView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)
    # A retired agent is gone to others (410); a stale If-Match changes nothing (412).
    extra_problems = {"GET": {410}, "PUT": {412}, "PATCH": {412}, "DELETE": {412}}

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
        """Retire the agent: it leaves discovery and its card answers 410 Gone; its owner
        still reads it (status retired) and its versions stay readable."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        lifecycle.agent_retire(
            agent=agent, precondition=_if_match(request), admin=request.user.is_admin
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _update(self, request: Request, agent_id: str, *, partial: bool) -> Response:
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        lifecycle.agent_writable(agent)
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
        asked = visibility_input(data, agent)  # checked before anything is written
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
        with transaction.atomic():  # the setting applies to the changes after this one
            services.agent_update(
                agent=agent, owner=owner, precondition=_if_match(request), **changes
            )
            if "compatibility" in data:
                lifecycle.agent_compatibility_set(agent=agent, compatibility=data["compatibility"])
            if "taskProbe" in data:
                lifecycle.agent_task_probe_set(agent=agent, task_probe=data["taskProbe"])
            agent_visibility_change(agent=agent, asked=asked)
        return agent_response(request, agent.id)


def _if_match(request: Request):
    return if_match_agent(request.META.get("HTTP_IF_MATCH"))


class EndpointListView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(
        request=EndpointInputSerializer,
        responses={
            201: EndpointSerializer,
            202: OpenApiResponse(
                AgentSerializer,
                description="The endpoint waits for review (REGISTRY_ADMISSION=review): the "
                "agent as it is, its pendingChange to its owner.",
            ),
        },
    )
    @idempotent
    def post(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        lifecycle.agent_writable(agent)
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
        if endpoint is None:  # waits for review: the agent as it is, with the change
            return agent_response(request, agent.id, status_code=202)
        body = EndpointSerializer(endpoint, context={"request": request}).data
        return Response(
            body, status=201, headers={"Location": f"/agents/{agent.id}/endpoints/{endpoint.id}"}
        )


class EndpointDetailView(APIView):
    # A card agent's A2A interfaces are the card's: removing one is a 409 (OpenAPI).
    extra_problems = {"DELETE": {409}}

    @extend_schema(responses=EndpointSerializer)
    def get(self, request: Request, agent_id: str, endpoint_id: str) -> Response:
        agent = selectors.agent_get_shown(agent_id, request.user)
        endpoint = selectors.endpoint_get(agent, endpoint_id)
        return Response(EndpointSerializer(endpoint, context={"request": request}).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, agent_id: str, endpoint_id: str) -> Response:
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        lifecycle.agent_writable(agent)
        endpoint = selectors.endpoint_get(agent, endpoint_id)
        services.endpoint_remove(endpoint=endpoint)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeprecateSerializer(InputSerializer):
    reason = serializers.CharField(max_length=2000, help_text="Why, for the agent's consumers.")
    successor = serializers.UUIDField(
        required=False, allow_null=True, help_text="The agent that replaces this one."
    )
    sunsetAt = serializers.DateTimeField(
        required=False, allow_null=True, help_text="When the agent will be retired."
    )


class AgentDeprecateView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(request=DeprecateSerializer, responses=AgentSerializer)
    def post(self, request: Request, agent_id: str) -> Response:
        """Deprecate the agent: it stays discoverable (status deprecated) and its card is
        served with Deprecation, Sunset and successor Link headers."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        payload = DeprecateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        lifecycle.agent_deprecate(
            agent=agent,
            reason=data["reason"],
            successor=data.get("successor"),
            sunset_at=data.get("sunsetAt"),
        )
        return agent_response(request, agent.id)


class AgentUndeprecateView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(request=None, responses=AgentSerializer)
    def post(self, request: Request, agent_id: str) -> Response:
        """The agent is active again."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        lifecycle.agent_undeprecate(agent=agent)
        return agent_response(request, agent.id)
