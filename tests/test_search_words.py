"""A search word too long to search for (PostgreSQL refuses a tsquery word over 2 KB) is the
same 400 naming q on every face, and no face ever carries a database's message."""

import asyncio
import json

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from registry.agents.text import SEARCH_WORD_MAX_CHARS

LONG = "a" * 3000
MESSAGE = f"q has a word longer than {SEARCH_WORD_MAX_CHARS} characters"


@pytest.fixture
def registry_url(live_server, settings) -> str:
    settings.REGISTRY_BASE_URL = live_server.url
    return live_server.url


def assert_q_problem(problem: dict) -> None:
    assert problem["status"] == 400 and problem["type"] == "/problems/validation-error"
    assert problem["detail"].startswith(MESSAGE)
    assert [e["path"] for e in problem["errors"]] == ["q"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    ["/discover/agents", "/agents", pytest.param("/aap/dealers", marks=pytest.mark.apps("aap"))],
)
def test_http_faces_answer_400_naming_q(anon, make_card, alice, path):
    alice.post("/a2a/agents", {"card": make_card()}, format="json")
    response = anon.get(path, {"q": f"weather {LONG}"})
    assert response.status_code == 400, response.content[:300]
    assert_q_problem(response.json())
    # The longest word still searches.
    assert anon.get(path, {"q": "w" * SEARCH_WORD_MAX_CHARS}).status_code == 200


@pytest.mark.django_db
def test_the_browse_page_answers_400_saying_so(client):
    response = client.get("/browse", {"q": LONG})
    assert response.status_code == 400
    assert f"q: has a word longer than {SEARCH_WORD_MAX_CHARS} characters" in (
        response.content.decode()
    )


@pytest.mark.django_db(transaction=True)
def test_a2a_answers_invalid_params_with_the_problem_over_raw_json_rpc(registry_url):
    from protocols.a2a.models import AgentTask

    for part in ({"data": {"q": LONG}}, {"text": f"find {LONG}"}):
        message = {"role": "ROLE_USER", "messageId": "m", "parts": [part]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        with httpx.Client() as http:
            answered = http.post(
                f"{registry_url}/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"}
            )
        assert "tsquery" not in answered.text and "SELECT" not in answered.text
        error = answered.json()["error"]
        assert error["code"] == -32602
        (info,) = error["data"]  # a2a-sdk's google.rpc.ErrorInfo, the problem its metadata
        assert_q_problem(info["metadata"]["problem"])
    assert not AgentTask.objects.exists()  # an error, no task


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a2a_sdks_client_gets_invalid_params_with_the_problem(registry_url, binding):
    from a2a.helpers.proto_helpers import new_data_part
    from a2a.utils.errors import InvalidParamsError

    from tests.protocols.a2a.face.conftest import converse

    with pytest.raises(InvalidParamsError) as refused:
        converse(registry_url, binding, [new_data_part({"q": LONG})])
    assert_q_problem(refused.value.data["problem"])
    assert "tsquery" not in refused.value.message


@pytest.mark.apps("mcp_face")
@pytest.mark.django_db(transaction=True)
def test_mcp_refuses_the_search_with_the_problem(registry_url):
    async def run():
        async with httpx2.AsyncClient(timeout=30) as http:
            transport = streamable_http_client(f"{registry_url}/mcp", http_client=http)
            async with Client(transport) as client:
                return await client.call_tool("discover_agents", {"q": LONG})

    result = asyncio.run(run())
    assert result.is_error is True
    assert_q_problem(result.structured_content["problem"])
    assert "tsquery" not in json.dumps(result.structured_content)
