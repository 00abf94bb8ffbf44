"""Rate limits: per client IP (or key) for reads, per key for writes; 429 with Retry-After."""

import pytest
from django.core.cache import caches

from tests.conftest import redis_test_url

pytestmark = pytest.mark.django_db


def test_anonymous_reads_are_limited_per_ip(settings, anon, alice):
    settings.RATE_LIMIT_READ = "3/day"
    for _ in range(3):
        assert anon.get("/discover/agents", REMOTE_ADDR="203.0.113.5").status_code == 200
    response = anon.get("/discover/agents", REMOTE_ADDR="203.0.113.5")
    assert response.status_code == 429
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "/problems/throttled"
    assert 1 <= int(response["Retry-After"]) <= 86400
    # Another client is not affected.
    assert anon.get("/discover/agents", REMOTE_ADDR="203.0.113.6").status_code == 200


def test_writes_are_limited_per_key(settings, client_for, native_payload):
    settings.RATE_LIMIT_WRITE = "2/day"
    first, second = client_for("alice"), client_for("bob")
    for _ in range(2):
        assert first.post("/agents", native_payload(), format="json").status_code == 201
    response = first.post("/agents", native_payload(), format="json")
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert second.post("/agents", native_payload(), format="json").status_code == 201


def test_limits_hold_on_a_shared_redis_cache(settings, anon):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_test_url(),
            "KEY_PREFIX": "registry-test",
        }
    }
    caches["default"].clear()
    settings.RATE_LIMIT_READ = "2/day"
    try:
        statuses = [
            anon.get("/discover/agents", REMOTE_ADDR="198.51.100.7").status_code for _ in range(3)
        ]
        assert statuses == [200, 200, 429]
        # The counter is in Redis, where every app server would see it.
        redis = caches["default"]._cache.get_client()
        [key] = list(redis.scan_iter(match="*throttle:read:*"))
        assert int(redis.get(key)) == 3
        # The window's expiry (a day and a second), set with its first count.
        assert 0 < redis.ttl(key) <= 86401
    finally:
        caches["default"].clear()


@pytest.mark.apps("a2a")
def test_card_reads_are_limited_per_ip_too(settings, alice, anon, make_card):
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    settings.RATE_LIMIT_READ = "2/day"
    statuses = [
        anon.get(f"/a2a/agents/{agent_id}", REMOTE_ADDR="192.0.2.9").status_code for _ in range(3)
    ]
    assert statuses == [200, 200, 429]
    response = anon.get(f"/a2a/agents/{agent_id}", REMOTE_ADDR="192.0.2.9")
    assert response["Content-Type"] == "application/problem+json"
    assert int(response["Retry-After"]) >= 1


def test_failed_authentications_are_limited_per_client_address(
    settings, anon, alice, native_payload, django_assert_num_queries
):
    settings.RATE_LIMIT_AUTH_FAILURES = "5/day"
    agent = alice.post("/agents", native_payload(), format="json").json()
    beat = f"/agents/{agent['id']}/heartbeat"
    guesser = {"REMOTE_ADDR": "203.0.113.9"}
    statuses = [
        anon.post(beat, HTTP_AUTHORIZATION=f"Bearer rk_guess{n}", **guesser).status_code
        for n in range(7)
    ]
    assert statuses == [401] * 5 + [429] * 2
    refused = anon.post(beat, HTTP_AUTHORIZATION="Bearer rk_guess", **guesser)
    assert refused["Content-Type"] == "application/problem+json"
    assert refused.json()["type"] == "/problems/throttled"
    assert int(refused["Retry-After"]) >= 1
    # Refused before any key is looked up.
    with django_assert_num_queries(0):
        anon.post("/agents", native_payload(), format="json", HTTP_X_API_KEY="rk_x", **guesser)
    # Another address, and the valid key's owner elsewhere, are not affected.
    assert anon.post(beat, HTTP_AUTHORIZATION="Bearer rk_guess").status_code == 401
    assert alice.post(beat).status_code == 200
