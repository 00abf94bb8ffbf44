"""The ARD search API: POST /ard/search ranked as GET /discover/agents ranks, filters by
entry paths, explore's facet counts, GET /ard/agents and the exact lookup, and ARD errors."""

import json
from urllib.parse import quote

import pytest

from tests.protocols.ard.conftest import openapi_problems, register

pytestmark = pytest.mark.django_db


def card_at(make_card, n: int, **overrides) -> dict:
    card = make_card(**overrides)
    card["supportedInterfaces"] = [
        dict(card["supportedInterfaces"][0], url=f"https://a{n}.example.com/a2a")
    ]
    return card


@pytest.fixture
def three(alice, make_card) -> dict[str, str]:
    ids = {}
    ids["weather"] = register(
        alice,
        card_at(make_card, 1, description="Answers questions about the weather; an assistant."),
    )
    ids["tides"] = register(
        alice,
        card_at(
            make_card,
            2,
            name="Tide Planner",
            description="Plans berths from tide tables; also weather windows; an assistant.",
            skills=[
                {
                    "id": "tide-window",
                    "name": "Tide window",
                    "description": "d",
                    "tags": ["maritime"],
                }
            ],
        ),
    )
    ids["cooking"] = register(
        alice,
        card_at(
            make_card,
            3,
            name="Recipe Helper",
            description="Suggests recipes; an assistant.",
            skills=[{"id": "recipe", "name": "Recipe", "description": "d", "tags": ["food"]}],
        ),
    )
    return ids


def search(client, body, status=200) -> dict:
    response = client.post("/ard/search", body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def test_search_ranks_as_discovery_does_and_validates_against_the_openapi(anon, three):
    answer = search(anon, {"query": {"text": "weather"}, "federation": "none"})
    assert openapi_problems("SearchResponse", answer) == []
    discovered = anon.get("/discover/agents?q=weather&sort=relevance").json()["results"]
    assert [r["identifier"].rsplit(":", 1)[1] for r in answer["results"]] == [
        a["id"] for a in discovered
    ]
    scores = [r["score"] for r in answer["results"]]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 100 for s in scores)
    assert {r["source"] for r in answer["results"]} == {"http://testserver/ard"}


def test_filters_are_or_within_a_key_and_and_across_keys(anon, three):
    def names(filter_):
        answer = search(anon, {"query": {"text": "assistant", "filter": filter_}})
        return sorted(r["displayName"] for r in answer["results"])

    assert names({}) == ["Recipe Helper", "Tide Planner", "Weather Agent"]
    assert names({"tags": ["maritime", "food"]}) == ["Recipe Helper", "Tide Planner"]
    assert names({"capabilities": ["tide-window", "forecast"]}) == ["Tide Planner", "Weather Agent"]
    assert names({"tags": "maritime", "publisher": "testserver"}) == ["Tide Planner"]
    assert names({"tags": "maritime", "publisher": "elsewhere.example"}) == []
    assert names({"type": "application/mcp-server-card+json"}) == []
    assert names({"metadata.cardSignature": ["unsigned"], "metadata.live": "false"}) == names({})


def test_paging_with_the_page_token(anon, alice, make_card):
    for n in range(5):
        register(alice, card_at(make_card, n, name=f"Weather {n}"))
    query = {"text": "weather", "mode": "keyword"}  # whose score falls by one per place
    first = search(anon, {"query": query, "pageSize": 2})
    second = search(anon, {"query": query, "pageSize": 2, "pageToken": first["pageToken"]})
    assert len(first["results"]) == len(second["results"]) == 2
    assert not {r["identifier"] for r in first["results"]} & {
        r["identifier"] for r in second["results"]
    }
    assert second["results"][0]["score"] < first["results"][-1]["score"]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"query": {"text": "x", "filter": {"nope.path": ["x"]}}}, "query.filter.nope.path"),
        ({"query": {"text": ""}}, "query.text"),
        ({"query": {}}, "query.text"),
        ({"query": {"text": "x"}, "pageSize": 101}, "pageSize"),
        ({"query": {"text": "x"}, "federation": "sideways"}, "federation"),
        ({"query": {"text": "x"}, "extra": 1}, "extra"),
        ({"query": {"text": "x"}, "pageToken": "garbage"}, "pageToken"),
        ({"query": {"text": "x", "filter": {"tags": [1]}}}, "query.filter.tags"),
    ],
)
def test_bad_requests_are_400_invalid_argument_with_the_problem_members(anon, three, body, path):
    response = anon.post("/ard/search", body, format="json")
    assert response.status_code == 400
    problem = response.json()
    assert problem["errorCode"] == "INVALID_ARGUMENT" and problem["message"]
    assert (problem["status"], problem["errors"][0]["path"]) == (400, path)
    assert openapi_problems("Error", problem) == []


def test_malformed_json_is_an_ard_error_too(anon):
    response = anon.generic("POST", "/ard/search", b"{", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["errorCode"] == "INVALID_ARGUMENT"


def test_explore_counts_facets_over_the_matched_set(anon, three):
    body = {
        "query": {"text": "weather"},
        "resultType": {
            "facets": [
                {"field": "tags", "limit": 1},
                {"field": "type"},
                {"field": "metadata.cardSignature"},
            ]
        },
    }
    response = anon.post("/ard/explore", body, format="json")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert openapi_problems("ExploreResponse", answer) == []
    matched = len(search(anon, {"query": {"text": "weather"}, "pageSize": 100})["results"])
    assert answer["facets"]["type"]["buckets"] == [
        {"value": "application/a2a-agent-card+json", "count": matched}
    ]
    assert answer["facets"]["metadata.cardSignature"]["buckets"] == [
        {"value": "unsigned", "count": matched}
    ]
    assert len(answer["facets"]["tags"]["buckets"]) == 1
    bad = anon.post("/ard/explore", {"resultType": {"facets": [{"field": "nope"}]}}, format="json")
    assert bad.status_code == 400 and bad.json()["errorCode"] == "INVALID_ARGUMENT"


def test_list_with_the_appendix_a_filter_order_and_pages(anon, three):
    response = anon.get("/ard/agents", {"orderBy": "displayName DESC", "pageSize": 2})
    assert response.status_code == 200
    page = response.json()
    assert openapi_problems("ListResponse", page) == []
    assert [i["displayName"] for i in page["items"]] == ["Weather Agent", "Tide Planner"]
    assert page["total"] == 3
    rest = anon.get(
        "/ard/agents",
        {"orderBy": "displayName DESC", "pageSize": 2, "pageToken": page["pageToken"]},
    ).json()
    assert [i["displayName"] for i in rest["items"]] == [
        "Recipe Helper"
    ] and "pageToken" not in rest
    filtered = anon.get(
        "/ard/agents",
        {"filter": "displayName = 'tide planner' AND type = 'application/a2a-agent-card+json'"},
    ).json()
    assert [i["displayName"] for i in filtered["items"]] == ["Tide Planner"]
    assert anon.get("/ard/agents", {"filter": "publisherId = other.example"}).json()["total"] == 0
    for bad in (
        {"filter": "name ~ x"},
        {"orderBy": "score"},
        {"orderBy": "\t"},
        {"pageSize": "0"},
        {"pageToken": "x"},
        {"what": "1"},
    ):
        answer = anon.get("/ard/agents", bad)
        assert answer.status_code == 400, bad
        assert answer.json()["errorCode"] == "INVALID_ARGUMENT"


def test_lookup_by_percent_encoded_identifier(anon, three):
    identifier = f"urn:air:testserver:agent:{three['tides']}"
    response = anon.get(f"/ard/agents/{quote(identifier, safe='')}")
    assert response.status_code == 200
    entry = json.loads(response.content)
    assert entry["identifier"] == identifier and "score" not in entry
    missing = anon.get("/ard/agents/" + quote("urn:air:testserver:agent:nope", safe=""))
    assert missing.status_code == 404 and missing.json()["errorCode"] == "NOT_FOUND"


def test_deleted_agents_leave_search(anon, alice, three):
    assert alice.delete(f"/agents/{three['tides']}").status_code == 204
    answer = search(anon, {"query": {"text": "tide"}})
    assert answer["results"] == []


def test_search_takes_the_mode_and_scores_from_the_fused_score(anon, three):
    body = {"query": {"text": "will it rain tomorrow", "mode": "semantic"}, "federation": "none"}
    answer = search(anon, body)
    assert openapi_problems("SearchResponse", answer) == []
    assert answer["results"][0]["identifier"].endswith(three["weather"])
    scores = [r["score"] for r in answer["results"]]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 100 for s in scores)
    keyword = {"query": {"text": "will it rain tomorrow", "mode": "keyword"}, "federation": "none"}
    assert search(anon, keyword)["results"] == []
    hybrid = search(anon, {"query": {"text": "weather"}, "federation": "none"})
    assert hybrid["results"][0]["score"] > hybrid["results"][-1]["score"]


def test_a_bad_mode_is_invalid_argument_naming_query_mode(anon, three):
    response = anon.post("/ard/search", {"query": {"text": "x", "mode": "vibes"}}, format="json")
    assert response.status_code == 400
    assert "query.mode" in response.content.decode()


def test_mcp_servers_are_found_by_type_in_search_explore_and_the_list(
    anon, alice, three, native_payload
):
    """One MCP server alone is a server card entry; two are a nested catalog of server
    cards: the type filters and the type facet find both."""
    ids = {}
    for name, count in (("Bakery orders", 1), ("Bakery tools", 2)):
        payload = native_payload(name=name, description="An assistant for bakeries.")
        payload["endpoints"] = [
            dict(
                payload["endpoints"][0],
                protocol="MCP",
                name=f"mcp{n}",
                address=f"https://mcp{n}.bakery.example/mcp",
            )
            for n in range(count)
        ]
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        ids[name] = response.json()["id"]
    mcp = "application/mcp-server-card+json"
    answer = search(anon, {"query": {"text": "assistant", "filter": {"type": mcp}}})
    assert sorted(r["displayName"] for r in answer["results"]) == ["Bakery orders", "Bakery tools"]
    assert openapi_problems("SearchResponse", answer) == []
    listed = anon.get("/ard/agents", {"filter": f"type = '{mcp}'"}).json()
    assert openapi_problems("ListResponse", listed) == []
    assert sorted(i["displayName"] for i in listed["items"]) == ["Bakery orders", "Bakery tools"]
    explored = anon.post(
        "/ard/explore",
        {"query": {"text": "assistant"}, "resultType": {"facets": [{"field": "type"}]}},
        format="json",
    ).json()
    assert openapi_problems("ExploreResponse", explored) == []
    assert explored["facets"]["type"]["buckets"] == [
        {"value": "application/a2a-agent-card+json", "count": 3},
        {"value": mcp, "count": 2},
        {"value": "application/ai-catalog+json", "count": 1},
    ]


def test_min_trust_keeps_the_entries_scored_at_or_above_it_and_each_shows_its_trust(
    anon, three, settings
):
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from registry.agents.models import Agent
    from registry.signals import agents_written_send

    settings.TRUST_WEIGHTS = {"age": 1}  # the agents' age alone: 100 or 0
    with transaction.atomic():
        Agent.objects.filter(pk=three["tides"]).update(
            created_at=timezone.now() - timedelta(days=400)
        )
        agents_written_send(three.values())
    body = {"query": {"text": "assistant", "mode": "keyword"}, "federation": "none"}
    every = search(anon, body)["results"]
    assert {entry["metadata"]["trustScore"] for entry in every} == {0, 100}
    trusted = search(anon, {**body, "query": {**body["query"], "minTrust": 50}})["results"]
    assert [entry["displayName"] for entry in trusted] == ["Tide Planner"]
    assert trusted[0]["metadata"]["trust.age"] == 1.0
    assert trusted[0]["metadata"]["live"] is False  # the liveness still spliced in after it


@pytest.mark.parametrize("value", [101, -1, "50", 2.5, True])
def test_a_bad_min_trust_is_invalid_argument_naming_it(anon, db, value):
    response = anon.post("/ard/search", {"query": {"text": "x", "minTrust": value}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "query.minTrust"
