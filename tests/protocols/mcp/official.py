"""The official MCP schemas vendored in ``schemas/`` (README.md there says where from), as
validators: the server card, server.json, and the MCP Registry API's OpenAPI components."""

import json
from functools import cache
from pathlib import Path

import yaml
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7, DRAFT202012

SCHEMAS = Path(__file__).resolve().parent / "schemas"
SERVER_SCHEMA_ID = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"


def load(name: str):
    text = (SCHEMAS / name).read_text()
    return yaml.safe_load(text) if name.endswith(".yaml") else json.loads(text)


@cache
def _registry() -> Registry:
    server = Resource(load("server.schema.json"), specification=DRAFT7)
    return Registry().with_resource(SERVER_SCHEMA_ID, server)


def validator(schema: dict) -> Draft7Validator:
    return Draft7Validator(schema, registry=_registry(), format_checker=FormatChecker())


@cache
def server_card_validator() -> Draft7Validator:
    return validator(load("server-card.schema.json"))


@cache
def server_json_validator() -> Draft7Validator:
    return validator(load("server.schema.json"))


def errors(found, document) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found.iter_errors(document)
    ]


@cache
def openapi_validator(component: str) -> Draft202012Validator:
    """A component schema of the official MCP Registry OpenAPI document (its own references
    resolved within it)."""
    document = load("openapi.yaml")
    resource = Resource(document, specification=DRAFT202012)
    registry = Registry().with_resource(document["$id"], resource)
    return Draft202012Validator(
        {"$ref": f"{document['$id']}#/components/schemas/{component}"},
        registry=registry,
        format_checker=FormatChecker(),
    )
