"""What the entities app adds to the core (registry.extensions), registered at start-up."""

from django.conf import settings

from protocols.entities.demo import entities_demo_load
from protocols.entities.registration.services import CARD_SOURCE, CLAIM_SOURCE
from protocols.entities.resolution.pages import entity_badge, entity_page_path, entity_panel
from protocols.entities.resolution.tools import RESOLVE_ENTITY
from protocols.entities.servers.probes import mcp_probe
from protocols.entities.servers.server_cards import origin_cards_read
from registry import extensions
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import registry_url
from registry.extensions import AgentPanel, Badge, FactKind, Member, TrustSignal

FACT_KINDS = [
    FactKind("entityCategory", "An entity's category: restaurant, hotel, health …"),
    FactKind("entityFormat", "The entity's card format: a2e-0.1, edp-0.1, edp-0.2, edp-provider."),
    FactKind(
        "verificationLevel",
        "An entity's EDP verification level: 0 a provider's claim only (or a flagged card), "
        "1 the domain's card, 2 both agree.",
    ),
]

PROBLEM_TYPES = {
    "invalid-entity-card": "The entity card is invalid (or its domain is not the host that "
    "served it); errors[] names each problem by its path. Nothing was stored.",
    "entity-card-not-found": "No entity card was found at the domain; errors[] lists each "
    "address tried and why it failed.",
    "invalid-registration": "The EDP provider registration is invalid; errors[] names each "
    "problem by its path.",
    "entity-managed": "The agent is an entity: its MCP endpoints and capabilities follow its "
    "entity card or its provider's registration.",
}

ENTITY_SCHEMA = {
    "type": "object",
    "nullable": True,
    "properties": {
        "url": {"type": "string"},
        "domain": {"type": "string", "nullable": True},
        "path": {"type": "string", "nullable": True},
        "format": {"type": "string"},
        "category": {"type": "string", "nullable": True},
        "verificationLevel": {"type": "integer"},
        "flagged": {"type": "boolean"},
    },
}


def entity_member(agent: Agent) -> dict | None:
    entity = getattr(agent, "entity", None)  # select_related (register_related)
    if entity is None:
        return None
    return {
        "url": registry_url(f"/entities/{entity.pk}"),
        "domain": entity.domain or None,
        "path": entity.path or None,
        "format": entity.format,
        "category": entity.category or None,
        "verificationLevel": entity.verification_level,
        "flagged": entity.flagged,
    }


def entity_categories(agent_ids: list) -> dict:
    """An entity's category (restaurant, dentist …), for search by meaning."""
    from registry.discovery.models import AgentFacet

    rows = AgentFacet.objects.filter(agent_id__in=agent_ids, kind="entityCategory")
    return {a: v.replace("_", " ") for a, v in rows.values_list("agent_id", "value")}


def entity_levels(agent_ids: list) -> dict:
    """The trust signal of an entity's verification level (0, 1, 2 as 0, 0.5, 1); nothing
    for the agents that are no entity."""
    from protocols.entities.models import Entity

    rows = Entity.objects.filter(agent_id__in=agent_ids).values_list(
        "agent_id", "verification_level"
    )
    return {pk: (min(level, 2) / 2, {"level": level}) for pk, level in rows}


def entity_domain_keys(agent_ids: list) -> dict:
    """Duplicates' key of an entity: its domain (one business, whoever lists it)."""
    from protocols.entities.models import Entity

    rows = Entity.objects.filter(agent_id__in=agent_ids).exclude(domain="")
    return {
        pk: [f"entity-domain:{domain.lower()}"]
        for pk, domain in rows.values_list("agent_id", "domain")
    }


def entity_verified_domains(agents: list[Agent]) -> dict:
    """The domain of each entity whose own card at that domain lists its MCP servers
    (verification level 1 or 2; a flagged card is level 0): its servers are named there."""
    found = {}
    for agent in agents:
        entity = getattr(agent, "entity", None)  # select_related (register_related)
        if entity is not None and entity.domain and entity.verification_level >= 1:
            found[agent.pk] = entity.domain
    return found


def register() -> None:
    for kind in FACT_KINDS:
        extensions.register_fact_kind(kind)
    extensions.register_meaning_text("entity-category", entity_categories)
    if "card-managed" not in extensions.problem_types:  # A2A's too, when installed
        extensions.register_problem_type(
            "card-managed", "The agent is described by its card: change the card instead."
        )
    for slug, description in PROBLEM_TYPES.items():
        extensions.register_problem_type(slug, description)
    extensions.register_source(CARD_SOURCE, "Entity card (A2E or EDP)", business=True)
    extensions.register_source(CLAIM_SOURCE, "EDP provider registration", business=True)
    extensions.register_related("entity")
    extensions.register_agent_member(
        Member(
            "entity",
            entity_member,
            ENTITY_SCHEMA,
            "The business this agent stands for (an entity card or an EDP provider's "
            "claim); null for other agents.",
        )
    )
    extensions.register_agent_panel(
        AgentPanel("entity", "entities/agent_panel.html", entity_panel, 25)
    )
    extensions.register_badge(Badge("entity", entity_badge, 45, href=entity_page_path))
    extensions.register_prober(Endpoint.Protocol.MCP, mcp_probe)
    extensions.register_origin_card("mcp-server-card", origin_cards_read)
    extensions.register_verified_domains("entity-domain", entity_verified_domains)
    extensions.register_trust_signal(
        TrustSignal(
            "entityLevel",
            entity_levels,
            "An entity's verification level: 0 a provider's claim, 1 its domain's card, 2 both.",
            missing=None,
        )
    )
    extensions.register_duplicate_keys("entity-domain", entity_domain_keys)
    extensions.register_demo_loader("entities", entities_demo_load)
    extensions.register_urls("protocols.entities.urls")
    extensions.register_tool(RESOLVE_ENTITY)
    extensions.register_schedule(
        "entities-crawl", "entities.tasks.entities_crawl", settings.ENTITY_CRAWL_TICK_SECONDS
    )
