"""Queries never asked before, on the lean lane (registry.discovery.first): first queries and
filters alone (of one shape, of two keys or more, when no more shapes are kept) answer as the
view, byte for byte and header for header; then from the cached keys, next pages and links;
a query the view would refuse, and the change feed, are the view's to answer."""

import copy

import pytest
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

from registry.fastpath.lean import LeanApplication
from tests.conftest import NATIVE_PAYLOAD, _key
from tests.registry.discovery.conftest import (
    dozen_agents_post,
    lane_answer,
    spy_answer,
    view_answer,
)
from tests.registry.fastpath.test_lean import Recorder, call

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def agents(django_db_setup, django_db_blocker):
    """The dozen agents, written once for this file's tests, which only read them (each
    test's own writes roll back with its transaction), and emptied out after the last."""
    with django_db_blocker.unblock():
        try:
            alice = APIClient()
            alice.credentials(HTTP_AUTHORIZATION=f"Bearer {_key('alice', 'agent')}")
            dozen_agents_post(alice, lambda **kw: {**copy.deepcopy(NATIVE_PAYLOAD), **kw})
            yield
        finally:  # (a half-written dozen too: the next file starts on an empty database)
            call_command("flush", interactive=False, verbosity=0)


FIRST_QUERIES = [
    "/discover/agents?q=weather",
    "/discover/agents?q=weather&limit=2",  # a next link
    "/discover/agents?q=weath",  # a prefix
    "/discover/agents?q=weather+invo",  # two words: tiers of name and text
    "/discover/agents?q=forecasts",  # text words only (the lowest tier)
    "/discover/agents?q=invoice&tag=finance",
    "/discover/agents?q=invoice&tag=FINANCE&capability=invoices+skill",  # keys lower-cased
    "/discover/agents?q=bills&capability=forecasts+skill",
    "/discover/agents?q=nothingmatches",
    "/discover/agents?q=weather&tag=nosuchtag",
    "/discover/agents?q=weather&sort=relevance&limit=100",
    "/discover/agents?q=weather&sort=",
    "/discover/agents?q=weather&limit=",
    "/discover/agents?q=weather&tag=+",  # a blank filter: none
    "/discover/agents?q=weather&facets=tag,protocol",
    "/discover/agents?q=invoice&tag=finance&facets=tag",
    "/discover/agents?q=%C3%A9t%C3%A9+weather",  # a word no agent has
    "/discover/agents?q=weather%27s+%22invoice%22+%26+%7C+!",  # tsquery operators are not words
    # Beyond words and index keys: the view's filtering and discover, on the lane.
    "/discover/agents?q=weather&sort=name",
    "/discover/agents?q=weather&sort=recent&limit=3",
    "/discover/agents?q=weather&liveOnly=true",
    "/discover/agents?q=weather&liveOnly=false",
    "/discover/agents?q=weather&protocol=A2A",
    "/discover/agents?q=!!!",  # no words
    "/discover/agents?q=weather&q=invoice",  # repeated: the last one counts, as in the view
    "/discover/agents?tag=finance",
    "/discover/agents?tag=finance&sort=name&limit=2",
    "/discover/agents?capability=forecasts+skill&transport=Http",
    "/discover/agents?status=active&owner=alice",
    "/discover/agents?tag=finance&facets=tag",
    "/discover/agents?q=weather&facets=live,tag",  # live: never cached
    "/discover/agents",
    "/discover/agents?q=weather&tag=" + "t" * 2100,  # too long to be a key: a filter
    # The search modes: words that match (keyword), or the filtered agents by the fused order.
    "/discover/agents?q=weather&mode=keyword",
    "/discover/agents?q=weather+invo&mode=keyword",  # two words or more: one scan
    "/discover/agents?q=weather+clim&mode=keyword&limit=3",
    "/discover/agents?q=helps+numb+weath&mode=keyword",
    "/discover/agents?q=invoice&tag=finance&mode=keyword",
    "/discover/agents?q=bills+for&tag=finance&mode=keyword",
    "/discover/agents?q=weather&mode=keyword&sort=name",
    "/discover/agents?q=weather&mode=keyword&liveOnly=true",
    "/discover/agents?q=weather&mode=keyword&facets=tag",
    "/discover/agents?q=weather&mode=hybrid",
    "/discover/agents?q=bills+for+forecasts&mode=semantic",
    "/discover/agents?q=invoice&tag=finance&mode=hybrid&facets=tag",
    "/discover/agents?q=weather&mode=hybrid&sort=recent",
    "/discover/agents?tag=finance&mode=semantic",
]


@pytest.mark.parametrize("path", FIRST_QUERIES)
def test_a_first_query_on_the_lane_answers_as_the_view(agents, path):
    expected = view_answer(path)
    answer, asked_django = lane_answer(path)
    assert not asked_django  # the lane found it
    assert answer == expected
    assert expected[0] == 200


# Filters alone, asked one after the other: each pair has one shape (registry.discovery.shapes)
# with other values, so the second runs the statement the first built; and values a filter
# changes (case, spaces, commas), which are part of their shape, not slotted.
SHAPED_QUERIES = [
    "/discover/agents?tag=finance&limit=3",
    "/discover/agents?tag=climate&limit=5",
    "/discover/agents?tag=nlp&limit=1",
    "/discover/agents?tag=FINANCE&limit=3",
    "/discover/agents?tag=Climate",
    "/discover/agents?tag=+climate+&limit=4",
    "/discover/agents?tag=climate,finance",
    "/discover/agents?tag=finance&sort=name&limit=2",
    "/discover/agents?tag=climate&sort=name&limit=3",
    "/discover/agents?tag=finance&protocol=A2A&sort=recent",
    "/discover/agents?tag=climate&protocol=A2A&sort=recent",
    "/discover/agents?tag=climate&protocol=MCP",
    "/discover/agents?capability=forecasts+skill&tag=climate",
    "/discover/agents?capability=invoices+skill&tag=finance",
    "/discover/agents?capability=invoices&tag=finance",
    "/discover/agents?tag=finance&transport=Http&limit=2",
    "/discover/agents?tag=climate&transport=Http&limit=2",
    "/discover/agents?tag=nosuchtag&limit=2",
    "/discover/agents?tag=finance&limit=0",
    "/discover/agents?tag=finance&sort=relevance",
    "/discover/agents?tag=finance&tag=climate",
    # Trust (registry.trust): a threshold is part of the shape (the filter makes it a
    # number), the order by score one of the sorts.
    "/discover/agents?tag=finance&minTrust=50",
    "/discover/agents?tag=climate&minTrust=50&limit=2",
    "/discover/agents?tag=climate&minTrust=0",
    "/discover/agents?tag=finance&sort=trust",
    "/discover/agents?tag=climate&sort=trust&limit=1",
    "/discover/agents?tag=climate&minTrust=20&sort=trust&limit=2",
    "/discover/agents?tag=climate&minTrust=101",
]


def test_filters_alone_of_one_shape_answer_as_the_view_each_with_its_own_values(agents):
    django = Recorder()
    app = LeanApplication(django)
    for path in SHAPED_QUERIES:
        expected = view_answer(path)
        cache.clear()
        assert call(app, "GET", path) == expected, path


# Filters alone, two keys or more: the agents' filter keys (registry.discovery.keyed).
KEYED_QUERIES = [
    "/discover/agents?tag=finance&capability=forecasts+skill",
    "/discover/agents?tag=climate&capability=FORECASTS+SKILL&sort=name&limit=2",  # a next link
    "/discover/agents?tag=climate&capability=forecasts+skill&sort=recent&limit=3",
    "/discover/agents?tag=+finance+&capability=invoices+skill&limit=4",
    "/discover/agents?tag=nlp&capability=invoices+skill",  # no agent
    "/discover/agents?tag=finance&capability=invoices+skill&limit=1&sort=name",
]

# Not theirs: one key (a blank filter), a sort of its own, a filter that is no key, a value
# the view refuses (each found as before, and answered as the view answers).
NOT_KEYED_QUERIES = [
    "/discover/agents?tag=finance&capability=+",
    "/discover/agents?tag=finance&capability=invoices+skill&sort=updated",
    "/discover/agents?tag=finance&capability=invoices+skill&transport=Http",
    "/discover/agents?tag=finance&capability=invoices+skill&q=",
    "/discover/agents?tag=finance&capability=invoices+skill&limit=0",
    "/discover/agents?tag=finance&tag=climate&capability=invoices+skill",
]


@pytest.mark.postgres
def test_filters_alone_of_two_keys_or_more_answer_as_the_view_by_the_filter_keys(
    agents, alice, monkeypatch
):
    from registry.agents.models import Agent
    from registry.discovery import planner

    retired = Agent.objects.filter(name="Weather Invoice 2").get().pk
    assert alice.delete(f"/agents/{retired}").status_code == 204  # not discoverable now
    found = []
    monkeypatch.setattr(planner, "keyed_find", spy_answer(planner.keyed_find, found))
    for path in KEYED_QUERIES + NOT_KEYED_QUERIES:
        expected = view_answer(path)
        found.clear()
        answer, _ = lane_answer(path)
        assert answer == expected, path
        assert (found == [True]) == (path in KEYED_QUERIES), path
        assert str(retired).encode() not in answer[2], path
    assert b"Weather Invoice" in view_answer(KEYED_QUERIES[0])[2]


# A trust threshold or the order by trust score (registry.trust) is a shape's too.
TRUST_QUERIES = [
    "/discover/agents?tag=finance&minTrust=50",
    "/discover/agents?tag=climate&minTrust=40&limit=2",
    "/discover/agents?tag=climate&sort=trust",
    "/discover/agents?tag=finance&sort=trust&limit=2",  # a next link
    "/discover/agents?tag=climate&minTrust=20&sort=trust&limit=3",
]


@pytest.mark.postgres
def test_filters_with_a_trust_threshold_or_order_answer_as_the_view_by_their_shape(
    agents, monkeypatch
):
    from registry.agents.models import Agent
    from registry.discovery import shapes
    from registry.signals import agents_written_send

    # Spread indexed scores, set here alone (the trust signals would compute them again).
    pks = list(Agent.objects.order_by("name").values_list("pk", flat=True))
    for index, pk in enumerate(pks):
        Agent.objects.filter(pk=pk).update(trust_score=(index * 37) % 101)
    found = []
    monkeypatch.setattr(shapes, "shaped_find", spy_answer(shapes.shaped_find, found))
    for path in TRUST_QUERIES:
        expected = view_answer(path)
        found.clear()
        answer, asked_django = lane_answer(path)
        assert answer == expected and not asked_django, path
        assert found == [True], path
    ids = [a["id"] for a in _results(view_answer(TRUST_QUERIES[2]))]
    scores = [Agent.objects.get(pk=pk).trust_score for pk in ids]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    agents_written_send(pks)  # the scores and listings as the registry computes them


def _results(answer) -> list[dict]:
    import json

    return json.loads(answer[2])["results"]


def test_filters_alone_answer_as_the_view_when_no_more_shapes_are_kept(agents, monkeypatch):
    from registry.discovery import shapes

    monkeypatch.setattr(shapes, "_shapes", {})
    monkeypatch.setattr(shapes, "_slotted", {})
    monkeypatch.setattr(shapes, "MAX_SHAPES", 0)
    django = Recorder()
    app = LeanApplication(django)
    for path in SHAPED_QUERIES[:3]:
        expected = view_answer(path)
        cache.clear()
        assert call(app, "GET", path) == expected, path
    assert shapes._shapes == {}


def test_a_first_query_found_on_the_lane_is_then_answered_from_its_cached_keys(agents):
    cache.clear()
    django = Recorder()
    app = LeanApplication(django)
    path = "/discover/agents?q=weather&limit=2"
    first = call(app, "GET", path)
    again = call(app, "GET", path)
    assert again == first and django.paths == []
    next_link = first[2].split(b'"next":"', 1)[1].split(b'"', 1)[0].decode()
    assert "cursor=" in next_link
    second_page = call(app, "GET", next_link.removeprefix("http://testserver"))
    assert second_page[0] == 200 and django.paths == []  # a cursor's page: the lane's too


@pytest.mark.parametrize(
    "path", ["/discover/agents?q=weather&limit=2", "/discover/agents?tag=climate&limit=2"]
)
def test_a_next_page_never_asked_on_the_lane_answers_as_the_view(agents, path):
    link = view_answer(path)[2].split(b'"next":"', 1)[1].split(b'"', 1)[0].decode()
    second = link.removeprefix("http://testserver")
    expected = view_answer(second)
    answer, asked_django = lane_answer(second)
    assert not asked_django and answer == expected and expected[0] == 200


def test_the_next_link_of_the_lane_keeps_the_requests_scheme_and_host(agents, settings):
    settings.ALLOWED_HOSTS = ["registry.example"]
    meta = {"HTTP_HOST": "registry.example", "wsgi.url_scheme": "https"}
    path = "/discover/agents?q=weather&limit=2"
    expected = view_answer(path, **meta)
    answer, asked_django = lane_answer(path, **meta)
    assert not asked_django and answer == expected
    link = b'"next":"https://registry.example/discover/agents?q=weather&limit=2&cursor='
    assert link in answer[2]


LEFT_TO_THE_VIEW = [
    "/discover/agents?q=" + "w" * 101,  # a word too long: the view's 400
    "/discover/agents?q=weather&limit=0",
    "/discover/agents?q=weather&limit=abc",
    "/discover/agents?q=weather&sort=bogus",
    "/discover/agents?q=weather&bogus=1",
    "/discover/agents?q=weather&facets=nonsense",
    "/discover/agents?q=weather&tag=%00",  # a NUL: the form's 400
    "/discover/agents?q=weather&updated_since=2020-01-01T00:00:00Z",  # the change feed
    "/discover/agents?q=weather&mode=nope",  # the view's 400 naming mode
    "/discover/agents?q=weather&cursor=abc",
    "/discover/agents?tag=finance&cursor=abc",
    "/discover/agents?liveOnly=maybe",
    "/discover/agents?protocol=Nope",
    "/discover/agents?sort=relevance",  # relevance needs words
]


@pytest.mark.parametrize("path", LEFT_TO_THE_VIEW)
def test_what_the_lane_does_not_take_the_view_answers(agents, path):
    expected = view_answer(path)
    answer, asked_django = lane_answer(path)
    assert asked_django
    assert answer[0] == expected[0]
    if expected[0] == 200:
        assert answer == expected


def test_the_dozen_agents_outlast_the_tests_before(agents):
    # (Written once for the file: every test above read them, and rolled back its own writes.)
    names = sorted(a["name"] for a in _results(view_answer("/discover/agents?limit=100")))
    assert len(names) == 12 and names[0] == "Invoice 1" and names[-1] == "Weather Invoice 8"
