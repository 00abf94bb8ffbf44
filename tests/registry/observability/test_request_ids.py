"""Request ids (registry.http.request_ids): echoed on Django's answers and the lean lane's,
named in problem documents, carried by log lines, and by the jobs a request queues into
the worker's log lines."""

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from registry.fastpath.lean import LeanApplication
from tests.conftest import redis_test_url
from tests.registry.fastpath.test_lean import Recorder, call

ROOT = Path(__file__).resolve().parents[3]
GENERATED = re.compile(r"[0-9a-f]{32}")
MALFORMED = ["has space", "x" * 129, "new\nline", "ünïcode", ""]


def test_a_views_answer_echoes_a_well_formed_request_id(db, client):
    rid = "edge-7f3a.2026:42_x"
    assert client.get("/agents", HTTP_X_REQUEST_ID=rid)["X-Request-Id"] == rid


@pytest.mark.parametrize("sent", [None, *MALFORMED])
def test_a_view_gives_a_new_id_to_a_request_without_a_well_formed_one(db, client, sent):
    headers = {} if sent is None else {"HTTP_X_REQUEST_ID": sent}
    first = client.get("/agents", **headers)["X-Request-Id"]
    second = client.get("/agents", **headers)["X-Request-Id"]
    assert GENERATED.fullmatch(first) and GENERATED.fullmatch(second) and first != second


@pytest.mark.parametrize("sent", [None, "lb-0001", *MALFORMED])
def test_the_lean_lane_echoes_or_replaces_the_request_id(sent):
    recorder = Recorder()
    status, answer, _ = call(LeanApplication(recorder), "GET", "/healthz", HTTP_X_REQUEST_ID=sent)
    assert (status, recorder.paths) == (200, [])  # answered on the lane
    if sent == "lb-0001":
        assert answer["X-Request-Id"] == sent
    else:
        assert GENERATED.fullmatch(answer["X-Request-Id"])


def test_a_request_the_lane_passes_on_keeps_the_id_it_was_given(db):
    recorder = Recorder()
    path = "/discover/agents?limit=lots"  # no page cached: the lane leaves it to Django
    status, answer, body = call(LeanApplication(recorder), "GET", path, HTTP_X_REQUEST_ID=None)
    assert recorder.paths != [] and status == 400
    assert json.loads(body)["requestId"] == answer["X-Request-Id"]


def test_a_problem_document_names_the_request_id(db, client, alice):
    missing = client.get("/agents/not-an-id", HTTP_X_REQUEST_ID="trace-1")
    assert missing["Content-Type"] == "application/problem+json"
    assert missing.json()["requestId"] == "trace-1" == missing["X-Request-Id"]
    invalid = alice.post("/agents", {"name": ""}, format="json")
    assert invalid.status_code == 400
    assert invalid.json()["requestId"] == invalid["X-Request-Id"]


def run(script: str, **env) -> list[dict]:
    """The JSON log lines of ``script`` run with LOG_FORMAT=json."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "registry.settings",
            "DEBUG": "1",
            "LOG_FORMAT": "json",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in done.stderr.splitlines()]


REQUEST = """
import django
django.setup()
from django.test import Client
Client().get("/nothing/here", HTTP_X_REQUEST_ID="req-logged", HTTP_AUTHORIZATION="Bearer s3cr3t")
"""


def test_a_json_log_line_carries_the_id_of_the_request_that_wrote_it():
    lines = run(REQUEST)
    logged = [line for line in lines if line["logger"] == "django.request"]
    assert [line["request_id"] for line in logged] == ["req-logged"], lines
    assert "s3cr3t" not in json.dumps(lines)


JOB = """
import logging, os, django
django.setup()
from celery.worker.request import Request
from registry.celery import app
from registry.http.request_ids import request_id

@app.task(name="tests.request_id_echo")
def echo():
    logging.getLogger("tests.job").warning("the job ran")

queue = os.environ["TEST_QUEUE"]
token = request_id.set("req-queued-it")
echo.apply_async(queue=queue)  # published to Redis, as a request queues a job
request_id.reset(token)
logging.getLogger("tests.web").warning("after the request")
with app.connection_for_read() as connection:
    message = connection.SimpleQueue(queue).get(timeout=10)
    # What a worker does with a message it received.
    Request(message, app=app, task=app.tasks[message.headers["task"]]).execute()
    message.ack()
"""


def test_a_job_runs_with_the_id_of_the_request_that_queued_it():
    lines = run(
        JOB,
        CELERY_TASK_ALWAYS_EAGER="0",
        CELERY_BROKER_URL=redis_test_url(),
        TEST_QUEUE=f"tests-request-id-{uuid.uuid4().hex[:8]}",
    )
    by_logger = {line["logger"]: line for line in lines}
    assert by_logger["tests.job"]["request_id"] == "req-queued-it", lines
    assert "request_id" not in by_logger["tests.web"]  # outside any request
