"""The entities app's receivers: an entity's agent follows its card or its provider's
registration. An entity registered from its domain's card is described by that card: native
writes may not change its name, description, capabilities or endpoints (409 card-managed),
and only an admin deletes it; a provider's entity keeps its MCP endpoints and capabilities
(409 entity-managed)."""

from django.dispatch import receiver

from entities.services import CARD_SOURCE, CLAIM_SOURCE, WRITER
from registry.agents.models import Agent
from registry.http.problems import ProblemError
from registry.signals import agent_changed, agent_deleting

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
    # The first key to register a domain's card is not the domain's owner: only an admin
    # deletes such an entity. Domain claims will add the owner who proved the domain here.
    if agent.source == CARD_SOURCE and not admin:
        raise ProblemError(
            403,
            "forbidden",
            "This agent is an entity registered from its domain's entity card: only an "
            "admin key deletes it.",
        )
