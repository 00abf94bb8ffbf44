"""Registration by domain through the safe fetcher, validation without storing, and the
entities as core agents (MCP endpoints in discovery, the change feed, native writes)."""

import pytest

from protocols.entities.models import Entity, EntityCard
from registry.agents.models import Agent, Endpoint
from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


def test_register_by_domain_stores_the_card_and_its_mcp_servers(network, https_server, at, alice):
    publish(https_server, example("edp-v0.1-multi-mcp"))
    response = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["domain"], body["format"]) == ("lepetitzinc.fr", "edp-0.1")
    assert body["card_url"] == https_server.url(
        "/.well-known/entity-card.json", host="lepetitzinc.fr"
    )
    (entity,) = body["entities"]
    assert entity["domain"] == "lepetitzinc.fr"
    assert entity["verification_level"] == 1
    assert [(m["provider"], m["priority"], m["order"]) for m in entity["mcps"]] == [
        ("booking-provider", 10, 90),
        ("payment-provider", 10, 90),
        ("delivery-provider", 5, 95),
    ]
    assert entity["mcps"][0]["entity_id"] == "lpz-paris-75006"
    assert entity["mcps"][0]["verification"]["level"] == 1
    agent = Agent.objects.get(pk=entity["id"])
    assert agent.source == "entity-card"
    assert sorted(agent.endpoints.values_list("protocol", "address")) == [
        ("MCP", "https://mcp.booking-provider.com"),
        ("MCP", "https://mcp.delivery-provider.com"),
        ("MCP", "https://mcp.payment-provider.com"),
    ]


def test_entities_are_found_by_core_discovery_and_the_change_feed(
    network, https_server, at, alice, anon
):
    publish(https_server, example("edp-v0.1-multi-mcp"))
    entity_id = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json").json()[
        "entities"
    ][0]["id"]
    found = anon.get("/discover/agents?protocol=MCP&capability=delivery_tracking").json()
    assert [a["id"] for a in found["results"]] == [entity_id]
    assert found["results"][0]["entity"]["verificationLevel"] == 1
    feed = anon.get("/discover/agents?updated_since=2000-01-01T00:00:00Z").json()
    assert entity_id in [a["id"] for a in feed["results"]]
    facts = anon.get("/discover/agents?verificationLevel=1&entityFormat=edp-0.1").json()
    assert [a["id"] for a in facts["results"]] == [entity_id]


def test_registering_again_updates_the_entity(network, https_server, at, alice):
    card = example("edp-v0.1-multi-mcp")
    publish(https_server, card)
    first = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json").json()
    card["mcps"] = card["mcps"][:1]
    publish(https_server, card)
    response = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert response.status_code == 200
    (entity,) = response.json()["entities"]
    assert entity["id"] == first["entities"][0]["id"]
    assert len(entity["mcps"]) == 1
    assert Endpoint.objects.filter(agent_id=entity["id"]).count() == 1


def test_a_card_for_another_domain_is_refused_and_nothing_is_stored(
    network, https_server, at, alice
):
    publish(https_server, example("edp-v0.1-minimal"))  # says mybusiness.com
    response = alice.post("/entities", {"domain": at("other.example")}, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "/problems/invalid-entity-card"
    assert problem["errors"] == [
        {"path": "domain", "message": "is mybusiness.com, but the card was served by other.example"}
    ]
    assert not EntityCard.objects.exists() and not Agent.objects.exists()


def test_an_a2e_card_is_also_looked_for_at_a2e_json(network, https_server, at, alice):
    card = example("a2e-restaurant")
    card["a2e"] = "0.1"
    publish(https_server, card, "/.well-known/a2e.json")
    response = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["format"] == "a2e-0.1"
    assert body["card_url"].endswith("/.well-known/a2e.json")
    assert body["entities"][0]["category"] == "restaurant"


def test_no_card_at_the_domain_lists_each_address_tried(network, https_server, at, alice):
    response = alice.post("/entities", {"domain": at("mybusiness.com")}, format="json")
    assert response.status_code == 400
    problem = response.json()
    assert problem["type"] == "/problems/entity-card-not-found"
    assert [e["path"].rsplit("/", 1)[1] for e in problem["errors"]] == [
        "entity-card.json",
        "a2e.json",
    ]


def test_registration_needs_a_key_and_a_valid_domain(anon, alice):
    assert anon.post("/entities", {"domain": "x.example"}, format="json").status_code == 401
    response = alice.post("/entities", {"domain": "https://x.example/"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "domain"


def test_private_addresses_are_not_fetched(settings, alice):
    settings.FETCH_ALLOWED_HOSTS = []
    response = alice.post("/entities", {"domain": "localhost"}, format="json")
    assert response.status_code == 400
    assert "not a public address" in response.json()["errors"][0]["message"]


def test_an_edp_0_2_card_stores_one_entity_per_path(network, https_server, at, alice, anon):
    publish(https_server, example("edp-v0.2-multi-location"))
    body = alice.post("/entities", {"domain": at("acme-bistro.com")}, format="json").json()
    assert [(e["name"], e["path"]) for e in body["entities"]] == [
        ("Acme Bistro Paris", "/paris"),
        ("Acme Bistro Lyon", "/lyon"),
    ]
    lyon = anon.get("/v1/resolve/domain/acme-bistro.com?path=/lyon").json()
    assert [e["name"] for e in lyon["entities"]] == ["Acme Bistro Lyon"]
    assert lyon["entities"][0]["location"]["coordinates"] == {"lat": 45.764, "lng": 4.8357}
    assert len(anon.get("/v1/resolve/domain/acme-bistro.com").json()["entities"]) == 2
    assert anon.get("/v1/resolve/domain/acme-bistro.com?path=/nice").status_code == 404
    assert anon.get("/v1/resolve/domain/unknown.example").status_code == 404


def test_validate_answers_the_report_or_every_problem(anon):
    response = anon.post(
        "/entities/validate", {"card": example("edp-v0.2-multi-location")}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["format"] == "edp-0.2"
    assert [e["path"] for e in response.json()["entities"]] == ["/paris", "/lyon"]
    response = anon.post("/entities/validate", {"card": example("a2e-restaurant")}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"path": "card.a2e", "message": 'must be "0.1"'}]
    response = anon.post(
        "/entities/validate",
        {"card": example("edp-v0.1-minimal"), "domain": "other.example"},
        format="json",
    )
    assert response.json()["errors"][0]["path"] == "card.domain"
    assert anon.post("/entities/validate", {}, format="json").json()["errors"] == [
        {"path": "card", "message": "is required"}
    ]
    assert not Entity.objects.exists()


def test_validate_reads_edp_coordinates_on_an_a2e_card_and_says_so(anon):
    card = example("a2e-restaurant")
    card["a2e"] = "0.1"
    card["entity"]["location"] = {"city": "Paris", "coordinates": {"lat": 48.85, "lng": 2.33}}
    answer = anon.post("/entities/validate", {"card": card}, format="json").json()
    assert answer["entities"][0]["location"] == {"city": "Paris", "lat": 48.85, "lng": 2.33}
    assert answer["warnings"][0]["path"] == "entity.location.coordinates"
    assert "location.lat and location.lng" in answer["warnings"][0]["message"]


def test_registering_an_a2e_card_with_edp_coordinates_keeps_them(network, https_server, at, alice):
    card = example("a2e-restaurant")
    card["a2e"] = "0.1"
    card["entity"]["location"] = {"city": "Paris", "coordinates": {"lat": 48.85, "lng": 2.33}}
    publish(https_server, card)
    body = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json").json()
    assert body["warnings"][0]["path"] == "entity.location.coordinates"
    assert body["entities"][0]["location"]["coordinates"] == {"lat": 48.85, "lng": 2.33}


def test_native_writes_may_not_change_an_entitys_mcp_servers(network, https_server, at, alice):
    publish(https_server, example("edp-v0.1-minimal"))
    entity_id = alice.post("/entities", {"domain": at("mybusiness.com")}, format="json").json()[
        "entities"
    ][0]["id"]
    response = alice.patch(
        f"/agents/{entity_id}", {"capabilities": [{"name": "anything"}]}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["type"] == "/problems/card-managed"


def test_an_entity_from_its_domains_card_is_described_by_the_card_and_deleted_by_admins(
    network, https_server, at, alice, admin_client
):
    # The first key to register someone's domain does not get to rewrite what it says.
    publish(https_server, example("edp-v0.1-minimal"))
    registered = alice.post("/entities", {"domain": at("mybusiness.com")}, format="json")
    entity_id = registered.json()["entities"][0]["id"]
    before = alice.get(f"/agents/{entity_id}").json()
    endpoint = {"name": "x", "transport": "Http", "protocol": "A2A"}
    endpoint["address"] = "https://elsewhere.example/a2a"
    refused = [
        alice.patch(f"/agents/{entity_id}", {"name": "Mine now"}, format="json"),
        alice.patch(f"/agents/{entity_id}", {"description": "Call me"}, format="json"),
        alice.post(f"/agents/{entity_id}/endpoints", endpoint, format="json"),
        alice.delete(f"/agents/{entity_id}/endpoints/{before['endpoints'][0]['id']}"),
        admin_client.patch(f"/agents/{entity_id}", {"name": "Admin's"}, format="json"),
    ]
    for response in refused:
        assert response.status_code == 409, response.content
        assert response.json()["type"] == "/problems/card-managed"
    deleted = alice.delete(f"/agents/{entity_id}")
    assert deleted.status_code == 403
    after = alice.get(f"/agents/{entity_id}").json()
    assert (after["name"], after["description"]) == (before["name"], before["description"])
    assert after["endpoints"] == before["endpoints"]
    # An admin deletes it (the owner who proved the domain will, with domain claims).
    assert admin_client.delete(f"/agents/{entity_id}").status_code == 204


def test_the_admin_lists_entities(network, https_server, at, alice, admin_user, client):
    publish(https_server, example("edp-v0.1-minimal"))
    alice.post("/entities", {"domain": at("mybusiness.com")}, format="json")
    client.force_login(admin_user)
    page = client.get("/admin/entities/entity/")
    assert page.status_code == 200
    assert b"mybusiness.com" in page.content
    assert client.get("/admin/entities/entitycard/").status_code == 200
