"""GET /metrics (registry.observability.scrape): guarded, the counts of what was served,
every process's counts added up, and a number of series that clients cannot grow."""

import ipaddress
import os
import subprocess
import sys
import uuid
from pathlib import Path

from registry.fastpath.lean import LeanApplication
from registry.fastpath.spool import Spool
from tests.registry.fastpath.test_lean import Recorder, call
from tests.registry.observability.conftest import value

ROOT = Path(__file__).resolve().parents[3]
REQUESTS = "registry_http_requests_total"


def test_metrics_are_a_404_problem_to_a_client_neither_allowed_nor_bearing_the_token(
    db, client, settings
):
    settings.METRICS_ALLOWED_ADDRESSES = []
    settings.METRICS_TOKEN = "scrape-secret"
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong"}):
        response = client.get("/metrics", **headers)
        assert response.status_code == 404
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["type"] == "/problems/not-found"
    allowed = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret")
    assert allowed.status_code == 200
    assert allowed["Content-Type"].startswith("text/plain; version=")


def test_metrics_are_served_to_an_allowed_address_only(db, client, settings):
    assert client.get("/metrics").status_code == 200  # 127.0.0.1, allowed by default
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 404
    settings.METRICS_ALLOWED_ADDRESSES = [ipaddress.ip_network("203.0.113.0/24")]
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 200


def test_requests_are_counted_by_route_template_method_status_and_lane(
    client, scrape, alice, native_payload
):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    before = scrape()
    for _ in range(3):
        assert client.get(f"/agents/{agent_id}").status_code == 200
    assert client.get("/agents/not-an-id").status_code == 404
    lane = LeanApplication(Recorder())
    assert call(lane, "GET", "/healthz")[0] == 200
    after = scrape()
    route = {"route": "/agents/<str:agent_id>", "method": "GET", "lane": "django"}
    assert (
        value(after, REQUESTS, status="200", **route)
        - value(before, REQUESTS, status="200", **route)
        == 3
    )
    assert (
        value(after, REQUESTS, status="404", **route)
        - value(before, REQUESTS, status="404", **route)
        == 1
    )
    lean = {"route": "/healthz", "method": "GET", "status": "200", "lane": "lean"}
    assert value(after, REQUESTS, **lean) - value(before, REQUESTS, **lean) == 1
    latency = "registry_http_request_duration_seconds_count"
    del route["method"]
    assert (
        value(after, latency, method="GET", **route) - value(before, latency, method="GET", **route)
        == 4
    )


def test_database_statements_are_counted_with_their_time_by_route(
    client, scrape, alice, native_payload
):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    before = scrape()
    from django.db import connection

    ran = []  # every statement, seen by a wrapper of the test's own around the requests

    def seen(execute, sql, params, many, context):
        ran.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(seen):
        for _ in range(2):
            assert client.get(f"/agents/{agent_id}").status_code == 200
    after = scrape()
    route = {"route": "/agents/<str:agent_id>", "method": "GET"}
    counted = value(after, "registry_db_statements_total", **route) - value(
        before, "registry_db_statements_total", **route
    )
    assert counted == len(ran) > 0
    spent = value(after, "registry_db_statement_seconds_total", **route) - value(
        before, "registry_db_statement_seconds_total", **route
    )
    assert 0 < spent < 10


def test_no_label_carries_an_id_or_a_query_whatever_clients_send(client, scrape, alice):
    client.get("/agents/warm-up")
    client.get("/discover/agents?q=warm")
    client.get("/no/such/path")
    alice.get("/agents/warm-up")
    scrape()  # the scrape's own request: a series of its own, counted once it has answered
    before = scrape()
    sent = []
    for _ in range(15):
        sent += [str(uuid.uuid4()), uuid.uuid4().hex, uuid.uuid4().hex, str(uuid.uuid4())]
        client.get(f"/agents/{sent[-4]}")
        client.get(f"/discover/agents?q={sent[-3]}")
        client.get(f"/no/such/{sent[-2]}")
        alice.get(f"/agents/{sent[-1]}")
    after = scrape()
    # No new series of requests, only counts. (A scrape also reads the counts of the other
    # processes of this run's folder, servers other tests started, which may write a series
    # of theirs meanwhile: those are not this test's requests.)
    new = {name for name, _ in set(after) - set(before)}
    assert {name for name in new if name.startswith("registry_http_")} == set()
    values = {value for _, labels in after for _, value in labels}
    assert [token for token in sent if any(token in value for value in values)] == []
    text = client.get("/metrics").content.decode()
    assert "/no/such" not in text and "warm" not in text


def test_discovery_page_cache_hits_and_misses_are_counted(client, scrape, alice, native_payload):
    alice.post("/agents", native_payload(), format="json")
    before = scrape()
    path = "/discover/agents?q=summarizer&limit=7"
    client.get(path)
    client.get(path)
    after = scrape()
    name = "registry_discovery_page_cache_total"
    assert value(after, name, outcome="miss") - value(before, name, outcome="miss") == 1
    assert value(after, name, outcome="hit") - value(before, name, outcome="hit") == 1


def test_card_spool_reads_are_counted(tmp_path, db, scrape):
    spool = Spool(1 << 20, str(tmp_path))
    before = scrape()
    assert spool.get("card:1") is None
    spool.put("card:1", b"{}")
    assert spool.get("card:1") == b"{}"
    after = scrape()
    name = "registry_card_spool_reads_total"
    assert value(after, name, outcome="miss") - value(before, name, outcome="miss") == 1
    assert value(after, name, outcome="hit") - value(before, name, outcome="hit") == 1


def test_rate_limit_refusals_are_counted_by_scope(client, scrape, settings):
    settings.RATE_LIMIT_READ = "2/min"
    before = scrape()
    statuses = [client.get("/agents").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    after = scrape()
    name = "registry_rate_limit_refusals_total"
    assert value(after, name, scope="read") - value(before, name, scope="read") == 1


def test_jobs_are_counted_by_task_and_outcome_with_their_duration(db, scrape):
    from registry.access.tasks import idempotency_prune as job

    before = scrape()
    job.delay()  # eager in the tests: the same signals as a worker's
    after = scrape()
    labels = {"task": job.name, "outcome": "success"}
    assert (
        value(after, "registry_jobs_total", **labels)
        - value(before, "registry_jobs_total", **labels)
        == 1
    )
    count = "registry_job_duration_seconds_count"
    assert value(after, count, task=job.name) - value(before, count, task=job.name) == 1


def test_the_gauges_count_agents_by_status_when_scraped(scrape, alice, native_payload):
    before = scrape()
    alice.post("/agents", native_payload(), format="json")
    after = scrape()
    assert value(after, "registry_agents", status="active") == (
        value(before, "registry_agents", status="active") + 1
    )
    assert ("registry_endpoints_live", ()) in after


SCRIPT = """
import django
django.setup()
from registry.http import metrics
metrics.jobs.labels("tests.other-process", "success").inc(5)
"""


def test_a_scrape_adds_up_the_counts_of_every_process(db, scrape_all, settings):
    from registry.http import metrics

    before = scrape_all()
    metrics.jobs.labels("tests.other-process", "success").inc(2)
    subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(settings.PROMETHEUS_MULTIPROC_DIR)},
        check=True,
        timeout=60,
    )
    after = scrape_all()
    labels = {"task": "tests.other-process", "outcome": "success"}
    name = "registry_jobs_total"
    assert value(after, name, **labels) - value(before, name, **labels) == 7
