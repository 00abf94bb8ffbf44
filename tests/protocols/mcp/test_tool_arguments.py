"""The MCP tools' arguments as a model client sends them, through the mcp SDK's client
connected in memory to the registry's server: every bad argument is the problem document
naming it (never pydantic's text), discover_agents' text and ARD query cannot be mixed up,
and each tool says what it is for with an example."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from mcp import Client

from protocols.mcp.tools import mcp_server


def session(work):
    async def run():
        try:
            async with Client(mcp_server()) as client:
                return await work(client)
        finally:
            # The tools' database connection, opened in asgiref's thread: closed there.
            await sync_to_async(connections.close_all)()

    return asyncio.run(run())


def call(tool: str, arguments: dict):
    return session(lambda client: client.call_tool(tool, arguments))


def error_paths(result) -> list[str]:
    assert result.is_error is True
    problem = result.structured_content["problem"]
    assert problem["type"] == "/problems/validation-error"
    assert problem["status"] == 400
    assert result.content[0].text == problem["detail"]
    return [error["path"] for error in problem["errors"]]


@pytest.fixture
def weather(alice, make_card) -> str:
    return alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]


def test_every_tool_is_described_for_a_model_with_an_example():
    tools = {tool.name: tool for tool in session(lambda client: client.list_tools()).tools}
    assert set(tools) == {"discover_agents", "get_agent_card", "register_agent", "resolve_entity"}
    for tool in tools.values():
        assert "Example: {" in tool.description, tool.name
        described = tool.input_schema["properties"].values()
        assert all(schema.get("description") for schema in described), tool.name
    # One text argument, the ARD query under a name that is not text's.
    discover = tools["discover_agents"].input_schema["properties"]
    assert "query" not in discover
    assert "object" in str(discover["ardQuery"]) and "string" not in str(discover["ardQuery"])
    assert "resolve_entity" in tools["discover_agents"].description
    assert tools["resolve_entity"].annotations.read_only_hint is True
    assert "mcpServers" in str(tools["resolve_entity"].output_schema)


@pytest.mark.parametrize(
    "tool, arguments, path",
    [
        ("get_agent_card", {"agent_id": "x", "agentId": "x"}, "agentId"),
        ("discover_agents", {"q": "weather", "text": "weather"}, "text"),
        ("register_agent", {"agent_card": {}}, "agent_card"),
        ("resolve_entity", {"query": "pizza", "near": "Paris"}, "near"),
    ],
)
def test_an_argument_the_tool_does_not_take_is_refused_by_name(tool, arguments, path):
    result = call(tool, arguments)
    assert error_paths(result) == [path]
    assert f"is not an argument of {tool}" in result.content[0].text


@pytest.mark.parametrize(
    "tool, arguments, errors",
    [
        ("get_agent_card", {"agent_id": 7}, {"agent_id": "must be a string"}),
        ("get_agent_card", {}, {"agent_id": "is required"}),
        (
            "discover_agents",
            {"limit": "many", "liveOnly": "perhaps"},
            {
                "limit": "must be an integer",
                "liveOnly": "must be true or false",
            },
        ),
        ("register_agent", {"card": "my card"}, {"card": "must be an object"}),
        ("resolve_entity", {"capabilities": "reservations"}, {"capabilities": "must be a list"}),
        ("resolve_entity", {"lat": "north", "lng": 2}, {"lat": "must be a number"}),
    ],
)
def test_a_wrong_type_is_the_problem_document_with_its_path(tool, arguments, errors):
    result = call(tool, arguments)
    error_paths(result)
    found = {e["path"]: e["message"] for e in result.structured_content["problem"]["errors"]}
    assert found == errors
    assert "validation error" not in result.content[0].text


def test_text_given_as_the_ard_query_is_refused_pointing_at_q():
    result = call("discover_agents", {"ardQuery": "weather in Paris"})
    assert error_paths(result) == ["ardQuery"]
    assert "text goes in q" in result.content[0].text


@pytest.mark.django_db(transaction=True)
def test_text_given_as_the_old_query_argument_is_read_as_q(weather):
    result = call("discover_agents", {"query": "find agents for the weather"})
    assert result.is_error is False, result.content[0].text
    assert [a["id"] for a in result.structured_content["agents"]] == [weather]
    both = call("discover_agents", {"query": "weather", "q": "chess"})
    assert error_paths(both) == ["query"]


@pytest.mark.django_db(transaction=True)
def test_the_ard_query_is_answered_under_its_new_and_its_old_name(weather):
    for name in ("ardQuery", "query"):
        arguments = {name: {"text": "weather forecast"}, "federation": "none"}
        result = call("discover_agents", arguments)
        assert result.is_error is False, result.content[0].text
        assert result.structured_content["results"][0]["identifier"].endswith(weather)


def test_ard_arguments_without_an_ard_query_are_refused():
    assert error_paths(call("discover_agents", {"q": "weather", "pageSize": 5})) == ["pageSize"]


@pytest.mark.django_db(transaction=True)
def test_each_tools_example_is_arguments_it_takes(weather):
    """A model copying a description's example makes a call the tool takes: whatever it
    answers (no such agent, no key), never a refusal of the arguments themselves."""

    listed = session(lambda client: client.list_tools()).tools
    for tool in listed:
        example, _ = json.JSONDecoder().raw_decode(tool.description.split("Example: ", 1)[1])
        result = call(tool.name, example)
        if result.is_error:
            problem = result.structured_content["problem"]
            assert problem["type"] != "/problems/validation-error", (tool.name, problem)
        else:
            assert result.structured_content is not None, tool.name
