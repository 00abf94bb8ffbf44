"""The moderators' HTTP API (admin keys): ``POST``/``DELETE /agents/<id>/quarantine``, the
queue ``GET /moderation``; and ``GET /agents/<id>/moderation`` for the agent's owner too."""

import base64
import binascii
import uuid
from datetime import datetime
from typing import Any

from django.db.models import Q
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access.api import HasApiKey
from registry.access.auth import Principal, principal_may_change
from registry.agents import selectors
from registry.http.inputs import InputSerializer
from registry.http.params import (
    bad_parameter,
    limit_parse,
    limit_schema,
    params_check,
    parse_uuid,
)
from registry.http.problems import ProblemError
from registry.moderation import blocklist, services
from registry.moderation.changes import change_of
from registry.moderation.models import BlockEntry, Moderation, PendingChange


class HasAdminKey(BasePermission):
    """An admin API key (the moderators')."""

    message = "Only an admin API key may moderate."

    def has_permission(self, request, view) -> bool:
        return isinstance(request.user, Principal) and request.user.is_admin


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def moderation_json(moderation: Moderation) -> dict[str, Any]:
    agent = moderation.agent
    return {
        "agentId": str(agent.pk),
        "name": agent.name,
        "owner": agent.owner,
        "listed": agent.listed,
        "admission": moderation.admission,
        "admissionReason": moderation.admission_reason,
        "change": moderation.change_pending
        or (moderation.admission == Moderation.Admission.PENDING and moderation.approved_once),
        "verifiedPublisher": moderation.verified_publisher,
        "openReports": moderation.open_reports,
        "quarantined": moderation.quarantined_at is not None,
        "quarantinedAt": _iso(moderation.quarantined_at),
        "quarantineReason": moderation.quarantine_reason,
        "decidedBy": moderation.decided_by,
        "findings": moderation.findings,
        "pendingChange": change_of(agent),
        "updatedAt": _iso(moderation.updated_at),
    }


_TIME = {"type": "string", "format": "date-time", "nullable": True}
FINDINGS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "rule": {"type": "string"},
            "path": {"type": "string"},
            "severity": {"type": "string", "enum": ["high", "medium", "low"]},
            "verdict": {"type": "string", "enum": ["block", "review", "note"]},
            "message": {"type": "string"},
        },
    },
}
PENDING_CHANGE = {
    "type": "object",
    "nullable": True,
    "description": "A change of the approved agent that waits for review (the agent serves "
    "its approved version meanwhile), or the last one rejected; null: none.",
    "properties": {
        "state": {"type": "string", "enum": list(PendingChange.State.values)},
        "reason": {"type": "string", "description": "Why it waits, or why it was rejected."},
        "submittedAt": _TIME,
        "submittedBy": {"type": "string"},
        "decidedBy": {"type": "string"},
        "findings": dict(FINDINGS, description="The scanners' findings of the change."),
        "patch": {
            "type": "array",
            "nullable": True,
            "items": {"type": "object"},
            "description": "JSON Patch (RFC 6902) from what the agent serves (its card) to "
            "the change; null past VERSION_DIFF_MAX_BYTES (truncated).",
        },
        "truncated": {"type": "boolean"},
        "document": {"type": "object", "description": "What the agent would serve."},
    },
}
MODERATION = {
    "type": "object",
    "properties": {
        "agentId": {"type": "string", "format": "uuid"},
        "name": {"type": "string"},
        "owner": {"type": "string"},
        "listed": {"type": "boolean", "description": "Publicly listed now."},
        "admission": {"type": "string", "enum": list(Moderation.Admission.values)},
        "admissionReason": {"type": "string"},
        "change": {
            "type": "boolean",
            "description": "What waits is a change of an agent that was approved before.",
        },
        "verifiedPublisher": {"type": "boolean"},
        "openReports": {"type": "integer", "description": "From distinct reporters."},
        "quarantined": {"type": "boolean"},
        "quarantinedAt": _TIME,
        "quarantineReason": {"type": "string"},
        "decidedBy": {"type": "string"},
        "findings": dict(FINDINGS, description="The scanners' findings of what it serves."),
        "pendingChange": PENDING_CHANGE,
        "updatedAt": _TIME,
    },
}
QUEUE = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "items": MODERATION},
        "next": {"type": "string", "nullable": True},
    },
}


class DecisionReasonSerializer(InputSerializer):
    reason = serializers.CharField(
        max_length=2000, help_text="Why: kept in the audit log, shown to the owner."
    )


class AgentQuarantineView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        request=DecisionReasonSerializer,
        responses={200: OpenApiResponse(MODERATION, description="The agent's moderation.")},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        """Quarantine the agent: gone from every public read at once (discovery, its card,
        catalogs, feeds, pages), kept for its owner and admins; audited; an
        ``agent.quarantined`` event for admin subscribers."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        payload = DecisionReasonSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        moderation = services.agent_quarantine(agent=agent, reason=payload.validated_data["reason"])
        return Response(moderation_json(moderation))

    @extend_schema(
        request=None,
        responses={200: OpenApiResponse(MODERATION, description="The agent's moderation.")},
    )
    def delete(self, request: Request, agent_id: str) -> Response:
        """Lift the quarantine (an ``agent.released`` event for admin subscribers)."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        return Response(moderation_json(services.agent_release(agent=agent)))


class ApprovalSerializer(InputSerializer):
    reason = serializers.CharField(
        max_length=2000, required=False, default="", help_text="A note for the owner."
    )


class AgentApproveView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        request=ApprovalSerializer,
        responses={200: OpenApiResponse(MODERATION, description="The agent's moderation.")},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        """Approve the agent, or its change, waiting for review: listed (unless
        quarantined), a waiting change made (its ``agent.updated``); audited;
        ``agent.approved`` for admin subscribers."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        payload = ApprovalSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        reason = payload.validated_data["reason"]
        return Response(moderation_json(services.agent_approve(agent=agent, reason=reason)))


class AgentRejectView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        request=DecisionReasonSerializer,
        responses={200: OpenApiResponse(MODERATION, description="The agent's moderation.")},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        """Reject the agent: not listed; the owner reads the reason at
        ``/agents/<id>/moderation``; its next change waits for review again. A waiting
        change of an approved agent is rejected alone: the agent stays as approved."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        payload = DecisionReasonSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        reason = payload.validated_data["reason"]
        return Response(moderation_json(services.agent_reject(agent=agent, reason=reason)))


class AgentModerationView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(responses={200: OpenApiResponse(MODERATION, description="Its moderation.")})
    def get(self, request: Request, agent_id: str) -> Response:
        """The moderators' decisions about the agent: for its owner and admins."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        return Response(moderation_json(services.moderation_of(agent)))


def _cursor_make(moderation: Moderation) -> str:
    raw = f"{moderation.updated_at.isoformat()}|{moderation.agent_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _cursor_read(raw: str) -> tuple[datetime, str]:
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
        when, agent_id = text.split("|", 1)
        return datetime.fromisoformat(when), str(uuid.UUID(agent_id))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise bad_parameter("cursor", "is not a cursor this list gave") from None


class ModerationQueueView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        parameters=[
            OpenApiParameter("limit", limit_schema(), description="Page size, 1-100 (default 20)."),
            OpenApiParameter("cursor", str, description="The next page (``next`` of a page)."),
        ],
        responses={200: OpenApiResponse(QUEUE, description="The queue, newest first.")},
    )
    def get(self, request: Request) -> Response:
        """What waits for the moderators, newest first: agents pending review (new, or a
        change: ``pendingChange`` with its diff against what the agent serves), agents in
        quarantine, and agents with open reports."""
        params_check(request.query_params, {"limit", "cursor"})
        limit = limit_parse(request.query_params.get("limit"))
        rows = Moderation.objects.select_related("agent", "agent__pending_change").filter(
            Q(admission=Moderation.Admission.PENDING)
            | Q(change_pending=True)
            | Q(quarantined_at__isnull=False)
            | Q(open_reports__gt=0)
        )
        cursor = request.query_params.get("cursor")
        if cursor:
            when, agent_id = _cursor_read(cursor)
            rows = rows.filter(Q(updated_at__lt=when) | Q(updated_at=when, agent_id__gt=agent_id))
        page = list(rows.order_by("-updated_at", "agent_id")[: limit + 1])
        items = [moderation_json(m) for m in page[:limit]]
        more = len(page) > limit
        token = _cursor_make(page[limit - 1]) if more else None
        return Response({"items": items, "next": f"/moderation?cursor={token}" if more else None})


def block_json(entry: BlockEntry) -> dict[str, Any]:
    return {
        "id": str(entry.id),
        "kind": entry.kind,
        "value": entry.value,
        "reason": entry.reason,
        "expiresAt": _iso(entry.expires_at),
        "createdAt": _iso(entry.created_at),
        "createdBy": entry.created_by,
        "quarantined": entry.quarantined,
    }


BLOCK = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "kind": {"type": "string", "enum": list(BlockEntry.Kind.values)},
        "value": {"type": "string"},
        "reason": {"type": "string"},
        "expiresAt": _TIME,
        "createdAt": _TIME,
        "createdBy": {"type": "string"},
        "quarantined": {
            "type": "integer",
            "nullable": True,
            "description": "How many agents its job quarantined (null: not run yet).",
        },
    },
}


class BlockSerializer(InputSerializer):
    kind = serializers.ChoiceField(choices=BlockEntry.Kind.values)
    value = serializers.CharField(
        max_length=2048,
        help_text="A domain (its subdomains too), a host, a URL prefix, an owner or a card's "
        "SHA-256.",
    )
    reason = serializers.CharField(
        max_length=500, help_text="Shown to whoever a write it refuses (never the pattern)."
    )
    expiresAt = serializers.DateTimeField(required=False, allow_null=True)

    def validate(self, data):
        try:
            data["value"] = blocklist.value_clean(data["kind"], data["value"])
        except ValueError as exc:
            raise serializers.ValidationError({"value": str(exc)}) from None
        return data


class BlocklistView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(
        responses={
            200: OpenApiResponse(
                {"type": "object", "properties": {"items": {"type": "array", "items": BLOCK}}},
                description="The entries, newest first (expired ones included).",
            )
        }
    )
    def get(self, request: Request) -> Response:
        params_check(request.query_params, set())
        rows = BlockEntry.objects.order_by("-created_at", "id")[:1000]
        return Response({"items": [block_json(entry) for entry in rows]})

    @extend_schema(
        request=BlockSerializer,
        responses={201: OpenApiResponse(BLOCK, description="The new entry.")},
    )
    def post(self, request: Request) -> Response:
        """Block: refused on every write path from now on (422 ``blocked``, naming the
        reason), and the listed agents it matches quarantined by a job (its count in
        ``quarantined``)."""
        payload = BlockSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        entry = blocklist.block_add(
            kind=data["kind"],
            value=data["value"],
            reason=data["reason"],
            expires_at=data.get("expiresAt"),
        )
        entry.refresh_from_db()
        return Response(
            block_json(entry), status=201, headers={"Location": f"/blocklist/{entry.id}"}
        )


class BlockEntryView(APIView):
    permission_classes = [HasAdminKey]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, entry_id: str) -> Response:
        """Remove the entry; what it quarantined stays so until released."""
        entry = BlockEntry.objects.filter(pk=parse_uuid(entry_id, "blocklist entry")).first()
        if entry is None:
            raise ProblemError(404, "not-found", f"There is no blocklist entry {entry_id}.")
        blocklist.block_remove(entry=entry)
        return Response(status=204)
