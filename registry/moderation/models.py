"""The moderators' decisions about an agent. An agent without a row is as registered:
admitted, not quarantined."""

import uuid

from django.db import models

from registry.agents.models import Agent


class Moderation(models.Model):
    class Admission(models.TextChoices):
        APPROVED = "approved", "Approved"
        PENDING = "pending", "Pending review"
        REJECTED = "rejected", "Rejected"

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="moderation"
    )
    admission = models.CharField(
        max_length=10, choices=Admission.choices, default=Admission.APPROVED
    )
    # Why it was rejected (the owner reads it), or why it waits (the rules that flagged it).
    admission_reason = models.TextField(blank=True, default="")
    # Approved once: what waits now is a change of an agent that was listed.
    approved_once = models.BooleanField(default=True)
    # Quarantined: hidden from every public read until released (services).
    quarantined_at = models.DateTimeField(null=True, blank=True)
    quarantine_reason = models.TextField(blank=True, default="")
    # Who decided last (the audit log keeps every decision).
    decided_by = models.CharField(max_length=200, blank=True, default="")
    # The owner, or the domain of one of its endpoints, is a verified publisher
    # (registry.moderation.publishers): the agent's trust.verifiedPublisher, its fact.
    verified_publisher = models.BooleanField(default=False)
    # Open reports from distinct reporters (registry.moderation.reports), kept at write time.
    open_reports = models.PositiveIntegerField(default=0)
    # The scanners' findings of what the agent serves now (registry.moderation.scanning):
    # each {rule, path, severity, verdict, message}; a card's versions keep theirs.
    findings = models.JSONField(default=list, blank=True)
    # A change of the approved agent waits for review (``PendingChange``): in the queue.
    change_pending = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["-updated_at", "agent"], name="moderation_recent"),
            models.Index(
                fields=["-updated_at", "agent"],
                name="moderation_waiting",
                condition=models.Q(admission="pending")
                | models.Q(change_pending=True)
                | models.Q(quarantined_at__isnull=False)
                | models.Q(open_reports__gt=0),
            ),
        ]

    def __str__(self) -> str:
        state = "quarantined" if self.quarantined_at else self.admission
        return f"{self.agent_id}: {state}"

    @property
    def rejected(self) -> bool:
        return self.admission == self.Admission.REJECTED

    @property
    def listed(self) -> bool:
        """Whether these decisions let the agent be publicly listed."""
        return self.admission == self.Admission.APPROVED and self.quarantined_at is None


class PendingChange(models.Model):
    """A change of an approved agent that waits for a moderator (registry.moderation.changes):
    meanwhile every read serves the approved version. One per agent: a later change replaces
    it. Approved, it is made (then gone); rejected, it stays for its owner to read why."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending review"
        REJECTED = "rejected", "Rejected"

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="pending_change"
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    # How to make it (registry.extensions.held_changes) and what that needs.
    kind = models.CharField(max_length=40)
    payload = models.JSONField()
    # What the agent would serve (its card), and the JSON Patch from what it serves now
    # (null: larger than VERSION_DIFF_MAX_BYTES).
    document = models.JSONField()
    patch = models.JSONField(null=True, blank=True)
    findings = models.JSONField(default=list, blank=True)
    # Why it waits (the rules that flagged it), or why it was rejected.
    reason = models.TextField(blank=True, default="")
    submitted_at = models.DateTimeField()
    submitted_by = models.CharField(max_length=200, blank=True, default="")
    decided_by = models.CharField(max_length=200, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.agent_id}: change {self.state}"


class BlockEntry(models.Model):
    """What the registry refuses: agents of an owner, endpoints on a domain (and its
    subdomains), on a host or under a URL prefix, a card of a digest. Enforced on every write
    path and retroactively (``registry.moderation.blocklist``); refusals name the reason,
    never the pattern."""

    class Kind(models.TextChoices):
        DOMAIN = "domain", "Domain and its subdomains"
        HOST = "host", "Endpoint host"
        URL_PREFIX = "url-prefix", "Endpoint URL prefix"
        OWNER = "owner", "Owner"
        DIGEST = "digest", "Card digest (SHA-256)"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    value = models.CharField(max_length=2048)
    reason = models.CharField(max_length=500)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=200, blank=True, default="")
    # What its retroactive quarantine found (null: not run yet).
    quarantined = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "block entries"
        ordering = ["-created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"


class VerifiedPublisher(models.Model):
    """An owner, or a domain (its subdomains too), that the moderators verified: its agents
    carry ``trust.verifiedPublisher``, skip admission review, and their names are protected
    from look-alikes (registry.moderation.publishers)."""

    class Kind(models.TextChoices):
        OWNER = "owner", "Owner"
        DOMAIN = "domain", "Domain"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    value = models.CharField(max_length=262)
    reason = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "value"], name="verified_publisher_once")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"


class Report(models.Model):
    """Someone's report of an agent (registry.moderation.reports): anyone may report; the
    reporter's address is kept only as a keyed digest (distinct reporters, rate limits),
    never shown."""

    class Reason(models.TextChoices):
        SPAM = "spam", "Spam"
        IMPERSONATION = "impersonation", "Impersonation"
        MALICIOUS = "malicious", "Malicious"
        BROKEN = "broken", "Broken"
        OTHER = "other", "Other"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RESOLVED = "resolved", "Resolved"
        DISMISSED = "dismissed", "Dismissed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by report_agent, which begins with it.
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="reports", db_index=False
    )
    reason = models.CharField(max_length=16, choices=Reason.choices)
    detail = models.TextField(blank=True, default="")
    # The reporting API key's owner (empty: anonymous); admins see it, owners do not.
    reporter = models.CharField(max_length=200, blank=True, default="")
    # Who reported, as a digest: the key's owner, else the address (keyed with SECRET_KEY).
    reporter_digest = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    resolution = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["status", "-created_at", "id"], name="report_status"),
            models.Index(fields=["agent", "status"], name="report_agent"),
        ]

    def __str__(self) -> str:
        return f"{self.reason} report of {self.agent_id} ({self.status})"
