"""The entities API: register a domain's card, validate a card, register an EDP provider, and
the EDP resolution API (``/v1/resolve``, ``/v1/resolve/domain/<domain>``, ``/v1/nearby``)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from protocols.entities.cards.validation import card_validate
from protocols.entities.enrichment.crawl import domain_register
from protocols.entities.models import ProviderJob
from protocols.entities.providers.jobs import (
    job_document,
    job_url,
    provider_job_queue,
    registration_answer,
    registration_is_large,
)
from protocols.entities.providers.services import provider_register
from protocols.entities.registration import selectors
from protocols.entities.registration.selectors import entity_document, result_items
from protocols.entities.resolution.params import (
    capabilities_param,
    flag_param,
    int_param,
    invalid,
    number_param,
)
from protocols.entities.resolution.schema import (
    DOMAIN_REQUEST,
    DOMAIN_RESPONSE,
    ENTITIES_RESPONSE,
    ENTITY,
    HOST_NAME,
    NEARBY_RESPONSE,
    RESOLVE_RESPONSE,
    VALIDATE_REQUEST,
    provider_registration_schema,
)
from protocols.entities.resolution.search import entities_search
from registry.access.idempotency import idempotent
from registry.access.throttles import fetch_rate_check
from registry.discovery.hybrid import DEFAULT_MODE, MODES
from registry.discovery.query import mode_parse
from registry.http.inputs import members_check
from registry.http.jsonutil import Problem
from registry.http.params import parse_uuid, text_param
from registry.http.problems import ProblemError
from registry.outbound.hosts import InvalidHost, domain_parse

RADIUS_DEFAULT_M = 1000
RADIUS_MAX_M = 100_000
LIMIT_DEFAULT, LIMIT_MAX = 20, 100


def _card_path(path: str) -> str:
    return "card" if path == "$" else f"card.{path}"


def _object(body, name: str, request_schema: dict) -> dict:
    if not isinstance(body, dict) or name not in body:
        raise ProblemError(
            400,
            "malformed-request",
            f'The body needs "{name}".',
            [Problem(name, "is required")],
        )
    members_check(body, request_schema["properties"])
    return body


class EntityListView(APIView):
    """Register (or update) the entities of a domain from its entity card."""

    @extend_schema(
        request={"application/json": DOMAIN_REQUEST},
        responses={201: ENTITIES_RESPONSE, 200: ENTITIES_RESPONSE},
        description="Fetch https://<domain>/.well-known/entity-card.json (then, for A2E, "
        "/.well-known/a2e.json), validate it (its domain must be the host that served it) "
        "and store its entities; 200 when the domain was known.",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        body = _object(request.data, "domain", DOMAIN_REQUEST)
        if not isinstance(body["domain"], str):
            raise invalid("domain", "must be a string")
        fetch_rate_check(request)
        stored = domain_register(owner=request.user.owner, domain=body["domain"])
        return Response(
            {
                "domain": stored.card.domain,
                "format": stored.card.format,
                "card_url": stored.card.url,
                "entities": [entity_document(e) for e in stored.entities],
                **({"warnings": [w.as_dict() for w in stored.warnings]} if stored.warnings else {}),
            },
            status=201 if stored.created else 200,
        )


SOURCES_PARAMETER = OpenApiParameter(
    "sources",
    bool,
    description="true: add sources: [{kind, url, readAt, values}], every source's values "
    "(the entity's card, its website's markup, providers' claims), best first.",
)


class EntityDetailView(APIView):
    @extend_schema(parameters=[SOURCES_PARAMETER], responses={200: ENTITY})
    def get(self, request: Request, entity_id: str) -> Response:
        pk = parse_uuid(entity_id, "entity")
        entity = selectors.entity_queryset().filter(pk=pk).first()
        if entity is None:
            raise ProblemError(404, "not-found", f"There is no entity {entity_id}.")
        sources = flag_param(request.query_params, "sources")
        return Response(entity_document(entity, sources=sources))


class ValidateView(APIView):
    """Validate a card without storing it."""

    authentication_classes = []
    permission_classes = [AllowAny]  # it changes nothing

    @extend_schema(
        request={"application/json": VALIDATE_REQUEST},
        responses={200: OpenApiTypes.OBJECT},
        description="200 with the report for a valid card; 400 with every problem at its "
        "path otherwise. With domain, the card's domain must equal it.",
    )
    def post(self, request: Request) -> Response:
        body = _object(request.data, "card", VALIDATE_REQUEST)
        host = None
        if "domain" in body:
            try:
                host = domain_parse(body["domain"]).host
            except InvalidHost as exc:
                raise invalid("domain", str(exc)) from None
        report = card_validate(body["card"], host=host)
        if not report.ok:
            raise ProblemError(
                400,
                "invalid-entity-card",
                f"The entity card is invalid: {report.errors[0].path} {report.errors[0].message}.",
                [
                    Problem(f"card.{p.path}" if p.path != "$" else "card", p.message)
                    for p in report.errors
                ],
                format=report.format,
            )
        return Response(selectors.report_document(report))


class ProviderRegisterView(APIView):
    @extend_schema(
        request={"application/json": provider_registration_schema()},
        responses={
            201: OpenApiTypes.OBJECT,
            200: OpenApiTypes.OBJECT,
            202: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="More than PROVIDER_REGISTER_NOW (10) entities: checked, then "
                "queued as a job; Location is its status URL (GET it: state, counts, "
                "problems, and the answer when it succeeded).",
            ),
        },
        description="Register an EDP provider and the entities it serves (EDP §3); "
        "registering again updates it (only with the key that registered it). Up to "
        "PROVIDER_REGISTER_NOW (10) entities are registered at once (201 or 200); more, up "
        "to PROVIDER_REGISTER_MAX (1,000), are accepted as a job (202 with Location); more "
        "still is a 400 invalid-registration naming entities, with maxEntities.",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        if registration_is_large(request.data):
            job = provider_job_queue(principal=request.user, payload=request.data)
            return Response(job_document(job), status=202, headers={"Location": job_url(job)})
        registered = provider_register(principal=request.user, payload=request.data)
        body = registration_answer(registered)
        return Response(body, status=201 if registered.created else 200)


class ProviderJobView(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        description="A queued provider registration: state (queued, running, succeeded, "
        "failed), counts (entities listed, registered, problems), problems (the warnings, or "
        "what refused it, each with its path), result (what POST answers at once) or "
        "problem. Only its owner (or an admin key) reads it; anyone else gets a 404.",
    )
    def get(self, request: Request, job_id: str) -> Response:
        job = ProviderJob.objects.filter(pk=parse_uuid(job_id, "provider registration job")).first()
        if job is None or not request.user.may_change(job.owner):
            raise ProblemError(404, "not-found", f"There is no provider registration job {job_id}.")
        return Response(job_document(job))


# The parameters /v1/resolve and /v1/nearby share: which results, how many.
RESULT_FILTERS = [
    OpenApiParameter(
        "capabilities",
        str,
        description="Comma-separated; all of them (the entries' capabilities and the "
        "tools their MCP server cards list).",
    ),
    OpenApiParameter(
        "open_now",
        bool,
        description="true: only entities whose opening hours say they are open now, in "
        "their own time zone.",
    ),
    SOURCES_PARAMETER,
    OpenApiParameter(
        "min_verification",
        {"type": "integer", "minimum": 0, "maximum": 2},
        description="0, 1 or 2.",
    ),
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX},
        description="1 to 100 (default 20).",
    ),
]


class ResolveView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "query",
                # Not white space alone.
                {"type": "string", "pattern": r"\S"},
                required=True,
                description="Name or keywords, or what the business is wanted for.",
            ),
            OpenApiParameter(
                "mode",
                {"type": "string", "enum": list(MODES), "default": DEFAULT_MODE},
                description="How the query finds entities, as in discovery: hybrid (the "
                "default: the word index and the order by meaning, fused), semantic (by "
                "meaning alone) or keyword (the word index alone); another value is a 400 "
                "naming mode. confidence: the weight of the query's words the entity has "
                "(1.0: all in its name) or its cosine with the query, the higher.",
            ),
            OpenApiParameter("location", str, description='A city, or "lat,lng" (25 km).'),
            *RESULT_FILTERS,
        ],
        responses={200: RESOLVE_RESPONSE},
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        query = text_param(params, "query").strip()
        if not query:
            raise invalid("query", "is required: a name or keywords")
        found = entities_search(
            mode=mode_parse(text_param(params, "mode")),
            query=query,
            location=text_param(params, "location"),
            capabilities=capabilities_param(params),
            min_verification=int_param(params, "min_verification", 0, 2, 0),
            limit=int_param(params, "limit", 1, LIMIT_MAX, LIMIT_DEFAULT),
            open_now=flag_param(params, "open_now"),
        )
        results = result_items(
            [r.entity for r in found],
            [{"confidence": r.confidence} for r in found],
            sources=flag_param(params, "sources"),
        )
        return Response({"results": results})


class ResolveDomainView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "domain",
                # A host name (IDNA or Unicode, an optional port): no URL, no white space.
                HOST_NAME,
                location=OpenApiParameter.PATH,
                description="A host name, such as shop.example.com (an optional :port).",
            ),
            OpenApiParameter("path", str, description="EDP 0.2: one entity's path."),
            SOURCES_PARAMETER,
        ],
        responses={200: DOMAIN_RESPONSE},
    )
    def get(self, request: Request, domain: str) -> Response:
        try:
            host = domain_parse(domain).host
        except InvalidHost as exc:
            raise invalid("domain", str(exc)) from None
        path = text_param(request.query_params, "path", None)
        entities = selectors.domain_entities(host, path)
        if not entities:
            where = f"{host} at path {path}" if path is not None else host
            raise ProblemError(404, "not-found", f"The registry knows no entity of {where}.")
        sources = flag_param(request.query_params, "sources")
        return Response(
            {"domain": host, "entities": [entity_document(e, sources=sources) for e in entities]}
        )


class NearbyView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "lat", {"type": "number", "minimum": -90, "maximum": 90}, required=True
            ),
            OpenApiParameter(
                "lng", {"type": "number", "minimum": -180, "maximum": 180}, required=True
            ),
            OpenApiParameter(
                "radius",
                {"type": "number", "minimum": 1, "maximum": RADIUS_MAX_M},
                description="Metres, default 1000, at most 100000.",
            ),
            *RESULT_FILTERS,
        ],
        responses={200: NEARBY_RESPONSE},
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        found = selectors.entities_nearby(
            lat=number_param(params, "lat", -90, 90),
            lng=number_param(params, "lng", -180, 180),
            radius_m=number_param(params, "radius", 1, RADIUS_MAX_M, RADIUS_DEFAULT_M),
            capabilities=capabilities_param(params),
            min_verification=int_param(params, "min_verification", 0, 2, 0),
            limit=int_param(params, "limit", 1, LIMIT_MAX, LIMIT_DEFAULT),
            open_now=flag_param(params, "open_now"),
        )
        results = result_items(
            [n.entity for n in found],
            [{"distance_m": n.distance_m} for n in found],
            sources=flag_param(params, "sources"),
        )
        return Response({"results": results})
