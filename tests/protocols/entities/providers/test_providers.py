"""EDP providers, verification levels, and signed JWTs made with a fresh P-256 key."""

import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from protocols.entities.models import Entity
from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


def key_pair() -> tuple[ec.EllipticCurvePrivateKey, str]:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, pem


def registration(public_key: str | None = None) -> dict:
    payload = example("edp-v0.1-provider-registration")
    if public_key is None:
        del payload["provider"]["public_key"]
    else:
        payload["provider"]["public_key"] = public_key
    return payload


def levels(anon, domain: str) -> dict:
    response = anon.get(f"/v1/resolve/domain/{domain}")
    return {e["name"]: e["verification_level"] for e in response.json()["entities"]}


def test_the_official_registration_is_accepted_with_a_warning_for_its_placeholder_key(alice, anon):
    response = alice.post(
        "/v1/provider/register", example("edp-v0.1-provider-registration"), format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["warnings"][0]["path"] == "provider.public_key"
    assert [e["entity_id"] for e in body["entities"]] == [
        "brasserie-lipp-75006",
        "cafe-flore-75006",
        "lpz-paris-75006",
    ]
    # Claims alone: level 0, each an entity (and a core agent) of its own.
    assert levels(anon, "cafedeflore.fr") == {"Café de Flore": 0}
    found = anon.get("/v1/resolve?query=brasserie").json()["results"]
    assert [(r["entity"]["name"], r["entity"]["verification_level"]) for r in found] == [
        ("Brasserie Lipp", 0)
    ]
    assert found[0]["mcps"][0]["endpoint"] == "https://mcp.booking-provider.com"


def test_only_the_key_that_registered_a_provider_may_change_it(alice, bob, anon):
    assert alice.post("/v1/provider/register", registration(), format="json").status_code == 201
    response = bob.post("/v1/provider/register", registration(), format="json")
    assert response.status_code == 403
    assert response.json()["errors"] == [
        {"path": "provider.id", "message": "is registered by another owner"}
    ]
    assert anon.post("/v1/provider/register", registration(), format="json").status_code == 401


def test_an_invalid_registration_names_its_problems(alice):
    payload = registration()
    payload["provider"]["id"] = "Not An Id"
    response = alice.post("/v1/provider/register", payload, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"path": "provider.id", "message": "must match ^[a-z0-9_-]+$"}
    ]


def test_card_and_registration_agreeing_make_level_2_in_either_order(
    network, https_server, at, alice, anon
):
    publish(https_server, example("edp-v0.1-multi-mcp"))
    alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert levels(anon, "lepetitzinc.fr") == {"lepetitzinc.fr": 1}
    alice.post("/v1/provider/register", registration(), format="json")
    # The claim of lepetitzinc.fr is the card's entity now, not an entity of its own, and
    # the entity has the name the provider gave it (the EDP 0.1 card gives none).
    assert levels(anon, "lepetitzinc.fr") == {"Le Petit Zinc": 2}
    entity = anon.get("/v1/resolve/domain/lepetitzinc.fr").json()["entities"][0]
    assert [m["verification"]["level"] for m in entity["mcps"]] == [2, 1, 1]
    # The provider drops the claim: the card alone again.
    payload = registration()
    payload["entities"] = payload["entities"][1:]
    alice.post("/v1/provider/register", payload, format="json")
    # Its facts went with it: the domain names the entity again.
    assert levels(anon, "lepetitzinc.fr") == {"lepetitzinc.fr": 1}
    assert anon.get("/v1/resolve?query=zinc&min_verification=2").json()["results"] == []


def test_a_dropped_claim_removes_its_entity(alice, anon):
    alice.post("/v1/provider/register", registration(), format="json")
    payload = registration()
    payload["entities"] = payload["entities"][:1]
    alice.post("/v1/provider/register", payload, format="json")
    assert Entity.objects.filter(format="edp-provider").count() == 1
    assert anon.get("/v1/resolve/domain/cafedeflore.fr").status_code == 404


def signed_card(private, **claims) -> dict:
    card = example("edp-v0.1-with-verification")
    entry = card["mcps"][0]
    payload = {
        "iss": "booking-provider",
        "sub": "lepetitzinc.fr",
        "entity_id": entry["entity_id"],
        "capabilities": entry["capabilities"],
        "iat": int(time.time()),
        "exp": int(time.time()) + 3600,
        **claims,
    }
    entry["verification"]["signature"] = jwt.encode(
        payload, private, algorithm="ES256", headers={"kid": "provider-key-2025"}
    )
    return card


def entry_verification(anon) -> dict:
    entity = anon.get("/v1/resolve/domain/lepetitzinc.fr").json()["entities"][0]
    return {"level": entity["verification_level"], **entity["mcps"][0]["verification"]}


def register_signed(network, https_server, at, alice, card, public_key) -> None:
    payload = registration(public_key)
    payload["entities"] = payload["entities"][1:]  # no claim of lepetitzinc.fr
    alice.post("/v1/provider/register", payload, format="json")
    publish(https_server, card)
    response = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    assert response.status_code in (200, 201), response.content


def test_a_valid_es256_signature_of_the_provider_makes_level_2(
    network, https_server, at, alice, anon
):
    private, pem = key_pair()
    register_signed(network, https_server, at, alice, signed_card(private), pem)
    result = entry_verification(anon)
    assert result["level"] == 2
    assert (result["method"], result["valid"]) == ("signed_jwt", True)
    assert result["expires_at"] is not None


def test_the_official_placeholder_signature_never_raises_the_level(
    network, https_server, at, alice, anon
):
    _, pem = key_pair()
    register_signed(network, https_server, at, alice, example("edp-v0.1-with-verification"), pem)
    result = entry_verification(anon)
    assert (result["level"], result["valid"]) == (1, False)


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"exp": int(time.time()) - 3600}, "expired"),
        ({"iss": "someone-else"}, "iss is not the entry's provider"),
        ({"sub": "other.example"}, "sub is not the entity's domain"),
        ({"entity_id": "another-id"}, "entity_id differs"),
        ({"capabilities": ["payments"]}, "capabilities differ"),
    ],
)
def test_a_signature_with_wrong_claims_is_invalid(
    network, https_server, at, alice, anon, claims, reason
):
    private, pem = key_pair()
    register_signed(network, https_server, at, alice, signed_card(private, **claims), pem)
    result = entry_verification(anon)
    assert (result["level"], result["valid"]) == (1, False)
    assert reason in result["reason"]


def test_a_forged_signature_does_not_verify(network, https_server, at, alice, anon):
    forger, _ = key_pair()
    _, pem = key_pair()
    register_signed(network, https_server, at, alice, signed_card(forger), pem)
    result = entry_verification(anon)
    assert (result["level"], result["valid"]) == (1, False)
    assert "does not verify" in result["reason"]


def test_only_es256_is_accepted(network, https_server, at, alice, anon):
    _, pem = key_pair()
    card = example("edp-v0.1-with-verification")
    card["mcps"][0]["verification"]["signature"] = jwt.encode(
        {"iss": "booking-provider", "sub": "lepetitzinc.fr", "exp": int(time.time()) + 60},
        "a-shared-secret-of-at-least-32-bytes!",
        algorithm="HS256",
    )
    register_signed(network, https_server, at, alice, card, pem)
    result = entry_verification(anon)
    assert (result["level"], result["valid"]) == (1, False)
    assert "only ES256" in result["reason"]


def test_a_registration_lists_at_most_the_cap_of_entities(alice, settings):
    # Past PROVIDER_REGISTER_NOW a registration is a job
    # (tests/protocols/entities/providers/test_provider_jobs.py);
    # past PROVIDER_REGISTER_MAX it is refused at once, naming the cap.
    settings.PROVIDER_REGISTER_MAX = 100
    payload = registration()
    template = payload["entities"][0]
    payload["entities"] = [
        {**template, "entity_id": f"e-{n}", "domain": f"e{n}.example"} for n in range(101)
    ]
    response = alice.post("/v1/provider/register", payload, format="json")
    assert response.status_code == 400, response.content[:300]
    problem = response.json()
    assert problem["type"] == "/problems/invalid-registration"
    assert problem["errors"] == [{"path": "entities", "message": "may list at most 100 items"}]
    assert problem["maxEntities"] == 100
    assert not Entity.objects.exists()


def claim_documents(anon) -> dict:
    """Each claim entity's public JSON and its core agent's, by its provider's entity id."""
    found = {}
    for entity in Entity.objects.filter(key__startswith="provider:"):
        document = anon.get(f"/entities/{entity.pk}").json()
        agent = anon.get(f"/agents/{entity.pk}").json()
        found[entity.key.rpartition("/")[2]] = (document, agent)
    return found


def test_new_claims_written_in_bulk_read_as_claims_written_one_by_one(alice, anon):
    payload = registration()
    # First: each claim is new, written in bulk.
    assert alice.post("/v1/provider/register", payload, format="json").status_code == 201
    bulk = claim_documents(anon)
    # Then each is changed and back again: written one by one (claims_sync).
    for entity in payload["entities"]:
        entity["name"] += " (renamed)"
    assert alice.post("/v1/provider/register", payload, format="json").status_code == 200
    renamed = claim_documents(anon)
    assert {k: d["name"] for k, (d, _) in renamed.items()} == {
        k: d["name"] + " (renamed)" for k, (d, _) in bulk.items()
    }
    assert {k: a["name"] for k, (_, a) in renamed.items()} == {
        k: d["name"] for k, (d, _) in renamed.items()
    }
    for entity in payload["entities"]:
        entity["name"] = entity["name"].removesuffix(" (renamed)")
    assert alice.post("/v1/provider/register", payload, format="json").status_code == 200
    one_by_one = claim_documents(anon)

    def stable(document: dict) -> dict:
        return {k: v for k, v in document.items() if k not in ("updated_at", "updatedAt")}

    assert set(one_by_one) == set(bulk) and len(bulk) >= 2
    for key, (document, agent) in bulk.items():
        assert stable(one_by_one[key][0]) == stable(document)
        assert one_by_one[key][1]["endpoints"] == agent["endpoints"]
        assert one_by_one[key][1]["capabilities"] == agent["capabilities"]


def test_a_provider_serving_elsewhere_moves_every_claim_entitys_endpoint(alice, anon):
    payload = registration()
    assert alice.post("/v1/provider/register", payload, format="json").status_code == 201
    payload["provider"]["endpoint"] = "https://mcp.elsewhere.example"
    assert alice.post("/v1/provider/register", payload, format="json").status_code == 200
    found = claim_documents(anon)
    assert found and all(
        [e["address"] for e in agent["endpoints"]] == ["https://mcp.elsewhere.example"]
        for _, agent in found.values()
    )
