"""What the registry knows about each agent's Auto Agent Protocol compliance."""

from django.db import models

from registry.agents.models import Agent


class AAPStatus(models.Model):
    """The AAP v0.1 card check of an agent's current A2A card (no network, no manifest).

    One row per agent that has a card; agents without a card have none.
    """

    VERSION_MAX_LENGTH = 20

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="aap_status"
    )
    is_dealer_agent = models.BooleanField(default=False)
    # The card passes every AAP v0.1 card MUST rule; the manifest is not fetched, so this is
    # the card's compliance (shown as aap.cardCompliant, filtered by aapCompliant).
    compliant = models.BooleanField(default=False)
    aap_version = models.CharField(
        max_length=VERSION_MAX_LENGTH, blank=True, help_text="Empty: none declared"
    )
    implemented_skills = models.JSONField(default=list, blank=True)
    checked_at = models.DateTimeField()

    class Meta:
        verbose_name = "AAP status"
        verbose_name_plural = "AAP statuses"
        indexes = [
            models.Index(fields=["compliant", "is_dealer_agent"], name="aap_status_compliant"),
        ]

    def __str__(self) -> str:
        state = "compliant" if self.compliant else "not compliant"
        return f"AAP status of {self.agent_id} ({state})"
