"""Search by meaning with filters: the nearest agents among those the filters keep, in every
mode and on every path (the view's, the lean lane's), so a filter never empties a page that
has agents near the query, however many agents nearer than them it leaves out. The
registry's scale is stood in for by smaller numbers of candidates."""

import json

import pytest

from registry.discovery import first, hybrid
from tests.registry.discovery.conftest import lane_answer, view_answer

pytestmark = pytest.mark.django_db
QUERY = "book a table for four tonight"


@pytest.fixture
def bistros(add_agent, population):
    """Three agents of the tag bistro, and an untagged one nearer the query than them."""
    add_agent("Table Booker", "Book a table for four tonight.", [{"name": "Book"}])
    return {
        add_agent(name, description, [{"name": "Book", "tags": ["bistro"]}])
        for name, description in (
            ("Osteria Nove", "Italian restaurant: book a table for dinner."),
            ("Bistro Quattro", "French bistro: book a table for four."),
            ("Taverna", "Greek taverna: book a table tonight."),
        )
    }


@pytest.fixture(params=[1, 10], ids=["more-than-among", "among"])
def at_scale(monkeypatch, request):
    """More agents nearer the query than the first candidates asked for, and more filtered
    agents than are searched among; with ``among``, few enough to be searched among once
    the nearest of all fall short."""
    monkeypatch.setattr(hybrid, "NEAREST_ALL", 1)
    monkeypatch.setattr(hybrid, "NEAREST_AMONG", request.param)
    monkeypatch.setattr(first, "KEYED_AMONG", 1)


def found(answer) -> set:
    status, _, body = answer
    assert status == 200, body
    return {agent["id"] for agent in json.loads(body)["results"]}


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_a_filter_keeps_its_agents_near_the_query_however_many_are_nearer(
    anon, bistros, at_scale, mode
):
    response = anon.get("/discover/agents", {"q": QUERY, "mode": mode, "tag": "bistro"})
    assert response.status_code == 200, response.content
    assert {agent["id"] for agent in response.json()["results"]} == bistros


@pytest.mark.postgres
def test_the_lean_lane_keeps_the_filters_agents_as_the_view_does(bistros, at_scale):
    path = "/discover/agents?q=book+a+table+for+four+tonight&tag=bistro"
    (status, headers, body), asked_django = lane_answer(path)
    assert not asked_django
    assert found((status, headers, body)) == bistros
    assert (status, headers, body) == view_answer(path)
