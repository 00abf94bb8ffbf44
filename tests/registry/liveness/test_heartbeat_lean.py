"""Heartbeats on the lean lane (registry.liveness.heartbeats.heartbeat_lean): on PostgreSQL the
same answers as the API view, header for header, and every refusal or unusual case left
to that view, which explains it. Elsewhere the lane leaves every heartbeat to the view."""

import json

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from registry import extensions
from registry.agents.models import Endpoint
from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder, call
from tests.registry.liveness.test_liveness import endpoint, ids

pytestmark = pytest.mark.django_db

UNKNOWN = "7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1"


@pytest.fixture
def agent(alice, native_payload) -> dict:
    endpoints = [endpoint("web", seconds=30), endpoint("queue", model="Ephemeral", seconds=120)]
    response = alice.post("/agents", native_payload(endpoints=endpoints), format="json")
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def live_agent(alice, agent) -> dict:
    """The agent with its endpoints live: the lane keeps live endpoints alive; reviving one
    (a liveness status change, with its event) is the view's."""
    assert alice.post(f"/agents/{agent['id']}/heartbeat").status_code == 200
    return agent


@pytest.fixture
def lane():
    recorder = Recorder()
    return LeanApplication(recorder), recorder


def on_lane() -> bool:
    return connection.vendor == "postgresql"


def bearer(client) -> dict:
    return {"HTTP_AUTHORIZATION": client._credentials["HTTP_AUTHORIZATION"]}


def beat_paths(agent) -> list[str]:
    web = ids(agent)["web"]
    base = f"/agents/{agent['id']}"
    return [
        f"{base}/heartbeat",
        f"{base}/endpoints/{web}/heartbeat",
        f"{base}/endpoints/{web}/renew",
    ]


def test_heartbeats_are_registered_by_the_core_as_a_post_route():
    posts = [r for r in extensions.lean_routes.read() if r.method == "POST"]
    [route] = [r for r in posts if r.prefix == "/agents/"]  # (the apps may add their own)
    assert not route.read_limited and route.database


@pytest.mark.parametrize("which", [0, 1, 2], ids=["agent", "endpoint", "renew"])
@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
def test_a_heartbeat_on_the_lane_equals_the_views_answer(
    settings, monkeypatch, alice, live_agent, which, secure
):
    agent = live_agent
    settings.SECURE_HSTS_SECONDS = 600
    django = Recorder()
    app = LeanApplication(django)  # both with the settings of this test
    view = APIClient(**bearer(alice))
    path = beat_paths(agent)[which]
    moment = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: moment)  # both answers show the same times

    rid = {"HTTP_X_REQUEST_ID": "same-id"}  # echoed by both
    status, headers, body = call(app, "POST", path, secure=secure, **bearer(alice), **rid)
    assert django.paths == ([] if on_lane() else [path])
    expected = view.post(path, secure=secure, **rid)
    assert (status, body) == (expected.status_code, expected.content)
    assert headers == dict(expected.headers.items())
    assert headers["Content-Type"] == "application/json"
    assert ("Strict-Transport-Security" in headers) is secure
    live = Endpoint.objects.filter(agent_id=agent["id"], alive_until__gt=moment)
    assert live.count() == 2


@pytest.mark.parametrize("which", [0, 1], ids=["agent", "endpoint"])
def test_a_heartbeat_that_revives_an_endpoint_is_left_to_the_view(alice, agent, lane, which):
    app, django = lane
    path = beat_paths(agent)[which]
    status, _, _ = call(app, "POST", path, **bearer(alice))
    assert status == 200 and django.paths == [path]
    assert call(app, "POST", path, **bearer(alice))[0] == 200
    assert django.paths == ([path] if on_lane() else [path, path])


@pytest.mark.postgres
def test_the_lane_sends_one_statement(lane, alice, live_agent, django_assert_num_queries):
    app, django = lane
    agent = live_agent
    path = beat_paths(agent)[1]
    with django_assert_num_queries(1):
        assert call(app, "POST", path, **bearer(alice))[0] == 200
    assert django.paths == []


@pytest.mark.parametrize(
    ("who", "path", "status"),
    [
        ("none", "{agent}/heartbeat", 401),
        ("wrong", "{agent}/heartbeat", 401),
        ("basic", "{agent}/heartbeat", 401),
        ("bob", "{agent}/endpoints/{web}/heartbeat", 403),
        ("alice", f"{UNKNOWN}/heartbeat", 404),
        ("alice", f"{{agent}}/endpoints/{UNKNOWN}/renew", 404),
        ("alice", "not-a-uuid/heartbeat", 404),
        ("alice", "{agent}/endpoints/not-a-uuid/heartbeat", 404),
    ],
)
def test_refused_heartbeats_get_the_views_problem(lane, alice, bob, agent, who, path, status):
    app, django = lane
    path = "/agents/" + path.format(agent=agent["id"], web=ids(agent)["web"])
    meta = {
        "none": {},
        "wrong": {"HTTP_AUTHORIZATION": "Bearer rk_not-a-key"},
        "basic": {"HTTP_AUTHORIZATION": "Basic YWxpY2U6c2VjcmV0"},
        "bob": bearer(bob),
        "alice": bearer(alice),
    }[who]

    got, headers, _ = call(app, "POST", path, **meta)

    assert django.paths == [path]
    assert got == status and headers["Content-Type"] == "application/problem+json"
    assert not Endpoint.objects.filter(agent_id=agent["id"], alive_until__isnull=False).exists()


def test_other_posts_under_agents_go_to_django(lane, alice, agent):
    app, django = lane
    base = f"/agents/{agent['id']}"
    assert call(app, "POST", f"{base}/liveness", **bearer(alice))[0] == 405
    assert call(app, "POST", f"{base}/heartbeat/", **bearer(alice))[0] == 404
    assert django.paths == [f"{base}/liveness", f"{base}/heartbeat/"]


def test_over_its_limit_a_key_gets_the_views_429_and_each_heartbeat_counts_once(
    settings, lane, alice, bob, agent
):
    settings.RATE_LIMIT_HEARTBEAT = "2/day"
    app, django = lane
    path = beat_paths(agent)[1]
    # Refused heartbeats count once each, wherever they are refused.
    assert [call(app, "POST", path, **bearer(bob))[0] for _ in range(3)] == [403, 403, 429]
    statuses = [call(app, "POST", path, **bearer(alice))[0] for _ in range(3)]
    assert statuses == [200, 200, 429]
    status, headers, _ = call(app, "POST", path, **bearer(alice))
    assert status == 429 and headers["Content-Type"] == "application/problem+json"
    assert int(headers["Retry-After"]) >= 1
    # On the lane: bob's three, alice's first (it revives the endpoint) and her two 429s.
    assert django.paths.count(path) == (6 if on_lane() else 7)


def test_a_request_with_a_body_goes_to_the_view_which_ignores_it(lane, alice, agent):
    app, django = lane
    path = beat_paths(agent)[1]
    for body, content_type in (
        (b"not json", "text/plain"),
        (b'{"ttlSeconds": 5}', "application/json"),
    ):
        environ = {"CONTENT_TYPE": content_type, **bearer(alice)}
        status, headers, _ = call_with_body(app, path, body, environ)
        assert status == 200 and headers["Content-Type"] == "application/json"
    assert django.paths == [path, path]


def call_with_body(app, path, body, meta):
    from django.test import RequestFactory

    environ = RequestFactory().generic("POST", path, body, **meta).environ
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"], answer["headers"] = int(status.split()[0]), dict(headers)

    content = b"".join(app(environ, start_response))
    return answer["status"], answer["headers"], content


def test_a_host_django_refuses_is_left_to_django(lane, alice, agent):
    app, django = lane
    path = beat_paths(agent)[0]
    status, headers, _ = call(app, "POST", path, HTTP_HOST="evil.example", **bearer(alice))
    assert status == 400 and headers["Content-Type"] == "application/problem+json"
    assert django.paths == [path]


def test_with_ssl_redirect_plain_http_is_left_to_django(settings, alice, agent):
    settings.SECURE_SSL_REDIRECT = True
    recorder = Recorder()
    app = LeanApplication(recorder)
    path = beat_paths(agent)[0]
    status, headers, _ = call(app, "POST", path, **bearer(alice))
    assert status == 301 and headers["Location"].startswith("https://")
    assert recorder.paths == [path]
    assert not Endpoint.objects.filter(alive_until__isnull=False).exists()


@pytest.mark.parametrize("which", [0, 1, 2], ids=["agent", "endpoint", "renew"])
def test_a_retired_agents_heartbeats_are_410_and_never_revive_it(
    lane, alice, admin_client, agent, which
):
    app, django = lane
    path = beat_paths(agent)[which]
    assert call(app, "POST", path, **bearer(alice))[0] == 200
    assert alice.delete(f"/agents/{agent['id']}").status_code == 204
    django.paths.clear()
    before = dict(Endpoint.objects.filter(agent_id=agent["id"]).values_list("id", "alive_until"))

    for client in (alice, admin_client):  # the owner's key, and an admin's
        status, headers, body = call(app, "POST", path, **bearer(client))
        assert status == 410 and headers["Content-Type"] == "application/problem+json"
        problem = json.loads(body)
        assert problem["type"].endswith("/retired") and problem["retiredAt"].endswith("Z")
        assert problem["retiredAt"][:19] in problem["detail"]
    assert django.paths == [path, path]  # the lane changed nothing and left it to the view

    after = dict(Endpoint.objects.filter(agent_id=agent["id"]).values_list("id", "alive_until"))
    assert after == before
    assert alice.get(f"/agents/{agent['id']}").json()["status"] == "retired"
