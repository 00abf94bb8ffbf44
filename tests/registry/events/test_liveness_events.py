"""endpoint.liveness_changed comes where the change happens: in the transaction of the
heartbeat that revives an endpoint or of the probe that finds it down, and from the stream
server's watcher when a grace runs out with no write at all; never one per heartbeat."""

import json
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from registry.agents.models import Endpoint
from registry.events.envelope import event_bytes
from registry.events.liveness import expiries_write, liveness_changes_write
from registry.events.models import Event
from registry.liveness.probes import ProbeOutcome, endpoint_probe_store

LIVENESS = "endpoint.liveness_changed"


def announced() -> list[str]:
    rows = Event.objects.filter(type=LIVENESS).order_by("id")
    return [json.loads(event_bytes(e))["liveness"] for e in rows]


def registered(client, payload) -> tuple[str, str]:
    agent = client.post("/agents", payload(), format="json").json()
    return agent["id"], agent["endpoints"][0]["id"]


@pytest.mark.django_db
def test_the_heartbeat_that_revives_an_endpoint_announces_it_and_no_other_does(
    alice, native_payload
):
    agent_id, endpoint_id = registered(alice, native_payload)
    beat = f"/agents/{agent_id}/endpoints/{endpoint_id}/heartbeat"
    assert alice.post(beat).status_code == 200
    assert announced() == ["live"]
    for _ in range(3):
        assert alice.post(beat).status_code == 200
    assert announced() == ["live"]
    # The grace ran out (no event yet: nothing looked); the next heartbeat revives it, and
    # the stale status was never announced, so nothing changed for a reader.
    Endpoint.objects.filter(pk=endpoint_id).update(alive_until=timezone.now())
    assert alice.post(f"/agents/{agent_id}/heartbeat").status_code == 200
    assert announced() == ["live"]
    assert liveness_changes_write() == 0


@pytest.mark.django_db
def test_a_revival_after_an_announced_expiry_is_announced_by_the_heartbeat(alice, native_payload):
    agent_id, endpoint_id = registered(alice, native_payload)
    beat = f"/agents/{agent_id}/endpoints/{endpoint_id}/heartbeat"
    alice.post(beat)
    ended = timezone.now() - timedelta(seconds=1)
    Endpoint.objects.filter(pk=endpoint_id).update(alive_until=ended)
    assert expiries_write(ended - timedelta(seconds=1), timezone.now()) == 1
    assert announced() == ["live", "stale"]
    assert alice.post(beat).status_code == 200
    assert announced() == ["live", "stale", "live"]
    [event] = Event.objects.filter(type=LIVENESS).order_by("-id")[:1]
    body = json.loads(event_bytes(event))
    assert body["subject"] == agent_id and body["endpointid"] == endpoint_id


@pytest.mark.django_db
def test_the_watcher_looks_only_at_graces_that_ended_since_its_last_look(alice, native_payload):
    first, first_endpoint = registered(alice, native_payload)
    second, second_endpoint = registered(alice, native_payload)
    for agent_id in (first, second):
        alice.post(f"/agents/{agent_id}/heartbeat")
    now = timezone.now()
    Endpoint.objects.filter(pk=first_endpoint).update(alive_until=now - timedelta(seconds=2))
    Endpoint.objects.filter(pk=second_endpoint).update(alive_until=now - timedelta(hours=1))
    assert expiries_write(now - timedelta(seconds=3), now) == 1
    assert expiries_write(now - timedelta(seconds=3), now) == 0  # announced once
    assert announced() == ["live", "live", "stale"]
    # What ran out before its window (the watcher was not running) is the sweep's.
    assert liveness_changes_write() == 1
    assert expiries_write(None, timezone.now()) == 0


@pytest.mark.django_db
def test_a_failed_probe_announces_down_in_its_own_transaction(alice, native_payload):
    _, endpoint_id = registered(alice, native_payload)
    endpoint = Endpoint.objects.get(pk=endpoint_id)
    up = ProbeOutcome(True, "ok", "answered with HTTP status 200", 200)
    endpoint_probe_store(endpoint, up, at=timezone.now(), latency_ms=5)
    assert announced() == ["live"]
    down = ProbeOutcome(False, "timeout", "timed out")
    with pytest.raises(RuntimeError), transaction.atomic():
        endpoint_probe_store(endpoint, down, at=timezone.now(), latency_ms=5000)
        raise RuntimeError("rolled back")
    assert announced() == ["live"]  # no event for a change that did not commit
    endpoint_probe_store(endpoint, down, at=timezone.now(), latency_ms=5000)
    assert announced() == ["live", "down"]
    endpoint_probe_store(endpoint, down, at=timezone.now(), latency_ms=5000)
    assert announced() == ["live", "down"]
