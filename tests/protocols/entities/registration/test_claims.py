"""A verified domain claim hands over the domain's entities too, and the domain's entity
card can then be registered by its owner only."""

import pytest

from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


def test_a_verified_claim_gives_the_claimant_the_domains_entities(
    network, https_server, at, alice, bob
):
    publish(https_server, example("edp-v0.1-multi-mcp"))
    registered = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert registered.status_code == 201, registered.content
    ids = [e["id"] for e in registered.json()["entities"]]

    claim = bob.post("/claims", {"domain": at("lepetitzinc.fr")}, format="json").json()
    https_server.route("/.well-known/a2a-registry-claim", 200, {}, claim["token"].encode())
    verified = bob.post(f"/claims/{claim['id']}/verify")
    assert verified.status_code == 200, verified.content
    assert verified.json()["agentsMoved"] == len(ids)
    assert {bob.get(f"/agents/{pk}").json()["owner"] for pk in ids} == {"bob"}

    again = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert again.status_code == 409 and again.json()["type"].endswith("/domain-claimed")
