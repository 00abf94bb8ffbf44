"""Provider registrations too large for one request: checked at once, then a job (202 with
its status URL) that a worker runs while the web process keeps answering."""

import logging
import threading
import time

import httpx
import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun

from protocols.entities.models import Entity, ProviderJob
from registry.celery import app
from tests.protocols.entities.conftest import example


def registration(count: int, provider: str = "booking-provider") -> dict:
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    payload["provider"]["id"] = provider
    template = payload["entities"][0]
    payload["entities"] = [
        {**template, "entity_id": f"e-{n}", "name": f"Bistro {n}", "domain": f"e{n}.example"}
        for n in range(count)
    ]
    return payload


@pytest.mark.django_db
def test_up_to_the_limit_a_registration_is_answered_at_once(alice, settings):
    settings.PROVIDER_REGISTER_NOW = 3
    response = alice.post("/v1/provider/register", registration(3), format="json")
    assert response.status_code == 201, response.content[:300]
    assert len(response.json()["entities"]) == 3
    assert not ProviderJob.objects.exists()


@pytest.mark.django_db
def test_a_larger_registration_is_a_job_whose_status_url_tells_how_it_went(
    alice, bob, settings, django_capture_on_commit_callbacks
):
    settings.PROVIDER_REGISTER_NOW = 3
    with django_capture_on_commit_callbacks(execute=True):  # jobs run eagerly in tests
        response = alice.post("/v1/provider/register", registration(5), format="json")
    assert response.status_code == 202, response.content[:300]
    queued = response.json()
    assert queued["state"] == "queued" and queued["counts"]["entities"] == 5
    assert response["Location"] == queued["url"]
    assert queued["url"].endswith(f"/v1/provider/register/jobs/{queued['id']}")

    job = alice.get(f"/v1/provider/register/jobs/{queued['id']}").json()
    assert job["state"] == "succeeded"
    assert job["counts"] == {"entities": 5, "registered": 5, "problems": 0}
    assert [e["entity_id"] for e in job["result"]["entities"]] == [f"e-{n}" for n in range(5)]
    assert Entity.objects.filter(key__startswith="provider:booking-provider/").count() == 5
    # Another owner's key finds no such job.
    assert bob.get(f"/v1/provider/register/jobs/{queued['id']}").status_code == 404
    assert alice.get("/v1/provider/register/jobs/not-a-uuid").status_code == 404


@pytest.mark.django_db
def test_a_job_keeps_the_warnings_as_its_problems(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.PROVIDER_REGISTER_NOW = 1
    payload = registration(2)
    payload["provider"]["public_key"] = "not a PEM"
    with django_capture_on_commit_callbacks(execute=True):
        queued = alice.post("/v1/provider/register", payload, format="json").json()
    job = alice.get(f"/v1/provider/register/jobs/{queued['id']}").json()
    assert job["state"] == "succeeded" and job["counts"]["problems"] == 1
    assert job["problems"][0]["path"] == "provider.public_key"


@pytest.mark.django_db
def test_a_large_registration_is_checked_before_it_is_queued(alice, bob, settings):
    settings.PROVIDER_REGISTER_NOW, settings.PROVIDER_REGISTER_MAX = 2, 4
    too_many = alice.post("/v1/provider/register", registration(5), format="json")
    assert too_many.status_code == 400
    problem = too_many.json()
    assert problem["type"] == "/problems/invalid-registration" and problem["maxEntities"] == 4
    assert problem["errors"] == [{"path": "entities", "message": "may list at most 4 items"}]

    invalid = registration(3)
    invalid["entities"][2]["domain"] = "not a domain"
    answered = alice.post("/v1/provider/register", invalid, format="json")
    assert answered.status_code == 400
    assert [e["path"] for e in answered.json()["errors"]] == ["entities[2].domain"]

    assert alice.post("/v1/provider/register", registration(2), format="json").status_code == 201
    taken = bob.post("/v1/provider/register", registration(3), format="json")
    assert taken.status_code == 403
    assert not ProviderJob.objects.exists() and not Entity.objects.filter(name="Bistro 2")


@pytest.fixture
def worker(settings):
    """A real Celery worker, in a thread of this process, taking jobs from the job queue."""
    # Read before the setting changes: the app's configuration is read from the settings
    # on first use, which may be here (the first job of this process, under pytest-xdist).
    saved = app.conf.task_always_eager
    settings.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.task_always_eager = False
    done = threading.Event()

    def finished(sender=None, **kwargs):
        if sender is not None and sender.name == "entities.tasks.provider_job":
            done.set()

    task_postrun.connect(finished, weak=False)
    # The worker sets up logging for itself (the root logger at ERROR): put it back after.
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=60):
            yield done
    finally:
        task_postrun.disconnect(finished)
        app.conf.task_always_eager = saved
        root.setLevel(level)
        root.handlers[:] = handlers


@pytest.mark.django_db(transaction=True)
def test_healthz_answers_while_a_worker_registers_a_large_batch(
    live_server, settings, make_key, worker
):
    settings.REGISTRY_BASE_URL = live_server.url
    count = 150
    headers = {"Authorization": f"Bearer {make_key()}"}
    with httpx.Client(base_url=live_server.url, headers=headers, timeout=30) as http:
        answered = http.post("/v1/provider/register", json=registration(count))
        assert answered.status_code == 202, answered.text[:300]
        health = []
        while not worker.is_set():
            health.append(http.get("/healthz").status_code)
            time.sleep(0.05)
            assert len(health) < 6000, "the job did not finish within five minutes"
        assert health and set(health) == {200}, health[-5:]
        job = http.get(answered.headers["Location"]).json()
    assert job["state"] == "succeeded", job.get("problem")
    assert job["counts"] == {"entities": count, "registered": count, "problems": 0}
