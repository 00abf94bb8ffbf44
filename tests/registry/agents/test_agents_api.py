"""The native API: POST/GET/PUT/PATCH/DELETE /agents and endpoint management."""

import uuid

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.apps("a2a")
def test_register_with_the_documented_payload_returns_201_with_ids_and_location(
    alice, native_payload
):
    response = alice.post("/agents", native_payload(), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    uuid.UUID(body["id"])
    assert response["Location"] == f"/agents/{body['id']}"
    assert body["name"] == "Summarizer"
    assert body["owner"] == "alice"
    [capability] = body["capabilities"]
    uuid.UUID(capability["id"])
    assert capability["name"] == "summarize"
    assert capability["tags"] == ["nlp"]
    [endpoint] = body["endpoints"]
    uuid.UUID(endpoint["id"])
    assert endpoint["transport"] == "Http"
    assert endpoint["protocol"] == "A2A"
    assert endpoint["address"] == "https://summarizer.example.com/a2a"
    assert endpoint["livenessModel"] == "Persistent"
    assert endpoint["heartbeatIntervalSeconds"] == 30
    assert body["cardUrl"].endswith(f"/a2a/agents/{body['id']}")


def test_get_returns_the_registered_agent(alice, anon, native_payload):
    created = alice.post("/agents", native_payload(), format="json").json()
    response = anon.get(f"/agents/{created['id']}")
    assert response.status_code == 200
    assert response.json() == created


def test_put_replaces_the_agent_and_keeps_ids_of_named_parts(alice, native_payload):
    created = alice.post("/agents", native_payload(), format="json").json()
    replacement = native_payload(
        name="Summarizer Pro",
        description="Summaries of long documents.",
        capabilities=[
            {"name": "summarize", "tags": ["nlp", "text"]},
            {"name": "translate", "description": "Translation", "tags": ["nlp"]},
        ],
    )
    response = alice.put(f"/agents/{created['id']}", replacement, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == "Summarizer Pro"
    assert [c["name"] for c in body["capabilities"]] == ["summarize", "translate"]
    assert body["capabilities"][0]["id"] == created["capabilities"][0]["id"]
    assert body["capabilities"][0]["tags"] == ["nlp", "text"]
    assert body["endpoints"][0]["id"] == created["endpoints"][0]["id"]


def test_put_without_capabilities_removes_them(alice, native_payload):
    created = alice.post("/agents", native_payload(), format="json").json()
    response = alice.put(
        f"/agents/{created['id']}", {"name": "Bare", "endpoints": []}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["capabilities"] == []
    assert response.json()["endpoints"] == []


def test_patch_changes_only_what_it_names(alice, native_payload):
    created = alice.post("/agents", native_payload(description="Old"), format="json").json()
    response = alice.patch(f"/agents/{created['id']}", {"name": "Renamed"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == "Renamed"
    assert body["description"] == "Old"
    assert body["capabilities"] == created["capabilities"]


def test_delete_retires_the_agent_so_others_get_410(alice, anon, native_payload):
    created = alice.post("/agents", native_payload(), format="json").json()
    assert alice.delete(f"/agents/{created['id']}").status_code == 204
    assert anon.get(f"/agents/{created['id']}").status_code == 410
    assert alice.get(f"/agents/{created['id']}").json()["status"] == "retired"


def test_add_and_remove_an_endpoint(alice, native_payload):
    created = alice.post("/agents", native_payload(), format="json").json()
    response = alice.post(
        f"/agents/{created['id']}/endpoints",
        {
            "name": "jobs",
            "transport": "Amqp",
            "protocol": "A2A",
            "address": "agents.summarizer.jobs",
            "livenessModel": "Ephemeral",
            "ttlSeconds": 300,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    endpoint = response.json()
    assert response["Location"] == f"/agents/{created['id']}/endpoints/{endpoint['id']}"
    assert endpoint["ttlSeconds"] == 300
    agent = alice.get(f"/agents/{created['id']}").json()
    assert [e["name"] for e in agent["endpoints"]] == ["primary", "jobs"]

    assert alice.delete(f"/agents/{created['id']}/endpoints/{endpoint['id']}").status_code == 204
    agent = alice.get(f"/agents/{created['id']}").json()
    assert [e["name"] for e in agent["endpoints"]] == ["primary"]


def test_a_second_endpoint_with_a_taken_name_is_refused(alice, native_payload):
    created = alice.post("/agents", native_payload(), format="json").json()
    response = alice.post(
        f"/agents/{created['id']}/endpoints",
        native_payload()["endpoints"][0],
        format="json",
    )
    assert response.status_code == 409
    assert response.json()["errors"] == [
        {"path": "name", "message": "an endpoint of this agent already has this name"}
    ]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"name": ""}, "name"),
        ({"capabilities": [{"tags": ["x"]}]}, "capabilities[0].name"),
        (
            {
                "endpoints": [
                    {
                        "name": "e",
                        "transport": "Pigeon",
                        "protocol": "A2A",
                        "address": "https://x.example",
                    }
                ]
            },
            "endpoints[0].transport",
        ),
        (
            {
                "endpoints": [
                    {
                        "name": "e",
                        "transport": "Http",
                        "protocol": "A2A",
                        "address": "ftp://x.example",
                    }
                ]
            },
            "endpoints[0].address",
        ),
        (
            {
                "endpoints": [
                    {
                        "name": "e",
                        "transport": "Http",
                        "protocol": "A2A",
                        "address": "https://x.example",
                        "livenessModel": "Persistent",
                        "ttlSeconds": 5,
                    }
                ]
            },
            "endpoints[0].ttlSeconds",
        ),
        (
            {
                "endpoints": [
                    {
                        "name": "e",
                        "transport": "Http",
                        "protocol": "Generic",
                        "address": "https://x.example",
                        "protocolMetadata": [1],
                    }
                ]
            },
            "endpoints[0].protocolMetadata",
        ),
    ],
)
def test_invalid_native_payloads_are_400_problems_naming_the_field(
    alice, native_payload, change, path
):
    from registry.agents.models import Agent

    response = alice.post("/agents", native_payload(**change), format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == 400
    assert body["type"] == "/problems/validation-error"
    assert path in [e["path"] for e in body["errors"]]
    assert Agent.objects.count() == 0


def test_a_tag_longer_than_its_index_once_lower_cased_is_400(alice, native_payload):
    # "\u0130" lower-cases to two characters: 150 of them make a 300-character indexed tag.
    capabilities = [{"name": "summarize", "tags": ["nlp", "\u0130" * 150]}]
    response = alice.post("/agents", native_payload(capabilities=capabilities), format="json")
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == ["capabilities[0].tags[1]"]


@pytest.mark.parametrize("missing", ["transport", "address", "name", "protocol"])
def test_patch_with_an_endpoint_lacking_a_member_is_a_400_naming_it(alice, native_payload, missing):
    agent = alice.post("/agents", native_payload(), format="json").json()
    endpoint = {k: v for k, v in native_payload()["endpoints"][0].items() if k != missing}
    response = alice.patch(f"/agents/{agent['id']}", {"endpoints": [endpoint]}, format="json")
    assert response.status_code == 400
    assert {"path": f"endpoints[0].{missing}", "message": "This field is required."} in (
        response.json()["errors"]
    )
    capability = alice.patch(
        f"/agents/{agent['id']}", {"capabilities": [{"tags": ["x"]}]}, format="json"
    )
    assert capability.status_code == 400
    assert capability.json()["errors"][0]["path"] == "capabilities[0].name"
