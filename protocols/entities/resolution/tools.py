"""``resolve_entity``, the EDP resolution as a tool for model clients (registered in the core's
tools, ``registry.extensions.Tool``, which the MCP face lists): a business found by its name
or words (``/v1/resolve``) or near a point (``/v1/nearby``), answered with the MCP servers that
act for it, each with its URL and transport."""

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from protocols.entities.registration import selectors
from protocols.entities.resolution.params import invalid
from protocols.entities.resolution.search import entities_search
from registry.discovery.query import mode_parse
from registry.extensions import Tool

RADIUS_DEFAULT_M = 1000
RADIUS_MAX_M = 100_000
# /v1/resolve's location filter: a box of 25 km around the point.
RADIUS_WITH_QUERY_M = 25_000
LIMIT_DEFAULT, LIMIT_MAX = 10, 100

DESCRIPTION = (
    "Find a business (a restaurant, a shop, a practice …) and the MCP servers that act for "
    "it: book, order, ask. Give its name or words for what it is (query), or a point "
    "(lat, lng, radius in metres), or both; narrow by city, by capabilities its servers "
    "offer, by minVerification (0 a provider's claim, 1 the domain's own card, 2 both agree). "
    "Returns each business (name, domain, category, location, hours) with mcpServers: the "
    "url and transport of each MCP server to connect to. To find A2A agents rather than "
    "businesses, use discover_agents.\n"
    'Example: {"query": "italian restaurant", "city": "Paris", '
    '"capabilities": ["reservations"]} or {"lat": 48.853, "lng": 2.333, "radius": 500}.'
)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class McpServer(_Open):
    url: str
    transport: Any = None
    capabilities: list[str]


class EntityResolved(_Open):
    entity: dict[str, Any]
    mcpServers: list[McpServer]


class EntitiesResolved(_Open):
    """What resolve_entity answers: the businesses, best (or nearest) first."""

    results: list[EntityResolved]


def _server(entry: dict) -> dict:
    card = entry.get("serverCard") or {}
    return {
        "url": entry["endpoint"],
        "transport": card.get("transport"),
        "capabilities": entry.get("capabilities") or [],
        "provider": entry.get("provider"),
        "verification": entry.get("verification"),
        "tools": card.get("tools"),
    }


def _in_range(name: str, value: float | None, low: float, high: float, default: float) -> float:
    if value is None:
        return default
    if not low <= value <= high:
        raise invalid(name, f"must be between {low:g} and {high:g}")
    return value


def _point(lat: float | None, lng: float | None) -> tuple[float, float] | None:
    if lat is None and lng is None:
        return None
    if lat is None or lng is None:
        missing = "lat" if lat is None else "lng"
        raise invalid(missing, f"is required with {'lng' if missing == 'lat' else 'lat'}")
    return _in_range("lat", lat, -90, 90, 0), _in_range("lng", lng, -180, 180, 0)


def resolve_entity(
    query: Annotated[
        str | None,
        Field(
            description="The business's name, or words for what it is or does: "
            "'Demo Trattoria', 'italian restaurant', 'dentist open on saturday'."
        ),
    ] = None,
    lat: Annotated[float | None, Field(description="Latitude of the point to search near.")] = None,
    lng: Annotated[float | None, Field(description="Longitude, with lat.")] = None,
    radius: Annotated[
        float | None,
        Field(
            description="Metres around lat/lng: default 1000, at most 100000 (25000 with query)."
        ),
    ] = None,
    city: Annotated[
        str | None, Field(description="Only businesses in this city (with query).")
    ] = None,
    capabilities: Annotated[
        list[str] | None,
        Field(
            description="Only businesses whose MCP servers offer all of these, e.g. "
            "['reservations'] (capabilities, or tools their server cards list)."
        ),
    ] = None,
    minVerification: Annotated[
        int | None,
        Field(description="0 (default), 1 or 2: how surely the servers are the business's own."),
    ] = None,
    openNow: Annotated[
        bool | None, Field(description="Only businesses whose opening hours say open now.")
    ] = None,
    mode: Annotated[
        str | None,
        Field(
            description="How query finds businesses: hybrid (default), semantic (by "
            "meaning) or keyword (by words)."
        ),
    ] = None,
    limit: Annotated[int | None, Field(description="1 to 100 businesses (default 10).")] = None,
) -> tuple[str, dict[str, Any]]:
    """The businesses that answer the arguments, with their MCP servers."""
    point = _point(lat, lng)
    text = (query or "").strip()
    if city is not None and not text:
        raise invalid("city", "narrows a query: give query too")
    if not text and point is None:
        raise invalid("query", "is required (a name or words), or lat and lng")
    filters = {
        "capabilities": [c.strip() for c in capabilities or [] if c.strip()],
        "min_verification": int(_in_range("minVerification", minVerification, 0, 2, 0)),
        "limit": int(_in_range("limit", limit, 1, LIMIT_MAX, LIMIT_DEFAULT)),
        "open_now": bool(openNow),
    }
    if len(filters["capabilities"]) > 20:
        raise invalid("capabilities", "may list 20 capabilities at the most")
    if text:
        radius_m = _in_range("radius", radius, 1, RADIUS_WITH_QUERY_M, RADIUS_WITH_QUERY_M)
        location = city.strip() if city else (f"{point[0]},{point[1]}" if point else "")
        found = entities_search(mode=mode_parse(mode), query=text, location=location, **filters)
        entities = [r.entity for r in found]
        extras = [{"confidence": r.confidence} for r in found]
        if point is not None:
            extras = [
                {**extra, "distance_m": round(_distance(point, e), 1)}
                for e, extra in zip(entities, extras, strict=True)
            ]
            kept = [i for i, extra in enumerate(extras) if extra["distance_m"] <= radius_m]
            entities, extras = [entities[i] for i in kept], [extras[i] for i in kept]
    else:
        if mode is not None:
            mode_parse(mode)
        radius_m = _in_range("radius", radius, 1, RADIUS_MAX_M, RADIUS_DEFAULT_M)
        near = selectors.entities_nearby(lat=point[0], lng=point[1], radius_m=radius_m, **filters)
        entities = [n.entity for n in near]
        extras = [{"distance_m": n.distance_m} for n in near]
    results = []
    for item in selectors.result_items(entities, extras):
        servers = [_server(entry) for entry in item.pop("mcps")]
        results.append({"entity": item.pop("entity"), "mcpServers": servers, **item})
    return _sentence(text, results), {"results": results}


def _distance(point: tuple[float, float], entity) -> float:
    if entity.lat is None or entity.lng is None:
        return float("inf")
    return selectors.distance_m(point[0], point[1], entity.lat, entity.lng)


def _sentence(text: str, results: list[dict]) -> str:
    asked = f" for “{text}”" if text else " near that point"
    if not results:
        return f"No businesses found{asked}."
    named = "; ".join(
        f"{r['entity']['name']} (MCP: {', '.join(s['url'] for s in r['mcpServers']) or 'none'})"
        for r in results[:5]
    )
    plural = "business" if len(results) == 1 else "businesses"
    return f"Found {len(results)} {plural}{asked}: {named}{' …' if len(results) > 5 else ''}."


RESOLVE_ENTITY = Tool("resolve_entity", resolve_entity, DESCRIPTION, EntitiesResolved)
