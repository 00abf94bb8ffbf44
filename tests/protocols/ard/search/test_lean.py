"""POST /ard/search on the lean lane (protocols.ard.search.lean): a repeated search answered from
its cached
page keys, byte for byte and header for header as the view answers it, and every other case
left to the view with its body intact."""

import json

import pytest
from django.test import RequestFactory, override_settings

from protocols.ard.catalog.query import Query
from protocols.ard.search import selectors
from registry import extensions
from registry.fastpath.lean import LeanApplication
from tests.protocols.ard.conftest import register
from tests.registry.fastpath.test_lean import Recorder
from tests.registry.fastpath.test_lean import post as post_to

pytestmark = pytest.mark.django_db

WEATHER = {"query": {"text": "weather"}, "federation": "none", "pageSize": 5}


def post(app, body, content_type="application/json", **meta) -> tuple[int, dict, bytes]:
    return post_to(app, "/ard/search", body, content_type, **meta)


@pytest.fixture
def lane():
    recorder = Recorder()
    return LeanApplication(recorder), recorder


@pytest.fixture
def agents(alice, make_card) -> list[str]:
    ids = []
    for n in range(3):
        card = make_card(name=f"Weather {n}", description=f"Weather forecasts, kind {n}.")
        card["supportedInterfaces"] = [
            dict(card["supportedInterfaces"][0], url=f"https://w{n}.example.com/a2a")
        ]
        ids.append(register(alice, card))
    return ids


def test_the_route_is_registered_by_the_ard_app():
    routes = {route.prefix: route for route in extensions.lean_routes.read()}
    route = routes["/ard/search"]
    assert (route.method, route.exact, route.anonymous) == ("POST", True, True)


def test_a_repeated_search_is_answered_on_the_lane_as_the_view_answers_it(lane, agents):
    app, django = lane
    first = post(app, WEATHER)
    assert django.paths == ["/ard/search"] and first[0] == 200  # found by the view
    second = post(app, WEATHER)
    assert django.paths == ["/ard/search"]  # answered on the lane
    assert second[0] == 200 and second[2] == first[2]
    assert second[1] == {**first[1], "Content-Length": str(len(second[2]))}
    results = json.loads(second[2])["results"]
    assert len(results) == 3 and {r["displayName"] for r in results} == {
        "Weather 0",
        "Weather 1",
        "Weather 2",
    }


def test_a_write_since_sends_the_search_to_the_view_which_finds_it_anew(
    lane, agents, alice, make_card
):
    app, django = lane
    post(app, WEATHER)
    card = make_card(name="Weather 3", description="More weather.")
    card["supportedInterfaces"] = [
        dict(card["supportedInterfaces"][0], url="https://w3.example.com/a2a")
    ]
    register(alice, card)
    status, _, body = post(app, WEATHER)
    assert django.paths == ["/ard/search", "/ard/search"] and status == 200
    assert "Weather 3" in {r["displayName"] for r in json.loads(body)["results"]}
    post(app, WEATHER)
    assert len(django.paths) == 2  # cached again at the new generation


def test_the_liveness_shown_is_of_the_moment_on_the_lane(lane, agents, alice):
    app, _ = lane
    post(app, WEATHER)
    agent = alice.get(f"/agents/{agents[0]}").json()
    endpoint = agent["endpoints"][0]["id"]
    beat = alice.post(f"/agents/{agents[0]}/endpoints/{endpoint}/heartbeat", {}, format="json")
    assert beat.status_code in (200, 204), beat.content
    results = json.loads(post(app, WEATHER)[2])["results"]
    shown = {r["displayName"]: r["metadata"]["live"] for r in results}
    assert shown == {"Weather 0": True, "Weather 1": False, "Weather 2": False}


@pytest.mark.parametrize(
    ("body", "content_type", "meta"),
    [
        # another request than the cached one, or one the view refuses
        ({**WEATHER, "pageSize": 4}, "application/json", {}),
        ({**WEATHER, "extra": 1}, "application/json", {}),
        (b'{"query": {"text": "weather"}, "pageSize": NaN}', "application/json", {}),
        (b"{", "application/json", {}),
        (json.dumps(WEATHER).encode(), "text/plain", {}),
        (WEATHER, "application/json", {"HTTP_ACCEPT": "text/html"}),
        # credentials: the view's
        (WEATHER, "application/json", {"HTTP_AUTHORIZATION": "Bearer nope"}),
        # liveness filters change without a write: never cached
        (
            {**WEATHER, "query": {"text": "weather", "filter": {"metadata.live": "true"}}},
            "application/json",
            {},
        ),
    ],
)
def test_other_requests_go_to_the_view_with_their_body(lane, agents, body, content_type, meta):
    app, django = lane
    post(app, WEATHER)
    post(app, WEATHER)
    assert django.paths == ["/ard/search"]
    status, _, answer = post(app, body, content_type, **meta)
    assert django.paths == ["/ard/search", "/ard/search"]  # the view answered
    # ... with the body sent: a 200 for a valid search, else its own 4xx
    assert status in (200, 400, 401, 406, 415), answer
    if status == 200:
        assert json.loads(answer)["results"] is not None


def test_a_search_that_asks_the_peers_goes_to_the_view(lane, agents):
    app, _ = lane
    auto = {**WEATHER, "federation": "auto"}
    post(app, auto)
    with override_settings(ARD_PEERS=["https://peer.example/ard"]):
        from protocols.ard.catalog.query import search_parse
        from protocols.ard.search.lean import search_lean
        from protocols.ard.search.search import asks_peers

        assert asks_peers(search_parse(auto))
        environ = RequestFactory().post("/ard/search", auto, content_type="application/json")
        assert search_lean("", environ.environ) is None


def test_a_client_over_its_read_limit_gets_the_views_429(lane, agents):
    app, django = lane
    post(app, WEATHER)
    with override_settings(RATE_LIMIT_READ="1/day"):
        first = post(app, WEATHER, REMOTE_ADDR="10.9.9.9")
        second = post(app, WEATHER, REMOTE_ADDR="10.9.9.9")
    assert first[0] == 200 and second[0] == 429
    assert json.loads(second[2])["errorCode"] == "RATE_LIMIT_EXCEEDED"
    assert django.paths == ["/ard/search", "/ard/search"]  # the 429 is the view's


def test_search_peek_only_answers_what_search_cached(agents):
    query = Query(text="weather")
    assert selectors.search_peek(query, 5, None) is None
    found = selectors.search(query, 5, None)
    assert selectors.search_peek(query, 5, None) == found
    live = Query(text="weather", filters={"metadata.live": ["true"]})
    assert selectors.search_peek(live, 5, None) is None


def test_a_body_the_views_parser_refuses_is_its_400_even_if_the_search_is_cached(lane, agents):
    """Duplicate keys (and NaN, invalid UTF-8, deep nesting) are the strict parser's 400s."""
    app, django = lane
    post(app, WEATHER)
    twice = b'{"query": {"text": "weather"}, "federation": "none", "pageSize": 5, "pageSize": 5}'
    status, _, answer = post(app, twice)
    assert status == 400 and django.paths == ["/ard/search", "/ard/search"], answer
