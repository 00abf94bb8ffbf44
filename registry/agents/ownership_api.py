"""The owners' self-service over HTTP: ownership transfers (``POST /agents/<id>/transfers``,
``GET /transfers``, ``/transfers/<id>``, ``.../accept``, ``.../cancel``) and domain claims
(``POST /claims``, ``GET /claims``, ``/claims/<id>``, ``.../verify``)."""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access.api import HasApiKey
from registry.access.auth import principal_may_change
from registry.access.idempotency import idempotent
from registry.access.throttles import fetch_rate_check
from registry.agents import claims, ownership, selectors
from registry.agents.models import DomainClaim, OwnershipTransfer
from registry.http.inputs import InputSerializer
from registry.http.params import params_check, parse_uuid
from registry.http.problems import ProblemError


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def transfer_json(transfer: OwnershipTransfer) -> dict[str, Any]:
    return {
        "id": str(transfer.id),
        "agentId": str(transfer.agent_id),
        "fromOwner": transfer.from_owner,
        "toOwner": transfer.to_owner,
        "state": transfer.state,
        "createdAt": _iso(transfer.created_at),
        "expiresAt": _iso(transfer.expires_at),
        "decidedAt": _iso(transfer.decided_at),
    }


def _object(properties: dict[str, dict], **extra) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties), **extra}


TIME = {"type": "string", "format": "date-time"}
NULLABLE_TIME = {**TIME, "nullable": True}
TRANSFER = _object(
    {
        "id": {"type": "string", "format": "uuid"},
        "agentId": {"type": "string", "format": "uuid"},
        "fromOwner": {"type": "string"},
        "toOwner": {"type": "string"},
        "state": {"type": "string", "enum": list(OwnershipTransfer.State.values)},
        "createdAt": TIME,
        "expiresAt": NULLABLE_TIME,
        "decidedAt": NULLABLE_TIME,
    }
)
CLAIM = {
    **_object(
        {
            "id": {"type": "string", "format": "uuid"},
            "domain": {"type": "string"},
            "owner": {"type": "string"},
            "state": {"type": "string", "enum": list(DomainClaim.State.values)},
            "method": {"type": "string", "nullable": True},
            "createdAt": TIME,
            "expiresAt": NULLABLE_TIME,
            "verifiedAt": NULLABLE_TIME,
        }
    ),
    # The claim's owner sees its token and where to publish it.
    "additionalProperties": True,
}
CLAIM["properties"] |= {"token": {"type": "string"}, "publish": {"type": "object"}}


def _items(item: dict) -> dict:
    return _object({"items": {"type": "array", "items": item}})


class TransferOfferSerializer(InputSerializer):
    toOwner = serializers.CharField(max_length=200, help_text="The owner who may accept it.")


def _transfer(request: Request, transfer_id: str, *, sides: tuple[str, ...]) -> OwnershipTransfer:
    """The transfer, if the key is one of its ``sides`` (from, to) or an admin key; a
    transfer the key may not see is 404, as an unknown one is."""
    transfer = OwnershipTransfer.objects.filter(pk=parse_uuid(transfer_id, "transfer")).first()
    user = request.user
    owners = {"from": transfer.from_owner, "to": transfer.to_owner} if transfer else {}
    if transfer is None or not (
        user.is_admin or user.owner in {owners[side] for side in ("from", "to")}
    ):
        raise ProblemError(404, "not-found", f"There is no transfer {transfer_id}.")
    if not user.is_admin and user.owner not in {owners[side] for side in sides}:
        raise exceptions.PermissionDenied(
            f"Only the {' or '.join(f'{side} owner' for side in sides)} may do this."
        )
    return transfer


class AgentTransferListView(APIView):
    permission_classes = [HasApiKey]
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(
        request=TransferOfferSerializer,
        responses={201: OpenApiResponse(TRANSFER, description="The pending transfer.")},
    )
    @idempotent
    def post(self, request: Request, agent_id: str) -> Response:
        """Offer the agent to another owner; it moves when that owner's key accepts."""
        agent = selectors.agent_get_writable(agent_id, request.user)
        principal_may_change(request, agent.owner)
        payload = TransferOfferSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        transfer = ownership.transfer_request(
            agent=agent, to_owner=payload.validated_data["toOwner"]
        )
        return Response(
            transfer_json(transfer), status=201, headers={"Location": f"/transfers/{transfer.id}"}
        )


class TransferListView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="transfers_list",
        parameters=[
            OpenApiParameter(
                "state", str, enum=list(OwnershipTransfer.State.values), description="Only these."
            )
        ],
        responses={200: OpenApiResponse(_items(TRANSFER))},
    )
    def get(self, request: Request) -> Response:
        """The transfers the key's owner offered or is offered (every one for admin keys),
        newest first (at most 100)."""
        params_check(request.query_params, {"state"})
        rows = OwnershipTransfer.objects.all()
        if not request.user.is_admin:
            owner = request.user.owner
            rows = rows.filter(from_owner=owner) | rows.filter(to_owner=owner)
        state = request.query_params.get("state")
        if state:
            if state not in OwnershipTransfer.State.values:
                raise ProblemError(
                    400,
                    "validation-error",
                    f"state must be one of {', '.join(OwnershipTransfer.State.values)}.",
                )
            rows = rows.filter(state=state)
        return Response({"items": [transfer_json(t) for t in rows.order_by("-created_at")[:100]]})


class TransferDetailView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(responses={200: OpenApiResponse(TRANSFER)})
    def get(self, request: Request, transfer_id: str) -> Response:
        return Response(transfer_json(_transfer(request, transfer_id, sides=("from", "to"))))


class TransferAcceptView(APIView):
    permission_classes = [HasApiKey]
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(request=None, responses={200: OpenApiResponse(TRANSFER)})
    def post(self, request: Request, transfer_id: str) -> Response:
        """The receiving owner takes the agent: the old owner's keys lose write access."""
        transfer = _transfer(request, transfer_id, sides=("to",))
        return Response(transfer_json(ownership.transfer_accept(transfer=transfer)))


class TransferCancelView(APIView):
    permission_classes = [HasApiKey]
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(request=None, responses={200: OpenApiResponse(TRANSFER)})
    def post(self, request: Request, transfer_id: str) -> Response:
        transfer = _transfer(request, transfer_id, sides=("from", "to"))
        return Response(transfer_json(ownership.transfer_cancel(transfer=transfer)))


def claim_json(claim: DomainClaim, *, token: bool) -> dict[str, Any]:
    body = {
        "id": str(claim.id),
        "domain": claim.domain,
        "owner": claim.owner,
        "state": claim.state,
        "method": claim.method or None,
        "createdAt": _iso(claim.created_at),
        "expiresAt": _iso(claim.expires_at),
        "verifiedAt": _iso(claim.verified_at),
    }
    if token:
        body["token"] = claim.token
        body["publish"] = claims.claim_instructions(claim)
    return body


class ClaimCreateSerializer(InputSerializer):
    domain = serializers.CharField(max_length=262, help_text="A host name, with its port if any.")


class ClaimListView(APIView):
    permission_classes = [HasApiKey]
    may_conflict = True  # 409 problems (OpenAPI)

    @extend_schema(
        request=ClaimCreateSerializer,
        responses={201: OpenApiResponse(CLAIM, description="The claim and its token.")},
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Claim a domain: publish the token, then verify the claim."""
        payload = ClaimCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        claim = claims.claim_create(
            owner=request.user.owner, domain=payload.validated_data["domain"]
        )
        return Response(
            claim_json(claim, token=True), status=201, headers={"Location": f"/claims/{claim.id}"}
        )

    @extend_schema(operation_id="claims_list", responses={200: OpenApiResponse(_items(CLAIM))})
    def get(self, request: Request) -> Response:
        """The key's owner's claims (every claim for admin keys), newest first (at most 100)."""
        params_check(request.query_params, set())
        rows = DomainClaim.objects.all()
        if not request.user.is_admin:
            rows = rows.filter(owner=request.user.owner)
        mine = request.user.owner
        return Response(
            {
                "items": [
                    claim_json(c, token=c.owner == mine) for c in rows.order_by("-created_at")[:100]
                ]
            }
        )


def _claim(request: Request, claim_id: str) -> DomainClaim:
    claim = DomainClaim.objects.filter(pk=parse_uuid(claim_id, "claim")).first()
    if claim is None or not (request.user.is_admin or claim.owner == request.user.owner):
        raise ProblemError(404, "not-found", f"There is no claim {claim_id}.")
    return claim


class ClaimDetailView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(responses={200: OpenApiResponse(CLAIM)})
    def get(self, request: Request, claim_id: str) -> Response:
        claim = _claim(request, claim_id)
        return Response(claim_json(claim, token=claim.owner == request.user.owner))


class ClaimVerifyView(APIView):
    permission_classes = [HasApiKey]
    may_conflict = True  # 409 problems (OpenAPI)
    extra_problems = {"POST": {422}}  # the domain does not publish the token

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(
                {
                    **CLAIM,
                    "properties": {**CLAIM["properties"], "agentsMoved": {"type": "integer"}},
                }
            )
        },
    )
    def post(self, request: Request, claim_id: str) -> Response:
        """Check the token (well-known file, then DNS TXT); on success the claim's owner
        gets every agent and entity registered from the domain."""
        claim = _claim(request, claim_id)
        fetch_rate_check(request)  # the registry fetches: the key's own, stricter limit
        claim, moved = claims.claim_verify(claim=claim)
        return Response({**claim_json(claim, token=False), "agentsMoved": moved})
