"""The A2A-facing API: register by card, serve cards, the registry's own card."""

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from protocols.a2a.registration import services, verify
from protocols.a2a.registration.provenance import CardSource
from protocols.a2a.registration.refresh import agent_refresh
from protocols.a2a.serving.cards import card_etag, card_serve
from protocols.a2a.versions.history import dry_run_parse
from registry.access.auth import Principal, owner_choose, principal_may_change
from registry.access.idempotency import idempotent
from registry.access.throttles import fetch_rate_check
from registry.agents import selectors
from registry.agents.concurrency import if_match_document
from registry.agents.lifecycle import agent_writable
from registry.agents.models import Agent
from registry.agents.serializers import AgentSerializer
from registry.agents.visibility import visibility_input
from registry.http.inputs import ChoiceField, InputSerializer, members_check
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError


class CardRegistrationSerializer(InputSerializer):
    card = serializers.JSONField(
        required=False, help_text="The A2A agent card (1.0, 0.3 or hybrid)."
    )
    domain = serializers.CharField(
        required=False,
        max_length=260,
        help_text="Resolve the card from this domain (DNS TXT hint, then the well-known paths).",
    )
    url = serializers.URLField(
        required=False, max_length=2048, help_text="Fetch the card from this https URL."
    )
    owner = serializers.CharField(required=False, max_length=200, help_text="Admin keys only.")
    visibility = ChoiceField(
        choices=Agent.Visibility.choices,
        required=False,
        help_text="Who may read it (a registry setting, never in the card): public "
        "(default), private (its owner and admins) or groups.",
    )
    visibilityGroups = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="The groups (visibility groups)."
    )


class CardReplaceSerializer(InputSerializer):
    card = serializers.JSONField(help_text="The new A2A agent card.")
    visibility = ChoiceField(
        choices=Agent.Visibility.choices, required=False, help_text="As at registration."
    )
    visibilityGroups = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="As at registration."
    )


class VerifySerializer(InputSerializer):
    domain = serializers.CharField(
        required=False,
        max_length=260,
        help_text="The domain to fetch the card from; default: the one it was verified at, "
        "else the host of its preferred interface.",
    )


def body_object(request: Request) -> dict:
    body = request.data
    if not isinstance(body, dict):
        raise ProblemError(400, "malformed-request", "The body must be a JSON object.")
    return body


def card_from_body(body) -> dict:
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
    request: Request, registration: services.CardRegistration, status_code: int, **headers
) -> Response:
    agent = selectors.agent_get(str(registration.agent.id))
    report, source, signature = registration.report, registration.source, registration.signature
    body = AgentSerializer(agent, context={"request": request}).data
    body["card"] = {
        "specVersion": report.spec_version,
        "naming": report.naming,
        "signed": report.signed,
        "warnings": [w.as_dict() for w in report.warnings],
        "source": {"path": source.discovery_path, "url": source.source_url or None},
        "verified": bool(source.verified_domain),
        "signature": {"status": signature.status, "detail": signature.detail},
        "originProblems": [p.as_dict() for p in source.origin_problems],
    }
    if source.attempts:
        body["card"]["attempts"] = [
            {"url": a.url, "outcome": a.outcome, "detail": a.detail} for a in source.attempts
        ]
    return Response(body, status=status_code, headers=headers or None)


def card_register(
    principal: Principal, body: dict, source: CardSource | None = None
) -> services.CardRegistration:
    """Register by card, domain or URL as ``principal``: the one way in of POST /a2a/agents
    and of the A2A and MCP registration skills (``source``: how their card came, its text
    when they have it). Raises ProblemError / ValidationError."""
    given = [name for name in ("card", "domain", "url") if name in body]
    if not given:
        raise ProblemError(
            400,
            "malformed-request",
            'The body has no "card" member: send {"card": {...}}, or {"domain": "..."} '
            'or {"url": "https://..."} for the registry to fetch the card.',
            [Problem("card", "is required (or domain, or url)")],
        )
    if len(given) > 1:
        raise ProblemError(
            400,
            "malformed-request",
            'Send exactly one of "card", "domain" and "url".',
            [Problem(name, "give exactly one of card, domain, url") for name in given],
        )
    if given == ["card"]:
        card_from_body(body)
    payload = CardRegistrationSerializer(data=body)
    payload.is_valid(raise_exception=True)
    owner = owner_choose(principal, payload.validated_data.get("owner"))
    visibility = visibility_input(payload.validated_data)  # a registry field beside the card
    if given == ["card"]:
        return services.agent_register_card(
            owner=owner, card=body["card"], source=source, visibility=visibility
        )
    fetch_rate_check(principal)  # the registry fetches: the key's own, stricter limit
    return services.agent_register_from_domain(
        owner=owner,
        domain=payload.validated_data.get("domain"),
        url=payload.validated_data.get("url"),
        visibility=visibility,
    )


class A2AAgentListView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(
        request=CardRegistrationSerializer,
        responses={
            201: OpenApiResponse(AgentSerializer, description="Registered: a new agent."),
            200: OpenApiResponse(
                AgentSerializer,
                description="The owner already had an agent with this card's preferred "
                "interface URL: that agent, updated.",
            ),
        },
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Register by card, or by domain/URL (the registry fetches the card itself).

        Registering the same card again (same owner, same preferred interface URL) updates
        the agent: 200 instead of 201.
        """
        registration = card_register(request.user, body_object(request))
        return registration_response(
            request,
            registration,
            201 if registration.created else 200,
            Location=f"/a2a/agents/{registration.agent.id}",
        )


class A2AAgentVerifyView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)
    extra_problems = {"POST": {422}}  # the domain's card could not be fetched

    @extend_schema(request=VerifySerializer, responses=AgentSerializer)
    def post(self, request: Request, agent_id: str) -> Response:
        """Fetch the card from the agent's domain: verified when it is the registered card."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        payload = VerifySerializer(data=body_object(request) if request.data else {})
        payload.is_valid(raise_exception=True)
        fetch_rate_check(request)
        registration = verify.agent_verify(agent=agent, domain=payload.validated_data.get("domain"))
        return registration_response(request, registration, 200)


class A2AAgentCardView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)
    # The card is served as published, to anyone, whatever key comes with the request; a
    # retired agent's is 410 Gone; a stale If-Match on PUT changes nothing (412).
    key_ignored_methods = {"GET"}
    extra_problems = {"GET": {410}, "PUT": {412}}

    def dispatch(self, request, *args, **kwargs):
        if request.method in ("GET", "HEAD"):
            return card_serve(request, kwargs["agent_id"])
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(
        responses={200: OpenApiResponse(description="The agent's A2A card, as published.")}
    )
    def get(self, request: Request, agent_id: str) -> HttpResponse:
        return card_serve(request._request, agent_id)  # dispatch serves GET; this documents it

    @extend_schema(
        request=CardReplaceSerializer,
        parameters=[
            OpenApiParameter(
                "dryRun",
                bool,
                description="true: answer the would-be version and its change summary "
                "(or the refusal), storing nothing.",
            )
        ],
        responses=AgentSerializer,
    )
    def put(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        agent_writable(agent)
        dry_run = dry_run_parse(request.query_params.get("dryRun"))
        card = card_from_body(request.data)
        members_check(request.data, CardReplaceSerializer().fields)
        payload = CardReplaceSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        visibility = visibility_input(payload.validated_data, agent)
        precondition = if_match_document(request.META.get("HTTP_IF_MATCH"), card_etag)
        if dry_run:
            return Response(
                services.agent_replace_card_preview(
                    agent=agent, card=card, precondition=precondition
                )
            )
        registration = services.agent_replace_card(
            agent=agent, card=card, precondition=precondition, visibility=visibility
        )
        return registration_response(request, registration, 200)


BEARER_SCHEME = "apiKey"


def registry_card(base: str) -> dict:
    """The registry's own A2A 1.0 card: its two skills over JSON-RPC and HTTP+JSON (the
    SDK's server, protocols.a2a.face.agent); registration needs an API key as a bearer token."""
    return {
        "name": settings.REGISTRY_NAME,
        "description": (
            "A registry of AI agents: agents register natively or by their A2A agent card, "
            "and consumers discover them by skill, tag, protocol and text."
        ),
        "supportedInterfaces": [
            {"url": f"{base}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": f"{base}/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "provider": {"organization": settings.REGISTRY_NAME, "url": base},
        "version": settings.REGISTRY_VERSION,
        "documentationUrl": f"{base}/api/docs",
        "capabilities": {"streaming": False, "pushNotifications": False},
        "securitySchemes": {
            BEARER_SCHEME: {
                "httpAuthSecurityScheme": {
                    "scheme": "Bearer",
                    "description": (
                        "A registry API key (python manage.py create_api_key), as "
                        "'Authorization: Bearer <key>'. Needed to register; discovery is public."
                    ),
                }
            }
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["application/json", "text/plain"],
        "skills": [
            {
                "id": "agent-registration",
                "name": "Agent registration",
                "description": (
                    'Register an agent by its A2A card: a data part {"card": {...}}, or '
                    '{"domain": "agent.example"} or {"url": "https://..."} for the registry '
                    "to fetch the card (as POST /a2a/agents). Needs an API key. The answer "
                    "names the agent id and card URL, or every problem of the card."
                ),
                "tags": ["registry", "registration", "a2a"],
                "examples": ['{"card": {...}}', '{"domain": "agent.example"}'],
                "inputModes": ["application/json"],
                "outputModes": ["application/json", "text/plain"],
                "securityRequirements": [{"schemes": {BEARER_SCHEME: {"list": []}}}],
            },
            {
                "id": "agent-discovery",
                "name": "Agent discovery",
                "description": (
                    "Find agents: a text part is a free-text search; a data part holds the "
                    "filters of GET /discover/agents (q, capability, tag, protocol, skill, "
                    "liveOnly, limit, cursor …). The answer lists the matching agents (id, "
                    "name, description, card URL, skills) in a data part."
                ),
                "tags": ["registry", "discovery", "search"],
                "examples": [
                    "find agents that can forecast the weather",
                    '{"tag": "weather", "protocol": "A2A", "limit": 10}',
                ],
                "inputModes": ["text/plain", "application/json"],
                "outputModes": ["application/json", "text/plain"],
            },
        ],
    }


@csrf_exempt  # reads only: 405 for any write, never a CSRF page
@require_safe
def registry_card_view(request) -> JsonResponse:
    response = JsonResponse(
        registry_card(settings.REGISTRY_BASE_URL), json_dumps_params={"ensure_ascii": False}
    )
    response["Cache-Control"] = "public, max-age=300"
    return response


class AgentRefreshView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)
    extra_problems = {"POST": {422}}  # the card could not be fetched, or is invalid

    @extend_schema(
        request=None,
        parameters=[
            OpenApiParameter("dryRun", bool, description="true: answer what would be stored.")
        ],
        responses={200: OpenApiResponse(description="Whether the card changed; its new version.")},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        """Fetch the card again from where the agent was registered (domain or URL) and
        store it as a new version when it changed; the answer has the change summary."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        dry_run = dry_run_parse(request.query_params.get("dryRun"))
        fetch_rate_check(request)
        return Response(agent_refresh(agent=agent, dry_run=dry_run))
