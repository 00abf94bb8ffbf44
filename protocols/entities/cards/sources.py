"""An entity's sources written, and its shown facts chosen from them
(``protocols.entities.cards.facts``).

Each source's values are stored as that source gave them (checked, cut to size), with where
and when they were read; the entity's columns (what resolution filters, finds and shows)
are the chosen facts, recomputed whenever a source changes, so a source that disappears
takes only its own values with it.
"""

from collections.abc import Iterable
from datetime import datetime

from django.utils import timezone

from protocols.entities.cards.facts import facts_choose, values_clean
from protocols.entities.cards.hours import time_zone_of
from protocols.entities.cards.text import fold
from protocols.entities.cards.validation import EDP_01, EntityData
from protocols.entities.models import Entity, EntitySource, ProviderClaim

Kind = EntitySource.Kind
# The entity's columns and the facts they show (coordinates are lat and lng).
TEXT_COLUMNS = (
    "name",
    "description",
    "category",
    "address",
    "city",
    "postal_code",
    "country",
    "phone",
    "website",
)


def card_values(data: EntityData, fmt: str) -> dict:
    """What an entity's own card says of it. An EDP 0.1 card names no entity (its
    ``EntityData.name`` is only the domain): it gives no facts."""
    if fmt == EDP_01:
        return {}
    contact = data.contact or {}
    return values_clean(
        {
            "name": data.name,
            "description": data.description,
            "category": data.category,
            "address": data.address,
            "city": data.city,
            "postal_code": data.postal_code,
            "country": data.country,
            "coordinates": {"lat": data.lat, "lng": data.lng},
            "phone": contact.get("phone"),
            "email": contact.get("email"),
        }
    )


def claim_values(claim: ProviderClaim) -> dict:
    return values_clean(
        {
            "name": claim.name,
            "category": claim.category,
            "city": claim.city,
            "country": claim.country,
            "coordinates": {"lat": claim.lat, "lng": claim.lng},
        }
    )


def claim_key(claim: ProviderClaim) -> str:
    return f"{claim.provider_id_text}/{claim.entity_id}"


def source_put(
    entity: Entity,
    kind: str,
    *,
    key: str = "",
    url: str = "",
    values: dict,
    read_at: datetime | None = None,
    level: int = 0,
    **state,
) -> EntitySource:
    """Store a source's values. Without ``read_at`` (a claim: the registry heard it when it
    was registered) the time moves only when the values change."""
    now = timezone.now()
    source = EntitySource.objects.filter(entity=entity, kind=kind, key=key).first()
    if source is None:
        source = EntitySource(entity=entity, kind=kind, key=key, read_at=read_at or now)
    elif read_at is not None or source.values != values or source.level != level:
        source.read_at = read_at or now
    source.url, source.values, source.level = url[:2048], values, level
    for name, value in state.items():
        setattr(source, name, value)
    source.save()
    return source


def claim_sources_sync(entity: Entity, claims: Iterable[ProviderClaim], level: int) -> None:
    """The entity's claim sources are exactly ``claims`` (at ``level``)."""
    keys = []
    for claim in claims:
        key = claim_key(claim)
        keys.append(key)
        source_put(
            entity,
            Kind.CLAIM,
            key=key,
            url=claim.provider.endpoint,
            values=claim_values(claim),
            level=level,
        )
    EntitySource.objects.filter(entity=entity, kind=Kind.CLAIM).exclude(key__in=keys).delete()


def facts_apply(entity: Entity, sources: Iterable[EntitySource] | None = None) -> None:
    """Set the entity's columns to the facts chosen from its sources (all of its stored
    sources unless given)."""
    if sources is None:
        sources = EntitySource.objects.filter(entity=entity)
    facts = facts_choose(sources, domain=entity.domain, path=entity.path)
    for column in TEXT_COLUMNS:
        setattr(entity, column, facts.get(column, ""))
    coordinates = facts.get("coordinates") or {}
    entity.lat, entity.lng = coordinates.get("lat"), coordinates.get("lng")
    entity.contact = {k: facts[k] for k in ("phone", "email") if k in facts}
    entity.hours = facts.get("hours", [])
    entity.same_as = facts.get("same_as", [])
    entity.city_key = fold(entity.city)[:100]
    # The zone serves openNow alone; the zone boundaries cost 33 MiB in a process that looks
    # one up, so only entities with hours (read by the enrichment job) look theirs up.
    entity.time_zone = time_zone_of(entity.lat, entity.lng, entity.country) if entity.hours else ""


def sources_document(entity: Entity) -> list[dict]:
    """``sources`` of the answers (``?sources=true``): every source's values, best first."""
    from protocols.entities.cards.facts import source_order

    rows = sorted(EntitySource.objects.filter(entity=entity), key=source_order)
    documents = []
    for source in rows:
        document = {
            "kind": source.kind,
            "url": source.url or None,
            "readAt": source.read_at.isoformat(),
            "values": source.values,
        }
        if source.kind == Kind.CLAIM:
            provider, _, entity_id = source.key.partition("/")
            document.update(
                {"provider": provider, "entityId": entity_id, "verificationLevel": source.level}
            )
        if source.status:
            document["status"] = source.status
            if source.detail:
                document["detail"] = source.detail
        documents.append(document)
    return documents
