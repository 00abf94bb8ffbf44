"""Probing A2A endpoints: the card at the host names them, and a real A2A call answers."""

import copy
import hashlib
import json

import pytest
from django.core.management import call_command

from registry.access.models import AuditEntry
from registry.liveness.models import ProbeResult
from tests.conftest import BASE_CARD

pytest_plugins = ["tests.https_server", "tests.dns_server"]
pytestmark = pytest.mark.django_db

JSONRPC_ERROR = json.dumps(
    {"jsonrpc": "2.0", "id": "registry-probe", "error": {"code": -32001, "message": "not found"}}
).encode()


def card_at(server, binding: str = "JSONRPC") -> dict:
    card = copy.deepcopy(BASE_CARD)
    card["supportedInterfaces"] = [
        {"url": server.url("/a2a"), "protocolBinding": binding, "protocolVersion": "1.0"}
    ]
    return card


def register_and_probe(client, card, capsys) -> dict:
    response = client.post("/a2a/agents", {"card": card}, format="json")
    assert response.status_code == 201, response.content
    agent = response.json()
    call_command("probe_endpoints", agent=agent["id"])
    capsys.readouterr()
    return agent


def test_a_conformant_agent_is_up_ok_and_conformant(network, https_server, alice, anon, capsys):
    card = card_at(https_server)
    https_server.json("/.well-known/agent-card.json", json.dumps(card).encode())
    https_server.json_post("/a2a", JSONRPC_ERROR)

    agent = register_and_probe(alice, card, capsys)

    probe = ProbeResult.objects.get()
    assert (probe.ok, probe.category) == (True, "ok")
    assert probe.card_digest  # the card its host serves, named by its digest
    [call] = [r for r in https_server.requests if r.method == "POST"]
    assert json.loads(call.body)["method"] == "GetTask"
    results = anon.get("/discover/agents", {"conformant": "true"}).json()["results"]
    assert [a["id"] for a in results] == [agent["id"]]
    # The card the registry serves is the card as published: liveness is not in it.
    assert json.loads(anon.get(f"/a2a/agents/{agent['id']}").content) == card


def test_an_endpoint_that_answers_but_not_in_a2a_is_up_and_not_conformant(
    network, https_server, alice, anon, capsys
):
    card = card_at(https_server)
    https_server.route("/a2a", 200, {"Content-Type": "text/html"}, b"<h1>Welcome</h1>")
    https_server.route("POST /a2a", 200, {"Content-Type": "text/html"}, b"<h1>Welcome</h1>")

    agent = register_and_probe(alice, card, capsys)

    liveness = anon.get(f"/agents/{agent['id']}").json()["endpoints"][0]["liveness"]
    assert liveness["status"] == "live"
    assert liveness["lastProbe"]["category"] == "not_a2a"
    assert anon.get("/discover/agents", {"conformant": "true"}).json()["results"] == []
    assert len(anon.get("/discover/agents", {"conformant": "false"}).json()["results"]) == 1


def test_other_bindings_are_judged_on_reachability(network, https_server, alice, capsys):
    card = card_at(https_server, binding="HTTP+JSON")
    https_server.json("/.well-known/agent-card.json", json.dumps(card).encode())

    register_and_probe(alice, card, capsys)

    probe = ProbeResult.objects.get()
    assert (probe.ok, probe.category) == (True, "ok")
    assert "no A2A call for HTTP+JSON" in probe.detail
    assert not [r for r in https_server.requests if r.method == "POST"]


def register_by_domain(client, server, card: dict) -> dict:
    server.json("/.well-known/agent-card.json", json.dumps(card, indent=2).encode())
    server.json_post("/a2a", JSONRPC_ERROR)
    response = client.post("/a2a/agents", {"domain": f"localhost:{server.port}"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def probe_history(client, agent: dict, capsys) -> list[dict]:
    call_command("probe_endpoints", agent=agent["id"])
    capsys.readouterr()
    return client.get(f"/agents/{agent['id']}/liveness").json()["probes"]


def test_a_card_changed_where_it_was_registered_from_is_recorded_and_kept_by_default(
    network, https_server, alice, anon, capsys
):
    card = card_at(https_server)
    agent = register_by_domain(alice, https_server, card)
    served = anon.get(f"/a2a/agents/{agent['id']}").content
    [unchanged] = probe_history(anon, agent, capsys)
    assert unchanged["cardChanged"] is False
    assert unchanged["cardDigest"] == hashlib.sha256(served).hexdigest()

    changed = {**card, "name": "Renamed at the source"}
    https_server.json("/.well-known/agent-card.json", json.dumps(changed).encode())
    latest = probe_history(anon, agent, capsys)[0]

    assert latest["cardChanged"] is True
    assert latest["cardDigest"] == hashlib.sha256(json.dumps(changed).encode()).hexdigest()
    assert "changed" in latest["detail"]
    assert anon.get(f"/a2a/agents/{agent['id']}").content == served  # not re-imported


def test_with_reimport_on_a_changed_valid_card_replaces_the_stored_one(
    network, https_server, alice, anon, capsys
):
    network.A2A_PROBE_REIMPORT = True
    card = card_at(https_server)
    agent = register_by_domain(alice, https_server, card)
    changed = json.dumps({**card, "name": "Renamed at the source"}).encode()
    https_server.json("/.well-known/agent-card.json", changed)

    latest = probe_history(anon, agent, capsys)[0]

    assert latest["cardChanged"] is True
    assert "re-imported" in latest["detail"]
    assert anon.get(f"/a2a/agents/{agent['id']}").content == changed
    shown = anon.get(f"/agents/{agent['id']}").json()
    assert shown["name"] == "Renamed at the source"
    assert shown["trust"]["verified"] is True  # it still came from its domain
    assert AuditEntry.objects.filter(actor="system:probe").exists()
    # The next probe finds the card it has.
    assert probe_history(anon, agent, capsys)[0]["cardChanged"] is False


def test_with_reimport_on_an_invalid_changed_card_is_not_imported(
    network, https_server, alice, anon, capsys
):
    network.A2A_PROBE_REIMPORT = True
    card = card_at(https_server)
    agent = register_by_domain(alice, https_server, card)
    served = anon.get(f"/a2a/agents/{agent['id']}").content
    broken = {**card, "skills": [{"id": "x"}]}  # a skill without its required members
    https_server.json("/.well-known/agent-card.json", json.dumps(broken).encode())

    latest = probe_history(anon, agent, capsys)[0]

    assert latest["cardChanged"] is True
    assert "not re-imported" in latest["detail"]
    assert anon.get(f"/a2a/agents/{agent['id']}").content == served


def test_a_posted_card_is_not_compared_with_anything(network, https_server, alice, capsys):
    card = card_at(https_server)
    https_server.json(
        "/.well-known/agent-card.json", json.dumps({**card, "name": "Other"}).encode()
    )
    https_server.json_post("/a2a", JSONRPC_ERROR)

    register_and_probe(alice, card, capsys)

    assert ProbeResult.objects.get().card_changed is False
