"""Registration by domain or URL, verification, signatures, and one agent per card identity."""

import copy
import json
import threading
import time

import httpx
import pytest
from django.core.management import call_command
from django.db import connection

from protocols.a2a.models import CardProvenance
from registry.agents.models import Agent
from tests.conftest import BASE_CARD
from tests.protocols.a2a.sample_cards import card_on, ec_key_pair

pytest_plugins = ["tests.https_server", "tests.dns_server"]


def publish(server, path: str, card: dict) -> bytes:
    body = json.dumps(card, indent=2).encode()  # not the registry's own spelling of it
    server.json(path, body)
    return body


def domain_of(server) -> str:
    return f"localhost:{server.port}"


@pytest.mark.django_db
def test_register_by_domain_finds_the_well_known_card_and_stores_its_bytes(
    network, https_server, alice, anon
):
    body = publish(https_server, "/.well-known/agent-card.json", card_on(https_server))
    response = alice.post("/a2a/agents", {"domain": domain_of(https_server)}, format="json")
    assert response.status_code == 201, response.content
    result = response.json()
    assert result["card"]["source"] == {
        "path": "well-known",
        "url": https_server.url("/.well-known/agent-card.json"),
    }
    assert result["card"]["verified"] is True
    trust = result["trust"]
    provenance = ("verified", "verifiedDomain", "signature", "verifiedPublisher")
    assert {name: trust[name] for name in provenance} == {
        "verified": True,
        "verifiedDomain": domain_of(https_server),
        "signature": "unsigned",
        "verifiedPublisher": False,
    }
    # The verified domain weighs 20 of the 115 the agent's signals weigh (default weights),
    # and no open report 10 more: 30 / 115, 26.
    assert trust["signals"]["verifiedDomain"]["value"] == 1.0
    assert trust["signals"]["verifiedDomain"]["by"] == "card"
    assert trust["score"] == 26
    assert response["Location"] == f"/a2a/agents/{result['id']}"
    assert anon.get(f"/a2a/agents/{result['id']}").content == body


@pytest.mark.django_db
def test_the_legacy_agent_json_path_is_tried_next(network, https_server, alice):
    publish(https_server, "/.well-known/agent.json", card_on(https_server))
    response = alice.post("/a2a/agents", {"domain": domain_of(https_server)}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["card"]["source"]["path"] == "legacy-well-known"


@pytest.mark.django_db
def test_a_dns_txt_hint_names_the_card_url(network, https_server, dns_server, alice):
    publish(https_server, "/cards/main.json", card_on(https_server))
    dns_server.records["_agent.localhost"] = [
        [f"v=agent/1; c={https_server.url('/cards/main.json')}"]
    ]
    response = alice.post("/a2a/agents", {"domain": domain_of(https_server)}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["card"]["source"]["path"] == "dns-txt"


@pytest.mark.django_db
def test_register_by_url(network, https_server, alice):
    publish(https_server, "/custom/card.json", card_on(https_server))
    response = alice.post(
        "/a2a/agents", {"url": https_server.url("/custom/card.json")}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["card"]["source"]["path"] == "url"


@pytest.mark.django_db
def test_interfaces_on_another_host_are_flagged_or_rejected_by_policy(network, https_server, alice):
    card = card_on(https_server)
    card["supportedInterfaces"][0]["url"] = "https://elsewhere.example.net/a2a"
    publish(https_server, "/.well-known/agent-card.json", card)
    response = alice.post("/a2a/agents", {"domain": domain_of(https_server)}, format="json")
    assert response.status_code == 201
    assert response.json()["card"]["originProblems"][0]["path"] == "supportedInterfaces[0].url"

    network.A2A_ORIGIN_POLICY = "reject"
    Agent.objects.all().delete()
    response = alice.post("/a2a/agents", {"domain": domain_of(https_server)}, format="json")
    assert response.status_code == 422
    assert response.json()["type"] == "/problems/origin-mismatch"
    assert Agent.objects.count() == 0


@pytest.mark.django_db
def test_a_domain_without_a_card_is_422_listing_every_attempt(network, https_server, alice):
    response = alice.post("/a2a/agents", {"domain": domain_of(https_server)}, format="json")
    assert response.status_code == 422
    body = response.json()
    assert body["type"] == "/problems/discovery-failed"
    assert [e["path"] for e in body["errors"]][-2:] == [
        https_server.url("/.well-known/agent-card.json"),
        https_server.url("/.well-known/agent.json"),
    ]
    assert Agent.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "target",
    [
        {"domain": "127.0.0.1"},
        {"domain": "localhost"},
        {"url": "https://2130706433/card.json"},
        {"url": "https://[::ffff:127.0.0.1]/card.json"},
        {"url": "http://example.com/card.json"},
    ],
)
def test_hostile_targets_are_refused_and_nothing_is_stored(settings, alice, target):
    settings.FETCH_ALLOWED_HOSTS = []
    settings.DISCOVERY_DNS_NAMESERVERS = ["127.0.0.1"]
    settings.DISCOVERY_DNS_PORT = 9  # nothing answers: the TXT hint is skipped
    settings.DISCOVERY_DNS_TIMEOUT = 0.2
    response = alice.post("/a2a/agents", target, format="json")
    assert response.status_code in (400, 422)
    assert response["Content-Type"] == "application/problem+json"
    reasons = " ".join(e["message"] for e in response.json().get("errors", []))
    assert (
        "blocked-address" in reasons
        or "scheme-not-allowed" in reasons
        or response.status_code == 400
    )
    assert Agent.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("domain", ["https://agent.example", "agent.example/path", "a b", ""])
def test_malformed_domains_are_400_naming_the_field(alice, domain):
    response = alice.post("/a2a/agents", {"domain": domain}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "domain"


@pytest.mark.django_db
def test_posting_two_sources_at_once_is_400(alice, make_card):
    response = alice.post(
        "/a2a/agents", {"card": make_card(), "domain": "a.example"}, format="json"
    )
    assert response.status_code == 400
    assert {e["path"] for e in response.json()["errors"]} == {"card", "domain"}


@pytest.mark.django_db
def test_a_posted_card_is_unverified_until_verify_finds_it_at_its_domain(
    network, https_server, alice, anon
):
    card = card_on(https_server)
    agent_id = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    assert anon.get(f"/agents/{agent_id}").json()["trust"]["verified"] is False

    # The domain serves another card: not verified.
    publish(https_server, "/.well-known/agent-card.json", card_on(https_server, name="Other"))
    response = alice.post(f"/a2a/agents/{agent_id}/verify", {}, format="json")
    assert response.status_code == 409
    assert response.json()["type"] == "/problems/card-mismatch"
    assert {"path": "name", "message": "differs from the served card"} in response.json()["errors"]

    publish(https_server, "/.well-known/agent-card.json", card)
    response = alice.post(f"/a2a/agents/{agent_id}/verify", {}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["trust"]["verified"] is True
    assert anon.get("/discover/agents", {"verified": "true"}).json()["results"][0]["id"] == (
        agent_id
    )
    assert anon.get("/discover/agents", {"verified": "false"}).json()["results"] == []


@pytest.mark.django_db
def test_only_the_owner_may_verify(network, https_server, alice, bob, make_card):
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    assert bob.post(f"/a2a/agents/{agent_id}/verify", {}, format="json").status_code == 403


@pytest.mark.django_db
def test_native_agents_cannot_be_verified(alice, native_payload):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    response = alice.post(f"/a2a/agents/{agent_id}/verify", {}, format="json")
    assert response.status_code == 409
    assert response.json()["type"] == "/problems/not-verifiable"


def signed_card_with_jwks(server, private_key, public_key, kid="k1") -> dict:
    from a2a.types import AgentCard
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict, ParseDict
    from jwt.algorithms import ECAlgorithm

    jwk = json.loads(ECAlgorithm.to_jwk(public_key))
    jwk.update({"kid": kid, "alg": "ES256", "use": "sig"})
    server.json("/.well-known/jwks.json", json.dumps({"keys": [jwk]}).encode())
    signer = create_agent_card_signer(
        signing_key=private_key, protected_header={"kid": kid, "alg": "ES256", "typ": "JOSE"}
    )
    return MessageToDict(signer(ParseDict(card_on(server), AgentCard())))


@pytest.mark.django_db
def test_signed_cards_are_verified_against_the_domains_jwks_and_filterable(
    network, https_server, alice, anon
):
    private, public = ec_key_pair()
    card = signed_card_with_jwks(https_server, private, public)
    response = alice.post("/a2a/agents", {"card": card}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["card"]["signature"]["status"] == "verified"
    assert response.json()["trust"]["signature"] == "verified"
    agent_id = response.json()["id"]
    assert [
        a["id"] for a in anon.get("/discover/agents", {"signed": "true"}).json()["results"]
    ] == [agent_id]

    tampered = copy.deepcopy(card)
    tampered["supportedInterfaces"][0]["url"] = https_server.url("/a2a/v2")
    tampered["name"] = "Tampered"
    response = alice.post("/a2a/agents", {"card": tampered}, format="json")
    assert response.status_code == 201
    assert response.json()["card"]["signature"]["status"] == "invalid"
    assert response.json()["card"]["signature"]["detail"]
    provenance = CardProvenance.objects.get(agent_id=response.json()["id"])
    assert provenance.signature == "invalid"
    assert len(anon.get("/discover/agents", {"signed": "false"}).json()["results"]) == 1


@pytest.mark.django_db
def test_registering_the_same_card_again_updates_the_agent(alice, bob, make_card):
    first = alice.post("/a2a/agents", {"card": make_card()}, format="json")
    again = alice.post("/a2a/agents", {"card": make_card(description="New.")}, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["description"] == "New."
    assert Agent.objects.count() == 1
    # Another owner's identical card is another agent.
    assert bob.post("/a2a/agents", {"card": make_card()}, format="json").status_code == 201
    assert Agent.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_identical_registrations_leave_one_agent(live_server, make_key):
    key = make_key("racer")
    card = copy.deepcopy(BASE_CARD)
    start = threading.Barrier(50)
    statuses: list[int] = []

    def register() -> None:
        # The test server's listen backlog is small: a connection it drops is tried again
        # (safe: registering the same card is idempotent, which is what is tested).
        with httpx.Client(timeout=60) as client:
            start.wait()
            for _ in range(50):
                try:
                    response = client.post(
                        f"{live_server.url}/a2a/agents",
                        json={"card": card},
                        headers={"Authorization": f"Bearer {key}"},
                    )
                except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError):
                    time.sleep(0.05)
                    continue
                statuses.append(response.status_code)
                return

    threads = [threading.Thread(target=register) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(statuses) == 50
    assert sorted(set(statuses)) == [200, 201], statuses
    assert statuses.count(201) == 1
    assert Agent.objects.filter(owner="racer").count() == 1
    assert connection.vendor in {"sqlite", "postgresql"}


@pytest.mark.django_db
def test_import_agent_command_registers_from_a_domain(network, https_server, capsys):
    publish(https_server, "/.well-known/agent-card.json", card_on(https_server))
    call_command("import_agent", domain_of(https_server), "--owner", "ops")
    out = capsys.readouterr().out
    assert "Registered Weather Agent" in out
    assert "via well-known" in out
    agent = Agent.objects.get()
    assert agent.owner == "ops"
    assert CardProvenance.objects.get(agent=agent).verified_domain == domain_of(https_server)


@pytest.mark.django_db
def test_the_signature_job_notices_a_rotated_key_and_a_restored_one(
    network, https_server, alice, anon
):
    from protocols.a2a.tasks import signatures_recheck

    private, public = ec_key_pair()
    card = signed_card_with_jwks(https_server, private, public)
    agent_id = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    signed = {"signed": "true"}
    assert [a["id"] for a in anon.get("/discover/agents", signed).json()["results"]] == [agent_id]

    _, other_public = ec_key_pair()  # the publisher rotates to a key this card is not signed by
    signed_card_with_jwks(https_server, private, other_public)
    assert signatures_recheck.delay().get() == {"invalid": 1}

    assert anon.get(f"/agents/{agent_id}").json()["trust"]["signature"] == "invalid"
    assert anon.get("/discover/agents", signed).json()["results"] == []

    signed_card_with_jwks(https_server, private, public)
    call_command("signatures_recheck")
    assert anon.get(f"/agents/{agent_id}").json()["trust"]["signature"] == "verified"
    assert [a["id"] for a in anon.get("/discover/agents", signed).json()["results"]] == [agent_id]


@pytest.mark.django_db
def test_a_domain_whose_server_trickles_headers_is_a_problem_within_the_budget(
    network, https_server, alice
):
    # Three fetches (TXT hint, well-known, legacy), each cut at its deadline; the request's
    # budget bounds them together.
    network.FETCH_TOTAL_TIMEOUT = 1
    network.FETCH_REQUEST_BUDGET = 2
    https_server.route("/.well-known/agent-card.json", trickle=0.2)
    https_server.route("/.well-known/agent.json", trickle=0.2)
    began = time.monotonic()

    response = alice.post("/a2a/agents", {"domain": domain_of(https_server)}, format="json")

    assert response.status_code == 422
    outcomes = [e["message"] for e in response.json()["errors"]]
    assert any("did not answer in time" in o for o in outcomes), outcomes
    assert time.monotonic() - began < 10  # each server would trickle for a minute
    assert not Agent.objects.exists()


@pytest.mark.django_db
def test_requests_that_fetch_have_their_own_rate_limit_per_key(network, https_server, alice):
    network.RATE_LIMIT_FETCH = "2/day"
    publish(https_server, "/.well-known/agent-card.json", card_on(https_server))
    domain = {"domain": domain_of(https_server)}

    statuses = [alice.post("/a2a/agents", domain, format="json").status_code for _ in range(3)]

    assert statuses == [201, 200, 429]
    refused = alice.post(f"/a2a/agents/{Agent.objects.get().id}/verify", {}, format="json")
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    # Registering by card fetches nothing, and is not counted.
    card = card_on(https_server, name="Posted")
    card["supportedInterfaces"][0]["url"] = https_server.url("/other")
    assert alice.post("/a2a/agents", {"card": card}, format="json").status_code == 201


@pytest.mark.django_db
def test_verify_applies_the_origin_policy_as_registration_does(network, https_server, alice):
    # Posted, then verified at a domain whose card points elsewhere: refused under "reject".
    network.A2A_ORIGIN_POLICY = "reject"
    card = card_on(https_server)
    card["supportedInterfaces"][0]["url"] = "https://elsewhere.example.net/a2a"
    publish(https_server, "/.well-known/agent-card.json", card)
    agent = alice.post("/a2a/agents", {"card": card}, format="json").json()

    response = alice.post(
        f"/a2a/agents/{agent['id']}/verify", {"domain": domain_of(https_server)}, format="json"
    )

    assert response.status_code == 422
    assert response.json()["type"] == "/problems/origin-mismatch"
    provenance = CardProvenance.objects.get(agent_id=agent["id"])
    assert provenance.verified_domain == ""
