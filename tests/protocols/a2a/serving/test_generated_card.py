"""Cards the registry builds for natively registered agents."""

import copy
import json
import uuid

import pytest
from a2a.types import AgentCard
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import ParseDict

pytestmark = pytest.mark.django_db


def card_of(client, agent_id):
    response = client.get(f"/a2a/agents/{agent_id}")
    assert response.status_code == 200, response.content
    return json.loads(response.content)


def test_native_agent_card_passes_the_sdk_strict_parse_and_required_check(
    alice, anon, native_payload
):
    agent = alice.post("/agents", native_payload(), format="json").json()
    card = card_of(anon, agent["id"])
    message = ParseDict(copy.deepcopy(card), AgentCard())  # strict: unknown members fail
    validate_proto_required_fields(message)
    assert card["version"] == "1.0"
    assert card["capabilities"] == {"streaming": False}
    assert card["name"] == "Summarizer"
    assert card["description"]
    assert card["supportedInterfaces"] == [
        {
            "url": "https://summarizer.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ]
    [skill] = card["skills"]
    assert skill["id"] == agent["capabilities"][0]["id"]
    assert skill["name"] == "summarize"
    assert skill["tags"] == ["nlp"]


def test_skill_ids_are_stable_across_fetches_and_updates(alice, anon, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    first = card_of(anon, agent["id"])
    assert card_of(anon, agent["id"]) == first
    alice.patch(f"/agents/{agent['id']}", {"description": "Now described."}, format="json")
    again = card_of(anon, agent["id"])
    assert again["skills"][0]["id"] == first["skills"][0]["id"]
    assert again["description"] == "Now described."


def test_native_changes_show_in_the_served_card(alice, anon, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    alice.patch(
        f"/agents/{agent['id']}",
        {
            "name": "Summarizer 2",
            "version": "2.0.0",
            "capabilities": [{"name": "summarize", "tags": ["nlp"]}, {"name": "outline"}],
        },
        format="json",
    )
    card = card_of(anon, agent["id"])
    assert card["name"] == "Summarizer 2"
    assert card["version"] == "2.0.0"
    assert [s["name"] for s in card["skills"]] == ["summarize", "outline"]
    assert card["skills"][1]["tags"] == ["outline"]


def test_protocol_metadata_overlays_the_generated_card(alice, anon, native_payload):
    payload = native_payload()
    payload["endpoints"][0]["protocolMetadata"] = {
        "protocolBinding": "HTTP+JSON",
        "capabilities": {"streaming": True},
        "provider": {"organization": "Acme", "url": "https://acme.example"},
        "defaultInputModes": ["application/pdf"],
    }
    agent = alice.post("/agents", payload, format="json").json()
    card = card_of(anon, agent["id"])
    assert card["supportedInterfaces"][0]["protocolBinding"] == "HTTP+JSON"
    assert card["capabilities"] == {"streaming": True}
    assert card["provider"] == {"organization": "Acme", "url": "https://acme.example"}
    assert card["defaultInputModes"] == ["application/pdf"]


def test_metadata_that_would_make_the_card_invalid_is_refused(alice, native_payload):
    from registry.agents.models import Agent

    payload = native_payload()
    payload["endpoints"][0]["protocolMetadata"] = {"capabilities": {"streaming": "yes"}}
    response = alice.post("/agents", payload, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "generatedCard.capabilities.streaming"
    assert Agent.objects.count() == 0


def test_queue_endpoints_get_a_synthetic_url_that_answers_with_connection_details(
    alice, anon, native_payload
):
    payload = native_payload()
    payload["endpoints"].append(
        {
            "name": "bus",
            "transport": "AzureServiceBus",
            "protocol": "A2A",
            "address": "sb://acme.servicebus.windows.net/summarize",
            "livenessModel": "Ephemeral",
            "ttlSeconds": 120,
        }
    )
    agent = alice.post("/agents", payload, format="json").json()
    bus = agent["endpoints"][1]
    card = card_of(anon, agent["id"])
    queue = card["supportedInterfaces"][1]
    assert queue["url"].endswith(f"/a2a/queue/{bus['id']}")
    assert queue["protocolBinding"] == "AzureServiceBus"
    assert bus["queueUrl"] == queue["url"]
    details = anon.get(f"/a2a/queue/{bus['id']}")
    assert details.status_code == 200
    assert details.json()["address"] == "sb://acme.servicebus.windows.net/summarize"
    assert details.json()["transport"] == "AzureServiceBus"
    assert anon.get(f"/a2a/queue/{agent['endpoints'][0]['id']}").status_code == 404


def test_agent_without_an_a2a_endpoint_has_no_card(alice, anon, native_payload):
    payload = native_payload(
        endpoints=[
            {
                "name": "tools",
                "transport": "Http",
                "protocol": "MCP",
                "address": "https://tools.example.com/mcp",
            }
        ]
    )
    agent = alice.post("/agents", payload, format="json").json()
    assert agent["cardUrl"] is None
    response = anon.get(f"/a2a/agents/{agent['id']}")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "/problems/no-a2a-endpoint"
    assert "no A2A endpoint" in response.json()["detail"]


def test_removing_the_last_a2a_endpoint_removes_the_card(alice, anon, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    endpoint_id = agent["endpoints"][0]["id"]
    alice.delete(f"/agents/{agent['id']}/endpoints/{endpoint_id}")
    assert anon.get(f"/a2a/agents/{agent['id']}").status_code == 404


def test_agent_with_no_capabilities_still_gets_one_skill(alice, anon, native_payload):
    agent = alice.post("/agents", native_payload(capabilities=[]), format="json").json()
    card = card_of(anon, agent["id"])
    assert card["skills"] == [
        {
            "id": agent["id"],
            "name": "Summarizer",
            "description": "Summarizer",
            "tags": ["general"],
        }
    ]
    uuid.UUID(card["skills"][0]["id"])


def test_imported_and_generated_urls_follow_registry_base_url(
    settings, tmp_path, anon, alice, make_card, native_payload, capsys
):
    from django.core.management import call_command

    settings.REGISTRY_BASE_URL = "http://127.0.0.1:9123"
    path = tmp_path / "cards.jsonl"
    path.write_text(json.dumps(make_card()) + "\n", encoding="utf-8")
    call_command("import_cards", str(path), "--owner", "crawler")
    [imported] = anon.get("/discover/agents", {"owner": "crawler"}).json()["results"]
    assert imported["cardUrl"] == f"http://127.0.0.1:9123/a2a/agents/{imported['id']}"

    payload = native_payload()
    payload["endpoints"].append(
        {"name": "jobs", "transport": "Amqp", "protocol": "A2A", "address": "jobs.queue"}
    )
    agent = alice.post("/agents", payload, format="json").json()
    card = anon.get(f"/a2a/agents/{agent['id']}").json()
    urls = [i["url"] for i in card["supportedInterfaces"]]
    assert any(u.startswith("http://127.0.0.1:9123/a2a/queue/") for u in urls), urls
    assert not any("8000" in u or "testserver" in u for u in urls)
