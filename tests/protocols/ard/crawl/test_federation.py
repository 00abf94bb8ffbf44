"""Federation with the peers of ARD_PEERS (local HTTPS test registries): referrals, auto
(parallel, one deadline, merged by identifier with our own copy winning, slow or failing
peers returned as referrals) and none."""

import json

import pytest

from tests.protocols.ard.conftest import openapi_problems, register

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


@pytest.fixture
def peers(settings, ca_bundle, local_names, https_server):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost", *local_names]
    settings.ARD_PEERS = [
        f"https://mybusiness.com:{https_server.port}/a",
        f"https://other.example:{https_server.port}/b",
    ]
    settings.ARD_FEDERATION_DEADLINE = 1.0
    return settings.ARD_PEERS


def peer_answer(server, prefix: str, results: list[dict], **options) -> None:
    body = json.dumps({"results": results}).encode()
    server.route(
        f"POST {prefix}/search", 200, {"Content-Type": "application/json"}, body, **options
    )


def result(identifier: str, score: int, source: str, name: str = "Peer agent") -> dict:
    return {
        "identifier": identifier,
        "displayName": name,
        "type": "application/a2a-agent-card+json",
        "url": "https://peer.example/card.json",
        "score": score,
        "source": source,
    }


def search(client, federation: str) -> dict:
    body = {"query": {"text": "weather"}, "federation": federation}
    response = client.post("/ard/search", body, format="json")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert openapi_problems("SearchResponse", answer) == []
    return answer


def test_referrals_name_each_peer_as_a_registry(anon, alice, make_card, peers, https_server):
    register(alice, make_card())
    answer = search(anon, "referrals")
    assert [r["url"] for r in answer["referrals"]] == [f"{p}/search" for p in peers]
    assert {r["type"] for r in answer["referrals"]} == {"application/ai-registry+json"}
    assert https_server.requests == []


def test_auto_merges_peers_by_identifier_and_our_copy_wins(
    anon, alice, make_card, peers, https_server
):
    ours = f"urn:air:testserver:agent:{register(alice, make_card())}"
    peer_answer(
        https_server,
        "/a",
        [
            result(ours, 100, peers[0], "Impostor"),
            result("urn:air:mybusiness.com:a2a:x", 99, peers[0]),
        ],
    )
    peer_answer(
        https_server,
        "/b",
        [
            result("urn:air:other.example:a2a:y", 50, peers[1]),
            {"identifier": 5},
            {**result("urn:air:other.example:a2a:z", 40, peers[1]), "displayName": 1},
        ],
    )
    answer = search(anon, "auto")
    assert "referrals" not in answer
    by_id = {r["identifier"]: r for r in answer["results"]}
    assert by_id[ours]["displayName"] == "Weather Agent"
    assert by_id[ours]["source"] == "http://testserver/ard"
    assert by_id["urn:air:mybusiness.com:a2a:x"]["source"] == peers[0]
    assert [r["score"] for r in answer["results"]] == sorted(
        (r["score"] for r in answer["results"]), reverse=True
    )
    assert len(answer["results"]) == 3
    asked = [json.loads(r.body) for r in https_server.requests]
    assert {a["federation"] for a in asked} == {"none"}


def test_a_slow_or_failing_peer_comes_back_as_a_referral(
    anon, alice, make_card, peers, https_server
):
    register(alice, make_card())
    peer_answer(https_server, "/a", [result("urn:air:mybusiness.com:a2a:x", 90, peers[0])], delay=3)
    https_server.route("POST /b/search", 500, {"Content-Type": "application/json"}, b"{}")
    answer = search(anon, "auto")
    assert sorted(r["url"] for r in answer["referrals"]) == sorted(f"{p}/search" for p in peers)
    assert [r["displayName"] for r in answer["results"]] == ["Weather Agent"]


def test_none_searches_locally(anon, alice, make_card, peers, https_server):
    register(alice, make_card())
    answer = search(anon, "none")
    assert "referrals" not in answer and len(answer["results"]) == 1
    assert https_server.requests == []
