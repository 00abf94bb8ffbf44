"""What the entities app shows on an agent's page (registry.extensions.AgentPanel)."""

from registry.agents.models import Agent

LEVELS = {
    0: "a provider's claim only",
    1: "the domain's own entity card",
    2: "the domain's card and its provider agree",
}


def entity_panel(agent: Agent) -> dict | None:
    entity = getattr(agent, "entity", None)  # select_related (register_related)
    if entity is None:
        return None
    place = ", ".join(p for p in (entity.address, entity.city, entity.country) if p)
    return {"entity": entity, "place": place, "level_text": LEVELS[entity.verification_level]}


def entity_badge(agent: Agent) -> str | None:
    entity = getattr(agent, "entity", None)  # select_related (register_related)
    if entity is None:
        return None
    return "Entity (flagged)" if entity.flagged else f"Entity, level {entity.verification_level}"


def entity_page_path(agent: Agent) -> str | None:
    """The business's own page, which the entity badge links (in results, one click)."""
    entity = getattr(agent, "entity", None)  # select_related (register_related)
    return None if entity is None else f"/browse/entities/{entity.pk}"
