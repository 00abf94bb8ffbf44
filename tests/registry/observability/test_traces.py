"""Traces, with the OTEL_* variables set: one trace spans a registration (the web request),
the webhook job it queued (through the broker, run by a worker) and the webhook that job
delivered (whose request carries the trace's ``traceparent``), received by the test's own
OTLP/HTTP receiver. Without them, nothing is traced and no trace header is sent."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from registry.observability.tracing import tracing_configured
from tests.otlp_receiver import OtlpReceiver
from tests.registry.events.conftest import receiver, subscribe  # noqa: F401

pytest_plugins = ["tests.https_server"]
ROOT = Path(__file__).resolve().parents[3]

# The registration through Django's handler (as a web worker answers it), then a worker for
# the webhooks' queue taking the job the registration queued from the broker.
SCRIPT = """
import sys, time
import django
django.setup()
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.test import Client
from registry.celery import app
from registry.events.models import Delivery
from registry.observability.tracing import tracing_flush

answer = Client().post(
    "/agents", sys.argv[2], content_type="application/json",
    HTTP_AUTHORIZATION="Bearer " + sys.argv[1],
)
assert answer.status_code == 201, answer.content
with start_worker(app, pool="solo", queues=[settings.WEBHOOK_QUEUE], perform_ping_check=False):
    deadline = time.monotonic() + 30
    while not Delivery.objects.filter(status="delivered").exists():
        assert time.monotonic() < deadline, "no delivery within 30 s"
        time.sleep(0.05)
tracing_flush()
"""


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return f"sqlite:///{db['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_one_trace_spans_a_registration_its_job_and_the_webhook_it_delivered(
    receiver,  # noqa: F811
    alice,
    make_key,
    native_payload,
    tmp_path,
    ca_bundle,
):
    subscribe(alice, receiver)  # verified here, before tracing
    collector = OtlpReceiver()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "REGISTRY_VAR_DIR": str(tmp_path),
        "FETCH_ALLOWED_HOSTS": "localhost",
        "FETCH_CA_BUNDLE": str(ca_bundle),
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
        "OTEL_SERVICE_NAME": "registry-under-test",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    try:
        subprocess.run(
            [sys.executable, "-c", SCRIPT, make_key("alice"), json.dumps(native_payload())],
            cwd=ROOT,
            env=env,
            check=True,
            timeout=90,
            capture_output=True,
        )
    finally:
        collector.stop()

    spans = collector.spans
    server = [s for s in spans if s.kind == 2]  # SERVER: the requests answered
    (registration,) = [s for s in server if s.attributes.get("http.route") == "agents"]
    trace = [s for s in spans if s.trace_id == registration.trace_id]
    names = {s.name for s in trace}
    assert "run/registry.events.tasks.webhooks_dispatch" in names, names
    assert "apply_async/registry.events.tasks.webhooks_dispatch" in names, names
    (webhook,) = [s for s in trace if s.name == "POST" and s.kind == 3]
    assert webhook.attributes["server.address"] == "localhost"
    assert {s.service for s in trace} == {"registry-under-test"}
    assert any(s.attributes.get("db.query.text", "").startswith("INSERT") for s in trace)
    # The subscriber sees the same trace, and the span of the request it received.
    (delivered,) = receiver.received
    headers = {k.lower(): v for k, v in delivered["headers"].items()}
    _version, trace_id, parent, _flags = headers["traceparent"].split("-")
    assert (trace_id, parent) == (registration.trace_id, webhook.span_id)


@pytest.mark.database_independent
def test_tracing_is_on_only_when_an_exporter_is_configured():
    assert not tracing_configured({})
    assert tracing_configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert tracing_configured({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})
    off = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    assert not tracing_configured({**off, "OTEL_TRACES_EXPORTER": "none"})
    assert not tracing_configured({**off, "OTEL_SDK_DISABLED": "true"})


@pytest.mark.database_independent
def test_without_otel_variables_nothing_is_traced():
    """No tracer provider, no middleware of the instrumentation, no wrapper around the
    statements: a request does no tracing work at all."""
    script = (
        "import django; django.setup();"
        "from django.conf import settings; from django.db import connection;"
        "from opentelemetry import trace;"
        "from registry.http.tracing import tracing_on;"
        "connection.ensure_connection();"
        "print(tracing_on(), type(trace.get_tracer_provider()).__name__,"
        " [m for m in settings.MIDDLEWARE if 'opentelemetry' in m], connection.execute_wrappers)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": "sqlite://"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.split() == ["False", "ProxyTracerProvider", "[]", "[]"]


@pytest.mark.database_independent
def test_a_statement_of_no_traced_request_is_no_span_and_one_inside_is_its_child(monkeypatch):
    """The lean lane answers before Django's instrumentation: its statements make no span
    (each would be a trace alone); a statement inside a request's span is its child."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from registry.observability import tracing

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    monkeypatch.setattr(trace, "get_tracer", provider.get_tracer)
    context = {"connection": connection}

    def execute(sql, params, many, context):
        return "ran"

    assert tracing._statement_span(execute, "SELECT 1", (), False, context) == "ran"
    assert exported.get_finished_spans() == ()
    with provider.get_tracer("test").start_as_current_span("GET /agents") as request:
        assert tracing._statement_span(execute, "SELECT 1", (), False, context) == "ran"
    statement, outer = exported.get_finished_spans()
    assert (statement.name, outer.name) == ("SELECT", "GET /agents")
    assert statement.parent.span_id == request.get_span_context().span_id
