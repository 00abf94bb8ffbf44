"""Reads of the entities app: an entity and its JSON, resolution by text, by domain, nearby.

Resolution (``/v1/resolve``) reads ``EntityTerm`` (one indexed row per word of an entity,
with its weight): the score of an entity is the sum of the weights of the query words it
has (name 3, category or city 2, description or domain 1), so the same query runs on
PostgreSQL and SQLite. ``confidence`` = score / (3 * query words): 1.0 when every word is in
the name; each word brings its best 200 entities to be scored (``entities_resolve``), so a
common word costs what a rare one does. Nearby (``/v1/nearby``) reads a bounding box on
the indexed ``(lat, lng)``, then the exact great-circle distance (haversine) of the few
rows in it.
"""

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from protocols.entities.cards.hours import open_now as hours_open_now
from protocols.entities.cards.sources import sources_document
from protocols.entities.cards.text import NAME_WEIGHT, capability_term, fold, query_words
from protocols.entities.cards.validation import CardReport
from protocols.entities.models import Entity, EntityTerm
from protocols.entities.servers.server_cards import server_card_document, server_cards_by_endpoint
from registry.agents.serializers import registry_url

EARTH_RADIUS_M = 6_371_008.8
# How many entities each query word of /v1/resolve brings to be scored, at the least.
CANDIDATES_PER_WORD = 200
METERS_PER_DEGREE = 111_320.0


def _location(entity: Entity) -> dict:
    coordinates = None
    if entity.lat is not None and entity.lng is not None:
        coordinates = {"lat": entity.lat, "lng": entity.lng}
    return {
        "address": entity.address or None,
        "city": entity.city or None,
        "postal_code": entity.postal_code or None,
        "country": entity.country or None,
        "coordinates": coordinates,
    }


def server_cards_of(entities: list[Entity]) -> dict:
    """endpoint -> server card row, for all the entities' MCP entries (one query)."""
    return server_cards_by_endpoint([m["endpoint"] for e in entities for m in e.mcps])


def mcps_document(entity: Entity, cards: dict | None = None) -> list[dict]:
    """The entity's MCP entries, each with its ``serverCard`` (null when never read)."""
    if cards is None:
        cards = server_cards_of([entity])
    return [
        {
            **{k: v for k, v in m.items() if k != "signature"},
            "serverCard": server_card_document(cards.get(m["endpoint"])),
        }
        for m in entity.mcps
    ]


def entity_open_now(entity: Entity, at: datetime | None = None) -> bool | None:
    return hours_open_now(entity.hours, entity.time_zone, at or timezone.now())


def entity_summary(entity: Entity, at: datetime | None = None) -> dict:
    """The ``entity`` of a resolution result (EDP §5), registry-enriched: the facts chosen
    from its sources (``protocols.entities.cards.facts``)."""
    return {
        "id": str(entity.pk),
        "name": entity.name,
        "domain": entity.domain or None,
        "path": entity.path or None,
        "category": entity.category or None,
        "description": entity.description or None,
        "location": _location(entity),
        "phone": entity.phone or None,
        "website": entity.website or None,
        "same_as": entity.same_as,
        "hours": entity.hours or None,
        "timezone": entity.time_zone or None,
        "openNow": entity_open_now(entity, at),
        "format": entity.format,
        "verification_level": entity.verification_level,
        "flagged": entity.flagged,
    }


def report_document(report: CardReport) -> dict:
    """What ``POST /entities/validate`` answers for a valid card: what it says, and the
    warnings (a shape read though the format's spec gives another)."""
    document = {"valid": True, "format": report.format, "domain": report.domain}
    document["entities"] = [
        {
            "name": e.name,
            "path": e.path or None,
            "category": e.category or None,
            "location": {"city": e.city or None, "lat": e.lat, "lng": e.lng},
            "mcps": [
                {
                    "provider": m.provider or None,
                    "endpoint": m.endpoint,
                    "capabilities": m.capabilities,
                    "priority": m.priority,
                    "order": m.order,
                }
                for m in e.mcps
            ],
        }
        for e in report.entities
    ]
    if report.warnings:
        document["warnings"] = [w.as_dict() for w in report.warnings]
    return document


def entity_document(entity: Entity, *, sources: bool = False) -> dict:
    """An entity as ``POST /entities``, ``GET /entities/<id>`` and
    ``/v1/resolve/domain/<d>`` answer it."""
    document = entity_summary(entity)
    card = entity.card
    document.update(
        {
            "mcps": mcps_document(entity),
            "contact": entity.contact or None,
            "card_url": card.url if card else None,
            "status": card.status if card else None,
            "fetched_at": card.fetched_at.isoformat() if card and card.fetched_at else None,
            "agent_url": registry_url(f"/agents/{entity.pk}"),
            "updated_at": entity.updated_at.isoformat(),
        }
    )
    if sources:
        document["sources"] = sources_document(entity)
    return document


def result_items(entities: list[Entity], extras: list[dict], *, sources: bool = False) -> list:
    """Resolution results: each entity with its MCP entries (their server cards read in one
    query) and its extra members (confidence, distance_m)."""
    cards = server_cards_of(entities)
    now = timezone.now()
    items = []
    for entity, extra in zip(entities, extras, strict=True):
        item = {
            "entity": entity_summary(entity, now),
            "mcps": mcps_document(entity, cards),
            **extra,
        }
        if sources:
            item["sources"] = sources_document(entity)
        items.append(item)
    return items


def entity_queryset() -> QuerySet[Entity]:
    """The entities the public reads show: publicly listed (registry.agents.listing)."""
    return Entity.objects.select_related("card").filter(listed=True)


def _with_capabilities(queryset: QuerySet, capabilities: list[str], ref: str) -> QuerySet:
    for name in capabilities:
        queryset = queryset.filter(
            Exists(EntityTerm.objects.filter(entity_id=OuterRef(ref), term=capability_term(name)))
        )
    return queryset


def _box(lat: float, lng: float, radius_m: float) -> tuple[tuple, list[tuple]]:
    """The latitude range and the longitude ranges (two across the antimeridian)."""
    dlat = radius_m / METERS_PER_DEGREE
    cos = math.cos(math.radians(lat))
    dlng = 360.0 if cos < 1e-6 else min(radius_m / (METERS_PER_DEGREE * cos), 360.0)
    lat_range = (max(lat - dlat, -90.0), min(lat + dlat, 90.0))
    low, high = lng - dlng, lng + dlng
    if dlng >= 180:
        return lat_range, [(-180.0, 180.0)]
    if low < -180:
        return lat_range, [(low + 360, 180.0), (-180.0, high)]
    if high > 180:
        return lat_range, [(low, 180.0), (-180.0, high - 360)]
    return lat_range, [(low, high)]


def distance_m(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlmb = phi2 - phi1, math.radians(lng2 - lng1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))


def _in_box(queryset: QuerySet, lat: float, lng: float, radius_m: float, prefix: str = ""):
    lat_range, lng_ranges = _box(lat, lng, radius_m)
    found = []
    for lng_range in lng_ranges:
        found.append(
            queryset.filter(**{f"{prefix}lat__range": lat_range, f"{prefix}lng__range": lng_range})
        )
    return found


def entities_open_only(ranked: list[tuple]) -> list[tuple]:
    """The (rank, entity id) pairs of the entities open now, in their order: only entities
    with hours are read, their opening computed in each one's time zone."""
    ids = [pk for _, pk in ranked]
    rows = (
        Entity.objects.filter(pk__in=ids).exclude(hours=[]).values_list("pk", "hours", "time_zone")
    )
    now = timezone.now()
    is_open = {str(pk) for pk, hours, zone in rows if hours_open_now(hours, zone, now)}
    return [(rank, pk) for rank, pk in ranked if str(pk) in is_open]


@dataclass(frozen=True)
class Near:
    entity: Entity
    distance_m: float


def entities_nearby(
    *,
    lat: float,
    lng: float,
    radius_m: float,
    capabilities: list[str],
    min_verification: int = 0,
    limit: int = 20,
    open_now: bool = False,
) -> list[Near]:
    """Entities within ``radius_m`` of the point, nearest first (with ``open_now``, only
    those whose hours say they are open now)."""
    base = Entity.objects.filter(verification_level__gte=min_verification)
    base = _with_capabilities(base, capabilities, "pk")
    candidates = []
    for queryset in _in_box(base, lat, lng, radius_m):
        for pk, e_lat, e_lng in queryset.values_list("pk", "lat", "lng"):
            distance = distance_m(lat, lng, e_lat, e_lng)
            if distance <= radius_m:
                candidates.append((distance, str(pk)))
    candidates.sort()
    if open_now:
        candidates = entities_open_only(candidates)
    chosen = candidates[:limit]
    entities = entity_queryset().in_bulk([pk for _, pk in chosen])
    by_text = {str(pk): entity for pk, entity in entities.items()}
    return [Near(by_text[pk], round(d, 1)) for d, pk in chosen if pk in by_text]


@dataclass(frozen=True)
class Resolved:
    entity: Entity
    confidence: float


def _location_filter(queryset: QuerySet, location: str, prefix: str = "entity__") -> list:
    """``location``: "lat,lng" (within 25 km) or a city name; ``prefix``: the path from the
    queryset's rows to the entity's fields."""
    parts = location.split(",")
    if len(parts) == 2:
        try:
            lat, lng = float(parts[0]), float(parts[1])
        except ValueError:
            pass
        else:
            return _in_box(queryset, lat, lng, 25_000, prefix=prefix)
    return [queryset.filter(**{f"{prefix}city_key": fold(location.strip())[:100]})]


def entities_filtered(
    *, location: str = "", capabilities: list[str] | None = None, min_verification: int = 0
) -> QuerySet[Entity]:
    """The entities that ``/v1/resolve``'s filters keep, whatever the words."""
    entities = Entity.objects.filter(verification_level__gte=min_verification)
    entities = _with_capabilities(entities, capabilities or [], "pk")
    if not location.strip():
        return entities
    parts = _location_filter(entities, location, prefix="")
    found = parts[0]
    for part in parts[1:]:  # (two longitude ranges across the antimeridian)
        found = found | part
    return found


def entities_resolve(
    *,
    query: str,
    location: str = "",
    capabilities: list[str] | None = None,
    min_verification: int = 0,
    limit: int = 20,
    open_now: bool = False,
) -> list[Resolved]:
    """Entities whose words match the query, best score first.

    Each query word brings its best ``CANDIDATES_PER_WORD`` entities (those that pass the
    filters, by the weight of the field the word is in: one index range each), and only
    those are scored: the cost does not grow with the number of entities a common word
    matches. Exact for one word; with several, an entity in no word's best is left out."""
    words = query_words(query)
    if not words:
        return []
    terms = EntityTerm.objects.filter(entity__verification_level__gte=min_verification)
    terms = _with_capabilities(terms, capabilities or [], "entity_id")
    parts = _location_filter(terms, location) if location.strip() else [terms]
    per_word = max(CANDIDATES_PER_WORD, 5 * limit)
    found: dict = {}
    for word in words:
        for part in parts:
            best = part.filter(term=word).order_by("-weight", "entity_id")
            found.update(best.values_list("entity_id", "weight")[:per_word])
    scores: dict[str, int] = defaultdict(int)
    if len(words) == 1:
        rows = found.items()  # one word: its weight is the score
    else:
        rows = EntityTerm.objects.filter(entity_id__in=found, term__in=words).values_list(
            "entity_id", "weight"
        )
    for entity_id, weight in rows:
        scores[str(entity_id)] += weight
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    if open_now:
        best = [
            (pk, score) for score, pk in entities_open_only([(score, pk) for pk, score in best])
        ]
    best = best[:limit]
    entities = {str(pk): e for pk, e in entity_queryset().in_bulk([pk for pk, _ in best]).items()}
    full = NAME_WEIGHT * len(words)
    return [
        Resolved(entities[pk], round(min(1.0, score / full), 3))
        for pk, score in best
        if pk in entities
    ]


def domain_entities(domain: str, path: str | None = None) -> list[Entity]:
    """A domain's entities, its card's first (in path order), then providers' claims."""
    queryset = entity_queryset().filter(domain=domain)
    if path is not None:
        queryset = queryset.filter(path=path, card__isnull=False)
    return sorted(queryset, key=lambda e: (e.card_id is None, e.path, e.key))
