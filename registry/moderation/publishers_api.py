"""Verified publishers over HTTP (admin keys): ``GET /publishers``,
``PUT``/``DELETE /publishers/<owner or domain>/verified``."""

import contextlib
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.http.inputs import InputSerializer
from registry.http.params import params_check
from registry.http.problems import ProblemError
from registry.moderation import publishers
from registry.moderation.api import HasAdminKey
from registry.moderation.models import VerifiedPublisher
from registry.outbound.hosts import InvalidHost, domain_parse

PUBLISHER = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": list(VerifiedPublisher.Kind.values)},
        "value": {"type": "string"},
        "reason": {"type": "string"},
        "createdAt": {"type": "string", "format": "date-time"},
        "createdBy": {"type": "string"},
        "agents": {"type": "integer", "description": "Agents marked or unmarked by this write."},
    },
}


def publisher_json(entry: VerifiedPublisher, agents: int | None = None) -> dict[str, Any]:
    body = {
        "kind": entry.kind,
        "value": entry.value,
        "reason": entry.reason,
        "createdAt": entry.created_at.isoformat().replace("+00:00", "Z"),
        "createdBy": entry.created_by,
    }
    return body if agents is None else {**body, "agents": agents}


class PublisherVerifySerializer(InputSerializer):
    reason = serializers.CharField(max_length=500, help_text="Why: kept in the audit log.")
    kind = serializers.ChoiceField(
        choices=VerifiedPublisher.Kind.values,
        required=False,
        help_text="owner or domain; by default a domain when the name is a host name with a "
        "dot, else an owner.",
    )


def _kind_value(name: str, kind: str | None) -> tuple[str, str]:
    try:
        host = domain_parse(name).host
    except InvalidHost:
        host = None
    if kind is None:
        kind = VerifiedPublisher.Kind.DOMAIN if host and "." in host else "owner"
    if kind == VerifiedPublisher.Kind.DOMAIN:
        if host is None:
            raise ProblemError(404, "not-found", f"'{name}' is not a domain name.")
        return kind, host
    return kind, name


class PublisherListView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        responses={
            200: OpenApiResponse(
                {"type": "object", "properties": {"items": {"type": "array", "items": PUBLISHER}}},
                description="The verified publishers, newest first.",
            )
        }
    )
    def get(self, request: Request) -> Response:
        params_check(request.query_params, set())
        rows = VerifiedPublisher.objects.order_by("-created_at", "id")[:1000]
        return Response({"items": [publisher_json(entry) for entry in rows]})


class PublisherVerifiedView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        request=PublisherVerifySerializer,
        responses={200: OpenApiResponse(PUBLISHER, description="The verified publisher.")},
    )
    def put(self, request: Request, name: str) -> Response:
        """Mark an owner or a domain (its subdomains too) a verified publisher: its agents
        carry ``trust.verifiedPublisher`` and the ``verifiedPublisher`` fact, skip review,
        and their names are protected from look-alikes; audited; ``publisher.verified`` for
        admin subscribers."""
        payload = PublisherVerifySerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        kind, value = _kind_value(name, data.get("kind"))
        entry, marked = publishers.publisher_verify(kind=kind, value=value, reason=data["reason"])
        return Response(publisher_json(entry, marked))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        """Remove the mark (of the owner, or of the domain when the name is one)."""
        values = {name}
        with contextlib.suppress(InvalidHost):
            values.add(domain_parse(name).host)
        entry = VerifiedPublisher.objects.filter(value__in=values).first()
        if entry is None:
            raise ProblemError(404, "not-found", f"'{name}' is no verified publisher.")
        publishers.publisher_unverify(entry=entry)
        return Response(status=204)
