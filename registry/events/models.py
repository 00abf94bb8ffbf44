"""The outbox and the webhook subscriptions that read it."""

import uuid

from django.db import models

from registry.agents.models import Endpoint


class Event(models.Model):
    """One committed change, written in the change's transaction. ``id`` is the cursor of
    the stream and of webhooks (CloudEvents ``id``); ``data`` the JSON bytes of what an
    anonymous reader sees of the subject as of the commit (its listing, or its tombstone)."""

    id = models.BigAutoField(primary_key=True)
    type = models.CharField(max_length=60)
    subject = models.UUIDField(null=True)
    time = models.DateTimeField()
    data = models.BinaryField()
    # CloudEvents extension attributes (strings): "changed", "endpointid", "liveness", ...
    extensions = models.JSONField(default=dict)
    # The digest of the agent's stored listing the event showed (agent events): an
    # app's write that leaves the listing as it was makes no agent.updated.
    digest = models.CharField(max_length=16, blank=True, default="")
    # The id of the request whose write made the event (X-Request-Id): sent with its
    # webhooks, never in the event itself. Empty for a job's or a command's writes.
    request_id = models.CharField(max_length=128, blank=True, default="")
    # Who may read it: everyone (empty); "admin": streams and webhooks of admin keys'
    # owners only (the moderators' decisions); "readers": those who may read its subject
    # when it is sent (a restricted agent's: registry.agents.visibility).
    audience = models.CharField(max_length=8, blank=True, default="", db_default="")

    class Meta:
        indexes = [
            models.Index(fields=["subject", "id"], name="event_subject"),
            models.Index(fields=["time"], name="event_time"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.type} {self.subject}"


class Subscription(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"  # the receiver has not answered the verification yet
        ACTIVE = "active"
        DISABLED = "disabled"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.CharField(max_length=200, db_index=True)
    url = models.URLField(max_length=2048)
    events = models.JSONField(default=list)  # event names ("agent.updated"); [] = all
    filter = models.JSONField(default=dict)  # discovery parameters
    description = models.CharField(max_length=200, blank=True, default="")
    # The Standard Webhooks secret, encrypted (registry.events.sealing): shown once in clear.
    secret_sealed = models.CharField(max_length=300)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    status_reason = models.CharField(max_length=500, blank=True, default="")
    # The last event looked at for this subscription: later ones are still to be queued.
    cursor = models.BigIntegerField(default=0)
    # Who delivers now (one in flight per subscription): held until then.
    leased_until = models.DateTimeField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    verified_at = models.DateTimeField(null=True)
    # What it reads besides public events (a restricted agent's, checked at delivery): its
    # owner's agents, and those of the groups of the key that made it while that key is
    # valid, or of the token's group claim as it was then (``subscription_reader``).
    key = models.ForeignKey(
        "registry.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    groups = models.JSONField(default=list, db_default=[], blank=True)

    class Meta:
        indexes = [models.Index(fields=["status"], name="subscription_status")]

    def __str__(self) -> str:
        return f"{self.url} ({self.status})"


class Delivery(models.Model):
    """One event to one subscription: sent in ``id`` order, one at a time."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"  # retries ran out, or the receiver is gone (410)
        # Not sent: its subject, a restricted agent, was no longer the subscription's to
        # read when it came to be sent.
        WITHHELD = "withheld"

    id = models.BigAutoField(primary_key=True)
    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    first_attempt_at = models.DateTimeField(null=True)
    last_attempt_at = models.DateTimeField(null=True)
    next_attempt_at = models.DateTimeField(null=True)
    last_status_code = models.PositiveSmallIntegerField(null=True)
    last_error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["subscription", "status", "id"], name="delivery_queue"),
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} to {self.subscription_id}: {self.status}"


class EndpointStatusSeen(models.Model):
    """The liveness status last announced for an endpoint (absent: ``unknown``), so that
    ``endpoint.liveness_changed`` is written on a change of status only."""

    endpoint = models.OneToOneField(
        Endpoint, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    status = models.CharField(max_length=10)

    def __str__(self) -> str:
        return f"{self.endpoint_id}: {self.status}"
