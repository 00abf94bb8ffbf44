"""Domain claims: a key proves a domain is its owner's (a token at the well-known path or
in DNS TXT), and gets every agent registered from the domain; others may no longer
register from it."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from registry.access.models import AuditEntry
from registry.agents.models import DomainClaim
from tests.protocols.a2a.sample_cards import card_on

pytest_plugins = ["tests.https_server", "tests.dns_server"]
pytestmark = pytest.mark.django_db

CLAIM_PATH = "/.well-known/a2a-registry-claim"


@pytest.fixture
def domain(network, https_server) -> str:
    https_server.json("/.well-known/agent-card.json", json.dumps(card_on(https_server)).encode())
    return f"localhost:{https_server.port}"


@pytest.fixture
def squatted(alice, domain) -> str:
    """An agent alice registered from a domain that is bob's."""
    answer = alice.post("/a2a/agents", {"domain": domain}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


def test_a_claim_proven_at_the_well_known_path_hands_over_the_domains_agents(
    https_server, alice, bob, domain, squatted
):
    made = bob.post("/claims", {"domain": domain}, format="json")
    assert made.status_code == 201, made.content
    claim = made.json()
    assert claim["state"] == "pending" and len(claim["token"]) >= 32
    assert claim["publish"]["wellKnown"]["url"] == f"https://{domain}{CLAIM_PATH}"
    assert claim["publish"]["dnsTxt"] == {
        "name": "_a2a-registry-claim.localhost",
        "value": f"v=1; t={claim['token']}",
    }

    unproven = bob.post(f"/claims/{claim['id']}/verify")
    assert unproven.status_code == 422 and unproven.json()["type"].endswith("/claim-unproven")
    assert alice.get(f"/agents/{squatted}").json()["owner"] == "alice"

    https_server.route(
        CLAIM_PATH, 200, {"Content-Type": "text/plain"}, f"{claim['token']}\n".encode()
    )
    verified = bob.post(f"/claims/{claim['id']}/verify")
    assert verified.status_code == 200, verified.content
    assert (
        verified.json()["state"],
        verified.json()["method"],
        verified.json()["agentsMoved"],
    ) == (
        "verified",
        "well-known",
        1,
    )
    assert bob.get(f"/agents/{squatted}").json()["owner"] == "bob"
    assert (
        alice.patch(f"/agents/{squatted}", {"description": "x"}, format="json").status_code == 403
    )
    entry = AuditEntry.objects.get(action="domain.claimed")
    assert (entry.actor, entry.after["moved"]) == ("bob", 1)

    again = alice.post("/a2a/agents", {"domain": domain}, format="json")
    assert again.status_code == 409 and again.json()["type"].endswith("/domain-claimed")
    assert bob.post("/a2a/agents", {"domain": domain}, format="json").status_code == 200  # its own


def test_a_claim_proven_in_dns_txt(dns_server, bob, domain, squatted):
    claim = bob.post("/claims", {"domain": domain}, format="json").json()
    dns_server.records["_a2a-registry-claim.localhost"] = [
        ["v=1; t=wrong"],
        [f"v=1; t={claim['token']}"],
    ]
    verified = bob.post(f"/claims/{claim['id']}/verify").json()
    assert (verified["method"], verified["agentsMoved"]) == ("dns", 1)


def test_claims_are_the_claimants_own_and_expire(alice, bob, admin_client, anon, domain):
    claim = bob.post("/claims", {"domain": domain}, format="json").json()
    assert alice.get(f"/claims/{claim['id']}").status_code == 404
    assert alice.post(f"/claims/{claim['id']}/verify").status_code == 404
    assert alice.get("/claims").json()["items"] == []
    assert [c["id"] for c in bob.get("/claims").json()["items"]] == [claim["id"]]
    listed = admin_client.get("/claims").json()["items"]
    assert [c["id"] for c in listed] == [claim["id"]] and "token" not in listed[0]
    assert anon.get("/claims").status_code == 401
    DomainClaim.objects.filter(pk=claim["id"]).update(expires_at=timezone.now() - timedelta(1))
    late = bob.post(f"/claims/{claim['id']}/verify")
    assert late.status_code == 409 and late.json()["type"].endswith("/claim-expired")
    assert bob.get(f"/claims/{claim['id']}").json()["state"] == "expired"


@pytest.mark.parametrize("value", ["", "https://example.com/path", "exa mple.com", "a" * 300])
def test_a_bad_domain_is_a_400_naming_it(bob, value):
    answer = bob.post("/claims", {"domain": value}, format="json")
    assert answer.status_code == 400
    assert [e["path"] for e in answer.json()["errors"]] == ["domain"]
    assert not DomainClaim.objects.exists()


def test_an_agent_fetched_from_the_domain_moves_even_once_its_card_was_edited(
    https_server, alice, bob, domain, squatted
):
    # A native edit of the card unverifies it; it still came from the domain.
    alice.patch(f"/agents/{squatted}", {"description": "Edited here."}, format="json")
    assert alice.get(f"/agents/{squatted}").json()["trust"]["verified"] is False
    claim = bob.post("/claims", {"domain": domain}, format="json").json()
    https_server.route(CLAIM_PATH, 200, {}, claim["token"].encode())
    assert bob.post(f"/claims/{claim['id']}/verify").json()["agentsMoved"] == 1
    assert bob.get(f"/agents/{squatted}").json()["owner"] == "bob"


def test_after_a_claim_another_owner_cannot_verify_a_posted_card_against_the_domain(
    https_server, alice, bob, domain
):
    claim = bob.post("/claims", {"domain": domain}, format="json").json()
    https_server.route(CLAIM_PATH, 200, {}, claim["token"].encode())
    assert bob.post(f"/claims/{claim['id']}/verify").status_code == 200

    # Posting the domain's card directly is allowed (unverified, not "from" the domain) …
    posted = alice.post("/a2a/agents", {"card": card_on(https_server)}, format="json")
    assert posted.status_code == 201, posted.content
    agent_id = posted.json()["id"]
    # … but the domain does not vouch for it: verifying it there is the owner's alone.
    refused = alice.post(f"/a2a/agents/{agent_id}/verify", {"domain": domain}, format="json")
    assert refused.status_code == 409 and refused.json()["type"].endswith("/domain-claimed")
    assert alice.get(f"/agents/{agent_id}").json()["trust"]["verified"] is False
