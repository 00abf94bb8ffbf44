"""The registry's own card, and a2a-sdk's resolver fetching cards from a live server."""

import asyncio
import copy

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.types import AgentCard
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import ParseDict

from tests.protocols.a2a.sample_cards import ec_key_pair, signature_verifies, signed_card


@pytest.mark.parametrize("path", ["/.well-known/agent-card.json", "/.well-known/agent.json"])
def test_the_registry_serves_its_own_valid_card_at_both_well_known_paths(anon, path, db):
    response = anon.get(path)
    assert response.status_code == 200
    card = response.json()
    validate_proto_required_fields(ParseDict(copy.deepcopy(card), AgentCard()))
    assert [s["id"] for s in card["skills"]] == ["agent-registration", "agent-discovery"]
    assert card["supportedInterfaces"][0]["protocolVersion"] == "1.0"


def resolve(base_url: str, path: str) -> AgentCard:
    async def run() -> AgentCard:
        async with httpx.AsyncClient() as client:
            resolver = A2ACardResolver(client, base_url, agent_card_path=path)
            return await resolver.get_agent_card()

    return asyncio.run(run())


@pytest.mark.django_db(transaction=True)
def test_a2a_card_resolver_fetches_a_registered_card_from_a_live_server(
    live_server, alice, make_card
):
    private, public = ec_key_pair()
    card = signed_card(private)
    agent_id = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]

    resolved = resolve(live_server.url, f"/a2a/agents/{agent_id}")
    assert resolved.name == "Weather Agent"
    assert resolved.supported_interfaces[0].url == "https://weather.example.com/a2a/v1"
    assert [s.id for s in resolved.skills] == ["forecast"]
    with httpx.Client() as client:
        fetched = client.get(f"{live_server.url}/a2a/agents/{agent_id}").json()
    assert signature_verifies(fetched, public)


@pytest.mark.django_db(transaction=True)
def test_a2a_card_resolver_reads_the_registry_card(live_server):
    resolved = resolve(live_server.url, "/.well-known/agent-card.json")
    assert {s.id for s in resolved.skills} == {"agent-registration", "agent-discovery"}


def test_writes_to_the_registry_card_are_405_problems(anon):
    response = anon.post("/.well-known/agent-card.json", {}, format="json")
    assert response.status_code == 405
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "/problems/method-not-allowed"


def test_the_registry_card_declares_both_bindings_and_the_bearer_key(anon, settings, db):
    settings.REGISTRY_BASE_URL = "https://registry.example"
    card = anon.get("/.well-known/agent-card.json").json()
    ParseDict(copy.deepcopy(card), AgentCard())  # strict: no unknown members
    assert [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", "https://registry.example/a2a/jsonrpc"),
        ("HTTP+JSON", "https://registry.example/a2a/rest"),
    ]
    assert card["securitySchemes"]["apiKey"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    registration, discovery = card["skills"]
    assert registration["securityRequirements"] == [{"schemes": {"apiKey": {"list": []}}}]
    assert "securityRequirements" not in discovery
    assert card["capabilities"]["streaming"] is False
