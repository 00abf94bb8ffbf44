"""The native HTTP API: one view per resource, thin over services and selectors."""

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import selectors, services
from registry.auth import principal_may_change
from registry.filters import AgentFilter
from registry.jsonutil import Problem
from registry.pagination import AgentCursorPagination
from registry.problems import ProblemError
from registry.serializers import (
    AgentInputSerializer,
    AgentSerializer,
    EndpointInputSerializer,
    EndpointSerializer,
    base_url,
    capability_input,
    endpoint_input,
)


def agent_response(request: Request, agent_id, status_code: int = 200, **headers) -> Response:
    agent = selectors.agent_get(str(agent_id))
    body = AgentSerializer(agent, context={"request": request}).data
    return Response(body, status=status_code, headers=headers or None)


def owner_for(request: Request, requested: str | None) -> str:
    """The owner of a new agent: the key's owner; admin keys may name another."""
    if requested and requested != request.user.owner:
        if not request.user.is_admin:
            raise ProblemError(
                403,
                "forbidden",
                "Only an admin key may register an agent for another owner.",
                [Problem("owner", "may be set by admin keys only")],
            )
        return requested
    return request.user.owner


class AgentListView(generics.ListAPIView):
    """List agents (the same filters as /discover/agents) or register one natively."""

    serializer_class = AgentSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = AgentFilter
    pagination_class = AgentCursorPagination

    def get_queryset(self):
        return selectors.agent_queryset()

    @extend_schema(request=AgentInputSerializer, responses={201: AgentSerializer})
    def post(self, request: Request) -> Response:
        payload = AgentInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        agent = services.agent_create(
            owner=owner_for(request, payload.validated_data.get("owner")),
            data=payload.to_input(),
            base_url=base_url(request),
        )
        return agent_response(request, agent.id, 201, Location=f"/agents/{agent.id}")


class DiscoverAgentsView(generics.ListAPIView):
    """Find agents by capability, tag, protocol, transport or text; cursor-paginated."""

    serializer_class = AgentSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = AgentFilter
    pagination_class = AgentCursorPagination

    def get_queryset(self):
        return selectors.agent_queryset()


class AgentDetailView(APIView):
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
        services.agent_delete(agent=agent)
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
        services.agent_update(agent=agent, base_url=base_url(request), owner=owner, **changes)
        return agent_response(request, agent.id)


class EndpointListView(APIView):
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
        endpoint = services.endpoint_add(agent=agent, data=data, base_url=base_url(request))
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
        services.endpoint_remove(endpoint=endpoint, base_url=base_url(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
