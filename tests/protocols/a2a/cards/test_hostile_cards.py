"""Hostile cards that once were 500s or stored more than a card needs (security review)."""

import json

import pytest

from protocols.a2a.cards.validation import card_validate
from protocols.a2a.models import CardProvenance
from registry.agents.models import Agent
from registry.signals import agents_written_send
from tests.protocols.a2a.sample_cards import V03_CARD, card_on

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.https_server", "tests.dns_server"]


def problem_fields(response) -> list[str]:
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    return [p["path"] for p in response.json().get("errors", [])]


@pytest.mark.parametrize(
    "member", ["defaultInputModes", "defaultOutputModes", "additionalInterfaces"]
)
def test_a_03_card_with_a_number_for_a_list_is_invalid_not_a_crash(alice, anon, member):
    card = {**V03_CARD, member: 5}

    assert member in {p.path for p in card_validate(card).errors}
    response = alice.post("/a2a/agents", {"card": card}, format="json")
    assert response.status_code == 400
    assert member in {p["path"] for p in response.json()["errors"]}
    assert not Agent.objects.exists()


def test_a_card_with_more_than_eight_signatures_is_refused_before_any_fetch(alice, make_card):
    signature = {"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln"}
    card = make_card(signatures=[signature] * 9)

    response = alice.post("/a2a/agents", {"card": card}, format="json")

    assert response.status_code == 400
    assert "signatures" in {p["path"] for p in response.json()["errors"]}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("description", "x" * 20_001),
        ("skills[0].description", "x" * 20_001),
        ("skills[0].examples", ["e"] * 101),
    ],
)
def test_strings_and_lists_beyond_what_a_card_needs_are_refused(make_card, path, value):
    card = make_card()
    if path.startswith("skills[0]."):
        card["skills"][0][path.removeprefix("skills[0].")] = value
    else:
        card[path] = value

    assert path in {p.path for p in card_validate(card).errors}


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"skills": 5}, "endpoints[0].protocolMetadata.skills"),
        ({"skills": [5, "x"]}, "endpoints[0].protocolMetadata.skills"),
        # Members copied into the generated card are named where the card has them.
        ({"capabilities": 5}, "generatedCard.capabilities"),
        ({"defaultInputModes": "text/plain"}, "generatedCard.defaultInputModes"),
    ],
)
def test_protocol_metadata_of_the_wrong_shape_is_a_400(alice, native_payload, metadata, field):
    payload = native_payload()
    payload["endpoints"][0]["protocolMetadata"] = metadata

    fields = problem_fields(alice.post("/agents", payload, format="json"))

    assert any(f.startswith(field) for f in fields), fields
    assert not Agent.objects.exists()


def test_a_dns_hint_naming_a_url_longer_than_2048_characters_is_not_fetched(
    network, https_server, dns_server, alice
):
    long_path = "/cards/" + "a" * 2100 + ".json"
    https_server.json(long_path, json.dumps(card_on(https_server)).encode())
    record = f"v=agent/1; c={https_server.url(long_path)}"
    # One TXT record of several strings (each at most 255 bytes), read as one.
    dns_server.records["_agent.localhost"] = [
        [record[i : i + 250] for i in range(0, len(record), 250)]
    ]

    response = alice.post(
        "/a2a/agents", {"domain": f"localhost:{https_server.port}"}, format="json"
    )

    assert response.status_code == 422, response.content[:300]
    assert "longer than 2048 characters" in response.content.decode()
    assert not [r for r in https_server.requests if r.path == long_path]
    assert not Agent.objects.exists()


@pytest.mark.postgres
def test_a_provenance_holds_the_longest_host_name_with_a_port(alice, make_card):
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    host = ".".join(["a" * 63] * 3 + ["b" * 61])  # 253 characters

    CardProvenance.objects.filter(agent_id=agent_id).update(verified_domain=f"{host}:65535")
    agents_written_send([agent_id])  # a write past the services: its listing, as they keep it

    assert CardProvenance.objects.get(agent_id=agent_id).verified_domain.endswith(":65535")


def test_a_card_whose_interface_url_carries_credentials_is_invalid(make_card):
    card = make_card()
    card["supportedInterfaces"][0]["url"] = "https://user:secret@weather.example.com/a2a"

    errors = {p.path: p.message for p in card_validate(card).errors}

    assert "credentials" in errors["supportedInterfaces[0].url"]


def test_a_native_patch_that_would_make_the_served_card_invalid_is_refused(alice, anon, make_card):
    agent = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()
    served = anon.get(f"/a2a/agents/{agent['id']}").content

    response = alice.patch(
        f"/agents/{agent['id']}", {"description": "", "version": ""}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["type"] == "/problems/invalid-card"
    assert {p["path"] for p in response.json()["errors"]} >= {"description"}
    assert anon.get(f"/a2a/agents/{agent['id']}").content == served
    assert anon.get(f"/agents/{agent['id']}").json()["description"] == make_card()["description"]
    assert card_validate(json.loads(served)).ok


def test_a_posted_card_is_served_with_every_number_as_written(alice, anon, make_card):
    card = make_card()
    card["capabilities"]["extensions"] = [
        {"uri": "https://example.com/ext/precise", "params": {"a": "A", "b": "B", "c": "C"}}
    ]
    body = json.dumps({"card": card}).encode()
    written = {"1.00000000000000000001", "1e-400", "1.50", "12345678901234567890123"}
    for key, number in zip("abc", ["1.00000000000000000001", "1e-400", "1.50"], strict=True):
        body = body.replace(f'"{key}": "{key.upper()}"'.encode(), f'"{key}": {number}'.encode())
    body = body.replace(b'"a": 1.0', b'"big": 12345678901234567890123, "a": 1.0')

    response = alice.generic("POST", "/a2a/agents", body, content_type="application/json")

    assert response.status_code == 201, response.content
    served = anon.get(f"/a2a/agents/{response.json()['id']}").content.decode()
    assert all(number in served for number in written), served
