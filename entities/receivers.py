"""The entities app's receivers: an entity's agent follows its card or its provider's
registration, so native writes may not change its MCP endpoints or capabilities."""

from django.dispatch import receiver

from entities.models import Entity
from entities.services import CARD_SOURCE, CLAIM_SOURCE, WRITER
from registry.agents.models import Agent
from registry.agents.ownership import agent_owner_move
from registry.http.problems import ProblemError
from registry.signals import agent_changed, domain_claimed

MANAGED_PARTS = {"capabilities", "endpoints:MCP"}


@receiver(agent_changed, dispatch_uid="entities-managed")
def on_agent_changed(sender, agent: Agent, changed: set[str], writer: str, **kwargs) -> None:
    if writer == WRITER or agent.source not in (CARD_SOURCE, CLAIM_SOURCE):
        return
    if changed & MANAGED_PARTS:
        raise ProblemError(
            409,
            "entity-managed",
            "This agent is an entity: its MCP endpoints and capabilities come from its "
            "entity card or its provider's registration. Publish the new card and register "
            "the domain again (POST /entities), or register the provider again.",
        )


@receiver(domain_claimed, dispatch_uid="entities-domain-claimed")
def on_domain_claimed(sender, domain: str, owner: str, **kwargs) -> int:
    """Every entity of the claimed domain's entity card goes to the domain's owner."""
    moved = 0
    entities = Entity.objects.filter(card__authority=domain).exclude(agent__owner=owner)
    entities = entities.exclude(agent__status=Agent.Status.RETIRED)
    for agent in Agent.objects.filter(pk__in=entities.values("agent_id")).order_by("pk"):
        agent_owner_move(agent=agent, owner=owner, reason="domain-claim")
        moved += 1
    return moved
