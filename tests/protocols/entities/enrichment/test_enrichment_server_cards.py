"""MCP server cards, read from a local HTTPS site through the safe fetcher: valid (in both
drafts' shapes), invalid, absent; read once per TTL; and an agent's MCP endpoint's card, read
with its probe."""

import json

import pytest

from protocols.entities.models import McpServerCard
from registry.liveness.tasks import endpoints_probe
from tests.protocols.entities.enrichment.conftest import crawl, entity

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db

SERVER_CARD = "/.well-known/mcp/server-card.json"


VALID_CARDS = {
    # SEP-1649 as first drafted: serverInfo, and a top-level version that is the card's own.
    "serverInfo": {
        "$schema": "https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json",
        "version": "1.0",
        "protocolVersion": "2025-06-18",
        "serverInfo": {"name": "zinc-bookings", "title": "Zinc bookings", "version": "2.4.1"},
        "transport": {"type": "streamable-http", "endpoint": "/mcp"},
        "capabilities": {"tools": {"listChanged": True}},
        "tools": [
            {
                "name": "book_table",
                "description": "Book a table.",
                "inputSchema": {"type": "object"},
            },
            {"name": "list_slots", "description": "Free slots for a party size and a day."},
        ],
    },
    # Later drafts: name and version at the top.
    "top-level": {
        "name": "zinc-bookings",
        "version": "2.4.1",
        "transports": [{"type": "streamable-http", "url": "/mcp"}],
        "tools": [{"name": "book_table", "description": "Book a table."}, {"name": "list_slots"}],
    },
}


@pytest.mark.parametrize("shape", sorted(VALID_CARDS))
def test_a_server_cards_tools_become_capabilities(https_server, register, anon, shape):
    https_server.route(
        SERVER_CARD,
        200,
        {"Content-Type": "application/mcp-server-card+json"},
        json.dumps(VALID_CARDS[shape]).encode(),
    )
    register()
    card = entity(anon)["mcps"][0]["serverCard"]
    assert (card["status"], card["name"], card["version"]) == ("found", "zinc-bookings", "2.4.1")
    assert [t["name"] for t in card["tools"]] == ["book_table", "list_slots"]
    found = anon.get("/v1/resolve?query=lepetitzinc&capabilities=book_table").json()["results"]
    assert found[0]["mcps"][0]["serverCard"]["status"] == "found"
    agents = anon.get("/discover/agents?protocol=MCP&capability=book_table").json()["results"]
    assert [a["entity"]["domain"] for a in agents] == ["lepetitzinc.fr"]
    # Read, never called: no request went to the MCP endpoint itself.
    assert not [r for r in https_server.requests if r.path == "/mcp"]


@pytest.mark.parametrize(
    ("status", "headers", "body", "reason"),
    [
        ("absent", {}, None, "404"),
        ("invalid", {"Content-Type": "application/json"}, b"{not json", "not valid JSON"),
        ("invalid", {"Content-Type": "text/html"}, b"<html></html>", "not JSON"),
        (
            "invalid",
            {"Content-Type": "application/json"},
            json.dumps({"serverInfo": {"version": "1"}, "tools": [{"description": "x"}]}).encode(),
            "serverInfo.name (or name) is required",
        ),
    ],
    ids=["absent", "broken-json", "html", "no-name"],
)
def test_a_missing_or_invalid_server_card_says_why(
    https_server, register, anon, status, headers, body, reason
):
    if body is not None:
        https_server.route(SERVER_CARD, 200, headers, body)
    register()
    card = entity(anon)["mcps"][0]["serverCard"]
    assert card["status"] == status
    assert reason in card["reason"]
    assert anon.get("/v1/resolve?query=lepetitzinc&capabilities=book_table").json() == {
        "results": []
    }


def test_one_origins_server_card_is_read_once_per_ttl(https_server, register, anon):
    https_server.json(SERVER_CARD, json.dumps(VALID_CARDS["top-level"]).encode())
    register()
    crawl()
    assert len([r for r in https_server.requests if r.path == SERVER_CARD]) == 1
    McpServerCard.objects.update(next_read_at="2000-01-01T00:00:00Z")
    https_server.json(SERVER_CARD, json.dumps({"name": "zinc-bookings", "tools": []}).encode())
    crawl()
    assert entity(anon)["mcps"][0]["serverCard"]["tools"] == []
    assert anon.get("/v1/resolve?query=lepetitzinc&capabilities=book_table").json() == {
        "results": []
    }


def test_an_agents_mcp_endpoint_gets_its_server_card_read_with_its_probe(
    network, https_server, alice, native_payload
):
    https_server.json(SERVER_CARD, json.dumps(VALID_CARDS["serverInfo"]).encode())
    https_server.route("/mcp", 405, {}, b"")  # an MCP server answers a GET with 405
    payload = native_payload(
        name="Booking tools",
        endpoints=[
            {
                "name": "mcp",
                "transport": "Http",
                "protocol": "MCP",
                "address": https_server.url("/mcp", host="mybusiness.com"),
            }
        ],
    )
    assert alice.post("/agents", payload, format="json").status_code == 201
    assert endpoints_probe.delay().get() == 1
    card = McpServerCard.objects.get()
    assert (card.status, card.name, card.version) == ("found", "zinc-bookings", "2.4.1")
    assert bytes(card.body) == json.dumps(VALID_CARDS["serverInfo"]).encode()  # as read
    assert [r.method for r in https_server.requests if r.path == "/mcp"] == ["GET"]
