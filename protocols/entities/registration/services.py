"""Every write of the entities app: cards stored, levels recomputed, claims kept in step.

Each entity is a core agent written through ``registry.agents.services`` (writer ``entities``):
its MCP servers are ``MCP`` endpoints, their capabilities the agent's capabilities, so
discovery, the change feed, the admin and the signals cover entities like any agent.
"""

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from protocols.entities.cards import verification
from protocols.entities.cards.sources import (
    card_values,
    claim_sources_sync,
    claim_values,
    facts_apply,
    source_put,
)
from protocols.entities.cards.validation import CardReport, EntityData
from protocols.entities.models import (
    Entity,
    EntityCard,
    EntitySource,
    EntityTerm,
    Provider,
    ProviderClaim,
)
from protocols.entities.registration.index import entity_index_rows, terms_insert
from protocols.entities.registration.selectors import entity_document
from protocols.entities.servers.server_cards import server_cards_by_endpoint, tool_names
from registry.agents import services as core
from registry.agents.models import Agent, Endpoint
from registry.agents.removal import agent_delete
from registry.discovery.models import AgentFacet
from registry.events.envelope import ENTITY_CREATED, ENTITY_FLAGGED, ENTITY_UPDATED
from registry.events.outbox import event_record
from registry.http.jsonutil import Problem
from registry.signals import agents_written_send, writes_batched

WRITER = "entities"
CARD_SOURCE = "entity-card"
CLAIM_SOURCE = "edp-provider"
CLAIM_FORMAT = "edp-provider"
FACT_KINDS = ("entityCategory", "entityFormat", "verificationLevel")


@dataclass
class StoredCard:
    card: EntityCard
    entities: list[Entity]
    created: bool
    warnings: list[Problem] = field(default_factory=list)  # the card's (CardReport.warnings)


def crawl_due_at(domain: str, now: datetime, max_age: int | None = None) -> datetime:
    """When to fetch a domain's card again: after ``ENTITY_CRAWL_INTERVAL_SECONDS``, moved by
    up to a quarter either way by a hash of the domain (so the crawls spread over the day),
    or after the card's ``Cache-Control: max-age`` (at least an hour, at most a week)."""
    if max_age is not None:
        return now + timedelta(seconds=min(max(max_age, 3600), 7 * 86400))
    fraction = int(hashlib.sha256(domain.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    interval = settings.ENTITY_CRAWL_INTERVAL_SECONDS
    return now + timedelta(seconds=interval * (0.75 + 0.5 * fraction))


def _description(data: EntityData | Entity) -> str:
    if data.description:
        return data.description
    place = ", ".join(p for p in (data.city, data.country) if p)
    what = (data.category or "business").replace("_", " ")
    return f"{what} in {place}" if place else what


def entity_tools(mcps: list[dict]) -> list[str]:
    """The tool names the server cards of these MCP entries list (read before)."""
    cards = server_cards_by_endpoint([m["endpoint"] for m in mcps])
    return tool_names(list(cards.values()))


def agent_input(
    data: EntityData | Entity, mcps: list[dict], tools: list[str] = ()
) -> core.AgentInput:
    """The core agent of an entity: its MCP servers as MCP endpoints, preferred first; its
    capabilities the entries' capabilities and its servers' tools."""
    names = list(dict.fromkeys([*(c for m in mcps for c in m["capabilities"]), *tools]))
    return core.AgentInput(
        name=data.name,
        description=_description(data),
        capabilities=[core.CapabilityInput(name=n[:200], tags=[n[:200]]) for n in names],
        endpoints=[
            core.EndpointInput(
                name=f"mcp-{index + 1}" + (f"-{m['provider']}" if m["provider"] else ""),
                transport=Endpoint.Transport.HTTP,
                protocol=Endpoint.Protocol.MCP,
                address=m["endpoint"],
                protocol_metadata={
                    "provider": m["provider"],
                    "entityId": m["entity_id"],
                    "priority": m["priority"],
                    "order": m["order"],
                },
            )
            for index, m in enumerate(mcps)
        ],
    )


def entity_fill(entity: Entity, data: EntityData, fmt: str) -> EntitySource:
    """A card's entity (its ``domain`` and ``path`` set): its MCP entries, and its facts from
    the card alone. Returns the card's source, unsaved."""
    entity.mcps = [verification.entry_document(m) for m in data.mcps]
    source = EntitySource(kind=EntitySource.Kind.CARD, values=card_values(data, fmt))
    facts_apply(entity, [source])
    return source


def _index(entity: Entity) -> None:
    terms, facts = entity_index_rows(entity, entity_tools(entity.mcps))
    entity.save()
    EntityTerm.objects.filter(entity=entity).delete()
    terms_insert(terms)
    AgentFacet.objects.filter(agent=entity.agent, kind__in=FACT_KINDS).delete()
    AgentFacet.objects.bulk_create(facts)
    agents_written_send([entity.agent_id])  # the agent JSON's entity member


def _agent_write(entity: Entity | None, data, mcps: list[dict], owner: str, source: str) -> Agent:
    tools = entity_tools(mcps)
    if entity is None:
        return core.agent_create(
            owner=owner, data=agent_input(data, mcps, tools), source=source, writer=WRITER
        )
    fresh = agent_input(data, mcps, tools)
    return core.agent_update(
        agent=Agent.objects.get(pk=entity.pk),
        name=fresh.name,
        description=fresh.description,
        capabilities=fresh.capabilities,
        endpoints=fresh.endpoints,
        writer=WRITER,
    )


@transaction.atomic
def entity_refresh(*, entity: Entity) -> None:
    """A source or a server card of the entity changed: its shown facts, its index and its
    core agent (name, description, capabilities with its servers' tools) follow."""
    facts_apply(entity)
    _index(entity)
    agent = Agent.objects.get(pk=entity.pk)
    fresh = agent_input(entity, entity.mcps, entity_tools(entity.mcps))
    core.agent_update(
        agent=agent,
        name=fresh.name,
        description=fresh.description,
        capabilities=fresh.capabilities,
        writer=WRITER,
    )


@transaction.atomic
def card_store(
    *,
    owner: str,
    authority: str,
    url: str,
    body: bytes,
    report: CardReport,
    etag: str = "",
    last_modified: str = "",
    max_age: int | None = None,
) -> StoredCard:
    """Store a valid card of ``report.domain`` and its entities (created, updated, or
    removed when the card no longer lists them), then recompute the domain's levels."""
    # agents_written once, at the end: a new entity's MCP servers are named when its level
    # is known (its domain's namespace), never first in the registry's.
    with writes_batched():
        domain = report.domain
        now = timezone.now()
        card, created = EntityCard.objects.select_for_update().get_or_create(
            domain=domain,
            defaults={"owner": owner, "body": b"", "next_crawl_at": now},
        )
        card.authority, card.url, card.format = authority, url, report.format
        card.body, card.sha256 = body, hashlib.sha256(body).hexdigest()
        card.etag, card.last_modified = etag[:300], last_modified[:100]
        card.fetched_at, card.next_crawl_at = now, crawl_due_at(domain, now, max_age)
        card.status, card.status_detail = EntityCard.Status.OK, ""
        card.save()
        existing = {e.key: e for e in Entity.objects.filter(card=card)}
        stored, new_ids = [], set()
        for data in report.entities:
            key = f"{domain}{data.path}"
            entity = existing.pop(key, None) or Entity.objects.filter(key=key).first()
            is_new = entity is None
            entity = entity or Entity(key=key)
            entity.card, entity.domain, entity.path = card, domain, data.path
            entity.format, entity.flagged = report.format, False
            own = entity_fill(entity, data, report.format)
            if not is_new:
                source_put(entity, own.kind, url=url, values=own.values, read_at=now)
                facts_apply(entity)  # with its other sources: the provider's, the website's
            entity.agent = _agent_write(
                None if is_new else entity, entity, entity.mcps, card.owner, CARD_SOURCE
            )
            entity.save()
            if is_new:
                source_put(entity, own.kind, url=url, values=own.values, read_at=now)
                new_ids.add(entity.pk)
            stored.append(entity)
        for leftover in existing.values():
            agent_delete(agent=Agent.objects.get(pk=leftover.pk))
        domain_verify(domain, frozenset(e.pk for e in stored))
        fresh = [Entity.objects.get(pk=e.pk) for e in stored]
        for entity, old in zip(fresh, stored, strict=True):
            _entity_event(entity, ENTITY_CREATED if old.pk in new_ids else ENTITY_UPDATED)
        return StoredCard(card, fresh, created, report.warnings)


def _entity_event(entity: Entity, type: str) -> None:
    """The change event of an entity, with its public JSON (``GET /entities/<id>``)."""
    data = json.dumps(entity_document(entity), separators=(",", ":")).encode()
    event_record(type=type, subject=entity.pk, data=data)


@transaction.atomic
def card_flag(*, card: EntityCard, status: str, detail: str) -> None:
    """The crawl found the card missing or invalid: its entities stay, flagged, at level 0."""
    now = timezone.now()
    card.status, card.status_detail = status, detail[:2000]
    card.next_crawl_at = crawl_due_at(card.domain, now)
    card.save(update_fields=["status", "status_detail", "next_crawl_at", "updated_at"])
    newly = list(Entity.objects.filter(card=card, flagged=False).values_list("pk", flat=True))
    Entity.objects.filter(card=card).update(flagged=True)
    domain_verify(card.domain)
    for entity in Entity.objects.filter(pk__in=newly):
        _entity_event(entity, ENTITY_FLAGGED)


@transaction.atomic
def card_checked(*, card: EntityCard, max_age: int | None = None) -> None:
    """The crawl found the stored card unchanged (304 or the same bytes)."""
    was_flagged = card.flagged
    now = timezone.now()
    card.fetched_at, card.next_crawl_at = now, crawl_due_at(card.domain, now, max_age)
    card.status, card.status_detail = EntityCard.Status.OK, ""
    card.save()
    if was_flagged:
        Entity.objects.filter(card=card).update(flagged=False)
        domain_verify(card.domain)


def claims_with_ids(claims) -> list[ProviderClaim]:
    claims = list(claims)
    for claim in claims:
        claim.provider_id_text = claim.provider.provider_id
    return claims


def domain_verify(domain: str, written: frozenset = frozenset()) -> None:
    """Recompute the levels of a domain's entities and keep the claims naming it in step.
    ``written``: the ids of entities whose agents this write has just saved."""
    claims = claims_with_ids(ProviderClaim.objects.filter(domain=domain).select_related("provider"))
    entities = list(Entity.objects.filter(domain=domain, card__isnull=False).select_related("card"))
    providers = {m["provider"] for e in entities for m in e.mcps if m["provider"]}
    keys = dict(
        Provider.objects.filter(provider_id__in=providers).values_list("provider_id", "public_key")
    )
    for entity in entities:
        flagged = entity.card.flagged
        before = (entity.verification_level, [m["verification"] for m in entity.mcps])
        for entry in entity.mcps:
            entry["verification"] = verification.entry_verify(
                entry, domain=domain, claims=claims, keys=keys, flagged=flagged
            )
        entity.flagged = flagged
        entity.verification_level = verification.entity_level(entity.mcps)
        # The claims this card confirms are the entity's sources now: their facts stay.
        claim_sources_sync(entity, [c for c in claims if _covered(c, [entity])], level=2)
        facts_apply(entity)
        _index(entity)
        after = (entity.verification_level, [m["verification"] for m in entity.mcps])
        agent = Agent.objects.get(pk=entity.pk)
        if (agent.name, agent.description) != (entity.name, _description(entity)):
            core.agent_update(
                agent=agent, name=entity.name, description=_description(entity), writer=WRITER
            )
        elif before != after and entity.pk not in written:
            # What the registry says about it changed: the change feed shows the agent.
            core.agent_update(agent=agent, writer=WRITER)
    claims_sync(claims, entities)


def _covered(claim: ProviderClaim, entities: list[Entity]) -> bool:
    for entity in entities:
        for entry in entity.mcps:
            if entry["provider"] == claim.provider_id_text and entry["entity_id"] in (
                None,
                claim.entity_id,
            ):
                return True
    return False


def claim_mcps(claim: ProviderClaim) -> list[dict]:
    capabilities = list(claim.capabilities or claim.provider.capabilities or [])
    return [
        {
            "provider": claim.provider_id_text,
            "endpoint": claim.provider.endpoint,
            "entity_id": claim.entity_id,
            "capabilities": capabilities,
            "priority": None,
            "order": 100,
            "auth_required": False,
            "signature": None,
            "verification": verification.claim_verification(),
        }
    ]


def claims_sync(claims: list[ProviderClaim], card_entities: list[Entity] | None = None) -> None:
    """Each claim no card of its domain confirms is an entity of its own at level 0; a claim a
    card confirms is no entity of its own (the card's entity is at level 2)."""
    for claim in claims:
        key = f"provider:{claim.provider_id_text}/{claim.entity_id}"
        entity = Entity.objects.filter(key=key).first()
        if claim.domain:
            entities = card_entities
            if entities is None:
                entities = list(Entity.objects.filter(domain=claim.domain, card__isnull=False))
            if _covered(claim, entities):
                if entity is not None:
                    agent_delete(agent=Agent.objects.get(pk=entity.pk))
                continue
        mcps = claim_mcps(claim)
        is_new = entity is None
        entity = entity or Entity(key=key)
        entity.domain, entity.path, entity.format = claim.domain, "", CLAIM_FORMAT
        entity.mcps, entity.verification_level, entity.flagged = mcps, 0, False
        own = EntitySource(kind=EntitySource.Kind.CLAIM, values=claim_values(claim))
        facts_apply(entity, [own])
        entity.agent = _agent_write(
            None if is_new else entity, entity, mcps, claim.provider.owner, CLAIM_SOURCE
        )
        entity.save()
        claim_sources_sync(entity, [claim], level=0)
        _index(entity)


def claim_entities_remove(claims: list[ProviderClaim]) -> None:
    keys = [f"provider:{c.provider_id_text}/{c.entity_id}" for c in claims]
    for entity in Entity.objects.filter(key__in=keys):
        agent_delete(agent=Agent.objects.get(pk=entity.pk))
