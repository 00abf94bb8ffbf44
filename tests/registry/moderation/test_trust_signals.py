"""Moderation's trust signals (registry/moderation/trust_signals.py): a verified publisher's
agents weigh it in their score, and each distinct reporter with an open report lowers it."""

import pytest

pytestmark = pytest.mark.django_db


def signals(client, agent_id) -> dict:
    return client.get(f"/agents/{agent_id}").json()["trust"]["signals"]


def test_verified_publishers_and_open_reports_are_trust_signals(
    admin_client, alice, anon, native_payload, settings
):
    settings.REPORTS_QUARANTINE_AT = 3
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    before = signals(anon, agent_id)
    assert before["verifiedPublisher"]["value"] == 0.0
    assert before["openReports"]["value"] == 1.0  # no report: full

    verified = admin_client.put(
        "/publishers/alice/verified", {"reason": "known vendor"}, format="json"
    )
    assert verified.status_code in (200, 201), verified.content
    assert signals(anon, agent_id)["verifiedPublisher"]["value"] == 1.0

    for number, address in enumerate(("203.0.113.5", "203.0.113.6")):
        filed = anon.post(
            f"/agents/{agent_id}/reports",
            {"reason": "spam", "detail": "Adverts."},
            format="json",
            REMOTE_ADDR=address,
        )
        assert filed.status_code == 201, filed.content
        reported = signals(anon, agent_id)["openReports"]
        assert reported["reporters"] == number + 1
        assert reported["value"] == round(1 - (number + 1) / 3, 3)  # (kept to three places)
