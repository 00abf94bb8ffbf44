"""Reads of the AAP app."""

from django.db.models import Exists, OuterRef, QuerySet

from protocols.aap.models import AAPStatus
from registry.agents.models import Agent
from registry.agents.selectors import agent_queryset


def dealer_queryset() -> QuerySet[Agent]:
    """The compliant AAP v0.1 dealer agents (by their cards), fetched as discovery lists."""
    dealers = AAPStatus.objects.filter(agent=OuterRef("pk"), is_dealer_agent=True, compliant=True)
    return agent_queryset().filter(Exists(dealers))
