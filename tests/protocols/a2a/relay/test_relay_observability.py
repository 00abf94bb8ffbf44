"""A relayed request can be followed, on the local RabbitMQ: the agent gets the request's
id (and, when tracing is on, its trace context) as message headers; a reply that echoes
them is handled under that id in the relay consumer's logs, and in the request's trace; the
relay's series count the requests, the replies, their round trip and the tasks in flight."""

import json
import logging
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from protocols.a2a.models import RelayTask
from protocols.a2a.relay.tracing import reply_context
from registry.http.request_ids import RequestIdFilter, request_id
from tests.otlp_receiver import OtlpReceiver
from tests.protocols.a2a.conftest import queue_declare, queue_take, queues_delete
from tests.protocols.a2a.relay.test_queue_relay import bearer
from tests.protocols.a2a.relay.test_relay_headers import send_at_once
from tests.registry.observability.conftest import own_counts, samples_of, value


def counts() -> dict:
    return own_counts(Path(django_settings.PROMETHEUS_MULTIPROC_DIR))


def reply_put(body: bytes, task_id: str, headers: dict) -> None:
    import kombu

    with kombu.Connection(django_settings.QUEUE_RELAY_BROKER_URL) as conn:
        channel = conn.default_channel
        channel.basic_publish(
            channel.prepare_message(body, properties={"correlation_id": task_id}, headers=headers),
            exchange="",
            routing_key=django_settings.QUEUE_RELAY_REPLY_QUEUE,
        )


@pytest.mark.django_db(transaction=True)
def test_a_relayed_request_carries_its_id_and_the_reply_is_handled_under_it(
    relay, idle_queue, alice, client, caplog
):
    before = counts()
    url = f"{relay['url']}/a2a/queue/{idle_queue['endpoint']}"
    answer = send_at_once(url, Authorization=bearer(alice), **{"X-Request-Id": "ops-relay-1"})
    assert answer.headers["x-request-id"] == "ops-relay-1"
    task = answer.json()["result"]["task"]
    (request,) = queue_take(relay["broker"], idle_queue["queue"])
    assert request.headers["x-request-id"] == "ops-relay-1"
    assert "traceparent" not in request.headers  # tracing is off
    scraped = samples_of(client.get("/metrics").content.decode())
    assert value(scraped, "registry_relay_tasks_in_flight", state="submitted") >= 1

    caplog.handler.addFilter(RequestIdFilter())
    secret = request.headers["x-relay-secret"]
    echoed = {"x-request-id": "ops-relay-1", "x-relay-secret": secret}
    done = {"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"]}}
    done["statusUpdate"]["status"] = {"state": "TASK_STATE_COMPLETED"}
    body = json.dumps({"jsonrpc": "2.0", "id": task["id"], "result": done}).encode()
    with caplog.at_level(logging.WARNING, logger="protocols.a2a.relay.consumer"):
        reply_put(b"not json", task["id"], echoed)  # dead-lettered, logged under the id
        reply_put(body, task["id"], echoed)
        deadline = time.monotonic() + 30
        while RelayTask.objects.get(pk=task["id"]).state != "TASK_STATE_COMPLETED":
            assert time.monotonic() < deadline, "the reply was not applied within 30 s"
            time.sleep(0.02)
    (logged,) = [r for r in caplog.records if "dead-lettered" in r.getMessage()]
    assert logged.request_id == "ops-relay-1"

    after = counts()
    delta = {
        key: value(after, "registry_relay_replies_total", outcome=key)
        - value(before, "registry_relay_replies_total", outcome=key)
        for key in ("applied", "dead-lettered")
    }
    assert delta == {"applied": 1, "dead-lettered": 1}
    published = value(after, "registry_relay_requests_total", outcome="published")
    assert published - value(before, "registry_relay_requests_total", outcome="published") == 1
    trips = "registry_relay_round_trip_seconds_count"
    assert value(after, trips) - value(before, trips) == 1


@pytest.mark.database_independent
def test_a_reply_without_a_well_formed_id_is_handled_under_none():
    for headers, expected in [
        ({"x-request-id": b"ops-reply-2"}, "ops-reply-2"),
        ({"x-request-id": "two words"}, ""),
        ({}, ""),
    ]:
        with reply_context(headers):
            assert request_id.get() == expected
    assert request_id.get() == ""


# With tracing on: a request's span, the relay's message published in it, the message taken
# off the queue as an agent would, and the reply's handling under the context it echoes.
TRACED = """
import json, sys
import django
django.setup()
import kombu
from protocols.a2a.relay.broker import request_publish
from protocols.a2a.relay.tracing import echoed, reply_context
from registry.http.tracing import span
from registry.observability.tracing import tracing_flush

url, queue = sys.argv[1], sys.argv[2]
with span("a request", "server"):
    request_publish(
        queue, task_id="t-1", context_id="c-1", method="SendMessage", params={},
        headers={}, reply_secret="s",
    )
with kombu.Connection(url) as conn:
    message = conn.default_channel.basic_get(queue, no_ack=True)
with reply_context(echoed(message.headers)):
    pass
tracing_flush()
print(json.dumps(message.headers))
"""


@pytest.mark.database_independent
def test_with_tracing_on_the_relays_message_and_its_reply_continue_the_requests_trace(
    rabbitmq, tmp_path
):
    queue = f"test.ops-trace.{uuid.uuid4().hex[:12]}"
    queue_declare(rabbitmq, queue)
    collector = OtlpReceiver()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'unused.sqlite3'}",
        "REGISTRY_VAR_DIR": str(tmp_path),
        "QUEUE_RELAY_BROKER_URL": rabbitmq,
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", TRACED, rabbitmq, queue],
            cwd=Path(__file__).resolve().parents[4],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        collector.stop()
        queues_delete(rabbitmq, [queue])
    assert done.returncode == 0, done.stderr
    headers = json.loads(done.stdout.splitlines()[-1])
    spans = {span.name: span for span in collector.spans}
    request, published, reply = spans["a request"], spans["relay publish"], spans["relay reply"]
    assert published.trace_id == request.trace_id and published.parent_id == request.span_id
    _version, trace_id, parent, _flags = headers["traceparent"].split("-")
    assert (trace_id, parent) == (request.trace_id, published.span_id)
    assert reply.trace_id == request.trace_id and reply.parent_id == published.span_id
