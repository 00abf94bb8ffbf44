"""An entity's facts and their precedence: each shown fact comes from the best source that
gives it, so no source's facts are lost when another source confirms the entity.

Precedence, best first (``SOURCE_RANK``):

1. ``card``: the entity's own card (A2E ``entity``; an EDP 0.2 entity's name and location;
   an EDP 0.1 card gives none);
2. ``website``: the Schema.org or Open Graph markup of its website;
3. ``provider-claim``: what an EDP provider's registration says, level 2 (the domain's card
   confirms that provider) before level 0, then by provider and entity id;
4. the domain itself, for the name only.

Coordinates (``lat`` and ``lng``) are one fact: both come from the same source.
"""

import math
import re
from collections.abc import Iterable
from typing import Any

FACTS = (
    "name",
    "description",
    "category",
    "address",
    "city",
    "postal_code",
    "country",
    "coordinates",
    "phone",
    "email",
    "hours",
    "website",
    "same_as",
)
SOURCE_RANK = {"card": 0, "website": 1, "provider-claim": 2}
LIMITS = {
    "name": 200,
    "description": 2000,
    "category": 100,
    "address": 300,
    "city": 100,
    "postal_code": 20,
    "phone": 40,
    "email": 254,
    "website": 2048,
}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SPACES = re.compile(r"\s+")
_COUNTRY = re.compile(r"^[A-Z]{2}$")


def clean_text(value: Any, limit: int) -> str:
    """A string fit to store and show: no control characters, spaces collapsed, cut."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return ""
    return _SPACES.sub(" ", _CONTROL.sub("", value)).strip()[:limit]


def coordinates(lat: Any, lng: Any) -> dict | None:
    """``{"lat", "lng"}`` when both are finite numbers (or numeric strings) in range."""
    try:
        lat, lng = float(lat), float(lng)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(lat) and math.isfinite(lng)):
        return None
    if not (-90 <= lat <= 90 and -180 <= lng <= 180):
        return None
    return {"lat": lat, "lng": lng}


def country_code(value: Any) -> str:
    code = clean_text(value, 10).upper()
    return code if _COUNTRY.match(code) else ""


def values_clean(values: dict) -> dict:
    """Only known facts with a value, each within its limits."""
    clean: dict[str, Any] = {}
    for name in FACTS:
        value = values.get(name)
        if name in LIMITS:
            value = clean_text(value, LIMITS[name])
        elif name == "country":
            value = country_code(value)
        elif name == "coordinates":
            value = (
                coordinates(value.get("lat"), value.get("lng")) if isinstance(value, dict) else None
            )
        elif name in ("hours", "same_as"):
            value = value if isinstance(value, list) else []
        if value not in (None, "", [], {}):
            clean[name] = value
    return clean


def source_order(source) -> tuple:
    return (SOURCE_RANK.get(source.kind, 9), -source.level, source.key)


def facts_choose(sources: Iterable, *, domain: str = "", path: str = "") -> dict:
    """Each fact from the best source that gives it (see the module's docstring)."""
    chosen: dict[str, Any] = {}
    for source in sorted(sources, key=source_order):
        for name, value in (source.values or {}).items():
            if name in FACTS and name not in chosen:
                chosen[name] = value
    if "name" not in chosen:
        chosen["name"] = f"{domain}{path}" if domain else ""
    return chosen
