"""Entity events: entity.created when a card lists a new entity, entity.updated when it is
stored again, entity.flagged when the crawl finds its card gone; data: the entity's JSON."""

import json

import pytest

from protocols.entities.models import EntityCard
from protocols.entities.registration.services import card_flag
from registry.events.envelope import event_bytes
from registry.events.models import Event
from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


def entity_events() -> list[dict]:
    rows = Event.objects.filter(type__startswith="entity.").order_by("id")
    return [json.loads(event_bytes(e)) for e in rows]


def test_an_entity_is_created_updated_and_flagged(network, https_server, at, alice, anon):
    publish(https_server, example("edp-v0.1-multi-mcp"))
    body = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json").json()
    entity_id = body["entities"][0]["id"]
    alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
    card_flag(card=EntityCard.objects.get(), status="missing", detail="404")
    card_flag(card=EntityCard.objects.get(), status="missing", detail="404 again")
    events = entity_events()
    assert [e["type"].rsplit(".", 1)[1] for e in events] == ["created", "updated", "flagged"]
    assert {e["subject"] for e in events} == {entity_id}
    public = anon.get(f"/entities/{entity_id}").json()
    assert events[0]["data"].keys() == public.keys()
    assert events[0]["data"]["name"] == public["name"]
    assert [e["data"]["flagged"] for e in events] == [False, False, True]
    assert public["flagged"] is True
