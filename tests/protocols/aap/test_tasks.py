"""The AAP refresh as a background job: scheduled, run eagerly, and run by a real worker."""

import json
import logging
import os
import time
from pathlib import Path

import pytest
import redis
from celery.contrib.testing.worker import start_worker

from protocols.aap.models import AAPStatus
from protocols.aap.tasks import aap_refresh
from registry.celery import app
from tests.conftest import redis_test_url

REDIS_URL = redis_test_url()  # this worker's database
EXAMPLE_CARD = Path(__file__).resolve().parents[2] / "fixtures" / "aap" / "card-public.json"


@pytest.fixture
def dealer(alice) -> str:
    """A compliant dealer agent (the official public example card), whose stored status
    is then spoiled: only a refresh makes it compliant again."""
    card = json.loads(EXAMPLE_CARD.read_text(encoding="utf-8"))
    response = alice.post("/a2a/agents", {"card": card}, format="json")
    assert response.status_code == 201, response.content
    agent_id = response.json()["id"]
    AAPStatus.objects.filter(agent_id=agent_id).update(compliant=False)
    return agent_id


def test_the_refresh_is_scheduled_at_the_configured_interval(settings):
    app.finalize()
    entry = app.conf.beat_schedule["aap-refresh"]
    assert entry["task"] == "aap.tasks.aap_refresh"
    assert entry["schedule"] == settings.AAP_REFRESH_INTERVAL_SECONDS


@pytest.mark.django_db
def test_the_refresh_job_recomputes_statuses_and_says_how_many(dealer, caplog):
    with caplog.at_level(logging.INFO, logger="protocols.aap.tasks"):
        result = aap_refresh.delay()

    assert result.get() == AAPStatus.objects.count()
    assert AAPStatus.objects.get(agent_id=dealer).compliant is True
    assert f"Rechecked the AAP status of {result.get()} agents." in caplog.text


@pytest.fixture
def redis_worker():
    """A real Celery worker (in a thread) taking jobs from Redis."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"Redis does not answer on {REDIS_URL}: {exc}")
    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=REDIS_URL, task_always_eager=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            yield
    finally:
        app.conf.update(saved)


@pytest.mark.django_db(transaction=True)
def test_a_worker_takes_the_refresh_from_redis_and_runs_it(dealer, redis_worker):
    # Sent on a connection of its own: eager runs earlier in this process opened the
    # default broker's producer pool, which keeps its broker.
    with app.connection_for_write(REDIS_URL) as broker:
        aap_refresh.apply_async(connection=broker)

    deadline = time.monotonic() + 30
    while not AAPStatus.objects.get(agent_id=dealer).compliant:
        assert time.monotonic() < deadline, "the worker did not run the job within 30 s"
        time.sleep(0.1)
