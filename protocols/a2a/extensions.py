"""What the A2A app adds to the core (registry.extensions), registered at start-up."""

import json

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist

from protocols.a2a.demo import card_demo_load
from protocols.a2a.models import CardDocument
from protocols.a2a.registration.probes import a2a_probe
from protocols.a2a.registration.services import CARD_SOURCE, HELD_CARD, held_card_apply
from protocols.a2a.registration.trust import SIGNALS as TRUST_SIGNALS
from protocols.a2a.registration.trust import card_digest_keys
from protocols.a2a.relay.metrics import relay_gauges
from protocols.a2a.serving.cards import card_lean, card_url
from protocols.a2a.serving.pages import card_panel, signed_badge, verified_badge
from registry import extensions
from registry.agents.members import TRUST_SCHEMA as SCORE_SCHEMA
from registry.agents.members import agent_trust
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import registry_url
from registry.extensions import AgentPanel, Badge, FactKind, LeanRoute, Member

FACT_KINDS = [
    FactKind("protocolBinding", "An A2A interface binding: JSONRPC, GRPC, …"),
    FactKind("protocolVersion", "An A2A interface protocol version: 1.0, 0.3 …"),
    FactKind("provider", "Provider organization (case-insensitive).", filter="iexact"),
    FactKind("extension", "An A2A extension URI the card declares."),
    FactKind(
        "securityScheme",
        "A security scheme type: apiKey, http, oauth2, openIdConnect, mutualTLS.",
    ),
    FactKind("streaming", "The card declares streaming.", filter="flag"),
    FactKind("pushNotifications", "The card declares push notifications.", filter="flag"),
    FactKind("specVersion", "The card's A2A version: 1.0, 1.0-rc, 0.3 or hybrid.", filter=None),
    FactKind(
        "verified",
        "true: the agent's domain served its card (registered by domain, or verified).",
        filter="present",
        facet=False,
    ),
    FactKind(
        "signed",
        "true: the card's signature verified; false: unsigned or invalid.",
        filter="present",
        facet=False,
    ),
]

PROBLEM_TYPES = {
    "invalid-card": "The A2A agent card is invalid; errors[] names each problem by its path.",
    "no-a2a-endpoint": "The agent exists but has no A2A endpoint, so it has no agent card.",
    "card-managed": "The agent's card is authoritative: change it with PUT /a2a/agents/<id>.",
    "discovery-failed": "No valid A2A card was found at the domain or URL; errors[] lists "
    "each address tried and why it failed.",
    "origin-mismatch": "The card's interfaces are on other hosts than the domain that served it.",
    "card-mismatch": "The card the domain serves differs from the registered card.",
    "not-verifiable": "Only agents registered by card can be verified against their domain.",
    "not-refreshable": "The agent was not registered by domain or URL: no source to refresh from.",
    "breaking-change": "The new card breaks the agent's backward compatibility (listed).",
    "duplicate-agent": "Another agent of the same owner already has this preferred interface.",
    "relay-waits-full": "Too many relayed calls already wait for their agents' replies (the "
    "detail names the limit: in all, 503, or per client, 429): nothing was sent and no task "
    "made; retry after Retry-After, or send with returnImmediately and poll GetTask.",
    "queue-unavailable": "The queue relay's broker did not take the request (unreachable, or "
    "the agent's queue missing): nothing was sent and no task made; retry after Retry-After.",
    "queue-name-taken": "The endpoint names a queue another owner's relayed endpoint "
    "named first (errors[] names the address): queue names are their first owner's while it "
    "has an endpoint on them.",
    "relay-anonymous-limit": "Too many relayed tasks without credentials (open in all, 503, "
    "or made by this client this hour, 429): nothing was sent and no task made; retry after "
    "Retry-After, or send an Authorization.",
}

TRUST_SCHEMA = {
    "type": "object",
    "properties": {
        "verified": {"type": "boolean"},
        "verifiedDomain": {"type": "string", "nullable": True},
        "signature": {"type": "string", "enum": ["verified", "invalid", "unsigned"]},
        **SCORE_SCHEMA["properties"],
        "verifiedPublisher": {
            "type": "boolean",
            "description": "The registry's moderators verified its owner or domain.",
        },
    },
}


def _verified_publisher(agent: Agent) -> bool:
    # The core's moderation row, read with the agent (select_related): none, not verified.
    try:
        return agent.moderation.verified_publisher
    except ObjectDoesNotExist:
        return False


def trust(agent: Agent) -> dict:
    """The core's ``trust`` member (score, signals) with what the card's provenance proves."""
    provenance = getattr(agent, "a2a_provenance", None)  # select_related (register_related)
    publisher = _verified_publisher(agent)
    if provenance is None:
        found = {
            "verified": False,
            "verifiedDomain": None,
            "signature": "unsigned",
            "verifiedPublisher": publisher,
        }
    else:
        found = {
            "verified": provenance.verified,
            "verifiedDomain": provenance.verified_domain or None,
            "signature": provenance.signature,
            "verifiedPublisher": publisher,
        }
    return {**found, **agent_trust(agent)}


def queue_url(endpoint: Endpoint) -> str | None:
    if not endpoint.is_queue or endpoint.protocol != Endpoint.Protocol.A2A:
        return None
    return registry_url(f"/a2a/queue/{endpoint.id}")


def skill_examples(agent_ids: list) -> dict:
    """What a posted card's skills give as examples of requests: the words people use to
    ask for them, for search by meaning (registry.semantic)."""
    from protocols.a2a.cards.documents import cards_stored
    from protocols.a2a.models import CardDocument

    found = {}
    for agent_id, stored in cards_stored(agent_ids).items():
        if stored.origin != CardDocument.Origin.SUBMITTED:
            continue
        try:
            skills = stored.card.get("skills") or []
        except AttributeError:
            continue
        examples = [
            example
            for skill in skills
            if isinstance(skill, dict) and isinstance(skill.get("examples"), list)
            for example in skill["examples"]
            if isinstance(example, str)
        ]
        if examples:
            found[agent_id] = ". ".join(examples)
    return found


def card_document(agent_id) -> dict | None:
    """The agent's card as served (a waiting change's diff compares two of them)."""
    body = CardDocument.objects.filter(agent_id=agent_id).values_list("body", flat=True).first()
    return json.loads(bytes(body)) if body is not None else None


def register() -> None:
    # A card write may wait for review; an agent's card is what its changes are shown as.
    extensions.register_held_change(
        extensions.HeldChange(HELD_CARD, held_card_apply, document=card_document)
    )
    for kind in FACT_KINDS:
        extensions.register_fact_kind(kind)
    for slug, description in PROBLEM_TYPES.items():
        extensions.register_problem_type(slug, description)
    extensions.register_source(CARD_SOURCE, "A2A agent card")
    extensions.register_meaning_text("a2a-skill-examples", skill_examples)
    extensions.register_related("a2a_provenance")
    extensions.register_agent_member(
        Member(
            "cardUrl",
            card_url,
            {"type": "string", "nullable": True},
            "Where the agent's A2A card is served; null without an A2A endpoint.",
        )
    )
    extensions.register_agent_member(
        Member(
            "trust",
            trust,
            TRUST_SCHEMA,
            "verified: the agent's domain served this card; signature: of the card; score "
            "and signals: how far to trust the listing (docs/reference/trust.md).",
        )
    )
    extensions.register_endpoint_member(
        Member("queueUrl", queue_url, {"type": "string", "nullable": True}, "")
    )
    extensions.register_agent_panel(AgentPanel("a2a", "a2a/agent_panel.html", card_panel, 20))
    extensions.register_badge(Badge("verified", verified_badge, 20))
    extensions.register_badge(Badge("signed", signed_badge, 30))
    extensions.register_demo_loader("a2a", card_demo_load)
    extensions.register_prober(Endpoint.Protocol.A2A, a2a_probe)
    for signal in TRUST_SIGNALS:
        extensions.register_trust_signal(signal)
    extensions.register_duplicate_keys("card-digest", card_digest_keys)
    # First: card reads (/a2a/agents/<id>) are the most frequent requests; the ordinary
    # ones are answered on the lean lane, before Django (registry.fastpath.lean).
    extensions.register_urls("protocols.a2a.urls", first=True)
    extensions.register_lean_route(LeanRoute("/a2a/agents/", card_lean))
    # A relayed call waits for its agent's reply in the async server, holding no web worker.
    extensions.register_asgi_route("/a2a/queue/", "protocols.a2a.relay.asgi.application")
    extensions.register_scrape_gauges("relay", relay_gauges)
    extensions.register_schedule(
        "signatures-recheck",
        "a2a.tasks.signatures_recheck",
        settings.A2A_SIGNATURE_RECHECK_INTERVAL_SECONDS,
    )
    extensions.register_schedule("agent-tasks-expire", "a2a.tasks.agent_tasks_expire", 3600)
    extensions.register_schedule("relay-tasks-expire", "a2a.tasks.relay_tasks_expire", 3600)
    extensions.register_schedule("versions-prune", "a2a.tasks.versions_prune", 86400)
    # Looks for due cards every 10 minutes; each is due AGENT_REFRESH_INTERVAL_SECONDS on.
    extensions.register_schedule("agents-refresh", "a2a.tasks.agents_refresh", 600)
