"""The outbox: one CloudEvent per committed change, in the change's transaction, carrying
what an anonymous reader sees of the agent as of then."""

import json
import uuid

import pytest
from django.db import transaction

from registry.events.envelope import event_bytes
from registry.events.liveness import liveness_changes_write
from registry.events.models import Event


def events(**filters) -> list[dict]:
    return [json.loads(event_bytes(e)) for e in Event.objects.filter(**filters).order_by("id")]


@pytest.mark.django_db
def test_registering_an_agent_writes_agent_created_with_its_public_listing(
    alice, anon, native_payload
):
    agent = alice.post("/agents", native_payload(), format="json").json()
    [event] = events()
    assert event["specversion"] == "1.0"
    assert event["type"] == "org.a2a-registry.agent.created"
    assert event["subject"] == agent["id"]
    assert event["source"] == "http://testserver"
    assert event["datacontenttype"] == "application/json"
    assert int(event["id"]) == Event.objects.get().id
    public = anon.get(f"/agents/{agent['id']}").json()
    assert event["data"]["name"] == public["name"] == "Summarizer"
    assert event["data"].keys() == public.keys()


@pytest.mark.django_db
def test_each_update_carries_its_own_snapshot_and_what_changed(alice, native_payload):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    alice.patch(f"/agents/{agent_id}", {"name": "First"}, format="json")
    alice.patch(f"/agents/{agent_id}", {"description": "Second"}, format="json")
    updates = events(type="agent.updated")
    assert [e["data"]["name"] for e in updates] == ["First", "First"]
    assert [e["changed"] for e in updates] == ["name", "description"]
    assert updates[1]["data"]["description"] == "Second"
    assert int(updates[0]["id"]) < int(updates[1]["id"])


@pytest.mark.django_db
def test_a_write_that_changes_nothing_shown_writes_no_event(alice, native_payload):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    alice.patch(f"/agents/{agent_id}", {"name": "Summarizer"}, format="json")
    assert [e["type"] for e in events()] == ["org.a2a-registry.agent.created"]


@pytest.mark.django_db
def test_an_owner_change_is_agent_owner_changed(alice, admin_client, native_payload):
    from registry.agents.models import Agent
    from registry.agents.services import agent_update

    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    agent_update(agent=Agent.objects.get(pk=agent_id), owner="bob")
    assert [e["type"] for e in events()][-1] == "org.a2a-registry.agent.owner_changed"


@pytest.mark.django_db
def test_a_deletion_retires_the_agent_an_agent_retired_event(alice, native_payload):
    # DELETE retires (the lifecycle): the event says so, with the agent as it now stands.
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    assert alice.delete(f"/agents/{agent_id}").status_code == 204
    last = events()[-1]
    assert last["type"] == "org.a2a-registry.agent.retired"
    assert last["subject"] == agent_id


@pytest.mark.django_db
def test_a_deprecation_is_an_agent_deprecated_event_carrying_its_reason(alice, native_payload):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    body = {"reason": "Replaced.", "sunsetAt": "2030-01-31T00:00:00Z"}
    assert alice.post(f"/agents/{agent_id}/deprecate", body, format="json").status_code == 200
    last = events()[-1]
    assert last["type"] == "org.a2a-registry.agent.deprecated"
    assert last["subject"] == agent_id
    assert last["data"]["status"] == "deprecated"
    assert last["data"]["deprecation"]["reason"] == "Replaced."


@pytest.mark.django_db
def test_a_refused_write_leaves_no_event(alice, native_payload):
    payload = native_payload()
    with pytest.raises(RuntimeError), transaction.atomic():
        alice.post("/agents", payload, format="json")
        raise RuntimeError("rolled back")
    assert Event.objects.count() == 0


@pytest.mark.django_db
def test_liveness_events_come_on_a_status_change_never_per_heartbeat(alice, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    endpoint = agent["endpoints"][0]["id"]
    beat = f"/agents/{agent['id']}/endpoints/{endpoint}/heartbeat"
    assert liveness_changes_write() == 0  # never seen: unknown, as announced
    for _ in range(3):
        assert alice.post(beat).status_code == 200
    assert liveness_changes_write() == 0  # the first heartbeat announced it
    [event] = events(type="endpoint.liveness_changed")
    assert event["endpointid"] == endpoint
    assert event["liveness"] == "live"
    assert event["subject"] == agent["id"]


@pytest.mark.django_db
def test_a_stale_endpoint_is_announced_once(alice, native_payload):
    from datetime import timedelta

    from django.utils import timezone

    from registry.agents.models import Endpoint

    agent = alice.post("/agents", native_payload(), format="json").json()
    ended = timezone.now() - timedelta(minutes=1)
    Endpoint.objects.filter(agent_id=agent["id"]).update(alive_until=ended, last_alive_at=ended)
    assert liveness_changes_write() == 1
    assert liveness_changes_write() == 0
    assert events(type="endpoint.liveness_changed")[0]["liveness"] == "stale"


@pytest.mark.django_db
def test_readers_wait_at_a_missing_id_until_it_can_no_longer_commit():
    from datetime import timedelta

    from django.utils import timezone

    from registry.events.outbox import GAP_SECONDS, events_after

    now = timezone.now()
    for event_id in (1, 2, 3, 5):  # 4: a transaction still open, or rolled back
        Event.objects.create(id=event_id, type="agent.updated", time=now, data=b"{}")
    assert [e.id for e in events_after(1, 100)] == [2, 3]
    Event.objects.filter(id=5).update(time=now - timedelta(seconds=GAP_SECONDS + 1))
    assert [e.id for e in events_after(1, 100)] == [2, 3, 5]


@pytest.mark.django_db
def test_a_retired_agents_endpoints_make_no_more_liveness_events(alice, native_payload):
    from datetime import timedelta

    from django.utils import timezone

    from registry.agents.models import Endpoint

    agent = alice.post("/agents", native_payload(), format="json").json()
    endpoint = agent["endpoints"][0]["id"]
    assert alice.post(f"/agents/{agent['id']}/endpoints/{endpoint}/heartbeat").status_code == 200
    assert liveness_changes_write() == 0  # the heartbeat announced "live" itself
    assert alice.delete(f"/agents/{agent['id']}").status_code == 204
    ended = timezone.now() - timedelta(minutes=1)
    Endpoint.objects.filter(agent_id=agent["id"]).update(alive_until=ended, last_alive_at=ended)
    assert liveness_changes_write() == 0  # stale now, but the agent is gone from the feed
    assert [e["liveness"] for e in events(type="endpoint.liveness_changed")] == ["live"]


@pytest.mark.django_db
def test_each_event_carries_the_listing_as_a_read_shows_it(alice, native_payload):
    # The listing an event carries is the one discovery built in the same write, its
    # liveness filled in without reading it back: as listings_read gives it after the write
    # (a live endpoint, an update, agents a bulk write created).
    from registry.agents.serializers import AgentInputSerializer
    from registry.agents.services import agents_bulk_create
    from registry.discovery.listings import listings_read

    agent = alice.post("/agents", native_payload(), format="json").json()
    endpoint = agent["endpoints"][0]["id"]
    beat = alice.post(f"/agents/{agent['id']}/endpoints/{endpoint}/heartbeat")
    assert beat.status_code == 200, beat.content
    alice.patch(f"/agents/{agent['id']}", {"name": "Renamed"}, format="json")
    items = []
    for name in ("Bulk one", "Bulk two"):
        given = AgentInputSerializer(data=native_payload(name=name))
        given.is_valid(raise_exception=True)
        items.append(given.to_input())
    with transaction.atomic():
        made = agents_bulk_create(owner="alice", items=items)

    latest = {}
    for event in Event.objects.order_by("id"):
        latest[event.subject] = bytes(event.data)
    assert len(latest) == 3
    assert json.loads(latest[made[0].pk])["name"] == "Bulk one"
    assert (
        json.loads(latest[uuid.UUID(agent["id"])])["endpoints"][0]["liveness"]["status"] == "live"
    )
    for pk, data in latest.items():
        assert data == listings_read([pk]).listings[0]
