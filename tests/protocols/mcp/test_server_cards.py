"""Served MCP server cards: every MCP endpoint's card at a stable registry URL, linked from
the agent JSON as ``serverCardUrl``; the card read at the server's origin served as read,
else one generated from the model and valid against the server-card draft."""

import hashlib
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from registry.agents.models import DomainClaim
from tests.protocols.mcp.official import errors, server_card_validator

MEDIA_TYPE = "application/mcp-server-card+json"


def mcp_payload(native_payload, **overrides):
    return native_payload(
        name="Booking tools",
        description="Books tables at restaurants. " * 8,
        version="2.1.0",
        capabilities=[
            {"name": "book_table", "description": "Book a table.", "tags": ["booking"]},
            {"name": "list_slots", "description": "Free slots of a day."},
        ],
        endpoints=[
            {
                "name": "primary",
                "transport": "Http",
                "protocol": "MCP",
                "address": "https://mcp.bookings.example/mcp",
                "livenessModel": "Persistent",
                "heartbeatIntervalSeconds": 30,
            },
            {
                "name": "legacy",
                "transport": "Http",
                "protocol": "MCP",
                "address": "https://mcp.bookings.example/sse",
                "livenessModel": "Persistent",
                "heartbeatIntervalSeconds": 30,
                "protocolMetadata": {"transport": "sse"},
            },
            {
                "name": "a2a",
                "transport": "Http",
                "protocol": "A2A",
                "address": "https://bookings.example/a2a",
                "livenessModel": "Persistent",
                "heartbeatIntervalSeconds": 30,
            },
        ],
        **overrides,
    )


@pytest.fixture
def agent(alice, native_payload) -> dict:
    response = alice.post("/agents", mcp_payload(native_payload), format="json")
    assert response.status_code == 201, response.content
    return response.json()


def card_path(url: str) -> str:
    return url.removeprefix("http://testserver")


@pytest.mark.django_db
def test_every_mcp_endpoint_links_its_served_card(agent, anon):
    shown = anon.get(f"/agents/{agent['id']}").json()
    urls = {e["name"]: e["serverCardUrl"] for e in shown["endpoints"]}
    assert urls["a2a"] is None
    by_id = {e["name"]: e["id"] for e in shown["endpoints"]}
    assert urls["primary"] == f"http://testserver/mcp/servers/{by_id['primary']}/server-card.json"
    assert urls == {e["name"]: e["serverCardUrl"] for e in agent["endpoints"]}


@pytest.mark.django_db
def test_a_generated_card_is_valid_against_the_draft_and_says_what_the_registry_knows(agent, anon):
    urls = {e["name"]: e["serverCardUrl"] for e in agent["endpoints"]}
    response = anon.get(card_path(urls["legacy"]))
    assert response.status_code == 200
    assert response["Content-Type"] == MEDIA_TYPE
    card = json.loads(response.content)
    assert errors(server_card_validator(), card) == []
    assert response["ETag"] == f'"{hashlib.sha256(response.content).hexdigest()}"'
    # No proved domain: the registry's namespace, with the agent's id.
    assert card["name"] == f"testserver/Booking-tools-{agent['id'].replace('-', '')[:8]}-legacy"
    assert card["version"] == "2.1.0"
    assert len(card["description"]) <= 100 and card["description"].startswith("Books tables")
    assert card["remotes"] == [{"type": "sse", "url": "https://mcp.bookings.example/sse"}]
    assert [t["name"] for t in card["tools"]] == ["book_table", "list_slots"]
    primary = json.loads(anon.get(card_path(urls["primary"])).content)
    assert primary["remotes"][0]["type"] == "streamable-http"
    assert primary["name"] != card["name"]


@pytest.mark.django_db
def test_the_card_answers_a_conditional_get_and_changes_with_the_agent(agent, alice, anon):
    path = card_path(agent["endpoints"][0]["serverCardUrl"])
    first = anon.get(path)
    assert anon.get(path, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    changed = alice.patch(f"/agents/{agent['id']}", {"version": "2.2.0"}, format="json")
    assert changed.status_code == 200
    second = anon.get(path, HTTP_IF_NONE_MATCH=first["ETag"])
    assert second.status_code == 200 and json.loads(second.content)["version"] == "2.2.0"


@pytest.mark.django_db
def test_a_proved_domain_names_the_servers_in_its_namespace(alice, anon, native_payload):
    DomainClaim.objects.create(
        domain="bookings.example",
        owner="alice",
        token="t",
        state=DomainClaim.State.VERIFIED,
        expires_at=timezone.now() + timedelta(days=1),
    )
    payload = mcp_payload(native_payload)
    payload["endpoints"] = payload["endpoints"][:1]
    created = alice.post("/agents", payload, format="json").json()
    card = json.loads(anon.get(card_path(created["endpoints"][0]["serverCardUrl"])).content)
    assert card["name"] == "example.bookings/Booking-tools"
    assert errors(server_card_validator(), card) == []


@pytest.mark.django_db
@pytest.mark.apps("entities")
def test_a_card_read_at_the_origin_is_served_as_read(agent, anon):
    from protocols.entities.models import McpServerCard

    read = b'{ "name": "com.bookings/tables",\n  "version": "9",  "tools": "dynamic" }'
    McpServerCard.objects.create(
        url="https://mcp.bookings.example/.well-known/mcp/server-card.json",
        status="found",
        name="com.bookings/tables",
        body=read,
        fetched_at=timezone.now(),
        next_read_at=timezone.now(),
    )
    for endpoint in agent["endpoints"][:2]:  # one origin, both endpoints
        response = anon.get(card_path(endpoint["serverCardUrl"]))
        assert response.content == read
        assert response["ETag"] == f'"{hashlib.sha256(read).hexdigest()}"'


@pytest.mark.django_db
def test_unknown_non_mcp_and_retired_endpoints_are_problems(agent, alice, anon):
    a2a = next(e for e in agent["endpoints"] if e["protocol"] == "A2A")
    for path in (f"/mcp/servers/{a2a['id']}/server-card.json", "/mcp/servers/x/server-card.json"):
        response = anon.get(path)
        assert response.status_code == 404
        assert response["Content-Type"] == "application/problem+json"
    assert alice.delete(f"/agents/{agent['id']}").status_code in (200, 204)
    gone = anon.get(card_path(agent["endpoints"][0]["serverCardUrl"]))
    assert gone.status_code == 410 and gone.json()["type"].endswith("/retired")
