"""The keys duplicates are grouped by: what makes two listings the same agent (a card's
digest, a preferred interface URL, an entity's domain), one row per agent and key, kept at
write time (registry.trust.duplicates)."""

from django.db import models

from registry.agents.models import Agent


class DuplicateKey(models.Model):
    # Indexed by duplicate_key_agent (agent, key), which begins with it.
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    key = models.CharField(max_length=300)

    class Meta:
        indexes = [
            models.Index(fields=["key", "agent"], name="duplicate_key_lookup"),
            models.Index(fields=["agent", "key"], name="duplicate_key_agent"),
        ]

    def __str__(self) -> str:
        return self.key
