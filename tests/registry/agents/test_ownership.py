"""Ownership transfers: the owner offers, the receiving owner's key accepts (or either side
cancels), the offer expires, every step is audited, and the old owner's keys lose write
access in the same transaction."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.dispatch import receiver
from django.utils import timezone

from registry.access.models import AuditEntry
from registry.agents.models import OwnershipTransfer
from registry.signals import agent_owner_changed

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(alice, native_payload) -> dict:
    return alice.post("/agents", native_payload(), format="json").json()


def offer(client, agent_id: str, to_owner: str = "bob"):
    return client.post(f"/agents/{agent_id}/transfers", {"toOwner": to_owner}, format="json")


def test_an_accepted_transfer_moves_the_agent_and_the_old_keys_lose_it(alice, bob, agent):
    moved = []

    @receiver(agent_owner_changed, dispatch_uid="test-owner-changed")
    def on_moved(sender, agent, previous_owner, owner, reason, **kwargs):
        moved.append((str(agent.id), previous_owner, owner, reason))

    made = offer(alice, agent["id"])
    assert made.status_code == 201, made.content
    transfer = made.json()
    assert (transfer["state"], transfer["fromOwner"], transfer["toOwner"]) == (
        "pending",
        "alice",
        "bob",
    )
    assert made["Location"] == f"/transfers/{transfer['id']}"
    assert alice.post(f"/transfers/{transfer['id']}/accept").status_code == 403  # not hers
    try:
        accepted = bob.post(f"/transfers/{transfer['id']}/accept")
    finally:
        agent_owner_changed.disconnect(dispatch_uid="test-owner-changed")
    assert accepted.status_code == 200 and accepted.json()["state"] == "accepted"
    assert moved == [(agent["id"], "alice", "bob", "transfer")]

    url = f"/agents/{agent['id']}"
    assert bob.get(url).json()["owner"] == "bob"
    assert alice.patch(url, {"description": "still mine?"}, format="json").status_code == 403
    assert bob.patch(url, {"description": "mine now"}, format="json").status_code == 200
    assert bob.post(f"/transfers/{transfer['id']}/accept").status_code == 409  # once
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"transfer.requested", "transfer.accepted", "agent.owner-transfer"} <= actions


def test_either_side_cancels_and_others_see_nothing(alice, bob, client_for, agent):
    transfer = offer(alice, agent["id"]).json()
    carol = client_for("carol")
    assert carol.get(f"/transfers/{transfer['id']}").status_code == 404
    assert carol.post(f"/transfers/{transfer['id']}/cancel").status_code == 404
    assert [t["id"] for t in bob.get("/transfers").json()["items"]] == [transfer["id"]]
    assert carol.get("/transfers").json()["items"] == []
    assert bob.post(f"/transfers/{transfer['id']}/cancel").json()["state"] == "cancelled"
    assert bob.post(f"/transfers/{transfer['id']}/accept").status_code == 409
    assert alice.get(f"/agents/{agent['id']}").json()["owner"] == "alice"
    again = offer(alice, agent["id"])
    assert again.status_code == 201
    assert alice.post(f"/transfers/{again.json()['id']}/cancel").status_code == 200
    assert AuditEntry.objects.filter(action="transfer.cancelled").count() == 2


@pytest.mark.parametrize(
    "body, status, field",
    [
        ({}, 400, "toOwner"),
        ({"toOwner": "alice"}, 400, "toOwner"),
        ({"toOwner": ""}, 400, "toOwner"),
    ],
)
def test_bad_offers_are_refused_naming_the_field(alice, agent, body, status, field):
    answer = alice.post(f"/agents/{agent['id']}/transfers", body, format="json")
    assert answer.status_code == status
    assert [e["path"] for e in answer.json()["errors"]] == [field]
    assert not OwnershipTransfer.objects.exists()


def test_one_pending_offer_at_a_time_and_only_by_the_owner(alice, bob, anon, agent):
    assert offer(bob, agent["id"], "bob").status_code == 403
    assert offer(anon, agent["id"]).status_code == 401
    assert offer(alice, agent["id"]).status_code == 201
    second = offer(alice, agent["id"], "carol")
    assert second.status_code == 409 and second.json()["type"].endswith("/transfer-pending")
    assert anon.get("/transfers").status_code == 401


def test_transfers_expire(alice, bob, agent, settings):
    transfer = offer(alice, agent["id"]).json()
    OwnershipTransfer.objects.filter(pk=transfer["id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    late = bob.post(f"/transfers/{transfer['id']}/accept")
    assert late.status_code == 409
    assert bob.get(f"/transfers/{transfer['id']}").json()["state"] == "expired"
    assert alice.get(f"/agents/{agent['id']}").json()["owner"] == "alice"

    pending = offer(alice, agent["id"]).json()
    OwnershipTransfer.objects.filter(pk=pending["id"]).update(expires_at=timezone.now())
    call_command("ownership_expire")
    assert OwnershipTransfer.objects.get(pk=pending["id"]).state == "expired"
    assert AuditEntry.objects.filter(action="transfer.expired").count() == 2


def test_an_offer_for_a_retired_agent_is_refused(alice, agent):
    alice.delete(f"/agents/{agent['id']}")
    assert offer(alice, agent["id"]).status_code == 409
