"""Quarantine: one admin action takes an agent out of every public read of the core at once
(discovery's paths, counts, the change feed, the agent's own URLs, public events) and keeps
it for its owner and admins; audited, announced to admin subscribers only, reversible."""

import json

import pytest
from django.db import connection

from registry.access.models import AuditEntry
from registry.agents.visibility import Reader
from registry.discovery.models import AgentFilterKeys
from registry.events.models import Event
from registry.events.stream import StreamQuery, frames
from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder, call

pytestmark = pytest.mark.django_db


@pytest.fixture
def hidden(alice, native_payload) -> dict:
    payload = native_payload(
        name="Spammy Helper",
        description="Cheap pills",
        capabilities=[{"name": "pills", "tags": ["spamtag", "shared"]}],
    )
    return alice.post("/agents", payload, format="json").json()


@pytest.fixture
def kept(alice, native_payload) -> dict:
    payload = native_payload(
        name="Honest Helper", capabilities=[{"name": "pills", "tags": ["shared"]}]
    )
    return alice.post("/agents", payload, format="json").json()


def _found(anon, **params) -> list[str]:
    body = anon.get("/discover/agents", params).json()
    return [a["id"] for a in body["results"]]


def _quarantine(admin_client, agent_id: str, reason: str = "spam"):
    return admin_client.post(f"/agents/{agent_id}/quarantine", {"reason": reason}, format="json")


def test_a_quarantined_agent_leaves_every_public_read_and_comes_back_released(
    admin_client, alice, bob, anon, hidden, kept
):
    since = hidden["createdAt"]
    assert hidden["id"] in _found(anon, q="Spammy")
    answer = _quarantine(admin_client, hidden["id"], "sells pills")
    assert answer.status_code == 200
    assert answer.json()["quarantined"] is True and answer.json()["listed"] is False

    for params in (
        {"q": "Spammy"},
        {"q": "Spammy", "mode": "keyword"},
        {"tag": "spamtag"},
        {"tag": "shared"},
        {"capability": "pills"},
        {},
    ):
        assert hidden["id"] not in _found(anon, **params), params
    assert kept["id"] in _found(anon, tag="shared")
    facets = anon.get("/discover/agents", {"facets": "tag"}).json()["facets"]["tag"]
    assert "spamtag" not in {f["value"] for f in facets}
    feed = anon.get("/discover/agents", {"updated_since": since}).json()
    assert hidden["id"] not in [a["id"] for a in feed["results"]]
    assert [d["id"] for d in feed["deleted"]] == [hidden["id"]]

    gone = anon.get(f"/agents/{hidden['id']}")
    assert gone.status_code == 404 and gone.json()["type"].endswith("/problems/unlisted")
    assert bob.get(f"/agents/{hidden['id']}").status_code == 404
    assert anon.get(f"/agents/{hidden['id']}/liveness").status_code == 404
    assert alice.get(f"/agents/{hidden['id']}").status_code == 200  # its owner
    assert admin_client.get(f"/agents/{hidden['id']}").status_code == 200
    mine = alice.get(f"/agents/{hidden['id']}/moderation").json()
    assert mine["quarantined"] and mine["quarantineReason"] == "sells pills"
    assert bob.get(f"/agents/{hidden['id']}/moderation").status_code == 403

    audit = AuditEntry.objects.get(action="agent.quarantined")
    assert audit.actor == "ops" and audit.after["reason"] == "sells pills"

    released = admin_client.delete(f"/agents/{hidden['id']}/quarantine")
    assert released.status_code == 200 and released.json()["listed"] is True
    assert hidden["id"] in _found(anon, q="Spammy")
    assert hidden["id"] in _found(anon, tag="spamtag")
    assert anon.get(f"/agents/{hidden['id']}").status_code == 200
    feed = anon.get("/discover/agents", {"updated_since": since}).json()
    assert hidden["id"] in [a["id"] for a in feed["results"]] and feed["deleted"] == []
    assert AuditEntry.objects.filter(action="agent.released").count() == 1


def test_public_events_say_deleted_and_the_decision_is_for_admins_only(admin_client, hidden, kept):
    after = max(Event.objects.values_list("id", flat=True))
    _quarantine(admin_client, hidden["id"])
    events = list(Event.objects.filter(id__gt=after).order_by("id"))
    assert [(e.type, e.audience) for e in events] == [
        ("agent.deleted", ""),
        ("agent.quarantined", "admin"),
    ]
    public = b"".join(frames(StreamQuery(since=after), events))
    assert b"agent.deleted" in public and b"agent.quarantined" not in public
    moderator = Reader("moderators", is_admin=True)
    admin = b"".join(frames(StreamQuery(since=after, reader=moderator), events))
    assert b"agent.quarantined" in admin
    decision = json.loads(bytes(events[1].data))
    assert decision == {
        "id": hidden["id"],
        "name": "Spammy Helper",
        "owner": "alice",
        "reason": "spam",
    }

    after = events[-1].id
    admin_client.delete(f"/agents/{hidden['id']}/quarantine")
    back = list(Event.objects.filter(id__gt=after).order_by("id").values_list("type", "audience"))
    assert back == [("agent.created", ""), ("agent.released", "admin")]


def test_writes_to_a_quarantined_agent_stay_out_of_public_reads(admin_client, alice, anon, hidden):
    after = max(Event.objects.values_list("id", flat=True))
    _quarantine(admin_client, hidden["id"])
    changed = alice.patch(
        f"/agents/{hidden['id']}", {"description": "Renamed pills shop"}, format="json"
    )
    assert changed.status_code == 200
    assert hidden["id"] not in _found(anon, q="Renamed")
    types = set(Event.objects.filter(id__gt=after, audience="").values_list("type", flat=True))
    assert types == {"agent.deleted"}  # the change made no public event


def test_only_admin_keys_quarantine_and_a_reason_is_required(admin_client, alice, anon, hidden):
    assert _quarantine(alice, hidden["id"]).status_code == 403
    assert _quarantine(anon, hidden["id"]).status_code == 401
    missing = admin_client.post(f"/agents/{hidden['id']}/quarantine", {}, format="json")
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["path"] == "reason"
    assert _quarantine(admin_client, "not-a-uuid").status_code == 404
    assert anon.get(f"/agents/{hidden['id']}").status_code == 200  # nothing changed


def test_the_moderation_queue_pages_newest_first(admin_client, alice, native_payload):
    ids = [
        alice.post("/agents", native_payload(name=f"Spam {n}"), format="json").json()["id"]
        for n in range(3)
    ]
    for agent_id in ids:
        _quarantine(admin_client, agent_id)
    first = admin_client.get("/moderation", {"limit": 2}).json()
    assert [i["agentId"] for i in first["items"]] == [ids[2], ids[1]]
    rest = admin_client.get(first["next"]).json()
    assert [i["agentId"] for i in rest["items"]] == [ids[0]] and rest["next"] is None
    assert alice.get("/moderation").status_code == 403
    bad = admin_client.get("/moderation", {"cursor": "%%%"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "cursor"


def test_the_lean_lane_leaves_a_quarantined_agent_out(admin_client, hidden, kept):
    """The lane's own paths (keyed filters, keyword tiers, shaped filters; PostgreSQL's
    filter keys) find what the view finds."""
    app = LeanApplication(Recorder())
    paths = [
        "/discover/agents?tag=spamtag&capability=pills",
        "/discover/agents?q=spammy&mode=keyword",
        "/discover/agents?tag=shared",
    ]
    before = [json.loads(call(app, "GET", p)[2]) for p in paths]
    assert all(hidden["id"] in [a["id"] for a in b["results"]] for b in before)
    _quarantine(admin_client, hidden["id"])
    if connection.vendor == "postgresql":  # the keyed path's index (a trigger keeps it)
        keys = AgentFilterKeys.objects.get(agent_id=hidden["id"])
        assert keys.discoverable is False
    for path in paths:
        status, _, body = call(app, "GET", path)
        assert status == 200
        assert hidden["id"] not in [a["id"] for a in json.loads(body)["results"]], path
