"""The entities app's receivers: an entity's agent follows its card or its provider's
registration. An entity registered from its domain's card is described by that card: native
writes may not change its name, description, capabilities or endpoints (409 card-managed),
and only an admin deletes it; a provider's entity keeps its MCP endpoints and capabilities
(409 entity-managed)."""

from django.dispatch import receiver

from protocols.entities.models import Entity
from protocols.entities.registration.services import CARD_SOURCE, CLAIM_SOURCE, WRITER
from registry.agents.models import Agent, DomainClaim
from registry.agents.ownership import agent_owner_move
from registry.http.problems import ProblemError
from registry.signals import (
    agent_changed,
    agent_deleting,
    agent_listing_changed,
    agents_written,
    domain_claimed,
)

MANAGED_PARTS = {"capabilities", "endpoints:MCP"}
# What the domain's card says of an entity registered from it ("endpoints": any protocol).
CARD_PARTS = {"name", "description", "capabilities", "endpoints"}


@receiver(agent_changed, dispatch_uid="entities-managed")
def on_agent_changed(sender, agent: Agent, changed: set[str], writer: str, **kwargs) -> None:
    if writer == WRITER or agent.source not in (CARD_SOURCE, CLAIM_SOURCE):
        return
    if agent.source == CARD_SOURCE and changed & CARD_PARTS:
        raise ProblemError(
            409,
            "card-managed",
            "This agent is an entity registered from its domain's entity card, which "
            "describes it: its name, description, capabilities and endpoints change only "
            "with the card. Publish the new card and register the domain again "
            "(POST /entities).",
        )
    if changed & MANAGED_PARTS:
        raise ProblemError(
            409,
            "entity-managed",
            "This agent is an entity: its MCP endpoints and capabilities come from its "
            "entity card or its provider's registration. Publish the new card and register "
            "the domain again (POST /entities), or register the provider again.",
        )


@receiver(agent_deleting, dispatch_uid="entities-card-delete")
def on_agent_deleting(sender, agent: Agent, admin: bool, **kwargs) -> None:
    # The first key to register a domain's card is not the domain's owner: only an admin, or
    # the owner who proved the domain (a verified domain claim), retires such an entity.
    if agent.source == CARD_SOURCE and not admin and not _proved_by(agent):
        raise ProblemError(
            403,
            "forbidden",
            "This agent is an entity registered from its domain's entity card: only an "
            "admin key, or the owner who proved the domain (POST /claims), retires it.",
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


def _proved_by(agent: Agent) -> bool:
    """Whether the agent's owner holds the verified claim of its entity's domain."""
    domains = Entity.objects.filter(agent=agent).values("card__authority")
    return DomainClaim.objects.filter(
        domain__in=domains, owner=agent.owner, state=DomainClaim.State.VERIFIED
    ).exists()


@receiver(agent_listing_changed, dispatch_uid="entities-listing")
def on_agent_listing_changed(sender, agent: Agent, listed: bool, **kwargs) -> None:
    """An unlisted agent's entity leaves the entity reads (resolve, nearby, its pages)."""
    Entity.objects.filter(agent=agent).update(listed=listed)


@receiver(agents_written, dispatch_uid="entities-listing-follow")
def on_agents_written(sender, agent_ids, **kwargs) -> None:
    """An entity stored for an agent that is not listed (waiting for review) is not shown."""
    unlisted = Agent.objects.filter(pk__in=list(agent_ids), listed=False).values("pk")
    Entity.objects.filter(agent__in=unlisted, listed=True).update(listed=False)
