"""API keys over HTTP: an admin key creates and manages any key; an agent key lists,
revokes and rotates its owner's agent keys (never an admin key). Secrets are shown once, in
the answer that creates them."""

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access import keys
from registry.access.auth import Principal
from registry.access.idempotency import idempotent
from registry.access.models import ApiKey
from registry.access.tokens import GROUP_MAX_CHARS, GROUPS_MAX
from registry.http.inputs import ChoiceField, InputSerializer
from registry.http.jsonutil import Problem
from registry.http.params import params_check, parse_uuid
from registry.http.problems import ProblemError

# Longest grace a rotated key keeps working beside its successor.
MAX_GRACE_SECONDS = 7 * 24 * 3600


class HasApiKey(BasePermission):
    """Every request, reads included: keys are private to their owner."""

    message = "This request needs an API key: 'Authorization: Bearer <key>' or 'X-Api-Key'."

    def has_permission(self, request, view) -> bool:
        return isinstance(request.user, Principal)


class ApiKeySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    prefix = serializers.CharField(help_text="The key's first characters, to recognise it.")
    owner = serializers.CharField()
    scope = ChoiceField(choices=ApiKey.Scope.values)
    label = serializers.CharField(allow_blank=True)
    createdAt = serializers.DateTimeField(source="created_at")
    lastUsedAt = serializers.DateTimeField(
        source="last_used_at", allow_null=True, help_text="Recorded at most once a minute."
    )
    expiresAt = serializers.DateTimeField(source="expires_at", allow_null=True)
    revokedAt = serializers.DateTimeField(source="revoked_at", allow_null=True)
    groups = serializers.ListField(
        child=serializers.CharField(), help_text="The groups its requests are in."
    )
    active = serializers.SerializerMethodField()

    def get_active(self, key: ApiKey) -> bool:
        return key.is_active(timezone.now())


class ApiKeyCreatedSerializer(ApiKeySerializer):
    key = serializers.CharField(help_text="The secret: shown in this answer only, never again.")


class ApiKeyListSerializer(serializers.Serializer):
    results = ApiKeySerializer(many=True)


class ApiKeyCreateSerializer(InputSerializer):
    owner = serializers.CharField(max_length=200, help_text="Who the key acts for.")
    scope = ChoiceField(choices=ApiKey.Scope.values, default=ApiKey.Scope.AGENT)
    label = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    expiresAt = serializers.DateTimeField(
        required=False, allow_null=True, help_text="Refused from then on; absent: never expires."
    )
    groups = serializers.ListField(
        child=serializers.CharField(max_length=GROUP_MAX_CHARS),
        max_length=GROUPS_MAX,
        required=False,
        default=list,
        help_text="The groups its requests are in (as a token's group claim).",
    )

    def validate_owner(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("must not be blank")
        return value.strip()

    def validate_expiresAt(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("must be in the future")
        return value


class ApiKeyChangeSerializer(InputSerializer):
    groups = serializers.ListField(
        child=serializers.CharField(max_length=GROUP_MAX_CHARS),
        max_length=GROUPS_MAX,
        help_text="The key's groups, all of them (an empty list: none).",
    )


class ApiKeyRotateSerializer(InputSerializer):
    graceSeconds = serializers.IntegerField(
        min_value=0,
        max_value=MAX_GRACE_SECONDS,
        default=0,
        help_text="0 (default): the old key is revoked at once; else it keeps working this "
        f"many seconds (at most {MAX_GRACE_SECONDS}), while clients switch.",
    )


def _created(request: Request, key: ApiKey, raw: str, status_code: int) -> Response:
    body = {**ApiKeySerializer(key).data, "key": raw}
    return Response(body, status=status_code, headers={"Location": f"/api-keys/{key.id}"})


def key_get(request: Request, key_id: str) -> ApiKey:
    """A key the request's key may manage (``Principal.may_manage``: its owner's keys of its
    scope or lower, or any for an admin key). Others are not found (404): their existence
    is not disclosed."""
    key = ApiKey.objects.filter(pk=parse_uuid(key_id, "API key")).first()
    if key is None or not request.user.may_manage(key):
        raise ProblemError(404, "not-found", f"There is no API key {key_id}.")
    return key


class ApiKeyListView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="api_keys_list",
        parameters=[
            OpenApiParameter(
                "owner", str, description="Admin keys: list this owner's keys (default: own)."
            )
        ],
        responses=ApiKeyListSerializer,
        description="The keys of the request's owner that the request's key may manage "
        "(an agent key: the owner's agent keys; an admin key: all), revoked and expired ones "
        "too, newest first; never their secrets.",
    )
    def get(self, request: Request) -> Response:
        params_check(request.query_params, {"owner"})
        owner = request.query_params.get("owner") or request.user.owner
        if owner != request.user.owner and not request.user.is_admin:
            raise ProblemError(
                403,
                "forbidden",
                "Only an admin key may list another owner's keys.",
                [Problem("owner", "may be another owner for admin keys only")],
            )
        rows = keys.api_keys_of(owner)
        if not request.user.is_admin:  # only the keys it may manage (none of a higher scope)
            rows = rows.filter(scope=ApiKey.Scope.AGENT)
        return Response({"results": ApiKeySerializer(rows, many=True).data})

    @extend_schema(
        request=ApiKeyCreateSerializer,
        responses={201: ApiKeyCreatedSerializer},
        description="Create a key for an owner (admin keys only). The answer holds the secret; "
        "it is never shown again.",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        if not request.user.is_admin:
            raise ProblemError(403, "forbidden", "Only an admin key may create API keys.")
        payload = ApiKeyCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        key, raw = keys.api_key_create(
            owner=data["owner"],
            admin=data["scope"] == ApiKey.Scope.ADMIN,
            label=data["label"],
            expires_at=data.get("expiresAt"),
            groups=data["groups"],
        )
        return _created(request, key, raw, 201)


class ApiKeyDetailView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(responses=ApiKeySerializer)
    def get(self, request: Request, key_id: str) -> Response:
        return Response(ApiKeySerializer(key_get(request, key_id)).data)

    @extend_schema(
        request=ApiKeyChangeSerializer,
        responses=ApiKeySerializer,
        description="Give the key its groups (admin keys only): what its requests may read "
        "among agents kept to groups.",
    )
    def patch(self, request: Request, key_id: str) -> Response:
        key = key_get(request, key_id)
        if not request.user.is_admin:
            raise ProblemError(
                403,
                "forbidden",
                "Only an admin key may give a key its groups.",
                [Problem("groups", "may be set by admin keys only")],
            )
        payload = ApiKeyChangeSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        key = keys.api_key_groups_set(key=key, groups=payload.validated_data["groups"])
        return Response(ApiKeySerializer(key).data)

    @extend_schema(responses={204: None}, description="Revoke the key (at once).")
    def delete(self, request: Request, key_id: str) -> Response:
        keys.api_key_revoke(key=key_get(request, key_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ApiKeyRotateView(APIView):
    may_conflict = True  # 409 problems (OpenAPI)

    permission_classes = [HasApiKey]

    @extend_schema(
        request=ApiKeyRotateSerializer,
        responses={201: ApiKeyCreatedSerializer},
        description="A new key (same owner, scope, label and expiry), then the old one "
        "revoked, or expiring after graceSeconds.",
    )
    @idempotent
    def post(self, request: Request, key_id: str) -> Response:
        key = key_get(request, key_id)
        now = timezone.now()
        if not key.is_active(now):
            raise ProblemError(
                409, "key-inactive", f"The API key {key_id} is revoked or expired already."
            )
        payload = ApiKeyRotateSerializer(data=request.data or {})
        payload.is_valid(raise_exception=True)
        grace = payload.validated_data["graceSeconds"]
        new, raw = keys.api_key_rotate(key=key, grace_seconds=grace)
        return _created(request, new, raw, 201)
