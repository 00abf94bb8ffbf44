"""Bulk storage of entity cards (demo data, imports, benchmarks) and of a provider
registration's new claims: the same rows as one by one, with bulk inserts, the core's
agents through ``registry.agents.services.agents_bulk_create``."""

import hashlib

from django.db import transaction
from django.utils import timezone

from protocols.entities.cards import verification
from protocols.entities.cards.sources import claim_key, claim_values, facts_apply
from protocols.entities.cards.validation import card_validate
from protocols.entities.models import Entity, EntityCard, EntitySource, Provider, ProviderClaim
from protocols.entities.registration.index import entity_index_rows, terms_insert
from protocols.entities.registration.services import (
    CARD_SOURCE,
    CLAIM_FORMAT,
    CLAIM_SOURCE,
    WRITER,
    agent_input,
    claim_mcps,
    crawl_due_at,
    entity_fill,
    entity_tools,
)
from registry.agents import services as core
from registry.discovery.filter_keys import filter_keys_at_end
from registry.discovery.models import AgentFacet
from registry.http.jsonutil import Problem, canonical_dumps
from registry.http.problems import ProblemError
from registry.signals import agents_written_send, writes_batched


def cards_bulk_store(*, owner: str, cards: list[tuple[str, dict]]) -> int:
    """Store ``(domain, card)`` pairs whose domain the registry does not know yet, as if each
    domain had served its card (no fetch: the card's domain must equal the given one).
    One invalid card refuses the batch. Returns the number of entities created."""
    prepared = []
    for index, (domain, card) in enumerate(cards):
        report = card_validate(card, host=domain)
        if not report.ok:
            raise ProblemError(
                400,
                "invalid-entity-card",
                f"Card {index} is invalid: {report.errors[0].path} {report.errors[0].message}.",
                [Problem(f"cards[{index}].{p.path}", p.message) for p in report.errors],
            )
        prepared.append((domain, card, report))
    known = set(
        EntityCard.objects.filter(domain__in=[d for d, _, _ in prepared]).values_list(
            "domain", flat=True
        )
    )
    fresh, seen = [], set()
    for entry in prepared:
        if entry[0] not in known and entry[0] not in seen:
            seen.add(entry[0])
            fresh.append(entry)
    providers = {m.provider for _, _, r in fresh for e in r.entities for m in e.mcps}
    keys = dict(
        Provider.objects.filter(provider_id__in=providers).values_list("provider_id", "public_key")
    )
    now = timezone.now()
    with transaction.atomic(), filter_keys_at_end(), writes_batched():
        rows, entities, inputs, sources = [], [], [], []
        for domain, card, report in fresh:
            body = canonical_dumps(card)
            card_row = EntityCard(
                domain=domain,
                authority=domain,
                url=f"https://{domain}/.well-known/entity-card.json",
                format=report.format,
                body=body,
                sha256=hashlib.sha256(body).hexdigest(),
                owner=owner,
                fetched_at=now,
                next_crawl_at=crawl_due_at(domain, now),
            )
            rows.append(card_row)
            for data in report.entities:
                entity = Entity(card=card_row, key=f"{domain}{data.path}", domain=domain)
                entity.path, entity.format = data.path, report.format
                source = entity_fill(entity, data, report.format)
                source.url, source.read_at = card_row.url, now
                sources.append(source)
                for entry in entity.mcps:
                    entry["verification"] = verification.entry_verify(
                        entry, domain=domain, claims=[], keys=keys, flagged=False
                    )
                entity.verification_level = verification.entity_level(entity.mcps)
                entities.append(entity)
                inputs.append(agent_input(entity, entity.mcps))
        EntityCard.objects.bulk_create(rows, batch_size=1000)
        agents = core.agents_bulk_create(
            owner=owner, items=inputs, source=CARD_SOURCE, writer=WRITER
        )
        terms, facts = [], []
        for entity, agent in zip(entities, agents, strict=True):
            entity.agent = agent
            entity.card_id = entity.card.pk
            entity_terms, entity_facts = entity_index_rows(entity)
            terms += entity_terms
            facts += entity_facts
        Entity.objects.bulk_create(entities, batch_size=1000)
        for entity, source in zip(entities, sources, strict=True):
            source.entity = entity
        EntitySource.objects.bulk_create(sources, batch_size=1000)
        terms_insert(terms)
        AgentFacet.objects.bulk_create(facts, batch_size=2000)
        agents_written_send([agent.pk for agent in agents])  # with their entity member
    return len(entities)


def claims_bulk_store(*, owner: str, claims: list[ProviderClaim]) -> int:
    """The entities of new claims (``claims_with_ids``) that no card of their domain lists
    and that have no entity yet: what ``claims_sync`` writes for each, in bulk inserts.
    Returns the number of entities created."""
    now = timezone.now()
    tools_of: dict[str, list[str]] = {}  # a provider's claims share its MCP endpoint
    with transaction.atomic(), filter_keys_at_end(), writes_batched():
        entities, inputs, sources = [], [], []
        for claim in claims:
            mcps = claim_mcps(claim)
            entity = Entity(key=f"provider:{claim.provider_id_text}/{claim.entity_id}")
            entity.domain, entity.path, entity.format = claim.domain, "", CLAIM_FORMAT
            entity.mcps, entity.verification_level, entity.flagged = mcps, 0, False
            source = EntitySource(
                kind=EntitySource.Kind.CLAIM,
                key=claim_key(claim),
                url=claim.provider.endpoint[:2048],
                values=claim_values(claim),
                level=0,
                read_at=now,
            )
            facts_apply(entity, [source])
            endpoint = mcps[0]["endpoint"]
            if endpoint not in tools_of:
                tools_of[endpoint] = entity_tools(mcps)
            entities.append((entity, tools_of[endpoint]))
            inputs.append(agent_input(entity, mcps, tools_of[endpoint]))
            sources.append(source)
        agents = core.agents_bulk_create(
            owner=owner, items=inputs, source=CLAIM_SOURCE, writer=WRITER
        )
        terms, facts = [], []
        for (entity, tools), agent in zip(entities, agents, strict=True):
            entity.agent = agent
            entity_terms, entity_facts = entity_index_rows(entity, tools)
            terms += entity_terms
            facts += entity_facts
        Entity.objects.bulk_create([e for e, _ in entities], batch_size=1000)
        for (entity, _), source in zip(entities, sources, strict=True):
            source.entity = entity
        EntitySource.objects.bulk_create(sources, batch_size=1000)
        terms_insert(terms)
        AgentFacet.objects.bulk_create(facts, batch_size=2000)
        agents_written_send([agent.pk for agent in agents])  # with their entity member
    return len(entities)
