"""The moderators' decisions about an agent. An agent without a row is as registered:
admitted, not quarantined."""

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
    # Why it was rejected (the owner reads it), or why it waits (the rule that flagged it).
    admission_reason = models.TextField(blank=True, default="")
    # Quarantined: hidden from every public read until released (services).
    quarantined_at = models.DateTimeField(null=True, blank=True)
    quarantine_reason = models.TextField(blank=True, default="")
    # Who decided last (the audit log keeps every decision).
    decided_by = models.CharField(max_length=200, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["-updated_at", "agent"], name="moderation_recent")]

    def __str__(self) -> str:
        state = "quarantined" if self.quarantined_at else self.admission
        return f"{self.agent_id}: {state}"

    @property
    def listed(self) -> bool:
        """Whether these decisions let the agent be publicly listed."""
        return self.admission == self.Admission.APPROVED and self.quarantined_at is None
