"""METRICS_ENABLED: on (the default), what the registry serves is counted; off, nothing is
(no request, statement, cache hit, spool read or job), no process writes a metrics file and
``/metrics`` is a 404, while request ids and request logs go on as before."""

import json
import os
import subprocess
import sys
from pathlib import Path

from registry.fastpath.lean import LeanApplication
from registry.fastpath.spool import Spool
from registry.http import metrics
from tests.registry.fastpath.test_lean import Recorder, call
from tests.registry.observability.conftest import own_counts, value

ROOT = Path(__file__).resolve().parents[3]
AGENT_ROUTE = {"route": "/agents/<str:agent_id>", "method": "GET"}


def counted(settings) -> dict[tuple, float]:
    """This process's counts as a scrape would read them (its pending ones written first)."""
    metrics.http_flush()
    return own_counts(Path(settings.PROMETHEUS_MULTIPROC_DIR))


def traffic(client, alice, native_payload, tmp_path) -> str:
    """A registration, two reads of it through Django, one on the lean lane, a discovery
    page asked twice (a miss, then a hit of its cache), a card spool read missed and hit,
    and a job; the registered agent's id."""
    from registry.access.tasks import idempotency_prune

    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    for _ in range(2):
        assert client.get(f"/agents/{agent_id}").status_code == 200
    assert call(LeanApplication(Recorder()), "GET", "/healthz")[0] == 200
    for _ in range(2):
        assert client.get("/discover/agents?q=summarizer&limit=9").status_code == 200
    spool = Spool(1 << 20, str(tmp_path))
    assert spool.get("card:1") is None
    spool.put("card:1", b"{}")
    assert spool.get("card:1") == b"{}"
    idempotency_prune.delay()  # eager in the tests: the worker's signals
    return agent_id


def test_with_metrics_on_requests_statements_cache_hits_and_jobs_are_counted(
    db, client, alice, native_payload, settings, tmp_path
):
    assert settings.METRICS_ENABLED is True  # the default
    before = counted(settings)
    traffic(client, alice, native_payload, tmp_path)
    after = counted(settings)

    def rise(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert rise("registry_http_requests_total", status="200", lane="django", **AGENT_ROUTE) == 2
    lean = {"route": "/healthz", "method": "GET", "status": "200", "lane": "lean"}
    assert rise("registry_http_requests_total", **lean) == 1
    assert rise("registry_db_statements_total", **AGENT_ROUTE) > 0
    assert rise("registry_discovery_page_cache_total", outcome="hit") == 1
    assert rise("registry_card_spool_reads_total", outcome="hit") == 1
    assert rise("registry_card_spool_reads_total", outcome="miss") == 1
    job = {"task": "registry.access.tasks.idempotency_prune", "outcome": "success"}
    assert rise("registry_jobs_total", **job) == 1
    assert client.get("/metrics").status_code == 200


def test_with_metrics_off_nothing_is_counted_and_no_series_is_made(
    db, client, alice, native_payload, settings, tmp_path
):
    before = counted(settings)
    settings.METRICS_ENABLED = False  # before the clients' first request loads the middleware
    traffic(client, alice, native_payload, tmp_path)
    metrics.rate_limited.labels("read").inc()
    metrics.event_streams.inc()
    metrics.webhook_lag.observe(1.0)
    assert counted(settings) == before


def test_with_metrics_off_the_scrape_is_a_404_to_every_client_even_one_with_the_token(
    db, client, settings
):
    settings.METRICS_TOKEN = "scrape-secret"
    assert client.get("/metrics").status_code == 200
    settings.METRICS_ENABLED = False
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer scrape-secret"}):
        response = client.get("/metrics", **headers)  # from 127.0.0.1, an allowed address
        assert response.status_code == 404
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["type"] == "/problems/not-found"


def test_with_metrics_off_answers_keep_their_request_ids(db, client, settings):
    settings.METRICS_ENABLED = False
    assert client.get("/agents", HTTP_X_REQUEST_ID="off-1")["X-Request-Id"] == "off-1"
    missing = client.get("/agents/not-an-id", HTTP_X_REQUEST_ID="off-2")
    assert missing.json()["requestId"] == "off-2" == missing["X-Request-Id"]
    lane = LeanApplication(Recorder())
    status, answer, _ = call(lane, "GET", "/healthz", HTTP_X_REQUEST_ID="off-3")
    assert (status, answer["X-Request-Id"]) == (200, "off-3")


OFF = """
import json, os, django
django.setup()
from django.test import Client
from registry.fastpath.lean import LeanApplication
from registry.http import metrics
from tests.registry.fastpath.test_lean import Recorder, call

client = Client()
answers = [
    client.get("/nothing/here", HTTP_X_REQUEST_ID="req-off-1"),
    client.get("/metrics", HTTP_X_REQUEST_ID="req-off-2"),
]
lean = call(LeanApplication(Recorder()), "GET", "/healthz", HTTP_X_REQUEST_ID="req-off-3")
metrics.jobs.labels("tests.off", "success").inc()
metrics.event_streams.inc()
metrics.semantic_duration.labels("search", "ok").observe(0.01)
metrics.tally(metrics.card_spool, "hit")
metrics.http_flush()
print(json.dumps({
    "statuses": [a.status_code for a in answers] + [lean[0]],
    "ids": [a["X-Request-Id"] for a in answers] + [lean[1]["X-Request-Id"]],
    "folder": os.environ.get("PROMETHEUS_MULTIPROC_DIR"),
}))
"""


def test_a_process_with_metrics_off_writes_no_file_and_still_logs_its_requests_ids(tmp_path):
    folder = tmp_path / "metrics"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", OFF],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "registry.settings",
            "DEBUG": "1",
            "REGISTRY_VAR_DIR": str(tmp_path / "var"),
            "PROMETHEUS_MULTIPROC_DIR": str(folder),
            "METRICS_ENABLED": "false",
            "LOG_FORMAT": "json",
            "LOG_REQUESTS": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    printed = json.loads(done.stdout.splitlines()[-1])
    assert printed["statuses"] == [404, 404, 200]
    assert printed["ids"] == ["req-off-1", "req-off-2", "req-off-3"]
    assert printed["folder"] is None  # prometheus-client was given no folder
    assert list(folder.iterdir()) == []
    assert not (tmp_path / "var" / "metrics").exists()
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    logged = {line["request_id"]: line for line in lines if line["logger"] == "registry.requests"}
    assert set(logged) == {"req-off-1", "req-off-2"}, lines
    assert logged["req-off-1"]["route"] == "(unmatched)"
    assert (logged["req-off-2"]["route"], logged["req-off-2"]["status"]) == ("/metrics", 404)
