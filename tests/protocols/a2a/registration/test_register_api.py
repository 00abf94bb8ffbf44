"""Registering agents by A2A card and serving the card back exactly as published."""

import copy
import json
import uuid

import pytest

from protocols.a2a.models import CardDocument
from registry.agents.models import Agent
from tests.protocols.a2a.sample_cards import (
    SNAKE_CARD,
    V03_CARD,
    ec_key_pair,
    hybrid_card,
    signature_verifies,
    signed_card,
)

pytestmark = pytest.mark.django_db


def register(client, card):
    return client.post("/a2a/agents", {"card": card}, format="json")


def served(client, agent_id) -> dict:
    response = client.get(f"/a2a/agents/{agent_id}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content)


def test_card_registration_returns_201_location_and_the_mapped_agent(alice, make_card):
    response = register(alice, make_card())
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"] == f"/a2a/agents/{body['id']}"
    assert body["name"] == "Weather Agent"
    assert body["version"] == "2.1.0"
    assert body["source"] == "a2a-card"
    assert body["capabilities"] == [
        {
            "id": body["capabilities"][0]["id"],
            "name": "Forecast",
            "description": "Forecast for a city.",
            "tags": ["weather", "forecast"],
        }
    ]
    [endpoint] = body["endpoints"]
    assert endpoint["protocol"] == "A2A"
    assert endpoint["address"] == "https://weather.example.com/a2a/v1"
    assert endpoint["protocolMetadata"]["protocolBinding"] == "JSONRPC"
    assert endpoint["protocolMetadata"]["capabilities"] == {
        "streaming": True,
        "pushNotifications": False,
    }
    assert endpoint["protocolMetadata"]["provider"]["organization"] == "Example Weather Co"
    assert body["card"]["specVersion"] == "1.0"
    assert body["card"]["signed"] is False


def test_signed_card_with_unknown_members_round_trips_and_still_verifies(alice, anon):
    private, public = ec_key_pair()
    card = signed_card(
        private,
        extra={"x-vendor": {"tier": "gold", "weights": [1, 2.5, 10**20]}, "zzz": None},
    )
    assert signature_verifies(card, public)
    response = register(alice, card)
    assert response.status_code == 201, response.content
    assert response.json()["card"]["signed"] is True

    got = served(anon, response.json()["id"])
    assert got == card
    assert list(got) == list(card)
    assert got["signatures"] == card["signatures"]
    assert signature_verifies(got, public)


def test_a_tampered_card_does_not_verify(alice, anon):
    private, public = ec_key_pair()
    card = signed_card(private)
    card["name"] = "Evil Twin"
    response = register(alice, card)
    assert response.status_code == 201
    assert not signature_verifies(served(anon, response.json()["id"]), public)


def test_v03_card_round_trips_and_maps_its_interfaces(alice, anon):
    response = register(alice, V03_CARD)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["card"]["specVersion"] == "0.3"
    assert [
        (e["address"], e["protocolMetadata"]["protocolBinding"]) for e in body["endpoints"]
    ] == [
        ("https://translator.example.org/a2a", "JSONRPC"),
        ("https://translator.example.org/rest", "HTTP+JSON"),
    ]
    assert body["capabilities"][0]["name"] == "Translate"
    assert served(anon, body["id"]) == V03_CARD


def test_hybrid_card_from_an_sdk_server_round_trips(alice, anon):
    card = hybrid_card()
    assert "url" in card and "supportedInterfaces" in card  # really a hybrid
    response = register(alice, card)
    assert response.status_code == 201, response.content
    assert response.json()["card"]["specVersion"] == "hybrid"
    assert served(anon, response.json()["id"]) == card


def test_snake_case_card_round_trips_with_explicit_defaults(alice, anon):
    response = register(alice, SNAKE_CARD)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["card"]["naming"] == "snake_case"
    assert body["endpoints"][0]["protocolMetadata"]["protocolBinding"] == "HTTP+JSON"
    got = served(anon, body["id"])
    assert got == SNAKE_CARD
    assert got["supported_interfaces"][0]["tenant"] == ""
    assert got["skills"][0]["examples"] == []
    assert isinstance(got["capabilities"]["extensions"][0]["params"]["limit"], int)


def test_put_replaces_the_card(alice, anon, make_card):
    agent_id = register(alice, make_card()).json()["id"]
    new_card = make_card(name="Weather Agent 2", version="3.0.0")
    response = alice.put(f"/a2a/agents/{agent_id}", {"card": new_card}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "Weather Agent 2"
    assert served(anon, agent_id) == new_card
    assert Agent.objects.count() == 1


def test_skill_ids_survive_and_capability_ids_stay_stable_across_card_updates(alice, make_card):
    first = register(alice, make_card()).json()
    card = make_card()
    card["skills"][0]["description"] = "Better forecasts."
    second = alice.put(f"/a2a/agents/{first['id']}", {"card": card}, format="json").json()
    assert second["capabilities"][0]["id"] == first["capabilities"][0]["id"]
    assert second["capabilities"][0]["description"] == "Better forecasts."


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1, 2], "not an array"),
        ({"cards": {}}, 'no "card" member'),
        ({"card": "text"}, "must be a JSON object"),
    ],
)
def test_bodies_without_a_card_object_are_400(alice, body, message):
    response = alice.post("/a2a/agents", body, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert message in response.json()["detail"]
    assert Agent.objects.count() == 0


def test_a_non_json_body_is_400(alice):
    response = alice.post("/a2a/agents", "name=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["detail"]


def test_duplicate_keys_in_the_body_are_400_with_their_path(alice, make_card):
    raw = json.dumps({"card": make_card()})
    raw = raw.replace('"name": "Weather Agent"', '"name": "Weather Agent", "name": "Other"', 1)
    response = alice.post("/a2a/agents", raw, content_type="application/json")
    assert response.status_code == 400
    assert {"path": "card.name", "message": "duplicate key"} in response.json()["errors"]
    assert Agent.objects.count() == 0


def test_an_invalid_card_reports_every_problem_by_path_and_changes_nothing(alice, make_card):
    card = make_card(description="", defaultInputModes=[])
    card["skills"] = [
        {"id": "a", "name": "A", "description": "d", "tags": []},
        {"id": "a", "name": "B", "description": "d", "tags": ["x"]},
    ]
    card["supportedInterfaces"][0]["url"] = "http://weather.example.com/a2a"
    card["securityRequirements"] = [{"schemes": {"oauth": {"list": []}}}]
    response = register(alice, card)
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "/problems/invalid-card"
    paths = {e["path"] for e in body["errors"]}
    assert {
        "description",
        "defaultInputModes",
        "skills[0].tags",
        "skills[1].id",
        "supportedInterfaces[0].url",
        "securityRequirements[0].oauth",
    } <= paths
    assert Agent.objects.count() == 0
    assert CardDocument.objects.count() == 0


def test_card_of_an_unknown_agent_or_a_malformed_id_is_404(anon):
    response = anon.get(f"/a2a/agents/{uuid.uuid4()}")
    assert response.status_code == 404
    assert response.json()["type"] == "/problems/not-found"
    response = anon.get("/a2a/agents/not-a-uuid")
    assert response.status_code == 404
    assert response.json()["type"] == "/problems/not-found"


def test_registering_needs_a_key(anon, make_card):
    response = register(anon, make_card())
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_only_the_owner_or_an_admin_may_replace_a_card(alice, bob, admin_client, make_card):
    agent_id = register(alice, make_card()).json()["id"]
    response = bob.put(f"/a2a/agents/{agent_id}", {"card": make_card(name="Hijack")}, format="json")
    assert response.status_code == 403
    assert Agent.objects.get(pk=agent_id).name == "Weather Agent"
    response = admin_client.put(
        f"/a2a/agents/{agent_id}", {"card": make_card(name="Fixed")}, format="json"
    )
    assert response.status_code == 200


def test_after_an_owner_change_the_old_owner_cannot_rewrite_the_agent_by_card(
    alice, bob, admin_client, make_card
):
    agent_id = register(alice, make_card()).json()["id"]
    moved = admin_client.patch(f"/agents/{agent_id}", {"owner": "bob"}, format="json")
    assert moved.status_code == 200, moved.content

    again = register(alice, make_card(name="Hijack"))

    assert again.status_code == 201  # a new agent of alice's, not bob's rewritten
    assert again.json()["id"] != agent_id
    assert Agent.objects.get(pk=agent_id).name == "Weather Agent"
    assert register(bob, make_card(name="Bob's now")).status_code == 200
    assert Agent.objects.get(pk=agent_id).name == "Bob's now"


def test_moving_an_agent_to_an_owner_with_the_same_card_is_409_and_changes_nothing(
    alice, bob, admin_client, make_card
):
    alices = register(alice, make_card()).json()["id"]
    register(bob, make_card())

    response = admin_client.patch(f"/agents/{alices}", {"owner": "bob"}, format="json")

    assert response.status_code == 409
    assert response.json()["errors"] == [
        {"path": "owner", "message": "has an agent with this agent's preferred interface"}
    ]
    assert Agent.objects.get(pk=alices).owner == "alice"


def test_an_owner_change_in_the_admin_moves_the_card_identity_too(
    alice, bob, client, django_user_model, make_card
):
    agent_id = register(alice, make_card()).json()["id"]
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-123456789"))
    form = {"owner": "bob", "_save": "Save"}
    for prefix in ("endpoints", "capabilities"):
        form |= {f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"}

    response = client.post(f"/admin/registry/agent/{agent_id}/change/", form)

    assert response.status_code == 302, response.content[:2000]
    assert Agent.objects.get(pk=agent_id).owner == "bob"
    assert register(alice, make_card(name="Hijack")).status_code == 201
    assert register(bob, make_card(name="Bob's")).json()["id"] == agent_id


def test_native_rename_of_an_unsigned_card_agent_shows_in_its_card(alice, anon, make_card):
    card = make_card()
    agent_id = register(alice, card).json()["id"]
    assert alice.patch(f"/agents/{agent_id}", {"name": "Renamed"}, format="json").status_code == 200
    got = served(anon, agent_id)
    assert got["name"] == "Renamed"
    assert list(got) == list(card)
    assert {k: v for k, v in got.items() if k != "name"} == {
        k: v for k, v in card.items() if k != "name"
    }


def test_native_changes_to_a_signed_card_agent_are_refused(alice, anon):
    private, _ = ec_key_pair()
    card = signed_card(private)
    agent_id = register(alice, card).json()["id"]
    response = alice.patch(f"/agents/{agent_id}", {"name": "Renamed"}, format="json")
    assert response.status_code == 409
    assert response.json()["type"] == "/problems/card-managed"
    assert served(anon, agent_id) == card
    assert Agent.objects.get(pk=agent_id).name == card["name"]


def test_native_capability_changes_to_a_card_agent_are_refused(alice, make_card):
    agent_id = register(alice, make_card()).json()["id"]
    response = alice.patch(f"/agents/{agent_id}", {"capabilities": [{"name": "x"}]}, format="json")
    assert response.status_code == 409
    assert Agent.objects.get(pk=agent_id).capabilities.get().name == "Forecast"


def test_the_stored_document_is_independent_of_the_request_object(alice, make_card):
    card = make_card()
    before = copy.deepcopy(card)
    register(alice, card)
    assert card == before


def test_a_card_name_longer_than_the_registry_stores_is_400_not_a_database_error(alice, make_card):
    response = register(alice, make_card(name="n" * 201))
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"path": "name", "message": "must be at most 200 characters"}
    ]
    assert Agent.objects.count() == 0


def test_a_long_protocol_binding_still_makes_an_endpoint_name_that_fits(alice, make_card):
    card = make_card()
    card["supportedInterfaces"][0]["protocolBinding"] = "X" * 300
    response = register(alice, card)
    assert response.status_code == 201, response.content
    assert len(response.json()["endpoints"][0]["name"]) <= 200


@pytest.mark.parametrize(
    ("owner", "message"),
    [
        ("o" * 201, "Ensure this field has no more than 200 characters."),
        ({"team": "ops"}, "Not a valid string."),
    ],
)
def test_an_owner_the_registry_cannot_store_is_400(admin_client, make_card, owner, message):
    response = admin_client.post(
        "/a2a/agents", {"card": make_card(), "owner": owner}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [{"path": "owner", "message": message}]
    assert Agent.objects.count() == 0


def test_a_new_card_renames_other_endpoints_it_collides_with_to_free_names(
    alice, native_payload, make_card
):
    mcp = {"transport": "Http", "protocol": "MCP", "address": "https://tools.example.com/mcp"}
    payload = native_payload(endpoints=[{**mcp, "name": "jsonrpc"}, {**mcp, "name": "jsonrpc-mcp"}])
    agent_id = alice.post("/agents", payload, format="json").json()["id"]
    response = alice.put(f"/a2a/agents/{agent_id}", {"card": make_card()}, format="json")
    assert response.status_code == 200, response.content
    names = [e["name"] for e in response.json()["endpoints"]]
    assert sorted(names) == ["jsonrpc", "jsonrpc-mcp", "jsonrpc-mcp-2"]


def test_a_card_endpoint_has_the_one_default_heartbeat_interval_as_a_native_one(
    alice, make_card, native_payload
):
    # The registry's one default (60 s, 2.5 intervals of grace) applies to both: a card names
    # no interval, and a native endpoint that sets none.
    from registry.agents.models import DEFAULT_HEARTBEAT_SECONDS, Endpoint

    card_agent = register(alice, make_card()).json()
    payload = native_payload()
    payload["endpoints"][0].pop("heartbeatIntervalSeconds", None)
    native_agent = alice.post("/agents", payload, format="json").json()

    for agent in (card_agent, native_agent):
        endpoint = agent["endpoints"][0]
        assert endpoint["heartbeatIntervalSeconds"] is None
        stored = Endpoint.objects.get(id=endpoint["id"])
        assert stored.liveness_grace.total_seconds() == DEFAULT_HEARTBEAT_SECONDS * 2.5
