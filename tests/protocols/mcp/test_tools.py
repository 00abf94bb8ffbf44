"""The registry's MCP server, driven by the mcp SDK's own client over Streamable HTTP
against a live server: list the tools, call each."""

import asyncio
import json

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from protocols.a2a.models import CardDocument, CardVersion
from protocols.entities.registration.bulk import cards_bulk_store
from registry.agents.models import Agent


@pytest.fixture
def registry_url(live_server, settings) -> str:
    settings.REGISTRY_BASE_URL = live_server.url
    return live_server.url


def session(base: str, key: str | None, work):
    """Run ``work(client)`` in an MCP session with the registry (with the key as bearer)."""

    async def run():
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(f"{base}/mcp", http_client=http)
            async with Client(transport) as client:
                return await work(client)

    return asyncio.run(run())


def call(base: str, tool: str, arguments: dict, key: str | None = None):
    return session(base, key, lambda client: client.call_tool(tool, arguments))


@pytest.fixture
def weather(alice, make_card, registry_url) -> str:
    return alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]


@pytest.mark.django_db(transaction=True)
def test_the_tools_are_listed_with_their_inputs(registry_url):
    listed = session(registry_url, None, lambda client: client.list_tools())
    tools = {tool.name: tool for tool in listed.tools}
    # resolve_entity is the entities app's (registry.extensions.Tool).
    assert set(tools) == {"discover_agents", "get_agent_card", "register_agent", "resolve_entity"}
    assert {"q", "tag", "capability", "protocol", "skill", "liveOnly", "limit"} <= set(
        tools["discover_agents"].input_schema["properties"]
    )
    assert tools["get_agent_card"].input_schema["required"] == ["agent_id"]
    assert tools["discover_agents"].annotations.read_only_hint is True


@pytest.mark.django_db(transaction=True)
def test_every_tool_declares_its_output_schema(registry_url):
    listed = session(registry_url, None, lambda client: client.list_tools())
    schemas = {tool.name: tool.output_schema for tool in listed.tools}
    assert all(schema and schema["type"] == "object" for schema in schemas.values()), schemas
    # Two shapes: the agents (discovery parameters) or ARD's results (an ARD query).
    discover = schemas["discover_agents"]
    assert {"agents", "nextCursor", "sort", "results", "pageToken"} <= set(discover["properties"])
    assert {"agentId", "cardUrl", "created"} <= set(schemas["register_agent"]["required"])


@pytest.mark.django_db(transaction=True)
def test_discover_agents_returns_the_matches_as_structured_content(weather, registry_url):
    result = call(registry_url, "discover_agents", {"q": "find agents for the weather"})
    assert result.is_error is False
    (found,) = result.structured_content["agents"]
    assert found["id"] == weather
    assert found["cardUrl"] == f"{registry_url}/a2a/agents/{weather}"
    assert found["skills"][0]["id"] == "forecast"
    assert "Weather Agent" in result.content[0].text

    by_filter = call(registry_url, "discover_agents", {"tag": "weather", "limit": 5})
    assert [a["id"] for a in by_filter.structured_content["agents"]] == [weather]
    none = call(registry_url, "discover_agents", {"tag": "chess"})
    assert none.structured_content["agents"] == []
    assert none.content[0].text == "No agents found."


@pytest.mark.django_db(transaction=True)
def test_discover_agents_answers_every_kind_of_agent_card_or_not(
    weather, alice, native_payload, registry_url
):
    payload = native_payload(name="Native MCP")
    for endpoint in payload["endpoints"]:
        endpoint["protocol"] = "MCP"
    native = alice.post("/agents", payload, format="json").json()["id"]
    entity = {
        "a2e": "0.1",
        "entity": {"domain": "zinc.example", "name": "Le Petit Zinc", "category": "restaurant"},
        "mcps": [{"endpoint": "https://mcp.zinc.example", "capabilities": ["reservations"]}],
    }
    cards_bulk_store(owner="alice", cards=[("zinc.example", entity)])
    result = call(registry_url, "discover_agents", {"limit": 10})
    assert result.is_error is False, result.content[0].text
    urls = {a["name"]: a["cardUrl"] for a in result.structured_content["agents"]}
    assert urls == {
        "Weather Agent": f"{registry_url}/a2a/agents/{weather}",
        "Native MCP": None,
        "Le Petit Zinc": None,
    }
    assert native in {a["id"] for a in result.structured_content["agents"]}


@pytest.mark.django_db(transaction=True)
def test_discover_agents_with_a_bad_filter_is_a_tool_error_naming_it(registry_url):
    result = call(registry_url, "discover_agents", {"protocol": "SMTP"})
    assert result.is_error is True
    assert [e["path"] for e in result.structured_content["problem"]["errors"]] == ["protocol"]


@pytest.mark.django_db(transaction=True)
def test_get_agent_card_returns_the_card_exactly_as_served(weather, registry_url):
    result = call(registry_url, "get_agent_card", {"agent_id": weather})
    assert result.is_error is False
    with httpx.Client() as http:
        served = http.get(f"{registry_url}/a2a/agents/{weather}").json()
    assert result.structured_content == served


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("agent_id", ["not-a-uuid", "7d1b9e52-3c4a-4f6e-9a0b-2c8d5e1f4a63"])
def test_get_agent_card_of_no_agent_is_a_tool_error_with_the_problem(registry_url, agent_id):
    result = call(registry_url, "get_agent_card", {"agent_id": agent_id})
    assert result.is_error is True
    assert agent_id in result.content[0].text
    problem = result.structured_content["problem"]
    assert (problem["type"], problem["status"]) == ("/problems/not-found", 404)
    assert problem["detail"] == result.content[0].text


@pytest.mark.django_db(transaction=True)
def test_get_agent_card_of_an_agent_without_a2a_is_a_tool_error_with_the_problem(
    alice, native_payload, registry_url
):
    payload = native_payload()
    for endpoint in payload["endpoints"]:
        endpoint["protocol"] = "MCP"
    agent_id = alice.post("/agents", payload, format="json").json()["id"]
    result = call(registry_url, "get_agent_card", {"agent_id": agent_id})
    assert result.is_error is True
    assert result.structured_content["problem"]["type"] == "/problems/no-a2a-endpoint"


@pytest.mark.django_db(transaction=True)
def test_register_agent_with_the_key_registers_as_its_owner(make_key, make_card, registry_url):
    card = make_card(name="Via MCP")
    result = call(registry_url, "register_agent", {"card": card}, key=make_key("dora"))
    assert result.is_error is False
    agent = Agent.objects.get(pk=result.structured_content["agentId"])
    assert (agent.owner, agent.name) == ("dora", "Via MCP")
    with httpx.Client() as http:
        assert http.get(result.structured_content["cardUrl"]).json() == card


@pytest.mark.django_db(transaction=True)
def test_register_agent_stores_the_card_object_once(make_key, make_card, registry_url):
    """The card arrives parsed: its members' order, numbers and strings are kept, not its
    escapes or spacing; the same card again, in any order, makes no version."""
    key = make_key("dora")
    card = make_card(x_big=12345678901234567890, x_text="\u00e9/", x_order={"z": 1, "a": 2})
    first = call(registry_url, "register_agent", {"card": card}, key=key)
    agent_id = first.structured_content["agentId"]
    body = bytes(CardDocument.objects.get(agent_id=agent_id).body)
    assert body == json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()
    again = dict(reversed(card.items()))
    assert call(registry_url, "register_agent", {"card": again}, key=key).is_error is False
    assert bytes(CardDocument.objects.get(agent_id=agent_id).body) == body
    assert CardVersion.objects.filter(agent_id=agent_id).count() == 1


@pytest.mark.django_db(transaction=True)
def test_register_agent_without_a_key_stores_nothing(make_card, registry_url):
    result = call(registry_url, "register_agent", {"card": make_card()})
    assert result.is_error is True
    assert "needs an API key" in result.content[0].text
    assert result.structured_content["problem"]["status"] == 401
    assert not Agent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_register_agent_with_an_invalid_card_lists_every_problem(make_key, make_card, registry_url):
    card = make_card()
    card["skills"][0]["tags"] = []
    del card["version"]
    result = call(registry_url, "register_agent", {"card": card}, key=make_key())
    assert result.is_error is True
    paths = {e["path"] for e in result.structured_content["problem"]["errors"]}
    assert {"skills[0].tags", "version"} <= paths
    assert not Agent.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": 7}',
        b"[]",
        b"[" * 5000 + b"]" * 5000,
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": NaN}}',
    ],
)
def test_bad_mcp_requests_get_client_errors(registry_url, body):
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    with httpx.Client() as http:
        response = http.post(f"{registry_url}/mcp", content=body, headers=headers)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]["code"] in (-32700, -32600, -32602)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_there_is_no_stream_to_get_nor_session_to_delete(registry_url, method):
    with httpx.Client(timeout=30) as http:
        response = http.request(method, f"{registry_url}/mcp")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


@pytest.mark.django_db(transaction=True)
def test_discover_agents_takes_the_search_mode(weather, registry_url):
    result = call(
        registry_url, "discover_agents", {"q": "will it rain tomorrow", "mode": "semantic"}
    )
    assert [a["id"] for a in result.structured_content["agents"]] == [weather]
    keyword = call(
        registry_url, "discover_agents", {"q": "will it rain tomorrow", "mode": "keyword"}
    )
    assert keyword.structured_content["agents"] == []
    bad = call(registry_url, "discover_agents", {"q": "rain", "mode": "vibes"})
    assert bad.is_error is True
    assert [e["path"] for e in bad.structured_content["problem"]["errors"]] == ["mode"]
    ard = call(
        registry_url,
        "discover_agents",
        {"query": {"text": "will it rain tomorrow", "mode": "semantic"}, "federation": "none"},
    )
    assert ard.structured_content["results"][0]["identifier"].endswith(weather)


@pytest.mark.django_db(transaction=True)
def test_discover_agents_takes_min_trust_and_the_trust_order(
    weather, alice, make_card, registry_url, settings
):
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from registry.signals import agents_written_send

    card = make_card(name="Old Hand")
    card["supportedInterfaces"][0]["url"] = "https://old.example.com/a2a"
    old = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    settings.TRUST_WEIGHTS = {"age": 1}  # the agents' age alone: 100 or 0
    with transaction.atomic():
        Agent.objects.filter(pk=old).update(created_at=timezone.now() - timedelta(days=400))
        agents_written_send([old, weather])
    ordered = call(registry_url, "discover_agents", {"sort": "trust"}).structured_content
    assert [(a["id"], a["trustScore"]) for a in ordered["agents"]] == [(old, 100), (weather, 0)]
    kept = call(registry_url, "discover_agents", {"minTrust": 50}).structured_content
    assert [a["id"] for a in kept["agents"]] == [old]
    refused = call(registry_url, "discover_agents", {"minTrust": 101})
    assert refused.is_error is True
    assert refused.structured_content["problem"]["errors"][0]["path"] == "minTrust"
