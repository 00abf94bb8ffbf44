"""One error format everywhere outside the admin: application/problem+json."""

import uuid

import pytest

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


def assert_problem(response, status: int, slug: str) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["type"] == f"/problems/{slug}"
    assert body["status"] == status
    return body


@pytest.mark.parametrize("debug", [False, True])
def test_unknown_routes_are_problems_also_in_debug(anon, settings, debug):
    settings.DEBUG = debug
    body = assert_problem(anon.get("/no/such/route"), 404, "not-found")
    assert "/no/such/route" in body["detail"]
    assert_problem(anon.get("/agents/x/y/z"), 404, "not-found")


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "/healthz"), ("delete", "/readyz"), ("put", "/healthz")],
)
def test_wrong_methods_on_plain_views_are_405_problems_with_allow(anon, method, path):
    response = getattr(anon, method)(path)
    body = assert_problem(response, 405, "method-not-allowed")
    assert method.upper() in body["detail"]
    assert "GET" in response["Allow"]


def test_wrong_methods_on_api_views_are_405_problems(alice):
    assert_problem(alice.put("/discover/agents"), 405, "method-not-allowed")
    assert_problem(alice.post(f"/agents/{uuid.uuid4()}"), 405, "method-not-allowed")


@pytest.mark.parametrize("who", ["anon", "bad key", "key"])
@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("put", "/discover/agents", "GET, HEAD, OPTIONS"),
        ("delete", "/api-keys", "GET, POST, HEAD, OPTIONS"),
        ("post", "/agents/{id}", "GET, PUT, PATCH, DELETE, HEAD, OPTIONS"),
    ],
)
def test_a_method_the_route_does_not_take_is_405_with_allow_whoever_asks(
    anon, alice, who, method, path, allow
):
    client = {"anon": anon, "key": alice}.get(who)
    if client is None:
        client = anon
        client.credentials(HTTP_AUTHORIZATION="Bearer rk_not_a_key")
    response = getattr(client, method)(path.format(id=uuid.uuid4()))
    body = assert_problem(response, 405, "method-not-allowed")
    assert method.upper() in body["detail"]
    assert set(response["Allow"].split(", ")) == set(allow.split(", "))


@pytest.mark.parametrize(
    "path",
    [
        "/agents/not-a-uuid",
        "/agents/123",
        "/agents/not-a-uuid/liveness",
        "/agents/7d1b9e52-3c4a-4f6e-9a0b-2c8d5e1f4a63/endpoints/not-a-uuid",
    ],
)
def test_a_malformed_id_is_404_like_an_unknown_one(anon, path):
    assert_problem(anon.get(path), 404, "not-found")


def test_a_malformed_id_in_a_write_is_404_too(alice):
    assert_problem(alice.delete("/agents/not-a-uuid"), 404, "not-found")
    assert_problem(alice.post("/agents/not-a-uuid/heartbeat"), 404, "not-found")


def test_admin_pages_stay_html(client):
    response = client.get("/admin/")
    assert response.status_code == 302


def test_problems_made_from_djangos_errors_keep_the_security_headers(anon, settings):
    settings.DEBUG = True
    response = anon.get("/no/such/route")
    assert response["Content-Type"] == PROBLEM
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
