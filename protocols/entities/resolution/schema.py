"""OpenAPI shapes of the entities API's requests and answers (drf-spectacular takes them
as plain dicts)."""

import json
from pathlib import Path

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"


def provider_registration_schema() -> dict:
    """The body of POST /v1/provider/register: the JSON Schema it is validated with, as an
    OpenAPI schema (no $schema, $id or title; the location, validated on its own, an object)."""
    schema = json.loads((SCHEMA_DIR / "edp-provider-registration.schema.json").read_text())
    for keyword in ("$schema", "$id", "title"):
        schema.pop(keyword, None)
    entity = schema["properties"]["entities"]["items"]
    entity["properties"]["location"] = {"type": "object"}
    return schema


def _nullable(kind: str, **extra) -> dict:
    return {"type": kind, "nullable": True, **extra}


SERVER_CARD = {
    "type": "object",
    "nullable": True,
    "description": "The MCP server card (SEP-1649) at the endpoint's origin, as last read; "
    "null when never read. Its tools are listed, never called.",
    "properties": {
        "status": {"type": "string", "enum": ["found", "absent", "invalid"]},
        "reason": _nullable("string", description="Why absent or invalid."),
        "name": {"type": "string"},
        "version": _nullable("string"),
        "tools": _nullable(
            "array",
            items={
                "type": "object",
                "properties": {"name": {"type": "string"}, "description": _nullable("string")},
            },
            description='null when the card lists none or says "dynamic".',
        ),
        "transport": {"nullable": True, "description": "The card's transport, as given."},
        "readAt": {"type": "string", "format": "date-time"},
    },
    "required": ["status"],
}

MCP_ENTRY = {
    "type": "object",
    "properties": {
        "provider": _nullable("string"),
        "endpoint": {"type": "string"},
        "entity_id": _nullable("string"),
        "capabilities": {"type": "array", "items": {"type": "string"}},
        "priority": _nullable("integer"),
        "order": {"type": "integer"},
        "auth_required": {"type": "boolean"},
        "verification": {"type": "object"},
        "serverCard": SERVER_CARD,
    },
}

HOURS = {
    "type": "array",
    "nullable": True,
    "items": {
        "type": "object",
        "properties": {
            "days": {
                "type": "array",
                "items": {"type": "string", "enum": ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"]},
            },
            "opens": {"type": "string", "example": "12:00"},
            "closes": {"type": "string", "example": "23:00"},
        },
    },
    "description": "Opening hours in the entity's time zone; a period that closes at or "
    "before it opens runs past midnight.",
}

SOURCE = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["card", "website", "provider-claim"]},
        "url": _nullable("string"),
        "readAt": {"type": "string", "format": "date-time"},
        "values": {"type": "object", "description": "The facts this source gives."},
        "provider": {"type": "string"},
        "entityId": {"type": "string"},
        "verificationLevel": {"type": "integer"},
        "status": {"type": "string", "description": "website: ok, no-markup or error."},
        "detail": {"type": "string"},
    },
}

ENTITY_SUMMARY = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "name": {"type": "string"},
        "domain": _nullable("string"),
        "path": _nullable("string"),
        "category": _nullable("string"),
        "description": _nullable("string"),
        "location": {
            "type": "object",
            "properties": {
                "address": _nullable("string"),
                "city": _nullable("string"),
                "postal_code": _nullable("string"),
                "country": _nullable("string"),
                "coordinates": _nullable(
                    "object",
                    properties={"lat": {"type": "number"}, "lng": {"type": "number"}},
                ),
            },
        },
        "phone": _nullable("string"),
        "website": _nullable("string"),
        "same_as": {"type": "array", "items": {"type": "string"}},
        "hours": HOURS,
        "timezone": _nullable(
            "string",
            description="IANA zone, from coordinates or country, when hours are known.",
        ),
        "openNow": _nullable("boolean", description="null when hours or zone are unknown."),
        "format": {"type": "string"},
        "verification_level": {"type": "integer", "enum": [0, 1, 2]},
        "flagged": {"type": "boolean"},
    },
}

ENTITY = {
    "allOf": [
        ENTITY_SUMMARY,
        {
            "type": "object",
            "properties": {
                "mcps": {"type": "array", "items": MCP_ENTRY},
                "contact": _nullable("object"),
                "card_url": _nullable("string"),
                "status": _nullable("string"),
                "fetched_at": _nullable("string", format="date-time"),
                "agent_url": {"type": "string"},
                "updated_at": {"type": "string", "format": "date-time"},
                "sources": {"type": "array", "items": SOURCE, "description": "?sources=true"},
            },
        },
    ]
}


def results(extra: dict) -> dict:
    return {
        "type": "object",
        "properties": {
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "entity": ENTITY_SUMMARY,
                        "mcps": {"type": "array", "items": MCP_ENTRY},
                        "sources": {"type": "array", "items": SOURCE},
                        **extra,
                    },
                },
            }
        },
    }


RESOLVE_RESPONSE = results({"confidence": {"type": "number"}})
NEARBY_RESPONSE = results({"distance_m": {"type": "number"}})
DOMAIN_RESPONSE = {
    "type": "object",
    "properties": {
        "domain": {"type": "string"},
        "entities": {"type": "array", "items": ENTITY},
    },
}
ENTITIES_RESPONSE = {
    "type": "object",
    "properties": {
        "domain": {"type": "string"},
        "format": {"type": "string", "enum": ["a2e-0.1", "edp-0.1", "edp-0.2"]},
        "card_url": {"type": "string"},
        "entities": {"type": "array", "items": ENTITY},
        "warnings": {
            "type": "array",
            "description": "What the card says in a shape its format's spec does not give, "
            "read all the same (each with its path); absent when none.",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}


# A host name as domain_parse reads it (IDNA or Unicode, an optional port): no URL.
HOST_NAME = {"type": "string", "minLength": 1, "maxLength": 253, "pattern": r"^[^\s/@?#\\]+$"}
DOMAIN_REQUEST = {
    "type": "object",
    "properties": {"domain": HOST_NAME},
    "required": ["domain"],
    "additionalProperties": False,
}
VALIDATE_REQUEST = {
    "type": "object",
    "properties": {"card": {"type": "object"}, "domain": HOST_NAME},
    "required": ["card"],
    "additionalProperties": False,
}
