"""Liveness: heartbeats and renewals, the liveness of endpoints and agents, liveOnly and the
live facet, and the removal of expired Ephemeral endpoints."""

import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from registry.access.models import ApiKey, AuditEntry
from registry.agents.models import Agent, Endpoint, Tombstone
from registry.events.models import Event

pytestmark = pytest.mark.django_db


def endpoint(name, *, model="Persistent", seconds=None, transport="Http"):
    data = {
        "name": name,
        "transport": transport,
        "protocol": "Generic",
        "address": f"https://{name}.example.com/" if transport == "Http" else f"{name}.jobs",
        "livenessModel": model,
    }
    if seconds is not None:
        data["heartbeatIntervalSeconds" if model == "Persistent" else "ttlSeconds"] = seconds
    return data


@pytest.fixture
def agent(alice, native_payload) -> dict:
    payload = native_payload(
        name="Worker",
        endpoints=[
            endpoint("web", seconds=30),
            endpoint("queue", model="Ephemeral", seconds=120, transport="Amqp"),
        ],
    )
    response = alice.post("/agents", payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def ids(agent) -> dict[str, str]:
    return {e["name"]: e["id"] for e in agent["endpoints"]}


def seconds_between(start: str, end: str) -> float:
    return (parse_datetime(end) - parse_datetime(start)).total_seconds()


def test_a_never_seen_endpoint_is_unknown_and_its_agent_not_live(agent):
    assert [e["liveness"] for e in agent["endpoints"]] == [
        {
            "status": "unknown",
            "lastSeenAt": None,
            "aliveUntil": None,
            "checkedBy": None,
            "lastProbe": None,
        }
    ] * 2
    assert agent["live"] is False


def test_a_heartbeat_makes_a_persistent_endpoint_live_for_two_and_a_half_intervals(
    alice, anon, agent
):
    web = ids(agent)["web"]

    response = alice.post(f"/agents/{agent['id']}/endpoints/{web}/heartbeat")

    assert response.status_code == 200, response.content
    liveness = response.json()["liveness"]
    assert liveness["status"] == "live"
    assert liveness["checkedBy"] == "heartbeat"
    assert seconds_between(liveness["lastSeenAt"], liveness["aliveUntil"]) == 75
    shown = anon.get(f"/agents/{agent['id']}").json()
    assert shown["live"] is True
    assert shown["endpoints"][0]["liveness"] == liveness
    assert shown["endpoints"][0]["lastAliveAt"] == liveness["lastSeenAt"]
    assert shown["endpoints"][1]["liveness"]["status"] == "unknown"


def test_a_renewal_keeps_an_ephemeral_endpoint_live_for_its_ttl(alice, agent):
    queue = ids(agent)["queue"]
    for path in ("renew", "heartbeat"):  # either path works for either model
        response = alice.post(f"/agents/{agent['id']}/endpoints/{queue}/{path}")
        assert response.status_code == 200, response.content
        liveness = response.json()["liveness"]
        assert seconds_between(liveness["lastSeenAt"], liveness["aliveUntil"]) == 120


def test_the_agent_heartbeat_reaches_every_endpoint(alice, anon, agent):
    response = alice.post(f"/agents/{agent['id']}/heartbeat")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["live"] is True
    assert {e["id"] for e in body["endpoints"]} == set(ids(agent).values())
    shown = anon.get(f"/agents/{agent['id']}").json()
    assert [e["liveness"]["status"] for e in shown["endpoints"]] == ["live", "live"]


def test_a_heartbeat_is_one_update_and_touches_nothing_else(alice, agent):
    before = Agent.objects.get(pk=agent["id"]).updated_at
    entries = AuditEntry.objects.count()
    web = ids(agent)["web"]
    # The first one revives the endpoint: a liveness status change, written with its event.
    assert alice.post(f"/agents/{agent['id']}/endpoints/{web}/heartbeat").status_code == 200
    events = Event.objects.count()

    with CaptureQueriesContext(connection) as queries:
        response = alice.post(f"/agents/{agent['id']}/endpoints/{web}/heartbeat")

    assert response.status_code == 200
    writes = [q["sql"] for q in queries if not q["sql"].lstrip().upper().startswith("SELECT")]
    assert len(writes) == 1, writes
    if connection.vendor == "postgresql":
        # The key, its ownership and the update in one statement (registry.liveness.heartbeats).
        assert len(queries) == 1
        assert f"UPDATE {Endpoint._meta.db_table} AS e" in writes[0]
    else:
        assert writes[0].startswith(f'UPDATE "{Endpoint._meta.db_table}"')
    assert Agent.objects.get(pk=agent["id"]).updated_at == before
    assert AuditEntry.objects.count() == entries
    assert Event.objects.count() == events


@pytest.mark.parametrize(
    "path", ["heartbeat", "endpoints/{web}/heartbeat", "endpoints/{web}/renew"]
)
def test_refused_heartbeats_are_problems_and_change_nothing(anon, bob, alice, agent, path):
    path = path.format(web=ids(agent)["web"])
    url = f"/agents/{agent['id']}/{path}"

    assert anon.post(url).status_code == 401
    response = bob.post(url)
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert not Endpoint.objects.filter(agent_id=agent["id"], last_alive_at__isnull=False).exists()
    missing = f"/agents/{agent['id']}/endpoints/7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1/heartbeat"
    assert alice.post(missing).status_code == 404
    unknown = alice.post("/agents/7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1/heartbeat")
    assert unknown.status_code == 404
    assert unknown.json()["detail"].startswith("There is no agent")


def test_an_endpoint_whose_grace_ran_out_is_stale_in_real_seconds(alice, anon, native_payload):
    payload = native_payload(name="Blinker", endpoints=[endpoint("blink", seconds=1)])
    agent = alice.post("/agents", payload, format="json").json()
    alice.post(f"/agents/{agent['id']}/heartbeat")
    live = {"liveOnly": "true"}
    assert [a["name"] for a in anon.get("/discover/agents", live).json()["results"]] == ["Blinker"]

    time.sleep(2.6)  # 2.5 heartbeat intervals of one second

    shown = anon.get(f"/agents/{agent['id']}").json()
    assert shown["endpoints"][0]["liveness"]["status"] == "stale"
    assert shown["live"] is False
    assert anon.get("/discover/agents", live).json()["results"] == []


def test_live_only_and_the_live_facet(alice, anon, agent, native_payload):
    alice.post("/agents", native_payload(name="Idle", endpoints=[endpoint("idle")]), format="json")
    alice.post(f"/agents/{agent['id']}/heartbeat")

    body = anon.get("/discover/agents", {"liveOnly": "true", "facets": "live"}).json()
    assert [a["name"] for a in body["results"]] == ["Worker"]
    everyone = anon.get("/discover/agents", {"facets": "live"}).json()
    assert {f["value"]: f["count"] for f in everyone["facets"]["live"]} == {"true": 1, "false": 1}
    assert len(anon.get("/discover/agents", {"liveOnly": "false"}).json()["results"]) == 2
    # The clock moves past the grace: nothing is live any more.
    Endpoint.objects.update(alive_until=timezone.now() - timedelta(seconds=1))
    assert anon.get("/discover/agents", {"liveOnly": "true"}).json()["results"] == []


def test_ttls_and_intervals_take_one_second_to_a_day(alice, native_payload):
    for seconds, status in ((0, 400), (1, 201), (86400, 201), (86401, 400)):
        payload = native_payload(
            name=f"T{seconds}", endpoints=[endpoint("q", model="Ephemeral", seconds=seconds)]
        )
        assert alice.post("/agents", payload, format="json").status_code == status


def test_expired_ephemeral_endpoints_are_removed_after_the_retention(
    alice, anon, agent, native_payload, settings, capsys
):
    settings.EPHEMERAL_RETENTION_SECONDS = 3600
    lonely = alice.post(
        "/agents",
        native_payload(name="Lonely", endpoints=[endpoint("q", model="Ephemeral", seconds=60)]),
        format="json",
    ).json()
    alice.post(f"/agents/{agent['id']}/heartbeat")
    alice.post(f"/agents/{lonely['id']}/heartbeat")
    long_ago = timezone.now() - timedelta(hours=2)
    # Two hours pass: both Ephemeral endpoints' TTLs ran out over an hour ago.
    Endpoint.objects.filter(liveness_model="Ephemeral").update(alive_until=long_ago)
    Endpoint.objects.filter(liveness_model="Persistent").update(
        alive_until=timezone.now() + timedelta(minutes=1)
    )

    call_command("endpoints_expire")

    assert "Removed 2 expired endpoints and 1 agents" in capsys.readouterr().out
    assert not Agent.objects.filter(pk=lonely["id"]).exists()
    assert Tombstone.objects.filter(agent_id=lonely["id"]).exists()
    assert [e["name"] for e in anon.get(f"/agents/{agent['id']}").json()["endpoints"]] == ["web"]
    assert AuditEntry.objects.filter(actor="system:liveness").count() == 2
    feed = anon.get("/discover/agents", {"updated_since": "2000-01-01T00:00:00Z"}).json()
    assert lonely["id"] in [d["id"] for d in feed["deleted"]]


def test_a_never_renewed_ephemeral_endpoint_goes_after_its_ttl_and_the_retention(
    alice, agent, settings
):
    settings.EPHEMERAL_RETENTION_SECONDS = 3600
    queue = Endpoint.objects.get(pk=ids(agent)["queue"])
    call_command("endpoints_expire")
    assert Endpoint.objects.filter(pk=queue.pk).exists()  # just registered: kept

    Endpoint.objects.filter(pk=queue.pk).update(created_at=timezone.now() - timedelta(hours=2))
    call_command("endpoints_expire")
    assert not Endpoint.objects.filter(pk=queue.pk).exists()


def test_a_retired_agent_with_expired_ephemeral_endpoints_stays_retired(
    alice, native_payload, settings, capsys, caplog
):
    settings.EPHEMERAL_RETENTION_SECONDS = 3600
    gone = alice.post(
        "/agents",
        native_payload(name="Gone", endpoints=[endpoint("q", model="Ephemeral", seconds=60)]),
        format="json",
    ).json()
    assert alice.delete(f"/agents/{gone['id']}").status_code == 204
    Endpoint.objects.filter(agent_id=gone["id"]).update(
        alive_until=timezone.now() - timedelta(hours=2)
    )

    call_command("endpoints_expire")

    assert "Removed 0 expired endpoints and 0 agents" in capsys.readouterr().out
    assert Agent.objects.get(pk=gone["id"]).status == Agent.Status.RETIRED
    assert Endpoint.objects.filter(agent_id=gone["id"]).count() == 1
    assert "kept" not in caplog.text  # not tried, so no refusal logged at every run


def test_heartbeats_have_their_own_rate_limit_apart_from_other_writes(settings, alice, agent):
    settings.RATE_LIMIT_WRITE = "2/day"
    settings.RATE_LIMIT_HEARTBEAT = "5/day"
    url = f"/agents/{agent['id']}/heartbeat"

    assert [alice.post(url).status_code for _ in range(6)] == [200] * 5 + [429]
    # Heartbeats did not use up the other writes' allowance, nor they the heartbeats'.
    assert (
        alice.patch(f"/agents/{agent['id']}", {"description": "x"}, format="json").status_code
        == 200
    )


def test_a_heartbeat_records_the_use_of_its_key_at_most_once_a_minute(alice, agent):
    web = ids(agent)["web"]
    url = f"/agents/{agent['id']}/endpoints/{web}/heartbeat"
    key = ApiKey.objects.get(owner="alice")
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=None)

    assert alice.post(url).status_code == 200
    first = ApiKey.objects.get(pk=key.pk).last_used_at
    assert first is not None
    assert alice.post(url).status_code == 200
    assert ApiKey.objects.get(pk=key.pk).last_used_at == first


def test_a_revoked_key_or_another_owners_key_changes_nothing(alice, bob, agent):
    web = ids(agent)["web"]
    url = f"/agents/{agent['id']}/endpoints/{web}/heartbeat"
    ApiKey.objects.filter(owner="alice").update(revoked_at=timezone.now())

    assert alice.post(url).status_code == 401
    assert bob.post(url).status_code == 403
    assert Endpoint.objects.get(pk=web).alive_until is None


def test_an_expired_key_sends_no_heartbeat(alice, agent):
    web = ids(agent)["web"]
    ApiKey.objects.filter(owner="alice").update(expires_at=timezone.now() - timedelta(seconds=1))

    response = alice.post(f"/agents/{agent['id']}/endpoints/{web}/heartbeat")

    assert response.status_code == 401
    assert Endpoint.objects.get(pk=web).alive_until is None


def test_a_heartbeats_answer_is_the_liveness_the_agent_json_then_shows(alice, anon, agent):
    # On PostgreSQL the answer comes from the fast path, elsewhere from the API view: the
    # same liveness, spelt the same way, either way.
    web = ids(agent)["web"]

    answer = alice.post(f"/agents/{agent['id']}/endpoints/{web}/heartbeat").json()

    shown = anon.get(f"/agents/{agent['id']}").json()
    [endpoint] = [e for e in shown["endpoints"] if e["id"] == web]
    assert answer == {"id": web, "liveness": endpoint["liveness"]}
