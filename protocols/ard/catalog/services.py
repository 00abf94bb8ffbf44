"""Writes of the ARD app: the agents' catalog entries, kept at write time (``agents_written``),
and the catalog sources an admin adds.

An entry's identifier is chosen once and kept: a publisher's ``urn:air:`` identifier (a
crawled entry's) byte-exact when no other entry holds it, else
``urn:air:<registry host>:agent:<agent id>``. A deleted agent's entry stays, unlisted, so
its identifier is never given to another agent.
"""

import uuid
from collections.abc import Iterable

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.utils import timezone

from protocols.ard.catalog.entries import (
    URN,
    cards_read,
    default_identifier,
    dumps,
    entry_data,
    nested_types,
    urn_publisher,
)
from protocols.ard.models import CatalogEntry, CatalogSource
from registry import extensions
from registry.agents.models import Agent, Endpoint
from registry.agents.selectors import agents_by_id
from registry.fastpath.copy import objects_insert


def _trust(agent: Agent) -> dict:
    provenance = getattr(agent, "a2a_provenance", None)
    try:  # the core's moderation row, read with the agent
        publisher = agent.moderation.verified_publisher
    except ObjectDoesNotExist:
        publisher = False
    if provenance is None:
        return {"verifiedPublisher": publisher}
    return {
        "verifiedDomain": provenance.verified_domain or None,
        "signature": provenance.signature,
        "verifiedPublisher": publisher,
    }


def _publisher_identifier(agent: Agent) -> str | None:
    provenance = getattr(agent, "ard_provenance", None)
    if provenance is not None and URN.match(provenance.identifier):
        return provenance.identifier
    return None


def entries_build(agent_ids: Iterable[uuid.UUID]) -> None:
    """Build the catalog entries of these agents (gone ones: unlisted), in bulk, inside the
    write's transaction."""
    ids = list(agent_ids)
    if not ids:
        return
    agents = agents_by_id(ids)
    existing = {e.agent_uuid: e for e in CatalogEntry.objects.filter(agent_uuid__in=ids)}
    gone = [pk for pk in ids if pk not in agents]
    if gone:
        CatalogEntry.objects.filter(agent_uuid__in=gone).update(listed=False)
    cards = cards_read(list(agents))
    served = extensions.served_cards.get(Endpoint.Protocol.MCP)
    servers = served.read(list(agents.values())) if served is not None else {}
    wanted = {pk: _publisher_identifier(a) for pk, a in agents.items() if pk not in existing}
    taken = set(
        CatalogEntry.objects.filter(identifier__in=[i for i in wanted.values() if i]).values_list(
            "identifier", flat=True
        )
    )
    new, changed = [], []
    for pk, agent in agents.items():
        entry = existing.get(pk)
        if entry is None:
            identifier = wanted[pk]
            if identifier is None or identifier in taken:
                identifier = default_identifier(pk)
            taken.add(identifier)
            entry = CatalogEntry(identifier=identifier, agent_uuid=pk)
            new.append(entry)
        else:
            changed.append(entry)
        data = entry_data(agent, entry.identifier, cards.get(pk), _trust(agent), servers)
        provenance = getattr(agent, "ard_provenance", None)
        entry.listed = (
            data is not None
            and agent.status != Agent.Status.RETIRED
            and agent.duplicate_of is None  # a copy: its canonical copy is listed
            and agent.listed  # registry.agents.listing: moderation's gate
            and not (provenance is not None and provenance.retired)
        )
        entry.type = data["type"] if data else ""
        entry.types = nested_types(data) if data else ""
        entry.publisher = urn_publisher(entry.identifier)
        entry.body = dumps(data) if data else b""
        entry.updated_at = timezone.now()
    if new:
        objects_insert(new, ignore_conflicts=True)
        # A concurrent write took a publisher's identifier first: ours gets the default one.
        stored = set(
            CatalogEntry.objects.filter(agent_uuid__in=[e.agent_uuid for e in new]).values_list(
                "agent_uuid", flat=True
            )
        )
        for entry in new:
            if entry.agent_uuid not in stored:
                entry.identifier = default_identifier(entry.agent_uuid)
                entry.publisher = urn_publisher(entry.identifier)
                entry.save()
    if changed:
        CatalogEntry.objects.bulk_update(
            changed, ["listed", "type", "types", "publisher", "body", "updated_at"], batch_size=500
        )


def entries_rebuild() -> int:
    """Build every agent's entry again (after a change of REGISTRY_BASE_URL, say)."""
    count = 0
    ids = list(Agent.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), 1000):
        with transaction.atomic():
            entries_build(ids[start : start + 1000])
        count += len(ids[start : start + 1000])
    return count


def source_add(*, owner: str, url: str = "", domain: str = "") -> CatalogSource:
    """A catalog to crawl (the crawl itself is a job: ``ard.tasks.ard_crawl``)."""
    source, _ = CatalogSource.objects.get_or_create(
        url=url, domain=domain, defaults={"owner": owner}
    )
    return source
