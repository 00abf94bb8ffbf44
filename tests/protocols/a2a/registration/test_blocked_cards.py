"""The blocklist on the A2A paths: a card on a blocked domain, or of a blocked digest, is
refused (by the API, in bulk); a blocked digest quarantines the agents serving that card."""

import pytest

from protocols.a2a.models import CardDocument
from protocols.a2a.registration.bulk import cards_bulk_import
from registry.http.problems import ProblemError

pytestmark = pytest.mark.django_db


def _block(admin_client, kind, value, reason="impersonates a bank"):
    body = {"kind": kind, "value": value, "reason": reason}
    return admin_client.post("/blocklist", body, format="json")


def _interface(url: str) -> list[dict]:
    return [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]


def test_a_card_on_a_blocked_domain_is_refused_by_the_api_and_in_bulk(
    admin_client, alice, make_card
):
    _block(admin_client, "domain", "bank-login.example")
    card = make_card(supportedInterfaces=_interface("https://a2a.bank-login.example/v1"))
    refused = alice.post("/a2a/agents", {"card": card}, format="json")
    assert refused.status_code == 422
    assert refused.json()["type"].endswith("/problems/blocked")
    assert "impersonates a bank" in refused.json()["detail"]
    with pytest.raises(ProblemError) as caught:
        cards_bulk_import(owner="alice", cards=[make_card(), card])
    assert caught.value.status_code == 422
    assert CardDocument.objects.count() == 0  # the batch changed nothing


def test_a_blocked_digest_refuses_the_card_and_quarantines_who_serves_it(
    admin_client, alice, bob, anon, make_card, django_capture_on_commit_callbacks
):
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    digest = CardDocument.objects.get(agent_id=agent_id).sha256
    with django_capture_on_commit_callbacks(execute=True):
        entry = _block(admin_client, "digest", digest).json()
    assert admin_client.get("/blocklist").json()["items"][0]["quarantined"] == 1
    assert entry["value"] == digest
    assert anon.get(f"/a2a/agents/{agent_id}").status_code == 404
    again = bob.post("/a2a/agents", {"card": make_card()}, format="json")
    assert again.status_code == 422
    assert [e["path"] for e in again.json()["errors"]] == ["card"]
    other = bob.post("/a2a/agents", {"card": make_card(name="Other")}, format="json")
    assert other.status_code == 201  # another card, another digest
