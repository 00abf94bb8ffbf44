"""resolve_entity, the entities app's tool on the MCP face (registry.extensions.Tool), through
the mcp SDK's client in memory: a business found by its words or by its place, answered with
its MCP servers' URLs and transports; bad arguments refused by name."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from mcp import Client

from protocols.entities.demo import DEMO_CARDS
from protocols.entities.registration.bulk import cards_bulk_store
from protocols.mcp.tools import mcp_server

pytestmark = pytest.mark.django_db(transaction=True)


def call(arguments: dict):
    async def run():
        try:
            async with Client(mcp_server()) as client:
                return await client.call_tool("resolve_entity", arguments)
        finally:
            # The tools' database connection, opened in asgiref's thread: closed there.
            await sync_to_async(connections.close_all)()

    return asyncio.run(run())


@pytest.fixture
def demo():
    cards_bulk_store(owner="alice", cards=DEMO_CARDS)


def servers(result) -> dict[str, list[str]]:
    assert result.is_error is False, result.content[0].text
    return {
        r["entity"]["name"]: [s["url"] for s in r["mcpServers"]]
        for r in result.structured_content["results"]
    }


def test_a_business_is_found_by_its_words_with_its_mcp_servers(demo):
    result = call({"query": "trattoria", "mode": "keyword"})
    assert servers(result) == {
        "Demo Trattoria": [
            "https://mcp.demo-bookings.example.com",
            "https://mcp.demo-delivery.example.com",
        ]
    }
    (found,) = result.structured_content["results"]
    assert {"url", "transport", "capabilities"} <= set(found["mcpServers"][0])
    assert found["mcpServers"][0]["capabilities"] == ["reservations", "availability", "menu"]
    assert "Demo Trattoria" in result.content[0].text


def test_a_business_is_found_by_its_place(demo):
    near_lyon = call({"lat": 45.7641, "lng": 4.8358, "radius": 500})
    assert servers(near_lyon) == {"Demo Bistro Lyon": ["https://mcp.demo-bookings.example.com"]}
    assert near_lyon.structured_content["results"][0]["distance_m"] < 500
    words_here = call({"query": "bistro", "mode": "keyword", "lat": 43.2965, "lng": 5.3698})
    assert list(servers(words_here)) == ["Demo Bistro Marseille"]
    by_city = call({"query": "bistro", "mode": "keyword", "city": "Lyon"})
    assert list(servers(by_city)) == ["Demo Bistro Lyon"]
    assert servers(call({"lat": 0, "lng": 0})) == {}


def test_capabilities_narrow_the_businesses(demo):
    result = call({"query": "demo", "mode": "keyword", "capabilities": ["ordering"]})
    assert list(servers(result)) == ["Demo Trattoria"]


@pytest.mark.parametrize(
    "arguments, path",
    [
        ({}, "query"),
        ({"lat": 48.85}, "lng"),
        ({"lat": 95, "lng": 2}, "lat"),
        ({"lat": 48.85, "lng": 2.33, "radius": 0}, "radius"),
        ({"query": "pizza", "minVerification": 3}, "minVerification"),
        ({"query": "pizza", "mode": "vibes"}, "mode"),
        ({"query": "pizza", "limit": 0}, "limit"),
        ({"city": "Paris"}, "city"),
    ],
)
def test_bad_arguments_are_refused_by_name_and_change_nothing(demo, arguments, path):
    result = call(arguments)
    assert result.is_error is True
    problem = result.structured_content["problem"]
    assert (problem["status"], [e["path"] for e in problem["errors"]]) == (400, [path])
