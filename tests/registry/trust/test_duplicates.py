"""Duplicates: one agent listed by two owners is grouped at write time; each copy names the
canonical copy (the oldest here: no domain is proved), discovery collapses copies on every
path unless collapse=false, and a copy's group follows its writes and its retirement."""

import json

import pytest
from django.db import connections

from tests.registry.discovery.conftest import lane_answer, view_answer

pytestmark = pytest.mark.django_db

ADDRESS = "https://twin.example/a2a"


def register(client, native_payload, name: str, address: str = ADDRESS) -> str:
    payload = native_payload(
        name=name,
        description="Forecasts the weather.",
        capabilities=[{"name": "forecast", "tags": ["weather", "twin"]}],
    )
    payload["endpoints"][0]["address"] = address
    response = client.post("/agents", payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.fixture
def twins(alice, bob, native_payload):
    first = register(alice, native_payload, "Twin A")
    copy = register(bob, native_payload, "Twin B")  # the same interface, another owner
    own = register(alice, native_payload, "Twin C", "https://other.example/a2a")
    return {"first": first, "copy": copy, "own": own}


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return sorted(agent["name"] for agent in response.json()["results"])


def test_a_copy_names_the_oldest_as_canonical_and_discovery_shows_the_canonical_only(twins, anon):
    assert anon.get(f"/agents/{twins['copy']}").json()["duplicateOf"] == twins["first"]
    assert anon.get(f"/agents/{twins['first']}").json()["duplicateOf"] is None
    queries = (
        "",
        "?sort=name",
        "?q=weather&mode=keyword",
        "?q=weather",
        "?tag=twin",
        "?sort=trust",
    )
    for query in queries:
        assert names(anon.get(f"/discover/agents{query}")) == ["Twin A", "Twin C"], query
    every = anon.get("/discover/agents?collapse=false").json()["results"]
    assert sorted((a["name"], a["duplicateOf"]) for a in every) == [
        ("Twin A", None),
        ("Twin B", twins["first"]),
        ("Twin C", None),
    ]


def test_the_same_owner_listing_one_interface_twice_is_no_copy(alice, native_payload, anon):
    one = register(alice, native_payload, "Mine 1")
    two = register(alice, native_payload, "Mine 2")
    assert [anon.get(f"/agents/{pk}").json()["duplicateOf"] for pk in (one, two)] == [None, None]


def test_a_copy_that_moves_to_its_own_interface_leaves_the_group(twins, bob, anon):
    response = bob.patch(
        f"/agents/{twins['copy']}",
        {
            "endpoints": [
                {
                    "name": "primary",
                    "transport": "Http",
                    "protocol": "A2A",
                    "address": "https://own.example/a2a",
                }
            ]
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["duplicateOf"] is None
    assert names(anon.get("/discover/agents")) == ["Twin A", "Twin B", "Twin C"]


def test_when_the_canonical_copy_is_retired_the_copy_takes_its_place(twins, alice, anon):
    assert alice.delete(f"/agents/{twins['first']}").status_code in (200, 204)
    assert anon.get(f"/agents/{twins['copy']}").json()["duplicateOf"] is None
    assert names(anon.get("/discover/agents")) == ["Twin B", "Twin C"]


@pytest.mark.parametrize("value", ["no", "False", "1"])
def test_a_bad_collapse_is_a_problem_naming_it(anon, db, value):
    response = anon.get(f"/discover/agents?collapse={value}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "collapse"


def test_the_pages_show_the_canonical_copy_and_open_the_group(twins, client):
    browse = client.get("/browse").content.decode()
    assert "Twin A" in browse and "Twin B" not in browse
    every = client.get("/browse?collapse=false").content.decode()
    assert f'<a href="/browse/agents/{twins["first"]}">Copy →</a>' in every
    copy_page = client.get(f"/browse/agents/{twins['copy']}").content.decode()
    assert '<h2 id="copies-title">A copy</h2>' in copy_page
    assert f'href="/browse/agents/{twins["first"]}">Twin A</a>' in copy_page
    canonical_page = client.get(f"/browse/agents/{twins['first']}").content.decode()
    assert '<h2 id="copies-title">Other copies</h2>' in canonical_page
    assert f'href="/browse/agents/{twins["copy"]}">Twin B</a>' in canonical_page


@pytest.mark.parametrize(
    "query",
    [
        "/discover/agents?q=weather&mode=keyword",  # keyword tiers
        "/discover/agents?q=weather",  # hybrid first page
        "/discover/agents?tag=twin&capability=forecast",  # keyed
        "/discover/agents?tag=twin",  # shaped
    ],
)
def test_the_lean_lane_collapses_copies_as_the_view_does(twins, query):
    if connections["default"].vendor != "postgresql":
        pytest.skip("the lane's own paths are PostgreSQL's")
    (status, _, body), asked_django = lane_answer(query)
    assert status == 200 and not asked_django
    lane = sorted(agent["name"] for agent in json.loads(body)["results"])
    (_, _, view_body) = view_answer(query)
    view = sorted(agent["name"] for agent in json.loads(view_body)["results"])
    assert lane == view == ["Twin A", "Twin C"]
