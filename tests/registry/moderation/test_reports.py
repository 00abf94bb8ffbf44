"""Reports: anyone reports an agent; enough distinct reporters quarantine it pending review;
its owner reads the open reports (not who sent them), admins list and close them; each
address is limited."""

import pytest
from rest_framework.test import APIClient

from registry.access.models import AuditEntry

pytestmark = pytest.mark.django_db


def _from(address: str) -> APIClient:
    return APIClient(REMOTE_ADDR=address)


def _report(client, agent_id, reason="spam", detail="Sells pills"):
    body = {"reason": reason, "detail": detail}
    return client.post(f"/agents/{agent_id}/reports", body, format="json")


@pytest.fixture
def agent(alice, native_payload) -> dict:
    return alice.post("/agents", native_payload(name="Pill Shop"), format="json").json()


def test_distinct_reporters_quarantine_an_agent_pending_review(
    settings, admin_client, alice, bob, anon, agent
):
    settings.REPORTS_QUARANTINE_AT = 3
    first = _report(_from("198.51.100.1"), agent["id"])
    assert first.status_code == 201 and "reporter" not in first.json()
    _report(_from("198.51.100.1"), agent["id"], "malicious")  # the same reporter again
    _report(bob, agent["id"], "impersonation")
    assert anon.get(f"/agents/{agent['id']}").status_code == 200  # two reporters so far
    _report(_from("198.51.100.2"), agent["id"])
    assert anon.get(f"/agents/{agent['id']}").status_code == 404
    moderation = alice.get(f"/agents/{agent['id']}/moderation").json()
    assert moderation["quarantined"] and moderation["openReports"] == 3
    assert moderation["quarantineReason"].startswith("Reported by 3 reporters")
    assert AuditEntry.objects.get(action="agent.quarantined").actor == "reports"

    owned = alice.get(f"/agents/{agent['id']}/reports").json()["items"]
    assert len(owned) == 4 and all("reporter" not in r for r in owned)
    assert bob.get(f"/agents/{agent['id']}/reports").status_code == 403
    listed = admin_client.get("/reports", {"limit": 3}).json()
    assert [r["reporter"] for r in listed["items"]][:1] == [""]
    assert "bob" in [r["reporter"] for r in listed["items"]]
    rest = admin_client.get(listed["next"]).json()
    assert len(rest["items"]) == 1 and rest["next"] is None
    queue = admin_client.get("/moderation").json()["items"]
    assert [(i["agentId"], i["openReports"]) for i in queue] == [(agent["id"], 3)]

    closed = admin_client.post(
        f"/reports/{owned[0]['id']}/resolve", {"status": "dismissed"}, format="json"
    )
    assert closed.status_code == 200 and closed.json()["status"] == "dismissed"
    assert len(alice.get(f"/agents/{agent['id']}/reports").json()["items"]) == 3
    assert AuditEntry.objects.filter(action="report.dismissed").count() == 1


def test_reports_are_checked_limited_and_need_a_visible_agent(settings, admin_client, agent):
    bad = _report(_from("203.0.113.9"), agent["id"], reason="ugly")
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "reason"
    settings.REPORTS_PER_ADDRESS_HOUR = 2
    client = _from("203.0.113.7")
    assert [_report(client, agent["id"]).status_code for _ in range(3)] == [201, 201, 429]
    admin_client.post(f"/agents/{agent['id']}/quarantine", {"reason": "x"}, format="json")
    assert _report(_from("203.0.113.8"), agent["id"]).status_code == 404
    assert _from("203.0.113.8").get("/reports").status_code == 401
