"""The series an operator watches besides the requests: open event streams,
the job queues' depth, the embedding service's latency; and every series' labels, which
take only names from a short list, so clients cannot grow their number."""

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from celery import current_app

from registry.http import metrics
from tests.registry.observability.conftest import own_counts, value

ROOT = Path(__file__).resolve().parents[3]
# Every label a series may have: each takes a handful of values (tests/…/test_metrics.py
# checks that requests for many ids and queries make no new series).
BOUNDED_LABELS = {
    "route",
    "method",
    "status",
    "lane",
    "outcome",
    "task",
    "scope",
    "operation",
    "queue",
    "state",
    "kind",  # what waits for a moderator: review, quarantined, reports
}


def test_every_series_takes_only_bounded_labels(scrape):
    for name, made in metrics.series.items():
        assert set(made._labelnames) <= BOUNDED_LABELS, name
    scraped = {labels for (name, labels) in scrape() if name.startswith(metrics.PREFIX)}
    assert {label for labels in scraped for label, _ in labels} <= BOUNDED_LABELS | {"le"}


def test_open_event_streams_are_counted_while_open(db, client, settings):
    settings.EVENTS_STREAM_URL = ""
    folder = Path(settings.PROMETHEUS_MULTIPROC_DIR)
    before = value(own_counts(folder), "registry_event_streams_open")
    response = client.get("/events")
    assert response.status_code == 200
    assert value(own_counts(folder), "registry_event_streams_open") == before + 1
    response.close()
    assert value(own_counts(folder), "registry_event_streams_open") == before


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")
def test_jobs_waiting_on_the_broker_are_counted_by_queue(db, scrape):
    before = scrape()
    assert value(before, "registry_job_broker_up") == 1
    with current_app.connection_for_write() as conn:
        current_app.send_task("tests.never-run", queue="celery", connection=conn)
        try:
            after = scrape()
        finally:
            conn.default_channel.queue_purge("celery")
    queued = "registry_job_queue_depth"
    assert value(after, queued, queue="celery") == value(before, queued, queue="celery") + 1
    assert (queued, (("queue", "webhooks"),)) in after


def test_a_broker_that_does_not_answer_leaves_the_depths_out(db, scrape, settings):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    saved = current_app.conf.broker_url
    current_app.conf.broker_url = f"redis://127.0.0.1:{port}/0"
    try:
        scraped = scrape()
    finally:
        current_app.conf.broker_url = saved
    assert value(scraped, "registry_job_broker_up") == 0
    assert not [name for name, _ in scraped if name == "registry_job_queue_depth"]


def test_the_embedding_services_latency_is_counted_by_operation_and_outcome(tmp_path, settings):
    """A service that answers one request, then closes: ok, then unavailable."""
    from registry.semantic import client as semantic

    path = str(tmp_path / "semantic.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()

    def answer_once() -> None:
        conn, _ = server.accept()
        with conn:
            conn.makefile("rb").readline()
            conn.sendall(b'{"vectors": []}\n')

    thread = threading.Thread(target=answer_once, daemon=True)
    thread.start()
    settings.SEMANTIC_SOCKET = path
    folder = Path(settings.PROMETHEUS_MULTIPROC_DIR)
    name = "registry_semantic_request_duration_seconds_count"
    before = own_counts(folder)
    try:
        assert semantic.embed(["a"]) == []
        thread.join(5)
        server.close()
        with pytest.raises(semantic.SemanticUnavailable):
            semantic.embed(["b"])
    finally:
        kept = getattr(semantic._links, "link", None)
        if kept is not None:
            semantic._link_drop(kept)
    after = own_counts(folder)
    for outcome in ("ok", "unavailable"):
        labels = {"operation": "embed", "outcome": outcome}
        assert value(after, name, **labels) - value(before, name, **labels) == 1


SCRIPT = """
import django
django.setup()
from registry.http import metrics
metrics.jobs.labels("tests.other-container", "success").inc(3)
"""


def test_a_scrape_adds_up_the_folders_below_the_scrape_folder(db, scrape_all, settings, tmp_path):
    """Containers each count in a folder of their own below a shared one (compose.yaml)."""
    settings.METRICS_SCRAPE_DIR = tmp_path
    for service in ("worker", "relay"):
        subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT,
            env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / service)},
            check=True,
            timeout=60,
        )
    labels = {"task": "tests.other-container", "outcome": "success"}
    assert value(scrape_all(), "registry_jobs_total", **labels) == 6


def test_what_waits_for_a_moderator_is_a_gauge(scrape, admin_client, alice, native_payload):
    pending = "registry_moderation_pending"
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    assert value(scrape(), pending, kind="quarantined") == 0
    quarantined = admin_client.post(
        f"/agents/{agent_id}/quarantine", {"reason": "spam"}, format="json"
    )
    assert quarantined.status_code == 200
    after = scrape()
    assert value(after, pending, kind="quarantined") == 1
    assert value(after, pending, kind="review") == 0
