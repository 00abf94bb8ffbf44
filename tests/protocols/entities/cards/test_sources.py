"""One entity, many sources: a provider's claim, then the domain's EDP card confirming it,
keeps every fact the provider gave; each source's values with where and when they were read;
a source that disappears takes only its own facts."""

import pytest

from registry.agents.models import Agent
from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


def registration(entities: slice = slice(None)) -> dict:
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    payload["entities"] = payload["entities"][entities]
    return payload


def zinc(anon, **params) -> dict:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    entities = anon.get(f"/v1/resolve/domain/lepetitzinc.fr?{query}").json()["entities"]
    assert len(entities) == 1, entities
    return entities[0]


def test_a_provider_then_the_card_keeps_every_fact_the_provider_gave(
    network, https_server, at, alice, anon
):
    assert alice.post("/v1/provider/register", registration(), format="json").status_code == 201
    publish(https_server, example("edp-v0.1-multi-mcp"))
    response = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert response.status_code == 201, response.content

    entity = zinc(anon)
    assert entity["verification_level"] == 2
    assert (entity["name"], entity["category"]) == ("Le Petit Zinc", "restaurant")
    assert entity["location"]["city"] == "Paris"
    assert entity["location"]["coordinates"] == {"lat": 48.8534, "lng": 2.3328}
    assert entity["timezone"] is None  # looked up for openNow, when hours are known
    # Found by its name, near its place, and its core agent keeps the name too.
    found = anon.get("/v1/resolve?query=Zinc").json()["results"]
    assert [(r["entity"]["name"], r["entity"]["verification_level"]) for r in found] == [
        ("Le Petit Zinc", 2)
    ]
    near = anon.get("/v1/nearby?lat=48.8535&lng=2.3330&radius=30").json()["results"]
    assert [r["entity"]["name"] for r in near] == ["Le Petit Zinc"]
    assert anon.get("/v1/resolve?query=zinc&location=Paris").json()["results"]
    assert Agent.objects.get(pk=entity["id"]).name == "Le Petit Zinc"
    found = anon.get("/discover/agents?entityCategory=restaurant&q=zinc").json()["results"]
    assert [a["name"] for a in found] == ["Le Petit Zinc"]


def test_the_card_then_a_provider_gives_the_same_facts(network, https_server, at, alice, anon):
    publish(https_server, example("edp-v0.1-multi-mcp"))
    alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert zinc(anon)["name"] == "lepetitzinc.fr"  # an EDP 0.1 card names nothing
    alice.post("/v1/provider/register", registration(), format="json")
    entity = zinc(anon)
    assert (entity["name"], entity["location"]["city"]) == ("Le Petit Zinc", "Paris")
    assert Agent.objects.get(pk=entity["id"]).name == "Le Petit Zinc"


def test_sources_true_lists_every_sources_values_with_where_and_when(
    network, https_server, at, alice, anon
):
    alice.post("/v1/provider/register", registration(), format="json")
    publish(https_server, example("edp-v0.1-multi-mcp"))
    alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert "sources" not in zinc(anon)
    sources = zinc(anon, sources="true")["sources"]
    assert [s["kind"] for s in sources] == ["card", "provider-claim"]
    card, claim = sources
    assert card["url"] == https_server.url("/.well-known/entity-card.json", host="lepetitzinc.fr")
    assert card["values"] == {}  # EDP 0.1: MCP associations only
    assert claim["url"] == "https://mcp.booking-provider.com"
    assert (claim["provider"], claim["entityId"], claim["verificationLevel"]) == (
        "booking-provider",
        "lpz-paris-75006",
        2,
    )
    assert claim["values"] == {
        "name": "Le Petit Zinc",
        "category": "restaurant",
        "city": "Paris",
        "country": "FR",
        "coordinates": {"lat": 48.8534, "lng": 2.3328},
    }
    assert claim["readAt"] and card["readAt"]
    found = anon.get("/v1/resolve?query=zinc&sources=true").json()["results"][0]
    assert [s["kind"] for s in found["sources"]] == ["card", "provider-claim"]


def test_the_entitys_own_card_comes_before_a_provider(network, https_server, at, alice, anon):
    card = {
        "schema_version": "0.2.0",
        "domain": "lepetitzinc.fr",
        "entities": [
            {
                "name": "Petit Zinc (own card)",
                "path": "/",
                "mcps": [
                    {
                        "provider": "booking-provider",
                        "endpoint": "https://mcp.booking-provider.com",
                        "entity_id": "lpz-paris-75006",
                        "capabilities": ["reservations"],
                    }
                ],
            }
        ],
    }
    alice.post("/v1/provider/register", registration(), format="json")
    publish(https_server, card)
    assert (
        alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json").status_code == 201
    )
    (found,) = anon.get("/v1/resolve?query=zinc").json()["results"]
    assert found["entity"]["name"] == "Petit Zinc (own card)"
    assert found["entity"]["verification_level"] == 2
    # What the card does not say comes from the next source.
    assert found["entity"]["location"]["city"] == "Paris"
    assert found["entity"]["category"] == "restaurant"


def test_a_dropped_claim_takes_only_its_own_facts(network, https_server, at, alice, anon):
    alice.post("/v1/provider/register", registration(), format="json")
    publish(https_server, example("edp-v0.1-multi-mcp"))
    alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    alice.post("/v1/provider/register", registration(slice(1, None)), format="json")
    entity = zinc(anon, sources="true")
    assert entity["name"] == "lepetitzinc.fr"
    assert entity["location"]["coordinates"] is None
    assert [s["kind"] for s in entity["sources"]] == ["card"]
    # The card's MCP servers are all still there.
    assert len(entity["mcps"]) == 3


@pytest.mark.parametrize("parameter", ["sources=maybe", "open_now=2"], ids=["sources", "open_now"])
def test_bad_flags_are_400_naming_them(anon, parameter):
    response = anon.get(f"/v1/resolve?query=zinc&{parameter}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["path"] == parameter.split("=")[0]
