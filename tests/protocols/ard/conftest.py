"""Fixtures of the ARD tests: the official schemas (copied into ard/schemas/), agents
registered by card, and the catalog as a client reads it."""

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

SCHEMAS = Path(__file__).resolve().parents[3] / "protocols" / "ard" / "schemas"
CATALOG_SCHEMA = json.loads((SCHEMAS / "ai-catalog.schema.json").read_text())
OPENAPI = yaml.safe_load((SCHEMAS / "ard.openapi.yaml").read_text())


def catalog_problems(document: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(
        CATALOG_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def openapi_problems(component: str, document: dict) -> list[str]:
    """Problems of ``document`` against a component schema of the official OpenAPI (its
    references to the catalog schema resolved to our copy)."""
    text = json.dumps(OPENAPI["components"]["schemas"])
    text = text.replace("./ai-catalog.schema.json#", "urn:ard:catalog#")
    text = text.replace("#/components/schemas/", "urn:ard:api#/")
    components = json.loads(text)
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        [
            ("urn:ard:catalog", Resource.from_contents(CATALOG_SCHEMA)),
            (
                "urn:ard:api",
                Resource.from_contents(
                    {"$schema": "https://json-schema.org/draft/2020-12/schema", **components}
                ),
            ),
        ]
    )
    validator = jsonschema.Draft202012Validator(
        {"$ref": f"urn:ard:api#/{component}"}, registry=registry
    )
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def register(client, card) -> str:
    response = client.post("/a2a/agents", {"card": card}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def catalog(client, path: str = "/.well-known/ai-catalog.json") -> dict:
    response = client.get(path)
    assert response.status_code == 200, response.content
    document = json.loads(response.content)
    assert catalog_problems(document) == []
    return document


def agent_entries(document: dict) -> list[dict]:
    return [e for e in document["entries"] if e["type"] != "application/ai-registry+json"]


@pytest.fixture
def weather(alice, make_card) -> str:
    return register(alice, make_card())
