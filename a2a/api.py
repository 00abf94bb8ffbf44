"""The A2A-facing API: register by card, serve cards, the registry's own card."""

import re
import uuid

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.http import http_date
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from a2a import services
from a2a.models import CardDocument
from a2a.selectors import card_cache, card_read
from registry.access.auth import Principal, owner_choose, principal_may_change
from registry.access.idempotency import idempotent
from registry.access.throttles import fetch_rate_check, read_limited
from registry.agents import selectors
from registry.agents.concurrency import if_match_document
from registry.agents.models import Agent
from registry.agents.serializers import AgentSerializer
from registry.fastpath.lean import LeanAnswer
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError, problem_response

CARD_CONTENT_TYPE = "application/json"
CARD_CACHE_CONTROL = "public, max-age=60"
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_CARD_HEADERS = (("Content-Type", CARD_CONTENT_TYPE), ("Cache-Control", CARD_CACHE_CONTROL))


class CardRegistrationSerializer(serializers.Serializer):
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


class CardReplaceSerializer(serializers.Serializer):
    card = serializers.JSONField(help_text="The new A2A agent card.")


class VerifySerializer(serializers.Serializer):
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


def card_register(principal: Principal, body: dict) -> services.CardRegistration:
    """Register by card, domain or URL as ``principal``: the one way in of POST /a2a/agents
    and of the A2A and MCP registration skills. Raises ProblemError / ValidationError."""
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
    if given == ["card"]:
        return services.agent_register_card(owner=owner, card=body["card"])
    fetch_rate_check(principal)  # the registry fetches: the key's own, stricter limit
    return services.agent_register_from_domain(
        owner=owner,
        domain=payload.validated_data.get("domain"),
        url=payload.validated_data.get("url"),
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

    @extend_schema(request=VerifySerializer, responses=AgentSerializer)
    def post(self, request: Request, agent_id: str) -> Response:
        """Fetch the card from the agent's domain: verified when it is the registered card."""
        agent = selectors.agent_get(agent_id)
        principal_may_change(request, agent.owner)
        payload = VerifySerializer(data=body_object(request) if request.data else {})
        payload.is_valid(raise_exception=True)
        fetch_rate_check(request)
        registration = services.agent_verify(
            agent=agent, domain=payload.validated_data.get("domain")
        )
        return registration_response(request, registration, 200)


def card_response(body: bytes, sha256: str, updated_at) -> HttpResponse:
    response = HttpResponse(body, content_type=CARD_CONTENT_TYPE)
    response["ETag"] = f'"{sha256}"'
    response["Last-Modified"] = http_date(updated_at.timestamp())
    response["Cache-Control"] = CARD_CACHE_CONTROL
    return response


def card_lean(agent_id: str, environ) -> LeanAnswer | None:
    """GET /a2a/agents/<id> on the lean lane (registry.fastpath.lean): the stored bytes, with their
    validators, from the process's card cache or one primary-key read. Anything else (not
    a UUID, no card) goes on to ``card_serve``, whose 404 problems tell the cases apart."""
    if _CANONICAL_UUID.fullmatch(agent_id):  # the usual spelling: the key as it is
        key = agent_id
    else:
        try:
            key = str(uuid.UUID(agent_id))
        except ValueError:
            return None
    stored = card_cache.get(key, lambda: _card_stored(uuid.UUID(key)))
    if stored is None:
        return None
    etag, last_modified, body = stored.split(b"\n", 2)
    return LeanAnswer(
        body, list(_CARD_HEADERS), etag=etag.decode(), last_modified=last_modified.decode()
    )


def _card_stored(pk: uuid.UUID) -> bytes | None:
    """What the card cache keeps of a card: its ETag, its Last-Modified date and its
    bytes, a line each (neither validator holds a line break)."""
    entry = card_read(pk)
    if entry is None:
        return None
    body, sha256, updated_at = entry
    return b'"%s"\n%s\n%s' % (sha256.encode(), http_date(updated_at.timestamp()).encode(), body)


def card_etag(agent: Agent) -> str | None:
    """The ETag of the agent's served card (its SHA-256), as it is now; None without one."""
    sha256 = CardDocument.objects.filter(agent=agent).values_list("sha256", flat=True).first()
    return f'"{sha256}"' if sha256 is not None else None


def card_serve(request: HttpRequest, agent_id: str) -> HttpResponse:
    """GET /a2a/agents/<id> as a Django view: what the lean lane (``card_lean``) leaves to
    it — the 404 problems, refusals (429, redirects, preconditions) — and requests that
    do not pass through the lane (the test client). A plain view: no DRF request wrapping
    or authentication (card reads are public), the same per-IP read limit."""
    limited = read_limited(request)
    if limited is not None:
        return limited
    try:
        pk = uuid.UUID(agent_id)
    except ValueError:
        return problem_response(
            404, "not-found", f"There is no agent '{agent_id}' (ids are UUIDs)."
        )
    entry = card_read(pk)
    if entry is not None:
        return card_response(*entry)
    if Agent.objects.filter(pk=pk).exists():
        return problem_response(
            404,
            "no-a2a-endpoint",
            f"Agent {agent_id} has no A2A endpoint, so it has no A2A agent card.",
        )
    return problem_response(404, "not-found", f"There is no agent {agent_id}.")


class A2AAgentCardView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    def dispatch(self, request, *args, **kwargs):
        if request.method in ("GET", "HEAD"):
            return card_serve(request, kwargs["agent_id"])
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(
        responses={200: OpenApiResponse(description="The agent's A2A card, as published.")}
    )
    def get(self, request: Request, agent_id: str) -> HttpResponse:
        return card_serve(request._request, agent_id)  # dispatch serves GET; this documents it

    @extend_schema(request=CardReplaceSerializer, responses=AgentSerializer)
    def put(self, request: Request, agent_id: str) -> Response:
        agent = selectors.agent_get(agent_id)
        principal_may_change(request, agent.owner)
        card = card_from_body(request.data)
        registration = services.agent_replace_card(
            agent=agent,
            card=card,
            precondition=if_match_document(request.META.get("HTTP_IF_MATCH"), card_etag),
        )
        return registration_response(request, registration, 200)


BEARER_SCHEME = "apiKey"


def registry_card(base: str) -> dict:
    """The registry's own A2A 1.0 card: its two skills over JSON-RPC and HTTP+JSON (the
    SDK's server, a2a.agent); registration needs an API key as a bearer token."""
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
