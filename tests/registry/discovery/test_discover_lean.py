"""GET /discover/agents on the lean lane (registry.discovery.lean.discover_lean): a query the view
answered before is answered from its cached keys with the same bytes and headers as the
view's; everything else is left to the view."""

import pytest
from django.core.cache import cache

from registry import extensions
from registry.discovery import first, planner
from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder, call

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def repeated_queries_only(monkeypatch):
    """These tests are about queries the view answered first: the lane would find a query
    never asked itself (tests/registry/discovery/test_discover_first.py)."""
    plan = planner.plan
    monkeypatch.setattr(
        planner, "plan", lambda *a, lane=False, **k: None if lane else plan(*a, **k)
    )
    monkeypatch.setattr(first, "agents_filtered", lambda query: None)


@pytest.fixture
def lane():
    recorder = Recorder()
    return LeanApplication(recorder), recorder


@pytest.fixture
def agents(alice, native_payload):
    for index in range(5):
        response = alice.post(
            "/agents",
            native_payload(name=f"Weather {index}", description=f"Forecasts number {index}"),
            format="json",
        )
        assert response.status_code == 201, response.content


QUERIES = [
    "/discover/agents?q=weather&limit=2",  # with a next page
    "/discover/agents?q=forecasts",
    "/discover/agents?sort=name&limit=3",
    "/discover/agents?q=weather&facets=tag,protocol",  # the core's facets
]


def test_the_route_is_registered_by_the_core_for_anonymous_requests():
    routes = {route.prefix: route for route in extensions.lean_routes.read()}
    route = routes["/discover/agents"]
    assert route.exact and route.anonymous and route.read_limited


@pytest.mark.parametrize("path", QUERIES)
def test_a_repeated_query_is_answered_on_the_lane_as_the_view_answers_it(lane, agents, path):
    app, django = lane
    rid = {"HTTP_X_REQUEST_ID": "same-id"}  # each answer echoes it
    first = call(app, "GET", path, **rid)  # found by the view, its keys cached
    assert django.paths == ["/discover/agents"] and first[0] == 200
    again = call(app, "GET", path, **rid)
    assert django.paths == ["/discover/agents"]  # the lane answered
    assert again == first
    assert again[1]["ETag"].startswith('"') and "Last-Modified" in again[1]


def test_next_links_keep_the_scheme_and_host_of_the_request(agents, settings):
    settings.ALLOWED_HOSTS = ["registry.example"]
    django = Recorder()
    app = LeanApplication(django)  # (after the setting: the lane reads it once)
    meta = {"HTTP_HOST": "registry.example", "wsgi.url_scheme": "https", "HTTP_X_REQUEST_ID": "r"}
    path = "/discover/agents?q=weather&limit=2"
    first = call(app, "GET", path, **meta)
    again = call(app, "GET", path, **meta)
    assert again == first and len(django.paths) == 1
    assert b'"next":"https://registry.example/discover/agents?q=weather&limit=2&cursor=' in again[2]


def test_a_write_since_sends_the_query_to_the_view_again(lane, agents, alice, native_payload):
    app, django = lane
    path = "/discover/agents?q=weather"
    call(app, "GET", path)
    alice.post("/agents", native_payload(name="Weather new"), format="json")
    status, _, body = call(app, "GET", path)
    assert status == 200 and b"Weather new" in body
    assert django.paths == ["/discover/agents"] * 2
    call(app, "GET", path)
    assert len(django.paths) == 2  # found at the new generation, cached again


def test_the_view_answers_304_and_the_lane_too(lane, agents):
    app, django = lane
    path = "/discover/agents?q=weather"
    status, headers, _ = call(app, "GET", path)
    status, _, body = call(app, "GET", path, HTTP_IF_NONE_MATCH=headers["ETag"])
    assert status == 304 and body == b""
    status, _, _ = call(app, "GET", path, HTTP_IF_MODIFIED_SINCE=headers["Last-Modified"])
    assert status == 304 and len(django.paths) == 1


@pytest.mark.parametrize(
    "meta",
    [
        {"HTTP_ACCEPT": "text/html"},  # the view refuses it: 406
        {"HTTP_AUTHORIZATION": "Bearer not-a-key"},  # the view refuses it: 401
        {"HTTP_X_API_KEY": "not-a-key"},
        {"REQUEST_METHOD": "HEAD"},  # (no ETag on a HEAD: the view's answer)
    ],
)
def test_what_the_view_answers_otherwise_is_left_to_it(lane, agents, meta):
    app, django = lane
    path = "/discover/agents?q=weather"
    call(app, "GET", path)
    method = meta.pop("REQUEST_METHOD", "GET")
    status, headers, _ = call(app, method, path, **meta)
    assert django.paths == ["/discover/agents"] * 2
    if method == "HEAD":
        assert status == 200 and "ETag" not in headers
    else:
        assert status in (401, 406)


@pytest.mark.parametrize(
    "path",
    [
        "/discover/agents?q=weather&liveOnly=true",  # liveness: never cached
        "/discover/agents?q=weather&facets=live",
        "/discover/agents?updated_since=2020-01-01T00:00:00Z",
        "/discover/agents?q=weather&facets=nonsense",  # the view's 400
        "/discover/agents?bogus=1",
    ],
)
def test_queries_never_cached_always_reach_the_view(lane, agents, path):
    app, django = lane
    answers = [call(app, "GET", path)[0] for _ in range(2)]
    assert django.paths == ["/discover/agents"] * 2
    assert answers[0] == answers[1]


def django_paths(lane) -> list[str]:
    return lane[1].paths


def test_keyed_reads_are_counted_once_per_key_and_anonymous_ones_once(
    lane, agents, settings, make_key
):
    app, _ = lane
    settings.RATE_LIMIT_READ = "3/day"
    path = "/discover/agents?q=weather"
    statuses = [call(app, "GET", path)[0] for _ in range(4)]  # view, lane, lane, refused
    assert statuses == [200, 200, 200, 429]
    assert django_paths(lane) == ["/discover/agents"] * 2  # the first, the refused one
    key = make_key("alice")
    keyed = [call(app, "GET", path, HTTP_AUTHORIZATION=f"Bearer {key}")[0] for _ in range(4)]
    assert keyed == [200, 200, 200, 429]  # the key's own count, not the address's


def test_a_query_answered_on_the_lane_is_not_counted_again_by_the_view(lane, agents, settings):
    app, django = lane
    settings.RATE_LIMIT_READ = "2/day"
    path = "/discover/agents?q=weather"
    assert call(app, "GET", path)[0] == 200  # view (counted once: 1)
    cache.clear()  # the keys are gone: the lane counts (2) and passes it on to the view
    assert call(app, "GET", path)[0] == 200
    assert django.paths == ["/discover/agents"] * 2
    assert call(app, "GET", path)[0] == 429
