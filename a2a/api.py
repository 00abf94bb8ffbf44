"""The A2A-facing API: register by card, serve cards, the registry's own card."""

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from a2a import services
from a2a.models import CardDocument
from a2a.validation import CardReport
from registry import selectors
from registry.api import owner_for
from registry.auth import principal_may_change
from registry.jsonutil import Problem
from registry.models import Agent, Endpoint
from registry.problems import ProblemError
from registry.serializers import AgentSerializer, base_url

CARD_CONTENT_TYPE = "application/json"
CARD_CACHE_CONTROL = "public, max-age=60"


class CardRegistrationSerializer(serializers.Serializer):
    card = serializers.JSONField(help_text="The A2A agent card (1.0, 0.3 or hybrid).")
    owner = serializers.CharField(required=False, help_text="Admin keys only.")


def card_from_body(request: Request) -> dict:
    body = request.data
    if not isinstance(body, dict) or not body:
        raise ProblemError(
            400,
            "malformed-request",
            'The body must be a JSON object: {"card": {...}}.',
            [Problem("card", "is required")],
        )
    if "card" not in body:
        raise ProblemError(
            400,
            "malformed-request",
            'The body has no "card" member: send {"card": {...}}.',
            [Problem("card", "is required")],
        )
    card = body["card"]
    if not isinstance(card, dict):
        raise ProblemError(
            400,
            "malformed-request",
            '"card" must be a JSON object (the agent card).',
            [Problem("card", "must be an object")],
        )
    return card


def registration_response(
    request: Request, agent: Agent, report: CardReport, status_code: int, **headers
) -> Response:
    agent = selectors.agent_get(str(agent.id))
    body = AgentSerializer(agent, context={"request": request}).data
    body["card"] = {
        "specVersion": report.spec_version,
        "naming": report.naming,
        "signed": report.signed,
        "warnings": [w.as_dict() for w in report.warnings],
    }
    return Response(body, status=status_code, headers=headers or None)


class A2AAgentListView(APIView):
    @extend_schema(request=CardRegistrationSerializer, responses={201: AgentSerializer})
    def post(self, request: Request) -> Response:
        card = card_from_body(request)
        owner = owner_for(request, request.data.get("owner"))
        agent, report = services.agent_register_card(
            owner=owner, card=card, base_url=base_url(request)
        )
        return registration_response(
            request, agent, report, 201, Location=f"/a2a/agents/{agent.id}"
        )


def card_response(document: CardDocument) -> HttpResponse:
    response = HttpResponse(bytes(document.body), content_type=CARD_CONTENT_TYPE)
    response["ETag"] = f'"{document.sha256}"'
    response["Cache-Control"] = CARD_CACHE_CONTROL
    return response


class A2AAgentCardView(APIView):
    @extend_schema(
        responses={200: OpenApiResponse(description="The agent's A2A card, as published.")}
    )
    def get(self, request: Request, agent_id: str) -> HttpResponse:
        pk = selectors.parse_uuid(agent_id)
        document = CardDocument.objects.filter(agent_id=pk).only("body", "sha256").first()
        if document is not None:
            return card_response(document)
        if Agent.objects.filter(pk=pk).exists():
            raise ProblemError(
                404,
                "no-a2a-endpoint",
                f"Agent {agent_id} has no A2A endpoint, so it has no A2A agent card.",
            )
        raise ProblemError(404, "not-found", f"There is no agent {agent_id}.")

    @extend_schema(request=CardRegistrationSerializer, responses=AgentSerializer)
    def put(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get(agent_id)
        principal_may_change(request, agent.owner)
        card = card_from_body(request)
        agent, report = services.agent_replace_card(
            agent=agent, card=card, base_url=base_url(request)
        )
        return registration_response(request, agent, report, 200)


class QueueEndpointView(APIView):
    """Connection details of a queue endpoint, the target of its synthetic card URL."""

    @extend_schema(responses={200: OpenApiResponse(description="Queue connection details.")})
    def get(self, request: Request, endpoint_id: str) -> Response:
        pk = selectors.parse_uuid(endpoint_id, "endpoint")
        endpoint = Endpoint.objects.filter(pk=pk).select_related("agent").first()
        if endpoint is None or not endpoint.is_queue:
            raise ProblemError(404, "not-found", f"There is no queue endpoint {endpoint_id}.")
        return Response(
            {
                "endpointId": str(endpoint.id),
                "agentId": str(endpoint.agent_id),
                "name": endpoint.name,
                "transport": endpoint.transport,
                "protocol": endpoint.protocol,
                "address": endpoint.address,
                "livenessModel": endpoint.liveness_model,
                "protocolMetadata": endpoint.protocol_metadata,
            }
        )


def registry_card(base: str) -> dict:
    """The registry's own A2A 1.0 card."""
    return {
        "name": settings.REGISTRY_NAME,
        "description": (
            "A registry of AI agents: agents register natively or by their A2A agent card, "
            "and consumers discover them by skill, tag, protocol and text."
        ),
        "supportedInterfaces": [
            {"url": f"{base}/a2a/agents", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ],
        "provider": {"organization": settings.REGISTRY_NAME, "url": base},
        "version": settings.REGISTRY_VERSION,
        "documentationUrl": f"{base}/api/docs",
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {
                "id": "agent-registration",
                "name": "Agent registration",
                "description": (
                    "Register, update and deregister agents: natively (POST /agents) or by "
                    "A2A agent card (POST /a2a/agents). Writes need an API key."
                ),
                "tags": ["registry", "registration", "a2a"],
                "examples": ['POST /a2a/agents {"card": {...}}'],
            },
            {
                "id": "agent-discovery",
                "name": "Agent discovery",
                "description": (
                    "Find agents by capability, tag, protocol, transport or text "
                    "(GET /discover/agents) and fetch their cards (GET /a2a/agents/<id>)."
                ),
                "tags": ["registry", "discovery", "search"],
                "examples": ["GET /discover/agents?tag=weather&protocol=A2A"],
            },
        ],
    }


def registry_card_view(request) -> JsonResponse:
    from registry.serializers import base_url as request_base

    response = JsonResponse(
        registry_card(request_base(request)), json_dumps_params={"ensure_ascii": False}
    )
    response["Cache-Control"] = "public, max-age=300"
    return response
