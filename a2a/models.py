"""The A2A card document kept beside each agent that has one."""

from django.db import models

from registry.models import Agent


class CardDocument(models.Model):
    """The exact bytes served at /a2a/agents/<id>.

    ``submitted``: the card as posted (JSON-equal to it, signatures and unknown
    members kept). ``generated``: built from the registry model at write time
    for a natively registered agent, so serving never rebuilds it.
    """

    class Origin(models.TextChoices):
        SUBMITTED = "submitted", "Submitted card"
        GENERATED = "generated", "Generated from the model"

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="a2a_card"
    )
    body = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    origin = models.CharField(max_length=10, choices=Origin.choices)
    spec_version = models.CharField(max_length=10, help_text="1.0, 0.3 or hybrid")
    naming = models.CharField(max_length=12, default="camelCase")
    signed = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "A2A card"

    def __str__(self) -> str:
        return f"card of {self.agent_id} ({self.origin}, A2A {self.spec_version})"
