"""An agent's lifecycle: deprecate and undeprecate by its owner or an admin, DELETE retires
(left out of discovery, a tombstone in the change feed, readable by its owner only, no more
writes), and the status facet and filter of discovery."""

import pytest
from django.dispatch import receiver

from registry.access.models import AuditEntry
from registry.signals import agent_status_changed

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(alice, native_payload) -> dict:
    answer = alice.post("/agents", native_payload(name="Old Summarizer"), format="json")
    assert answer.status_code == 201
    return answer.json()


@pytest.fixture
def successor(alice, native_payload) -> dict:
    payload = native_payload(name="New Summarizer")
    payload["endpoints"][0]["address"] = "https://new.example.com/a2a"
    return alice.post("/agents", payload, format="json").json()


def test_a_new_agent_is_active_with_no_compatibility_rule(agent):
    assert (agent["status"], agent["compatibility"], agent["deprecation"]) == (
        "active",
        "none",
        None,
    )


def test_deprecate_shows_reason_successor_and_sunset_then_undeprecate(
    alice, anon, agent, successor
):
    url = f"/agents/{agent['id']}"
    body = {
        "reason": "Replaced by the new summarizer.",
        "successor": successor["id"],
        "sunsetAt": "2030-01-31T00:00:00Z",
    }
    answer = alice.post(f"{url}/deprecate", body, format="json")
    assert answer.status_code == 200, answer.content
    shown = anon.get(url).json()
    assert shown["status"] == "deprecated"
    assert shown["deprecation"]["reason"] == "Replaced by the new summarizer."
    assert shown["deprecation"]["successor"] == successor["id"]
    assert shown["deprecation"]["sunsetAt"] == "2030-01-31T00:00:00Z"
    assert alice.post(f"{url}/undeprecate").status_code == 200
    assert anon.get(url).json()["status"] == "active"
    actions = list(AuditEntry.objects.filter(agent_id=agent["id"]).values_list("action", flat=True))
    assert "agent.deprecate" in actions and "agent.undeprecate" in actions


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "reason"),
        ({"reason": "x", "successor": "not-a-uuid"}, "successor"),
        ({"reason": "x", "successor": "00000000-0000-0000-0000-000000000000"}, "successor"),
        ({"reason": "x", "sunsetAt": "soon"}, "sunsetAt"),
    ],
)
def test_bad_deprecations_are_400_naming_the_field_and_change_nothing(
    alice, anon, agent, body, field
):
    answer = alice.post(f"/agents/{agent['id']}/deprecate", body, format="json")
    assert answer.status_code == 400
    assert field in [e["path"] for e in answer.json()["errors"]]
    assert anon.get(f"/agents/{agent['id']}").json()["status"] == "active"


def test_an_agent_is_not_its_own_successor(alice, agent):
    body = {"reason": "x", "successor": agent["id"]}
    assert alice.post(f"/agents/{agent['id']}/deprecate", body, format="json").status_code == 400


def test_only_the_owner_or_an_admin_changes_the_lifecycle(bob, admin_client, agent):
    url = f"/agents/{agent['id']}"
    assert bob.post(f"{url}/deprecate", {"reason": "mine"}, format="json").status_code == 403
    assert bob.delete(url).status_code == 403
    assert (
        admin_client.post(f"{url}/deprecate", {"reason": "ops"}, format="json").status_code == 200
    )


def test_delete_retires_the_agent(alice, bob, anon, admin_client, agent):
    url = f"/agents/{agent['id']}"
    assert alice.delete(url).status_code == 204
    assert alice.delete(url).status_code == 204  # again: nothing more happens
    assert alice.get(url).json()["status"] == "retired"
    assert admin_client.get(url).json()["status"] == "retired"
    for client in (anon, bob):
        gone = client.get(url)
        assert gone.status_code == 410 and gone.json()["type"].endswith("/retired")
    refused = alice.patch(url, {"description": "back"}, format="json")
    assert refused.status_code == 409 and refused.json()["type"].endswith("/retired")
    assert alice.post(f"{url}/deprecate", {"reason": "x"}, format="json").status_code == 409


def test_discovery_leaves_retired_agents_out_and_filters_and_counts_status(
    alice, anon, agent, successor, native_payload
):
    third = native_payload(name="Retired Summarizer")
    third["endpoints"][0]["address"] = "https://third.example.com/a2a"
    retired = alice.post("/agents", third, format="json").json()
    alice.post(f"/agents/{agent['id']}/deprecate", {"reason": "old"}, format="json")
    alice.delete(f"/agents/{retired['id']}")

    def ids(**params):
        answer = anon.get("/discover/agents", params)
        assert answer.status_code == 200, answer.content
        return {a["id"] for a in answer.json()["results"]}

    assert ids() == {agent["id"], successor["id"]}
    assert ids(q="summarizer") == {agent["id"], successor["id"]}
    assert ids(status="deprecated") == {agent["id"]}
    assert ids(status="active") == {successor["id"]}
    counts = anon.get("/discover/agents", {"facets": "status"}).json()["facets"]["status"]
    assert sorted((c["value"], c["count"]) for c in counts) == [("active", 1), ("deprecated", 1)]
    bad = anon.get("/discover/agents", {"status": "retired"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "status"
    feed = anon.get("/discover/agents", {"updated_since": "2000-01-01T00:00:00Z"}).json()
    assert retired["id"] in {t["id"] for t in feed["deleted"]}
    assert retired["id"] not in {a["id"] for a in feed["results"]}


def test_lifecycle_changes_send_agent_status_changed(alice, agent):
    seen = []

    @receiver(agent_status_changed, dispatch_uid="test-lifecycle-seen")
    def on_status(sender, agent, status, previous, **kwargs):
        seen.append((str(agent.id), previous, status))

    try:
        alice.post(f"/agents/{agent['id']}/deprecate", {"reason": "old"}, format="json")
        alice.delete(f"/agents/{agent['id']}")
    finally:
        agent_status_changed.disconnect(dispatch_uid="test-lifecycle-seen")
    assert seen == [
        (agent["id"], "active", "deprecated"),
        (agent["id"], "deprecated", "retired"),
    ]


def test_compatibility_is_an_owner_setting_shown_on_the_agent(alice, bob, agent):
    url = f"/agents/{agent['id']}"
    assert (
        alice.patch(url, {"compatibility": "backward"}, format="json").json()["compatibility"]
        == "backward"
    )
    bad = alice.patch(url, {"compatibility": "forward"}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "compatibility"
    assert bob.patch(url, {"compatibility": "none"}, format="json").status_code == 403
