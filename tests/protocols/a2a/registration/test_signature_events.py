"""card.signature_changed: written when a stored card's signature status moves (a signed
card registered, a key rotated away, restored), with the agent's listing as of then."""

import json

import pytest

from protocols.a2a.tasks import signatures_recheck
from registry.events.envelope import event_bytes
from registry.events.models import Event
from tests.protocols.a2a.registration.test_register_by_domain import signed_card_with_jwks
from tests.protocols.a2a.sample_cards import ec_key_pair

pytest_plugins = ["tests.https_server", "tests.dns_server"]


def signature_events() -> list[dict]:
    rows = Event.objects.filter(type="card.signature_changed").order_by("id")
    return [json.loads(event_bytes(e)) for e in rows]


@pytest.mark.django_db
def test_each_signature_status_change_is_one_event(network, https_server, alice):
    private, public = ec_key_pair()
    card = signed_card_with_jwks(https_server, private, public)
    agent_id = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    assert [e["signature"] for e in signature_events()] == ["verified"]

    _, other_public = ec_key_pair()
    signed_card_with_jwks(https_server, private, other_public)
    signatures_recheck.delay().get()
    signatures_recheck.delay().get()  # the same outcome again: no event
    events = signature_events()
    assert [e["signature"] for e in events] == ["verified", "invalid"]
    assert events[1]["subject"] == agent_id
    assert events[1]["data"]["trust"]["signature"] == "invalid"


@pytest.mark.django_db
def test_an_unsigned_card_makes_no_signature_event(alice, make_card):
    assert alice.post("/a2a/agents", {"card": make_card()}, format="json").status_code == 201
    assert signature_events() == []
    assert Event.objects.filter(type="agent.created").count() == 1
