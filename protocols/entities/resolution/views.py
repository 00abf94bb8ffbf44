"""The entities app's page for people: ``/browse/entities/<id>``, an entity's facts with the
source each came from, its MCP servers with their tools and verification, and a map link.
Thin, like the web app's pages: the same read limit, autoescaped templates, no script."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from protocols.entities.cards.facts import facts_choose, source_order
from protocols.entities.models import EntitySource
from protocols.entities.registration import selectors
from protocols.entities.resolution.pages import LEVELS
from registry.access.throttles import client_ip, window_allows
from registry.http.params import parse_uuid
from registry.http.problems import ProblemError, page_answer

FACT_LABELS = [
    ("description", "Description"),
    ("category", "Category"),
    ("address", "Address"),
    ("city", "City"),
    ("postal_code", "Postal code"),
    ("country", "Country"),
    ("coordinates", "Coordinates"),
    ("phone", "Phone"),
    ("email", "Email"),
    ("hours", "Opening hours"),
    ("website", "Website"),
    ("same_as", "Elsewhere"),
]
SOURCE_LABELS = {"card": "its card", "website": "its website", "provider-claim": "a provider"}


def _context(request: HttpRequest, **extra) -> dict:
    return {"registry_name": settings.REGISTRY_NAME, "request": request, **extra}


def _facts(entity, sources: list[EntitySource]) -> list[dict]:
    """Each shown fact with the source that gave it (the same choice as the API's)."""
    rows = []
    for name, label in FACT_LABELS:
        giver = next((s for s in sources if name in (s.values or {})), None)
        if giver is None:
            continue
        value = facts_choose([giver])[name]
        rows.append(
            {
                "name": name,
                "label": label,
                "value": value,
                "source": SOURCE_LABELS.get(giver.kind, giver.kind),
                "source_detail": giver.key.partition("/")[0] if giver.key else "",
            }
        )
    return rows


def _map_link(entity) -> str | None:
    if entity.lat is None or entity.lng is None:
        return None
    lat, lng = f"{entity.lat:.6f}", f"{entity.lng:.6f}"
    return f"https://www.openstreetmap.org/?mlat={lat}&mlon={lng}#map=18/{lat}/{lng}"


@require_safe
def entity_page(request: HttpRequest, entity_id: str) -> HttpResponse:
    wait = window_allows("read", f"ip:{client_ip(request)}", settings.RATE_LIMIT_READ)
    if wait is not None:
        response = page_answer(render(request, "web/429.html", _context(request), status=429))
        response["Retry-After"] = str(int(wait + 0.999))
        return response
    entity = None
    try:
        pk = parse_uuid(entity_id, "entity")
    except ProblemError:  # a malformed id names no entity
        pk = None
    if pk is not None:
        entity = selectors.entity_queryset().filter(pk=pk).first()
    if entity is None:
        context = _context(request, agent_id=entity_id)
        return page_answer(render(request, "web/404.html", context, status=404))
    sources = sorted(EntitySource.objects.filter(entity=entity), key=source_order)
    cards = selectors.server_cards_of([entity])
    mcps = selectors.mcps_document(entity, cards)
    return render(
        request,
        "entities/entity.html",
        _context(
            request,
            entity=entity,
            facts=_facts(entity, sources),
            sources=sources,
            source_labels=SOURCE_LABELS,
            mcps=mcps,
            open_now=selectors.entity_open_now(entity),
            level_text=LEVELS[entity.verification_level],
            map_link=_map_link(entity),
        ),
    )
