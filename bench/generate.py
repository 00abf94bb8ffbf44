"""Realistic synthetic A2A agent cards, reproducible from a seed.

Card ``i`` depends only on the seed and ``i``, so a run can load cards 0..999 first and
1000..N later and get the same population as loading them at once.
"""

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

AAP_EXTENSION_URI = "https://autoagentprotocol.org/extensions/a2a-automotive-retail/v0.1"
AAP_SKILLS = (
    ("dealer.information", "Dealer Information", "Dealership profile, hours and contacts."),
    ("inventory.facets", "Inventory Facets", "Aggregated makes, models, years and prices."),
    ("inventory.search", "Inventory Search", "Search vehicles by make, model, price, mileage."),
    ("inventory.vehicle", "Vehicle Detail", "Full detail and pricing of one vehicle by VIN."),
    ("lead.submit", "Submit Lead", "Submit a consented lead with trade-in and appointment."),
)

# Skill kinds (id, name, description, tags), extra tags (industries, languages, regions,
# integrations), organizations and the words agent names and descriptions are made of.
VOCABULARY = json.loads((Path(__file__).parent / "vocabulary.json").read_text())
SKILL_KINDS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = tuple(
    (skill_id, name, description, tuple(tags))
    for skill_id, name, description, tags in VOCABULARY["skill_kinds"]
)
EXTRA_TAGS: tuple[str, ...] = tuple(VOCABULARY["extra_tags"])
TAGS: tuple[str, ...] = tuple(
    sorted({tag for kind in SKILL_KINDS for tag in kind[3]} | set(EXTRA_TAGS))
)
ORG_FIRST: tuple[str, ...] = tuple(VOCABULARY["organizations"])
ORG_SECOND: tuple[str, ...] = tuple(VOCABULARY["organization_suffixes"])
NAME_PREFIXES: tuple[str, ...] = tuple(VOCABULARY["name_prefixes"])
NAME_SUFFIXES: tuple[str, ...] = tuple(VOCABULARY["name_suffixes"])
AUDIENCES: tuple[str, ...] = tuple(VOCABULARY["audiences"])
OTHER_EXTENSIONS = (
    "https://a2a-extensions.example.org/traceability/v1",
    "https://a2a-extensions.example.org/timestamp/v1",
    "https://a2a-extensions.example.org/cost-reporting/v2",
)
MODES = ("text/plain", "application/json", "text/markdown", "application/pdf", "image/png")


def _slug(text: str) -> str:
    return "-".join(text.lower().replace(".", "").split())


ORGS: tuple[tuple[str, str], ...] = tuple(
    (f"{first} {second}", f"{_slug(first)}-{_slug(second)}.example")
    for first in ORG_FIRST
    for second in ORG_SECOND
)


def _interfaces(rng: random.Random, host: str, index: int) -> list[dict[str, str]]:
    base = f"https://{host}"
    roll = rng.random()
    if roll < 0.55:
        bindings = ["JSONRPC"]
    elif roll < 0.75:
        bindings = ["JSONRPC", "HTTP+JSON"]
    elif roll < 0.87:
        bindings = ["HTTP+JSON"]
    elif roll < 0.95:
        bindings = ["JSONRPC", "GRPC"]
    else:
        bindings = ["GRPC", "HTTP+JSON"]
    version = "1.0" if rng.random() < 0.8 else "0.3"
    paths = {"JSONRPC": "/a2a/v1", "HTTP+JSON": "/a2a/rest", "GRPC": ""}
    interfaces = []
    for binding in bindings:
        url = f"grpc-{host}:443" if binding == "GRPC" else f"{base}{paths[binding]}"
        interfaces.append({"url": url, "protocolBinding": binding, "protocolVersion": version})
    if version == "1.0" and rng.random() < 0.1:
        # a2a-sdk servers that still speak 0.3 list it as a second interface.
        interfaces.append(
            {"url": f"{base}/a2a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        )
    return interfaces


def _security(rng: random.Random, org_domain: str) -> tuple[dict, list] | None:
    roll = rng.random()
    if roll < 0.45:
        return None
    if roll < 0.65:
        schemes = {"apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}}
        name, scopes = "apiKey", []
    elif roll < 0.9:
        schemes = {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}}
        }
        name, scopes = "bearer", []
    else:
        flow = {
            "tokenUrl": f"https://auth.{org_domain}/oauth/token",
            "scopes": {"agents:read": "Read access", "agents:invoke": "Invoke skills"},
        }
        schemes = {"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": flow}}}}
        name, scopes = "oauth", ["agents:invoke"]
    return schemes, [{"schemes": {name: {"list": scopes}}}]


def _skill(rng: random.Random, kind: tuple[str, str, str, tuple[str, ...]]) -> dict[str, Any]:
    skill_id, name, description, tags = kind
    extra = rng.sample(EXTRA_TAGS, rng.randint(0, 3))
    skill: dict[str, Any] = {
        "id": skill_id,
        "name": name,
        "description": description,
        "tags": list(tags) + extra,
    }
    if rng.random() < 0.6:
        skill["examples"] = [f"{name}: please help with this.", f"Can you {name.lower()}?"]
    if rng.random() < 0.2:
        skill["inputModes"] = ["application/json"]
        skill["outputModes"] = ["application/json"]
    return skill


def _aap_card(rng: random.Random, index: int) -> dict[str, Any]:
    """An AAP v0.1 automotive dealer agent: public or bearer, JSONRPC and/or HTTP+JSON."""
    city = rng.choice(("Austin", "Denver", "Fresno", "Boise", "Tampa", "Reno", "Omaha"))
    brand = rng.choice(("Toyota", "Honda", "Ford", "Kia", "Subaru", "Mazda", "Hyundai"))
    host = f"dealer-{index}.{_slug(city)}-{_slug(brand)}.example"
    bearer = rng.random() < 0.5
    card: dict[str, Any] = {
        "name": f"{city} {brand} Dealer Agent {index}",
        "description": f"Inventory, pricing and leads for {city} {brand}, an automotive dealer.",
        "version": "0.1.1",
        "provider": {"organization": f"{city} {brand}", "url": f"https://{host}"},
        "supportedInterfaces": [
            {"url": f"https://{host}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {
                "url": f"https://{host}/a2a-rest",
                "protocolBinding": "HTTP+JSON",
                "protocolVersion": "1.0",
            },
        ],
        "capabilities": {
            "streaming": False,
            "pushNotifications": rng.random() < 0.5,
            "extensions": [
                {
                    "uri": AAP_EXTENSION_URI,
                    "description": "Auto Agent Protocol A2A Automotive Retail Profile v0.1",
                    "required": True,
                    "params": {
                        "profile_name": "AAP A2A Automotive Retail Profile",
                        "profile_version": "0.1.1",
                        "contract_uri": "https://autoagentprotocol.org/v0.1/",
                        "manifest_url": f"https://{host}/.well-known/auto-agent-contract.json",
                        "aap_skill_ids": [s[0] for s in AAP_SKILLS],
                        "implemented_skills": [s[0] for s in AAP_SKILLS],
                        "auth_type": "bearer" if bearer else None,
                    },
                }
            ],
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {"id": sid, "name": name, "description": desc, "tags": ["automotive", "dealer"]}
            for sid, name, desc in AAP_SKILLS
        ],
    }
    if bearer:
        card["securitySchemes"] = {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}}
        }
        card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    return card


def _v03_card(card: dict[str, Any]) -> dict[str, Any]:
    """The same agent as a legacy A2A 0.3 card (url, preferredTransport, protocolVersion)."""
    interfaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] != "GRPC"]
    interfaces = interfaces or [
        {"url": card["provider"]["url"] + "/a2a", "protocolBinding": "JSONRPC"}
    ]
    legacy: dict[str, Any] = {
        "name": card["name"],
        "description": card["description"],
        "url": interfaces[0]["url"],
        "preferredTransport": interfaces[0]["protocolBinding"],
        "protocolVersion": "0.3.0",
        "version": card["version"],
        "provider": card["provider"],
        "capabilities": {
            k: v for k, v in card["capabilities"].items() if k in ("streaming", "pushNotifications")
        },
        "defaultInputModes": card["defaultInputModes"],
        "defaultOutputModes": card["defaultOutputModes"],
        "skills": card["skills"],
    }
    if len(interfaces) > 1:
        legacy["additionalInterfaces"] = [
            {"url": i["url"], "transport": i["protocolBinding"]} for i in interfaces
        ]
    if "securitySchemes" in card:
        name, scheme = next(iter(card["securitySchemes"].items()))
        if "apiKeySecurityScheme" in scheme:
            legacy_scheme = {"type": "apiKey", "in": "header", "name": "X-API-Key"}
        elif "httpAuthSecurityScheme" in scheme:
            legacy_scheme = {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
        else:
            flows = scheme["oauth2SecurityScheme"]["flows"]
            legacy_scheme = {"type": "oauth2", "flows": flows}
        legacy["securitySchemes"] = {name: legacy_scheme}
        scopes = card["securityRequirements"][0]["schemes"][name]["list"]
        legacy["security"] = [{name: scopes}]
    return legacy


def card_generate(seed: int, index: int) -> dict[str, Any]:
    """Card number ``index`` of the population of ``seed``."""
    rng = random.Random(seed * 1_000_003 + index)
    if rng.random() < 0.03:
        return _aap_card(rng, index)
    org, org_domain = rng.choice(ORGS)
    kinds = rng.sample(SKILL_KINDS, rng.choices((1, 2, 3, 4, 5), (30, 30, 20, 12, 8))[0])
    lead = kinds[0]
    noun = lead[1].split()[0]
    name = f"{rng.choice(NAME_PREFIXES)} {noun} {rng.choice(NAME_SUFFIXES)}"
    if rng.random() < 0.5:
        name = f"{org.split()[0]} {name}"
    skill_list = ", ".join(k[1].lower() for k in kinds)
    description = f"{lead[2]} Built by {org} for {rng.choice(AUDIENCES)}. Skills: {skill_list}."
    host = f"{_slug(noun)}-{index}.agents.{org_domain}"
    # Always one member: the registry refuses "capabilities": {} as missing.
    capabilities: dict[str, Any] = {"streaming": rng.random() < 0.4}
    if rng.random() < 0.2:
        capabilities["pushNotifications"] = True
    if rng.random() < 0.08:
        capabilities["extensions"] = [
            {"uri": rng.choice(OTHER_EXTENSIONS), "required": False, "params": {"level": 1}}
        ]
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "supportedInterfaces": _interfaces(rng, host, index),
        "provider": {"organization": org, "url": f"https://www.{org_domain}"},
        "version": f"{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        "capabilities": capabilities,
        "defaultInputModes": ["text/plain", *rng.sample(MODES[1:], rng.randint(0, 2))],
        "defaultOutputModes": ["text/plain", *rng.sample(MODES[1:], rng.randint(0, 2))],
        "skills": [_skill(rng, kind) for kind in kinds],
    }
    if rng.random() < 0.3:
        card["documentationUrl"] = f"https://docs.{org_domain}/agents/{_slug(noun)}"
    security = _security(rng, org_domain)
    if security is not None:
        card["securitySchemes"], card["securityRequirements"] = security
    if rng.random() < 0.05:
        return _v03_card(card)
    return card


def cards_generate(seed: int, start: int, stop: int) -> Iterator[dict[str, Any]]:
    for index in range(start, stop):
        yield card_generate(seed, index)


def query_words() -> list[str]:
    """Words a user would type into discovery's text search: nouns of the skill kinds."""
    words = {name.split()[0].lower() for _, name, _, _ in SKILL_KINDS}
    return sorted(w for w in words if len(w) > 3)


def skill_names() -> list[str]:
    return [name for _, name, _, _ in SKILL_KINDS]
