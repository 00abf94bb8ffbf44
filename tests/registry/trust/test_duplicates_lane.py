"""Copies of a duplicate group are out of what the lean lane reads at write time (the search
rows' and the filter keys' ``canonical``, the vectors' mark in the index): its first pages
are full when copies are among the matches, its facet counts leave them out, as the view's
do, with the same statements as a query with no copies; collapse=false finds them, and a
regroup (the canonical copy retired or deleted, a copy listed again) is followed."""

import json

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from tests.registry.discovery.conftest import lane_answer, view_answer

pytestmark = pytest.mark.django_db

COUNT = 4


def register(client, native_payload, name: str, address: str) -> str:
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
def groups(alice, bob, native_payload):
    """COUNT agents of alice's, then a copy of each by bob (the newest: first in a
    relevance tier's order), each naming alice's as its canonical copy."""
    originals = [
        register(alice, native_payload, f"Original {n}", f"https://twin{n}.example/a2a")
        for n in range(COUNT)
    ]
    copies = [
        register(bob, native_payload, f"Copy {n}", f"https://twin{n}.example/a2a")
        for n in range(COUNT)
    ]
    return {"originals": originals, "copies": copies}


@pytest.fixture
def postgres(db):
    if connections["default"].vendor != "postgresql":
        pytest.skip("the lane's own paths are PostgreSQL's")


def lane_names(query: str) -> list[str]:
    (status, _, body), asked_django = lane_answer(query)
    assert status == 200 and not asked_django, body
    return [agent["name"] for agent in json.loads(body)["results"]]


def view_names(query: str) -> list[str]:
    status, _, body = view_answer(query)
    assert status == 200, body
    return [agent["name"] for agent in json.loads(body)["results"]]


def test_a_regroup_keeps_the_copies_flag_in_the_search_rows_and_filter_keys(groups, postgres):
    from registry.discovery.models import AgentFilterKeys, AgentSearchVector

    for model in (AgentSearchVector, AgentFilterKeys):
        flags = dict(model.objects.values_list("agent_id", "canonical"))
        assert [flags[pk] for pk in map(_uuid, groups["originals"])] == [True] * COUNT
        assert [flags[pk] for pk in map(_uuid, groups["copies"])] == [False] * COUNT


def _uuid(text: str):
    import uuid

    return uuid.UUID(text)


@pytest.mark.parametrize(
    "query",
    [
        "/discover/agents?q=weather&mode=keyword&limit=3",  # keyword tiers
        "/discover/agents?q=forecasts+weather&mode=keyword&limit=3",  # one scan
        "/discover/agents?q=weather&tag=twin&mode=keyword&limit=3",  # words and keys
        "/discover/agents?q=weather&limit=3",  # hybrid first page
        "/discover/agents?q=weather&tag=twin&limit=3",  # hybrid, the keys' agents at once
        "/discover/agents?tag=twin&capability=forecast&limit=3",  # keyed
    ],
)
def test_a_first_page_is_full_when_copies_are_among_the_matches(groups, postgres, query):
    lane = lane_names(query)
    assert len(lane) == 3
    assert all(name.startswith("Original") for name in lane), lane
    assert lane == view_names(query)


@pytest.mark.parametrize(
    "query",
    [
        "/discover/agents?q=weather&mode=keyword&limit=3",
        "/discover/agents?tag=twin&capability=forecast&limit=3",
    ],
)
def test_the_lane_reads_no_more_statements_when_copies_are_among_the_matches(
    groups, postgres, query, alice, native_payload
):
    with CaptureQueriesContext(connection) as with_copies:
        assert len(lane_names(query)) == 3
    assert not any("duplicate_of" in q["sql"] for q in with_copies.captured_queries)
    # The same query where no agent is a copy: the same statements.
    from registry.agents.models import Agent

    Agent.objects.filter(pk__in=groups["copies"]).update(duplicate_of=None)
    with CaptureQueriesContext(connection) as without:
        assert len(lane_names(query)) == 3
    assert len(with_copies.captured_queries) == len(without.captured_queries) == 2
    for copy, original in zip(groups["copies"], groups["originals"], strict=True):
        Agent.objects.filter(pk=copy).update(duplicate_of=original)  # (as listed)


def test_hybrid_first_facet_counts_leave_the_copies_out(groups, postgres):
    query = "/discover/agents?q=weather&facets=tag&limit=2"
    (status, _, body), asked_django = lane_answer(query)
    assert status == 200 and not asked_django
    lane = json.loads(body)
    tags = {entry["value"]: entry["count"] for entry in lane["facets"]["tag"]}
    assert tags == {"weather": COUNT, "twin": COUNT}
    _, _, view_body = view_answer(query)
    assert lane["facets"] == json.loads(view_body)["facets"]


@pytest.mark.parametrize(
    "query",
    [
        "/discover/agents?q=weather&mode=keyword&collapse=false&limit=20",
        "/discover/agents?q=weather&collapse=false&limit=20",
        "/discover/agents?tag=twin&capability=forecast&collapse=false&limit=20",
    ],
)
def test_collapse_false_finds_the_copies_on_either_path(groups, anon, query):
    response = anon.get(query)
    assert response.status_code == 200, response.content
    found = sorted(agent["name"] for agent in response.json()["results"])
    assert found == sorted(
        [f"Original {n}" for n in range(COUNT)] + [f"Copy {n}" for n in range(COUNT)]
    )


def test_a_copy_comes_back_on_the_lane_when_its_canonical_copy_is_retired(groups, postgres, alice):
    assert alice.delete(f"/agents/{groups['originals'][0]}").status_code in (200, 204)
    for query in (
        "/discover/agents?q=weather&mode=keyword&limit=20",
        "/discover/agents?q=weather&limit=20",
        "/discover/agents?tag=twin&capability=forecast&limit=20",
    ):
        lane = lane_names(query)
        assert "Copy 0" in lane and "Original 0" not in lane, query
        assert len(lane) == COUNT
        assert sorted(lane) == sorted(view_names(query))


def test_a_copy_comes_back_on_the_lane_when_its_canonical_copy_is_deleted(groups, postgres):
    from registry.agents.models import Agent
    from registry.agents.removal import agent_delete

    agent_delete(agent=Agent.objects.get(pk=groups["originals"][1]))
    lane = lane_names("/discover/agents?q=weather&mode=keyword&limit=20")
    assert "Copy 1" in lane and "Original 1" not in lane and len(lane) == COUNT


def test_a_copy_listed_again_stays_out_of_the_lane(groups, postgres):
    from django.db import transaction

    from registry.agents.listing import agent_admitted_set
    from registry.agents.models import Agent

    for listed in (False, True):
        with transaction.atomic():
            copy = Agent.objects.select_for_update().get(pk=groups["copies"][2])
            assert agent_admitted_set(agent=copy, admitted=listed)
    query = "/discover/agents?q=weather&mode=keyword&limit=20"
    assert sorted(lane_names(query)) == [f"Original {n}" for n in range(COUNT)]
