"""Webhook subscriptions over HTTP: ``/subscriptions`` (a key sees and changes its owner's
only; an admin key all), their deliveries and redelivery from a cursor. The secret is
stored encrypted and shown once, in the answer that creates the subscription or rotates
its secret."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from registry.access.api import HasApiKey
from registry.access.idempotency import idempotent
from registry.events import delivery, envelope, subscriptions
from registry.events.models import Delivery, Subscription
from registry.events.outbox import latest_cursor, oldest_cursor
from registry.http.inputs import ChoiceField, InputSerializer
from registry.http.jsonutil import Problem
from registry.http.params import limit_parse, limit_schema, params_check, parse_uuid
from registry.http.problems import ProblemError

EVENT_CHOICES = list(envelope.EVENT_TYPES)


class SubscriptionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    owner = serializers.CharField()
    url = serializers.URLField()
    events = serializers.ListField(
        child=ChoiceField(choices=EVENT_CHOICES), help_text="[]: every event."
    )
    filter = serializers.DictField(
        child=serializers.CharField(), help_text="Discovery parameters (tag, capability, ...)."
    )
    description = serializers.CharField(allow_blank=True)
    status = ChoiceField(
        choices=Subscription.Status.values,
        help_text="pending: the receiver has not answered the verification yet.",
    )
    statusReason = serializers.CharField(source="status_reason", allow_blank=True)
    cursor = serializers.IntegerField(help_text="The last event queued for it.")
    createdAt = serializers.DateTimeField(source="created_at")
    verifiedAt = serializers.DateTimeField(source="verified_at", allow_null=True)


class SubscriptionCreatedSerializer(SubscriptionSerializer):
    secret = serializers.CharField(
        help_text="The Standard Webhooks signing secret (whsec_...): shown in this answer only "
        "(stored encrypted)."
    )


class SubscriptionListSerializer(serializers.Serializer):
    results = SubscriptionSerializer(many=True)


class SubscriptionCreateSerializer(InputSerializer):
    url = serializers.CharField(max_length=2048)
    events = serializers.ListField(
        child=serializers.CharField(max_length=60), max_length=20, required=False, default=list
    )
    filter = serializers.DictField(required=False, default=dict)
    description = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default=""
    )


class SubscriptionPatchSerializer(InputSerializer):
    url = serializers.CharField(max_length=2048, required=False)
    events = serializers.ListField(
        child=serializers.CharField(max_length=60), max_length=20, required=False
    )
    filter = serializers.DictField(required=False)
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    active = serializers.BooleanField(
        required=False, help_text="false switches it off; true on again (verified again)."
    )


class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    event = serializers.IntegerField(source="event_id", help_text="The event's cursor.")
    status = ChoiceField(choices=Delivery.Status.values)
    attempts = serializers.IntegerField()
    lastStatusCode = serializers.IntegerField(source="last_status_code", allow_null=True)
    lastAttemptAt = serializers.DateTimeField(source="last_attempt_at", allow_null=True)
    nextAttemptAt = serializers.DateTimeField(source="next_attempt_at", allow_null=True)
    lastError = serializers.CharField(source="last_error", allow_blank=True)


class DeliveryListSerializer(serializers.Serializer):
    results = DeliverySerializer(many=True)


class RedeliverSerializer(InputSerializer):
    since = serializers.IntegerField(min_value=0, help_text="Replay the events after it.")


class RedeliveredSerializer(serializers.Serializer):
    queued = serializers.IntegerField()


def subscription_get(request: Request, subscription_id: str) -> Subscription:
    """One the request's key may see (its owner's; any for an admin key), else 404."""
    found = Subscription.objects.filter(pk=parse_uuid(subscription_id, "subscription")).first()
    if found is None or not request.user.may_change(found.owner):
        raise ProblemError(404, "not-found", f"There is no subscription {subscription_id}.")
    return found


def _valid(serializer_class, data):
    payload = serializer_class(data=data)
    payload.is_valid(raise_exception=True)
    return payload.validated_data


class SubscriptionListView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="subscriptions_list",
        responses=SubscriptionListSerializer,
        description="The subscriptions of the key's owner (an admin key: all), newest first.",
    )
    def get(self, request: Request) -> Response:
        params_check(request.query_params, set())
        rows = Subscription.objects.order_by("-created_at")
        if not request.user.is_admin:
            rows = rows.filter(owner=request.user.owner)
        return Response({"results": SubscriptionSerializer(rows, many=True).data})

    @extend_schema(
        request=SubscriptionCreateSerializer,
        responses={201: SubscriptionCreatedSerializer},
        description="Subscribe a URL to events (all, or those named) about the agents that "
        "match the discovery filters. It is pending until the receiver answers the signed "
        "webhook.verification event with its data.challenge; the secret is shown once.",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        data = _valid(SubscriptionCreateSerializer, request.data)
        subscription, secret = subscriptions.subscription_create(
            owner=request.user.owner, principal=request.user, **data
        )
        body = {**SubscriptionSerializer(subscription).data, "secret": secret}
        headers = {"Location": f"/subscriptions/{subscription.pk}"}
        return Response(body, status=status.HTTP_201_CREATED, headers=headers)


class SubscriptionDetailView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(responses=SubscriptionSerializer)
    def get(self, request: Request, subscription_id: str) -> Response:
        return Response(SubscriptionSerializer(subscription_get(request, subscription_id)).data)

    @extend_schema(request=SubscriptionPatchSerializer, responses=SubscriptionSerializer)
    def patch(self, request: Request, subscription_id: str) -> Response:
        subscription = subscription_get(request, subscription_id)
        data = _valid(SubscriptionPatchSerializer, request.data)
        changed = subscriptions.subscription_update(subscription=subscription, **data)
        return Response(SubscriptionSerializer(changed).data)

    @extend_schema(responses={204: None}, description="Remove it and its deliveries.")
    def delete(self, request: Request, subscription_id: str) -> Response:
        subscription_get(request, subscription_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class SecretRotateView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="subscription_secret_rotate",
        request=None,
        responses=SubscriptionCreatedSerializer,
        description="A new signing secret, shown in this answer only; deliveries are signed "
        "with it from the next one on (retries of an earlier event too).",
    )
    def post(self, request: Request, subscription_id: str) -> Response:
        subscription = subscription_get(request, subscription_id)
        subscription, secret = subscriptions.subscription_secret_rotate(subscription=subscription)
        return Response({**SubscriptionSerializer(subscription).data, "secret": secret})


class DeliveryListView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="subscription_deliveries",
        parameters=[
            OpenApiParameter("limit", limit_schema(), description="1 to 100 (default 20).")
        ],
        responses=DeliveryListSerializer,
        description="The subscription's latest deliveries, newest first.",
    )
    def get(self, request: Request, subscription_id: str) -> Response:
        params_check(request.query_params, {"limit"})
        limit = limit_parse(request.query_params.get("limit"))
        subscription = subscription_get(request, subscription_id)
        rows = subscription.deliveries.order_by("-id")[:limit]
        return Response({"results": DeliverySerializer(rows, many=True).data})


class RedeliverView(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        request=RedeliverSerializer,
        responses=RedeliveredSerializer,
        description="Queue again every matching event after the cursor since, in order, "
        "behind what is queued.",
    )
    def post(self, request: Request, subscription_id: str) -> Response:
        subscription = subscription_get(request, subscription_id)
        since = _valid(RedeliverSerializer, request.data)["since"]
        oldest = oldest_cursor()
        if since < oldest or since > latest_cursor():
            message = f"must be from {oldest} (the oldest event kept) to the latest cursor"
            raise ProblemError(
                400, "validation-error", f"since {message}.", [Problem("since", message)]
            )
        queued = delivery.redeliver_from(subscription, since)
        if queued:
            delivery.dispatch_later()
        return Response({"queued": queued})
