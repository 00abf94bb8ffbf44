"""Who acts: API keys, and the audit log of every write."""

import uuid

from django.db import models


class ApiKey(models.Model):
    class Scope(models.TextChoices):
        AGENT = "agent", "Agent"
        ADMIN = "admin", "Admin"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.CharField(max_length=200, db_index=True)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.AGENT)
    # SHA-256 of the key: keys are long random strings, so a fast hash is enough
    # and lets a request find its key with one indexed lookup.
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(
        max_length=12, editable=False, help_text="First characters of the key"
    )
    label = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Recorded at most once a minute per key, so reads do not turn into writes.
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Refused from this time on; empty: never expires.
    expires_at = models.DateTimeField(null=True, blank=True)
    # The groups its requests are in (names an admin assigns), as a token's group claim.
    groups = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.owner}, {self.scope})"

    @property
    def is_admin(self) -> bool:
        return self.scope == self.Scope.ADMIN

    def is_active(self, now) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


class AuditEntry(models.Model):
    """One write: who (the API key's owner), what, when, and a before/after summary."""

    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.CharField(max_length=200)
    key_prefix = models.CharField(max_length=12, blank=True)
    action = models.CharField(max_length=40)
    # Not a foreign key: the entry outlives the agent it describes.
    agent_id = models.UUIDField(null=True, blank=True, db_index=True)
    object_repr = models.CharField(max_length=200, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "audit entries"
        ordering = ["-at", "-id"]
        # Plain indexes (a field's own would add a pattern index for LIKE, which no query
        # uses, to every write's entry).
        indexes = [
            models.Index(fields=["actor"], name="audit_actor"),
            models.Index(fields=["action"], name="audit_action"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.object_repr}"


class IdempotentRequest(models.Model):
    """A write sent with an ``Idempotency-Key`` by an API key: what it was (a fingerprint of
    its method, path and body) and, once it succeeded, its answer, replayed to a retry
    (``registry.access.idempotency``). Pruned after IDEMPOTENCY_TTL_SECONDS."""

    id = models.BigAutoField(primary_key=True)
    key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    idempotency_key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(db_index=True)
    # When the request in flight started (or a retry took over from one that died).
    started_at = models.DateTimeField()
    # Empty while the request is in flight; then its answer.
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    headers = models.JSONField(default=dict, blank=True)
    body = models.BinaryField(default=b"", blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key", "idempotency_key"], name="idempotency_key_once_per_api_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.idempotency_key} ({self.status or 'in flight'})"
