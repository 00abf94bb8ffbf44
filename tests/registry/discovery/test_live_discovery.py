"""liveOnly text queries: the first page from the query's candidates (its relevance order,
found at a data generation) and the liveness of the moment, the same page the full query
finds; the liveness itself is never cached."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registry.discovery import cache as discovery_cache
from tests.registry.liveness.test_liveness import endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def weather_agents(alice, native_payload) -> list[str]:
    ids = []
    for number in range(12):
        name = f"Weather station {number}" if number % 3 else f"Forecast {number}"
        payload = native_payload(
            name=name,
            description="Reports the weather of the day.",
            endpoints=[endpoint(f"web{number}", seconds=60)],
        )
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    return ids


def beat(client, agent_id: str) -> None:
    assert client.post(f"/agents/{agent_id}/heartbeat").status_code == 200


def searched(queries) -> bool:
    return any("tsv @@" in q["sql"] for q in queries)


def pages(anon, params: dict) -> list[dict]:
    """Every page of the query, following its next links."""
    found, url, query = [], "/discover/agents", params
    while url:
        body = anon.get(url, query).json()
        found.append(body)
        url, query = body["next"], None
    return found


@pytest.mark.parametrize("limit", ["2", "3", "20"])
def test_a_live_page_from_candidates_equals_the_full_querys(anon, alice, weather_agents, limit):
    for agent_id in weather_agents[::2]:
        beat(alice, agent_id)
    params = {"q": "weather", "liveOnly": "true", "limit": limit}
    first = anon.get("/discover/agents", params).json()  # the full query; candidates kept

    with CaptureQueriesContext(connection) as queries:
        again = anon.get("/discover/agents", params).json()
    cache.clear()
    full = anon.get("/discover/agents", params).json()

    assert again == first == full
    assert {a["id"] for a in full["results"]} <= set(weather_agents[::2])
    if connection.vendor == "postgresql":
        assert not searched(queries)  # the candidates answered: no text search
    every = [a["id"] for page in pages(anon, params) for a in page["results"]]
    assert sorted(every) == sorted(weather_agents[::2])  # each live match once


def test_liveness_is_of_the_moment_not_of_the_candidates(anon, alice, weather_agents):
    params = {"q": "weather", "liveOnly": "true"}
    assert anon.get("/discover/agents", params).json()["results"] == []
    beat(alice, weather_agents[3])
    results = anon.get("/discover/agents", params).json()["results"]
    assert [a["id"] for a in results] == [weather_agents[3]]
    beat(alice, weather_agents[5])
    results = anon.get("/discover/agents", params).json()["results"]
    assert {a["id"] for a in results} == {weather_agents[3], weather_agents[5]}


def test_too_few_live_candidates_leave_the_page_to_the_full_query(
    monkeypatch, anon, alice, weather_agents
):
    monkeypatch.setattr(discovery_cache, "LIVE_CANDIDATES", 1)
    for agent_id in weather_agents[:3]:
        beat(alice, agent_id)
    params = {"q": "weather", "liveOnly": "true", "limit": "2"}
    first = anon.get("/discover/agents", params).json()
    with CaptureQueriesContext(connection) as queries:
        again = anon.get("/discover/agents", params).json()
    assert again == first and len(first["results"]) == 2 and first["next"]
    if connection.vendor == "postgresql":
        assert searched(queries)  # 3 candidates held one live agent: searched again


def test_a_write_since_the_candidates_were_found_is_seen(
    anon, alice, weather_agents, native_payload
):
    for agent_id in weather_agents:
        beat(alice, agent_id)
    params = {"q": "weather", "liveOnly": "true", "limit": "3"}
    anon.get("/discover/agents", params)
    payload = native_payload(name="Weather newest", endpoints=[endpoint("fresh", seconds=60)])
    newest = alice.post("/agents", payload, format="json").json()["id"]
    beat(alice, newest)
    results = anon.get("/discover/agents", params).json()["results"]
    cache.clear()
    assert results == anon.get("/discover/agents", params).json()["results"]
    assert newest in [a["id"] for page in pages(anon, params) for a in page["results"]]


def test_a_live_query_without_matches_is_answered_from_its_candidates(anon, weather_agents):
    params = {"q": "zeppelin", "liveOnly": "true", "mode": "keyword"}
    assert anon.get("/discover/agents", params).json()["results"] == []
    with CaptureQueriesContext(connection) as queries:
        assert anon.get("/discover/agents", params).json()["results"] == []
    if connection.vendor == "postgresql":
        assert not searched(queries)


def test_bad_parameters_of_a_live_query_are_problems_each_time(anon, weather_agents):
    params = {"q": "weather", "liveOnly": "true", "limit": "0"}
    for _ in range(2):
        response = anon.get("/discover/agents", params)
        assert response.status_code == 400
        assert response["Content-Type"] == "application/problem+json"
        assert "limit" in response.json()["detail"]
