"""The AAP API: check documents or a live domain, list compliant dealer agents."""

from django.http import HttpResponse
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from protocols.aap.checks.checker import aap_check
from protocols.aap.checks.report import AAPReport
from protocols.aap.statuses.selectors import dealer_queryset
from protocols.aap.statuses.services import aap_check_domain
from protocols.aap.views import pages as views
from registry.access.throttles import fetch_rate_check
from registry.discovery.api import DiscoverAgentsView
from registry.http.inputs import ChoiceField
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.hosts import InvalidHost

FORM_MEDIA_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


# One of the two bodies: {"card", "manifest"?} or {"domain"}, never both.
CHECK_REQUEST = {
    "oneOf": [
        {
            "type": "object",
            "properties": {
                "card": {"type": "object", "description": "The agent card to check."},
                "manifest": {
                    "description": "Its contract manifest; without it manifest rules are skipped."
                },
            },
            "required": ["card"],
        },
        {
            "type": "object",
            "properties": {
                "domain": {
                    "type": "string",
                    "minLength": 1,
                    "pattern": r"\S",
                    "description": "Instead of documents: fetch "
                    "https://<domain>/.well-known/agent-card.json and the manifest it names, "
                    "and check both.",
                }
            },
            "required": ["domain"],
        },
    ]
}

ReportSerializer = inline_serializer(
    "AAPReport",
    {
        "compliant": serializers.BooleanField(
            help_text="Every MUST rule was checked (complete) and none fails."
        ),
        "complete": serializers.BooleanField(
            help_text="Every MUST rule was checked: false when the manifest is missing."
        ),
        "aapVersion": serializers.CharField(allow_null=True),
        "verdict": serializers.CharField(),
        "isDealerAgent": serializers.BooleanField(),
        "implementedSkills": serializers.ListField(child=serializers.CharField()),
        "results": inline_serializer(
            "AAPRuleResult",
            {
                "rule": serializers.CharField(),
                "level": ChoiceField(choices=["MUST", "SHOULD"]),
                "status": ChoiceField(choices=["pass", "fail", "warn", "skip"]),
                "path": serializers.CharField(),
                "message": serializers.CharField(),
            },
            many=True,
        ),
    },
)


def report_from_body(body: dict) -> AAPReport:
    """The report a JSON body asks for: {"card", "manifest"?} or {"domain"}."""
    if "domain" in body:
        if "card" in body or "manifest" in body:
            raise ProblemError(
                400,
                "malformed-request",
                'Send either "domain" or "card" (with an optional "manifest"), not both.',
                [Problem("domain", "cannot be combined with card or manifest")],
            )
        try:
            return aap_check_domain(body["domain"])
        except InvalidHost as exc:
            raise ProblemError(
                400, "validation-error", f"domain {exc}.", [Problem("domain", str(exc))]
            ) from None
    if "card" not in body:
        raise ProblemError(
            400,
            "malformed-request",
            'The body has neither "card" nor "domain": send {"card": {...}, "manifest": {...}} '
            'or {"domain": "dealer.example"}.',
            [Problem("card", "is required (or domain)")],
        )
    if not isinstance(body["card"], dict):
        raise ProblemError(
            400,
            "malformed-request",
            '"card" must be a JSON object (the agent card).',
            [Problem("card", "must be an object")],
        )
    return aap_check(body["card"], body.get("manifest"))


class CheckView(APIView):
    """POST JSON: the report. GET, and POSTs of the HTML form, go to the check page."""

    authentication_classes = []
    permission_classes = [AllowAny]  # it changes nothing

    def perform_content_negotiation(self, request, force=False):
        # Browsers asking for text/html get the page from get(), not a 406.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(exclude=True)
    def get(self, request: Request) -> HttpResponse:
        return views.check_page(request._request)

    @extend_schema(
        # JSON only: form posts to the same path are the HTML page's.
        request={"application/json": CHECK_REQUEST},
        responses={
            200: OpenApiResponse(ReportSerializer, description="The report, whatever the verdict.")
        },
        description="Check an agent card (and manifest), or a live domain, against AAP v0.1.",
    )
    def post(self, request: Request) -> Response | HttpResponse:
        media_type = (request.content_type or "").split(";", 1)[0].strip().lower()
        if media_type in FORM_MEDIA_TYPES:
            return views.check_page(request._request)
        if isinstance(request.data, dict) and "domain" in request.data:
            fetch_rate_check(request)
        return Response(report_from_body(request.data).as_dict())


class DealerListView(DiscoverAgentsView):
    """Compliant AAP v0.1 dealer agents (by their cards), with discovery's filters."""

    # Every dealer listed declares AAP and has a compliant card.
    filters_left_out = frozenset({"aap", "aapCompliant"})
    prefiltered = True

    def get_queryset(self):
        return dealer_queryset()
