"""The entities app's receivers: an entity's agent follows its card or its provider's
registration, so native writes may not change its MCP endpoints or capabilities."""

from django.dispatch import receiver

from entities.services import CARD_SOURCE, CLAIM_SOURCE, WRITER
from registry.agents.models import Agent
from registry.http.problems import ProblemError
from registry.signals import agent_changed

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
