"""ListTasks's parameters on the registry's own agent (``/a2a/rest``, ``/a2a/jsonrpc``) and on
a queue endpoint's relay (``/a2a/queue/<id>``): a bad value is a 400 problem (HTTP+JSON) or
JSON-RPC invalid params naming it, never a 500 nor an exception's text."""

import json

import pytest

from protocols.a2a.face.list_params import MAX_PAGE_SIZE

BAD_QUERIES = [
    ("status=99", "status"),
    ("status=TASK_STATE_NONSENSE", "status"),
    ("pageSize=-5", "pageSize"),
    ("pageSize=0", "pageSize"),
    (f"pageSize={MAX_PAGE_SIZE + 1}", "pageSize"),
    ("pageSize=abc", "pageSize"),
    ("contextId=%00", "contextId"),
    ("pageToken=a%00b", "pageToken"),
    ("historyLength=-1", "historyLength"),
]
BAD_PARAMS = [
    ({"status": 99}, "status"),
    ({"pageSize": -5}, "pageSize"),
    ({"pageSize": 1000}, "pageSize"),
    ({"historyLength": -2}, "historyLength"),
]
CALLERS = ["", "registry-key", "Bearer agent-token"]


@pytest.fixture
def bases(alice, native_payload):
    """Where ListTasks is served: the registry's agent and a queue endpoint's relay."""
    payload = native_payload(
        endpoints=[{"name": "q", "transport": "Amqp", "protocol": "A2A", "address": "jobs.q"}]
    )
    endpoint = alice.post("/agents", payload, format="json").json()["endpoints"][0]["id"]
    return {
        "agent": ("/a2a/rest", "/a2a/jsonrpc"),
        "relay": (f"/a2a/queue/{endpoint}", f"/a2a/queue/{endpoint}"),
    }


def credentials(caller: str, alice) -> dict:
    if caller == "registry-key":
        return {"HTTP_AUTHORIZATION": alice._credentials["HTTP_AUTHORIZATION"]}
    return {"HTTP_AUTHORIZATION": caller} if caller else {}


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["agent", "relay"])
@pytest.mark.parametrize("caller", CALLERS)
def test_bad_list_queries_are_400_problems_naming_the_parameter(
    client, alice, bases, where, caller
):
    rest, _ = bases[where]
    for query, name in BAD_QUERIES:
        response = client.get(
            f"{rest}/tasks?{query}", HTTP_A2A_VERSION="1.0", **credentials(caller, alice)
        )
        assert response.status_code == 400, (query, response.content)
        assert response["Content-Type"] == "application/problem+json", query
        assert response.json()["errors"][0]["path"] == name, query
    good = client.get(f"{rest}/tasks?pageSize=10", HTTP_A2A_VERSION="1.0")
    assert good.status_code == 200 and good.json()["tasks"] == []


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["agent", "relay"])
@pytest.mark.parametrize("caller", CALLERS)
def test_bad_list_params_are_invalid_params_naming_the_parameter(
    client, alice, bases, where, caller
):
    _, rpc = bases[where]
    for params, name in BAD_PARAMS:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
        response = client.post(
            rpc,
            json.dumps(body),
            content_type="application/json",
            HTTP_A2A_VERSION="1.0",
            **credentials(caller, alice),
        )
        error = response.json()["error"]
        assert error["code"] == -32602, (params, error)
        assert error["message"].startswith(f"Invalid params: {name} "), error
        for text in ("Enum", "indexing", "exception", "Traceback"):
            assert text not in error["message"]
