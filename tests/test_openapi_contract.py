"""What the OpenAPI document promises: the statuses, security, limits and links it gives
are the API's (tests/test_conformance.py checks them against a live server)."""

import pytest
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def document(django_db_blocker):
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def operation(document, method: str, path: str) -> dict:
    return document["paths"][path][method]


def parameter(document, method: str, path: str, name: str) -> dict:
    found = [p for p in operation(document, method, path)["parameters"] if p["name"] == name]
    assert found, f"{method} {path} has no parameter {name}"
    return found[0]["schema"]


def test_public_reads_take_a_key_or_none_and_document_the_401_of_a_wrong_one(document):
    for path in ("/agents", "/agents/{agent_id}", "/discover/agents"):
        read = operation(document, "get", path)
        assert read["security"] == [{}, {"apiKey": []}], path
        assert "401" in read["responses"], path
        assert "403" not in read["responses"], path
    assert operation(document, "post", "/agents")["security"] == [{"apiKey": []}]


def test_the_published_card_reads_no_key_so_documents_no_401(document):
    card = operation(document, "get", "/a2a/agents/{agent_id}")
    assert card["security"] == [{}]
    assert "401" not in card["responses"]
    assert "410" in card["responses"]


def test_the_problems_only_some_operations_give_are_theirs(document):
    assert (
        "409"
        in operation(document, "delete", "/agents/{agent_id}/endpoints/{endpoint_id}")["responses"]
    )
    for method in ("put", "patch", "delete"):
        assert "412" in operation(document, method, "/agents/{agent_id}")["responses"]
    assert "422" in operation(document, "post", "/a2a/agents")["responses"]
    problem = operation(document, "get", "/agents/{agent_id}")["responses"]["410"]
    assert list(problem["content"]) == ["application/problem+json"]


def test_limits_are_in_the_parameters(document):
    assert parameter(document, "get", "/discover/agents", "limit") == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
    }
    assert parameter(document, "get", "/agents/{agent_id}/liveness", "limit")["maximum"] == 500


@pytest.mark.apps("entities")
def test_the_entity_resolution_limits_are_in_the_parameters(document):
    level = parameter(document, "get", "/v1/resolve", "min_verification")
    assert (level["minimum"], level["maximum"]) == (0, 2)
    assert parameter(document, "get", "/v1/resolve", "query")["pattern"] == r"\S"
    assert "pattern" in parameter(document, "get", "/v1/resolve/domain/{domain}", "domain")
    body = operation(document, "post", "/v1/provider/register")["requestBody"]
    assert body["content"]["application/json"]["schema"]["required"] == ["provider", "entities"]


def test_each_create_links_to_what_it_created(document):
    created = operation(document, "post", "/agents")["responses"]["201"]["links"]
    assert created["agents_retrieve"] == {
        "operationId": "agents_retrieve",
        "parameters": {"agent_id": "$response.body#/id"},
    }
    assert {"agents_update", "agents_partial_update", "agents_destroy"} <= set(created)
    endpoint = operation(document, "post", "/agents/{agent_id}/endpoints")["responses"]["201"]
    assert endpoint["links"]["agents_endpoints_destroy"]["parameters"] == {
        "agent_id": "$request.path.agent_id",
        "endpoint_id": "$response.body#/id",
    }
    for path in ("/api-keys", "/subscriptions", "/claims"):
        assert operation(document, "post", path)["responses"]["201"]["links"], path
