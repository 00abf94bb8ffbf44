"""The ARD query shape through the registry's own A2A discovery skill (a2a-sdk's client) and
the MCP discover_agents tool (the mcp SDK's client), answered with ARD entries."""

import pytest
from a2a.helpers.proto_helpers import new_data_part
from a2a.utils.errors import InvalidParamsError

from tests.protocols.a2a.face.conftest import converse, reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def registry_url(live_server, settings) -> str:
    settings.REGISTRY_BASE_URL = live_server.url
    return live_server.url


@pytest.fixture
def weather(alice, make_card, registry_url) -> str:
    return alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]


ARD_QUERY = {"query": {"text": "weather", "filter": {"tags": ["forecast"]}}, "federation": "none"}


def test_the_a2a_discovery_skill_answers_an_ard_query_with_entries(weather, registry_url):
    answered, _, _ = converse(registry_url, "JSONRPC", [new_data_part(ARD_QUERY)])
    data, text = reply(answered)
    [entry] = data["results"]
    assert (
        entry["identifier"]
        == f"urn:air:{registry_url.split('//')[1].split(':')[0]}:agent:{weather}"
    )
    assert (entry["score"], entry["source"]) == (100, f"{registry_url}/ard")
    assert "Weather Agent" in text


def test_a_bad_ard_query_is_invalid_params_naming_the_path(weather, registry_url):
    bad = {"query": {"text": "weather", "filter": {"nope": "x"}}}
    with pytest.raises(InvalidParamsError) as refused:
        converse(registry_url, "JSONRPC", [new_data_part(bad)])
    problem = refused.value.data["problem"]
    assert problem["errors"][0]["path"] == "query.filter.nope"
    assert problem["errorCode"] == "INVALID_ARGUMENT"


@pytest.mark.apps("mcp_face")
def test_the_mcp_tool_answers_an_ard_query_with_entries(weather, registry_url):
    from tests.protocols.mcp.test_tools import call

    result = call(registry_url, "discover_agents", ARD_QUERY)
    assert result.is_error is False
    [entry] = result.structured_content["results"]
    assert entry["url"] == f"{registry_url}/a2a/agents/{weather}"
    assert "Weather Agent" in result.content[0].text
