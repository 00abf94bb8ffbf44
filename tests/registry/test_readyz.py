"""/readyz: the database, the cache and the job broker answer, or 503 naming which not."""

import pytest
from django.db import OperationalError

from registry import health
from registry.celery import app

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_checks(monkeypatch):
    # Each test checks afresh: no result reused from the one before.
    monkeypatch.setitem(health._last, "at", None)


def test_readyz_is_200_when_every_dependency_answers(anon):
    response = anon.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok"},
    }


def test_readyz_is_503_when_the_broker_does_not_answer(anon, monkeypatch):
    monkeypatch.setitem(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    monkeypatch.setattr(health, "READY_TIMEOUT", 1)
    response = anon.get("/readyz")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "/problems/not-ready"
    assert "broker" in body["detail"]
    assert body["checks"] == {"database": "ok", "cache": "ok", "broker": "unavailable"}


def test_readyz_reports_the_cache_degraded_and_stays_ready_without_redis(anon, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "registry.access.shared_cache.SharedRedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    response = anon.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "cache": "degraded", "broker": "ok"},
    }


def test_readyz_is_503_when_the_database_does_not_answer(anon, monkeypatch, caplog):
    class Down:
        def cursor(self):
            raise OperationalError("connection to db.internal:5432 refused")

    monkeypatch.setattr(health, "connection", Down())
    response = anon.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "unavailable"
    # Where the database is stays in the log: anyone may call /readyz.
    assert "db.internal" not in response.content.decode()
    assert "db.internal:5432" in caplog.text


def test_a_process_checks_at_most_once_a_second(anon, monkeypatch, django_assert_num_queries):
    clock = [1000.0]
    monkeypatch.setattr(health, "_clock", lambda: clock[0])
    with django_assert_num_queries(1):
        assert anon.get("/readyz").status_code == 200
    clock[0] += 0.5
    with django_assert_num_queries(0):
        assert anon.get("/readyz").json()["status"] == "ok"
    clock[0] += 0.5
    with django_assert_num_queries(1):
        assert anon.get("/readyz").status_code == 200
