"""One rule per kind of query parameter, on every list endpoint: out-of-range values are
400s with the range, enum errors list the allowed values, unknown parameters are 400s."""

import uuid

import pytest

pytestmark = pytest.mark.django_db

LISTS = ["/discover/agents", "/agents"]


def problem_of(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/problem+json"
    return response.json()


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("limit", ["1000", "101", "0", "-1", "ten", "2.5"])
def test_limit_out_of_range_is_400_with_the_range(anon, path, limit):
    body = problem_of(anon.get(path, {"limit": limit}))
    assert body["errors"] == [{"path": "limit", "message": "must be a whole number from 1 to 100"}]


@pytest.mark.parametrize("path", LISTS)
def test_unknown_parameters_are_400_naming_them(anon, path):
    body = problem_of(anon.get(path, {"tags": "nlp", "protocl": "A2A", "limit": "5"}))
    assert [e["path"] for e in body["errors"]] == ["protocl", "tags"]
    assert "protocl, tags" in body["detail"]
    assert "protocol" in body["detail"]  # the parameters it takes are listed


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("protocol", "SOAP", "A2A, MCP, ACP, Generic"),
        ("transport", "Carrier", "Http, Amqp, AzureServiceBus"),
        ("liveOnly", "yes", "true, false"),
        ("sort", "oldest", "relevance, recent, name, trust"),
    ],
)
def test_enum_errors_list_the_allowed_values(anon, name, value, allowed):
    body = problem_of(anon.get("/discover/agents", {name: value}))
    [error] = body["errors"]
    assert error["path"] == name
    assert error["message"] == f"must be one of {allowed}, not '{value}'"


def test_the_liveness_history_takes_limit_1_to_500_and_nothing_else(alice, anon, native_payload):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    path = f"/agents/{agent_id}/liveness"
    assert anon.get(path, {"limit": "500"}).status_code == 200
    body = problem_of(anon.get(path, {"limit": "501"}))
    assert body["errors"] == [{"path": "limit", "message": "must be a whole number from 1 to 500"}]
    body = problem_of(anon.get(path, {"since": "yesterday"}))
    assert body["errors"][0]["path"] == "since"
    assert problem_of(anon.get(f"/agents/{uuid.uuid4()}/liveness"), 404)
