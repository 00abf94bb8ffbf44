"""Reports over HTTP: ``POST /agents/<id>/reports`` (anyone), ``GET /agents/<id>/reports``
(its owner and admins: the open ones), ``GET /reports`` and
``POST /reports/<id>/resolve`` (admin keys)."""

import uuid
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access.api import HasApiKey
from registry.access.auth import Principal, principal_may_change
from registry.access.counters import client_ip_of
from registry.agents import selectors
from registry.http.inputs import InputSerializer
from registry.http.params import bad_parameter, limit_parse, limit_schema, params_check, parse_uuid
from registry.http.problems import ProblemError
from registry.moderation import reports
from registry.moderation.api import HasAdminKey
from registry.moderation.models import Report

REPORT = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "agentId": {"type": "string", "format": "uuid"},
        "reason": {"type": "string", "enum": list(Report.Reason.values)},
        "detail": {"type": "string"},
        "status": {"type": "string", "enum": list(Report.Status.values)},
        "createdAt": {"type": "string", "format": "date-time"},
        "reporter": {
            "type": "string",
            "description": "Admins only: the reporting key's owner (empty: anonymous).",
        },
        "resolution": {"type": "string"},
    },
}


def report_json(report: Report, *, admin: bool) -> dict[str, Any]:
    body = {
        "id": str(report.id),
        "agentId": str(report.agent_id),
        "reason": report.reason,
        "detail": report.detail,
        "status": report.status,
        "createdAt": report.created_at.isoformat().replace("+00:00", "Z"),
        "resolution": report.resolution,
    }
    return {**body, "reporter": report.reporter} if admin else body


def _items(schema: dict) -> dict:
    return {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": schema},
            "next": {"type": "string", "nullable": True},
        },
    }


class ReportSerializer(InputSerializer):
    reason = serializers.ChoiceField(choices=Report.Reason.values)
    detail = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)


class AgentReportListView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        request=ReportSerializer,
        responses={201: OpenApiResponse(REPORT, description="The report, received.")},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        """Report an agent (anyone; attributed when an API key is sent). Enough open reports
        from distinct reporters quarantine it pending review."""
        agent = selectors.agent_get_shown(agent_id, request.user)
        address = client_ip_of(request.META)
        reports.report_limit(address)
        payload = ReportSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        owner = request.user.owner if isinstance(request.user, Principal) else ""
        report = reports.report_create(
            agent=agent, reason=data["reason"], detail=data["detail"], owner=owner, address=address
        )
        return Response(report_json(report, admin=False), status=201)

    @extend_schema(responses={200: OpenApiResponse(_items(REPORT), description="Open reports.")})
    def get(self, request: Request, agent_id: str) -> Response:
        """The agent's open reports, for its owner and admins (never who sent them, but to
        admins)."""
        if not isinstance(request.user, Principal):
            raise exceptions.NotAuthenticated(HasApiKey.message)
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        rows = Report.objects.filter(agent=agent, status=Report.Status.OPEN).order_by(
            "-created_at", "id"
        )[:100]
        admin = request.user.is_admin
        return Response({"items": [report_json(r, admin=admin) for r in rows], "next": None})


class ReportListView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=list(Report.Status.values), description="open"),
            OpenApiParameter("limit", limit_schema(), description="Page size, 1-100 (default 20)."),
            OpenApiParameter("before", str, description="The next page (``next`` of a page)."),
        ],
        responses={200: OpenApiResponse(_items(REPORT), description="Newest first.")},
    )
    def get(self, request: Request) -> Response:
        params_check(request.query_params, {"status", "limit", "before"})
        status = request.query_params.get("status", Report.Status.OPEN)
        if status not in Report.Status.values:
            raise bad_parameter("status", f"must be one of {', '.join(Report.Status.values)}")
        limit = limit_parse(request.query_params.get("limit"))
        rows = Report.objects.filter(status=status).order_by("-created_at", "-id")
        before = request.query_params.get("before")
        if before:
            try:
                last = Report.objects.filter(pk=uuid.UUID(before)).first()
            except ValueError:
                last = None
            if last is None:
                raise bad_parameter("before", "is not a report of this list")
            rows = rows.filter(created_at__lte=last.created_at).exclude(pk=last.pk)
            rows = rows.exclude(created_at=last.created_at, id__gt=last.id)
        page = list(rows[: limit + 1])
        items = [report_json(r, admin=True) for r in page[:limit]]
        after = None
        if len(page) > limit:
            after = f"/reports?status={status}&limit={limit}&before={page[limit - 1].id}"
        return Response({"items": items, "next": after})


class ReportResolutionSerializer(InputSerializer):
    status = serializers.ChoiceField(choices=["resolved", "dismissed"])
    resolution = serializers.CharField(max_length=2000, required=False, default="")


class ReportResolveView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        request=ReportResolutionSerializer,
        responses={200: OpenApiResponse(REPORT, description="The closed report.")},
    )
    def post(self, request: Request, report_id: str) -> Response:
        """Close a report: resolved (acted upon) or dismissed; audited."""
        report = Report.objects.filter(pk=parse_uuid(report_id, "report")).first()
        if report is None:
            raise ProblemError(404, "not-found", f"There is no report {report_id}.")
        payload = ReportResolutionSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        report = reports.report_resolve(
            report=report, status=data["status"], resolution=data["resolution"]
        )
        return Response(report_json(report, admin=True))
