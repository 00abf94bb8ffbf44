"""Entity cards (A2E v0.1, EDP v0.1 and v0.2) and EDP provider registrations: which format a
document is, whether it is valid, and what it says, with every problem at its path.

The JSON Schemas in ``entities/schemas/`` are the registry's own, written from the two
specifications' field tables; the rules a schema cannot say are checked here: https
endpoints with a host, EDP ``provider:capability`` namespacing, unique EDP 0.2 paths, a
domain that is a host name and, when the host that served the card is known, equal to it.
"""

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry.http.jsonutil import Problem, join_path
from registry.outbound.hosts import InvalidHost, domain_parse, https_url_problem

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

# jsonschema is imported where a document is checked: a web worker serving reads never
# needs it.

A2E = "a2e-0.1"
EDP_01 = "edp-0.1"
EDP_02 = "edp-0.2"
FORMATS = (A2E, EDP_01, EDP_02)
PROVIDER_REGISTRATION = "edp-provider-registration"

_SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
_NAMESPACED = re.compile(r"^[a-z0-9_-]+:[A-Za-z0-9_.-]+$")
# What "no priority" means: A2E's lowest preference (its numbers start at 1, lower is
# better), EDP's default 0 (higher is better).
A2E_DEFAULT_PRIORITY = 100
EDP_DEFAULT_PRIORITY = 0


@dataclass
class McpEntry:
    """One MCP server acting for an entity. ``order``: lower is preferred, whatever the
    format (A2E: its priority; EDP: 100 minus its priority)."""

    endpoint: str
    capabilities: list[str]
    provider: str = ""
    entity_id: str = ""
    priority: int | None = None
    order: int = 100
    auth_required: bool = False
    verification: dict | None = None


@dataclass
class EntityData:
    name: str
    path: str = ""
    description: str = ""
    category: str = ""
    address: str = ""
    city: str = ""
    postal_code: str = ""
    country: str = ""
    lat: float | None = None
    lng: float | None = None
    contact: dict = field(default_factory=dict)
    mcps: list[McpEntry] = field(default_factory=list)


@dataclass
class CardReport:
    format: str | None
    domain: str | None
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    entities: list[EntityData] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


@cache
def _registry() -> "Registry":
    from referencing import Registry, Resource

    resources = []
    for path in sorted(_SCHEMA_DIR.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def _validator(name: str) -> "Draft202012Validator":
    from jsonschema import Draft202012Validator, FormatChecker

    schema = json.loads((_SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema, registry=_registry(), format_checker=FormatChecker())


def schema_problems(name: str, document: Any, base: str = "") -> list[Problem]:
    """Every schema violation of ``document``, at its path, in document order."""
    problems = []
    for error in _validator(name).iter_errors(document):
        path = base
        for key in error.absolute_path:
            path = join_path(path, key)
        problems.append(Problem(path or "$", _message(error)))
    return sorted(problems, key=lambda p: p.path)


def _message(error) -> str:
    if error.validator == "required":
        return error.message.replace(" is a required property", " is required")
    if error.validator == "const":
        return f"must be {json.dumps(error.validator_value)}"
    if error.validator == "enum":
        return "must be one of " + ", ".join(map(str, error.validator_value))
    if error.validator == "pattern":
        return f"must match {error.validator_value}"
    if error.validator == "type":
        return f"must be of type {error.validator_value}"
    if error.validator == "maxItems":
        return f"may list at most {error.validator_value} items"
    return error.message[:300]


def card_format(card: Any) -> tuple[str | None, Problem | None]:
    """The format of a card by its top-level keys, or the problem that says why none."""
    if not isinstance(card, dict):
        return None, Problem("$", "must be a JSON object (an entity card)")
    has_a2e, has_version = "a2e" in card, "schema_version" in card
    if has_a2e and has_version:
        return None, Problem(
            "$", "is ambiguous: it has both a2e (A2E) and schema_version (EDP); keep one"
        )
    if has_a2e:
        return A2E, None
    if has_version:
        if "entities" in card and "mcps" in card:
            return None, Problem(
                "$", "is ambiguous: it has both mcps (EDP 0.1) and entities (EDP 0.2)"
            )
        if "entities" in card:
            return EDP_02, None
        if "mcps" in card:
            return EDP_01, None
        version = card.get("schema_version")
        return (EDP_02 if str(version).startswith("0.2") else EDP_01), None
    return None, Problem(
        "$",
        "is not an entity card: it has neither a2e (A2E v0.1) nor schema_version (EDP); "
        "an A2A agent card goes to POST /a2a/agents",
    )


def host_problem(domain: Any, path: str, host: str | None) -> Problem | None:
    """Why the card's domain is not a host name, or not the host that served it."""
    if not isinstance(domain, str):
        return None  # the schema reports it
    try:
        parsed = domain_parse(domain)
    except InvalidHost as exc:
        return Problem(path, str(exc))
    if parsed.port is not None or parsed.is_ip:
        return Problem(path, "must be a host name alone (no port, no IP address)")
    if host is not None and parsed.host != host:
        return Problem(path, f"is {parsed.host}, but the card was served by {host}")
    return None


def _mcp_problems(entry: Any, path: str, fmt: str) -> list[Problem]:
    if not isinstance(entry, dict):
        return []
    problems = []
    endpoint = entry.get("endpoint")
    if isinstance(endpoint, str) and (why := https_url_problem(endpoint)):
        problems.append(Problem(join_path(path, "endpoint"), why))
    if fmt != A2E:
        for index, name in enumerate(entry.get("capabilities") or []):
            if isinstance(name, str) and ":" in name and not _NAMESPACED.match(name):
                problems.append(
                    Problem(
                        join_path(join_path(path, "capabilities"), index),
                        "a namespaced capability must read provider:capability",
                    )
                )
    return problems


def _mcp_entry(entry: dict, fmt: str) -> McpEntry:
    priority = entry.get("priority")
    if fmt == A2E:
        order = priority if priority is not None else A2E_DEFAULT_PRIORITY
    else:
        order = 100 - (priority if priority is not None else EDP_DEFAULT_PRIORITY)
    return McpEntry(
        endpoint=entry["endpoint"],
        capabilities=list(dict.fromkeys(entry.get("capabilities") or [])),
        provider=entry.get("provider", ""),
        entity_id=entry.get("entity_id") or entry.get("entity_ref") or "",
        priority=priority,
        order=order,
        auth_required=bool(entry.get("auth_required", False)),
        verification=entry.get("verification"),
    )


def _edp_location(location: dict | None) -> dict:
    location = location or {}
    coordinates = location.get("coordinates") or {}
    return {
        "address": location.get("address", ""),
        "city": location.get("city", ""),
        "country": location.get("country", ""),
        "lat": coordinates.get("lat"),
        "lng": coordinates.get("lng"),
    }


def _a2e_coordinates(card: dict) -> tuple[list[Problem], list[Problem]]:
    """An A2E location's EDP-style ``coordinates: {lat, lng}``: A2E v0.1 gives ``location.lat``
    and ``location.lng``. Read the other shape with a warning naming the spec's, or say why
    it is not read (errors, warnings): a fact is never dropped without a word."""
    entity = card.get("entity")
    location = entity.get("location") if isinstance(entity, dict) else None
    if not isinstance(location, dict) or "coordinates" not in location:
        return [], []
    path = "entity.location.coordinates"
    coordinates = location["coordinates"]
    if not isinstance(coordinates, dict):
        return [
            Problem(
                path, "must be an object {lat, lng}; A2E v0.1 gives location.lat and location.lng"
            )
        ], []
    errors = []
    for name, limit in (("lat", 90), ("lng", 180)):
        value = coordinates.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or abs(value) > limit:
            errors.append(
                Problem(join_path(path, name), f"must be a number between -{limit} and {limit}")
            )
    if errors:
        return errors, []
    if "lat" in location or "lng" in location:
        if (location.get("lat"), location.get("lng")) != (coordinates["lat"], coordinates["lng"]):
            return [
                Problem(
                    path,
                    "differs from location.lat and location.lng: give one place "
                    "(A2E v0.1: location.lat and location.lng)",
                )
            ], []
        return [], [
            Problem(path, "repeats location.lat and location.lng (A2E v0.1's shape); drop it")
        ]
    return [], [
        Problem(
            path,
            "is EDP's shape, read as location.lat and location.lng, which A2E v0.1 "
            "gives: publish those",
        )
    ]


def _entities(card: dict, fmt: str) -> list[EntityData]:
    if fmt == A2E:
        entity = card["entity"]
        location = dict(entity.get("location") or {})
        if isinstance(coordinates := location.get("coordinates"), dict):
            location.setdefault("lat", coordinates["lat"])
            location.setdefault("lng", coordinates["lng"])
        return [
            EntityData(
                name=entity["name"],
                description=entity.get("description", ""),
                category=entity["category"],
                address=location.get("address", ""),
                city=location.get("city", ""),
                postal_code=location.get("postal_code", ""),
                country=location.get("country", ""),
                lat=location.get("lat"),
                lng=location.get("lng"),
                contact=dict(entity.get("contact") or {}),
                mcps=[_mcp_entry(m, fmt) for m in card["mcps"]],
            )
        ]
    if fmt == EDP_01:
        # EDP 0.1 cards carry MCP associations only: the name is the domain until enriched.
        return [EntityData(name=card["domain"], mcps=[_mcp_entry(m, fmt) for m in card["mcps"]])]
    return [
        EntityData(
            name=item["name"],
            path=item.get("path", ""),
            mcps=[_mcp_entry(m, fmt) for m in item["mcps"]],
            **_edp_location(item.get("location")),
        )
        for item in card["entities"]
    ]


def _sorted_mcps(entities: list[EntityData]) -> None:
    for entity in entities:
        entity.mcps.sort(key=lambda m: m.order)  # stable: the card's order among equals


def card_validate(card: Any, *, host: str | None = None) -> CardReport:
    """Classify and validate an entity card. With ``host`` (the host that served it), its
    domain must equal that host. A valid card's report lists what it says."""
    fmt, problem = card_format(card)
    if problem is not None:
        return CardReport(None, None, [problem])
    errors = schema_problems(fmt, card)
    domain_path = "entity.domain" if fmt == A2E else "domain"
    domain = (card.get("entity") or {}).get("domain") if fmt == A2E else card.get("domain")
    if not isinstance(card.get("entity"), dict) and fmt == A2E:
        domain = None
    if problem := host_problem(domain, domain_path, host):
        errors.append(problem)
    if fmt == EDP_02:
        seen: dict[str, int] = {}
        for index, item in enumerate(card.get("entities") or []):
            if not isinstance(item, dict):
                continue
            path = item.get("path", "")
            if path in seen:
                errors.append(
                    Problem(
                        f"entities[{index}].path",
                        f"repeats the path of entities[{seen[path]}]: each entity needs its own",
                    )
                )
            seen.setdefault(path, index)
            for m_index, entry in enumerate(item.get("mcps") or []):
                errors += _mcp_problems(entry, f"entities[{index}].mcps[{m_index}]", fmt)
    elif isinstance(card.get("mcps"), list):
        for index, entry in enumerate(card["mcps"]):
            errors += _mcp_problems(entry, f"mcps[{index}]", fmt)
    warnings: list[Problem] = []
    if fmt == A2E:
        coordinate_errors, warnings = _a2e_coordinates(card)
        errors += coordinate_errors
    # A rule the schema already reported at a path (an http endpoint) is said once.
    reported: set[str] = set()
    errors = [p for p in errors if not (p.path in reported or reported.add(p.path))]
    report = CardReport(fmt, domain.lower() if isinstance(domain, str) else None, errors, warnings)
    if report.ok:
        report.entities = _entities(card, fmt)
        _sorted_mcps(report.entities)
    return report


def registration_validate(payload: Any) -> list[Problem]:
    """Every problem of an EDP provider registration, at its path."""
    if not isinstance(payload, dict):
        return [Problem("$", "must be a JSON object (a provider registration)")]
    problems = schema_problems(PROVIDER_REGISTRATION, payload)
    provider = payload.get("provider")
    endpoint = provider.get("endpoint") if isinstance(provider, dict) else None
    reported = {p.path for p in problems}
    why = https_url_problem(endpoint) if isinstance(endpoint, str) else None
    if why and "provider.endpoint" not in reported:
        problems.append(Problem("provider.endpoint", why))
    seen: set[str] = set()
    for index, entity in enumerate(payload.get("entities") or []):
        if not isinstance(entity, dict):
            continue
        if problem := host_problem(entity.get("domain"), f"entities[{index}].domain", None):
            problems.append(problem)
        entity_id = entity.get("entity_id")
        if isinstance(entity_id, str):
            if entity_id in seen:
                problems.append(Problem(f"entities[{index}].entity_id", "is listed twice"))
            seen.add(entity_id)
    return problems
